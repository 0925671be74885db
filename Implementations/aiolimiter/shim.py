#!/usr/bin/env python3
"""aiolimiter's AsyncLimiter (a leaky bucket), driven over the conformance protocol.

    Implementations/.venv/bin/python Implementations/aiolimiter/shim.py

Strategy: `leaky-bucket-meter`, as `AsyncLimiter(max_rate=C, time_period=C·P/(R·10^9))`: a bucket
of C permits that leaks C per time_period seconds, that is R per P nanoseconds. See README.md.

The library is used unmodified. Its only clock is its event loop's `time()`; the shim runs it on
an asyncio event loop whose `time()` reads the protocol's instant (in seconds, a float, as
`time.monotonic()` gives it) and whose selector, when the loop would sleep until a timer, moves
that clock to the timer instead of sleeping (a virtual-time loop); while a wait is measured, a
library that spins on the clock moves it on as a real clock would (`end_spin`). Nothing else is
replaced.
"""

import asyncio
import copy
import math
import os
import selectors
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import Refused, Unsupported, allowed, ceil_ns, invalid, is_int, never, refused_for  # noqa: E402

shimproto.quiet_stderr()

import aiolimiter  # noqa: E402
from aiolimiter import AsyncLimiter  # noqa: E402

NS = 1_000_000_000
# A float of seconds resolves a nanosecond up to 2^22 s (48.5 days): beyond, its spacing exceeds 1 ns.
LARGEST_INSTANT = (1 << 22) * NS
SPIN_TICK = 1000  # zero-timeout polls at one instant after which the clock ticks to its next reading
SPIN_READS = 100  # reads of time() with no poll in between: the library is spinning synchronously
END_OF_TIMELINE = (1 << 63) - 1  # the protocol's last instant (ns)


class Clock:
    seconds = 0.0
    spins = 0  # consecutive zero-timeout polls while a wait is being measured
    reads = 0  # reads of time() since the loop last polled, while a wait is being measured
    measuring = None  # (the limiter copy, permits) while a wait is measured: only then may the clock move by itself
    probing = False  # asking copies of the limiter, in end_spin


CLOCK = Clock()


class EndlessSpin(Exception):
    """The library's acquire busy-loops without yielding to the event loop, and its own test
    would not let it out at any instant up to the end of the timeline: it does not return (in
    real time, it blocks the event loop for good)."""


def tick():
    """Moves the clock to its next reading: the first protocol instant (a whole nanosecond, as
    time.monotonic() reads CLOCK_MONOTONIC) whose float of seconds is above the current one."""
    if os.environ.get("SHIM_TRACE_SPINS"):
        print("spin tick at", CLOCK.seconds, file=sys.stderr)
    CLOCK.seconds = seconds_of(first_instant_reading(math.nextafter(CLOCK.seconds, math.inf)))


def end_spin():
    """The library is reading the clock over and over without letting the loop poll: a
    synchronous busy loop (aiolimiter's acquire, when has_capacity(n) is False but _wake_next finds
    needed <= 0 and wakes the waiter at once: see README.md). A real clock moves on while it
    spins, and the loop ends at the first reading at which the test it repeats, has_capacity(n),
    holds. The clock moves to that reading: the first protocol instant after the current one at
    which has_capacity(n), asked of a copy of the spinning limiter, holds (the library's own test,
    as for `remaining`; it only gets truer as the level leaks). If it holds at no instant up to the
    end of the timeline, the loop never ends: EndlessSpin (answered `error`: a hang, not hidden)."""
    limiter, permits = CLOCK.measuring
    now = CLOCK.seconds

    def holds(n):
        CLOCK.seconds = seconds_of(n)
        return copy.copy(limiter).has_capacity(permits)

    CLOCK.probing = True
    try:
        lo = hi = first_instant_reading(math.nextafter(now, math.inf))
        step = 1
        while not holds(hi):  # gallop: holds(n) is False for every n < lo
            if hi >= END_OF_TIMELINE:
                raise EndlessSpin(
                    "aiolimiter %s: acquire(%d) %s: it busy-loops without yielding to the event loop "
                    "(has_capacity(%d) is False at every instant up to the end of the timeline, while "
                    "_wake_next finds needed <= 0 and wakes it at once); level %r, max_rate %r"
                    % (aiolimiter.__version__, permits,
                       "never returns" if not limiter._level else "does not return before the end of the timeline",
                       permits, limiter._level, limiter.max_rate))
            lo, hi, step = hi + 1, min(END_OF_TIMELINE, hi + step), step * 2
        while lo < hi:  # the first instant in [lo, hi] at which it holds
            mid = (lo + hi) // 2
            if holds(mid):
                hi = mid
            else:
                lo = mid + 1
    finally:
        CLOCK.seconds, CLOCK.probing = now, False
    if os.environ.get("SHIM_TRACE_SPINS"):
        print("synchronous spin at", now, "ends at", seconds_of(hi), file=sys.stderr)
    CLOCK.seconds = seconds_of(hi)


