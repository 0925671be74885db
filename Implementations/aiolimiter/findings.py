#!/usr/bin/env python3
"""Reproduces each finding of README.md with aiolimiter alone, without the shim.

    Implementations/.venv/bin/python Implementations/aiolimiter/findings.py

The limiter runs on an asyncio event loop whose time() is a settable float of seconds (the
library's only clock: AsyncLimiter._leak reads self._loop.time()). Each check calls has_capacity,
acquire and, for the waits, reads the wake-up time _wake_next schedules for a waiting acquire;
for the busy loops, it runs acquire on a clock that moves a fixed step at every read, counting
the event loop's polls meanwhile (none: the loop never gets control back).
Prints the library's answers next to the Spec's and exits 1 if a finding no longer reproduces.
"""

import asyncio
import copy
import math
import selectors
import sys
from fractions import Fraction

import aiolimiter
from aiolimiter import AsyncLimiter


class Clock:
    t = 0.0
    moving = 0  # a real clock: every read is this many ns after the previous one
    reads = 0
    polls = 0


CLOCK = Clock()
READ_LIMIT = 200_000


class StillSpinning(Exception):
    pass


class CountingSelector(selectors.DefaultSelector):
    def select(self, timeout=None):
        CLOCK.polls += 1
        return super().select(timeout)


class Loop(asyncio.SelectorEventLoop):
    def __init__(self):
        super().__init__(CountingSelector())

    def time(self):
        if CLOCK.moving:
            CLOCK.reads += 1
            if CLOCK.reads > READ_LIMIT:
                raise StillSpinning("still spinning after %d clock reads" % READ_LIMIT)
            CLOCK.t = (round(CLOCK.t * 1e9) + CLOCK.moving) / 1e9
        return CLOCK.t


LOOP = Loop()
asyncio.set_event_loop(LOOP)
FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        FAILED.append(name)


def run(coroutine):
    return LOOP.run_until_complete(coroutine)


def meter(capacity, permits, period_ns):
    """AsyncLimiter for a meter of `capacity` leaking `permits` per `period_ns` nanoseconds."""
    return AsyncLimiter(capacity, capacity * period_ns / (permits * 1_000_000_000))


async def call(function, *args):
    result = function(*args)
    if asyncio.iscoroutine(result):
        result = await result
    return result


def at(ns, function, *args):
    CLOCK.t = ns / 1e9
    return run(call(function, *args))


def first_reading_ns(seconds):
    """The first whole nanosecond whose float of seconds reads `seconds` or later."""
    n = math.ceil(Fraction(seconds) * 10**9)
    while n / 1e9 < seconds:
        n += 1
    while (n - 1) / 1e9 >= seconds:
        n -= 1
    return n


def admit_or_wait(lim, ns, amount):
    """What a caller does with the library alone, at ns: has_capacity(amount), then acquire(amount)
    when it holds; else the wake-up _wake_next schedules for a waiting acquire(amount), asked of a
    copy (the original stays as it is), and whether that first wake-up releases the waiter."""
    if at(ns, lim.has_capacity, amount):
        at(ns, lim.acquire, amount)
        return "admitted"
    waiter = copy.copy(lim)
    waiter._waiters, waiter._waker_handle = [], None
    CLOCK.t = ns / 1e9
    wake = run(first_wake(waiter, amount))
    CLOCK.t = wake
    released = waiter.has_capacity(amount)
    return first_reading_ns(wake) - ns, released


async def first_wake(limiter, amount):
    """The instant _wake_next schedules for a waiting acquire(amount); the waiter is cancelled."""
    task = asyncio.ensure_future(limiter.acquire(amount))
    await asyncio.sleep(0)
    when = limiter._waker_handle.when()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await asyncio.sleep(0)
    return when


def spin(limiter, amount, ns, step_ns=1):
    """Runs acquire(amount) at ns on a clock that moves step_ns at every read (a real clock read
    every step_ns), until it returns or the clock has been read READ_LIMIT times. Returns (how it
    ended, the event-loop polls meanwhile, the callbacks it queued on the loop meanwhile)."""
    CLOCK.t, CLOCK.reads, CLOCK.moving = ns / 1e9, 0, 0
    queued = len(LOOP._ready)

    async def go():
        polls = CLOCK.polls
        CLOCK.moving = step_ns
        try:
            await limiter.acquire(amount)
            ended = "returned at %d ns" % round(CLOCK.t * 1e9)
        except StillSpinning as stop:
            ended = str(stop)
        finally:
            CLOCK.moving = 0
        return ended, CLOCK.polls - polls, len(LOOP._ready) - queued

    return run(go())


