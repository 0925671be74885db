#!/usr/bin/env python3
"""Python `throttler` (uburuntu/throttler), its asyncio `Throttler`, driven over the conformance
protocol.

    Implementations/.venv/bin/python Implementations/throttler/shim.py

Strategy: `sliding-window-log`, as `Throttler(rate_limit=N, period=W / 10^9)`: a deque of the
last N entry times; an entry is let in when the oldest of them is more than `period` seconds old.
One `async with throttler:` entry is one `acquire(1)`. See README.md for the mapping.

The library is used unmodified. It reads one clock, `time.monotonic()` in `throttler.throttler`,
and sleeps with `asyncio.sleep`, on its event loop, whose clock is `time.monotonic()` too. The
shim binds the name `time` in `throttler.throttler` to a stand-in whose `monotonic()` reads the
protocol's instant, and runs the library on an asyncio event loop whose `time()` reads the same
instant and whose selector, when the loop would sleep until a timer, moves that clock to the
timer instead (virtual time). Nothing else is replaced.

`Throttler` has no way to ask without waiting: `__aenter__` sleeps until it may enter. The shim
asks it the two things a caller who does not want to wait needs, without sleeping and without
changing its decisions:
- whether it lets a caller in now: `__aenter__` is started at the instant and given one turn of the
  event loop, with the clock standing still; it has returned (entered), or it is asleep in
  `asyncio.sleep` and is cancelled there, before it has changed anything (the deque changes only
  after the loop that sleeps);
- when it would: `__aenter__` is run to the end on a copy of the throttler (a copy of its deque),
  in virtual time; the wait is the instant it returned at, minus now.

    --uptime SECONDS   what time.monotonic() reads at the protocol's instant 0 (default 2^22 s,
                       48.5 days after boot; see README.md: the library's first entries depend on it)
"""

import asyncio
import collections
import os
import selectors
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import Refused, Unsupported, allowed, ceil_ns, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()

import throttler  # noqa: E402
import throttler.throttler as throttler_module  # noqa: E402
from throttler import Throttler  # noqa: E402

NS = 1_000_000_000
# time.monotonic() is CLOCK_MONOTONIC (whole nanoseconds since boot) as a float of seconds. The
# protocol's instant 0 reads UPTIME seconds; up to the largest instant the readings stay below
# 2^23 s, where floats are 2^-30 s (0.93 ns) apart: every nanosecond reads a float of its own.
UPTIME = 1 << 22
LARGEST_INSTANT = (1 << 22) * NS
# Throttler keeps one float per permit of its limit (deque of rate_limit entries, made at once).
LOG_LIMIT = 1_000_000


class Clock:
    ns = 0  # the protocol's instant the clock reads
    uptime_ns = UPTIME * NS
    measuring = False  # a copy's __aenter__ is being run to the end
    zero_polls = 0  # consecutive zero-timeout polls while measuring

    def monotonic(self):
        """What time.monotonic() returns at this instant: the float nearest to the reading."""
        return (self.uptime_ns + self.ns) / NS

    def first_instant_reading(self, seconds):
        """The first protocol instant (ns) at which the clock reads `seconds` or later."""
        n = ceil_ns(seconds) - self.uptime_ns
        while (self.uptime_ns + n) / NS < seconds:
            n += 1
        while (self.uptime_ns + n - 1) / NS >= seconds:
            n -= 1
        return n


CLOCK = Clock()
throttler_module.time = types.SimpleNamespace(monotonic=CLOCK.monotonic)


class VirtualSelector(selectors.DefaultSelector):
    """Polls without blocking. Where the loop would sleep until its next timer, the clock moves to
    the first nanosecond whose reading is at or after that timer's instant (a real clock read
    after such a sleep reads that instant or later). While a copy's __aenter__ is run to the end,
    a second zero-timeout poll in a row (the library re-checking at once after `asyncio.sleep(0)`,
    its sleep when the oldest entry is exactly `period` old) finds the clock a nanosecond on, as a
    real clock moves while a program spins; a first one (the task woken after a timer) does not."""

    def select(self, timeout=None):
        ready = super().select(0)
        if ready:
            return ready
        if timeout is None:
            raise RuntimeError("the event loop would wait forever")
        if timeout > 0:
            due = [handle.when() for handle in LOOP._scheduled if not handle.cancelled()]
            if due:
                CLOCK.ns = max(CLOCK.ns, CLOCK.first_instant_reading(min(due)))
            CLOCK.zero_polls = 0
        elif CLOCK.measuring:
            CLOCK.zero_polls += 1
            if CLOCK.zero_polls >= 2:
                CLOCK.ns += 1
                CLOCK.zero_polls = 0
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose time() is the protocol's instant as time.monotonic() reads it."""

    def __init__(self):
        super().__init__(VirtualSelector())

    def time(self):
        return CLOCK.monotonic()


