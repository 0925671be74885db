#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `limits` library alone, without the shim.

    Implementations/.venv/bin/python Implementations/limits/findings.py

Each check drives FixedWindowRateLimiter / MovingWindowRateLimiter /
SlidingWindowCounterRateLimiter over MemoryStorage directly, with `time.time()` as
limits.storage.memory and limits.strategies look it up replaced by a settable clock (Unix seconds,
a float: the one nearest to the instant, as time.time() reads it; the protocol's instant 0 is the
first multiple of the window at or after 1,700,000,000 s, as in the shim, unless a check says
otherwise) and the storage's 0.01 s expiry timer replaced by one that never fires (it only drops
entries that have expired; no check's answers depend on it).
It prints what the library answers next to what the Spec answers, and exits 1 if any finding no
longer reproduces (for instance after a version change).

Then the same for RedisStorage (README.md, "Redis storage (`--redis`)"): one ClockedRedis
(../common/redisclock.py: an unmodified redis-server on a Unix socket, its wall clock, which TTL,
PTTL and expiry read, set to the same instant as time.time(), which limits.storage.redis reads too),
started once, a RedisStorage("redis+unix://<socket>") with a key prefix of its own per limiter;
one check per finding group of the Redis run at least (skipped, with a word, without redis-server).

The cases are the smallest cases of the run of README.md ("Findings"), with the instants in
seconds from the protocol's instant 0 (a string where they have a fraction: "0.00069" is 690 us),
plus the worst case of a row where it shows more. A wait is the library's reset time minus what
its clock reads, in seconds (exact, shown as an int when whole), or, where a check says `wait_ns`,
in nanoseconds rounded up, as the shim sends it.
"""

import os
import sys
import types
from fractions import Fraction

import limits
import limits.storage.memory as memory
import limits.strategies as strategies
from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage

PRESENT = 1_700_000_000
INT64_MAX = (1 << 63) - 1
NS = 1_000_000_000


class Clock:
    origin = PRESENT  # the Unix time (s) of the protocol's instant 0 for the current limiter
    now = float(PRESENT)

    def time(self):
        return self.now


CLOCK = Clock()
memory.time = types.SimpleNamespace(time=CLOCK.time)
strategies.time = types.SimpleNamespace(time=CLOCK.time)


class _NoTimer:
    def __init__(self, *args, **kwargs):
        pass

    def start(self):
        pass

    def is_alive(self):
        return True


memory.threading = types.SimpleNamespace(Timer=_NoTimer, RLock=memory.threading.RLock)


def origin_for(window):
    """The shim's origin: the first multiple of the window at or after 1,700,000,000 s."""
    return -(-PRESENT // window) * window if window > 0 else PRESENT


def reading(seconds):
    """What time.time() reads `seconds` (an int, or a decimal string) after instant 0: the float
    nearest to origin + seconds (float() of a Fraction is correctly rounded, like the shim's)."""
    return float(CLOCK.origin + Fraction(seconds))


def make(strategy, limit, window, origin=None, created=0):
    CLOCK.origin = origin_for(window) if origin is None else origin
    CLOCK.now = reading(created)
    limiter = strategy(MemoryStorage())
    item = RateLimitItemPerSecond(limit, window)
    return limiter, item


def at(seconds):
    CLOCK.now = reading(seconds)


def wait(limiter, item):
    """The library's reset time (get_window_stats().reset_time) minus what its clock reads now, in
    seconds, exactly (a Fraction shown as an int when whole): what flask-limiter sends as
    Retry-After, and what a caller computes (reset_time - time.time())."""
    value = Fraction(limiter.get_window_stats(item).reset_time) - Fraction(CLOCK.now)
    return int(value) if value.denominator == 1 else float(value)


def wait_ns(limiter, item):
    """The same wait in nanoseconds, rounded up: what the shim sends as the retry-after."""
    value = (Fraction(limiter.get_window_stats(item).reset_time) - Fraction(CLOCK.now)) * NS
    return -((-value.numerator) // value.denominator)


def late_ns(first, now):
    """How far a wait measured as (reading of `first` + W) - (reading of `now`) ends after the
    instant first + W, in ns rounded up: the reading of `first` is off its instant by one amount,
    the reading of `now` by another (each less than half the floats' spacing), and the wait is off
    by their difference. The arithmetic of the float clock, nothing of the library's."""
    value = ((Fraction(reading(first)) - CLOCK.origin - Fraction(first))
             - (Fraction(reading(now)) - CLOCK.origin - Fraction(now))) * NS
    return -((-value.numerator) // value.denominator)


def stats(limiter, item):
    return (wait(limiter, item), limiter.get_window_stats(item).remaining)


def remaining(limiter, item):
    return limiter.get_window_stats(item).remaining


FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        print("     (expected the library to answer %s)" % (expected_by_library,))
        FAILED.append(name)


FW = strategies.FixedWindowRateLimiter
MW = strategies.MovingWindowRateLimiter
SWC = strategies.SlidingWindowCounterRateLimiter


# --- all three strategies -------------------------------------------------------------------------

check("CORE-3 (all three) refuse-zero-limit, refuse-negative-limit, refuse-zero-window, "
      "refuse-negative-window: RateLimitItem validates nothing",
      (RateLimitItemPerSecond(0, 10).amount, RateLimitItemPerSecond(-1, 10).amount,
       RateLimitItemPerSecond(1, 0).get_expiry(), RateLimitItemPerSecond(1, -10).get_expiry()),
      (0, -1, 1, -10),
      "refused limit (mustBePositive) twice, refused windowNanoseconds (mustBePositive) twice")

# --- fixed window ---------------------------------------------------------------------------------

lim, item = make(FW, 3, 10)
at(5)
lim.hit(item, cost=3)
at(9)
check("FW-13 (declared first-event, not a finding): the window starts at the first hit (5 s), not at 0 s",
      (lim.hit(item), stats(lim, item)), (False, (6, 0)),
      "first-event: rejected(6 s), the window [5 s, 15 s); origin alignment would say rejected(1 s)")

lim, item = make(FW, 5, 1000, created="1000.00043")
answers = []
for t, n in (("2000.00042", 1), ("3000.00043", 1), ("4000.00042", 3), ("5000.00043", 2)):
    at(t)
    answers.append((lim.hit(item, cost=n), remaining(lim, item)))
check("FW-13 (declared first-event, not a finding), random-seed-1-trace-21: windows open at "
      "sub-second first hits; a hit 10 us before the end of [3000.00043 s, 4000.00043 s) is in it",
      answers, [(True, 4), (True, 4), (True, 1), (True, 3)],
      "allowed(4), allowed(4), allowed(1), allowed(3), as the Spec's first-event windows")

lim, item = make(FW, 3, 10)
at(0)
a = lim.hit(item, cost=3)
at(15)
q = remaining(lim, item)  # a read: MemoryStorage.get() drops the expired key
at(5)
check("CORE-10 fixed-window/refusals-record-nothing (over-admission): a query at 15 s forgets the "
      "window of 0 s; back at 5 s acquire(1) is admitted",
      (a, q, lim.hit(item), remaining(lim, item)), (True, 3, True, 2),
      "step 3: rejected(5 s): the query at 15 s recorded nothing, 5 s is in the full window [0 s, 10 s)")

lim, item = make(FW, 3, 1, created="3.59155")
at("3.59155")
lim.clear(item)
at(0)
a = (lim.hit(item), remaining(lim, item))
at("1.23053")
check("CORE-10 fixed-window/random-seed-1-trace-24, shrunk (over-promise): after a reset at 3.59155 s, "
      "a hit at 0 s opens [0 s, 1 s); at 1.23053 s that window is over and a new one opens",
      (a, lim.hit(item), remaining(lim, item)), ((True, 2), True, 2),
      "step 3: allowed(1): evaluated at 3.59155 s, the reset's instant (CORE-10), both hits are in the "
      "window [3.59155 s, 4.59155 s)")

lim, item = make(FW, 6, 23, created="23.00066")
at("23.00066")
answers = [lim.hit(item)]
lim.clear(item)
for t in ("24.98666", "20.4798", "20.35043", "6.01609"):
    at(t)
    answers.append(lim.hit(item))
at("29.01608")
lim.clear(item)
for t in ("0.28375", "0.28376", 0, 23):
    at(t)
    answers.append(lim.hit(item))
at("30.34666")
check("CORE-10 fixed-window/random-seed-1-trace-24, the row's worst (4 permits over): after the reset "
      "at 29.01608 s, hits at 0.28375 s to 23 s fill [0.28375 s, 23.28375 s); at 30.34666 s a new "
      "window opens",
      (answers, lim.hit(item), remaining(lim, item)), ([True] * 9, True, 5),
      "step 13: allowed(1): the four hits after the reset are recorded at 29.01608 s, in the window "
      "[29.01608 s, 52.01608 s) with this one")

lim, item = make(FW, 1, 1, created="0.00001")  # created at 10 us, the instant of a release (none in limits)
at(0)
a = lim.hit(item)
check("CORE-10 fixed-window/random-seed-1-trace-33, shrunk (early retry): the limiter exists from 10 us, "
      "the first hit at 0 s opens [0 s, 1 s)",
      (a, lim.hit(item), wait_ns(lim, item)), (True, False, 1_000_000_000),
      "step 3: rejected(1000010000 ns): evaluated at 10 us, the creation (createdAtFirstEvent: the "
      "release's instant), the window is [10 us, 1.00001 s)")

lim, item = make(FW, 1, 7, created="20.81869")
at("18.86968")
a = lim.hit(item)
check("CORE-10 fixed-window/random-seed-1-trace-33 (early retry, 1.94901 s): created at 20.81869 s, the "
      "first hit at 18.86968 s opens [18.86968 s, 25.86968 s)",
      (a, lim.hit(item), wait_ns(lim, item)), (True, False, 7_000_000_000),
      "step 3: rejected(8949010000 ns): the window opens at 20.81869 s")

lim, item = make(FW, 1, 1)
at(0)
check("CORE-7 fixed-window/random-seed-1-trace-0, shrunk (retry forever): hit(cost=2) above the limit "
      "of 1 is refused with a finite wait, and counted",
      (lim.hit(item, cost=2), stats(lim, item), lim.hit(item)), (False, (1, 0), False),
      "neverAllowed (and acquire(1) would then be allowed(0))")

lim, item = make(FW, 3, 10, created=4)
at(4)
q = remaining(lim, item)
at(7)
check("CORE-7 fixed-window/first-event-opens (retry forever): the refused acquire(4) opens a window",
      (q, lim.hit(item, cost=4), stats(lim, item)), (3, False, (10, 0)),
      "neverAllowed: 4 > limit 3 opens nothing")

lim, item = make(FW, 5, 4, created="0.00069")
answers = []
for t, n in (("0.00069", 2), ("0.00069", 1), ("0.0007", 5), ("0.00071", 1), ("0.00071", 2),
             ("0.00072", 1), ("0.00073", 6)):
    at(t)
    answers.append(lim.hit(item, cost=n) or wait_ns(lim, item))
check("CORE-7 fixed-window/random-seed-1-trace-20 (retry forever; the row's worst, 3999979973 ns late): "
      "in the window [0.00069 s, 4.00069 s) the refused acquire(5) is counted, then acquire(1) is "
      "refused too",
      answers, [True, True, 3_999_989_987, 3_999_979_973, 3_999_979_973, 3_999_969_960, 3_999_959_946],
      "rejected(3999990000 ns) (the library's float reset is 13 ns earlier: the same 10 us reading, "
      "exact since CONF-7), "
      "then allowed(1), allowed(0), allowed(1) (a refused acquire counts nothing), and neverAllowed "
      "for acquire(6)")

lim, item = make(FW, 1, 9, created="0.00072")
at("0.00072")
a = lim.hit(item)
answers = []
for t in ("0.00073", "0.00074", "0.00075", "0.00076", "0.10232"):
    at(t)
    answers.append((lim.hit(item), wait_ns(lim, item)))
check("FW-6 fixed-window/random-seed-1-trace-19 (difference, 69 ns late): the reset time is the float "
      "time.time() + 9 of the hit at 0.00072 s (memory.py:97), the wait that minus the reading at "
      "0.10232 s: the readings are off their instants by +24.1 ns and -44.2 ns",
      (a, answers, late_ns("0.00072", "0.10232")),
      (True, [(False, 8_999_989_987), (False, 8_999_979_973), (False, 8_999_969_960), (False, 8_999_959_946),
              (False, 8_898_400_069)], 69),
      "step 6: rejected(8898400000 ns), the window [0.00072 s, 9.00072 s) (steps 2-5: 13 to 54 ns "
      "earlier, the same 10 us reading: exact since CONF-7)")

lim, item = make(FW, 1, 9, created="0.00072")
at("0.00072")
a = lim.hit(item)
answers = []
for t in ("0.34646", "0.34647", "0.34648"):
    at(t)
    answers.append((lim.hit(item), wait_ns(lim, item)))
at("9.00071")
b = lim.hit(item)
at("9.00072")
check("FW-6 fixed-window/random-seed-1-trace-19, step 23 (the row's worst, 132 ns late), and the "
      "library's own clock: refused at 9.00071 s, admitted at 9.00072 s, the Spec's instant (its reset "
      "float is the very reading of 9.00072 s, memory.py:119)",
      (a, answers, late_ns("0.00072", "0.34648"), b, lim.hit(item),
       reading("0.00072") + 9 == reading("9.00072")),
      (True, [(False, 8_654_259_921), (False, 8_654_249_907), (False, 8_654_240_132)], 132, False, True, True),
      "step 23: rejected(8654240000 ns) (steps 21-22: 79 and 93 ns early, the same 10 us reading); "
      "admitted from 9.00072 s")

lim, item = make(FW, 18777856, 129, created="129.00034")
at("129.00034")
r = lim.hit(item, cost=-1)
check("CORE-9 fixed-window/random-seed-1-trace-2 (over-promise): hit(cost=-1) is admitted and lowers "
      "the count",
      (r, remaining(lim, item), lim.hit(item, cost=-2 ** 63), remaining(lim, item) > INT64_MAX),
      (True, 18777857, True, True),
      "invalid(permits: mustNotBeNegative); a query shows 18777856; cost -2^63 leaves a remaining "
      "above Int64.max (the shim sends Int64.max: the row's worst, random-seed-1-trace-48)")

lim, item = make(FW, 5, 1000, created="1000.00043")
answers = []
for t, n in (("2000.00042", 1), ("3000.00043", 1), ("4000.00042", 3), ("5000.00043", 2)):
    at(t)
    answers.append((lim.hit(item, cost=n), remaining(lim, item)))
at("5122.43888")
answers.append((lim.hit(item, cost=4), wait_ns(lim, item)))
at(6000)
answers.append((lim.hit(item), wait_ns(lim, item)))
late = (late_ns("5000.00043", "5122.43888"), late_ns("5000.00043", 6000))
at("6000.00043")
answers.append((lim.hit(item, cost=4), remaining(lim, item)))
check("FW-13 fixed-window/random-seed-1-trace-21 (difference): step 6's wait is 141 ns late (the readings "
      "of 5000.00043 s and 5122.43888 s are off by +107.1 ns and -33.3 ns); the refused acquire(4) is "
      "counted, so at 6000 s (step 7, the row's worst, 430108 ns late) the window [5000.00043 s, "
      "6000.00043 s) is full; at 6000.00043 s, the Spec's instant, a new window opens",
      (answers, late), ([(True, 4), (True, 4), (True, 1), (True, 3), (False, 877_561_550_141),
                         (False, 430_108), (True, 1)], (141, 108)),
      "step 6: rejected(877561550000 ns); step 7: allowed(2); acquire(4) admitted at 6000.00043 s")

lim, item = make(FW, 5, 1)
at(0)
check("FW-13 fixed-window/random-seed-1-trace-21, step 7's cause, shrunk: acquire(2), refused "
      "acquire(4), acquire(1) at 0 s",
      (lim.hit(item, cost=2), lim.hit(item, cost=4), lim.hit(item), wait(lim, item)),
      (True, False, False, 1), "allowed(3), rejected(1 s), allowed(2)")

lim, item = make(FW, 3, 28, created="0.00023")
at("0.00023")
a = (lim.hit(item, cost=2), lim.hit(item), remaining(lim, item))
answers = []
for t, n in (("0.8956", 3), ("1.16932", 1), ("1.20448", 3)):
    at(t)
    answers.append((lim.hit(item, cost=n), wait_ns(lim, item)))
at("28.00022")
b = lim.hit(item)
at("28.00023")
check("FW-13 fixed-window/random-seed-1-trace-27 (difference, 142 ns late): the reset is the float "
      "time.time() + 28 of the hit at 0.00023 s; the readings of 0.00023 s and 1.20448 s are off by "
      "+73.9 ns and -67.2 ns; refused at 28.00022 s, admitted at 28.00023 s, the Spec's instant",
      (a, answers, late_ns("0.00023", "1.20448"), b, lim.hit(item)),
      ((True, True, 0), [(False, 27_104_629_994), (False, 26_830_909_968), (False, 26_795_750_142)], 142,
       False, True),
      "step 6: rejected(26795750000 ns) (steps 3 and 5: 6 and 32 ns earlier, the same 10 us reading)")

lim, item = make(FW, 3, 28)
at(0)
a = (lim.hit(item, cost=2), lim.hit(item))
at("1.20425")
check("FW-13 fixed-window/random-seed-1-trace-27, shifted onto the window grid as the suite's cause "
      "experiment does (CONF-10 rule 3): the hit at 0 s reads a whole second, exact, and the wait ends "
      "97 ns before the Spec's instant, on the same 10 us reading: no difference, hence FW-13",
      (a, lim.hit(item, cost=3), wait_ns(lim, item)), ((True, True), False, 26_795_749_903),
      "rejected(26795750000 ns)")

lim, item = make(FW, 3, 10)
at(0)
a = lim.hit(item, cost=2)
at(3)
b = lim.hit(item, cost=2)
check("FW-4 fixed-window/weighted (difference): a refused hit is counted",
      (a, b, lim.hit(item, cost=1), wait(lim, item)), (True, False, False, 7),
      "acquire(1) at 3 s is allowed(0): the refused acquire(2) counted nothing")

# --- moving window (sliding window log) -----------------------------------------------------------

lim, item = make(MW, 3, 10)
at(0)
a = lim.hit(item, cost=3)
at(12)
q = remaining(lim, item)
at(5)
b = (lim.hit(item), wait(lim, item))
at(12)
check("CORE-7 sliding-window-log/refusals-record-nothing (malformed answer): cost 4 above the limit of "
      "3, reset in the past",
      (a, q, b, lim.hit(item, cost=4), stats(lim, item)), (True, 3, (False, 5), False, (-2, 3)),
      "step 4: neverAllowed (steps 1-3 as the Spec: allowed(0), allowed(3), rejected(5 s))")

lim, item = make(MW, 1, 1)
at(0)
a = lim.hit(item)
at("1.59924")
check("CORE-7 sliding-window-log/random-seed-1-trace-41, shrunk (malformed answer): cost 2 above the "
      "limit of 1 at 1.59924 s; the reset is the end of the entry of 0 s, in the past",
      (a, lim.hit(item, cost=2), wait_ns(lim, item)), (True, False, -599_240_064),
      "step 2: neverAllowed")

lim, item = make(MW, 1, 1)
at(0)
check("CORE-7 sliding-window-log/random-seed-1-trace-28, shrunk (retry forever): cost 2 above the limit "
      "of 1 with no entry: the reset is now + W",
      (lim.hit(item, cost=2), stats(lim, item)), (False, (1, 1)), "neverAllowed")

lim, item = make(MW, 3, 5, created="5.00056")
answers = []
for t, n in (("5.00056", 1), ("10.00056", 1), ("15.00055", 1), ("20.00054", 1), ("25.00053", 3),
             ("30.00052", 1), ("35.00052", 1), ("40.00053", 2), ("40.00054", 1), ("40.00055", 1),
             ("45.00056", 3), ("50.00055", 4)):
    at(t)
    answers.append(remaining(lim, item) if lim.hit(item, cost=n) else -wait_ns(lim, item))
check("CORE-7 sliding-window-log/random-seed-1-trace-28 (retry forever): cost 4 above the limit of 3 "
      "with entries in the window: the reset is the oldest one's end, 10 us away (a refusal shown as "
      "minus its wait in ns)",
      answers, [2, 2, 1, 1, -10_014, 2, 2, 1, 0, -4_999_979_973, 0, -10_014],
      "step 12: neverAllowed (step 5: rejected(10000 ns), the library's 14 ns late, a difference: the "
      "readings of 5.00056 s and 25.00053 s; step 10: rejected(4999980000 ns), the library's 27 ns "
      "earlier, the same 10 us reading)")

lim, item = make(MW, 21, 26202)
answers = []
for t, n in ((0, 3), ("0.00001", 21), (0, 1), (0, 16), (0, 12), ("5812.13603", 21), (0, 1),
             ("26202.00001", 22)):
    at(t)
    answers.append((True, remaining(lim, item)) if lim.hit(item, cost=n) else (False, wait_ns(lim, item)))
check("CORE-7 sliding-window-log/random-seed-1-trace-41 (malformed answer; step 6 is the row's worst, "
      "42 ns late): the entries of 0 s read a whole second (the origin), exact; 5812.13603 s reads "
      "41.3 ns early, and the wait, the oldest entry's end minus that reading, is 42 ns long",
      (answers, late_ns(0, "5812.13603")),
      ([(True, 18), (False, 26_201_999_989_987), (True, 17), (True, 1), (False, 26_202_000_000_000),
        (False, 20_389_863_970_042), (True, 0), (False, -10_013)], 42),
      "step 6: rejected(20389863970000 ns); step 8: neverAllowed (22 > 21) (step 2: 13 ns earlier "
      "than rejected(26201999990000 ns), the same 10 us reading)")

lim, item = make(MW, 1, 1)
at(0)
a = lim.hit(item)
at(1)
check("SWL-3 sliding-window-log/random-seed-1-trace-4, shrunk (malformed answer): refused exactly one "
      "window later, reset = now",
      (a, lim.hit(item), stats(lim, item)), (True, False, (0, 1)), "allowed(0)")

lim, item = make(MW, 2, 29, created="0.00059")
at("0.00059")
a = lim.hit(item, cost=2)
at("0.0006")
b = (lim.hit(item, cost=2), wait_ns(lim, item))
at("29.00059")
check("SWL-3 sliding-window-log/random-seed-1-trace-35 (malformed answer): the entries of 0.00059 s are "
      "still counted at 29.00059 s, exactly one window later, and the reset is now",
      (a, b, lim.hit(item), stats(lim, item)), (True, (False, 28_999_989_987), False, (0, 2)),
      "step 3: allowed(1) (step 2: rejected(28999990000 ns); the shrunk case: acquire(2) at 0 s, "
      "acquire(1) at 29 s)")

lim, item = make(MW, 3, 10)
for t in (0, 2, 4):
    at(t)
    lim.hit(item)
at(5)
check("SWL-3 sliding-window-log/retry-walks-the-log (early retry): the reset is the oldest entry's "
      "expiry, whatever the cost",
      (lim.hit(item, cost=2), wait(lim, item)), (False, 5),
      "rejected(7 s): 2 entries must expire, the second at 12 s")

lim, item = make(MW, 128, 1)
at(0)
a = lim.hit(item)
at("0.00001")
a = (a, lim.hit(item), lim.hit(item))
check("SWL-3 sliding-window-log/random-seed-1-trace-33, shrunk (early retry, 10013 ns): entries at 0 s "
      "and 10 us; acquire(127) is told the end of the entry of 0 s",
      (a, lim.hit(item, cost=127), wait_ns(lim, item)), ((True, True, True), False, 999_989_987),
      "rejected(1000000000 ns): 127 permits need the entries of 10 us to expire, at 1.00001 s")

lim, item = make(MW, 21527, 565999508)
at("234335284.37026")
lim.clear(item)  # step 54, a reset: the log is empty
answers = []
for t, n in (("234335284.37026", 672), ("261488114.24495", 1), ("265894725.34965", 1),
             ("265894725.34966", 1)):
    at(t)
    answers.append(lim.hit(item, cost=n))
at("265894725.34967")
check("SWL-3 sliding-window-log/random-seed-1-trace-13, steps 54-59 (the row's worst: 31559440.98 s "
      "early): acquire(21527) is told the end of the oldest entry, 234335284.37026 s + W",
      (answers, lim.hit(item, cost=21527), wait_ns(lim, item)), ([True] * 4, False, 534_440_067_020_589_829),
      "rejected(565999507999990000 ns): all 675 entries must expire, the last at 265894725.34966 s + W")

lim, item = make(MW, 1, 17, created="0.00035")
at("0.00035")
a = lim.hit(item)
answers = []
for t in ("0.00043", "0.00044"):
    at(t)
    answers.append((lim.hit(item), wait_ns(lim, item)))
at("17.00035")
b = (lim.hit(item), wait_ns(lim, item))
at("17.00036")
check("SWL-3 sliding-window-log/random-seed-1-trace-19 (difference, 117 ns late): the reset is the float "
      "atime + 17 of the entry of 0.00035 s (memory.py:20, 181; strategies.py:134); the readings of "
      "0.00035 s and 0.00044 s are off by -1.5 ns and -117.7 ns. On its own clock the library refuses "
      "at 17.00035 s (the entry exactly one window old, memory.py:154) and admits at 17.00036 s",
      (a, answers, late_ns("0.00035", "0.00044"), b, lim.hit(item)),
      (True, [(False, 16_999_919_892), (False, 16_999_910_117)], 117, (False, 0), True),
      "step 11: rejected(16999910000 ns) (step 10: 108 ns earlier, the same 10 us reading); admitted "
      "at 17.00035 s")

lim, item = make(MW, 21527, 565999508)
at("174387649.74452")
lim.clear(item)  # step 42, a reset
answers = [lim.hit(item, cost=21527)]
for t in ("234335284.37025", "234335284.37026"):
    at(t)
    answers.append((lim.hit(item), wait_ns(lim, item)))
check("SWL-3 sliding-window-log/random-seed-1-trace-13, steps 42-52 (the row's worst lateness, 426 ns): "
      "past 2^31 s (the origin is 2263998032 s) floats are 2^-21 s = 477 ns apart, and the readings of "
      "174387649.74452 s and 234335284.37026 s are off by +187.4 ns and -238.2 ns",
      (answers, late_ns("174387649.74452", "234335284.37026")),
      ([True, (False, 506_051_873_374_269_963), (False, 506_051_873_374_260_426)], 426),
      "step 52: rejected(506051873374260000 ns) (step 50: 37 ns earlier, the same 10 us reading)")

lim, item = make(MW, 3, 10)
for t in (0, 3, 6):
    at(t)
    lim.hit(item)
at(9)
first = (lim.hit(item), wait(lim, item))
at(10)
check("SWL-6 sliding-window-log/window-bound (liveness): reset says 10 s (get_moving_window, exclusive, "
      "memory.py:178-181), the hit at 10 s is refused (acquire_entry, inclusive, memory.py:154)",
      (first, lim.hit(item), stats(lim, item)), ((False, 1), False, (3, 1)),
      "rejected(1 s) at 9 s, then allowed(0) at 10 s (the entry of 0 s no longer counts at 10 s)")

lim, item = make(MW, 4, 28, created="18.71983")
at("18.71983")
a = lim.hit(item)
at(0)
b = lim.hit(item)
at("35.71929")
c = lim.hit(item)
log = [float(Fraction(e.atime) - CLOCK.origin) for e in lim.storage.events[item.key_for()]]
check("CORE-10 sliding-window-log/random-seed-1-trace-24, shrunk (over-promise): entries keep the "
      "earlier instants they came with, and the log is no longer sorted",
      (a, b, c, remaining(lim, item), [round(x, 5) for x in log]),
      (True, True, True, 3, [35.71929, 0.0, 18.71983]),
      "allowed(1): the admission at 0 s is recorded at 18.71983 s (CORE-10), all three in force")

lim, item = make(MW, 8, 28, created="9223372019.85531")
answers = []
for t in ("9223372019.85531", "9223371995.41496", "9223372001.13548", "9223372036.85477"):
    at(t)
    answers.append((lim.hit(item), remaining(lim, item)))
check("CORE-10 sliding-window-log/random-seed-1-trace-24 (over-promise, 3 permits over)",
      answers, [(True, 7), (True, 6), (True, 5), (True, 7)],
      "step 4: allowed(4): the admissions at earlier instants are recorded at 9223372019.85531 s")

lim, item = make(MW, 2, 1, created="11877.95114")
at("11877.95114")
lim.clear(item)
at(0)
a = lim.hit(item)
at("1.57718")
check("CORE-10 sliding-window-log/random-seed-1-trace-10, shrunk (over-promise; the trace's step 40 is "
      "the row's worst, 31 permits over): after a reset at 11877.95114 s, hits at 0 s and 1.57718 s",
      (a, lim.hit(item), remaining(lim, item)), (True, True, 1),
      "allowed(0): both admissions are recorded at 11877.95114 s, in the same window")

lim, item = make(MW, 32, 1507)
at("9223365379.24857")
lim.clear(item)  # step 34, a reset; the latest instant seen before it is 9223372036.85477 s (step 3)
answers = []
for t, n in (("9223363379.41829", 1), ("9223362313.19431", 1), ("9223362198.16426", 1),
             ("9223361122.84092", -2 ** 63), ("9223359116.53752", 28), ("9223372036.85477", 1)):
    at(t)
    answers.append((lim.hit(item, cost=n), remaining(lim, item)))
check("CORE-10 sliding-window-log/random-seed-1-trace-10, steps 34-40 (the row's worst, 31 permits "
      "over): admissions at instants up to 3.6 hours before the latest, then a hit at the latest",
      answers, [(True, 31), (True, 30), (True, 29), (True, 29), (True, 1), (True, 31)],
      "step 40: allowed(0): the 31 permits admitted after the reset are recorded at 9223372036.85477 s, "
      "the latest instant (CORE-10), and are all in force there")

lim, item = make(MW, 6, 1, created="0.00001")
at("0.00001")
lim.clear(item)
at(0)
a = lim.hit(item)
check("CORE-10 sliding-window-log/random-seed-1-trace-45, shrunk (early retry; the trace's is 37 s): "
      "after a reset at 10 us, the entry of 0 s ends at 1 s",
      (a, lim.hit(item, cost=6), wait_ns(lim, item)), (True, False, 1_000_000_000),
      "rejected(1000010000 ns): the admission at 0 s is recorded at 10 us")

lim, item = make(MW, 7, 5, created=6)
at(6)
check("CORE-9 sliding-window-log/random-5 (difference): hit(cost=-2^63) is admitted, nothing recorded",
      (lim.hit(item, cost=-2 ** 63), remaining(lim, item)), (True, 7), "invalid(permits: mustNotBeNegative)")

# --- sliding window counter -----------------------------------------------------------------------

lim, item = make(SWC, 1, 1)
at(0)
check("CORE-7 sliding-window-counter/random-seed-1-trace-7, shrunk (malformed answer): cost 3 above the "
      "limit of 1, nothing counted, reset = now",
      (lim.hit(item, cost=3), stats(lim, item)), (False, (0, 1)), "neverAllowed")

lim, item = make(SWC, 1, 1, created="106.30521")
at("106.30521")
check("CORE-7 sliding-window-counter/random-seed-1-trace-39, shrunk (retry forever): cost 2 above the "
      "limit of 1 with a count in the window: the reset is the window's end, 107 s",
      (lim.hit(item), lim.hit(item, cost=2), wait_ns(lim, item)), (True, False, 694_789_887),
      "neverAllowed")

lim, item = make(SWC, 757, 908, created="106.3052")
at("106.3052")
a = lim.hit(item, cost=5)
at("106.30521")
b = lim.hit(item, cost=751)
at("282.42013")
check("CORE-7 sliding-window-counter/random-seed-1-trace-39 (retry forever): cost 758 above the limit "
      "with counts in the window: the reset is the window's end, 908 s",
      (a, b, lim.hit(item, cost=758), wait_ns(lim, item)), (True, True, False, 625_579_869_986),
      "neverAllowed")

lim, item = make(SWC, 1, 1, created="1.04162")
at("1.04162")
a = lim.hit(item)
at("0.97651")
check("CORE-7 sliding-window-counter/random-seed-1-trace-21, shrunk (over-admission, filed under CORE-7 "
      "in the trace): back in window 0, the count of window 1 is not seen",
      (a, lim.hit(item), remaining(lim, item)), (True, True, 0),
      "rejected(2023490000 ns): evaluated at 1.04162 s (CORE-10)")

lim, item = make(SWC, 2, 28, created="9223372036.85477")
at("9223372036.85477")
answers = [lim.hit(item), lim.hit(item), lim.hit(item), wait_ns(lim, item)]
at("9223372003.52315")
check("CORE-7 sliding-window-counter/random-seed-1-trace-21 (over-admission): 33 s earlier, in the "
      "previous window, acquire(1) is admitted",
      (answers, lim.hit(item), remaining(lim, item)), ([True, True, False, 23_145_229_340], True, 1),
      "step 82: neverAllowed: evaluated at 9223372036.85477 s (CORE-10), the admission lies past the "
      "end of the timeline (so does the library's reset of step 3, a wait past the end)")

lim, item = make(SWC, 4, 10)
at(5)
lim.hit(item, cost=4)
at(10)
check("SWC-3 sliding-window-counter/retry-same-window (malformed answer): refused at a window start, "
      "reset = now (10 % (10/4) = 0)",
      (lim.hit(item), stats(lim, item)), (False, (0, 0)), "rejected(2.5 s)")

lim, item = make(SWC, 875460154, 3258875)
at(0)
a = lim.hit(item, cost=875460154)
check("SWC-3 sliding-window-counter/random-seed-1-trace-17 (malformed answer): at a window start the "
      "current window's TTL is 2W, and 2W % W = 0: reset = now",
      (a, lim.hit(item, cost=1024), stats(lim, item)), (True, False, (0, 0)),
      "rejected(3258878811810264 ns)")

lim, item = make(SWC, 1, 10)
at(9)
lim.hit(item)
at(11)
check("SWC-3 sliding-window-counter/no-floor (over-admission): floor(0.9) + 1 <= 1 admits",
      lim.hit(item), True, "rejected(9 s): 1·9/10 + 1 > 1, admitted at 20 s (a window edge)")

lim, item = make(SWC, 181, 115137, created="115137.0006")
hits = []
for t, n in (("115137.0006", 49), ("460548.0006", 1), ("805959.0006", 1), ("921096.0006", 181)):
    at(t)
    hits.append(lim.hit(item, cost=n))
check("SWC-3 sliding-window-counter/random-seed-1-trace-4 (the row's worst: 181 permits over): "
      "0.6 ms into a window, floor(1·(W - 0.0006)/W) = 0",
      hits, [True, True, True, True], "step 4: rejected(115136999400000 ns), at the end of the window")

lim, item = make(SWC, 7, 129, created="129.0006")
at("129.0006")
a = lim.hit(item)
at("258.00059")
check("SWC-3 sliding-window-counter/random-seed-1-trace-28 (over-admission, 7 permits over): 0.59 ms "
      "into the next window the previous count weighs 0.9999954, floored to 0",
      (a, lim.hit(item, cost=7), remaining(lim, item)), (True, True, 0),
      "rejected(128999410000 ns)")

lim, item = make(SWC, 1, 7, created="0.00084")
at("0.00084")
a = lim.hit(item)
at("0.00085")
check("SWC-3 sliding-window-counter/random-seed-1-trace-19 (early retry, 7 s): the reset is the current "
      "window's end, 7 s, where the Spec admits a window later",
      (a, lim.hit(item), wait_ns(lim, item)), (True, False, 6_999_150_038),
      "rejected(13999150000 ns): the permit of 0.00084 s weighs 1 until 7 s and above 0 until 14 s")

lim, item = make(SWC, 5971477497078, 2572151679, created="0.00087")
at("0.00087")
hits = [lim.hit(item) for _ in range(3)]
at(0)
hits.append(lim.hit(item))
at("125208631.82146")
check("SWC-3 sliding-window-counter/random-seed-1-trace-13 (the row's worst: 2572151679 s early): the "
      "reset is the current window's end",
      (hits, lim.hit(item, cost=5971477497078), wait_ns(lim, item)),
      ([True] * 4, False, 2_446_943_047_178_539_277),
      "rejected(5019094726178540000 ns): the 4 permits weigh until the end of the next window")

lim, item = make(SWC, 4, 10)
at(15)
lim.hit(item, cost=4)
at(8)
check("SWC-4 sliding-window-counter/backward-time (over-admission): back in window 0, the counts of "
      "window 1 are not seen",
      (lim.hit(item), remaining(lim, item)), (True, 3), "rejected(14.5 s): evaluated at 15 s (CORE-10)")

lim, item = make(SWC, 4, 10)
at(0)
a = lim.hit(item)
q = remaining(lim, item)
r = lim.hit(item, cost=-1)
check("CORE-9 sliding-window-counter/zero-release-invalid (over-promise): hit(cost=-1) is admitted and "
      "lowers the count",
      (a, q, r, remaining(lim, item), lim.hit(item, cost=-2 ** 63), remaining(lim, item) > INT64_MAX),
      (True, 3, True, 4, True, True),
      "invalid(permits: mustNotBeNegative), a query shows 3; cost -2^63 would leave a remaining above "
      "Int64.max")

lim, item = make(SWC, 511, 686569, created=686569)
at(686569)
a = lim.hit(item)
at(1373138)
check("CORE-9 sliding-window-counter/random-seed-1-trace-41 (over-promise): hit(cost=-1) at the next "
      "window's start is admitted and lowers the count",
      (a, lim.hit(item, cost=-1), remaining(lim, item)), (True, True, 511),
      "invalid(permits: mustNotBeNegative); a query shows 510")

lim, item = make(SWC, 357, 25973, created="864000000.00089")
at("864000000.00089")
a = lim.hit(item)
at("863965999.88342")
check("CORE-10 sliding-window-counter/random-seed-1-trace-10 (over-promise): 34000.1 s earlier, the "
      "window of the later hit is not seen",
      (a, lim.hit(item, cost=11), remaining(lim, item)), (True, True, 346),
      "allowed(345): evaluated at 864000000.00089 s (CORE-10)")

lim, item = make(SWC, 17369875377518, 110001270)
at(0)
answers = [lim.hit(item, cost=n) for n in (4161865422, 1, 129)]
at(110001270)
answers.append(lim.hit(item, cost=23527474618))
at("55066121.39676")
check("CORE-10 sliding-window-counter/random-seed-1-trace-35 (the row's worst: 23527474618 permits "
      "over): back in window 0, the count of window 1 is not seen",
      (answers, lim.hit(item), remaining(lim, item)), ([True] * 4, True, 17365713511965),
      "step 5: allowed(17342186037347): evaluated at 110001270 s (CORE-10)")

lim, item = make(SWC, 73164140132715575, 1008214, created="1008214.00099")
answers = []
for t, n in (("1008214.00099", 2048), ("2016428.00099", 65153565563), ("3024642.00099", 39238),
             ("4032856.00099", 24256499)):
    at(t)
    answers.append((lim.hit(item, cost=n), remaining(lim, item)))
check("SWC-3 sliding-window-counter/random-seed-1-trace-14 (over-promise, filed under window alignment): "
      "remaining = limit - floor(weighted count), 0.99 ms into each window",
      answers, [(True, 73164140132713527), (True, 73164074979147964), (True, 73164074979110838),
                (True, 73164140108419839)],
      "step 4: allowed(73164140108419838) = floor(limit - 39238·(W - 0.00099)/W - 24256499)")

lim, item = make(SWC, 6, 31, created="6.32369")
at("6.32369")
a = lim.hit(item)
at("37.32368")
check("SWC-3 sliding-window-counter/random-seed-1-trace-24 (over-promise, filed under window alignment): "
      "remaining = 6 - floor(1·(31 - 6.32368)/31 + 1)",
      (a, lim.hit(item), remaining(lim, item)), (True, True, 5), "allowed(4): floor(6 - 1.796)")

lim, item = make(SWC, 4, 10)
at(5)
lim.hit(item, cost=4)
at(12)
check("SWC-3 sliding-window-counter/weight-shrinks (over-promise): remaining = 4 - floor(3.2)",
      remaining(lim, item), 1, "allowed(0): floor((40 - 32)/10) - 0")

lim, item = make(SWC, 10, 10)
at(9)
lim.hit(item, cost=10)
at(18)
ok8 = lim.hit(item, cost=8)
check("SWC-5 sliding-window-counter/worst-case (over-promise): the float weight 10·(1 - 0.8) is "
      "1.99999..., floor 1",
      (ok8, remaining(lim, item), lim.hit(item)), (True, 1, True),
      "allowed(0) after acquire(8); acquire(1) then rejected(1 s)")

lim, item = make(SWC, 2712809345557406444, 36727273, created="0.00074")
at("0.00074")
a = lim.hit(item, cost=32769)
b = lim.hit(item, cost=2518388007940828810)
check("SWC-5 sliding-window-counter/random-seed-1-trace-38 (the row's worst: 139 permits over): the "
      "count 2518388007940861579 as a float is 2518388007940861440",
      (a, b, remaining(lim, item)), (True, True, 194421337616545004), "allowed(194421337616544865)")

lim, item = make(SWC, 4, 10)
at(5)
lim.hit(item, cost=4)
at(6)
r = (lim.hit(item), stats(lim, item))
at(10)
check("SWC-6 sliding-window-counter/retry-next-window (early retry): reset is the window's end (10 s), "
      "refused there too",
      (r, lim.hit(item)), ((False, (4, 0)), False), "rejected(6.5 s): admitted at 12.5 s")

lim, item = make(SWC, 491011109517000, 1, created="0.00083")
at("0.00083")
a = (lim.hit(item, cost=19), lim.hit(item))
check("SWC-6 sliding-window-counter/random-seed-1-trace-15, shrunk (early retry, 0.05 s): the reset is "
      "the window's end whatever the cost",
      (a, lim.hit(item, cost=491011109516981), wait_ns(lim, item)), ((True, True), False, 999_170_065),
      "rejected(1049170000 ns): the 20 permits must weigh 19 or less, at 1.05 s")

lim, item = make(SWC, 491011109517000, 2147483647, created="0.00083")
at("0.00083")
a = lim.hit(item, cost=19)
at("617651242.49531")
b = lim.hit(item)
at("1168612798.51923")
check("SWC-6 sliding-window-counter/random-seed-1-trace-15 (the row's worst: 107374182.35 s early)",
      (a, b, lim.hit(item, cost=491011109516981), wait_ns(lim, item)),
      (True, True, False, 978_870_848_480_770_112),
      "rejected(1086245030830770000 ns): at the next window's start the 20 permits still weigh 20")

LIMIT_16 = 21100857779455775
lim, item = make(SWC, LIMIT_16, 2147483647, created="9223372036.85477")
at("9223372036.85477")
answers = []
for n in (66815699, 1, 1, LIMIT_16, LIMIT_16 - 66815700, 1, LIMIT_16 - 66815703):
    answers.append(lim.hit(item, cost=n))
check("utilization 12.1%%: sliding-window-counter/random-seed-1-trace-16, step 7: 66815702 + (limit - "
      "66815703) <= limit is refused, because float(limit - 1) = %d > limit" % float(LIMIT_16 - 1),
      (answers, remaining(lim, item)), ([True, True, True, False, False, True, False], LIMIT_16 - 66815702),
      "step 7: allowed(1); the 21100857712640072 permits it refuses are 88% of the permits the Spec "
      "admits in the run (step 5 asks one more than the remaining: both refuse it)")

lim, item = make(SWC, 4, 10, origin=0)
at(5)
lim.hit(item, cost=2)
keys = lim.storage.sliding_window_keys(item.key_for(), 10, 5.0)
at(6)
check("SWC first window after the Unix epoch (--unix-origin 0): previous key == current key, counts "
      "seen twice",
      (keys[0] == keys[1], lim.hit(item), remaining(lim, item)), (True, True, 0),
      "allowed(1) (3 of 4 used); int((at - expiry) / expiry) truncates -0.5 to 0, the current window's key")

# --- Redis storage (README.md, "Redis storage (`--redis`)") ------------------------------------------
#
# The same limiters over RedisStorage, on one unmodified redis-server (../common/redisclock.py,
# ClockedRedis) whose wall clock, the one its TTL, PTTL and expiry read, is set to the same instant as
# the client's time.time() stand-in (limits.storage.redis reads that too), to the millisecond: the
# instants below are whole milliseconds, as the Redis profile's. Each limiter has a key prefix of its own.

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import redisclock  # noqa: E402

import limits.storage.redis as redis_storage  # noqa: E402
from limits.storage import RedisStorage  # noqa: E402

redis_storage.time = types.SimpleNamespace(time=CLOCK.time)
SERVER = redisclock.start_for_findings()
if SERVER is None:
    print("\nSKIPPED the Redis storage's checks")

PREFIXES = [0]


def rat(seconds):
    """Both clocks at `seconds` after instant 0: time.time() reads the float nearest to it, the
    server's wall clock the instant itself (Redis reads it to the microsecond, expiry to the ms)."""
    CLOCK.now = reading(seconds)
    SERVER.set_clock(CLOCK.origin * NS + int(Fraction(seconds) * NS))


def rmake(strategy, limit, window, created=0, origin=None):
    CLOCK.origin = origin_for(window) if origin is None else origin
    rat(created)
    PREFIXES[0] += 1
    storage = RedisStorage("redis+unix://" + SERVER.socket_path, key_prefix="F%d" % PREFIXES[0])
    return strategy(storage), RateLimitItemPerSecond(limit, window)


def rkey(lim, item):
    return "%s:%s" % (lim.storage.key_prefix, item.key_for())


def raised(call):
    """What a call raises: the exception's class and the start of its message (or its answer)."""
    try:
        return call()
    except Exception as error:  # noqa: BLE001
        return "%s: %s" % (type(error).__name__, str(error).split(" script:")[0])


OUT_OF_RANGE = "ResponseError: value is not an integer or out of range"

if SERVER is not None:
    # fixed window ---------------------------------------------------------------------------------

    lim, item = rmake(FW, 1, 1)
    rat(0)
    check("Redis fixed-window protocol/random-seed-1-trace-15 (misbehaviour): hit(cost=-2^63) raises: "
          "incr_expire.lua passes tonumber(ARGV[2]), a Lua double, to INCRBY, which reads it as "
          "'-9.2233720368547758e+18'; so does any cost of 10^17 or more",
          (raised(lambda: lim.hit(item, cost=-2 ** 63)), raised(lambda: lim.hit(item, cost=10 ** 17)),
           lim.hit(item, cost=99_999_999_999_999_984)),
          (OUT_OF_RANGE, OUT_OF_RANGE, False),
          "invalid(permits: mustNotBeNegative); a cost of 10^17 above the limit: neverAllowed")

    lim, item = rmake(FW, 4, 1, created=80)
    rat(80)
    a = lim.hit(item)
    rat(81)
    b = (lim.hit(item, cost=4), wait_ns(lim, item), SERVER.connection.call("PTTL", rkey(lim, item)))
    rat("81.001")
    check("Redis FW-4 fixed-window/random-3 (malformed answer): the key of the window [80 s, 81 s) still "
          "exists at 81 s (Redis deletes a key once its clock is past the expiry millisecond): "
          "acquire(4) is refused with a wait of 0; admitted 1 ms later",
          (a, b, lim.hit(item, cost=4)), (True, (False, 0, 0), True), "allowed(0) at 81 s")

    lim, item = rmake(FW, 3, 10)
    rat(0)
    a = lim.hit(item, cost=2)
    rat(3)
    a = (a, lim.hit(item, cost=2), lim.hit(item), wait(lim, item))
    check("Redis FW-4 fixed-window/weighted (difference, the row's worst: 7 s late): the refused acquire(2) "
          "is counted (REPORT.md section 12, the same on Redis)",
          a, (True, False, False, 7), "allowed(1), rejected, allowed(0)")

    lim, item = rmake(FW, 3, 10)
    rat(0)
    lim.hit(item, cost=3)
    rat(9)
    a = (remaining(lim, item), lim.hit(item), wait(lim, item))
    rat(10)
    check("Redis CORE-9 acquire(0) fixed-window/window-edges (difference): at 10 s the query still reads "
          "the window of 0 s",
          (a, remaining(lim, item), wait(lim, item)), ((0, False, 1), 0, 0), "allowed(3) at 10 s")

    lim, item = rmake(FW, 4097, 4294967296, created="0.073")
    rat("0.073")
    a = (lim.hit(item), lim.hit(item))
    rat("4294967296.073")
    check("Redis FW-5 fixed-window/random-seed-1-trace-32 (difference): acquire(1) at the window's end is "
          "counted in the old window",
          (a, lim.hit(item), remaining(lim, item)), ((True, True), True, 4094), "allowed(4096)")

    lim, item = rmake(FW, 2, 21, created="63.053")
    for t, n in (("63.053", 1), ("105.053", 2), ("147.053", 2)):
        rat(t)
        lim.hit(item, cost=n)
    rat("168.052")
    check("Redis FW-6 fixed-window/random-seed-1-trace-18 (malformed answer): 1 ms before the window's end "
          "get_expiry (redis.py:293) adds TTL, whole seconds rounded to the nearest (PTTL 1 ms -> TTL 0)",
          (lim.hit(item), wait_ns(lim, item), SERVER.connection.call("PTTL", rkey(lim, item)),
           SERVER.connection.call("TTL", rkey(lim, item))),
          (False, 0, 1, 0), "rejected(1000000 ns)")

    lim, item = rmake(FW, 1, 6)
    rat(0)
    a = lim.hit(item)
    rat("2.806")
    check("Redis FW-6 fixed-window/random-seed-1-trace-41, shrunk (early retry, 194 ms; the trace's is the "
          "row's worst, 387 ms): PTTL 3194 ms -> TTL 3 s",
          (a, lim.hit(item), wait(lim, item)), (True, False, 3), "rejected(3194000000 ns)")

    lim, item = rmake(FW, 1, 3)
    rat(0)
    a = lim.hit(item)
    rat("1.4")
    check("Redis FW-6 fixed-window, TTL rounded up (difference; the row's worst is 433 ms late, "
          "random-seed-1-trace-43): PTTL 1600 ms -> TTL 2 s",
          (a, lim.hit(item), wait(lim, item)), (True, False, 2), "rejected(1600000000 ns)")

    lim, item = rmake(FW, 3, 10)
    rat(0)
    a = lim.hit(item, cost=3)
    rat(15)
    q = remaining(lim, item)  # GET of an expired key: Redis deletes it
    rat(5)
    check("Redis CORE-10 fixed-window/refusals-record-nothing (over-admission): the read at 15 s deletes "
          "the expired key; back at 5 s acquire(1) opens a new window (REPORT.md section 5)",
          (a, q, lim.hit(item), remaining(lim, item)), (True, 3, True, 2), "rejected(5 s)")

    lim, item = rmake(FW, 4, 255)
    rat(0)
    check("Redis CORE-7 fixed-window/random-seed-1-trace-31 (retry forever): acquire(5) above the limit "
          "of 4 is refused with the window's end, and counted (REPORT.md section 1)",
          (lim.hit(item, cost=5), wait(lim, item), remaining(lim, item)), (False, 255, 0), "neverAllowed")

    lim, item = rmake(FW, 18777856, 129, created="129.034")
    rat("129.034")
    check("Redis CORE-9 fixed-window/random-seed-1-trace-2 (over-promise): hit(cost=-1) is admitted and "
          "lowers the count (REPORT.md section 7)",
          (lim.hit(item, cost=-1), remaining(lim, item)), (True, 18777857), "invalid(permits: mustNotBeNegative)")

    lim, item = rmake(FW, 1, -10)
    rat(0)
    check("Redis CORE-3 fixed-window/refuse-negative-window (accepted a bad configuration): a window of "
          "-10 s is kept, EXPIRE -10 deletes the key at once: every hit is admitted (REPORT.md section 11)",
          [lim.hit(item) for _ in range(3)], [True, True, True], "refused windowNanoseconds (mustBePositive)")

    # moving window -----------------------------------------------------------------------------------

    lim, item = rmake(MW, 1, 1)
    rat(0)
    a = (lim.hit(item), raised(lambda: lim.hit(item, cost=-2 ** 63)))
    lim2, item2 = rmake(MW, 7, 5, created=6)
    rat(6)
    check("Redis sliding-window-log protocol/random-seed-1-trace-8 (misbehaviour): with entries in the log, "
          "hit(cost=-2^63) raises: acquire_moving_window.lua:10 LINDEX at limit - amount, the double "
          "9.2233720368547758e+18; on an empty log (random-5) LINDEX reads no index: admitted, nothing "
          "recorded",
          (a, lim2.hit(item2, cost=-2 ** 63), remaining(lim2, item2)),
          ((True, OUT_OF_RANGE), True, 7), "invalid(permits: mustNotBeNegative) both times")

    lim, item = rmake(MW, 3, 1000, created="1000.025")
    rat("1000.025")
    a = lim.hit(item)
    rat("2000.025")
    check("Redis SWL-3 sliding-window-log/random-seed-1-trace-25 (malformed answer): an entry exactly one "
          "window old counts for hit() (acquire_moving_window.lua:12, >=) and for get_window_stats() too "
          "(moving_window.lua:13, >=): reset = now",
          (a, lim.hit(item, cost=3), wait_ns(lim, item), remaining(lim, item)), (True, False, 0, 2),
          "allowed(0)")

    lim, item = rmake(MW, 3, 10)
    for t in (0, 3, 6):
        rat(t)
        lim.hit(item)
    rat(9)
    a = (lim.hit(item), wait(lim, item))
    rat(10)
    b = (lim.hit(item), wait(lim, item))
    rat("10.001")
    check("Redis SWL-3 sliding-window-log/window-bound (malformed answer; on memory storage SWL-6's "
          "liveness): at 10 s, where the reset named, refused with reset = now; admitted 1 ms later",
          (a, b, lim.hit(item)), ((False, 1), (False, 0), True), "rejected(1 s), then allowed(0) at 10 s")

    lim, item = rmake(MW, 3, 10)
    for t in (0, 2, 4):
        rat(t)
        lim.hit(item)
    rat(5)
    check("Redis SWL-3 sliding-window-log/retry-walks-the-log (early retry, the row's worst: 2 s): the reset "
          "is the oldest entry's end whatever the cost (REPORT.md section 10)",
          (lim.hit(item, cost=2), wait(lim, item)), (False, 5), "rejected(7 s)")

    lim, item = rmake(MW, 3, 10, created=5)
    rat(5)
    lim.hit(item, cost=3)
    rat(15)
    a = remaining(lim, item)
    rat("15.001")
    check("Redis CORE-9 acquire(0) sliding-window-log/expiry-edge (difference): the query counts the "
          "entries of 5 s at 15 s (moving_window.lua:13, val >= timestamp - expiry)",
          (a, remaining(lim, item)), (0, 3), "allowed(3) at 15 s")

    lim, item = rmake(MW, 746290, 1, created=2544376429962 - origin_for(1) + PRESENT)
    rat(2544376429962 - origin_for(1) + PRESENT)
    a = lim.hit(item, cost=11489)
    rat(0)
    b = (lim.hit(item), SERVER.connection.call("PTTL", rkey(lim, item)))
    rat("1.63")
    check("Redis CORE-7 sliding-window-log/random-seed-1-trace-14, shrunk (over-admission; the trace's "
          "735264 permits): a hit at an earlier instant resets the log's EXPIRE to 1 s from then "
          "(acquire_moving_window.lua:24); past it the key, with the 11489 later entries, is gone",
          (a, b, lim.hit(item, cost=735264), remaining(lim, item)), (True, (True, 1000), True, 11026),
          "rejected: the entries recorded at the latest instant are in force (CORE-10)")

    lim, item = rmake(MW, 3, 10)
    rat(0)
    a = lim.hit(item, cost=3)
    rat(12)
    q = remaining(lim, item)
    gone = SERVER.connection.call("EXISTS", rkey(lim, item))
    rat(5)
    check("Redis CORE-10 sliding-window-log/refusals-record-nothing (over-admission, new on Redis): the "
          "read at 12 s deletes the expired log; back at 5 s acquire(1) is admitted",
          (a, q, gone, lim.hit(item), remaining(lim, item)), (True, 3, 0, True, 2), "rejected(5 s)")

    lim, item = rmake(MW, 3, 1, created=146100574416 - origin_for(1) + PRESENT)
    rat(146100574416 - origin_for(1) + PRESENT)
    a = lim.hit(item)
    rat(0)
    b = lim.hit(item)
    rat("1.088")
    check("Redis CORE-10 sliding-window-log/random-seed-1-trace-16, shrunk (over-promise; the trace's is "
          "3308 permits over): the hit at 0 s shortens the log's life to 1 s",
          (a, b, lim.hit(item), remaining(lim, item)), (True, True, True, 2), "allowed(0)")

    check("Redis CORE-3 sliding-window-log/refuse-negative-limit (accepted a bad configuration): "
          "RateLimitItem validates nothing, whatever the storage (REPORT.md section 11)",
          rmake(MW, -1, 10)[1].amount, -1, "refused limit (mustBePositive)")

    lim, item = rmake(MW, 1, 1)
    rat(0)
    check("Redis CORE-9 sliding-window-log/zero-release-invalid (difference): hit(cost=-1) admitted, "
          "nothing recorded (REPORT.md section 7)",
          (lim.hit(item), lim.hit(item, cost=-1), remaining(lim, item)), (True, True, 0),
          "invalid(permits: mustNotBeNegative)")

    # sliding window counter ---------------------------------------------------------------------------

    lim, item = rmake(SWC, 169550584097337902, 1)
    rat(0)
    a = lim.hit(item, cost=157399250496301800)
    stored = SERVER.connection.call("GET", "%s:{%s}" % (lim.storage.key_prefix, item.key_for()))
    check("Redis sliding-window-counter protocol/random-seed-1-trace-38 (misbehaviour): a cost of 10^17 or "
          "more is stored by acquire_sliding_window.lua:42 (SET of a Lua double) as a float string; "
          "get_sliding_window's int() (redis.py:196-198) raises ValueError, and every later hit raises "
          "ResponseError (INCRBY on it, acquire_sliding_window.lua:39)",
          (a, stored, raised(lambda: remaining(lim, item)), raised(lambda: lim.hit(item))),
          (True, "1.5739925049630179e+17",
           "ValueError: invalid literal for int() with base 10: b'1.5739925049630179e+17'", OUT_OF_RANGE),
          "allowed(12151333601036102)")

    lim, item = rmake(SWC, 250, 285154, created="285154.001")
    rat("285154.001")
    a = (lim.hit(item, cost=251), wait_ns(lim, item))
    lim, item = rmake(SWC, 5, 10)
    rat(0)
    check("Redis CORE-7 sliding-window-counter/random-seed-1-trace-7 (malformed answer): cost above the "
          "limit, no count: reset = now (REPORT.md section 1); with a count, at its first hit the current "
          "key's PTTL is 2W and 2W % W = 0: reset = now again (section 4)",
          (a, lim.hit(item), lim.hit(item, cost=6), wait_ns(lim, item)), ((False, 0), True, False, 0),
          "neverAllowed both times")

    lim, item = rmake(SWC, 875460154, 3258875)
    rat(0)
    a = lim.hit(item, cost=875460154)
    check("Redis SWC-3 sliding-window-counter/random-seed-1-trace-17 (malformed answer): 2W % W = 0 at the "
          "first hit (REPORT.md section 4, strategies.py:298)",
          (a, lim.hit(item, cost=1024), wait_ns(lim, item)), (True, False, 0), "rejected(3258878811810264 ns)")

    lim, item = rmake(SWC, 1, 10)
    rat(9)
    a = lim.hit(item)
    rat(11)
    check("Redis SWC-3 sliding-window-counter/no-floor (early retry): the windows start at the first hit, "
          "9 s (acquire_sliding_window.lua:42, PX 2W), and the reset is the end of that window, 19 s",
          (a, lim.hit(item), wait(lim, item)), (True, False, 8), "rejected(9 s): admitted at 20 s")

    lim, item = rmake(SWC, 5971477497078, 1)
    rat(0)
    a = lim.hit(item)
    rat("0.001")
    check("Redis SWC-3 sliding-window-counter/random-seed-1-trace-13, shrunk (early retry; the trace's is "
          "the row's worst, 81.5 years): the reset is the current window's end, where nothing is freed "
          "(REPORT.md section 9)",
          (a, lim.hit(item, cost=5971477497078), wait_ns(lim, item)), (True, False, 999_000_073),
          "rejected(1999000000 ns)")

    lim, item = rmake(SWC, 23, 1030, created="88.226")
    rat("88.226")
    check("Redis SWC-6 sliding-window-counter/random-seed-1-trace-8 (malformed answer): refused at the "
          "instant of the first hit, reset = now (2W % W = 0)",
          (lim.hit(item), lim.hit(item, cost=23), wait_ns(lim, item)), (True, False, 0),
          "rejected(1971774000000 ns)")

    lim, item = rmake(SWC, 4, 10, created=5)
    rat(5)
    lim.hit(item, cost=4)
    rat(6)
    a = (lim.hit(item), wait(lim, item))
    rat(15)
    b = (lim.hit(item), wait(lim, item))
    rat("15.001")
    check("Redis SWC-6 sliding-window-counter/retry-next-window (difference, 2.5 s late) and one window "
          "after the first hit: the window [5 s, 15 s) ends at 15 s, where PTTL = W is not shifted "
          "(acquire_sliding_window.lua:13, current_ttl < expiry): refused, reset = now; shifted 1 ms later",
          (a, b, lim.hit(item)), ((False, 9), (False, 0), True), "rejected(6.5 s); admitted from 12.5 s")

    lim, item = rmake(SWC, 4, 10)
    rat(0)
    check("Redis CORE-9 sliding-window-counter/zero-release-invalid (over-promise): hit(cost=-1) admitted "
          "(REPORT.md section 7)",
          (lim.hit(item), lim.hit(item, cost=-1), remaining(lim, item)), (True, True, 4),
          "invalid(permits: mustNotBeNegative); a query shows 3")

    lim, item = rmake(SWC, 2, 3109560)
    rat(0)
    a = lim.hit(item)
    rat("6043619.034")
    check("Redis SWC-5 sliding-window-counter/random-seed-1-trace-44, shrunk (over-promise; the trace's "
          "is the row's worst, 5337490 permits): remaining = 2 - floor(0.056 + 1) (REPORT.md section 6)",
          (a, lim.hit(item), remaining(lim, item)), (True, True, 1), "allowed(0)")

    lim, item = rmake(SWC, 14, 1, created="0.001")
    rat("0.001")
    a = lim.hit(item, cost=7)
    rat(0)
    check("Redis CORE-10 sliding-window-counter/random-seed-1-trace-46, shrunk (early retry): back at 0 s "
          "the current key's PTTL is 2001 ms, not shifted; the reset is 2.001 % 1 s",
          (a, lim.hit(item, cost=9), wait_ns(lim, item)), (True, False, 999_928), "rejected(1285714286 ns)")

    check("Redis CORE-3 sliding-window-counter/refuse-zero-window (accepted a bad configuration): a window "
          "of 0 s becomes 1 s (REPORT.md section 11)",
          rmake(SWC, 1, 0)[1].get_expiry(), 1, "refused windowNanoseconds (mustBePositive)")

    lim, item = rmake(SWC, 4, 10, created=5)
    rat(5)
    lim.hit(item, cost=4)
    answers = []
    for t in (12, 13, 20):
        rat(t)
        answers.append(remaining(lim, item))
    check("Redis SWC-3 alignment sliding-window-counter/weight-shrinks (difference): the windows are "
          "[5 s, 15 s), [15 s, 25 s): at 12 s and 13 s the 4 permits weigh 4, at 20 s 4 * 0.5",
          answers, [0, 0, 2], "allowed(0), allowed(1), allowed(4): the windows [0 s, 10 s), [10 s, 20 s)")

    lim, item = rmake(SWC, 10, 10)
    rat(9)
    a = lim.hit(item, cost=10)
    rat(18)
    check("Redis SWC-4 sliding-window-counter/worst-case (difference, 1 s late): at 18 s the 10 permits of "
          "9 s are in the current window [9 s, 19 s)",
          (a, lim.hit(item, cost=8), wait(lim, item)), (True, False, 1), "allowed(0)")

    lim, item = rmake(SWC, 2 ** 53 + 3, 86400)
    rat(0)
    check("Redis sliding-window-counter, counts above 2^53 (REPORT.md section 8 (b), not a row of this run): "
          "the remaining is over-stated; the hit that fills the limit is admitted (the Lua script "
          "compares floor(...) + amount, doubles)",
          (lim.hit(item, cost=2 ** 53 + 1), remaining(lim, item), lim.hit(item, cost=2)), (True, 3, True),
          "allowed(2), then allowed(0)")

    SERVER.stop()

print("\nlimits %s: %d findings checked, %d no longer reproduce" % (limits.__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
