#!/usr/bin/env python3
"""PyrateLimiter (pyrate-limiter), in-memory buckets, driven over the conformance protocol.

    Implementations/.venv/bin/python Implementations/pyrate-limiter/shim.py

Strategies, each behind a `Limiter(bucket)` used with `try_acquire(name, weight, blocking=False)`:
- `sliding-window-log`: `InMemoryBucket([Rate(N, W)])` (algorithm SlidingWindowLog, the default);
- `fixed-window`: `InMemoryBucket([Rate(N, W)], algorithm=FixedWindow())`;
- `gcra`: `StateBucket([Rate(1, T, burst=B)], algorithm=GCRA())`;
- `token-bucket`: `StateBucket([Rate(R, P, burst=C)], algorithm=TokenBucket())`.
Spans are integer milliseconds (the library's unit). See README.md.

The library is used unmodified. Its clock is `MonotonicClock`, whose `now()` is
`monotonic_ns() // 1_000_000`; the shim replaces the one function it calls, `monotonic_ns` as
`pyrate_limiter.clocks` looks it up, by one returning the protocol's instant in nanoseconds: the
instant of the request being answered, and to each limiter's leaker thread the latest instant of
its own limiter (the suite keeps many limiters alive at once, each on its own timeline).
"""

import os
import sys
import threading
import traceback
from bisect import bisect_left
from operator import attrgetter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, ints, invalid, is_int, never, refused_for  # noqa: E402

shimproto.quiet_stderr()

import pyrate_limiter  # noqa: E402
import pyrate_limiter.clocks as clocks_module  # noqa: E402
from pyrate_limiter import (  # noqa: E402
    GCRA,
    FixedWindow,
    InMemoryBucket,
    Limiter,
    Rate,
    RateItem,
    StateBucket,
    TokenBucket,
)

MS = 1_000_000
LOG_LIMIT = 1_000_000
NAME = "conformance"


class Clock:
    """The protocol's instants. `ns` is the instant of the request being answered, which the thread
    answering it reads. Each `Limiter` has a leaker thread that reads the clock too (every 10 s of
    real time, it drops the items outside the windows at `now`); it reads the latest instant of its
    own limiter (`leakers`: thread id -> Entry), never an instant of another limiter's timeline,
    so that what it drops is outside every window its bucket will look at."""

    ns = 0
    leakers = {}


CLOCK = Clock()


def _monotonic_ns():
    entry = CLOCK.leakers.get(threading.get_ident())
    return CLOCK.ns if entry is None else entry.now


clocks_module.monotonic_ns = _monotonic_ns  # the one clock reading MonotonicClock makes

PROFILE = {
    # Rate intervals and timestamps are integer milliseconds.
    "timeUnitNanoseconds": MS,
    # The last whole millisecond of the timeline: the clock has no later reading.
    "largestInstantNanoseconds": INT64_MAX // MS * MS,
    # The in-memory buckets' clock is MonotonicClock.
    "monotonic": True,
    # try_acquire(weight=n) (0 is admitted at once, negative raises); flush() as the reset;
    # no reconfigure (a bucket's rates are set when it is built).
    "events": ["weighted", "query", "invalid", "reset"],
    # Its clock reads whole milliseconds and its waits are whole milliseconds (rounded up): an
    # admission the Spec makes inside a millisecond is seen at the next one, up to 1 ms - 1 ns later.
    "toleranceNanoseconds": MS - 1,
    "validation": True,
    "createdAtFirstEvent": False,
}

_by_timestamp = attrgetter("timestamp")

# The field of each strategy that each of Rate's assertions checks.
RATE_FIELDS = {
    # burst defaults to limit for the window algorithms (which do not read it)
    "sliding-window-log": {"interval": "windowNanoseconds", "limit": "limit", "burst": "limit"},
    "fixed-window": {"interval": "windowNanoseconds", "limit": "limit", "burst": "limit"},
    "gcra": {"interval": "emissionIntervalNanoseconds", "limit": None, "burst": "burst"},
    "token-bucket": {"interval": "periodNanoseconds", "limit": "permitsPerPeriod", "burst": "capacity"},
}


def _rate(strategy, *args, **kwargs):
    """Rate(...), its AssertionError read as a refusal naming the field its assertion checks."""
    try:
        return Rate(*args, **kwargs)
    except AssertionError as error:
        line = traceback.extract_tb(error.__traceback__)[-1].line or ""
        for attribute, field in RATE_FIELDS[strategy].items():
            if ("self.%s" % attribute) in line and field:
                raise Refused(field, "mustBePositive")
        raise


