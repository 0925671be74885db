#!/usr/bin/env python3
"""Python `redis-ratekit` (Lua scripts on Redis), driven over the conformance protocol.

    Implementations/redis-ratekit/.venv/bin/python Implementations/redis-ratekit/shim.py

Every limiter is the library's `RateLimiter(algorithm, redis_client=..., nameSpace=..., ...)` over
a `redis.Redis` client of a redis-server the shim starts and stops (../common/redisclock.py),
asked with `isAllow(user_id)`:

| Spec strategy            | algorithm                  | arguments                                            |
|--------------------------|----------------------------|------------------------------------------------------|
| `token-bucket`           | `"token bucket"`           | `bucket_capacity=C`, `refill_rate=R·10^9/P` (per s)  |
| `leaky-bucket-meter`     | `"leaky bucket"`           | `bucket_capacity=C`, `leakage_rate=L·10^9/P` (per s) |
| `sliding-window-counter` | `"sliding window counter"` | `rate_limit=N`, `window_size=W / 10^9` (s)           |
| `sliding-window-log`     | `"sliding window log"`     | `rate_limit=N`, `window_size=W / 10^9` (s)           |

See README.md for the mapping and the profile.

The library is used unmodified. Its scripts read the time from the server (`redis.call("TIME")`)
and its keys expire on the server's clock; its Python reads no clock. The only thing replaced is
the server's wall clock, which reads the protocol's instant before each call (ClockedRedis).
`isAllow` answers a bool: the shim finds a refusal's wait, and whether another call would pass,
by asking the library's own `isAllow` of a copy of the limiter's keys (COPY, under a namespace of
its own, deleted after) at later instants or at the same one.
"""

import os
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, ints, invalid, is_int, never, refused_for  # noqa: E402

shimproto.quiet_stderr()

import ratekit  # noqa: E402
import redis  # noqa: E402
import redisclock  # noqa: E402
from ratekit import RateLimiter  # noqa: E402

NS = 1_000_000_000
PRESENT = 1_700_000_000  # a Unix time in 2023: where the server's clock reads in real use
USER = "u"
# The scripts read TIME as a double of seconds (`time[1] + time[2] / 1000000`). From 1.7e9 s to
# 292 years later (below 2^34 s) doubles are at most 2^-19 s (1.9 us) apart: every multiple of
# 10 us reads a double of its own.
UNIT = 10_000
# Initial tokens (or a level) are reached with the library's own isAllow() at creation, one call
# each: at most this many.
PREFILL_LIMIT = 10_000

ALGORITHMS = {
    "token-bucket": "token bucket",
    "leaky-bucket-meter": "leaky bucket",
    "sliding-window-counter": "sliding window counter",
    "sliding-window-log": "sliding window log",
}

PROFILE = {
    "timeUnitNanoseconds": UNIT,
    "largestInstantNanoseconds": INT64_MAX // UNIT * UNIT,
    # One permit per isAllow().
    "largestPermits": 1,
    # TIME is the server's wall clock: it may go back.
    "monotonic": False,
    # No weights, no query, no reset, no reconfigure; the events the Spec answers invalid are
    # answered by the shim's translations (a count or a release the API cannot take).
    "events": ["invalid"],
    "toleranceNanoseconds": 0,
    "validation": True,
    "createdAtFirstEvent": False,
}
# Windows are whole seconds: the scripts pass window_size to EXPIRE, which takes an integer.
# A window limiter reads no clock and writes no key when it is built (RateLimiter() only registers
# a script): its state begins at its first isAllow(), an empty log or empty counts, at that call's
# instant. Declared false, the Spec evaluated an acquire sent before the creation instant at that
# instant, which the library is never told (CORE-10), and the suite reported early retries of the
# distance (sliding-window-log random-seed-1-trace-21 and -33). The buckets stay false: an initial
# state other than a new key's is written at creation (prefill, below), so the state begins there;
# a new key is the Spec's initial state (full, or empty) at any instant, and only an acquire sent
# before the creation instant of a bucket created with its default state would be evaluated at its
# own instant (README.md, "Profile").
WINDOW_PROFILE = dict(PROFILE, configurationUnitNanoseconds=NS, createdAtFirstEvent=True)

SERVER = None
CLIENT = None


class Limiter:
    count = 0

    def __init__(self, strategy, arguments, origin, now):
        Limiter.count += 1
        self.namespace = "L%d" % Limiter.count
        self.strategy, self.arguments, self.origin = strategy, arguments, origin
        self.library = self._limiter(self.namespace)
        self.event_at(now)

    def _limiter(self, namespace):
        return RateLimiter(ALGORITHMS[self.strategy], redis_client=CLIENT, nameSpace=namespace, **self.arguments)

    def at(self, now):
        SERVER.set_clock(self.origin * NS + now)

    def event_at(self, now):
        """The clock at an event's instant, which the limiter's keys are read at from then on."""
        self.now = now
        self.at(now)

    def keys(self, namespace=None):
        return CLIENT.keys((namespace or self.namespace) + ":*")

    def probe(self, now):
        """Whether the library's isAllow() admits at `now` on a copy of this limiter's keys (as
        they are at the limiter's last event); the clock is left at `now`."""
        probe = self.namespace + "p"
        # The copy is read at the limiter's own instant: read at a later one, its keys would be
        # past their expiry and Redis would delete them.
        self.at(self.now)
        with CLIENT.pipeline(transaction=False) as pipe:
            for key in self.keys():
                pipe.copy(key, probe + key.decode()[len(self.namespace):], replace=True)
            pipe.execute()
        self.at(now)
        try:
            return self._limiter(probe).isAllow(USER)
        finally:
            probes = self.keys(probe)
            if probes:
                CLIENT.delete(*probes)

    def admission(self, now):
        """The first instant after `now`, on the unit's grid, at which isAllow() admits (bisection:
        once it admits, it admits at every later instant: tokens only refill, a level only leaks,
        a log's entries and a counter's weight only age), or None when not even the end of the
        timeline does. The clock is left at `now`."""
        top = PROFILE["largestInstantNanoseconds"]
        low = now  # refused here
        if low >= top or not self.probe(top):
            self.at(now)
            return None
        high = top  # admitted here
        while high - low > UNIT:
            middle = low + (high - low) // 2 // UNIT * UNIT
            if middle <= low:
                middle = low + UNIT
            if self.probe(middle):
                high = middle
            else:
                low = middle
        self.at(now)
        return high


