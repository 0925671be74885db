"""The wait queue (Spec/WaitQueue.md, WQ-1 .. WQ-14): requests a strategy refuses wait, by priority
and then arrival, and are served when it admits them, time out or are cancelled. Run as the
scenarios of Spec/vectors/scenarios (protocol extension "wait-queue"): validate(cfg), then
step(event, now) per event."""

import copy

from .bugs import bug
from .config import ConfigError, is_int
from .results import INT64_MAX
from .strategies import admitted, apply_event, maximum_permits, probe, read_limit


PRIORITIES = ["low", "normal", "high", "critical"]


def rejected(reason, **members):
    outcome = {"kind": "rejected", "reason": reason}
    outcome.update(members)
    return outcome


def outcome_of(answer):
    """WQ-2: a strategy's answer as the outcome of a request that may not wait."""
    kind = answer["kind"]
    if kind in ("allowed", "delayed"):
        return {"kind": "granted", "result": answer}
    if kind == "rejected":
        return rejected("limited", retryAfterNanoseconds=answer["retryAfterNanoseconds"])
    if kind == "rejectedUntilRelease":
        return rejected("untilRelease", shortfall=answer["shortfall"])
    if kind == "neverAllowed":
        return rejected("neverAllowed")
    members = {k: v for k, v in answer.items() if k != "kind"}
    return rejected("invalid", **members)