class Entry:
    def __init__(self, strategy, bucket, prefill=0):
        self.strategy = strategy
        self.bucket = bucket
        self.now = CLOCK.ns  # this limiter's latest instant, for its leaker thread
        self.limiter = Limiter(bucket)
        self.prefill = prefill
        # The leaker thread Limiter(bucket) started (SingleBucketFactory.schedule_leak). Until it
        # is registered here it reads CLOCK.ns, which is still the creation instant.
        leaker = self.limiter.bucket_factory._leaker
        thread = leaker._thread if leaker is not None else None
        self.leaker_id = thread.ident if thread is not None else None
        if self.leaker_id is not None:
            CLOCK.leakers[self.leaker_id] = self

    def fill(self):
        """The library has no initial tokens (a new StateBucket is full): a bucket with I < C is
        reached with the library's own try_acquire(weight=C - I) at the creation instant."""
        if self.prefill and not self.limiter.try_acquire(NAME, weight=self.prefill, blocking=False):
            raise Unsupported("a new bucket does not admit C - I = %d at creation" % self.prefill)

    def remaining(self, now_ms):
        bucket = self.bucket
        if isinstance(bucket, StateBucket):
            # The largest m the algorithm's step() admits from the stored state: step() is pure
            # (StateBucket._replay uses it the same way, "without committing anything").
            state = bucket.store.read(bucket.algorithm, bucket.rates)
            hi = max(rate.burst for rate in bucket.rates)

            def admits(m):
                return bucket.algorithm.step(bucket.rates, state, now_ms, m)[1].allowed

            if not admits(0):
                return 0
            lo = 0
            while lo < hi:
                mid = lo + (hi - lo + 1) // 2
                if admits(mid):
                    lo = mid
                else:
                    hi = mid - 1
            return lo
        # A log bucket admits weight m iff, for every rate, m <= limit - (items in the rate's
        # window), the window as the bucket's algorithm defines it (put() checks exactly this).
        room = None
        for rate in bucket.rates:
            start = bucket._algorithm.window_start(rate, now_ms)
            count = len(bucket.items) - bisect_left(bucket.items, start, key=_by_timestamp)
            room = rate.limit - count if room is None else min(room, rate.limit - count)
        return max(0, room)

    def close(self):
        self.limiter.close()
        if CLOCK.leakers.get(self.leaker_id) is self:
            del CLOCK.leakers[self.leaker_id]


class PyrateShim(shimproto.Shim):
    implementation = "pyrate-limiter %s (in-memory buckets)" % (pyrate_limiter.__version__,)
    strategies = ["sliding-window-log", "fixed-window", "gcra", "token-bucket"]

    def profiles(self):
        return {strategy: dict(PROFILE) for strategy in self.strategies}

    def create(self, strategy, configuration, now):
        if strategy not in self.strategies:
            raise Unsupported("not offered by pyrate-limiter")
        CLOCK.ns = now
        if strategy in ("sliding-window-log", "fixed-window"):
            limit, window = ints(configuration, ["limit", "windowNanoseconds"])
            if window % MS:
                raise Unsupported("intervals are whole milliseconds")
            rate = _rate(strategy, limit, window // MS)
            if limit > LOG_LIMIT:
                raise Unsupported("InMemoryBucket keeps one item per permit: a limit above %d needs more "
                                  "memory than this shim takes" % LOG_LIMIT)
            algorithm = FixedWindow() if strategy == "fixed-window" else None
            return Entry(strategy, InMemoryBucket([rate], algorithm=algorithm))
        if strategy == "gcra":
            burst, interval = ints(configuration, ["burst", "emissionIntervalNanoseconds"])
            if interval % MS:
                raise Unsupported("intervals are whole milliseconds")
            rate = _rate(strategy, 1, interval // MS, burst=burst)
            return Entry(strategy, StateBucket([rate], algorithm=GCRA()))
        capacity, permits, period = ints(configuration, ["capacity", "permitsPerPeriod", "periodNanoseconds"])
        initial = configuration.get("initialTokens", capacity)
        if period % MS:
            raise Unsupported("intervals are whole milliseconds")
        rate = _rate(strategy, permits, period // MS, burst=capacity)
        if not is_int(initial) or initial < 0 or initial > capacity:
            raise Unsupported("the library has no initial tokens; the shim takes C - I with try_acquire at "
                              "creation, which needs 0 <= I <= C")
        entry = Entry(strategy, StateBucket([rate], algorithm=TokenBucket()), prefill=capacity - initial)
        entry.fill()
        return entry

    def event(self, entry, event, now):
        CLOCK.ns = entry.now = now
        now_ms = now // MS
        kind = event.get("kind")
        if kind == "acquire":
            weight = event.get("permits")
            try:
                admitted = entry.limiter.try_acquire(NAME, weight=weight, blocking=False)
            except AssertionError:
                return invalid("permits", "mustNotBeNegative")  # "item's weight must be >= 0"
            if admitted:
                return allowed(entry.remaining(now_ms))
            # Refused: the bucket's own wait for this item, bucket.waiting(item) (the Decision's
            # retry_after_ms that put() recorded, from the item's timestamp); -1 means the weight
            # can never fit, the library's "never".
            wait = entry.bucket.waiting(RateItem(NAME, now_ms, weight=weight))
            if wait == -1:
                return never()
            return refused_for(now, wait * MS)
        if kind == "release":
            return invalid("release", "notSupported")  # no release in pyrate-limiter
        if kind == "reset":
            entry.bucket.flush()
            entry.fill()
            return allowed(entry.remaining(now_ms))
        raise ValueError("event %r is outside the declared profile" % (kind,))

    def drop(self, entry):
        entry.close()


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        sys.exit(2)
    sys.exit(shimproto.serve(PyrateShim()))
