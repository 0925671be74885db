"""The JSON-lines protocol of Spec/protocol.md (version 2), shared by the Python shims.

A shim subclasses `Shim` and answers `create`, `event` and `drop`; `serve` reads one request per
line from standard input and writes exactly one answer per request to standard output. Nothing is
ever written to standard error (the harness fails a case on it): Python's own warnings and
tracebacks go to the file named by the environment variable `SHIM_STDERR`, or nowhere.

An exception escaping a shim's handler is answered `{"type": "error"}` naming it, which the
harness reports as a failure of the case: a shim never hides a crash of the library it drives.
"""

import json
import os
import sys
import traceback

INT64_MAX = (1 << 63) - 1
ALL_EVENTS = ["weighted", "query", "invalid", "reset", "reconfigure"]


def allowed(remaining):
    """`allowed`, with a remaining the library reports above Int64.max (possible after a negative
    acquire it accepted) sent as Int64.max, the most the protocol carries."""
    return {"kind": "allowed", "remaining": min(remaining, INT64_MAX)}


def refused_for(now, wait):
    """The answer to an acquire the library refused, given the wait it reports in nanoseconds from
    `now`: `rejected(wait)`, sent as it is even when it is below 1 ns (the suite then reports the
    library's wait as malformed, CONF-1) or when `now + wait` passes Int64.max, the end of the
    protocol's timeline (a wait past the end, CONF-1); a wait longer than Int64.max ns itself is
    sent as Int64.max, the most the protocol carries."""
    return rejected(min(wait, INT64_MAX))


def rejected(retry_after):
    return {"kind": "rejected", "retryAfterNanoseconds": retry_after}


def never():
    return {"kind": "neverAllowed"}


def invalid(field, problem, maximum=None):
    answer = {"kind": "invalid", "field": field, "problem": problem}
    if maximum is not None:
        answer["maximum"] = maximum
    return answer


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def ints(configuration, names):
    """The configuration's fields `names`, each an integer, or the refusal of the first that is not
    one (`notSupported`: the protocol's fields are integers, so only a malformed request has one)."""
    values = []
    for name in names:
        value = configuration.get(name)
        if not is_int(value):
            raise Refused(name, "notSupported")
        values.append(value)
    return values


class Unsupported(Exception):
    """Raised by `Shim.create` for a configuration the library cannot represent."""


class Refused(Exception):
    """Raised by `Shim.create` when the library itself refuses a configuration."""

    def __init__(self, field, problem, maximum=None):
        Exception.__init__(self, field, problem)
        self.field, self.problem, self.maximum = field, problem, maximum


class Shim:
    implementation = "?"
    strategies = []

    def profiles(self):
        """Strategy identifier -> profile (Spec/protocol.md, "Profiles")."""
        return {}

    def create(self, strategy, configuration, now):
        """Returns the limiter object; raises Unsupported or Refused."""
        raise NotImplementedError

    def event(self, limiter, event, now):
        """Returns the result object for one event (an acquire, release, reset or reconfigure)."""
        raise NotImplementedError

    def drop(self, limiter):
        pass


def _handle(shim, message, limiters):
    kind = message.get("type")
    if kind == "hello":
        offered = message.get("protocol")
        version = 2 if is_int(offered) and offered >= 2 else 1
        answer = {"type": "hello", "protocol": version, "implementation": shim.implementation,
                  "strategies": list(shim.strategies)}
        if version == 2:
            answer["profiles"] = shim.profiles()
        return answer
    if kind == "create":
        lid = message.get("id")
        try:
            limiters[lid] = shim.create(message.get("strategy"), message.get("configuration") or {},
                                        message.get("now"))
        except Unsupported as reason:
            return {"type": "unsupported", "id": lid, "reason": str(reason)}
        except Refused as refusal:
            answer = {"type": "refused", "id": lid, "field": refusal.field, "problem": refusal.problem}
            if refusal.maximum is not None:
                answer["maximum"] = refusal.maximum
            return answer
        return {"type": "created", "id": lid}
    if kind == "event":
        lid = message.get("id")
        if lid not in limiters:
            return {"type": "error", "message": "unknown limiter %r" % (lid,)}
        result = shim.event(limiters[lid], message.get("event") or {}, message.get("now"))
        return {"type": "result", "id": lid, "result": result}
    if kind == "drop":
        lid = message.get("id")
        limiter = limiters.pop(lid, None)
        if limiter is not None:
            shim.drop(limiter)
        return {"type": "dropped", "id": lid}
    return {"type": "error", "message": "unknown message type %r" % (kind,)}


def _write(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def serve(shim):
    """Speaks the protocol until `bye` or the end of standard input; returns the exit status."""
    limiters = {}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except ValueError as error:
            _write({"type": "error", "message": "bad JSON: %s" % (error,)})
            continue
        if message.get("type") == "bye":
            return 0
        try:
            answer = _handle(shim, message, limiters)
        except Exception as error:  # noqa: BLE001 - reported as a failure of the case, never hidden
            traceback.print_exc()
            answer = {"type": "error", "message": "the shim or the library raised %r" % (error,)}
        _write(answer)
    return 0


def quiet_stderr():
    """Sends Python's standard error to $SHIM_STDERR (appended), or to /dev/null."""
    target = os.environ.get("SHIM_STDERR") or os.devnull
    try:
        sys.stderr = open(target, "a", buffering=1)
    except OSError:
        sys.stderr = open(os.devnull, "w")


def ceil_ns(seconds):
    """Whole nanoseconds of a span the library gave in seconds (an exact Fraction or float), rounded up:
    a caller cannot wait less than it was told."""
    from fractions import Fraction

    value = Fraction(seconds) * 1_000_000_000
    return -((-value.numerator) // value.denominator)
