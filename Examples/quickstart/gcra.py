#!/usr/bin/env python3
"""A GCRA that conforms exactly, in about 50 lines: the implementer's quick start
(Spec/QuickStart.md). It speaks Spec/protocol.md on stdin and stdout; check it with
    swift run ratelimit-conformance --exec "python3 Examples/quickstart/gcra.py"
"""
import json
import sys

INT64_MAX = 2**63 - 1
# What it has beyond acquire(1): weighted acquires and queries; no reset, reconfigure, bad input
# or refused configurations, so the suite sends none and says so (CONF-7).
PROFILE = {"events": ["weighted", "query"], "validation": False}


class GCRA:  # Spec/GCRA.md
    def __init__(self, configuration, now):  # GCRA-2: a full burst at creation
        self.burst = configuration["burst"]
        self.interval = configuration["emissionIntervalNanoseconds"]
        self.tat = self.last = now

    def acquire(self, permits, now):
        tau = self.burst * self.interval
        e = max(now, self.last)  # GCRA-3: time that goes back counts as the latest instant
        if permits > self.burst:
            return {"kind": "neverAllowed"}  # GCRA-7
        if permits > 0:  # acquire(0) only asks (GCRA-8)
            start, cost = max(self.tat, e), permits * self.interval
            if start - e + cost > tau:  # GCRA-6: admitted at tat - (tau - cost), exactly
                at = self.tat - (tau - cost)
                if at > INT64_MAX:
                    return {"kind": "neverAllowed"}  # CORE-7: past the end of the timeline
                return {"kind": "rejected", "retryAfterNanoseconds": at - now}
            self.tat, self.last = start + cost, e  # GCRA-4
        return {"kind": "allowed", "remaining": (tau - max(self.tat - e, 0)) // self.interval}  # GCRA-5


def answer(message, limiters):
    kind, lid = message["type"], message.get("id")
    if kind == "hello":
        return {"type": "hello", "protocol": 2, "implementation": "quick-start GCRA 1",
                "strategies": ["gcra"], "profiles": {"gcra": PROFILE}}
    if kind == "create":
        limiters[lid] = GCRA(message["configuration"], message["now"])
        return {"type": "created", "id": lid}
    if kind == "event":
        result = limiters[lid].acquire(message["event"]["permits"], message["now"])
        return {"type": "result", "id": lid, "result": result}
    if kind == "drop":
        limiters.pop(lid, None)
        return {"type": "dropped", "id": lid}
    return {"type": "error", "message": "unknown message %r" % kind}


limiters = {}
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "bye":
        break
    print(json.dumps(answer(message, limiters)), flush=True)
