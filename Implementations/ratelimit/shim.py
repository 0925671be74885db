#!/usr/bin/env python3
"""Python `ratelimit` (tomasbasham/ratelimit), the `@limits(calls, period)` decorator, driven over
the conformance protocol.

    Implementations/.venv/bin/python Implementations/ratelimit/shim.py

Strategy: `fixed-window`, judged as FW-13's `first-event` variant: `RateLimitDecorator(calls=N,
period=W / 10^9, clock=...)` wrapping a function that does nothing; one call of the wrapped
function is one `acquire(1)`. See README.md for the mapping.

The library is used unmodified. The only thing replaced is its clock: the decorator takes it as
its `clock` argument (its default is `time.monotonic`, "used primarily for testing" otherwise);
the shim passes a function returning what `time.monotonic()` would read at the protocol's
instant, a float of seconds (see README.md, "Clock").

    --uptime SECONDS   what time.monotonic() reads at the protocol's instant 0 (default 2^22 s,
                       48.5 days after boot)
"""

import copy
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, ceil_ns, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()

import ratelimit  # noqa: E402
from ratelimit import RateLimitException, limits  # noqa: E402

NS = 1_000_000_000
# time.monotonic() is CLOCK_MONOTONIC (whole nanoseconds since boot) as a float of seconds. The
# protocol's instant 0 reads UPTIME seconds; up to the largest instant the readings stay below
# 2^23 s, where floats are 2^-30 s (0.93 ns) apart: every nanosecond reads a float of its own.
UPTIME = 1 << 22
LARGEST_INSTANT = (1 << 22) * NS


class Clock:
    ns = 0  # the protocol's instant of the request being answered
    uptime_ns = UPTIME * NS

    def monotonic(self):
        """What time.monotonic() returns at this instant: the float nearest to the reading."""
        return (self.uptime_ns + self.ns) / NS


CLOCK = Clock()

PROFILE = {
    "timeUnitNanoseconds": 1,
    "largestInstantNanoseconds": LARGEST_INSTANT,
    # Its clock is time.monotonic().
    "monotonic": True,
    # One call is one permit: no weights, no query, nothing to refuse as bad input; no reset, no
    # way to change calls or period.
    "events": [],
    # The clock is a float of seconds 0.93 ns apart where the shim reads it: a reading is up to
    # 0.47 ns off its instant, and the difference of two readings (the library's elapsed time) up
    # to 0.93 ns, which can move a decision at a window's edge to the neighbouring nanosecond.
    # Its arithmetic on those readings (period - elapsed) is not covered.
    "toleranceNanoseconds": 1,
    "validation": True,
    # The decorator reads its clock when it is made (last_reset = clock()): its first window
    # starts at the creation, not at the first call.
    "createdAtFirstEvent": False,
    # After a window has elapsed, the first call restarts it (last_reset = clock()).
    "alignment": "first-event",
}


def _nothing():
    return None


class Limiter:
    def __init__(self, decorator):
        self.decorator = decorator
        self.call = decorator(_nothing)


def _admits_next(lim):
    """The largest m the library would admit right now, asked of a copy of the decorator (its
    counters and its last reset; the original is not touched): its own decision for the next
    call, and its own counter for the calls after it at the same instant, where the clock reads
    the same float, so that its window cannot restart again (period_remaining is then `period`).
    A window that restarts at every call (a period of 0 or less, which the library accepts) admits
    any number: Int64.max."""
    probe = copy.copy(lim.decorator)
    probe.lock = threading.RLock()
    try:
        probe(_nothing)()
    except RateLimitException:
        return 0
    if probe.period - (probe.clock() - probe.last_reset) <= 0:
        return INT64_MAX  # the next call restarts the window again
    return 1 + max(0, probe.clamped_calls - probe.num_calls)


class RatelimitShim(shimproto.Shim):
    implementation = "ratelimit %s" % (getattr(ratelimit, "__version__", "2.2.1"),)
    strategies = ["fixed-window"]

    def profiles(self):
        return {"fixed-window": dict(PROFILE)}

    def create(self, strategy, configuration, now):
        if strategy != "fixed-window":
            raise Unsupported("ratelimit is a fixed window")
        limit = configuration.get("limit")
        window = configuration.get("windowNanoseconds")
        if not (is_int(limit) and is_int(window)):
            raise Refused("limit" if not is_int(limit) else "windowNanoseconds", "notSupported")
        CLOCK.ns = now if is_int(now) else 0
        # calls: an int (the library floors and clamps it to 1 ... sys.maxsize); period: seconds,
        # the float nearest to W / 10^9. Neither is validated by the library: whatever it takes
        # is created, and the suite reports the acceptance (CORE-3).
        return Limiter(limits(calls=limit, period=window / NS, clock=CLOCK.monotonic))

    def event(self, lim, event, now):
        kind = event.get("kind")
        CLOCK.ns = now
        if kind == "acquire":
            permits = event.get("permits")
            if permits != 1:
                raise ValueError("acquire(%r) is outside the declared profile" % (permits,))
            try:
                lim.call()
            except RateLimitException as refusal:
                # The library's own wait: period_remaining, what its sleep_and_retry sleeps, in
                # seconds, rounded up to a nanosecond.
                return refused_for(now, ceil_ns(refusal.period_remaining))
            return allowed(_admits_next(lim))
        if kind == "release":
            return invalid("release", "notSupported")  # the decorator has no release
        raise ValueError("event %r is outside the declared profile" % (kind,))


def main(argv):
    args = argv[1:]
    if args[:1] == ["--uptime"] and len(args) == 2:
        CLOCK.uptime_ns = int(args[1]) * NS
    elif args:
        sys.stdout.write('{"type":"error","message":"usage: shim.py [--uptime SECONDS]"}\n')
        return 2
    return shimproto.serve(RatelimitShim())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
