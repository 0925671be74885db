#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `rush` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/rush/findings.py

Each check drives `Throttle(rate=Quota(...), limiter=GenericCellRatelimiter | PeriodicLimiter
(store=DictionaryStore()))` directly, with `datetime.datetime.now` as rush/stores/base.py looks it
up (the name `datetime` of that module) replaced by a settable clock: an aware UTC datetime, the
protocol's instant 0 being 2023-11-14T22:13:20Z (Unix 1,700,000,000 s), as in the shim. Instants
below are in microseconds from instant 0 (the library's unit); a GCRA `(B, T)` is
`Quota(period=B*T, count=B)` and a fixed window `(N, W)` is `Quota(period=W, count=N)`, as in the
shim. It prints what the library answers next to what the Spec answers, and exits 1 if any finding
no longer reproduces (for instance after a version change).

An answer is written as the shim sends it: `allowed(result.remaining)` when `result.limited` is
false, `rejected(<result.retry_after> ns)` when it is true; `OverflowError` when the call raises it.
"""

import copy
import datetime
import sys
import types

import rush
import rush.stores.base as base
from rush.limiters.gcra import GenericCellRatelimiter
from rush.limiters.periodic import PeriodicLimiter
from rush.quota import Quota
from rush.stores.dictionary import DictionaryStore
from rush.throttle import Throttle

UTC = datetime.timezone.utc
ORIGIN = datetime.datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
INT64_MAX = (1 << 63) - 1
KEY = "k"


class Clock:
    us = 0


CLOCK = Clock()


class _Datetime:
    @staticmethod
    def now(tz=None):
        moment = ORIGIN + datetime.timedelta(microseconds=CLOCK.us)
        return moment.replace(tzinfo=None) if tz is None else moment.astimezone(tz)


base.datetime = types.SimpleNamespace(datetime=_Datetime, timezone=datetime.timezone, tzinfo=datetime.tzinfo,
                                      timedelta=datetime.timedelta)

FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        print("     (expected the library to answer %s)" % (expected_by_library,))
        FAILED.append(name)


def us(delta):
    return delta // datetime.timedelta(microseconds=1)


def answer(result):
    if result.limited:
        return "rejected(%dns)" % (us(result.retry_after) * 1000)
    return "allowed(%d)" % result.remaining


def gcra(burst, interval_us):
    return Throttle(rate=Quota(period=datetime.timedelta(microseconds=burst * interval_us), count=burst),
                    limiter=GenericCellRatelimiter(store=DictionaryStore()))


def window(limit, window_us):
    return Throttle(rate=Quota(period=datetime.timedelta(microseconds=window_us), count=limit),
                    limiter=PeriodicLimiter(store=DictionaryStore()))


def at(instant_us):
    CLOCK.us = instant_us


def acquire(throttle, n, instant_us):
    at(instant_us)
    try:
        return answer(throttle.check(KEY, n))
    except OverflowError:
        return "OverflowError"


def query(throttle, instant_us):
    """Throttle.peek, as the shim answers it: allowed(result.remaining) (noting when the peek itself says
    limited, which the shim does not send)."""
    at(instant_us)
    result = throttle.peek(KEY)
    return "allowed(%d)%s" % (result.remaining, " (peek: limited)" if result.limited else "")


def reset(throttle, instant_us):
    at(instant_us)
    return answer(throttle.clear(KEY))


def reconfigure(throttle, quota, instant_us):
    throttle.rate = quota
    return query(throttle, instant_us)


def admits(throttle, n, instant_us):
    """Whether check(n) at the instant is admitted, asked of a copy (the store's dict copied)."""
    probe = Throttle(rate=throttle.rate, limiter=type(throttle.limiter)(store=copy.deepcopy(throttle.limiter.store)))
    at(instant_us)
    return not probe.check(KEY, n).limited


def largest_admitted(throttle, instant_us, top):
    return max([m for m in range(0, top + 1) if admits(throttle, m, instant_us)], default=0)


# --- gcra (GenericCellRatelimiter) -----------------------------------------------------------------

t = gcra(1, 1)
check("gcra CORE-7 never allowed: random-seed-1-trace-2, shrunk (B 1, T 1 us): acquire(2)@0",
      acquire(t, 2, 0), "rejected(2000ns)",
      "neverAllowed (2 > B); rush refuses with retry_after = emission_interval - distance (gcra.py:52-58), "
      "a finite wait for a request it can never admit")

t = gcra(3, 10)
at(0)
first = acquire(t, 1, 0)
check("gcra CORE-9 acquire(0) as a query: remaining-slack (B 3, T 10 us): acquire(1)@0, acquire(0)@5",
      (first, query(t, 5), largest_admitted(t, 5, 4)), ("allowed(2)", "allowed(3)", 2),
      "allowed(2), allowed(2); peek reports floor(distance / emission_interval + 0.5) = floor(2.5 + 0.5) = 3 "
      "(gcra.py:44-46), where check(3) is refused and check(2) is the most it admits")

t = gcra(3, 10)
check("gcra CORE-9 negative permits: zero-release-invalid (B 3, T 10 us): acquire(0)@0, acquire(-1)@0",
      (query(t, 0), acquire(t, -1, 0), largest_admitted(t, 0, 5)), ("allowed(3)", "allowed(4)", 2),
      "allowed(3), invalid(permits: mustNotBeNegative); the increment emission_interval * -1 (gcra.py:26) "
      "makes the reported remaining 4, and stores a theoretical arrival time 10 us in the past, which "
      "max(now, tat) (gcra.py:32) clips: rush then admits 2, as before")

t = gcra(3, 2)
check("gcra GCRA-5 remaining: random-3 (B 3, T 2 us, created at 2 us): acquire(1)@2, acquire(1)@3",
      (acquire(t, 1, 2), acquire(t, 1, 3), largest_admitted(t, 3, 3)), ("allowed(2)", "allowed(2)", 1),
      "allowed(2), allowed(1): remaining is rounded half up (1.5 -> 2, gcra.py:44-46); rush itself admits "
      "1 more at 3 us (the Spec's remaining): its remaining is one more than it admits")

for b, t_us, at_us, n in ((3, 10, 5, 1), (10, 7, 13, 2), (100, 1, 0, 37)):
    t = gcra(b, t_us)
    acquire(t, n, 0)
    reported = int(query(t, at_us)[len("allowed("):-1])
    check("gcra GCRA-5 remaining: the reported remaining is one more than the largest check it admits "
          "(B %d, T %d us, acquire(%d)@0, at %d us)" % (b, t_us, n, at_us),
          reported - largest_admitted(t, at_us, b), 1,
          "remaining = the largest acquire admitted next (CORE-6): rush admits iff floor(d/T + 0.5) >= 1 "
          "after the request, i.e. d >= T/2, and reports floor(d/T + 0.5) before it")

t = gcra(3, 10)
check("gcra GCRA-10 reconfigure carry-over: reconfigure-keeps-tokens (B 3, T 10 us): acquire(1)@0, "
      "the key checked with (B 5, T 4 us) at 0",
      (acquire(t, 1, 0), reconfigure(t, Quota(period=datetime.timedelta(microseconds=20), count=5), 0)),
      ("allowed(2)", "allowed(3)"),
      "allowed(2), allowed(2): the 2 tokens left are kept as 2 tokens of 4 us (GCRA-10: A' = "
      "min(floor(A*T'/T), tau') = 8 us); rush keeps the theoretical arrival time (10 us) and reads it "
      "under the new tolerance of 20 us: 10 us, 2.5 permits, reported rounded half up")

t = gcra(1, 1)
check("gcra GCRA-10 (the row's worst, random-seed-1-trace-49, shrunk): B 1, T 1 us, the key checked with "
      "(B 349124622, T 10268450 us) at 0, before any check",
      reconfigure(t, Quota(period=datetime.timedelta(microseconds=349124622 * 10268450), count=349124622), 0),
      "allowed(349124622)",
      "allowed(1): the one token of the rested limiter is kept; rush has no state for the key yet and "
      "reads a rested limiter under the new quota: a full burst")

t = gcra(112, 1)
check("gcra GCRA-10 liveness: random-seed-1-trace-1, shrunk (B 112, T 1 us): acquire(1)@0, the key checked "
      "with (B 64, T 43856 us) at 0, acquire(64)@0",
      (acquire(t, 1, 0), reconfigure(t, Quota(period=datetime.timedelta(microseconds=64 * 43856), count=64), 0),
       acquire(t, 64, 0)),
      ("allowed(111)", "allowed(64)", "rejected(43857000ns)"),
      "allowed(111), allowed(64), allowed(0): 111 tokens capped at the new burst 64; rush keeps the 1 us "
      "pending and cannot admit a full burst anyway (d = -1 us)")

t = gcra(1, 10)
check("gcra CORE-10 time going backwards: retry-after-from-earlier-now (B 1, T 10 us, created at 100 us): "
      "acquire(1)@100, acquire(1)@95",
      (acquire(t, 1, 100), acquire(t, 1, 95)), ("rejected(10000ns)", "rejected(15000ns)"),
      "allowed(0), allowed(0) (evaluated at 100 us, CORE-10). Both refusals are the burst of 1: "
      "distance = tolerance - increment = 0, floor(0 + 0.5) = 0 (gcra.py:44-52); measured from 95 us, "
      "the retry adds the 5 us of time gone back (tat is the stored 'now' of the first call)")

t = gcra(3, 10)
check("gcra GCRA-4 admission: boundary-conforms (B 3, T 10 us): acquire(3)@0",
      acquire(t, 3, 0), "rejected(10000ns)",
      "allowed(0): a rested limiter admits a full burst; rush needs distance >= T/2 after the request "
      "(floor(d/T + 0.5) >= 1, gcra.py:44-52): it admits B - 1 at once")

t = gcra(3, 10)
check("gcra GCRA-4: acquire(B) is never admitted (B 3, T 10 us): acquire(3) at 0, 10 us, 1 s, 1 day",
      [acquire(t, 3, x) for x in (0, 10, 1_000_000, 86_400_000_000)], ["rejected(10000ns)"] * 4,
      "allowed(0) at each: rush stores nothing on a refusal of a fresh key and answers the same retry_after "
      "of T forever: a caller following it retries forever")

t = gcra(1, 1)
check("gcra GCRA-4 liveness: random-seed-1-trace-5, shrunk (B 1, T 1 us): acquire(1)@0, acquire(1)@1",
      (acquire(t, 1, 0), acquire(t, 1, 1)), ("rejected(1000ns)", "rejected(1000ns)"),
      "allowed(0), allowed(0): with a burst of 1 (count=1, maximum_burst=0) rush never admits anything")

t = Throttle(rate=Quota.per_second(1), limiter=GenericCellRatelimiter(store=DictionaryStore()))
answers = {acquire(t, 1, s * 1_000_000) for s in range(0, 3600, 7)}
check("gcra GCRA-4: Quota.per_second(1), one check every 7 s for an hour",
      sorted(answers), ["rejected(1000000000ns)"],
      "allowed(0) every time: the documented 'N per period' quota with N = 1 admits nothing")

t = gcra(2, 12)
steps = [reset(t, 74), acquire(t, 1, 75), acquire(t, 1, 78), acquire(t, 1, 89), acquire(t, 1, 93)]
check("gcra GCRA-4 liveness: random-seed-1-trace-22 (B 2, T 12 us): reset@74, acquire(1)@75, @78, @89, @93",
      steps, ["allowed(2)", "allowed(1)", "rejected(9000ns)", "allowed(1)", "rejected(8000ns)"],
      "allowed(2), allowed(1), allowed(0), allowed(1), allowed(0): each second permit of a burst of 2 waits "
      "until d >= T/2 (a sustained refusal of 15 us > T)")

t = gcra(10626, 51926111)
steps = [acquire(t, 1, 98), acquire(t, 13, 98), acquire(t, 388, 98), acquire(t, 10626, 99)]
check("gcra GCRA-6 retry-after: random-seed-1-trace-13 (B 10626, T 51926111 us, created at 98 us)",
      steps, ["allowed(10625)", "allowed(10612)", "allowed(10224)", "rejected(20926222732000ns)"],
      "..., rejected(20874296621000 ns): retry_after = emission_interval - distance (gcra.py:58) is one "
      "emission interval (51926111000 ns) past the Spec's instant, T/2 past rush's own")

t = Throttle(rate=Quota.per_second(10, maximum_burst=5), limiter=GenericCellRatelimiter(store=DictionaryStore()))
admitted = sum(acquire(t, 1, ms * 1000).startswith("allowed") for ms in range(10_000))
check("gcra (not a row: the mapping uses maximum_burst 0): Quota.per_second(10, maximum_burst=5), one "
      "check per ms for 10 s", admitted, 164,
      "GCRA-11: at most B + floor(elapsed / T) permits; the docs' 10 per second with a burst of 5 (quota.py:"
      "29-33) admit at most about 115; rush's emission interval is period / (count + maximum_burst) "
      "(gcra.py:19): 14 at once, then 15 per second. rush's Redis GCRA uses period / count (redis_gcra.py)")

try:
    Throttle(rate=Quota(period=datetime.timedelta(seconds=1), count=0),
             limiter=GenericCellRatelimiter(store=DictionaryStore())).check(KEY, 1)
    raised = None
except ZeroDivisionError:
    raised = "ZeroDivisionError"
check("gcra CORE-3 (not in the run: burst 0 makes the period 0 in the mapping): Quota(period=1 s, count=0), "
      "check(1)", raised, "ZeroDivisionError",
      "refused burst (mustBePositive) when built; Quota accepts it (quota.py:48-51, its docstring says "
      "'must be greater than 0', :24-27) and period / limit divides by 0 (gcra.py:19)")

t = gcra(3, 10)
check("gcra CORE-9 negative permits (random-seed-1-trace-31): acquire(-2^63)@0",
      acquire(t, -(1 << 63), 0), "OverflowError",
      "invalid(permits: mustNotBeNegative); timedelta * -2^63 leaves timedelta's range (gcra.py:26): the "
      "shim answers invalid(permits: notSupported)")

t = gcra(3, 10)
check("gcra: a huge positive count raises too: acquire(2^62)@0",
      acquire(t, 1 << 62, 0), "OverflowError",
      "neverAllowed (more than B); the increment or max(now, tat) + increment leaves datetime's range "
      "(gcra.py:26, 32)")


# --- fixed-window (PeriodicLimiter) ---------------------------------------------------------------

t = window(1, 1)
check("fixed-window CORE-7 never allowed: random-seed-1-trace-0, shrunk (N 1, W 1 us): acquire(2)@0",
      acquire(t, 2, 0), "allowed(-1)",
      "neverAllowed: the first check of a key (and the first of each period) is stored without any test "
      "(periodic.py:29-51): 2 permits over a limit of 1, remaining -1")

t = window(3, 10)
check("fixed-window CORE-7: first-event-opens (N 3, W 10 us): acquire(0)@4, acquire(4)@7",
      (query(t, 4), acquire(t, 4, 7)), ("allowed(3)", "rejected(7000ns)"),
      "allowed(3), neverAllowed: inside a period, remaining < quantity is refused with the period's end "
      "(periodic.py:29-39, 97-101), also for more than the limit; and the query at 4 us opened that period")

t = window(5, 60_000_000)
at(0)
first = t.check(KEY, 100)
at(120_000_000)
second = t.check(KEY, 100)
check("fixed-window CORE-7 (as random-seed-1-trace-0): Quota.per_minute(5), check(100) at 0 and at 2 min: "
      "(limited, remaining, reset_after in s)",
      [(r.limited, r.remaining, r.reset_after.total_seconds()) for r in (first, second)],
      [(False, -95, 60.0), (False, -95, -60.0)],
      "neverAllowed twice; the call that starts a new period also reports reset_after measured from the old "
      "period's start (periodic.py:53-58 with elapsed_time of :27): -60 s")

t = window(3, 10)
steps = [acquire(t, 3, 9), acquire(t, 1, 9), acquire(t, 3, 10), acquire(t, 1, 19)]
check("fixed-window FW-5 remaining: same-as-interval-bucket (N 3, W 10 us): acquire(3)@9, acquire(1)@9, "
      "acquire(3)@10, acquire(1)@19",
      steps, ["allowed(0)", "rejected(10000ns)", "rejected(9000ns)", "allowed(-1)"],
      "..., allowed(2) at 19 us: the window [9, 19) is over; rush's period still holds at elapsed == period "
      "(rate.period > elapsed and rate.period < elapsed both false, periodic.py:29-31, 41): the call is "
      "added to the old period without a test")

t = window(1, 10)
steps = [acquire(t, 1, 0), acquire(t, 1, 10), acquire(t, 1, 11)]
check("fixed-window FW-5: the instant created_at + period admits anything, and is then forgotten "
      "(N 1, W 10 us): acquire(1)@0, @10, @11",
      steps, ["allowed(0)", "allowed(-1)", "allowed(0)"],
      "allowed(0), allowed(0), rejected(9 us): rush admits 2 permits in [10, 11] us, twice the limit "
      "in one window of the Spec (the suite stops at the malformed remaining)")

t = window(3, 819802)
steps = [acquire(t, 1, 0), acquire(t, 1, 819802), acquire(t, 1, 819803)]
check("fixed-window FW-5 over-promise: random-seed-1-trace-4, shrunk (N 3, W 819802 us): acquire(1)@0, "
      "@W, @W+1 us",
      steps, ["allowed(2)", "allowed(1)", "allowed(2)"],
      "allowed(2), allowed(2), allowed(1): the call at W counted in the old period is lost when the next "
      "call opens a new one")

t = window(3, 10)
steps = [acquire(t, 3, 0), query(t, 15), acquire(t, 1, 5)]
check("fixed-window CORE-10 time going backwards: refusals-record-nothing (N 3, W 10 us): acquire(3)@0, "
      "acquire(0)@15, acquire(1)@5",
      steps, ["allowed(0)", "allowed(3)", "allowed(2)"],
      "allowed(0), allowed(3), rejected(5 us): the query at 15 us started a new period (check with 0, "
      "periodic.py:41-44); back at 5 us, elapsed is negative and the new period counts it")

t = window(1, 1)
steps = [acquire(t, 1, 0), acquire(t, 1, 0)]
check("fixed-window CORE-10: random-seed-1-trace-33, shrunk (N 1, W 1 us, created at 1 us): acquire(1)@0 "
      "twice",
      steps, ["allowed(0)", "rejected(1000ns)"],
      "allowed(0), rejected(2000 ns): evaluated at the creation (1 us, CORE-10), the window is [1, 2) us; "
      "rush keeps no latest instant and opens [0, 1] at the first check")

t = window(3, 10)
first = acquire(t, 2, 5)
at(15)
zero = Quota(period=datetime.timedelta(microseconds=10), count=0)
check("fixed-window CORE-13 reconfigure-refused (N 3, W 10 us): acquire(2)@5, the key checked with "
      "(N 0, W 10 us) at 15",
      (first, reconfigure(t, zero, 15)), ("allowed(1)", "allowed(1)"),
      "allowed(1), invalid(limit: mustBePositive): Quota accepts a count of 0 (quota.py:48-51 refuses "
      "only a negative one)")

t = window(3, 1)
steps = [acquire(t, 1, 0), query(t, 1), acquire(t, -2, 1)]
check("fixed-window CORE-9 negative permits: zero-release-invalid (N 3, W 1 us): acquire(1)@0, "
      "acquire(0)@1, acquire(-2)@1",
      steps, ["allowed(2)", "allowed(2)", "allowed(4)"],
      "allowed(2), allowed(2), invalid(permits: mustNotBeNegative): remaining < quantity is false for a "
      "negative quantity; remaining - quantity grows (periodic.py:32, 46-49)")

t = window(1, 1)
check("fixed-window CORE-9 (the row's worst): random-seed-1-trace-28, shrunk (N 1, W 1 us): acquire(-2^63)@0",
      acquire(t, -(1 << 63), 0), "allowed(%d)" % (1 + (1 << 63)),
      "invalid(permits: mustNotBeNegative); a remaining of 2^63 + 1, which the shim sends as Int64.max")

t = window(2, 10)
steps = [acquire(t, 2, 3), reset(t, 5), acquire(t, 1, 8),
         reconfigure(t, Quota(period=datetime.timedelta(microseconds=5), count=2), 16)]
check("fixed-window FW-9 reset: first-event-reset-reconfigure (N 2, W 10 us): acquire(2)@3, reset@5, "
      "acquire(1)@8, the key checked with (N 2, W 5 us) at 16",
      steps, ["allowed(0)", "allowed(2)", "allowed(1)", "allowed(2)"],
      "..., allowed(1) at 16 us: after a reset the window opens at the next admission (8 us, FW-13); rush's "
      "reset opens a period at the reset (periodic.py:60-69), [5, 15], over at 16 us")

t = window(3, 10)
steps = [acquire(t, 2, 5), reconfigure(t, Quota(period=datetime.timedelta(microseconds=4), count=2), 6)]
check("fixed-window FW-10 reconfigure carry-over: reconfigure-keeps-count (N 3, W 10 us): acquire(2)@5, "
      "the key checked with (N 2, W 4 us) at 6",
      steps, ["allowed(1)", "allowed(1)"],
      "allowed(1), allowed(0): the 2 permits used are kept against the new limit of 2; rush keeps the "
      "stored remaining of the old quota (periodic.py:46-49; only a new period uses rate.limit, :11-14)")

t = window(5, 1)
steps = [acquire(t, 1, 0), reconfigure(t, Quota(period=datetime.timedelta(microseconds=25), count=2), 0)]
check("fixed-window FW-10: random-seed-1-trace-48, shrunk (N 5, W 1 us): acquire(1)@0, the key checked with "
      "(N 2, W 25 us) at 0",
      steps, ["allowed(4)", "allowed(4)"],
      "allowed(4), allowed(1): 1 used of the new limit 2; rush reports (and admits, below) the old quota's "
      "remaining")
check("fixed-window FW-10: ... and then admits 4 permits under the limit of 2: acquire(4)@0",
      acquire(t, 4, 0), "allowed(0)", "rejected(25 us): 5 permits in one window of limit 2")

try:
    Quota(period=datetime.timedelta(microseconds=10), count=0)
    accepted = True
except ValueError:
    accepted = False
check("fixed-window CORE-3 validation: refuse-zero-limit (N 0, W 10 us)", accepted, True,
      "refused limit (mustBePositive)")

t = window(0, 10)
check("fixed-window CORE-3: a limit of 0 then admits whatever the first check asks: acquire(5)@0",
      acquire(t, 5, 0), "allowed(-5)", "(the Spec refuses the configuration)")

t = window(3, 10)
steps = [acquire(t, 3, 0), query(t, 9), acquire(t, 1, 9), query(t, 10)]
check("fixed-window CORE-9 acquire(0) as a query: window-edges (N 3, W 10 us): acquire(3)@0, acquire(0)@9, "
      "acquire(1)@9, acquire(0)@10",
      steps, ["allowed(0)", "allowed(0) (peek: limited)", "rejected(1000ns)", "allowed(0)"],
      "..., allowed(3) at 10 us: the window [0, 10) is over; rush's period still holds at elapsed == period")

t = window(3, 10)
check("fixed-window CORE-7: acquire(2^63 - 1) at the start of a period is admitted", acquire(t, INT64_MAX, 0),
      "allowed(%d)" % (3 - INT64_MAX), "neverAllowed")

print("\nrush %s: %d findings checked, %d no longer reproduce" % (rush.__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
