#!/usr/bin/env python3
"""Python `limits` (alisaifee/limits), memory storage, driven over the conformance protocol.

    Implementations/.venv/bin/python Implementations/limits/shim.py
    Implementations/.venv/bin/python Implementations/limits/shim.py --redis

Strategies: `fixed-window` (FixedWindowRateLimiter), `sliding-window-log` (MovingWindowRateLimiter),
`sliding-window-counter` (SlidingWindowCounterRateLimiter), each over `MemoryStorage`, with
`RateLimitItemPerSecond(limit, windowNanoseconds / 1e9)`. See README.md for the mapping.

The library is used unmodified. The only things replaced are the two clock readings it makes, as
its modules look them up: `time.time()` in `limits.storage.memory` and `limits.strategies` (the
name `time` in those modules is bound to a stand-in whose `time()` reads the protocol's instant),
and `threading.Timer` in `limits.storage.memory`, the real-time timer that runs the storage's
expiry pass every 0.01 s, which here fires at 0.01 s of the same stand-in clock (see README.md).

With `--redis`, each limiter is over `RedisStorage` instead (its Lua scripts, on a real
redis-server that the shim starts and stops: ../common/redisclock.py). The library reads
`time.time()` in `limits.storage.redis` too, bound to the same stand-in; the server's own wall
clock, which its TTLs, PTTLs and expiry read, is set to the same instant before each call, to the
millisecond and below (ClockedRedis). Nothing else is replaced.

    --redis                 RedisStorage on a redis-server of the shim's own
    --unix-origin SECONDS   map the protocol's instant 0 to this Unix time instead of the default
                            (the first multiple of the window at or after 1,700,000,000 s)
"""

import os
import sys
import threading
import types
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, ceil_ns, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()

import limits  # noqa: E402
import limits.storage.memory as memory_module  # noqa: E402
import limits.storage.redis as redis_module  # noqa: E402
import limits.strategies as strategies_module  # noqa: E402
from limits import RateLimitItemPerSecond  # noqa: E402
from limits.storage import MemoryStorage, RedisStorage  # noqa: E402

NS = 1_000_000_000
PRESENT = 1_700_000_000  # a Unix time in 2023: where time.time() reads in real use
# The clock's unit (see README.md, "Profile"): time.time() is a double of Unix seconds. From the
# origin (1.7e9 s, or the window when it is longer, at most 9.2e9 s) to 292 years later (below
# 2^35 s) its readings are 2^-22 s (238 ns) to 2^-18 s (3.8 us) apart: every multiple of 10 us
# reads a float of its own, within 2^-19 s (1.9 us) of it; whole microseconds would not (past
# 2^33 s, two of them can read the same float).
UNIT = 10_000
TOLERANCE = 0


def unix_seconds(origin, now):
    """What time.time() reads at the protocol's instant `now` (ns): the float nearest to
    origin + now / 10^9 Unix seconds (int / int is correctly rounded)."""
    return (origin * NS + now) / NS


class Clock:
    """The one clock the library reads: Unix seconds, as a float, like time.time()."""

    def __init__(self):
        self.seconds = 0.0
        self.timers = []  # pending _VirtualTimer objects

    def time(self):
        return self.seconds

    def advance_to(self, seconds, storage=None):
        """Sets the clock, first running every timer of `storage` due at or before `seconds`, at its
        due instant (what threading.Timer(0.01, ...) does on a clock that is real time). Each
        limiter has its own storage and its own origin, so only its own timers run."""
        while True:
            due = [timer for timer in self.timers if timer.due <= seconds and timer.owner() is storage]
            if not due:
                break
            timer = min(due, key=lambda t: t.due)
            self.timers.remove(timer)
            self.seconds = timer.due
            timer.fire()
        self.seconds = seconds


CLOCK = Clock()