def _per_second(permits, period):
    """permits / period ns as a float per second: what the library's rate arguments are."""
    if period == 0:
        raise Unsupported("a period of 0 is an infinite rate, which the library's float argument cannot carry")
    return float(Fraction(permits * NS, period))


class RedisRatekitShim(shimproto.Shim):
    strategies = list(ALGORITHMS)

    def profiles(self):
        return {strategy: dict(WINDOW_PROFILE if "window" in strategy else PROFILE) for strategy in ALGORITHMS}

    def create(self, strategy, configuration, now):
        if strategy not in ALGORITHMS:
            raise Unsupported("not offered by redis-ratekit")
        now = now if is_int(now) else 0
        if strategy in ("sliding-window-counter", "sliding-window-log"):
            limit, window = ints(configuration, ["limit", "windowNanoseconds"])
            if window % NS:
                raise Unsupported("windows are whole seconds (the scripts EXPIRE by window_size)")
            seconds = window // NS
            arguments = {"rate_limit": limit, "window_size": seconds}
            # The counter's windows are numbered floor(time / window) from the Unix epoch: instant
            # 0 is put on a multiple of the window, so that they are the Spec's windows.
            origin = -(-PRESENT // seconds) * seconds if seconds > 0 else PRESENT
            prefill = 0
        else:
            rate_field = "permitsPerPeriod" if strategy == "token-bucket" else "leakPermitsPerPeriod"
            level_field = "initialTokens" if strategy == "token-bucket" else "initialLevel"
            capacity, permits, period = ints(configuration, ["capacity", rate_field, "periodNanoseconds"])
            rate = _per_second(permits, period)
            rate_name = "refill_rate" if strategy == "token-bucket" else "leakage_rate"
            arguments = {"bucket_capacity": capacity, rate_name: rate}
            default = capacity if strategy == "token-bucket" else 0
            initial = configuration.get(level_field, default)
            # A new bucket is full (a token bucket) or empty (a leaky bucket); another initial
            # state is reached with isAllow() at the creation instant: C - I tokens taken, or I
            # permits of water poured in.
            prefill = capacity - initial if strategy == "token-bucket" else initial
            if prefill and not (is_int(initial) and 0 <= initial <= capacity and prefill <= PREFILL_LIMIT):
                raise Unsupported("the library has no %s; the shim reaches it with isAllow() at creation, "
                                  "which needs 0 <= %s <= capacity, at most %d calls"
                                  % (level_field, level_field, PREFILL_LIMIT))
            origin = PRESENT
        try:
            limiter = Limiter(strategy, arguments, origin, now)
        except ValueError as error:
            # "... cannot be zero" / "... less than or equal to zero": the library's checks of its
            # two arguments (both must be positive), named by the argument that failed.
            first, second = list(arguments)
            field = {"bucket_capacity": "capacity", "refill_rate": "permitsPerPeriod",
                     "leakage_rate": "leakPermitsPerPeriod", "rate_limit": "limit",
                     "window_size": "windowNanoseconds"}
            bad = first if arguments[first] <= 0 else second
            if bad in ("refill_rate", "leakage_rate") and permits > 0:
                raise Refused("periodNanoseconds", "mustBePositive") from error
            raise Refused(field[bad], "mustBePositive") from error
        for _ in range(prefill):
            if not limiter.library.isAllow(USER):
                raise Unsupported("the library does not admit the %d calls that reach the initial state" % prefill)
        return limiter

    def event(self, lim, event, now):
        kind = event.get("kind")
        if kind == "acquire":
            if event.get("permits") != 1:
                # One permit per call: isAllow() takes no count.
                return invalid("permits", "notSupported")
            lim.event_at(now)
            if lim.library.isAllow(USER):
                return allowed(1 if lim.probe(now) else 0)
            at = lim.admission(now)
            if at is None:
                return never()
            return refused_for(now, at - now)
        if kind == "release":
            return invalid("release", "notSupported")
        raise ValueError("event %r is outside the declared profile" % (kind,))

    def drop(self, lim):
        keys = lim.keys()
        if keys:
            CLIENT.delete(*keys)


def main(argv):
    def make(server):
        global SERVER, CLIENT
        SERVER, CLIENT = server, redis.Redis.from_url(server.url)
        shim = RedisRatekitShim()
        shim.implementation = "redis-ratekit %s (redis-server %s)" % (ratekit.__version__, server.version)
        return shim

    return redisclock.serve_shim(argv, make)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