class VirtualSelector(selectors.DefaultSelector):
    """Polls without blocking; where the loop would sleep until its next timer, the clock moves
    to that timer's instant instead. While a wait is measured (and only then), a loop that keeps
    polling with a zero timeout at one instant (a waiter re-armed at the instant it was woken)
    sees the clock tick to its next nanosecond reading every SPIN_TICK consecutive polls, as a
    real monotonic clock advances while a program spins."""

    def select(self, timeout=None):
        CLOCK.reads = 0
        ready = super().select(0)
        if ready:
            return ready
        if timeout is None:
            raise RuntimeError("the event loop would wait forever")
        if timeout > 0:
            # Exactly the instant of the loop's next timer (adding the timeout to the clock could
            # round past it), as a real clock read after the sleep reads that instant or later.
            due = [handle.when() for handle in LOOP._scheduled if not handle.cancelled()]
            CLOCK.seconds = max(CLOCK.seconds, min(due)) if due else CLOCK.seconds + timeout
            CLOCK.spins = 0
        elif CLOCK.measuring:
            CLOCK.spins += 1
            if CLOCK.spins % SPIN_TICK == 0:
                tick()
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """time() is the protocol's instant in seconds. While a wait is measured, a library that
    reads it SPIN_READS times without letting the loop poll is spinning synchronously: the clock
    moves on as a real one would (end_spin); otherwise such a loop could never end in virtual time."""

    def __init__(self):
        super().__init__(VirtualSelector())

    def time(self):
        if CLOCK.measuring and not CLOCK.probing:
            CLOCK.reads += 1
            if CLOCK.reads >= SPIN_READS:
                CLOCK.reads = 0
                end_spin()
        return CLOCK.seconds


LOOP = VirtualTimeLoop()
asyncio.set_event_loop(LOOP)

PROFILE = {
    "timeUnitNanoseconds": 1,
    "largestInstantNanoseconds": LARGEST_INSTANT,
    # loop.time() is time.monotonic().
    "monotonic": True,
    # acquire(amount) and has_capacity(amount): weighted, zero (a query) and bad amounts;
    # no reset, no way to change max_rate or time_period of a limiter.
    "events": ["weighted", "query", "invalid"],
    # The clock is a float of seconds: at the largest instant (2^22 s) its readings are 2^-30 s
    # (0.93 ns) apart, so an instant can read up to half of that late, and the library's decision
    # can fall on the neighbouring nanosecond. Its arithmetic (float levels) is not covered.
    "toleranceNanoseconds": 1,
    "validation": True,
    "createdAtFirstEvent": False,
}


def seconds_of(now):
    return now / NS  # the float nearest to the instant, as time.monotonic() would read it


def first_instant_reading(seconds):
    """The first protocol instant (ns) at which the clock reads `seconds` or later."""
    n = ceil_ns(seconds)
    while seconds_of(n) < seconds:
        n += 1
    while n > 0 and seconds_of(n - 1) >= seconds:
        n -= 1
    return n


