#!/usr/bin/env python3
"""Python `ratelimit-headers` (an HTTP rate-limit header parser), driven over the conformance
protocol's `server-feedback` extension (Spec/protocol.md, "Extension server-feedback").

    Implementations/.venv/bin/python Implementations/ratelimit-headers/shim.py

The library is no limiter: the hello declares no strategy and the extension `server-feedback`.
Each `feedback` message is one call of the library's public entry point,
`ratelimit_headers.parse(response_headers=fields)`, with the response's fields as the list of
`[name, value]` pairs the message carries (a form `parse` takes: core.py `_normalize`), unchanged;
the library's `RateLimitState` is then written as a result of the vectors' form, each member the
library reports in its place and every other member as "nothing read"; the hello names the
members the library reads (`feedbackMembers`, README.md "What the library implements"), so that
it is judged on those alone.

The library is used unmodified. It reads one clock, the wall clock `datetime.now(timezone.utc)`
(parsers/ietf.py and parsers/rfc7231.py, when a Retry-After or RateLimit-Reset is read); the shim
binds the name `datetime` in those two modules to a subclass of `datetime` whose `now()` reads the
response's `receivedAt`. Nothing else is replaced.

The shared protocol loop (../common/shimproto.py) knows neither `extensions` in the hello nor the
`feedback` message: this shim answers them itself and hands every other message to it.
"""

import json
import os
import sys
import traceback
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import shimproto  # noqa: E402
from shimproto import INT64_MAX  # noqa: E402

shimproto.quiet_stderr()

import ratelimit_headers  # noqa: E402
import ratelimit_headers.parsers.ietf as ietf_module  # noqa: E402
import ratelimit_headers.parsers.rfc7231 as rfc7231_module  # noqa: E402

NS = 1_000_000_000
INT64_MIN = -(1 << 63)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class Clock:
    received_at = 0  # the response's receivedAt, whole seconds since the epoch


CLOCK = Clock()


class WallClock(datetime):
    """`datetime` as the two parser modules use it (now, fromtimestamp, arithmetic), whose now()
    is the wall clock at receipt."""

    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(CLOCK.received_at, tz)


ietf_module.datetime = WallClock
rfc7231_module.datetime = WallClock

# What datetime (the library's clock) can read: 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59Z.
FIRST_READING = -62135596800
LAST_READING = 253402300799

# RateLimitState.source values whose limit/remaining/reset are the X-RateLimit-* fields
# (parsers/github.py, parsers/stripe.py); "twitter" reads x-rate-limit-*, "ietf" RateLimit-*.
X_RATELIMIT_SOURCES = ("github", "stripe")


def int64(value):
    """An integer the library reports, as the protocol carries it: saturated to 64 bits (the
    library's int() of a float has no bound: "99999999999999999999" reads 10^20)."""
    if value is None:
        return None
    return max(INT64_MIN, min(INT64_MAX, value))


def seconds_since_epoch(moment):
    """A datetime the library reports, as whole seconds since the epoch (its datetimes are whole
    seconds: fromtimestamp of an int, or an HTTP-date)."""
    delta = moment - EPOCH
    return delta.days * 86400 + delta.seconds


def nanoseconds(seconds):
    """Seconds (an int the library reports) as nanoseconds, saturated at Int64.max as the result's
    waits are (Spec/vectors/http/README.md); a negative one is sent as it is (the suite then
    reports the result as malformed)."""
    if seconds is None:
        return None
    return max(INT64_MIN, min(INT64_MAX, seconds * NS))


def feedback_result(fields, received_at):
    """The library's reading of one response, in the form of a case's `expect`."""
    CLOCK.received_at = received_at
    state = ratelimit_headers.parse(response_headers=[tuple(pair) for pair in fields])
    x_ratelimit = {"limit": None, "remaining": None, "used": None, "reset": None, "resource": None}
    if state.source in X_RATELIMIT_SOURCES:
        x_ratelimit["limit"] = int64(state.limit)
        x_ratelimit["remaining"] = int64(state.remaining)
        x_ratelimit["reset"] = None if state.reset is None else seconds_since_epoch(state.reset)
    quota = None
    if state.remaining is not None and state.reset is not None:
        # The quota left and the time until its reset, from the wall clock at receipt, at least 0:
        # what the library's own `wait` command computes from a reset (__main__.py cmd_wait).
        now = WallClock.now(timezone.utc)
        until = max(0, int((state.reset - now).total_seconds()))
        quota = {"remaining": int64(state.remaining), "resetNanoseconds": nanoseconds(until)}
    return {
        # RateLimitState has no Retry-After of its own: `retry_after` is the wait in seconds, from
        # Retry-After (either form, converted) or RateLimit-Reset. Not reported: null.
        "retryAfter": None,
        # The library's "seconds until retry".
        "requestedWaitNanoseconds": nanoseconds(state.retry_after),
        # The library never reads Date.
        "date": None,
        # It reads every absolute time against its own wall clock.
        "reference": received_at,
        # It reads neither RateLimit nor RateLimit-Policy (draft-10's structured fields).
        "limits": [],
        "policies": [],
        "xRateLimit": x_ratelimit,
        "remainingQuota": quota,
        # It states no rate.
        "statedRate": None,
        # It reports nothing it ignored (malformed input gives RateLimitState(source="unknown")).
        "diagnostics": [],
    }


def handle(message, limiters):
    kind = message.get("type")
    if kind == "feedback":
        fid = message.get("id")
        received_at = message.get("receivedAt")
        if not (shimproto.is_int(received_at) and FIRST_READING <= received_at <= LAST_READING):
            return {"type": "error", "message": "ratelimit-headers reads the wall clock as a datetime "
                    "(years 1 to 9999): it cannot be received at %r s since the epoch" % (received_at,)}
        return {"type": "feedback", "id": fid, "result": feedback_result(message.get("fields") or [], received_at)}
    answer = shimproto._handle(HeadersShim(), message, limiters)
    if kind == "hello" and answer.get("protocol") == 2:
        answer["extensions"] = ["server-feedback"]
        # The members of a result the library reads (README.md, "What the library implements"):
        # judged on these alone, the others listed NOT CHECKED (protocol.md, feedbackMembers).
        answer["feedbackMembers"] = FEEDBACK_MEMBERS
    return answer


FEEDBACK_MEMBERS = ["requestedWaitNanoseconds", "reference", "xRateLimit.limit", "xRateLimit.remaining",
                    "xRateLimit.reset", "remainingQuota"]


class HeadersShim(shimproto.Shim):
    implementation = "ratelimit-headers %s" % (getattr(ratelimit_headers, "__version__", "0.1.0"),)
    strategies = []

    def create(self, strategy, configuration, now):
        raise shimproto.Unsupported("ratelimit-headers parses headers: it is no limiter")


def serve():
    """shimproto.serve, with `feedback` answered here (one answer per request, in order)."""
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
            shimproto._write({"type": "error", "message": "bad JSON: %s" % (error,)})
            continue
        if message.get("type") == "bye":
            return 0
        try:
            answer = handle(message, limiters)
        except Exception as error:  # noqa: BLE001 - reported as a failure of the case, never hidden
            traceback.print_exc()
            answer = {"type": "error", "message": "the shim or the library raised %r" % (error,)}
        shimproto._write(answer)
    return 0


if __name__ == "__main__":
    if sys.argv[1:]:
        sys.stdout.write('{"type":"error","message":"usage: shim.py"}\n')
        sys.exit(2)
    sys.exit(serve())