class _VirtualTimer:
    """threading.Timer as limits.storage.memory uses it (start, is_alive), on CLOCK."""

    def __init__(self, interval, function, args=None, kwargs=None):
        self.interval, self.function = interval, function
        self.args, self.kwargs = args or [], kwargs or {}
        self.due = None
        self.alive = False

    def start(self):
        self.due = CLOCK.seconds + self.interval
        self.alive = True
        CLOCK.timers.append(self)

    def is_alive(self):
        return self.alive

    def cancel(self):
        if self in CLOCK.timers:
            CLOCK.timers.remove(self)
        self.alive = False

    def owner(self):
        return getattr(self.function, "__self__", None)

    def fire(self):
        try:
            self.function(*self.args, **self.kwargs)
        finally:
            self.alive = False


_TIME = types.SimpleNamespace(time=CLOCK.time)
memory_module.time = _TIME
strategies_module.time = _TIME
redis_module.time = _TIME
memory_module.threading = types.SimpleNamespace(Timer=_VirtualTimer, RLock=threading.RLock)

STRATEGIES = {
    "fixed-window": strategies_module.FixedWindowRateLimiter,
    "sliding-window-log": strategies_module.MovingWindowRateLimiter,
    "sliding-window-counter": strategies_module.SlidingWindowCounterRateLimiter,
}

PROFILE = {
    # The clock: a float of seconds, resolving 10 us wherever the shim drives it (UNIT above).
    "timeUnitNanoseconds": UNIT,
    # RateLimitItem windows are whole seconds (granularity "second", integer multiples).
    "configurationUnitNanoseconds": NS,
    # The last multiple of the unit on the timeline.
    "largestInstantNanoseconds": INT64_MAX // UNIT * UNIT,
    # time.time() is the wall clock: it may go back.
    "monotonic": False,
    # hit(cost=n); get_window_stats() as the query; clear() as the reset; no reconfigure.
    "events": ["weighted", "query", "invalid", "reset"],
    # None. The suite reads an answered instant on this 10 us clock too (CONF-7): a wait ending a
    # few ns before the Spec's instant, on the same reading, is exact. A wait ending a few ns after
    # it is the float arithmetic of two readings (a reset time is a reading plus the window, minus
    # the reading now), and float arithmetic is never covered by a tolerance (README.md, "Profile").
    "toleranceNanoseconds": TOLERANCE,
    "validation": True,
    # Nothing happens when a limit is declared: the state begins at the first hit.
    "createdAtFirstEvent": True,
}