class WaitQueue:  # WQ
    @staticmethod
    def validate(cfg):  # WQ-1: the strategy first, then the queue limit
        cls, c = read_limit(cfg, "configuration")
        limit = cfg.get("queueLimit")
        if not is_int(limit) or limit < 0:
            raise ConfigError("queueLimit", "mustNotBeNegative")
        return cls, c, limit

    def __init__(self, cfg, t0):
        cls, c, self.queue_limit = cfg
        self.limiter = cls(c, t0)
        self.waiters = []  # dicts: ticket, permits, priority, deadline, arrival
        self.arrivals = 0
        self.served_up_to = t0

    def ordered(self):  # WQ-3: priority, then arrival (its instant, then the order of requests)
        if bug("queue-newest-first"):
            return sorted(self.waiters, key=lambda w: (-w["priority"], -w["arrival"]))
        if bug("queue-edf-within-priority"):
            return sorted(self.waiters, key=lambda w: (
                -w["priority"], INT64_MAX if w["deadline"] is None else w["deadline"], w["since"], w["arrival"]))
        return sorted(self.waiters, key=lambda w: (-w["priority"], w["since"], w["arrival"]))

    def expire(self, now, inclusive, out):
        due = [w for w in self.waiters
               if w["deadline"] is not None and (w["deadline"] < now or (inclusive and w["deadline"] == now))]
        for w in sorted(due, key=lambda w: (w["deadline"], w["arrival"])):  # WQ-14
            self.waiters.remove(w)
            out.append({"ticket": w["ticket"], "outcome": {"kind": "timedOut"}, "at": now})
        return bool(due)

    def serve(self, now, out):  # WQ-5
        self.served_up_to = max(self.served_up_to, now)
        self.expire(now, False, out)
        while True:
            while self.waiters:
                head = self.ordered()[0]
                answer = probe(self.limiter, head["permits"], now)
                if answer["kind"] in ("rejected", "rejectedUntilRelease"):
                    break
                if admitted(answer):
                    self.limiter.acquire(head["permits"], now)
                self.waiters.remove(head)
                out.append({"ticket": head["ticket"], "outcome": outcome_of(answer), "at": now})
            if not self.expire(now, True, out):
                return

    def next_wake_up(self, now):  # WQ-7
        if not self.waiters:
            return None
        candidates = [w["deadline"] for w in self.waiters if w["deadline"] is not None]
        answer = probe(self.limiter, self.ordered()[0]["permits"], now)
        if answer["kind"] == "rejected":
            candidates.append(now + answer["retryAfterNanoseconds"])
        elif answer["kind"] != "rejectedUntilRelease":
            candidates.append(now)
        return min(candidates) if candidates else None

    def catch_up(self, now, out):  # WQ-7: each wake-up due before now, at its own instant
        while self.served_up_to < now:
            wake = self.next_wake_up(self.served_up_to)
            if wake is None or wake >= now:
                return
            before = (self.served_up_to, len(self.waiters))
            self.serve(max(wake, self.served_up_to), out)
            if (self.served_up_to, len(self.waiters)) == before:
                return

    def newcomer(self, n, priority, now, since=None):  # WQ-4 steps 1-4
        if n < 0:
            return rejected("invalid", field="permits", problem="mustNotBeNegative")
        if n > maximum_permits(self.limiter):
            return rejected("neverAllowed")
        if n == 0:
            return {"kind": "granted", "result": probe(self.limiter, 0, now)}
        if priority == 3:
            answer = self.limiter.acquire(n, now)
            return {"kind": "granted", "result": answer} if admitted(answer) else {"kind": "bypassed"}
        since = now if since is None else since
        if any(w["priority"] > priority or (w["priority"] == priority and w["since"] <= since)
               for w in self.waiters):  # WQ-3: a waiter that comes before it
            return rejected("waitersAhead")
        return outcome_of(self.limiter.acquire(n, now))

    @staticmethod
    def may_wait(outcome):
        return outcome["kind"] == "rejected" and outcome["reason"] in ("limited", "untilRelease", "waitersAhead")

    def request(self, n, priority, now, out, ticket=None, deadline=None, since=None):
        self.catch_up(now, out)
        self.serve(now, out)
        since = now if since is None else min(since, now)  # WQ-3: an arrival after its own is its own
        outcome = self.newcomer(n, priority, now, since)
        if ticket is None:  # tryAcquire: answered at once
            if outcome["kind"] == "granted":
                self.serve(now, out)
            return outcome
        if not self.may_wait(outcome):
            out.append({"ticket": ticket, "outcome": outcome, "at": now})
            if outcome["kind"] == "granted":
                self.serve(now, out)
        elif deadline is not None and deadline <= now:  # WQ-4 step 5
            out.append({"ticket": ticket, "outcome": {"kind": "timedOut"}, "at": now})
        elif n > self.queue_limit - sum(w["permits"] for w in self.waiters) or (
                bug("queue-holds-at-most-16") and len(self.waiters) >= 16):
            out.append({"ticket": ticket, "outcome": rejected("queueFull"), "at": now})
        else:
            self.arrivals += 1
            self.waiters.append({"ticket": ticket, "permits": n, "priority": priority,
                                 "deadline": deadline, "arrival": self.arrivals, "since": since})
        return None

    def step(self, event, now):
        kind = event.get("kind")
        out = []
        answer = {}
        if kind in ("acquire", "tryAcquire", "availability"):
            priority = PRIORITIES.index(event.get("priority"))
            n = event.get("permits")
            if kind == "availability":  # WQ-4: what tryAcquire would answer, changing nothing
                return {"outcome": copy.deepcopy(self).request(n, priority, now, [])}
            if kind == "tryAcquire":
                answer["outcome"] = self.request(n, priority, now, out)
            else:
                self.request(n, priority, now, out, event.get("ticket"), event.get("deadline"), event.get("arrival"))
        elif kind == "cancel":  # WQ-6
            self.catch_up(now, out)
            for w in self.waiters:
                if w["ticket"] == event.get("ticket"):
                    self.waiters.remove(w)
                    out.append({"ticket": w["ticket"], "outcome": {"kind": "cancelled"}, "at": now})
                    break
            self.serve(now, out)
        elif kind == "advance":
            self.catch_up(now, out)
            self.serve(now, out)
        elif kind in ("release", "reset", "reconfigure"):  # WQ-8
            self.catch_up(now, out)
            if kind == "reconfigure":
                event = dict(event, configuration=self.limiter.validate(event.get("configuration") or {}))
            answer["result"] = apply_event(self.limiter, event, now) if kind != "reconfigure" \
                else self.limiter.reconfigure(event["configuration"], now)
            self.serve(now, out)
        elif kind == "close":  # WQ-9
            self.catch_up(now, out)
            self.serve(now, out)
            for w in sorted(self.waiters, key=lambda w: w["arrival"]):
                out.append({"ticket": w["ticket"], "outcome": {"kind": "closed"}, "at": self.served_up_to})
            self.waiters = []
        else:
            return None
        answer["completions"] = out
        answer["nextWakeUp"] = self.next_wake_up(now)
        return answer
