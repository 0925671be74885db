"""Composite limits (Spec/CompositeLimit.md, COMP-1 .. COMP-8): several strategies answering as one,
a request admitted only when every limit admits it. Run as the scenarios of Spec/vectors/scenarios
(protocol extension "composite"): validate(cfg), then step(event, now) per event."""

import copy

from .bugs import bug
from .concurrency import ConcurrencyLimiter
from .config import ConfigError
from .leaky_buckets import LeakyBucketQueue
from .results import allowed, invalid, never
from .strategies import admitted, probe, read_limit


class Composite:  # COMP
    @staticmethod
    def validate(cfg):  # COMP-2: no limit; then limit by limit, its own refusal or a queue
        items = cfg.get("limits")
        if not isinstance(items, list):
            raise ConfigError("limits", "notSupported")
        if not items:
            raise ConfigError("limits", "mustBePositive")
        limits = []
        for i, item in enumerate(items):
            cls, c = read_limit(item, "limits[%d]" % i)
            if cls is LeakyBucketQueue:
                raise ConfigError("limits[%d]" % i, "notSupported")
            limits.append((cls, c))
        return limits

    def __init__(self, cfg, t0):
        self.limits = [cls(c, t0) for cls, c in cfg]

    def remaining(self, now):
        return min(probe(limit, 0, now)["remaining"] for limit in self.limits)

    def acquire(self, n, now):  # COMP-4, COMP-5, COMP-6
        copies = [copy.deepcopy(limit) for limit in self.limits]
        answers = [c.acquire(n, now) for c in copies]
        if bug("composite-records-refused"):
            self.limits = copies
        if all(admitted(a) for a in answers):
            self.limits = copies
            if bug("composite-first-remaining"):
                return allowed(answers[0]["remaining"])
            return allowed(min(a["remaining"] for a in answers))
        for a in answers:
            if a["kind"] == "invalid":
                return a
        if any(a["kind"] == "neverAllowed" for a in answers):
            return never()
        shortfalls = [a["shortfall"] for a in answers if a["kind"] == "rejectedUntilRelease"]
        if shortfalls:
            return {"kind": "rejectedUntilRelease", "shortfall": max(shortfalls)}
        return {"kind": "rejected",
                "retryAfterNanoseconds": max(a["retryAfterNanoseconds"] for a in answers if a["kind"] == "rejected")}

    def release(self, n, now):  # COMP-7
        holders = [i for i, limit in enumerate(self.limits) if isinstance(limit, ConcurrencyLimiter)]
        if not holders:
            return invalid("release", "notSupported")
        if n < 0:
            return invalid("permits", "mustNotBeNegative")
        copies = list(self.limits)
        for i in holders:
            copies[i] = copy.deepcopy(self.limits[i])
            answer = copies[i].release(n, now)
            if answer["kind"] == "invalid":
                return answer
        self.limits = copies
        return allowed(self.remaining(now))

    def reset(self, now):  # COMP-7
        for limit in self.limits:
            limit.reset(now)
        return allowed(self.remaining(now))

    def reconfigure(self, cfg, now):  # COMP-8
        if len(cfg) != len(self.limits):
            return invalid("limits", "notSupported")
        for i, ((cls, _), limit) in enumerate(zip(cfg, self.limits)):
            if not isinstance(limit, cls):
                return invalid("limits[%d]" % i, "notSupported")
        for (_, c), limit in zip(cfg, self.limits):
            limit.reconfigure(c, now)
        return allowed(self.remaining(now))

    def step(self, event, now):
        kind = event.get("kind")
        if kind == "reconfigure":
            try:
                cfg = Composite.validate(event.get("configuration") or {})
            except ConfigError as err:
                return invalid(err.field, err.problem, err.maximum)  # CORE-13: nothing changes
            return self.reconfigure(cfg, now)
        n = event.get("permits")
        if kind == "acquire":
            return invalid("permits", "mustNotBeNegative") if n < 0 else self.acquire(n, now)
        if kind == "release":
            return self.release(n, now)
        if kind == "reset":
            return self.reset(now)
        return None
