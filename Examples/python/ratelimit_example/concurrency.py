"""The concurrency limiter (Spec/ConcurrencyLimiter.md, CL-*): permits held until released, so
besides acquire(n, now), reset(now), reconfigure(cfg, now) and validate(cfg) it has
release(n, now) (CL-8).
"""

from .bugs import bug
from .config import validate_concurrency
from .results import allowed, crash, invalid, never


class ConcurrencyLimiter:  # CL
    validate = staticmethod(validate_concurrency)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.h = 0
        self.events = 0

    def count_event(self):
        self.events += 1
        if bug("concurrency-crash-at-150th-event") and self.events == 150:
            crash()

    def remaining(self):  # CL-5
        return max(0, self.cfg[0] - self.h)

    def acquire(self, n, now):
        lim = self.cfg[0]
        if n > lim:
            return never()  # CL-7
        self.count_event()
        if n == 0:
            return allowed(self.remaining())
        if self.h + n <= lim:  # CL-4
            self.h += n
            return allowed(self.remaining())
        return {"kind": "rejectedUntilRelease", "shortfall": self.h + n - lim}  # CL-6

    def release(self, n, now):  # CL-8
        self.count_event()
        if n < 0:
            return invalid("permits", "mustNotBeNegative")
        if n > self.h and not bug("release-without-acquire"):
            return invalid("permits", "exceedsMaximum", self.h)
        self.h -= min(n, 64) if bug("concurrency-release-chunked") else n
        return allowed(self.remaining())

    def reset(self, now):  # CL-9
        self.h = 0
        return allowed(self.remaining())

    def reconfigure(self, cfg, now):  # CL-10
        self.cfg = cfg
        return allowed(self.remaining())