# The Redis storage's profile: the server's TTL, PTTL and expiry are whole milliseconds, so the
# instants are too (a window's edge read between two milliseconds is Redis's resolution, not a
# finding). Everything else as the memory storage's.
REDIS_PROFILE = dict(PROFILE, timeUnitNanoseconds=1_000_000,
                     largestInstantNanoseconds=INT64_MAX // 1_000_000 * 1_000_000)

UNIX_ORIGIN = None
LOG_LIMIT = 1_000_000
# The ClockedRedis of --redis, started at the first create.
REDIS = None


class Limiter:
    def __init__(self, strategy, limit, window_seconds, origin, now):
        self.strategy = strategy
        self.origin = origin  # the Unix time (s) of the protocol's instant 0
        CLOCK.advance_to(unix_seconds(origin, now))
        if REDIS is not None:
            REDIS.server.set_clock(origin * NS + now)
            REDIS.limiters += 1
            # A key prefix of its own on the shared server: limiters never see each other's keys.
            self.storage = RedisStorage("redis+" + REDIS.server.url, connection_pool=REDIS.pool,
                                        key_prefix="L%d" % REDIS.limiters)
        else:
            self.storage = MemoryStorage()  # starts its expiry timer at this reading
        self.limiter = STRATEGIES[strategy](self.storage)
        self.item = RateLimitItemPerSecond(limit, window_seconds)

    def at(self, now):
        CLOCK.advance_to(unix_seconds(self.origin, now), self.storage)
        if REDIS is not None:
            REDIS.server.set_clock(self.origin * NS + now)

    def stats(self):
        return self.limiter.get_window_stats(self.item)


class LimitsShim(shimproto.Shim):
    implementation = "limits %s (memory storage)" % (limits.__version__,)
    strategies = list(STRATEGIES)

    def profiles(self):
        profiles = {strategy: dict(REDIS_PROFILE if REDIS else PROFILE) for strategy in STRATEGIES}
        # FW-13: its fixed window starts at the first hit that finds no window open.
        profiles["fixed-window"]["alignment"] = "first-event"
        return profiles

    def create(self, strategy, configuration, now):
        if strategy not in STRATEGIES:
            raise Unsupported("strategy not offered by limits")
        limit = configuration.get("limit")
        window = configuration.get("windowNanoseconds")
        if not (is_int(limit) and is_int(window)):
            raise Refused("limit" if not is_int(limit) else "windowNanoseconds", "notSupported")
        if window % NS != 0:
            raise Unsupported("limits windows are whole seconds (RateLimitItemPerSecond multiples)")
        if strategy == "sliding-window-log" and limit > LOG_LIMIT:
            raise Unsupported("MovingWindowRateLimiter keeps one entry per permit: a limit above %d "
                              "needs more memory than this shim takes" % LOG_LIMIT)
        window_seconds = window // NS
        if UNIX_ORIGIN is not None:
            origin = UNIX_ORIGIN
        elif window_seconds > 0:
            origin = -(-PRESENT // window_seconds) * window_seconds
        else:
            origin = PRESENT
        # RateLimitItem validates nothing (amount 0 or negative, multiples 0 read as 1, negative
        # multiples): whatever it accepts is created, and the suite reports the acceptance.
        return Limiter(strategy, limit, window_seconds, origin, now if is_int(now) else 0)

    def event(self, lim, event, now):
        kind = event.get("kind")
        if kind == "acquire":
            permits = event.get("permits")
            lim.at(now)
            if permits == 0:
                # The library's query: get_window_stats().remaining (a read; MemoryStorage.get drops
                # an expired key as every read does: the fixed window's CORE-10 finding of
                # README.md).
                return allowed(lim.stats().remaining)
            # hit(cost=n) for any n, negative included: limits does not check the cost.
            if lim.limiter.hit(lim.item, cost=permits):
                return allowed(lim.stats().remaining)
            # Refused: the wait is the library's own reset time, get_window_stats().reset_time,
            # what flask-limiter sends as Retry-After, minus what its clock reads now (the float
            # time.time() returns at this instant), exactly, rounded up to a nanosecond: what a
            # caller of the library computes (reset_time - time.time()).
            reset = lim.stats().reset_time
            return refused_for(now, ceil_ns(Fraction(reset) - Fraction(CLOCK.time())))
        if kind == "release":
            return invalid("release", "notSupported")  # limits has no release
        if kind == "reset":
            lim.at(now)
            lim.limiter.clear(lim.item)
            return allowed(lim.stats().remaining)
        raise ValueError("event %r is outside the declared profile" % (kind,))

    def drop(self, lim):
        if REDIS is not None:
            lim.storage.reset()  # deletes the limiter's keys (its prefix's), by the library's own script
            return
        for timer in list(CLOCK.timers):
            if timer.owner() is lim.storage:
                timer.cancel()


def main(argv):
    global UNIX_ORIGIN, REDIS
    args = argv[1:]
    redis = args[:1] == ["--redis"]
    if redis:
        args = args[1:]
    if args[:1] == ["--unix-origin"] and len(args) == 2:
        UNIX_ORIGIN = int(args[1])
    elif args:
        sys.stdout.write('{"type":"error","message":"usage: shim.py [--redis] [--unix-origin SECONDS]"}\n')
        return 2
    shim = LimitsShim()
    if redis:
        import redisclock

        server = redisclock.start_for_shim()
        if server is None:
            return 2
        import redis as redis_py

        # One connection for every limiter (the shim is single-threaded), as an app shares its pool.
        REDIS = types.SimpleNamespace(server=server, limiters=0, pool=redis_py.ConnectionPool.from_url(server.url))
        shim.implementation = "limits %s (Redis storage, redis-server %s)" % (
            limits.__version__, REDIS.server.version)
    return shimproto.serve(shim)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
