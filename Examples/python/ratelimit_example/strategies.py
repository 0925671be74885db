"""Every strategy by its protocol name (KINDS), one event applied to a limiter (CORE-1, CORE-4 ..
CORE-13), and what the machines on top of the strategies (composite limits, the wait queue) ask of
one: its largest acquire (X-7), an answer that changes nothing (probe), whether it admitted."""

import copy

from .bugs import bug
from .concurrency import ConcurrencyLimiter
from .config import ConfigError, is_int
from .gcra import GCRA, PayLater, WarmUp
from .leaky_buckets import LeakyBucketMeter, LeakyBucketQueue
from .results import INT64_MAX, allowed, invalid
from .token_buckets import IntervalTokenBucket, TokenBucket
from .windows import FixedWindow, SlidingWindowCounter, SlidingWindowLog, SlidingWindowSegments


KINDS = {
    "token-bucket": TokenBucket,
    "token-bucket-interval": IntervalTokenBucket,
    "gcra": GCRA,
    "pay-later": PayLater,
    "warm-up": WarmUp,
    "fixed-window": FixedWindow,
    "sliding-window-log": SlidingWindowLog,
    "sliding-window-counter": SlidingWindowCounter,
    "sliding-window-segments": SlidingWindowSegments,
    "leaky-bucket-meter": LeakyBucketMeter,
    "leaky-bucket-queue": LeakyBucketQueue,
    "concurrency": ConcurrencyLimiter,
}


def apply_event(limiter, event, now):
    """CORE-4 .. CORE-13: one event at one instant; returns the result object."""
    if not is_int(now) or now < 0:
        return invalid("now", "mustNotBeNegative")  # CORE-1
    kind = event.get("kind")
    if kind == "acquire":
        n = event.get("permits")
        if not is_int(n):
            return invalid("permits", "notSupported")
        if n < 0 and bug("negative-permits-add-tokens") and isinstance(limiter, TokenBucket):
            limiter.k = min(limiter.cfg[0], limiter.k - n)
            return allowed(limiter.k)
        if n < 0:
            return invalid("permits", "mustNotBeNegative")  # CORE-9
        return limiter.acquire(n, now)
    if kind == "release":
        if not isinstance(limiter, ConcurrencyLimiter):
            return invalid("release", "notSupported")  # CORE-11
        n = event.get("permits")
        if not is_int(n):
            return invalid("permits", "notSupported")
        return limiter.release(n, now)
    if kind == "reset":
        return limiter.reset(now)  # CORE-12
    if kind == "reconfigure":
        try:
            cfg = limiter.validate(event.get("configuration") or {})
        except ConfigError as err:
            return invalid(err.field, err.problem, err.maximum)
        return limiter.reconfigure(cfg, now)  # CORE-13
    return None


def maximum_permits(limiter):
    """X-7: the largest acquire the strategy ever admits."""
    if isinstance(limiter, LeakyBucketQueue):
        return limiter.cfg[0] + 1
    if isinstance(limiter, (PayLater, WarmUp)):
        return INT64_MAX  # PL-7, WU-7: any size
    return limiter.cfg[0]


def probe(limiter, n, now):
    """The answer acquire(n) would get at now, changing nothing."""
    return copy.deepcopy(limiter).acquire(n, now)


def admitted(result):
    return result["kind"] in ("allowed", "delayed")


def read_limit(item, field):
    """A limit of a composite or a wait queue: its class and validated configuration."""
    if not isinstance(item, dict):
        raise ConfigError(field, "notSupported")
    cls = KINDS.get(item.get("strategy"))
    if cls is None:
        raise ConfigError(field, "notSupported")
    return cls, cls.validate(item.get("configuration") or {})
