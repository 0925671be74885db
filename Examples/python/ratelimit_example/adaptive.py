"""The adaptive rate (ADAPT-1 .. ADAPT-9) and the adaptive concurrency (ADAPT-10 .. ADAPT-14) of
Spec/AdaptiveLimits.md: machines that learn a limit from the server's responses and answer the
limit in force. Run as the scenarios of Spec/vectors/scenarios (protocol extensions
"adaptive-rate" and "adaptive-concurrency"): validate(cfg), then step(event, now) per event."""

from .bugs import bug
from .config import at_most, non_negative, positive
from .results import INT64_MAX, ceil_div, invalid


def percent(cfg, name):  # ADAPT-2, ADAPT-10: 1 ... 99
    v = positive(cfg, name)
    at_most(name, v, 99)
    return v


def response_class(status):  # ADAPT-1
    if status in (429, 503):
        return "rejection"
    if 100 <= status <= 499:
        return "served"
    if 500 <= status <= 599:
        return "serverError"
    return "none"


def check_feedback(event):
    """ADAPT-1: the first bad field of a response, as an invalid answer, or None."""
    status, latency, in_flight = event.get("status"), event.get("latencyNanoseconds"), event.get("inFlight")
    if status < 0:
        return invalid("status", "mustNotBeNegative")
    if status > 999:
        return invalid("status", "exceedsMaximum", 999)
    if latency < 0:
        return invalid("latencyNanoseconds", "mustNotBeNegative")
    if in_flight < 0:
        return invalid("inFlight", "mustNotBeNegative")
    stated = event.get("stated")
    if stated is not None:
        if stated["permits"] < 0:
            return invalid("stated.permits", "mustNotBeNegative")
        if stated["windowNanoseconds"] < 1:
            return invalid("stated.windowNanoseconds", "mustBePositive")
    return None


PLATEAU_ROUNDS = 8  # ADAPT-4: rounds held at a new plateau, and rounds a probe is served to raise it


