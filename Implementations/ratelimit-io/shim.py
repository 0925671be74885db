#!/usr/bin/env python3
"""Python `ratelimit-io` (Lua scripts on Redis), driven over the conformance protocol.

    Implementations/.venv/bin/python Implementations/ratelimit-io/shim.py

Every limiter is a `RateLimiter(client, limit=Limit(requests, seconds=S), key=..., algorithm=A,
max_wait=0, key_prefix=P)` over a `redis.Redis` client of a redis-server the shim starts and stops
(../common/redisclock.py), asked with `acquire_sync()`:

| Spec strategy        | `algorithm`      | limit                                        |
|----------------------|------------------|----------------------------------------------|
| `fixed-window`       | `FIXED_WINDOW`   | `Limit(limit, seconds=W / 10^9)` (first-event) |
| `sliding-window-log` | `SLIDING_WINDOW` | `Limit(limit, seconds=W / 10^9)`             |
| `gcra`               | `GCRA`           | `Limit(B, seconds=B·T / 10^9)`               |

See README.md for the mapping and the profile.

The library is used unmodified. Its scripts read the time from the server (`redis.call('TIME')`)
and nothing else: the only thing replaced is the server's wall clock, which reads the protocol's
instant before each call (ClockedRedis); the library's own Python reads no clock on the path the
shim takes (`max_wait=0`: it never sleeps).
"""

import os
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX, Refused, Unsupported, allowed, ints, invalid, is_int, refused_for  # noqa: E402

shimproto.quiet_stderr()

import redis  # noqa: E402
import redisclock  # noqa: E402
from ratelimit_io import Algorithm, Limit, RateLimiter, RateLimitExceededError  # noqa: E402
from ratelimit_io import __version__  # noqa: E402

NS = 1_000_000_000
MS = 1_000_000
PRESENT = 1_700_000_000  # a Unix time in 2023: where the server's clock reads in real use
KEY = "conformance"

ALGORITHMS = {
    "fixed-window": Algorithm.FIXED_WINDOW,
    "sliding-window-log": Algorithm.SLIDING_WINDOW,
    "gcra": Algorithm.GCRA,
}

PROFILE = {
    # The scripts read TIME in whole microseconds.
    "timeUnitNanoseconds": 1000,
    # Limit.period_ms(): periods are whole milliseconds.
    "configurationUnitNanoseconds": MS,
    "largestInstantNanoseconds": INT64_MAX // 1000 * 1000,
    # One slot per acquire: acquire_sync() takes no count.
    "largestPermits": 1,
    # TIME is the server's wall clock: it may go back.
    "monotonic": False,
    # No weights, no query, no reset, no reconfigure; the events the Spec answers invalid are
    # answered by the shim's translations (a count or a release the API cannot take).
    "events": ["invalid"],
    "toleranceNanoseconds": 0,
    # Limit() validates: requests must be positive, the period at least 1 ms.
    "validation": True,
    # A RateLimiter reads no clock and stores nothing when it is built: a key's state begins at its
    # first acquire (an empty window or log, a full GCRA burst), at that acquire's instant. Declared
    # false, the Spec evaluated an acquire sent before the creation instant at that instant, which
    # the library is never told (CORE-10), and the suite reported early retries of the distance.
    "createdAtFirstEvent": True,
}

SERVER = None
CLIENT = None


class Limiter:
    count = 0

    def __init__(self, strategy, limit, now):
        Limiter.count += 1
        self.prefix = "L%d" % Limiter.count
        self.strategy = strategy
        self.limit = limit
        self.library = self._limiter(self.prefix)
        SERVER.set_clock(PRESENT * NS + now)

    def _limiter(self, prefix):
        return RateLimiter(CLIENT, limit=self.limit, key=KEY, algorithm=ALGORITHMS[self.strategy], max_wait=0,
                           key_prefix=prefix)

    def at(self, now):
        SERVER.set_clock(PRESENT * NS + now)

    def acquire(self):
        """None when admitted now, else the library's RateLimitExceededError.retry_after (seconds)."""
        try:
            self.library.acquire_sync()
        except RateLimitExceededError as refusal:
            return refusal.retry_after
        return None

    def keys(self):
        return CLIENT.keys(self.prefix + ":*")

    def admits_another(self):
        """Whether one more acquire at this instant would be admitted: the library's own
        acquire_sync() on a copy of this limiter's key (COPY), under a prefix of its own, deleted
        after. The protocol's `remaining` is judged up to largestPermits, 1."""
        probe = self.prefix + "p"
        for key in self.keys():
            CLIENT.copy(key, probe + key.decode()[len(self.prefix):], replace=True)
        try:
            RateLimiter(CLIENT, limit=self.limit, key=KEY, algorithm=ALGORITHMS[self.strategy], max_wait=0,
                        key_prefix=probe).acquire_sync()
            return True
        except RateLimitExceededError:
            return False
        finally:
            probes = CLIENT.keys(probe + ":*")
            if probes:
                CLIENT.delete(*probes)


def _limit(requests, period_ns, requests_field, period_field):
    """Limit(requests, seconds=period), its ValueError read as a refusal of the field it names."""
    if period_ns % MS:
        raise Unsupported("periods are whole milliseconds (Limit.period_ms())")
    try:
        return Limit(requests, seconds=float(Fraction(period_ns, NS)))
    except ValueError as error:
        message = str(error)
        if message.startswith("requests"):
            raise Refused(requests_field, "mustBePositive")
        if "period" in message or message.startswith("seconds"):
            raise Refused(period_field, "mustBePositive")
        raise


class RateLimiterShim(shimproto.Shim):
    strategies = list(ALGORITHMS)

    def profiles(self):
        profiles = {strategy: dict(PROFILE) for strategy in ALGORITHMS}
        # FW-13: a window opens with the first request that finds none open.
        profiles["fixed-window"]["alignment"] = "first-event"
        return profiles

    def create(self, strategy, configuration, now):
        if strategy not in ALGORITHMS:
            raise Unsupported("not offered by ratelimit-io")
        now = now if is_int(now) else 0
        if strategy == "gcra":
            burst, interval = ints(configuration, ["burst", "emissionIntervalNanoseconds"])
            # A period of B·T holding B requests: one every T, a burst of B.
            limit = _limit(burst, burst * interval, "burst", "emissionIntervalNanoseconds")
        else:
            count, window = ints(configuration, ["limit", "windowNanoseconds"])
            limit = _limit(count, window, "limit", "windowNanoseconds")
        return Limiter(strategy, limit, now)

    def event(self, lim, event, now):
        kind = event.get("kind")
        if kind == "acquire":
            if event.get("permits") != 1:
                # One slot per call: the API takes no count.
                return invalid("permits", "notSupported")
            lim.at(now)
            retry_after = lim.acquire()
            if retry_after is None:
                return allowed(1 if lim.admits_another() else 0)
            # The library's own wait: whole milliseconds (the script's ceil of microseconds / 1000).
            return refused_for(now, round(Fraction(retry_after) * 1000) * MS)
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
        shim = RateLimiterShim()
        shim.implementation = "ratelimit-io %s (redis-server %s)" % (__version__, server.version)
        return shim

    return redisclock.serve_shim(argv, make)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
