#!/usr/bin/env python3
"""Python `token-bucket` (falconry/token-bucket), driven over the conformance protocol.

    Implementations/.venv/bin/python Implementations/token-bucket/shim.py

Strategy: `token-bucket`, as `token_bucket.Limiter(rate=R·10^9/P, capacity=C, MemoryStorage())`
used with `consume(key, n)`: a bucket of C float tokens that gains `rate` per second of
`time.monotonic()`, continuously. See README.md for the mapping.

The library is used unmodified. Its only clock is `time.monotonic()`, which
`token_bucket.storage` looks up as the attribute `monotonic` of the name `time` in its module
(`import time`; `MemoryStorage.replenish`, storage.py:101 and 126). The shim binds that name, in
that module only, to a stand-in whose `monotonic()` returns what CPython's `time.monotonic()`
returns when CLOCK_MONOTONIC reads the protocol's instant in nanoseconds
(`_PyTime_AsSecondsDouble`). Nothing else is replaced.

The library reports no wait and no remaining: a refusal's wait is the first instant at which the
library's own `consume(key, n)`, asked of a copy of the limiter, admits (it only gets truer as
time passes); `remaining` is the largest `m` that `consume(key, m)`, asked of a copy at the same
instant, admits.
"""

import copy
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, invalid, is_int, never, refused_for  # noqa: E402

shimproto.quiet_stderr()

import token_bucket  # noqa: E402
import token_bucket.storage as storage_module  # noqa: E402
from token_bucket import Limiter, MemoryStorage  # noqa: E402

NS = 1_000_000_000
# A float of seconds gives every nanosecond a reading of its own up to 2^23 s (97 days of uptime):
# there its readings are 2^-30 s (0.93 ns) apart, beyond 2^-29 s (1.86 ns), and two nanoseconds can
# read the same float (the profile's largest instant).
LARGEST_INSTANT = (1 << 23) * NS
KEY = "conformance"


