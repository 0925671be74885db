"""The token bucket (Spec/TokenBucket.md, TB-*) and the interval token bucket, refilled in whole
intervals (Spec/IntervalTokenBucket.md, TBI-*).
Each strategy class has acquire(n, now) for n >= 0, reset(now), reconfigure(cfg, now) and
validate(cfg), its configuration's check (config.py).
"""

import math

from .bugs import bug
from .config import validate_interval_bucket, validate_token_bucket
from .results import INT64_MAX, allowed, ceil_div, never, refuse_at


class TokenBucket:  # TB
    validate = staticmethod(validate_token_bucket)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        c, r, p, i = cfg
        self.k, self.f, self.last = i, 0, t0
        self.acquires = 0
        if bug("float-accumulation"):
            self.tokens = float(i)

    def refilled(self, now):
        """TB-3: (e, k, f) refilled to the evaluation instant, not stored."""
        c, r, p, _ = self.cfg
        last = self.last
        if bug("backward-time-regrant") and now < last:
            return now, self.k, self.f  # Go: last := now, elapsed 0
        if bug("last-updated-before-refill"):
            self.last = last = max(now, last)
        e = max(now, last)
        k, f = self.k, self.f
        if e == last or k == c:
            return e, k, f
        u = r * (e - last) + f
        if u < p:
            return e, k, u
        q, rem = divmod(u, p)
        if q >= c - k:
            return e, c, 0
        return e, k + q, rem

    def store(self, e, k, f):
        if bug("tokens-as-double-above-2-53") and self.cfg[0] > 1 << 53:
            k = int(float(k))
        self.k, self.f, self.last = k, f, e

    def acquire(self, n, now):
        c, r, p, _ = self.cfg
        if n > c:
            return never()  # TB-7
        if bug("float-accumulation"):
            return self._acquire_float(n, now)
        e, k, f = self.refilled(now)
        if n == 0:  # TB-8
            if bug("zero-permits-consumes"):
                self.store(e, k, f)
            return allowed(k)
        self.acquires += 1
        if bug("fraction-lost-every-500") and self.acquires % 500 == 0:
            f = 0
        if bug("bulk-acquire-chunked") and n > 64 and k >= 64:
            self.store(e, max(0, k - n), f)
            return allowed(max(0, k - n))
        if k >= n:  # TB-4
            self.store(e, k - n, f)
            return allowed(k - n)
        if bug("refill-on-rejection"):
            self.store(e, k, f)
        m = (n - k) * p - f  # TB-6
        w = m // r if bug("retry-after-rounded-down") else ceil_div(m, r)
        a = e + w
        if bug("retry-after-from-evaluation-instant"):
            return refuse_at(a - e + now, now)
        if bug("retry-after-in-microseconds") and a <= INT64_MAX:
            return {"kind": "rejected", "retryAfterNanoseconds": (a - now) // 1000 * 1000}
        return refuse_at(a, now)

    def _acquire_float(self, n, now):
        c, r, p, _ = self.cfg
        e = max(now, self.last)
        rate = r / p  # tokens per nanosecond
        tokens = min(float(c), self.tokens + (e - self.last) * rate)
        if n == 0:
            return allowed(int(tokens))
        if tokens >= n:
            self.tokens, self.last = tokens - n, e
            return allowed(int(self.tokens))
        w = math.ceil((n - tokens) / rate)
        return refuse_at(e + w, now)

    def reset(self, now):  # TB-9
        c, r, p, i = self.cfg
        e = now if bug("reset-at-now") else max(now, self.last)
        self.store(e, i, 0)
        if bug("float-accumulation"):
            self.tokens = float(i)
        return allowed(i)

    def reconfigure(self, cfg, now):  # TB-10
        c2, r2, p2, _ = cfg
        if bug("float-accumulation"):
            e = max(now, self.last)
            c, r, p, _ = self.cfg
            tokens = min(float(c), self.tokens + (e - self.last) * (r / p))
            self.cfg = cfg
            self.tokens, self.last = min(tokens, float(c2)), e
            return allowed(int(self.tokens))
        e, k, f = self.refilled(now)
        p = self.cfg[2]
        self.cfg = cfg
        if bug("reconfigure-refills") or k >= c2:
            self.store(e, c2, 0)
        else:
            self.store(e, k, f * p2 // p)
        return allowed(self.k)


class IntervalTokenBucket:  # TBI
    validate = staticmethod(validate_interval_bucket)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.t0 = t0
        self.k, self.last = cfg[3], t0

    def index(self, t):
        i = self.cfg[2]
        if bug("interval-aligned-to-creation"):
            return (t - self.t0) // i
        return t // i

    def boundary(self, j):
        i = self.cfg[2]
        if bug("interval-aligned-to-creation"):
            return self.t0 + j * i
        return j * i

    def refilled(self, now):  # TBI-3
        c, kk, i, _ = self.cfg
        e = max(now, self.last)
        b = self.index(e) - self.index(self.last)
        if bug("interval-refill-capped"):
            b = min(b, 100)
        return e, min(c, self.k + b * kk)

    def acquire(self, n, now):
        c, kk, i, _ = self.cfg
        if n > c:
            return never()  # TBI-7
        e, k = self.refilled(now)
        if n == 0:
            return allowed(k)
        if k >= n:  # TBI-4
            self.k, self.last = k - n, e
            return allowed(k - n)
        m = ceil_div(n - k, kk)  # TBI-6
        return refuse_at(self.boundary(self.index(e) + m), now)

    def reset(self, now):  # TBI-9
        e = max(now, self.last)
        self.k, self.last = self.cfg[3], e
        return allowed(self.k)

    def reconfigure(self, cfg, now):  # TBI-10
        e, k = self.refilled(now)
        self.cfg = cfg
        self.k, self.last = min(k, cfg[0]), e
        return allowed(self.k)
