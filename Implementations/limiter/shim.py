#!/usr/bin/env python3
"""Python `limiter` (alexdelorenzo/limiter), driven over the conformance protocol.

    Implementations/limiter/.venv/bin/python Implementations/limiter/shim.py

Strategy: `token-bucket`, as `limiter.Limiter(rate=R·10^9/P, capacity=C)` (which builds a
`token_bucket.Limiter(rate, capacity, MemoryStorage())` of token-bucket 0.3.0) used as its README
shows, `with limiter(consume=n): ...`: a blocking acquire that, while token_bucket's
`consume(bucket, n)` refuses, sleeps `(n - tokens) / rate` seconds and tries again. See README.md.

The library is used unmodified. It reads one clock and waits on it: `time.monotonic()`, which
`token_bucket.storage` looks up as the attribute `monotonic` of the name `time` in its module
(`MemoryStorage.replenish`), and `time.sleep`, which `limiter.limiter` imported as the name
`sleep` of its module (`from time import sleep`; `limit_rate`). The shim binds those two names,
in those modules only, to a virtual clock: `monotonic()` returns what CPython's `time.monotonic()`
returns when CLOCK_MONOTONIC reads the protocol's instant in nanoseconds, and `sleep(s)` moves
that instant on by the nanoseconds CPython's `time.sleep(s)` waits at least
(`ceil(s * 1e9)`, `_PyTime_FromSecondsObject` with `_PyTime_ROUND_TIMEOUT`), raising what it
raises. Nothing else is replaced.

An acquire is answered as a caller that must not wait would see it (Spec/Conformance.md,
"Reservations"): the library's blocking acquire runs on a copy of the limiter in virtual time;
if it returns at once it is `allowed` (and the copy, which took the tokens, becomes the limiter);
if it sleeps, it is `rejected` with the time it returned at as the retry-after, and the limiter is
left as it was. `remaining` is the largest `m` whose blocking acquire, run on a copy at the same
instant, returns without sleeping.
"""

import copy
import math
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()

from importlib.metadata import version  # noqa: E402

import limiter.limiter as limiter_module  # noqa: E402
import token_bucket  # noqa: E402
import token_bucket.storage as storage_module  # noqa: E402
from limiter import Limiter  # noqa: E402

NS = 1_000_000_000
# A float of seconds gives every nanosecond a reading of its own up to 2^23 s (97 days of uptime):
# there its readings are 2^-30 s (0.93 ns) apart, beyond 2^-29 s (1.86 ns), and two nanoseconds can
# read the same float (the profile's largest instant).
LARGEST_INSTANT = (1 << 23) * NS
# The most sleeps one measured acquire may take before the shim gives up (answered `error`, a hang
# not hidden); in the run the loop ended after one or two sleeps, but where it never ends (below).
MAX_SLEEPS = 10_000


