"""The leaky bucket as a meter, which refuses what would overflow (Spec/LeakyBucketMeter.md,
LBM-*), and as a queue, which delays what fits in the queue (Spec/LeakyBucketQueue.md, LBQ-*).
Each strategy class has acquire(n, now) for n >= 0, reset(now), reconfigure(cfg, now) and
validate(cfg), its configuration's check (config.py).
"""

from .bugs import bug
from .config import validate_meter, validate_queue
from .results import INT64_MAX, allowed, ceil_div, crash, delayed, never, refuse_at


class LeakyBucketMeter:  # LBM
    validate = staticmethod(validate_meter)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.level, self.last = cfg[3] * cfg[2], t0

    def leaked(self, now):  # LBM-3
        r = self.cfg[1]
        e = max(now, self.last)
        return e, max(0, self.level - r * (e - self.last))

    def room(self, level):  # LBM-5
        c, r, p, _ = self.cfg
        return (c * p - level) // p

    def acquire(self, n, now):
        c, r, p, _ = self.cfg
        if n > c:
            return never()  # LBM-7
        e, level = self.leaked(now)
        if n == 0:
            return allowed(self.room(level))
        if level + n * p <= c * p:  # LBM-4
            self.level, self.last = level + n * p, e
            if bug("meter-level-as-double"):
                self.level = int(float(self.level))
            return allowed(self.room(self.level))
        excess = level + n * p - c * p  # LBM-6
        w = excess // r if bug("retry-after-rounded-down") else ceil_div(excess, r)
        return refuse_at(e + w, now)

    def reset(self, now):  # LBM-9
        c, r, p, lvl = self.cfg
        self.level, self.last = lvl * p, max(now, self.last)
        return allowed(self.room(self.level))

    def reconfigure(self, cfg, now):  # LBM-10
        if bug("meter-huge-reconfigure-crash") and cfg[0] > 1 << 40:
            crash()
        e, level = self.leaked(now)
        c, _, p, _ = self.cfg
        c2, _, p2, _ = cfg
        if bug("meter-keeps-water"):
            level2 = min(level * p2 // p, c2 * p2)
        else:
            rho = c * p - level
            rho2 = min(rho * p2 // p, c2 * p2)
            level2 = c2 * p2 - rho2
        self.cfg = cfg
        self.level, self.last = level2, e
        return allowed(self.room(level2))


class LeakyBucketQueue:  # LBQ
    validate = staticmethod(validate_queue)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.start, self.last = t0, t0

    def tau(self):
        q, t = self.cfg
        if bug("queue-excludes-current"):
            return q * t
        if bug("queue-capacity-in-a-byte"):
            return (q % 256 + 1) * t
        return (q + 1) * t

    def remaining(self, e):  # LBQ-5
        if self.start > INT64_MAX:
            return 0
        tau = self.tau()
        p = max(self.start - e, 0)
        if p >= tau:
            return 0
        return (tau - p) // self.cfg[1]

    def acquire(self, n, now):
        q, t = self.cfg
        if n > q + 1:
            return never()  # LBQ-7
        e = max(now, self.last)  # LBQ-3
        if n == 0:
            return allowed(self.remaining(e))
        if self.start > INT64_MAX:
            return never()
        tau = self.tau()
        s = max(self.start, e)  # LBQ-4
        c = n * t
        p = max(self.start - e, 0)
        if p + c <= tau:
            self.start, self.last = s + c, e
            if bug("queue-start-saturates-early"):
                self.start = min(self.start, 1 << 62)
            rem = self.remaining(e)
            if s == now or bug("queue-no-spacing"):
                return allowed(rem)
            return delayed(s - now, rem)
        return refuse_at(self.start - (tau - c), now)  # LBQ-6

    def reset(self, now):  # LBQ-9
        e = max(now, self.last)
        self.start, self.last = e, e
        return allowed(self.remaining(e))

    def reconfigure(self, cfg, now):  # LBQ-10
        e = max(now, self.last)
        self.cfg = cfg
        self.last = e
        return allowed(self.remaining(e))