async def _remaining(lim):
    """The largest m in [0, max_rate] with has_capacity(m), the library's own check, at the
    current instant (has_capacity leaks to the instant first; a second call at the same instant
    leaks nothing more)."""
    hi = int(lim.max_rate)
    if hi < 0 or not lim.has_capacity(0):
        return 0
    lo = 0
    while lo < hi:
        mid = lo + (hi - lo + 1) // 2
        if lim.has_capacity(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


async def _wait_of(lim, permits):
    """How long acquire(permits) would make the caller wait from now: the library's own acquire,
    run on a copy of the limiter (its level and last check; no waiters) in virtual time, until it
    returns. The original limiter is not touched. None when acquire raises ValueError (an amount
    above max_rate: it never admits it)."""
    clone = copy.copy(lim)
    clone._waiters = []
    clone._waker_handle = None
    start = CLOCK.seconds
    CLOCK.measuring, CLOCK.spins, CLOCK.reads = (clone, permits), 0, 0
    try:
        await clone.acquire(permits)
    except ValueError:
        return None
    finally:
        end = CLOCK.seconds
        CLOCK.seconds, CLOCK.measuring = start, None
    return end


class Meter:
    def __init__(self, limiter):
        self.limiter = limiter


async def _create(capacity, time_period, initial):
    limiter = AsyncLimiter(capacity, time_period)
    if initial:
        # The library has no initial level: the bucket starts empty. A level I > 0 is poured in
        # with the library's own acquire(I) at the creation instant.
        await limiter.acquire(initial)
    else:
        limiter.has_capacity(0)  # binds the limiter to this loop; leaks nothing from an empty bucket
    return limiter


async def _acquire(lim, permits, now):
    if permits == 0:
        await lim.acquire(0)  # the library's zero acquire: admitted at once, adds nothing
        return allowed(await _remaining(lim))
    if lim.has_capacity(permits):
        try:
            await lim.acquire(permits)  # has capacity: returns without waiting
        except ValueError:
            return invalid("permits", "mustNotBeNegative")  # acquire refuses a negative amount
        return allowed(await _remaining(lim))
    end = await _wait_of(lim, permits)
    if end is None:
        return never()
    return refused_for(now, first_instant_reading(end) - now)


class AiolimiterShim(shimproto.Shim):
    implementation = "aiolimiter %s" % (getattr(aiolimiter, "__version__", "1.3.0"),)
    strategies = ["leaky-bucket-meter"]

    def profiles(self):
        return {"leaky-bucket-meter": dict(PROFILE)}

    def create(self, strategy, configuration, now):
        if strategy != "leaky-bucket-meter":
            raise Unsupported("aiolimiter is a leaky bucket meter")
        fields = ["capacity", "leakPermitsPerPeriod", "periodNanoseconds"]
        values = [configuration.get(name) for name in fields]
        if not all(is_int(v) for v in values):
            raise Refused(fields[[is_int(v) for v in values].index(False)], "notSupported")
        capacity, rate, period = values
        initial = configuration.get("initialLevel", 0)
        if not is_int(initial) or initial < 0 or initial > capacity:
            raise Unsupported("the library has no initial level; the shim pours one in with acquire(I), "
                              "which takes 0 <= I <= max_rate")
        # time_period = C·P/R seconds, the float nearest to it (R = 0: an infinite period, no leak).
        time_period = capacity * period / (rate * NS) if rate else float("inf") * (capacity * period)
        CLOCK.seconds = seconds_of(now)
        try:
            limiter = LOOP.run_until_complete(_create(capacity, time_period, initial))
        except ZeroDivisionError:
            # AsyncLimiter computes max_rate / time_period: a zero period (C = 0 or P = 0) raises.
            raise Refused("capacity" if capacity == 0 else "periodNanoseconds", "mustBePositive")
        return Meter(limiter)

    def event(self, meter, event, now):
        kind = event.get("kind")
        CLOCK.seconds = seconds_of(now)
        if kind == "acquire":
            return LOOP.run_until_complete(_acquire(meter.limiter, event.get("permits"), now))
        if kind == "release":
            return invalid("release", "notSupported")  # no release in aiolimiter
        raise ValueError("event %r is outside the declared profile" % (kind,))


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        sys.exit(2)
    sys.exit(shimproto.serve(AiolimiterShim()))