class AdaptiveRate:  # ADAPT-2 ... ADAPT-9
    @staticmethod
    def validate(cfg):  # ADAPT-2, in the table's order
        p = positive(cfg, "periodNanoseconds")
        maximum = positive(cfg, "maximumRate")
        initial = positive(cfg, "initialRate")
        at_most("initialRate", initial, maximum)
        minimum = positive(cfg, "minimumRate")
        at_most("minimumRate", minimum, initial)
        burst = positive(cfg, "burst")
        at_most("burst", burst, INT64_MAX // p)
        start = non_negative(cfg, "startIncrease", None)
        step = non_negative(cfg, "increase", None)
        d = percent(cfg, "decreasePercent")
        steep = percent(cfg, "steepDecreasePercent")
        cool = non_negative(cfg, "coolDownNanoseconds", None)
        return (p, maximum, initial, minimum, burst, start, step, d, steep, cool)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.start(t0)

    def start(self, e):  # ADAPT-3
        p, maximum, initial, minimum, burst, _, _, _, _, _ = self.cfg
        self.rate, self.burst, self.ceiling, self.stated = initial, burst, maximum, None
        self.decreased = self.unmeasured = False
        self.cool_until, self.served, self.k, self.round_start, self.measured, self.last = e, 0, 0, e, None, e
        self.forget_plateau()

    def forget_plateau(self):  # ADAPT-3, ADAPT-4, ADAPT-7
        self.plateau, self.hold, self.held, self.probing, self.probed = None, PLATEAU_ROUNDS, 0, False, 0
        self.reach = self.cfg[6]  # g: how far above the plateau the next probe goes

    def answer(self, change):
        return {"kind": "limit", "rate": self.rate, "burst": self.burst, "change": change}

    def adopt(self, stated):  # ADAPT-7
        p, maximum, _, minimum = self.cfg[:4]
        rate = min(INT64_MAX, stated["permits"] * p // stated["windowNanoseconds"])
        if rate == self.stated:
            return False
        self.stated = rate
        self.ceiling = max(minimum, min(maximum, rate))
        self.rate, self.k, self.measured = self.ceiling, 0, None
        self.forget_plateau()
        return True

    def serve(self, e):  # ADAPT-4: whether the rate went up
        p, start, step = self.cfg[0], self.cfg[5], self.cfg[6]
        self.served = min(INT64_MAX, self.served + 1)
        if self.k == 0:
            self.round_start = e
        self.k += 1
        if self.k < self.rate:
            return False
        span = e - self.round_start
        self.measured = INT64_MAX if span == 0 else min(INT64_MAX, self.k * p // span)
        self.k = 0
        if span > min(INT64_MAX, 2 * p):
            return False
        before = self.rate
        up = step if self.decreased else start
        if self.plateau is None:
            self.rate = min(self.ceiling, min(INT64_MAX, self.rate + up))
        elif self.probing:  # a probe holds its rate; served PLATEAU_ROUNDS rounds, the plateau rises
            self.probed += 1
            if self.probed >= PLATEAU_ROUNDS:
                self.plateau, self.reach = self.rate, min(INT64_MAX, 2 * self.reach)
                self.probing, self.probed = False, 0
        elif self.rate < self.plateau:
            self.rate = min(self.ceiling, self.plateau, min(INT64_MAX, self.rate + up))
        else:  # at the plateau: hold it, then probe `reach` above it
            self.held += 1
            if self.held >= self.hold:
                self.rate = min(self.ceiling, min(INT64_MAX, self.plateau + self.reach))
                self.probing, self.probed, self.held = self.rate > self.plateau, 0, 0
        return self.rate > before

    def decrease(self, e):  # ADAPT-5, ADAPT-6: whether the rate or the burst went down
        minimum, d, steep, cool = self.cfg[3], self.cfg[7], self.cfg[8], self.cfg[9]
        if e < self.cool_until and not bug("adaptive-no-cool-down"):
            return False
        before = (self.rate, self.burst)
        if self.probing and self.plateau is not None:  # a probe refused: back to the plateau
            self.rate = min(self.rate, self.plateau)
            self.hold = min(INT64_MAX, 2 * self.hold)
            self.held, self.probing, self.probed, self.reach = 0, False, 0, self.cfg[6]
        else:
            if self.measured is not None:
                refused = min(self.rate, self.measured)
                lowered = refused * (100 - d) // 100
                self.plateau = max(minimum, min(refused - self.cfg[6], refused * (200 - d) // 200))
                self.hold, self.held, self.reach = PLATEAU_ROUNDS, 0, self.cfg[6]
            elif not self.unmeasured:
                lowered = self.rate * (100 - d) // 100
            else:
                lowered = self.rate * (100 - steep) // 100
            self.rate = min(self.rate, max(minimum, lowered))
        if self.served <= self.burst:
            self.burst = max(1, self.served * (100 - steep) // 100)
        self.unmeasured = self.measured is None
        self.decreased = True
        self.cool_until = min(INT64_MAX, e + cool)
        self.served, self.k, self.measured = 0, 0, None
        return self.rate < before[0] or self.burst < before[1]

    def step(self, event, now):  # ADAPT-1
        kind = event.get("kind")
        e = max(now, self.last)
        if kind == "reset":  # ADAPT-8
            self.start(e)
            return self.answer("reset")
        if kind == "failure":  # ADAPT-8
            self.last = e
            return self.answer("unchanged")
        if kind != "response":
            return None
        error = check_feedback(event)
        if error is not None:
            return error
        self.last = e
        adopted = event.get("stated") is not None and self.adopt(event["stated"])
        change = "adopted" if adopted else "unchanged"
        klass = response_class(event["status"])
        if klass == "served" and self.serve(e) and not adopted:
            change = "increased"
        elif klass == "rejection" and self.decrease(e):
            change = "decreased"
        return self.answer(change)


class AdaptiveConcurrency:  # ADAPT-10 ... ADAPT-14
    @staticmethod
    def validate(cfg):  # ADAPT-10, in the table's order
        maximum = positive(cfg, "maximumLimit")
        initial = positive(cfg, "initialLimit")
        at_most("initialLimit", initial, maximum)
        minimum = positive(cfg, "minimumLimit")
        at_most("minimumLimit", minimum, initial)
        alpha = non_negative(cfg, "alpha", None)
        beta = non_negative(cfg, "beta", None)
        d = percent(cfg, "decreasePercent")
        cool = non_negative(cfg, "coolDownNanoseconds", None)
        window = positive(cfg, "baselineWindowNanoseconds")
        return (maximum, initial, minimum, alpha, beta, d, cool, window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.start(t0)

    def start(self, e):  # ADAPT-11
        self.limit = self.cfg[1]
        self.window, self.current, self.previous = e // self.cfg[7], None, None
        self.cool_until = self.changed_at = self.last = e

    def roll(self, e):  # ADAPT-11: the baseline's windows, rolled to e
        window = e // self.cfg[7]
        if window == self.window + 1:
            self.previous, self.current = self.current, None
        elif window > self.window + 1:
            self.previous = self.current = None
        self.window, self.last = window, e

    def serve(self, latency, in_flight, e):  # ADAPT-12
        maximum, _, minimum, alpha, beta = self.cfg[:5]
        self.current = latency if self.current is None else min(self.current, latency)
        if e - latency < self.changed_at and not bug("vegas-every-sample"):
            return
        base = min(v for v in (self.current, self.previous) if v is not None)
        queue = 0 if latency == 0 else ceil_div(self.limit * (latency - base), latency)
        if queue > beta:
            self.limit = max(minimum, self.limit - 1)
        elif queue < alpha and 2 * in_flight >= self.limit:
            self.limit = min(maximum, self.limit + 1)

    def drop(self, e):  # ADAPT-13
        minimum, d, cool = self.cfg[2], self.cfg[5], self.cfg[6]
        if e < self.cool_until:
            return
        self.limit = max(minimum, self.limit * (100 - d) // 100)
        if bug("vegas-limit-in-a-byte"):
            self.limit = max(minimum, self.limit % 256)
        self.cool_until = min(INT64_MAX, e + cool)

    def step(self, event, now):  # ADAPT-1
        kind = event.get("kind")
        e = max(now, self.last)
        before = self.limit
        if kind == "reset":  # ADAPT-13
            self.start(e)
            return {"kind": "limit", "limit": self.limit, "change": "reset"}
        if kind == "failure":
            self.roll(e)
            self.drop(e)
        elif kind == "response":
            error = check_feedback(event)
            if error is not None:
                return error
            self.roll(e)
            klass = response_class(event["status"])
            if klass == "served":
                self.serve(event["latencyNanoseconds"], event["inFlight"], e)
            elif klass == "rejection":
                self.drop(e)
        else:
            return None
        if self.limit != before:
            self.changed_at = e
        change = "decreased" if self.limit < before else "increased" if self.limit > before else "unchanged"
        return {"kind": "limit", "limit": self.limit, "change": change}
