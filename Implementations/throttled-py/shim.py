#!/usr/bin/env python3
"""Python `throttled-py` (ZhuoZhuoCrayon/throttled-py), in-memory store or Redis store, driven
over the conformance protocol.

    Implementations/.venv/bin/python Implementations/throttled-py/shim.py
    Implementations/.venv/bin/python Implementations/throttled-py/shim.py --redis

Every limiter is a `Throttled(key=KEY, using=TYPE, quota=QUOTA, store=MemoryStore())` (its own
store, non-blocking: `timeout` left at -1), asked with `limit(cost=n)` and `peek(KEY)`:

| Spec strategy          | `using`          | quota                                                    |
|------------------------|------------------|----------------------------------------------------------|
| `fixed-window`         | `fixed_window`   | `per_duration(timedelta(seconds=W), N)`                  |
| `sliding-window-counter` | `sliding_window` | `per_duration(timedelta(seconds=W), N)`                |
| `token-bucket`         | `token_bucket`   | `per_duration(timedelta(seconds=P), R, burst=C)`         |
| `leaky-bucket-meter`   | `leaking_bucket` | `per_duration(timedelta(seconds=P), R, burst=C)`         |
| `gcra`                 | `gcra`           | `per_duration(timedelta(seconds=a), b, burst=B)`, a/b = T/10^9 s in lowest terms |

See README.md for the mapping, the clock and the profile.

    --redis                      every limiter on one `RedisStore` (each its own key), over a
                                 redis-server the shim starts and stops (../common/redisclock.py)
    --monotonic-origin SECONDS   what time.monotonic() reads at the protocol's instant 0 (default
                                 10^6 s: 11.6 days of uptime)

The library is used unmodified. The only thing replaced is the clock it reads: every reading goes
through `throttled.utils` (`now_sec()` = `int(time.time())`, `now_ms()` = `int(time.time() * 1000)`,
`now_mono_f()` = `time.monotonic()`), which looks up the module `time` in its own namespace; the
shim binds that name, `throttled.utils.time`, to a stand-in whose `time()` and `monotonic()` read
the protocol's instant. The memory store has no timer: its keys expire lazily, when read, against
`now_mono_f()`, the same stand-in. With `--redis`, the store's Lua scripts and commands run on a
real redis-server whose wall clock (TIME, EXPIRE, lazy deletion) reads the same wall-clock instant
as the stand-in's `time()`, set before each call (ClockedRedis); nothing else is replaced.
"""

import os
import sys
import traceback
import types
from datetime import timedelta
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, ceil_ns, ints, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()

import throttled  # noqa: E402
import throttled.utils as utils_module  # noqa: E402
from throttled import RateLimiterType, Throttled, exceptions, per_duration  # noqa: E402
from throttled.store import MemoryStore, RedisStore  # noqa: E402

NS = 1_000_000_000
MS = 1_000_000
PRESENT = 1_700_000_000  # a Unix time in 2023: where time.time() reads in real use
# time.monotonic() is CLOCK_MONOTONIC: seconds since boot. The shim's reads 10^6 s (11.6 days of
# uptime) at the protocol's instant 0 of every limiter.
MONO_ORIGIN = 1_000_000
KEY = "conformance"
# --redis: the ClockedRedis, the one RedisStore every limiter shares, and how many limiters it has
# held (each limiter's key is numbered, so none sees another's).
REDIS = None


class Clock:
    """The two readings the library makes, through throttled.utils: `time.time()` (Unix seconds, a
    float) and `time.monotonic()` (seconds since boot, a float)."""

    def __init__(self):
        self.wall = float(PRESENT)
        self.mono = float(MONO_ORIGIN)

    def time(self):
        return self.wall

    def monotonic(self):
        return self.mono


CLOCK = Clock()
utils_module.time = types.SimpleNamespace(time=CLOCK.time, monotonic=CLOCK.monotonic)


class Timeline:
    """One limiter's clock. The wall clock reads the float nearest to `origin + now / 10^9` Unix
    seconds (int / int is correctly rounded), what time.time() returns at that instant. The
    monotonic clock cannot go back: it reads MONO_ORIGIN + L / 10^9 seconds, where L is the latest
    instant this limiter has seen (its creation or an event), the float nearest to it. While time
    never goes back that is MONO_ORIGIN + now / 10^9; when the protocol's instant goes back (the wall
    clock stepped back, a stale reading), the monotonic clock stays at the latest instant, which is
    where the Spec evaluates the event too (CORE-10: e = max(now, last)), so that no key of the
    store expires on time that the timeline has not seen pass."""

    def __init__(self, origin, now):
        self.origin = origin
        self.latest = now

    def at(self, now):
        self.latest = max(self.latest, now)
        CLOCK.wall = (self.origin * NS + now) / NS
        CLOCK.mono = (MONO_ORIGIN * NS + self.latest) / NS
        if REDIS is not None:
            REDIS.server.set_clock(self.origin * NS + now)