LOOP = VirtualTimeLoop()
asyncio.set_event_loop(LOOP)

PROFILE = {
    "timeUnitNanoseconds": 1,
    "largestInstantNanoseconds": LARGEST_INSTANT,
    # Its clock is time.monotonic().
    "monotonic": True,
    # One entry is one permit: no weights, no query, nothing to refuse as bad input; no reset, no
    # way to change rate_limit or period.
    "events": [],
    # The clock is a float of seconds 0.93 ns apart where the shim reads it: a reading is up to
    # 0.47 ns off its instant, and an entry's age (the difference of two readings) up to 0.93 ns,
    # which can move a decision to the neighbouring nanosecond. Its arithmetic is not covered.
    "toleranceNanoseconds": 1,
    "validation": True,
    "createdAtFirstEvent": False,
}


def _copy(lim):
    """A copy of the throttler: its limit, its period and a deque of its own with the same times."""
    clone = Throttler.__new__(Throttler)
    clone._rate_limit, clone._period = lim._rate_limit, lim._period
    clone._times = collections.deque(lim._times)
    return clone


async def _enters_now(lim):
    """Whether __aenter__ enters at the current instant: started, given one turn of the loop with
    the clock standing still (this coroutine is ready, so the loop does not sleep), then, if it is
    asleep in asyncio.sleep, cancelled there: it has changed nothing (throttler.py: the deque changes
    only after the `while True` loop, with no await in between)."""
    task = LOOP.create_task(lim.__aenter__())
    await asyncio.sleep(0)
    if task.done():
        task.result()
        return True
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return False


async def _entry_instant(lim):
    """The instant (ns) at which __aenter__, run to the end on a copy in virtual time, returns."""
    clone = _copy(lim)
    start = CLOCK.ns
    CLOCK.measuring, CLOCK.zero_polls = True, 0
    try:
        await clone.__aenter__()
        return CLOCK.ns
    finally:
        CLOCK.ns, CLOCK.measuring = start, False


def _remaining(lim):
    """How many entries the throttler would let in at once, now, one after the other: each takes
    the oldest time off the front of the deque when `now - (oldest + period) > 0` (its own test,
    evaluated as it evaluates it) and appends now, which is never more than `period` old at the
    same instant. The deque is in order (times of a monotonic clock, after the zeros it starts
    with), so that is the number of leading times the test lets through: found by bisection."""
    now, period, times = CLOCK.monotonic(), lim._period, lim._times
    lo, hi = 0, len(times)
    while lo < hi:
        mid = (lo + hi) // 2
        if now - (times[mid] + period) > 0.0:
            lo = mid + 1
        else:
            hi = mid
    return lo


class ThrottlerShim(shimproto.Shim):
    implementation = "throttler %s" % (getattr(throttler, "__version__", "1.2.3"),)
    strategies = ["sliding-window-log"]

    def profiles(self):
        return {"sliding-window-log": dict(PROFILE)}

    def create(self, strategy, configuration, now):
        if strategy != "sliding-window-log":
            raise Unsupported("throttler's Throttler is a sliding window log")
        limit = configuration.get("limit")
        window = configuration.get("windowNanoseconds")
        if not (is_int(limit) and is_int(window)):
            raise Refused("limit" if not is_int(limit) else "windowNanoseconds", "notSupported")
        if limit > LOG_LIMIT:
            raise Unsupported("Throttler keeps one float per permit of its limit (a deque of rate_limit "
                              "times, made at once): a limit above %d needs more memory than this shim "
                              "takes" % LOG_LIMIT)
        CLOCK.ns = now if is_int(now) else 0
        try:
            # period: seconds, the float nearest to W / 10^9.
            return Throttler(rate_limit=limit, period=window / NS)
        except ValueError as error:
            # "`rate_limit` should be positive integer" / "`period` should be positive float"
            raise Refused("limit" if "rate_limit" in str(error) else "windowNanoseconds", "mustBePositive")

    def event(self, lim, event, now):
        kind = event.get("kind")
        CLOCK.ns = now
        if kind == "acquire":
            permits = event.get("permits")
            if permits != 1:
                raise ValueError("acquire(%r) is outside the declared profile" % (permits,))
            if LOOP.run_until_complete(_enters_now(lim)):
                return allowed(_remaining(lim))
            entry = LOOP.run_until_complete(_entry_instant(lim))
            return refused_for(now, entry - now)
        if kind == "release":
            return invalid("release", "notSupported")  # Throttler has no release
        raise ValueError("event %r is outside the declared profile" % (kind,))


def main(argv):
    args = argv[1:]
    if args[:1] == ["--uptime"] and len(args) == 2:
        CLOCK.uptime_ns = int(args[1]) * NS
    elif args:
        sys.stdout.write('{"type":"error","message":"usage: shim.py [--uptime SECONDS]"}\n')
        return 2
    return shimproto.serve(ThrottlerShim())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