# Misbehaviour (leaky-bucket-meter/random-seed-1-trace-11, shrunk: C = 1913633560853207721, 1 per
# ns, empty): acquire(C) never returns. has_capacity tests `self._level + amount <= self.max_rate`:
# the float sum 0.0 + C rounds up to 1913633560853207808 > C, False at every instant; _wake_next
# tests `amount - self.max_rate + self._level` (an exact int difference, then + 0.0): needed = 0,
# so it wakes the waiter at once. acquire's `while not self.has_capacity(amount)` loop then never
# awaits anything that is not already done: a synchronous busy loop that never polls the event
# loop (which is blocked for good) and queues one _wake_next callback per turn.
C11 = 1_913_633_560_853_207_721
lim = meter(C11, 1, 1)
empty_refused = at(0, lim.has_capacity, C11)
refused_at_end = at((1 << 63) - 1, lim.has_capacity, C11)
needed = C11 - lim.max_rate + lim._level
ended, polls, queued = spin(meter(C11, 1, 1), C11, 0)
check("misbehaviour leaky-bucket-meter/random-seed-1-trace-11: acquire(C) on an empty meter busy-loops for ever",
      (empty_refused, refused_at_end, needed <= 0, int(float(C11)) - C11, ended, polls, queued >= READ_LIMIT // 4),
      (False, False, True, 87, "still spinning after %d clock reads" % READ_LIMIT, 0, True),
      "allowed(0): an empty meter of C admits C")

# LBM-4 (leaky-bucket-meter/random-seed-1-trace-20: C = 2^63 - 1, 1 per ns, initial level
# 2856231728863754406 at 11 ns): after three acquires the level plus 6335776295208380673 is
# exactly C at 12 ns (the Spec admits it), but the float sum rounds above C: has_capacity is False
# while _wake_next's needed is <= 0, so a waiting acquire spins synchronously (no poll) until the
# level has leaked enough for the rounded sum. Leaked in one step from 12 ns, has_capacity holds
# first at 269 ns (the shim's answer: rejected(257ns)). How long the spin really lasts depends on
# how often the caller's loop reads the clock: the level (2.9e18) is a float 512 apart, and a leak
# below 256 permits is rounded away at each read, so a clock read every ns never lets it out, one
# read every microsecond does at the first read.
C20, I20, A20 = (1 << 63) - 1, 2_856_231_728_863_754_406, 6_335_776_295_208_380_673
lim = meter(C20, 2, 2)
at(11, lim.acquire, I20)
steps = [admit_or_wait(lim, ns, n) for ns, n in ((11, 1_000_000), (11, 2_147_483_647), (12, 31_364_010_634_157_082))]
spec_level = I20 + 1_000_000 + 2_147_483_647 - 1 + 31_364_010_634_157_082  # 1 leaked from 11 to 12 ns
refused = at(12, lim.has_capacity, A20)
needed = A20 - lim.max_rate + lim._level
spins_at = []
for step_ns in (1, 1000):
    probe = copy.copy(lim)
    probe._waiters, probe._waker_handle = [], None
    spins_at.append(spin(probe, A20, 12, step_ns)[:2])
check("LBM-4 leaky-bucket-meter/random-seed-1-trace-20: level + amount == C, refused; acquire spins without polling",
      (steps, spec_level + A20 == C20, refused, needed <= 0,
       at(268, copy.copy(lim).has_capacity, A20), at(269, copy.copy(lim).has_capacity, A20), spins_at),
      (["admitted"] * 3, True, False, True, False, True,
       [("still spinning after %d clock reads" % READ_LIMIT, 0), ("returned at 1012 ns", 0)]),
      "allowed(0) at 12 ns")

# LBM-5 (leaky-bucket-meter/random-seed-1-trace-34: C = 3074457345618258602, 9223372036854775806
# per ns, created at 4194303999999499 ns): after acquire(2184734887), has_capacity(m) is
# `level + m <= max_rate` in floats 512 apart: it holds for m 252 above the exact room.
C34, NOW34 = 3_074_457_345_618_258_602, 4_194_303_999_999_499
lim = meter(C34, 9_223_372_036_854_775_806, 1)
at(NOW34, lim.has_capacity, 0)
first_take = admit_or_wait(lim, NOW34, 2_184_734_887)
check("LBM-5 leaky-bucket-meter/random-seed-1-trace-34: room for 252 permits more than the bucket has",
      (first_take, at(NOW34, lim.has_capacity, C34 - 2_184_734_887 + 252),
       at(NOW34, lim.has_capacity, C34 - 2_184_734_887 + 253)),
      ("admitted", True, False), "allowed(3074457343433523715): room for exactly C - 2184734887")

# LBM-6 (leaky-bucket-meter/random-seed-1-trace-13: C = 359410946, 2047 per 16993971840857 ns,
# initial level 170905416 at 26 ns): a float level near 3.6e8 is 6e-8 permit coarse, about 500 ns
# of leak at this rate, so the wake-up _wake_next computes, `_last_check + 1 / _rate_per_sec *
# needed`, lands some hundred ns off the Spec's instant: at step 7 141 ns late, at step 8 104 ns
# early (the first wake-up releases the waiter: has_capacity holds there).
lim = meter(359_410_946, 2047, 16_993_971_840_857)
at(26, lim.acquire, 170_905_416)
answers = [admit_or_wait(lim, ns, n) for ns, n in (
    (27, 53928), (28, 5_244_187), (29, 183_207_415), (29, 25))]
try:
    at(30, lim.acquire, 359_410_947)
    answers.append("admitted")
except ValueError:
    answers.append("ValueError")
answers += [admit_or_wait(lim, ns, n) for ns, n in ((8_301_891_499, 1), (8_651_084_679, 1), (9_071_222_922, 39))]
check("LBM-6 leaky-bucket-meter/random-seed-1-trace-13: waits of 8 s and 323 s off by +141 ns and -104 ns",
      answers[5:], ["admitted", (7_952_698_430, True), (323_004_435_835, True)],
      "allowed(0), rejected(7952698289ns), rejected(323004435939ns)")

# Not a finding (within the declared tolerance of 1 ns): at 2^22 s the clock's readings are
# 2^-30 s apart; a wait of 21.33 ns is seen at the reading 21 ns later.
lim = meter(4, 3, 32)
now = 4_194_304_000_000_000
at(now, lim.acquire, 4)
check("(tolerance) at 2^22 s a wait of 21.33 ns is over at the reading of now + 21 ns",
      (at(now + 21, lim.has_capacity, 2), at(now + 20, lim.has_capacity, 2)), (True, False),
      "rejected(22 ns): admitted at now + 22 ns")

# _wake_next can reschedule a waiter at _last_check itself (needed/rate below the clock's float
# step): the loop polls at one instant until the clock moves (a short busy loop in real time).
spins = []
for t in range(51, 84):
    lim = meter(1, 1, 34)
    at(50, lim.acquire, 1)
    CLOCK.t = t / 1e9
    run(call(lim.has_capacity, 1))
    needed = 1 - lim.max_rate + lim._level
    wake = lim._last_check + (1 / lim._rate_per_sec * needed)
    CLOCK.t = wake
    run(call(lim.has_capacity, 1))
    needed_after = 1 - lim.max_rate + lim._level
    if needed_after > 0 and lim._last_check + (1 / lim._rate_per_sec * needed_after) == lim._last_check:
        spins.append(t)
check("(observation) _wake_next reschedules at the current instant: a waiter on a meter of 1 per 34 ns",
      bool(spins), True, "— (no answer of the Spec is involved; CPU spins until the clock moves)")

# CORE-3: AsyncLimiter validates nothing; a zero time_period raises ZeroDivisionError.
accepted = []
for args in ((1, float("inf")), (0, 1.0), (-1, 1.0)):
    try:
        AsyncLimiter(*args)
        accepted.append(True)
    except ZeroDivisionError:
        accepted.append(False)
try:
    AsyncLimiter(1, 0)
    zero = "accepted"
except ZeroDivisionError:
    zero = "ZeroDivisionError"
check("CORE-3: a zero leak (infinite period), a zero or negative max_rate are accepted; period 0 raises",
      (accepted, zero), ([True, True, True], "ZeroDivisionError"), "each refused naming its field")

# CORE-7 and CORE-9 (no finding): acquire() raises ValueError outside 0 <= amount <= max_rate.
lim = meter(3, 1, 10)
outcomes = []
for amount in (4, -1):
    try:
        at(0, lim.acquire, amount)
        outcomes.append("admitted")
    except ValueError:
        outcomes.append("ValueError")
check("CORE-7/CORE-9 (no finding): acquire(4) on max_rate 3 and acquire(-1) raise ValueError",
      outcomes, ["ValueError", "ValueError"], "neverAllowed; invalid(permits)")

print("\naiolimiter %s: %d checks, %d no longer reproduce" % (aiolimiter.__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