TYPES = {
    "fixed-window": RateLimiterType.FIXED_WINDOW.value,
    "sliding-window-counter": RateLimiterType.SLIDING_WINDOW.value,
    "token-bucket": RateLimiterType.TOKEN_BUCKET.value,
    "leaky-bucket-meter": RateLimiterType.LEAKING_BUCKET.value,
    "gcra": RateLimiterType.GCRA.value,
}

# The configuration fields of each strategy: the Spec's field for the period or window, for the
# rate's limit and for the burst.
FIELDS = {
    "fixed-window": ("windowNanoseconds", "limit", None),
    "sliding-window-counter": ("windowNanoseconds", "limit", None),
    "token-bucket": ("periodNanoseconds", "permitsPerPeriod", "capacity"),
    "leaky-bucket-meter": ("periodNanoseconds", "leakPermitsPerPeriod", "capacity"),
    "gcra": ("emissionIntervalNanoseconds", None, "burst"),
}

# Every decision reads int(time.time()) (whole seconds), except the sliding window's weight, which
# reads int(time.time() * 1000) (whole milliseconds), and GCRA, which reads time.monotonic().
GCRA_UNIT = 10_000


def profile(unit, configuration_unit, monotonic):
    return {
        "timeUnitNanoseconds": unit,
        "configurationUnitNanoseconds": configuration_unit,
        "largestInstantNanoseconds": INT64_MAX // unit * unit,
        "monotonic": monotonic,
        # limit(cost=n), peek(key) as the query, a negative cost refused (DataError); no reset and
        # no reconfigure (neither Throttled nor the rate limiters nor MemoryStore have one).
        "events": ["weighted", "query", "invalid"],
        "toleranceNanoseconds": 0,
        "validation": True,
        "createdAtFirstEvent": False,
    }


PROFILES = {
    "fixed-window": dict(profile(NS, NS, False), alignment="origin"),
    "sliding-window-counter": profile(MS, NS, False),
    "token-bucket": profile(NS, NS, False),
    "leaky-bucket-meter": profile(NS, NS, False),
    "gcra": profile(GCRA_UNIT, GCRA_UNIT, True),
}


def _quota(strategy, seconds, limit, burst):
    """per_duration(...), a ZeroDivisionError of Quota.__post_init__ (the library's only refusal of
    a quota, base.py:50-52) read as a refusal naming the field it divides by."""
    try:
        return per_duration(timedelta(seconds=seconds), limit, burst)
    except ZeroDivisionError as error:
        line = traceback.extract_tb(error.__traceback__)[-1].line or ""
        period_field, limit_field, _ = FIELDS[strategy]
        if line.rstrip().endswith("/ self.rate.limit") and limit_field:
            raise Refused(limit_field, "mustBePositive")
        if line.rstrip().endswith("/ self.period_sec"):
            raise Refused(period_field, "mustBePositive")
        raise


class Limiter:
    def __init__(self, strategy, quota, origin, now):
        self.strategy = strategy
        self.timeline = Timeline(origin, now)
        self.timeline.at(now)
        if REDIS is None:
            self.key, store = KEY, MemoryStore()
        else:
            REDIS.limiters += 1
            self.key, store = "%s-%d" % (KEY, REDIS.limiters), REDIS.store
        self.throttle = Throttled(key=self.key, using=TYPES[strategy], quota=quota, store=store)

    def prefill(self, cost):
        """The library has no initial tokens or level (a token bucket starts full, a leaking bucket
        empty): the Spec's initial state is reached with the library's own limit(cost) at the
        creation instant."""
        if cost and self.throttle.limit(cost=cost).limited:
            raise Unsupported("the library does not admit the %d permits that reach the initial state" % cost)