def reading(ns):
    """What CPython's time.monotonic() returns when CLOCK_MONOTONIC reads `ns` nanoseconds:
    _PyTime_AsSecondsDouble (Python/pytime.c): whole seconds are converted exactly, any other
    instant as (double)ns / 1e9. (Below 2^53 ns this is the float nearest to ns / 10^9.)"""
    if ns % NS == 0:
        return float(ns // NS)
    return float(ns) / 1e9


class Clock:
    ns = 0  # the protocol's instant of the request being answered (or of a probe of a copy)

    def monotonic(self):
        return reading(self.ns)


CLOCK = Clock()
# The one clock the library reads, as its module looks it up: `time.monotonic()` in token_bucket.storage.
storage_module.time = types.SimpleNamespace(monotonic=CLOCK.monotonic)

PROFILE = {
    # time.monotonic() reads CLOCK_MONOTONIC, whole nanoseconds, as a float of seconds.
    "timeUnitNanoseconds": 1,
    "largestInstantNanoseconds": LARGEST_INSTANT,
    # time.monotonic().
    "monotonic": True,
    # consume(key, n): any n (0 and negative n raise ValueError, the library's own answer to
    # them). No reset (MemoryStorage has no way to empty or refill a bucket), no reconfigure
    # (a Limiter's rate and capacity are fixed when it is built).
    "events": ["weighted", "query", "invalid"],
    # Up to the largest instant (2^23 s) the clock's readings are at most 2^-30 s (0.93 ns) apart: a
    # reading can move a decision to the neighbouring nanosecond. The float arithmetic of the tokens is
    # not covered.
    "toleranceNanoseconds": 1,
    "validation": True,
    "createdAtFirstEvent": False,
}


def rate_of(permits, period):
    """Tokens per second, the float nearest to R·10^9/P (int / int is correctly rounded). R = 0 is a
    rate of 0 whatever the period; a period of 0 with R != 0 is an infinite rate (R per no time at
    all), the float the library can be given for it."""
    if permits == 0:
        return 0.0
    if period == 0:
        return float("inf") if permits > 0 else float("-inf")
    return permits * NS / period


class Bucket:
    def __init__(self, limiter):
        self.limiter = limiter

    def consume_on_copy(self, ns, n):
        """The library's consume(key, n) asked of a copy of the limiter at instant `ns`."""
        clone = copy.deepcopy(self.limiter)
        saved = CLOCK.ns
        CLOCK.ns = ns
        try:
            return clone.consume(KEY, n)
        finally:
            CLOCK.ns = saved

    def remaining(self, now):
        """The largest m (0 <= m <= C) that consume(key, m), asked of a copy at `now`, admits. A
        bucket holds at most `capacity` tokens (replenish keeps min(capacity, ...)), and consume
        compares `tokens < m` exactly: admitted m are the integers up to the token count."""
        hi = self.limiter._capacity
        if not self.consume_on_copy(now, 1):
            return 0
        lo = 1
        while lo < hi:
            mid = lo + (hi - lo + 1) // 2
            if self.consume_on_copy(now, mid):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def admission(self, now, n):
        """The first instant after `now`, up to the end of the timeline, at which consume(key, n)
        asked of a copy admits; None if it admits at none. Whether it admits only gets truer as time
        passes (the tokens after replenish, min(capacity, tokens + rate·(now − last)), are a
        non-decreasing function of the float reading, which is non-decreasing in the instant), so
        the first such instant is found by bisection."""
        if not self.consume_on_copy(INT64_MAX, n):
            return None
        lo, hi = now + 1, INT64_MAX
        while lo < hi:
            mid = (lo + hi) // 2
            if self.consume_on_copy(mid, n):
                hi = mid
            else:
                lo = mid + 1
        return lo


class TokenBucketShim(shimproto.Shim):
    implementation = "token-bucket %s (MemoryStorage)" % (token_bucket.__version__,)
    strategies = ["token-bucket"]

    def profiles(self):
        return {"token-bucket": dict(PROFILE)}

    def create(self, strategy, configuration, now):
        if strategy != "token-bucket":
            raise Unsupported("token-bucket is a token bucket")
        fields = ["capacity", "permitsPerPeriod", "periodNanoseconds"]
        values = [configuration.get(name) for name in fields]
        if not all(is_int(v) for v in values):
            raise Refused(fields[[is_int(v) for v in values].index(False)], "notSupported")
        capacity, permits, period = values
        initial = configuration.get("initialTokens", capacity)
        CLOCK.ns = now
        try:
            limiter = Limiter(rate_of(permits, period), capacity, MemoryStorage())
        except ValueError as error:
            message = str(error)
            if message.startswith("rate"):
                # 'rate must be > 0' (limiter.py:72-73): the rate is R/P; R <= 0 makes it so with a
                # positive period, a negative period with a positive R.
                raise Refused("permitsPerPeriod" if permits <= 0 else "periodNanoseconds", "mustBePositive")
            if message.startswith("capacity"):
                raise Refused("capacity", "mustBePositive")  # 'capacity must be >= 1' (limiter.py:78-79)
            raise
        if not is_int(initial) or initial < 0 or initial > capacity:
            raise Unsupported("the library has no initial tokens (a bucket starts full at its first consume); "
                              "the shim takes C - I with consume at creation, which needs 0 <= I <= C")
        if initial < capacity:
            # A new bucket is full (replenish's KeyError branch, storage.py:125-126): I < C is reached
            # with the library's own consume(C - I) at the creation instant. I = C needs nothing: a
            # bucket created full at its first consume is the one created full now (a full bucket
            # gains nothing).
            if not limiter.consume(KEY, capacity - initial):
                raise Unsupported("a new bucket does not admit C - I = %d at creation" % (capacity - initial))
        return Bucket(limiter)

    def event(self, bucket, event, now):
        CLOCK.ns = now
        kind = event.get("kind")
        if kind == "acquire":
            n = event.get("permits")
            try:
                admitted = bucket.limiter.consume(KEY, n)
            except ValueError:
                # 'num_tokens must be >= 1' (limiter.py:125-126), for 0 and negative counts alike.
                return invalid("permits", "mustBePositive")
            if admitted:
                return allowed(bucket.remaining(now))
            # Refused (the refused consume has replenished the bucket to now, as the library does).
            at = bucket.admission(now, n)
            if at is None:
                return never()  # no instant of the timeline admits it
            return refused_for(now, at - now)
        if kind == "release":
            return invalid("release", "notSupported")  # no release in token-bucket
        raise ValueError("event %r is outside the declared profile" % (kind,))


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        sys.exit(2)
    sys.exit(shimproto.serve(TokenBucketShim()))
