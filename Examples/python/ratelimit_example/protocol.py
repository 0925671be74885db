"""The JSON-lines protocol of Spec/protocol.md on stdin/stdout: the hello (protocol 2, the profile
of every strategy, the extensions), create, event, scenario, step, drop and bye. handle() answers
one message; serve() reads and answers every line until bye or the end of input."""

import json
import os
import sys

from .adaptive import AdaptiveConcurrency, AdaptiveRate
from .composite import Composite
from .config import ConfigError, is_int
from .results import INT64_MAX
from .strategies import KINDS, apply_event
from .wait_queue import WaitQueue
from .windows import ALIGNMENT


IMPLEMENTATION = "python-example 1"


STRATEGIES = [
    "token-bucket",
    "token-bucket-interval",
    "gcra",
    "pay-later",
    "warm-up",
    "fixed-window",
    "sliding-window-log",
    "sliding-window-counter",
    "sliding-window-segments",
    "leaky-bucket-meter",
    "leaky-bucket-queue",
    "concurrency",
]


# The profile declared for every strategy (Spec/protocol.md, "Profiles"): exact integer
# nanoseconds up to Int64.max, any order of instants, every event, configurations validated.
# --profile changes it in place (ratelimiter.py).
PROFILE = {
    "timeUnitNanoseconds": 1,
    "largestInstantNanoseconds": INT64_MAX,
    "monotonic": False,
    "events": ["weighted", "query", "invalid", "reset", "reconfigure"],
    "toleranceNanoseconds": 0,
    "validation": True,
    "createdAtFirstEvent": False,
}


MACHINES = {"composite": Composite, "wait-queue": WaitQueue, "adaptive-rate": AdaptiveRate,
            "adaptive-concurrency": AdaptiveConcurrency}


def refused(lid, err):
    """The answer to a create or scenario whose configuration the Spec refuses (CORE-3)."""
    r = {"type": "refused", "id": lid, "field": err.field, "problem": err.problem}
    if err.maximum is not None:
        r["maximum"] = err.maximum
    return r


def handle(msg, limiters):
    """Returns the answer object, or None for no answer."""
    t = msg.get("type")
    if t == "hello":
        # Protocol 2 when the harness offers it: the profile declares nanoseconds, the whole
        # timeline, time that may go back, every event, no tolerance (the Spec's own profile).
        offered = msg.get("protocol")
        answer = {"type": "hello", "protocol": 2 if is_int(offered) and offered >= 2 else 1,
                  "implementation": IMPLEMENTATION, "strategies": list(STRATEGIES)}
        if answer["protocol"] == 2:
            answer["profiles"] = {strategy: dict(PROFILE) for strategy in STRATEGIES}
            for strategy, alignment in ALIGNMENT.items():  # FW-13, SWS-13
                if alignment != "origin":
                    answer["profiles"][strategy]["alignment"] = alignment
            answer["extensions"] = sorted(MACHINES)
            # Lines are read and answered one at a time, in order: any window offered is fine
            # (Spec/protocol.md, "Pipelining").
            window = msg.get("window")
            if is_int(window) and window > 1:
                answer["window"] = window
        return answer
    if t == "create":
        lid = msg.get("id")
        cls = KINDS.get(msg.get("strategy"))
        if cls is None:
            return {"type": "unsupported", "id": lid, "reason": "unknown strategy"}
        now = msg.get("now")
        if not is_int(now) or now < 0:
            return {"type": "refused", "id": lid, "field": "now", "problem": "mustNotBeNegative"}
        try:
            cfg = cls.validate(msg.get("configuration") or {})
        except ConfigError as err:
            return refused(lid, err)
        limiters[lid] = cls(cfg, now)
        return {"type": "created", "id": lid}
    if t == "event":
        lid = msg.get("id")
        limiter = limiters.get(lid)
        if limiter is None:
            return {"type": "error", "message": "unknown limiter %r" % (lid,)}
        result = apply_event(limiter, msg.get("event") or {}, msg.get("now"))
        if result is None:
            return {"type": "error", "message": "unknown event"}
        return {"type": "result", "id": lid, "result": result}
    if t == "scenario":
        sid = msg.get("id")
        machine = MACHINES.get(msg.get("machine"))
        if machine is None:
            return {"type": "error", "message": "unknown machine"}
        try:
            cfg = machine.validate(msg.get("configuration") or {})
        except ConfigError as err:
            return refused(sid, err)
        limiters[sid] = machine(cfg, msg.get("now"))
        return {"type": "created", "id": sid}
    if t == "step":
        sid = msg.get("id")
        scenario = limiters.get(sid)
        answer = None if scenario is None else scenario.step(msg.get("event") or {}, msg.get("now"))
        if answer is None:
            return {"type": "error", "message": "unknown scenario or event"}
        return {"type": "answer", "id": sid, "answer": answer}
    if t == "drop":
        lid = msg.get("id")
        limiters.pop(lid, None)
        return {"type": "dropped", "id": lid}
    return {"type": "error", "message": "unknown message type %r" % (t,)}


def encode(obj):
    return json.dumps(obj, separators=(",", ":")) + "\n"


def answer_line(line, limiters):
    """The answer to one request line, encoded; None for no answer."""
    try:
        msg = json.loads(line)
        if not isinstance(msg, dict):
            raise ValueError("not an object")
    except Exception as exc:  # noqa: BLE001 - answer, never crash
        return encode({"type": "error", "message": "bad JSON: %s" % (exc,)})
    try:
        answer = handle(msg, limiters)
    except Exception as exc:  # noqa: BLE001
        answer = {"type": "error", "message": "internal error: %r" % (exc,)}
    return None if answer is None else encode(answer)


def serve():
    """Answers every complete line read, in order, then writes the answers at once: a harness
    that sends one request at a time gets each answer at once, one that pipelines (a window
    accepted at hello) gets a batch per read."""
    limiters = {}
    pending = b""
    while True:
        try:
            chunk = os.read(0, 1 << 16)
        except InterruptedError:
            continue
        if not chunk:
            return 0
        *lines, pending = (pending + chunk).split(b"\n")
        answers = []
        for raw in lines:
            line = raw.strip()
            if not line:
                continue
            if b'"bye"' in line and _is_bye(line):
                sys.stdout.write("".join(answers))
                sys.stdout.flush()
                return 0
            answer = answer_line(line, limiters)
            if answer is not None:
                answers.append(answer)
        if answers:
            sys.stdout.write("".join(answers))
            sys.stdout.flush()


def _is_bye(line):
    try:
        msg = json.loads(line)
    except Exception:  # noqa: BLE001
        return False
    return isinstance(msg, dict) and msg.get("type") == "bye"