class ThrottledShim(shimproto.Shim):
    implementation = "throttled-py %s (memory store)" % (throttled.__version__,)
    strategies = list(TYPES)

    def profiles(self):
        profiles = {strategy: dict(PROFILES[strategy]) for strategy in self.strategies}
        if REDIS is not None:
            # The Redis store's GCRA reads the server's TIME, a wall clock, not time.monotonic().
            profiles["gcra"]["monotonic"] = False
        return profiles

    def create(self, strategy, configuration, now):
        if strategy not in TYPES:
            raise Unsupported("not offered by throttled-py")
        now = now if is_int(now) else 0
        if strategy in ("fixed-window", "sliding-window-counter"):
            limit, window = ints(configuration, ["limit", "windowNanoseconds"])
            if window % NS:
                raise Unsupported("periods are whole seconds (Quota.period_sec = int(period.total_seconds()))")
            seconds = window // NS
            quota = _quota(strategy, seconds, limit, None)
            # Windows are numbered int(time.time()) // period from the Unix epoch: instant 0 is put
            # on a multiple of the window, so that they are the Spec's windows.
            origin = -(-PRESENT // seconds) * seconds if seconds > 0 else PRESENT
            return Limiter(strategy, quota, origin, now)
        if strategy == "gcra":
            burst, interval = ints(configuration, ["burst", "emissionIntervalNanoseconds"])
            if interval % GCRA_UNIT:
                raise Unsupported("emission intervals are multiples of 10 us (the clock's unit)")
            # emission_interval = period_sec / limit (base.py:51): T / 10^9 s as a fraction a / b.
            fraction = Fraction(interval, NS)
            quota = _quota(strategy, fraction.numerator, fraction.denominator, burst)
            return Limiter(strategy, quota, PRESENT, now)
        # token-bucket, leaky-bucket-meter
        level_name = "initialTokens" if strategy == "token-bucket" else "initialLevel"
        capacity, permits, period = ints(configuration, ["capacity", FIELDS[strategy][1], "periodNanoseconds"])
        default = capacity if strategy == "token-bucket" else 0
        initial = configuration.get(level_name, default)
        if period % NS:
            raise Unsupported("periods are whole seconds (Quota.period_sec = int(period.total_seconds()))")
        quota = _quota(strategy, period // NS, permits, capacity)
        # A new token bucket is full, a new leaking bucket empty; another initial state is reached
        # with limit(cost) at creation: C - I tokens taken, or I permits of water poured in.
        cost = capacity - initial if strategy == "token-bucket" else initial
        if cost and not (is_int(initial) and 0 <= initial <= capacity):
            raise Unsupported("the library has no %s; the shim reaches it with limit(cost) at creation, "
                              "which needs 0 <= %s <= capacity" % (level_name, level_name))
        limiter = Limiter(strategy, quota, PRESENT, now)
        limiter.prefill(cost)
        return limiter

    def event(self, lim, event, now):
        kind = event.get("kind")
        if kind == "acquire":
            permits = event.get("permits")
            lim.timeline.at(now)
            if permits == 0:
                # The library's query: peek(key) -> RateLimitState (a read of the store).
                return allowed(lim.throttle.peek(lim.key).remaining)
            try:
                result = lim.throttle.limit(cost=permits)
            except exceptions.DataError:
                # "Invalid cost: -1, must be an integer greater than or equal to 0."
                return invalid("permits", "mustNotBeNegative")
            state = result.state
            if not result.limited:
                return allowed(state.remaining)
            # Refused: the library's own retry_after (seconds, an int or a float), exactly, rounded
            # up to a nanosecond. A retry_after of 0 or less is sent as it is (malformed, CONF-1).
            return refused_for(now, ceil_ns(state.retry_after))
        if kind == "release":
            return invalid("release", "notSupported")  # no release in throttled-py
        raise ValueError("event %r is outside the declared profile" % (kind,))


def main(argv):
    global MONO_ORIGIN, REDIS
    args = argv[1:]
    redis = args[:1] == ["--redis"]
    if redis:
        args = args[1:]
    if args[:1] == ["--monotonic-origin"] and len(args) == 2:
        MONO_ORIGIN = int(args[1])
    elif args:
        sys.stdout.write('{"type":"error","message":"usage: shim.py [--redis] [--monotonic-origin SECONDS]"}\n')
        return 2
    shim = ThrottledShim()
    if redis:
        import redisclock

        server = redisclock.start_for_shim()
        if server is None:
            return 2
        REDIS = types.SimpleNamespace(server=server, store=RedisStore(server=server.url), limiters=0)
        shim.implementation = "throttled-py %s (Redis store, redis-server %s)" % (throttled.__version__, server.version)
    return shimproto.serve(shim)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
