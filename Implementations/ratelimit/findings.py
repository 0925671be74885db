#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `ratelimit` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/ratelimit/findings.py

Each check makes `ratelimit.limits(calls=N, period=W / 10^9, clock=CLOCK)` (RateLimitDecorator)
around a function that does nothing, and calls it at instants given in nanoseconds from the
protocol's instant 0. The clock is the decorator's own `clock` argument: it returns what
time.monotonic() reads at the instant, the float nearest to (2^22 s + instant) (48.5 days after
boot, as in the shim). A call is admitted when it returns, refused when it raises
RateLimitException, whose `period_remaining` (seconds, a float) is the library's wait; it is
shown in nanoseconds rounded up, as the shim sends it. "remaining" is what the shim reports: how
many more calls the library would admit at the same instant, counted by calling a copy.

It prints the library's answers next to the Spec's (FW-13 `first-event`) and exits 1 if a finding
no longer reproduces.
"""

import copy
import math
import sys
import threading
from fractions import Fraction

import ratelimit
from ratelimit import RateLimitException, limits

NS = 1_000_000_000
UPTIME_NS = (1 << 22) * NS


class Clock:
    ns = 0

    def __call__(self):
        return (UPTIME_NS + self.ns) / NS


CLOCK = Clock()
FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        FAILED.append(name)


def nothing():
    return None


def make(calls, window_ns, created_ns):
    CLOCK.ns = created_ns
    decorator = limits(calls=calls, period=window_ns / NS, clock=CLOCK)
    return decorator, decorator(nothing)


def call(pair, ns):
    """One call at ns: ("allowed", remaining) or ("rejected", wait in ns rounded up)."""
    decorator, wrapped = pair
    CLOCK.ns = ns
    try:
        wrapped()
    except RateLimitException as refusal:
        wait = Fraction(refusal.period_remaining) * NS
        return ("rejected", math.ceil(wait))
    return ("allowed", admits_next(decorator, 1000))


def admits_next(decorator, cap):
    """How many calls a copy of the decorator admits at the current instant, one after the other
    (at most cap)."""
    probe = copy.copy(decorator)
    probe.lock = threading.RLock()
    wrapped = probe(nothing)
    for n in range(cap):
        try:
            wrapped()
        except RateLimitException:
            return n
    return cap


def period_minus_elapsed_ns(window_ns, last_reset_ns, now_ns):
    """The library's test `period - (clock() - last_reset) <= 0` (decorators.py:66, 90-91), as
    the float it computes, in ns (exactly)."""
    period = window_ns / NS
    elapsed = (UPTIME_NS + now_ns) / NS - (UPTIME_NS + last_reset_ns) / NS
    return float(Fraction(period - elapsed) * NS)


# --- CORE-3: no validation (decorators.py:28-29) --------------------------------------------------
pair = make(0, 10, 0)
# (The wait: period_remaining is the float 1e-08 s, 1.0000000000000000209e-08: 11 ns rounded up.)
check("CORE-3 fixed-window/refuse-zero-limit: calls=0 is taken as 1 (max(1, ...), decorators.py:28)",
      (pair[0].clamped_calls, call(pair, 0), call(pair, 0)),
      (1, ("allowed", 0), ("rejected", 11)),
      "refused limit (mustBePositive)")
for name, window in (("refuse-negative-window", -10), ("refuse-zero-window", 0)):
    pair = make(1, window, 0)
    check("CORE-3 fixed-window/%s: period=%r is accepted, and every call restarts the window "
          "(period_remaining <= 0 at once, decorators.py:66-68): no limit at all" % (name, window / NS),
          (call(pair, 0), admits_next(pair[0], 1000)),
          (("allowed", 1000), 1000),
          "refused windowNanoseconds (mustBePositive)")

# --- The first window starts at the decorator's creation (decorators.py:34) ----------------------
# fixed-window/random-seed-1-trace-24 (FW-6 early retry): limit 6, W 23 ns, created at 67 ns; six
# calls at 89 ns are admitted in the window [67, 90) that the decorator opened when it was made;
# the seventh is told to wait period_remaining = 67 + 23 - 89 = 1 ns. FW-13 first-event opens the
# window at the first call, 89 ns: the Spec's wait is 23 ns.
pair = make(6, 23, 67)
answers = [call(pair, 89) for _ in range(7)]
check("FW-6 fixed-window/random-seed-1-trace-24: the window opened at the creation, 67 ns, ends at 90 ns",
      answers[-2:], [("allowed", 0), ("rejected", 1)], "allowed(0), rejected(23ns) (window [89, 112))")
# Its shrunk case (limit 1, W 5 ns, created at 0): a call at 5 ns, one window after the creation,
# is counted in the creation's window (the float test says 0.34 ns of it remain: see the edges
# below), and the next is told 1 ns; the Spec opens the window at 5 ns: 5 ns.
pair = make(1, 5, 0)
check("FW-6 fixed-window/random-seed-1-trace-24, shrunk: a call exactly one period after the creation "
      "is counted in the creation's window",
      (call(pair, 5), call(pair, 5), round(period_minus_elapsed_ns(5, 0, 5), 2)),
      (("allowed", 0), ("rejected", 1), 0.34),
      "allowed(0), rejected(5ns)")
# fixed-window/random-seed-1-trace-17 (FW-5 difference): limit 2^53 - 1, W 5434939347 ns,
# created at 53 ns. The creation's window ends at 5434939400 ns: the call at 6284354506 ns (1 ns
# before the window the Spec opened at the first call, 849415160 ns, ends) starts a new window;
# so the call at 7511987466 ns is its second there, where the Spec opens a window: the library
# promises one permit less.
pair = make(2 ** 53 - 1, 5434939347, 53)
big = [call(pair, ns) for ns in (849415160, 6284354506, 7511987466)]
check("FW-5 fixed-window/random-seed-1-trace-17: a window restarted by the creation's window, 1 ns "
      "before the Spec's ends",
      (big[0][0], big[1][0], big[2][0], pair[0].num_calls, pair[0].last_reset == (UPTIME_NS + 6284354506) / NS),
      ("allowed", "allowed", "allowed", 2, True),
      "allowed(9007199254740989), allowed(9007199254740989) (within 1 ns), allowed(9007199254740990)")

# --- The window's edge, decided on float readings (decorators.py:63-68, 90-91) ------------------
# fixed-window/random-seed-1-trace-7, shrunk (FW-5 over-promise): limit 3, W 2049 ns. A call at
# 80181 ns restarts the window; the one at 82230 ns, exactly one period later, does not: the
# readings of 82230 and 80181 ns (2^22 s + ..., floats 0.93 ns apart) differ by 2048.91 ns, less
# than the period (2049 ns): period_remaining is +0.09 ns. The call at 82231 ns restarts the
# window: the library promises 2 more there, where the Spec, whose window started at 82230 ns and
# holds that call, allows 1.
pair = make(3, 2049, 0)
answers = [call(pair, ns) for ns in (80181, 82230, 82231)]
check("FW-5 fixed-window/random-seed-1-trace-7, shrunk: the edge at exactly one period is 1 ns late",
      (answers, round(period_minus_elapsed_ns(2049, 80181, 82230), 2)),
      ([("allowed", 2), ("allowed", 1), ("allowed", 2)], 0.09),
      "allowed(2), allowed(2), allowed(1)")
# Its original trace (limit 60, W 2049 ns, created at 72 ns): 44 calls at the trace's instants; at
# step 43 (82302 ns, one period after the restart at 80253 ns) the edge is 1 ns late again, so the
# window the Spec opens at 82302 ns opens for the library at 82920 ns, 618 ns later: it promises 59
# where the Spec allows 58.
TRACE_7 = [328, 2085, 4135, 6184, 8233, 10281, 10281, 12330, 14380, 16430, 18478, 20527, 22577, 24625,
           24932, 26981, 29030, 31079, 33129, 35177, 37227, 39275, 41323, 43373, 45422, 47470, 49518,
           51566, 53615, 55664, 57714, 59762, 61811, 63860, 65909, 67957, 70007, 72056, 74104, 76153,
           78203, 80253, 82302, 82920]
pair = make(60, 2049, 72)
answers = [call(pair, ns) for ns in TRACE_7]
check("FW-5 fixed-window/random-seed-1-trace-7 (worst): step 44 at 82920 ns, the window restarted "
      "618 ns after the Spec's",
      (answers[-2], answers[-1], round(period_minus_elapsed_ns(2049, 80253, 82302), 2)),
      (("allowed", 58), ("allowed", 59), 0.09),
      "step 43 allowed(59), step 44 allowed(58)")
# fixed-window/random-seed-1-trace-11, shrunk (FW-5 difference): limit 4, W 245579714412 ns; a
# call one period after the restart at 4740722606348 ns is still counted in the old window.
pair = make(4, 245579714412, 0)
answers = [call(pair, ns) for ns in (4740722606348, 4986302320760, 4986302320760)]
check("FW-5 fixed-window/random-seed-1-trace-11, shrunk: the edge 1 ns late (safe)",
      (answers, round(period_minus_elapsed_ns(245579714412, 4740722606348, 4986302320760), 2)),
      ([("allowed", 3), ("allowed", 2), ("allowed", 1)], 0.13),
      "allowed(3), allowed(3), allowed(2)")
# fixed-window/random-seed-1-trace-28, shrunk (FW-5 difference): limit 3, W 7757 ns, created at
# 0: the call at 7757 ns, one period after the creation, is counted in the creation's window
# (late edge), so its window restarts at 15513 ns, where the Spec's (opened at 7757 ns) has 1 ns
# left; at 15515 ns the library counts 2 in its window, the Spec 1 in a new one.
pair = make(3, 7757, 0)
answers = [call(pair, ns) for ns in (7757, 15513, 15515)]
check("FW-5 fixed-window/random-seed-1-trace-28, shrunk: the creation's window and a late edge (safe)",
      (answers, period_minus_elapsed_ns(7757, 0, 7757) > 0),
      ([("allowed", 2), ("allowed", 2), ("allowed", 1)], True),
      "allowed(2), allowed(1), allowed(2)")

# --- At --tolerance 0 (README.md): the same edges, judged strictly --------------------------------
# fixed-window/random-seed-1-trace-4, shrunk (FW-13 over-promise at --tolerance 0): limit 3,
# W 819802 ns, created at 38 ns; restart at 65083605 ns, the edge one period later (65903407 ns)
# is 1 ns late, the call at 65903409 ns restarts the window.
pair = make(3, 819802, 38)
answers = [call(pair, ns) for ns in (65083605, 65903407, 65903409)]
check("FW-13 (--tolerance 0) fixed-window/random-seed-1-trace-4, shrunk: the edge 1 ns late",
      (answers, period_minus_elapsed_ns(819802, 65083605, 65903407) > 0),
      ([("allowed", 2), ("allowed", 1), ("allowed", 2)], True),
      "allowed(2), allowed(2), allowed(1)")
# fixed-window/random-seed-1-trace-5 (FW-6 early retry at --tolerance 0): limit 10, W 512 ns,
# created at 4194303999999407 ns; ten calls one per ns from ...408 ns fill the creation's window
# [...407, ...919): the call at ...418 ns is told 501 ns; the Spec's window opens at the first
# call, ...408: 502 ns. The creation's window again, 1 ns apart (within the profile's tolerance).
pair = make(10, 512, 4194303999999407)
answers = [call(pair, 4194303999999408 + k) for k in range(11)]
check("FW-6 (--tolerance 0) fixed-window/random-seed-1-trace-5: the creation's window, 1 ns before the Spec's",
      answers[-2:], [("allowed", 0), ("rejected", 501)], "allowed(0), rejected(502ns)")

# fixed-window/random-seed-1-trace-20 (FW-6 difference at --tolerance 0): limit 1, W 1 ns: the
# wait is period_remaining = the period itself, the float 1e-09 s = 1.0000000000000000622e-09 s, a
# little over 1 ns: 2 ns rounded up, 1 ns late (the other waits 1 ns late at --tolerance 0 are the
# same: a period that is no whole number of nanoseconds as a float of seconds).
pair = make(1, 1, 0)
check("FW-6 (--tolerance 0) fixed-window/random-seed-1-trace-20: a period of 1 ns is a float a little over 1 ns",
      (call(pair, 0), call(pair, 0), Fraction(1 / NS) * NS > 1), (("allowed", 0), ("rejected", 2), True),
      "allowed(0), rejected(1ns)")

print("%d checks, %d no longer reproduce (ratelimit %s)" % (CHECKS[0], len(FAILED), ratelimit.__version__))
sys.exit(1 if FAILED else 0)
