"""GCRA (Spec/GCRA.md, GCRA-*) and the two strategies on its schedule (a theoretical arrival
time): pay later, which admits any size and pays it off afterwards (Spec/PayLater.md, PL-*), and
warm-up, pay later whose permits cost more when cold (Spec/WarmUp.md, WU-*).
Each strategy class has acquire(n, now) for n >= 0, reset(now), reconfigure(cfg, now) and
validate(cfg), its configuration's check (config.py).
"""

from .bugs import bug
from .config import validate_gcra, validate_pay_later, validate_warm_up
from .results import INT64_MAX, allowed, ceil_div, never, refuse_at, wrap


class GCRA:  # GCRA
    validate = staticmethod(validate_gcra)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.tat, self.last = t0, t0  # GCRA-2
        self.acquires = 0

    def tau(self):
        return self.cfg[0] * self.cfg[1]

    def evaluation(self, now):  # GCRA-3
        if bug("gcra-one-word"):
            return max(now, self.tat - self.tau())
        return max(now, self.last)

    def remaining(self, e):  # GCRA-5
        left = (self.tau() - max(self.tat - e, 0)) // self.cfg[1]
        return left % 65536 if bug("gcra-remaining-16-bit") else left

    def acquire(self, n, now):
        b, t = self.cfg
        if n > b:
            return never()  # GCRA-7
        e = self.evaluation(now)
        if n == 0:
            return allowed(self.remaining(e))  # GCRA-8
        tau = self.tau()
        s = max(self.tat, e)
        c = n * t
        if bug("gcra-boundary-exclusive"):
            ok = (s - e) + c < tau
        elif bug("gcra-sum-wraps"):
            ok = wrap((s - e) + c, 64) <= tau
        else:
            ok = (s - e) + c <= tau
        if ok:  # GCRA-4
            self.tat, self.last = s + c, e
            self.acquires += 1
            if bug("gcra-renormalise-every-1000") and self.acquires % 1000 == 0:
                self.tat = self.last + (self.tat - self.last) // 1000 * 1000
            return allowed(self.remaining(e))
        return refuse_at(self.tat - (tau - c), now)  # GCRA-6

    def reset(self, now):  # GCRA-9
        e = now if bug("gcra-reset-at-now") else self.evaluation(now)
        self.tat, self.last = e, e
        return allowed(self.remaining(e))

    def reconfigure(self, cfg, now):  # GCRA-10
        tau = self.tau()
        t = self.cfg[1]
        e = self.evaluation(now)
        a = tau - max(self.tat - e, 0)
        b2, t2 = cfg
        tau2 = b2 * t2
        a2 = min(a * t2 // t, tau2)
        self.cfg = cfg
        self.tat, self.last = e + (tau2 - a2), e
        return allowed(self.remaining(e))


class PayLater:  # PL
    validate = staticmethod(validate_pay_later)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        b, t, i = cfg
        self.tat, self.last = t0 + (b - i) * t, t0  # PL-2

    def tau(self):
        return self.cfg[0] * self.cfg[1]

    def in_debt(self, e):  # PL-3: less than one whole permit available
        return self.tat - e > self.tau() - self.cfg[1]

    def remaining(self, e):  # PL-5
        if bug("pay-later-remaining-as-gcra"):
            return max(0, (self.tau() - max(self.tat - e, 0)) // self.cfg[1])
        return 0 if self.in_debt(e) else INT64_MAX

    def acquire(self, n, now):
        b, t, _ = self.cfg
        e = max(now, self.last)  # PL-3
        if bug("pay-later-charges-first") and n > 0:
            if n > b:
                return never()
            if max(self.tat, e) - e + n * t > self.tau():
                return refuse_at(self.tat - (self.tau() - n * t), now)
        if self.in_debt(e):
            if n == 0:
                return allowed(0)  # PL-8
            return refuse_at(self.tat - (self.tau() - t), now)  # PL-6: paid at tat - (tau - T)
        if n == 0:
            return allowed(self.remaining(e))  # PL-8
        # PL-4: any size; a debt paid past the end of the timeline saturates (PL-2)
        self.tat = min(max(self.tat, e) + n * t, INT64_MAX + 1 + self.tau())
        if bug("pay-later-debt-32-bit"):
            intervals = (self.tat - e - self.tau()) // t  # whole intervals of debt past the tolerance
            if intervals > 0:
                self.tat -= (intervals - wrap(intervals, 32)) * t
        self.last = e
        return allowed(self.remaining(e))

    def reset(self, now):  # PL-9
        b, t, i = self.cfg
        e = max(now, self.last)
        self.tat, self.last = e + (b - i) * t, e
        return allowed(self.remaining(e))

    def reconfigure(self, cfg, now):  # PL-10
        e = max(now, self.last)
        tau, t = self.tau(), self.cfg[1]
        b2, t2, _ = cfg
        tau2 = b2 * t2
        p = max(self.tat - e, 0)
        if p <= tau or bug("pay-later-debt-as-tokens"):
            a2 = min((tau - p) * t2 // t, tau2)  # tokens kept, rounded down, capped
            tat = min(e + tau2 - a2, INT64_MAX + 1 + tau2)
        else:
            tat = (self.tat - tau) + tau2  # the instant the debt is paid is kept
        self.cfg = cfg
        self.tat, self.last = tat, e
        return allowed(self.remaining(e))


class WarmUp:  # WU: pay later whose permits cost more when cold
    validate = staticmethod(validate_warm_up)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.tat, self.cold, self.last = t0, self.initial_coldness(), t0  # WU-2: rested and cold

    def initial_coldness(self):
        return 0 if bug("warm-up-starts-warm") else self.cfg[2]

    def tau(self):
        return self.cfg[0] * self.cfg[1]

    def in_debt(self, e):  # WU-3 (PL-3)
        return self.tat - e > self.tau() - self.cfg[1]

    def remaining(self, e):  # WU-5 (PL-5)
        return 0 if self.in_debt(e) else INT64_MAX

    def coldness(self, e):  # WU-3: one ns per idle ns past tat, up to P
        p = self.cfg[2]
        if bug("warm-up-zero-period-unlimited") and p == 0 and e > self.tat:
            return None  # Guava: 0 / 0.0 is NaN, and so is every later cost
        return min(p, self.cold + max(0, e - self.tat))

    def ramp(self, sigma, spent):  # WU-4: the ramp's area over the coldness spent
        p = self.cfg[2]
        if p == 0:
            return 0
        u0, u1 = max(0, 2 * sigma - p), max(0, 2 * (sigma - spent) - p)
        if bug("warm-up-ramp-rounded-down"):
            return (u0 * u0 - u1 * u1) // (2 * p)
        return ceil_div(u0 * u0 - u1 * u1, 2 * p)

    def acquire(self, n, now):
        b, t, p = self.cfg
        e = max(now, self.last)
        if self.in_debt(e):
            if n == 0:
                return allowed(0)  # WU-8
            return refuse_at(self.tat - (self.tau() - t), now)  # WU-6
        if n == 0:
            return allowed(INT64_MAX)  # WU-5, WU-8
        sigma = self.coldness(e)
        if sigma is None:  # the injected bug: no cost at all
            self.tat, self.cold, self.last = max(self.tat, e), 0, e
            return allowed(self.remaining(e))
        spent = min(n * t, sigma)
        if bug("warm-up-coldness-truncated"):
            sigma = sigma // 1000 * 1000
            spent = min(n * t, sigma)
        cost = n * t + self.ramp(sigma, spent)  # WU-4
        self.tat = min(max(self.tat, e) + cost, INT64_MAX + 1 + self.tau())
        self.cold, self.last = sigma - spent, e
        return allowed(self.remaining(e))

    def reset(self, now):  # WU-9
        e = max(now, self.last)
        self.tat, self.cold, self.last = e, self.initial_coldness(), e
        return allowed(INT64_MAX)

    def reconfigure(self, cfg, now):  # WU-10: tokens or debt as PL-10, coldness kept and capped
        e = max(now, self.last)
        b, t, p = self.cfg
        b2, t2, p2 = cfg
        tau, tau2 = b * t, b2 * t2
        sigma = self.coldness(e)
        sigma = 0 if sigma is None else sigma
        pending = max(self.tat - e, 0)
        if pending <= tau:
            a2 = min((tau - pending) * t2 // t, tau2)
            tat = e + tau2 - a2
        else:
            tat = (self.tat - tau) + tau2
        if bug("warm-up-coldness-scaled"):
            cold = sigma * p2 // p if p > 0 else 0
        else:
            cold = min(sigma, p2)
        self.cfg = cfg
        self.tat, self.cold, self.last = tat, cold, e
        return allowed(self.remaining(e))
