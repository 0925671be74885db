#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `ratelimit-headers` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/ratelimit-headers/findings.py

For each HTTP vector case a check names (Spec/vectors/http/server-feedback.json, read for its
responses and expected results), it calls the library's public entry point,
`ratelimit_headers.parse(response_headers=FIELDS)`, with the case's fields as the list of
`(name, value)` pairs they are, and the wall clock the library reads (`datetime.now(timezone.utc)`
in parsers/ietf.py and parsers/rfc7231.py) set to the case's `receivedAt`. It prints what the
library returned, `RateLimitState(source, retry_after, limit, remaining, reset)` with the reset as
seconds since the epoch, next to the members of the case's expected result that those fields stand
for, and exits 1 if a finding no longer reproduces.

Last, it counts the cases whose members the library implements (README.md, "What the library
implements") read as HTTP.md says, comparing only those members, as the suite would with a way
to declare them (README.md, "What the protocol would need").
"""

import json
import os
import sys
from datetime import datetime, timezone

import ratelimit_headers
import ratelimit_headers.parsers.ietf as ietf_module
import ratelimit_headers.parsers.rfc7231 as rfc7231_module

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "..", "Spec", "vectors", "http", "server-feedback.json")
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
NS = 1_000_000_000
INT64_MAX = (1 << 63) - 1


class Clock:
    received_at = 0


CLOCK = Clock()


class WallClock(datetime):
    @classmethod
    def now(cls, tz=None):
        return cls.fromtimestamp(CLOCK.received_at, tz)


ietf_module.datetime = WallClock
rfc7231_module.datetime = WallClock

CASES = {case["id"].split("/", 1)[1]: case for case in json.load(open(VECTORS))["cases"]}
FAILED = []
CHECKS = [0]


def state(name):
    """What the library reads of case `name`: (source, retry_after, limit, remaining, reset in
    seconds since the epoch)."""
    response = CASES[name]["response"]
    CLOCK.received_at = response["receivedAt"]
    s = ratelimit_headers.parse(response_headers=[tuple(pair) for pair in response["fields"]])
    reset = None if s.reset is None else int((s.reset - EPOCH).total_seconds())
    return (s.source, s.retry_after, s.limit, s.remaining, reset)


def spec(name, *members):
    expect = CASES[name]["expect"]
    shown = []
    for member in members:
        value = expect
        for part in member.split("."):
            value = value[part]
        shown.append("%s=%s" % (member, json.dumps(value)))
    return ", ".join(shown)


def check(title, expected_by_library, members):
    """expected_by_library: case name -> the state the library returns."""
    CHECKS[0] += 1
    observed = {name: state(name) for name in expected_by_library}
    ok = observed == expected_by_library
    print("%s %s" % ("ok  " if ok else "GONE", title))
    for name in expected_by_library:
        print("     %s\n       library: %s\n       Spec:    %s" % (name, observed[name], spec(name, *members)))
    if not ok:
        FAILED.append(title)


# Retry-After is not read when an X-RateLimit-* field is there: detect_format picks "github" for
# any of X-RateLimit-Limit/-Remaining/-Reset/-Used/-Resource (core.py:62-67), and the GitHub and
# Stripe parsers set retry_after=None (github.py:45-51, stripe.py:43-50).
check("Retry-After ignored beside X-RateLimit-* (HTTP-3, HTTP-6)", {
    "singleton-repeated-same-value": ("github", None, 60, None, None),
    "values-trimmed-of-spaces-and-tabs": ("github", None, 60, None, None),
    "field-names-any-case": ("github", None, None, 7, None),
}, ["requestedWaitNanoseconds", "retryAfter"])

# Any field whose name starts with "ratelimit-" (RateLimit-Policy, draft-10's policy field) makes
# detect_format pick "ietf" (core.py:57-58), whose parser reads only RateLimit-Limit, -Remaining,
# -Window, -Reset and Retry-After (ietf.py:66-73): X-RateLimit-* are dropped.
check("X-RateLimit-* ignored beside RateLimit-Policy (HTTP-5, HTTP-6)", {
    "stated-rate-policy-without-window": ("ietf", None, None, None, None),
    "stated-rate-policy-over-pace": ("ietf", None, None, None, None),
}, ["xRateLimit.remaining", "xRateLimit.reset", "remainingQuota"])

# Only IMF-fixdate is an HTTP-date: parse_http_date is strptime("%a, %d %b %Y %H:%M:%S %Z")
# (parsers/__init__.py:31-36); RFC 850 and asctime dates (which RFC 9110 5.6.7 and RFC 7231
# 7.1.1.1 say recipients MUST accept) and a leap second (:60, which strptime reads and datetime
# refuses) are not read: no wait.
check("RFC 850 and asctime dates, and a leap second, not read (HTTP-2)", {
    "rfc850-date": ("retry-after", None, None, None, None),
    "asctime-date": ("retry-after", None, None, None, None),
    "asctime-one-digit-day": ("retry-after", None, None, None, None),
    "two-digit-year-50-after-the-reference": ("retry-after", None, None, None, None),
    "two-digit-year-51-after-the-reference": ("retry-after", None, None, None, None),
    "two-digit-year-against-the-trusted-date": ("retry-after", None, None, None, None),
    "two-digit-year-against-the-receipt": ("retry-after", None, None, None, None),
    "leap-second": ("retry-after", None, None, None, None),
}, ["requestedWaitNanoseconds", "retryAfter"])

# Absolute times are read against the local clock, never against the response's Date: a date-form
# Retry-After is `dt - datetime.now()` (rfc7231.py:33-35, ietf.py:41-45), an X-RateLimit-Reset an
# epoch the caller compares with its own clock (the library's `wait` command: __main__.py:62-64).
check("the Date field is never read: waits and resets against the receiving clock (HTTP-3, HTTP-6)", {
    "date-from-the-server-date": ("retry-after", 15, None, None, 1795219220),
    "date-one-hour-behind-is-trusted": ("retry-after", 0, None, None, 1795219210),
    "x-ratelimit-reset-from-the-server-date": ("github", None, None, 0, 1795219230),
    "two-digit-year-against-the-trusted-date": ("retry-after", None, None, None, None),
}, ["requestedWaitNanoseconds", "reference", "remainingQuota"])

# Numbers are read with int(float(value)) (parsers/__init__.py:7-14 coerce_int; rfc7231.py:24;
# ietf.py:18-25): a sign, a fraction, digits of other scripts and an exponent are accepted, and an
# integer above 2^53 is rounded to a float first.
check("numbers read as int(float(value)) (HTTP-3, HTTP-5)", {
    "signs-refused": ("ietf", -5, None, None, 1795219195),
    "fractions-refused": ("github", None, 1, None, None),
    "non-ascii": ("ietf", 120, None, None, 1795219320),
    "x-ratelimit-18-digits": ("github", None, 1000000000000000000, 0, None),
}, ["requestedWaitNanoseconds", "xRateLimit.limit"])

# strptime matches day and month names without regard to case: "SAT, 21 NOV 2026" is read.
check("HTTP-dates read without regard to case (HTTP-2)", {
    "dates-are-case-sensitive": ("retry-after", 120, None, None, 1795219320),
}, ["requestedWaitNanoseconds", "retryAfter"])

# Fields given as pairs are put in a dict, the last of a name winning (core.py:35-42), then
# lower-cased, the last again winning (parsers/__init__.py:17-28): a singleton field sent twice
# with different values is read as its last value.
check("a singleton field repeated with different values: the last one read (HTTP-1)", {
    "singleton-repeated-different-values": ("retry-after", 7, None, None, 1795219207),
    "x-ratelimit-repeated-different-values": ("github", None, 60, 1, 1795219260),
}, ["requestedWaitNanoseconds", "xRateLimit.remaining", "remainingQuota"])

# An X-RateLimit-Reset above 2^32 is dropped (github.py:18, 33-39: "Guard against negative /
# out-of-range epochs"), so its reset and the quota's are lost.
check("X-RateLimit-Reset above 2^32 dropped (HTTP-5, HTTP-10)", {
    "largest-x-ratelimit-reset-saturates": ("github", None, 0, 0, None),
}, ["xRateLimit.reset", "remainingQuota"])

# X-RateLimit-Remaining: 0 does not make `retry_after` the time until the reset (HTTP-6, 3rd
# rule): retry_after is Retry-After (or RateLimit-Reset) only; the reset is left to the caller
# (the library's `wait` command waits for any reset, whatever the remaining: __main__.py:63-64).
check("no wait asked for an exhausted X-RateLimit quota (HTTP-6)", {
    "github-fields": ("github", None, 5000, 0, 1795219290),
    "x-ratelimit-reset-is-epoch-seconds-not-a-delay": ("github", None, 100, 0, 60),
    "t-before-x-ratelimit": ("github", None, None, 0, 1795219290),
}, ["requestedWaitNanoseconds"])

# An oversized number discards the whole response: float("1000...0") is inf, int(inf) raises
# OverflowError, which coerce_int does not catch (parsers/__init__.py:11-14), and parse() turns any
# exception into RateLimitState(source="unknown") (core.py:93-97): the Retry-After is lost too.
check("an oversized X-RateLimit-Limit discards the response, Retry-After included (HTTP-10)", {
    "long-values": ("unknown", None, None, None, None),
}, ["requestedWaitNanoseconds"])
# (In that case the GitHub parser would not read the Retry-After anyway, above.) The case's
# Retry-After alone, a delay of 4096 nines that HTTP-3 saturates, is lost the same way: the
# Retry-After parser's int(float(value)) raises OverflowError, which it does not catch
# (rfc7231.py:23-29 catches ValueError, TypeError, OSError).
CHECKS[0] += 1
try:
    ratelimit_headers.parsers.coerce_int("1" + "0" * 400)
    raised = None
except OverflowError:
    raised = "OverflowError"
retry_after_alone = [pair for pair in CASES["long-values"]["response"]["fields"] if pair[0] == "Retry-After"]
CLOCK.received_at = CASES["long-values"]["response"]["receivedAt"]
alone = ratelimit_headers.parse(response_headers=[tuple(pair) for pair in retry_after_alone])
observed = (raised, len(retry_after_alone[0][1]), alone.source, alone.retry_after)
ok = observed == ("OverflowError", 4096, "unknown", None)
print("%s coerce_int of a 401-digit number raises OverflowError; the case's Retry-After alone reads nothing\n"
      "       library: %s\n       Spec:    requestedWaitNanoseconds=9223372036854775807" % ("ok  " if ok else "GONE", observed))
if not ok:
    FAILED.append("an oversized number")

# Not implemented: RateLimit (draft-10's quota field) is not read at all, so a wait or a quota it
# states is not seen: a "RateLimit" field alone is "unknown" (its name has no "ratelimit-" prefix).
check("RateLimit (draft-10) not read (HTTP-4 to HTTP-6): not implemented", {
    "longest-exhausted-t": ("unknown", None, None, None, None),
    "age-zero-reads-the-ratelimit-fields": ("unknown", None, None, None, None),
    "quota-left-is-the-smallest-r-with-a-t": ("unknown", None, None, None, None),
}, ["requestedWaitNanoseconds", "remainingQuota"])


# --- The members the library implements, compared alone ---------------------------------------------
def implemented(name):
    """The members README.md says the library implements, from the library's state, as the shim
    writes them."""
    case = CASES[name]
    received = case["response"]["receivedAt"]
    source, retry_after, limit, remaining, reset = state(name)
    clamp = lambda v: None if v is None else max(-(1 << 63), min(INT64_MAX, v))  # noqa: E731
    x = {"limit": None, "remaining": None, "reset": None}
    if source in ("github", "stripe"):
        x = {"limit": clamp(limit), "remaining": clamp(remaining), "reset": reset}
    quota = None
    if remaining is not None and reset is not None:
        quota = {"remaining": clamp(remaining), "resetNanoseconds": clamp(max(0, reset - received) * NS)}
    return {"requestedWaitNanoseconds": None if retry_after is None else clamp(retry_after * NS),
            "reference": received, "xRateLimit": x, "remainingQuota": quota}


def expected_implemented(name):
    expect, unspecified = CASES[name]["expect"], set(CASES[name].get("unspecified", []))
    result = {"requestedWaitNanoseconds": expect["requestedWaitNanoseconds"], "reference": expect["reference"],
              "xRateLimit": {m: expect["xRateLimit"][m] for m in ("limit", "remaining", "reset")},
              "remainingQuota": expect["remainingQuota"]}
    for member in unspecified:
        result.pop(member, None)
    return result


# Why each of the other cases differs on those members (README.md, "Findings"): a defect of what the
# library implements, or only what it does not implement (RateLimit; a wait for an exhausted
# X-RateLimit quota).
DEFECTS = {
    "retry-after-beside-x-ratelimit": ["field-names-any-case", "singleton-repeated-same-value",
                                       "values-trimmed-of-spaces-and-tabs", "long-values"],
    "x-ratelimit-beside-ratelimit-policy": ["stated-rate-policy-without-window", "stated-rate-policy-over-pace"],
    "imf-fixdate-only": ["rfc850-date", "asctime-date", "asctime-one-digit-day", "leap-second",
                         "two-digit-year-50-after-the-reference", "two-digit-year-51-after-the-reference",
                         "two-digit-year-against-the-trusted-date", "two-digit-year-against-the-receipt"],
    "date-never-read": ["date-from-the-server-date", "date-one-hour-behind-is-trusted",
                        "x-ratelimit-reset-from-the-server-date", "two-digit-year-against-the-trusted-date"],
    "int-of-float": ["signs-refused", "fractions-refused", "non-ascii", "x-ratelimit-18-digits"],
    "dates-any-case": ["dates-are-case-sensitive"],
    "last-repeated-value": ["singleton-repeated-different-values", "x-ratelimit-repeated-different-values"],
    "reset-above-2-32": ["largest-x-ratelimit-reset-saturates"],
    "oversized-number-discards-all": ["long-values"],
}
NOT_IMPLEMENTED = {
    "ratelimit-field": ["field-names-any-case", "list-fields-on-several-lines", "age-repeated-different-values",
                        "values-trimmed-of-spaces-and-tabs", "integer-of-15-digits", "repeated-parameter-keeps-the-last",
                        "spaces-and-tabs-around-commas", "unknown-parameters-are-comments", "draft-example",
                        "limit-named-by-a-token", "limit-partition-key", "retry-after-before-t", "longest-exhausted-t",
                        "t-before-x-ratelimit", "age-zero-reads-the-ratelimit-fields",
                        "quota-left-is-the-smallest-r-with-a-t", "largest-t-saturates", "stated-rate-not-from-ratelimit"],
    "exhausted-x-ratelimit-wait": ["github-fields", "x-ratelimit-reset-is-epoch-seconds-not-a-delay",
                                   "t-before-x-ratelimit", "x-ratelimit-reset-from-the-server-date",
                                   "largest-x-ratelimit-reset-saturates"],
}
clock_out = [n for n, c in CASES.items() if not (-62135596800 <= c["response"]["receivedAt"] <= 253402300799)]
agree, differ = [], []
for name in CASES:
    if name in clock_out:
        continue
    got, want = implemented(name), expected_implemented(name)
    (agree if all(got[m] == want[m] for m in want) else differ).append(name)
with_defect = sorted({n for names in DEFECTS.values() for n in names})
only_not_implemented = sorted({n for names in NOT_IMPLEMENTED.values() for n in names} - set(with_defect))
CHECKS[0] += 1
summary = (len(CASES), len(clock_out), len(agree), len(with_defect), len(only_not_implemented))
accounted = sorted(differ) == sorted(with_defect + only_not_implemented)
ok = summary == (89, 2, 44, 25, 18) and accounted
print("%s of %d cases, %d cannot be received by the library's clock (a datetime: years 1 to 9999); of the "
      "other %d, %d read the implemented members as HTTP.md says, %d differ by a defect of what the library "
      "implements, %d only where it implements nothing (every differing case accounted for: %s)" %
      (("ok  " if ok else "GONE",) + summary[:2] + (summary[0] - summary[1],) + summary[2:] + (accounted,)))
for cause, names in list(DEFECTS.items()) + list(NOT_IMPLEMENTED.items()):
    print("     %-38s %2d: %s" % (cause, len(names), ", ".join(names)))
if not ok:
    FAILED.append("summary")

print("%d checks, %d no longer reproduce (ratelimit-headers %s)" % (CHECKS[0], len(FAILED), ratelimit_headers.__version__))
sys.exit(1 if FAILED else 0)
