#!/usr/bin/env python3
"""Reproduces each finding of README.md with aiolimiter alone, without the shim.

    Implementations/.venv/bin/python Implementations/aiolimiter/findings.py

The limiter runs on an asyncio event loop whose time() is a settable float of seconds (the
library's only clock: AsyncLimiter._leak reads self._loop.time()). Each check calls has_capacity,
acquire and, for the waits, reads the wake-up time _wake_next schedules for a waiting acquire.
Prints the library's answers next to the Spec's and exits 1 if a finding no longer reproduces.
"""

import asyncio
import math
import sys
from fractions import Fraction

import aiolimiter
from aiolimiter import AsyncLimiter


class Clock:
    t = 0.0


CLOCK = Clock()


class Loop(asyncio.SelectorEventLoop):
    def time(self):
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


# LBM-4/LBM-5: levels are floats, so above 2^53 permits has_capacity rounds: a level of 1 in a
# bucket of 31,557,600,000,000,000 still has room for the whole capacity (1.0 + C == C in float).
lim = meter(31_557_600_000_000_000, 1, 1)
at(0, lim.acquire, 1)  # initialLevel 1
check("LBM-5 leaky-bucket-meter/random-seed-7-trace-10: with level 1, has_capacity(C) is True",
      (at(0, lim.has_capacity, 31_557_600_000_000_000), at(0, lim.has_capacity, 31_557_599_999_999_999)),
      (True, True), "room for C - 1 = 31557599999999999 permits, not C")

# LBM-4: instants are float seconds; 9e-9 - 8e-9 is not 1e-9, so one permit per ns leaks a hair
# short of a permit and the meter refuses where the Spec admits, step after step.
lim = meter(2, 2, 2)
at(8, lim.acquire, 1)
at(8, lim.acquire, 1)
check("LBM-4 leaky-bucket-meter/random-seed-7-trace-46: full at 8 ns, one permit leaks per ns",
      (at(9, lim.has_capacity, 1), at(10, lim.has_capacity, 1)), (False, True),
      "acquire(1) admitted at 9 ns (1 permit has leaked)")

# LBM-6: a wait of 2^62 ns, in float seconds near 4.6e9 s where the clock's readings are 954 ns
# apart. The waiter's first wake-up comes ~289 ns after the Spec's instant; there has_capacity(1)
# is already True, but _wake_next's own test, needed = amount - max_rate + level <= 0, is not
# (the level is 1.1e-16 > 0), and the re-armed wake-up _last_check + needed/rate (+512 ns) rounds
# to the clock's next reading, 954 ns later, where the waiter is released (the shim reports the
# first protocol instant whose float reading is that one: 766 ns after the Spec's instant).
lim = meter(1, 2, 9_223_372_036_854_775_806)
start = 4_194_304_000_000_000
at(start, lim.acquire, 1)
CLOCK.t = start / 1e9
wake = run(first_wake(lim, 1))
CLOCK.t = wake
ready_at_wake = run(call(lim.has_capacity, 1))
needed = 1 - lim.max_rate + lim._level
rearmed_at_next_reading = lim._last_check + (1 / lim._rate_per_sec * needed) == math.nextafter(wake, math.inf)
CLOCK.t = math.nextafter(wake, math.inf)
run(call(lim.has_capacity, 1))
released_next = 1 - lim.max_rate + lim._level <= 0
check("LBM-6 leaky-bucket-meter/random-seed-7-trace-31: a 2^62 ns wait ends one clock reading after its wake-up",
      (math.ceil((Fraction(wake) - Fraction(start, 10**9)) * 10**9), ready_at_wake, needed > 0,
       rearmed_at_next_reading, released_next,
       round((math.nextafter(wake, math.inf) - wake) * 1e9)),
      (4_611_686_018_427_388_192, True, True, True, True, 954),
      "rejected(4611686018427387903 ns)")

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
