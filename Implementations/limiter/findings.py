#!/usr/bin/env python3
"""Reproduces each finding of README.md with limiter alone, without the shim.

    Implementations/limiter/.venv/bin/python Implementations/limiter/findings.py

Each check builds `limiter.Limiter(rate=..., capacity=...)` itself and acquires with the
library's documented `with limiter(consume=n): ...`, on a virtual clock: the name `time` in
`token_bucket.storage` is bound to a stand-in whose `monotonic()` returns what CPython's
`time.monotonic()` returns when CLOCK_MONOTONIC reads a settable number of nanoseconds, and the
name `sleep` in `limiter.limiter` to one that moves that clock on by what CPython's
`time.sleep(s)` waits at least, `ceil(s * 1e9)` ns. The instant the `with` statement is entered
is the instant the library admits the caller. Prints the library's answers next to the Spec's and
exits 1 if a finding no longer reproduces.
"""

import copy
import math
import random
import sys
import types
from importlib.metadata import version

import limiter.limiter as limiter_module
import token_bucket
import token_bucket.storage as storage
from limiter import Limiter

NS = 10 ** 9
INT64_MAX = (1 << 63) - 1
BUCKET = b"default"


def reading(ns):
    """CPython's _PyTime_AsSecondsDouble: whole seconds exactly, else (double)ns / 1e9."""
    return float(ns // NS) if ns % NS == 0 else float(ns) / 1e9


class StillSleeping(Exception):
    pass


class Clock:
    ns = 0
    sleeps = 0
    limit = 1000  # sleeps one acquire may take before the check stops it


CLOCK = Clock()


def sleep(seconds):
    CLOCK.sleeps += 1
    if CLOCK.sleeps > CLOCK.limit:
        raise StillSleeping()
    CLOCK.ns += math.ceil(seconds * 1e9)  # pytime_from_double with _PyTime_ROUND_TIMEOUT


storage.time = types.SimpleNamespace(monotonic=lambda: reading(CLOCK.ns))
limiter_module.sleep = sleep

FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        FAILED.append(name)


def make(capacity, permits, period, initial, created):
    """R per P ns is R·10^9/P tokens per second; a new bucket is full, I < C is reached with the
    library's own acquire of C - I at the creation instant."""
    lim = Limiter(rate=permits * NS / period, capacity=capacity)
    if initial < capacity:
        assert acquire(lim, created, capacity - initial) == "at once"
    return lim


def acquire(lim, ns, n, limit=1000):
    """`with lim(consume=n)` entered at ns: 'at once', 'after W ns' (W the nanoseconds it slept),
    'still sleeping after K sleeps' (stopped), or the exception it raised."""
    CLOCK.ns, CLOCK.sleeps, CLOCK.limit = ns, 0, limit
    try:
        with lim(consume=n):
            pass
    except StillSleeping:
        return "still sleeping after %d sleeps" % limit
    except ValueError as error:
        return "ValueError(%s)" % (error,)
    return "at once" if CLOCK.ns == ns else "after %d ns" % (CLOCK.ns - ns)


def tokens(lim):
    return lim.limiter._storage.get_token_count(BUCKET)


print("limiter %s, token-bucket %s\n" % (version("limiter"), token_bucket.__version__))

# ---- CORE-7: an acquire above the capacity never returns ----
# Smallest case (random-seed-1-trace-6, shrunk): C = 1, 1 per ns, full. limit_rate
# (limiter.py:248-256) loops while consume refuses: the bucket is full (tokens == C), the sleep is
# (2 - 1) / rate, and consume refuses again, forever. No error, no "never".
lim = make(1, 1, 1, 1, 0)
check("CORE-7 token-bucket/random-seed-1-trace-6 (shrunk): acquire(2) of a bucket of 1 sleeps forever",
      (acquire(lim, 0, 2), tokens(lim) == lim.capacity),
      ("still sleeping after 1000 sleeps", True),
      "neverAllowed")

# As drawn: C = 46, 82 per 2647 ns, full at 53 ns, acquire(47) at 53: the same endless loop.
lim = make(46, 82, 2647, 46, 53)
check("CORE-7 token-bucket/random-seed-1-trace-6: acquire(47) of a bucket of 46 sleeps forever",
      (acquire(lim, 53, 47), tokens(lim) == lim.capacity),
      ("still sleeping after 1000 sleeps", True),
      "neverAllowed")

# Trace 46: the other way out of the loop.
# out. C = 2058162512878284823, 2147483647 per 16607214 ns, I = 1967261278487054831 at 78;
# acquire(C + 1) at 80. float(C + 1) = 2058162512878284800 <= C: once the level reaches that float,
# (consume - tokens) / rate (base.py:73) is <= 0 and the loop breaks (limiter.py:252-253) without
# consuming: the caller is let through after 8.1 days, the bucket untouched.
lim = make(2058162512878284823, 2147483647, 16607214, 1967261278487054831, 78)
result = acquire(lim, 80, 2058162512878284824)
check("CORE-7 token-bucket/random-seed-1-trace-46: acquire(C + 1) returns after 702969847760295 ns, taking nothing",
      (result, tokens(lim) >= float(2058162512878284824), float(2058162512878284824) <= lim.capacity),
      ("after 702969847760295 ns", True, True),
      "neverAllowed (more than the capacity)")

# ---- TB-5 remaining (over-promise): the float token count above 2^53 ----
# random-seed-1-trace-26: C = 155830114914819091 full at 85, 633182803808307 per 16384 ns.
# acquire(1) at 86 leaves the int C - 1; the next replenish (storage.py:110-118 of 0.3.0) stores
# min(C, float(C - 1)), and float(C - 1) = 155830114914819104 > C: min() returns C, the bucket is
# full again and acquire(C) at the same instant returns at once.
lim = make(155830114914819091, 633182803808307, 16384, 155830114914819091, 85)
check("TB-5 token-bucket/random-seed-1-trace-26: acquire(1), then acquire(C) at once at the same instant",
      (acquire(lim, 86, 1), acquire(lim, 86, 155830114914819091)),
      ("at once", "at once"),
      "allowed(155830114914819090), then rejected: C + 1 permits admitted at one instant")

# ---- TB-6 retry-after ----
# Within the largest instant (random-seed-1-trace-39): C = 4394632560702314 full at 100, 2147483647
# per 60 s; the level near 3.9e15 is a float 0.5 apart (587.5 tokens where the Spec has
# 587.406), so consume(382617) at 16514 succeeds 3 ns before the Spec's instant.
lim = make(4394632560702314, 2147483647, 60 * NS, 4394632560702314, 100)
check("TB-6 token-bucket/random-seed-1-trace-39: returns 3 ns early",
      (acquire(lim, 100, 523876601399049), acquire(lim, 16484, -(1 << 63)), acquire(lim, 16484, 3870755959303264),
       tokens(lim), acquire(lim, 16514, 382617)),
      ("at once", "ValueError(num_tokens must be >= 1)", "at once", 587.5, "after 10673751 ns"),
      "allowed, invalid, allowed(587), rejected(10673754ns)")

# Beyond the largest instant (random-seed-1-trace-0): C = 2147483647 full at 82, 65536 per 86400 s.
# The sleep, (consume - tokens) / rate seconds (base.py:73), is made nanoseconds by CPython as the
# double nearest to s * 1e9 (512 apart near 2.8e18), then rounded up: 18 ns short.
lim = make(2147483647, 65536, 86400 * NS, 2147483647, 82)
check("TB-6 token-bucket/random-seed-1-trace-0: returns 18 ns early at 2.8e18 ns (step 2 within the tolerance)",
      (acquire(lim, 1318359458, 1), acquire(lim, 2636718832, 2147483647), acquire(lim, 2636718834, 2147483645)),
      ("at once", "at once", "after 2831155196044921856 ns"),
      "allowed, rejected(1ns), rejected(2831155196044921874ns)")

# random-seed-1-trace-44 (difference, 98 ns late): C = 3, 4 per 4611686018427387903 ns, I = 1 at 30;
# the second acquire(1) at 31 returns 1 ns late (within the tolerance), and every acquire(1) at
# 2^23 s is told 1144532896606847104 ns, a multiple of 128: the double s * 1e9 near 1.1e18.
lim = make(3, 4, 4611686018427387903, 1, 30)
first = acquire(lim, 31, 1)
probe = copy.deepcopy(lim)
second = acquire(probe, 31, 1)
probe = copy.deepcopy(lim)
later = acquire(probe, (1 << 23) * NS, 1)
check("TB-6 token-bucket/random-seed-1-trace-44: rejected 1 ns late at 31, 98 ns late at 2^23 s",
      (first, second, later),
      ("at once", "after 1152921504606846976 ns", "after 1144532896606847104 ns"),
      "allowed(0), rejected(1152921504606846975ns), rejected(1144532896606847006ns)")

# ---- CORE-3: validation ----
accepted = []
for rate, capacity in ((float("inf"), 1),  # refuse-zero-period: 1 per 0 ns
                       (1 * NS / 2, INT64_MAX)):  # refuse-refill-past-timeline
    try:
        Limiter(rate=rate, capacity=capacity)
        accepted.append(True)
    except (TypeError, ValueError):
        accepted.append(False)
check("CORE-3 token-bucket/refuse-zero-period (rate inf), refuse-refill-past-timeline: created",
      accepted, [True, True],
      "refused: periodNanoseconds mustBePositive; periodNanoseconds exceedsMaximum 1")

# ---- CORE-9: zero and negative counts ----
lim = make(3, 1, 10, 3, 0)
check("CORE-9 token-bucket/zero-release-invalid: consume=0 and consume=-1 raise token_bucket's ValueError",
      (acquire(lim, 0, 1), acquire(lim, 0, 0), acquire(lim, 0, -1)),
      ("at once", "ValueError(num_tokens must be >= 1)", "ValueError(num_tokens must be >= 1)"),
      "allowed(2), allowed(2) (a query), invalid(permits: mustNotBeNegative)")

# ---- Also (no row of the run: the shim uses the default jitter=False) ----
# limit_rate's `if sleep_for <= WAKE_UP: break` (limiter.py:252-253) lets the caller through without
# consuming. Without jitter it needs a level above 2^53, where float(n) - tokens can be 0.
lim = Limiter(rate=1, capacity=(1 << 53) + 2)
check("(also) acquire(2^53 + 1) with 2^53 tokens returns at once and takes nothing",
      (acquire(lim, 0, 2), acquire(lim, 0, (1 << 53) + 1), tokens(lim), acquire(lim, 0, 1 << 53)),
      ("at once", "at once", float(1 << 53), "at once"),
      "allowed, rejected, -, allowed: 2^53 + 2 permits at one instant, not 2^54 + 3")

# jitter=True: `case int() | float()` (base.py:76) matches True before `case bool()` (79), so
# the sleep is shortened by 1 second, and every wait under 1 s breaks out without consuming. The
# README's own example, Limiter(rate=2, capacity=5, consume=2, jitter=True), admits any number of
# acquires at one instant.
lim = Limiter(rate=2, capacity=5, consume=2, jitter=True)
CLOCK.ns = 0
admitted = 0
for _ in range(100):
    with lim:
        admitted += 1
check("(also) jitter=True: 100 acquires of 2 from a bucket of 5 at one instant, none waits",
      (admitted, CLOCK.ns, tokens(lim)),
      (100, 0, 1.0),
      "2 admitted at once, the third after 0.5 s (minus a random jitter), ...")

# jitter=100 (the README: "in units, milliseconds by default") is subtracted as 100 seconds
# (base.py:76-77: `duration - jitter`, not divided by units).
lim = Limiter(rate=2, capacity=5, consume=2, jitter=100)
CLOCK.ns = 0
admitted = 0
for _ in range(100):
    with lim:
        admitted += 1
check("(also) jitter=100 (meant as 100 ms): 100 acquires of 2 at one instant",
      (admitted, CLOCK.ns),
      (100, 0),
      "2 admitted at once, then one per second")

# A jitter range, as documented (milliseconds): each wait shorter than the drawn jitter lets the
# caller through without consuming. rate 1000/s, 1 per acquire: waits of 1 ms, jitter 0-100 ms
# (randrange(0, 100) / 1000 s, base.py:87-89): with random.seed(1), one of the 99 draws is 0 and
# sleeps 1 ms; the other 98 break out at once.
random.seed(1)
lim = Limiter(rate=1000, capacity=1, jitter=(0, 100))
CLOCK.ns = 0
admitted = 0
for _ in range(100):
    with lim:
        admitted += 1
check("(also) jitter=(0, 100): 100 acquires at one instant where 1 per ms is the rate",
      (admitted, CLOCK.ns),
      (100, 1000000),
      "2 admitted by 1 ms (1 at once, then one per ms, each at most 100 ms early)")

print("\n%d checks, %d no longer reproduce%s" % (CHECKS[0], len(FAILED), (": " + ", ".join(FAILED)) if FAILED else ""))
sys.exit(1 if FAILED else 0)
