#!/usr/bin/env python3
"""Reproduces each finding of README.md with token-bucket alone, without the shim.

    Implementations/.venv/bin/python Implementations/token-bucket/findings.py

Each check builds `token_bucket.Limiter(rate, capacity, MemoryStorage())` itself and drives it
with `consume(key, n)`. The clock is the library's own `time.monotonic()`, with the name `time`
in `token_bucket.storage` bound to a stand-in whose `monotonic()` returns what CPython's
`time.monotonic()` returns when CLOCK_MONOTONIC reads a settable number of nanoseconds. Where the
library has no answer of its own (the instant a refused consume would be admitted, the largest
consume it admits now) the check asks copies of the limiter, by bisection. Prints the library's
answers next to the Spec's and exits 1 if a finding no longer reproduces.
"""

import copy
import sys
import types

import token_bucket
import token_bucket.storage as storage
from token_bucket import Limiter, MemoryStorage

NS = 10 ** 9
INT64_MAX = (1 << 63) - 1
KEY = "k"


def reading(ns):
    """CPython's _PyTime_AsSecondsDouble: whole seconds exactly, else (double)ns / 1e9."""
    return float(ns // NS) if ns % NS == 0 else float(ns) / 1e9


class Clock:
    ns = 0


CLOCK = Clock()
storage.time = types.SimpleNamespace(monotonic=lambda: reading(CLOCK.ns))

FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        FAILED.append(name)


def bucket(capacity, permits, period, initial, created):
    """R per P ns is R·10^9/P tokens per second (the float nearest to it); a new bucket is full,
    I < C is reached with consume(C - I) at the creation instant."""
    limiter = Limiter(permits * NS / period, capacity, MemoryStorage())
    if initial < capacity:
        CLOCK.ns = created
        assert limiter.consume(KEY, capacity - initial)
    return limiter


def consume(limiter, ns, n):
    CLOCK.ns = ns
    try:
        return "allowed" if limiter.consume(KEY, n) else "refused"
    except ValueError as error:
        return "ValueError(%s)" % (error,)


def on_copy(limiter, ns, n):
    clone = copy.deepcopy(limiter)
    saved, CLOCK.ns = CLOCK.ns, ns
    try:
        return clone.consume(KEY, n)
    finally:
        CLOCK.ns = saved


def largest_now(limiter, ns):
    """The largest m that consume(m), asked of a copy at ns, admits (0 if none)."""
    lo, hi = 0, limiter._capacity
    while lo < hi:
        mid = lo + (hi - lo + 1) // 2
        if on_copy(limiter, ns, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def first_admission(limiter, ns, n):
    """The first instant after ns at which consume(n), asked of a copy, admits (None: none up to Int64.max)."""
    if not on_copy(limiter, INT64_MAX, n):
        return None
    lo, hi = ns + 1, INT64_MAX
    while lo < hi:
        mid = (lo + hi) // 2
        if on_copy(limiter, mid, n):
            hi = mid
        else:
            lo = mid + 1
    return lo


def tokens(limiter):
    return limiter._storage.get_token_count(KEY)


def spec_wait(missing_units, permits):
    return -((-missing_units) // permits)  # TB-6: ceil(m / R)


print("token-bucket %s\n" % token_bucket.__version__)

# ---- TB-5 remaining (over-promise): a float token count rounds an integer count above 2^53 ----

# Smallest case (random-seed-1-trace-26, shrunk): C = 155830114914819091, 1 per ns, I =
# 77915057457409545 at 0. consume(C - I) leaves the int I; the next replenish adds 0.0 at the same
# instant and stores the float nearest to I, 77915057457409552 (floats are 16 apart there,
# storage.py:119): 7 tokens more than the bucket has, and consume(1) then takes nothing away
# (77915057457409552 - 1 rounds back to it).
b = bucket(155830114914819091, 1, 1, 77915057457409545, 0)
check("TB-5 token-bucket/random-seed-1-trace-26 (shrunk): 7 tokens appear at the same instant",
      (consume(b, 0, 1), tokens(b), largest_now(b, 0)),
      ("allowed", 77915057457409552.0, 77915057457409552),
      "allowed(77915057457409544): 77915057457409544 tokens left, consume(77915057457409545) refused")

# As drawn: C = 155830114914819091 full at 85, 633182803808307 per 16384 ns. consume(1) at 86
# leaves the int C - 1; the next replenish stores min(C, float(C - 1)), and float(C - 1) is
# 155830114914819104 > C, so min() returns C itself (storage.py:112-120): the bucket is full again.
b = bucket(155830114914819091, 633182803808307, 16384, 155830114914819091, 85)
check("TB-5 token-bucket/random-seed-1-trace-26: after consume(1), consume(C) is admitted too",
      (consume(b, 86, 1), largest_now(b, 86), consume(b, 86, 155830114914819091)),
      ("allowed", 155830114914819091, "allowed"),
      "allowed(155830114914819090), then acquire(C) refused: C + 1 permits admitted at one instant")

# Worst case (random-seed-1-trace-46, 80 permits over): C = 2058162512878284823, 2147483647 per
# 16607214 ns, I = 1967261278487054831 at 78; acquire(C + 1) at 80 (never), acquire(12135) at
# 2^23 s: the full bucket is the int C; C - 12135 is stored after one more replenish as the float
# 2058162512878272768 (floats are 256 apart), 80 above the 2058162512878272688 the Spec has.
b = bucket(2058162512878284823, 2147483647, 16607214, 1967261278487054831, 78)
t = (1 << 23) * NS
check("TB-5 token-bucket/random-seed-1-trace-46: 80 permits over at 2^23 s",
      (consume(b, 80, 2058162512878284824), first_admission(b, 80, 2058162512878284824),
       consume(b, t, 12135), largest_now(b, t)),
      ("refused", None, "allowed", 2058162512878272768),
      "neverAllowed, allowed(2058162512878272688)")

# The smallest over-admission, for the report: C = 2^54, 1 token per second. consume(1) leaves
# the int 2^54 - 1; the next replenish stores min(2^54, float(2^54 - 1)) = min(2^54, 2^54.0) = the
# int 2^54 (float(2^54 - 1) rounds to 2^54): consume(C) is admitted at the same instant.
lim = Limiter(1, 1 << 54, MemoryStorage())
check("TB-5 (report): consume(1) then consume(C) at one instant, C = 2^54",
      (consume(lim, 5 * NS, 1), consume(lim, 5 * NS, 1 << 54)),
      ("allowed", "allowed"),
      "allowed, then refused (2^54 - 1 tokens left)")

# ---- TB-6 retry-after (early retry) ----

# Within the largest instant (random-seed-1-trace-39): C = 4394632560702314 full at 100, 2147483647
# per 60 s. After consume(523876601399049) at 100 and consume(3870755959303264) at 16484 about 587
# tokens are left, but the float that held the level a moment before was near 3.9·10^15, where
# floats are 0.5 apart (storage.py:119): the fraction of a token is rounded, and consume(382617)
# at 16514 is admitted 3 ns before the Spec's instant.
b = bucket(4394632560702314, 2147483647, 60 * NS, 4394632560702314, 100)
steps = (consume(b, 100, 523876601399049), consume(b, 16484, -(1 << 63)), consume(b, 16484, 3870755959303264),
         consume(b, 16514, 382617))
at = first_admission(b, 16514, 382617)
# The Spec's exact level, in TB-2's units (one token is P units; R units a nanosecond).
P, R = 60 * NS, 2147483647
level = 4394632560702314 * P  # full at 100
level = min(4394632560702314 * P, level + R * 0) - 523876601399049 * P
level = min(4394632560702314 * P, level + R * (16484 - 100)) - 3870755959303264 * P
level = level + R * (16514 - 16484)
spec_at = 16514 + spec_wait(382617 * P - level, R)
check("TB-6 token-bucket/random-seed-1-trace-39: admitted 3 ns early (float tokens 0.5 apart near 3.9e15)",
      (steps, at - 16514, spec_at - 16514),
      (("allowed", "ValueError(num_tokens must be >= 1)", "allowed", "refused"), 10673751, 10673754),
      "rejected(10673754ns)")

# Beyond the largest instant, the clock (random-seed-1-trace-44, shrunk): C = 1, 1 per
# 72057594037927935 ns (2^56 - 1). After consume(1) at 0 the Spec admits at 2^56 - 1 ns; the
# library's first admitting instant is 2^56 - 4: (double)(2^56 - 4) is 2^56 (floats are 8 apart
# below 2^56), so monotonic() reads 2^56 ns there, already past the Spec's instant.
b = bucket(1, 1, (1 << 56) - 1, 1, 0)
check("TB-6 token-bucket/random-seed-1-trace-44 (shrunk): the float reading of 2^56 - 4 ns is 2^56 ns",
      (consume(b, 0, 1), consume(b, 0, 1), first_admission(b, 0, 1), reading((1 << 56) - 4) == reading(1 << 56)),
      ("allowed", "refused", (1 << 56) - 4, True),
      "allowed(0), rejected(72057594037927935ns)")

# As drawn (94 ns early): C = 3, 4 per 4611686018427387903 ns, I = 1 at 30: the Spec admits the
# second consume(1) at 31 + 1152921504606846975; around 1.15e18 ns the clock reads floats 2^-22 s
# (238 ns) apart.
b = bucket(3, 4, 4611686018427387903, 1, 30)
check("TB-6 token-bucket/random-seed-1-trace-44: 94 ns early at 1.15e18 ns",
      (consume(b, 31, 1), consume(b, 31, 1), first_admission(b, 31, 1) - 31),
      ("allowed", "refused", 1152921504606846881),
      "allowed(0), rejected(1152921504606846975ns)")

# Worst (random-seed-1-trace-0, 515 ns early): C = 2147483647 full at 82, 65536 per 86400 s.
# The clock at 2.8e18 ns reads floats 477 ns apart, and rate·(now - last) adds its rounding.
b = bucket(2147483647, 65536, 86400 * NS, 2147483647, 82)
first = (consume(b, 1318359458, 1), consume(b, 2636718832, 2147483647), consume(b, 2636718834, 2147483645))
check("TB-6 token-bucket/random-seed-1-trace-0: 515 ns early at 2.8e18 ns (and the whole capacity 1 ns early at step 2)",
      (first, first_admission(b, 2636718834, 2147483645) - 2636718834),
      (("allowed", "allowed", "refused"), 2831155196044921359),
      "allowed(2147483646), rejected(1ns) (within the 1 ns tolerance), rejected(2831155196044921874ns)")

# ---- CORE-3: validation ----
accepted = []
for rate, capacity in ((float("inf"), 1),  # refuse-zero-period: 1 per 0 ns
                       (1 * NS / 2, INT64_MAX)):  # refuse-refill-past-timeline: C = Int64.max, 1 per 2 ns
    try:
        Limiter(rate, capacity, MemoryStorage())
        accepted.append(True)
    except (TypeError, ValueError):
        accepted.append(False)
check("CORE-3 token-bucket/refuse-zero-period (rate inf), refuse-refill-past-timeline: created",
      accepted, [True, True],
      "refused: periodNanoseconds mustBePositive; periodNanoseconds exceedsMaximum 1")

# ---- CORE-9: zero and negative counts ----
b = bucket(3, 1, 10, 3, 0)
check("CORE-9 token-bucket/zero-release-invalid: consume(0) and consume(-1) raise the same ValueError",
      (consume(b, 0, 1), consume(b, 0, 0), consume(b, 0, -1)),
      ("allowed", "ValueError(num_tokens must be >= 1)", "ValueError(num_tokens must be >= 1)"),
      "allowed(2), allowed(2) (a query), invalid(permits: mustNotBeNegative)")

# ---- Also seen, no finding of the run (the protocol's integers never make these rates) ----
# A NaN rate passes `rate <= 0` (limiter.py:72) and min(capacity, nan) is capacity (storage.py:112):
# the bucket is full at every consume.
b = Limiter(float("nan"), 2, MemoryStorage())
check("(also) a NaN rate is accepted and never limits",
      tuple(consume(b, 0, 2) for _ in range(3)),
      ("allowed", "allowed", "allowed"),
      "a rate that is not a number refused")

print("\n%d checks, %d no longer reproduce%s" % (CHECKS[0], len(FAILED), (": " + ", ".join(FAILED)) if FAILED else ""))
sys.exit(1 if FAILED else 0)