def reading(ns):
    """What CPython's time.monotonic() returns when CLOCK_MONOTONIC reads `ns` nanoseconds:
    _PyTime_AsSecondsDouble (Python/pytime.c): whole seconds are converted exactly, any other
    instant as (double)ns / 1e9. (Below 2^53 ns this is the float nearest to ns / 10^9.)"""
    if ns % NS == 0:
        return float(ns // NS)
    return float(ns) / 1e9


class WouldSleep(Exception):
    """Raised by the virtual sleep while the shim only asks whether an acquire returns at once."""


class EndlessWait(Exception):
    """The measured acquire sleeps forever: its bucket is full and still refuses (see sleep())."""


class Clock:
    ns = 0  # the protocol's instant (a Python int: a measured wait may run past Int64.max)
    probe = None  # while a remaining is probed: any sleep means "not at once"
    measured = None  # (the copy, n) while a wait is measured
    sleeps = 0

    def monotonic(self):
        return reading(self.ns)

    def sleep(self, seconds):
        """time.sleep(seconds) on the virtual clock: CPython converts the float to nanoseconds as
        ceil(seconds * 1e9) in double arithmetic (pytime_from_double, _PyTime_ROUND_TIMEOUT),
        raises OverflowError beyond the 64-bit range and ValueError below 0; then CLOCK_MONOTONIC
        reads at least that much later (clock_nanosleep to an absolute deadline). The clock moves
        exactly that much: the earliest instant a real sleep can end."""
        if math.isnan(seconds):
            raise ValueError("Invalid value NaN (not a number)")
        d = math.ceil(seconds * 1e9) if seconds > 0 else math.floor(seconds * 1e9)
        if not (-(2 ** 63) <= d < 2 ** 63):
            raise OverflowError("timestamp out of range for platform time_t")
        if d < 0:
            raise ValueError("sleep length must be non-negative")
        if self.probe is not None:
            raise WouldSleep()
        if self.measured is not None:
            clone, n = self.measured
            # limit_rate sleeps only after consume(bucket, n) refused. If the bucket then held its
            # whole capacity C, n > C, and consume refuses at every later instant (replenish stores
            # min(C, ...), never more than C). The loop also ends when (n - tokens) / rate <= 0; with
            # tokens <= C that needs float(n) <= C. When float(n) > C too, it never ends: it sleeps
            # (n - tokens) / rate again and again, forever.
            tokens = clone.limiter._storage.get_token_count(clone.bucket)
            if tokens == clone.capacity and float(n) > clone.capacity:
                raise EndlessWait()
            self.sleeps += 1
            if self.sleeps > MAX_SLEEPS:
                raise RuntimeError("the library's acquire(%d) still sleeps after %d sleeps (%d ns)"
                                   % (n, MAX_SLEEPS, self.ns))
        self.ns += d


CLOCK = Clock()
# The clock the library reads, as its module looks it up: `time.monotonic()` in token_bucket.storage.
storage_module.time = types.SimpleNamespace(monotonic=CLOCK.monotonic)
# The sleep the library waits with, as its module looks it up: `sleep` in limiter.limiter.
limiter_module.sleep = CLOCK.sleep

PROFILE = {
    # time.monotonic() reads CLOCK_MONOTONIC, whole nanoseconds, as a float of seconds.
    "timeUnitNanoseconds": 1,
    "largestInstantNanoseconds": LARGEST_INSTANT,
    # time.monotonic().
    "monotonic": True,
    # limiter(consume=n): any n (0 and negative n raise token_bucket's ValueError). No reset, no
    # reconfigure (`limiter(rate=...)` raises "Create a new limiter with the new() method", and
    # new() builds a new, full bucket).
    "events": ["weighted", "query", "invalid"],
    # Up to the largest instant (2^23 s) the clock's readings are at most 2^-30 s (0.93 ns) apart: a
    # reading can move a decision to the neighbouring nanosecond. The float arithmetic is not covered.
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


def blocking_acquire(lim, n):
    """The library's documented use: `with limiter(consume=n): ...` (limit_rate's loop)."""
    with lim(consume=n):
        pass


class Entry:
    def __init__(self, lim):
        self.lim = lim

    def at_once(self, now, n):
        """Whether the blocking acquire of n, run on a copy at `now`, returns without sleeping."""
        clone = copy.deepcopy(self.lim)
        CLOCK.ns, CLOCK.probe = now, n
        try:
            blocking_acquire(clone, n)
            return True
        except WouldSleep:
            return False
        finally:
            CLOCK.ns, CLOCK.probe = now, None

    def remaining(self, now):
        """The largest m whose blocking acquire, on a copy at `now`, returns at once. That only
        gets truer as m decreases: consume admits m iff m <= tokens, and where it refuses, the loop
        returns without sleeping iff (m - tokens) / rate <= 0, iff float(m) <= tokens (float
        rounding is monotonic). Above 2·C + 1 neither holds."""
        if not self.at_once(now, 1):
            return 0
        lo, hi = 1, 2 * self.lim.capacity + 1
        while lo < hi:
            mid = lo + (hi - lo + 1) // 2
            if self.at_once(now, mid):
                lo = mid
            else:
                hi = mid - 1
        return lo


class LimiterShim(shimproto.Shim):
    implementation = "limiter %s (token-bucket %s)" % (version("limiter"), token_bucket.__version__)
    strategies = ["token-bucket"]

    def profiles(self):
        return {"token-bucket": dict(PROFILE)}

    def create(self, strategy, configuration, now):
        if strategy != "token-bucket":
            raise Unsupported("limiter is a token bucket")
        fields = ["capacity", "permitsPerPeriod", "periodNanoseconds"]
        values = [configuration.get(name) for name in fields]
        if not all(is_int(v) for v in values):
            raise Refused(fields[[is_int(v) for v in values].index(False)], "notSupported")
        capacity, permits, period = values
        initial = configuration.get("initialTokens", capacity)
        CLOCK.ns = now
        try:
            lim = Limiter(rate=rate_of(permits, period), capacity=capacity)
        except ValueError as error:
            message = str(error)
            if message.startswith("rate"):
                # token_bucket's 'rate must be > 0' (limiter.py:72-73 of 0.3.0): the rate is R/P; R <= 0
                # makes it so with a positive period, a negative period with a positive R.
                raise Refused("permitsPerPeriod" if permits <= 0 else "periodNanoseconds", "mustBePositive")
            if message.startswith("capacity"):
                raise Refused("capacity", "mustBePositive")  # 'capacity must be >= 1' (limiter.py:78-79)
            raise
        if not is_int(initial) or initial < 0 or initial > capacity:
            raise Unsupported("the library has no initial tokens (a bucket starts full at its first acquire); "
                              "the shim takes C - I with an acquire at creation, which needs 0 <= I <= C")
        entry = Entry(lim)
        if initial < capacity:
            # A new bucket is full: I < C is reached with the library's own acquire of C - I at the
            # creation instant (from a full bucket it returns at once). I = C needs nothing: a
            # bucket created full at its first acquire is the one created full now.
            if not entry.at_once(now, capacity - initial):
                raise Unsupported("a new bucket does not admit C - I = %d at once" % (capacity - initial))
            blocking_acquire(lim, capacity - initial)
        return entry

    def event(self, entry, event, now):
        CLOCK.ns = now
        kind = event.get("kind")
        if kind == "acquire":
            n = event.get("permits")
            clone = copy.deepcopy(entry.lim)
            CLOCK.measured, CLOCK.sleeps = (clone, n), 0
            try:
                blocking_acquire(clone, n)
            except ValueError:
                # token_bucket's 'num_tokens must be >= 1' (limiter.py:125-126 of 0.3.0), for 0 and
                # negative counts alike, raised out of the `with`.
                return invalid("permits", "mustBePositive")
            except EndlessWait:
                # It never returns: a wait longer than any the protocol carries.
                return refused_for(now, INT64_MAX)
            finally:
                end, CLOCK.ns, CLOCK.measured = CLOCK.ns, now, None
            if end == now:
                entry.lim = clone  # returned at once: admitted now, as the limiter itself would be
                return allowed(entry.remaining(now))
            return refused_for(now, end - now)
        if kind == "release":
            return invalid("release", "notSupported")  # no release in limiter
        raise ValueError("event %r is outside the declared profile" % (kind,))


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        sys.exit(2)
    sys.exit(shimproto.serve(LimiterShim()))
