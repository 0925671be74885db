#!/usr/bin/env python3
"""Reproduces each finding of README.md with pyrate-limiter alone, without the shim.

    Implementations/.venv/bin/python Implementations/pyrate-limiter/findings.py

Each check builds the bucket and Limiter itself and drives them with try_acquire(...,
blocking=False) and bucket.waiting(item); the clock is MonotonicClock with `monotonic_ns`, as
pyrate_limiter.clocks looks it up, replaced by a settable one. Prints the library's answers next
to the Spec's and exits 1 if a finding no longer reproduces.
"""

import sys

import pyrate_limiter
import pyrate_limiter.clocks as clocks
from pyrate_limiter import GCRA, FixedWindow, InMemoryBucket, Limiter, Rate, RateItem, StateBucket, TokenBucket
from pyrate_limiter.abstracts.algorithm import GCRA as GCRAPolicy


class Clock:
    ms = 0


CLOCK = Clock()
clocks.monotonic_ns = lambda: CLOCK.ms * 1_000_000

FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        FAILED.append(name)


def acquire(limiter, bucket, ms, weight):
    CLOCK.ms = ms
    try:
        if limiter.try_acquire("k", weight=weight, blocking=False):
            return "allowed"
    except AssertionError:
        return "invalid"  # Limiter._try_acquire: assert weight >= 0
    wait = bucket.waiting(RateItem("k", ms, weight=weight))
    return "never" if wait == -1 else "rejected(%d ms)" % wait


def token_bucket(capacity, per_period, period_ms, initial, created_ms):
    """StateBucket([Rate(R, P, burst=C)], TokenBucket()) in a Limiter; a new bucket is full, so
    I < C is reached with the library's own try_acquire(weight=C - I) at the creation instant."""
    bucket = StateBucket([Rate(per_period, period_ms, burst=capacity)], algorithm=TokenBucket())
    limiter = Limiter(bucket)
    if capacity > initial:
        assert acquire(limiter, bucket, created_ms, capacity - initial) == "allowed"
    return bucket, limiter


def log_bucket(limit, window_ms):
    bucket = InMemoryBucket([Rate(limit, window_ms)])
    return bucket, Limiter(bucket)


# ---- Run of 2026-12-03 (seed 1, 50 random traces of 100 steps), the rows of README.md ----

# SWL-3 (smallest case): the window is [now - interval, now], both ends included
# (SlidingWindowLog.window_start is now - interval, InMemoryBucket.put counts the items with
# timestamp >= it, bisect_left), and retry_after adds 1 ms to match.
bucket, limiter = log_bucket(10, 10)
check("SWL-3 sliding-window-log/counter-worst-case: an entry exactly one window old still counts",
      (acquire(limiter, bucket, 9, 10), acquire(limiter, bucket, 18, 8), acquire(limiter, bucket, 19, 8)),
      ("allowed", "rejected(2 ms)", "rejected(1 ms)"),
      "allowed, rejected(1 ms), allowed(2) at 19 ms (the entries of 9 ms expire at 19 ms)")
limiter.close()

bucket, limiter = log_bucket(1, 1)
check("SWL-3 sliding-window-log/random-seed-1-trace-0 (shrunk): limit 1 per 1 ms waits 2 ms",
      (acquire(limiter, bucket, 0, 1), acquire(limiter, bucket, 0, 1), acquire(limiter, bucket, 1, 1),
       acquire(limiter, bucket, 2, 1)),
      ("allowed", "rejected(2 ms)", "rejected(1 ms)", "allowed"),
      "allowed, rejected(1 ms), allowed at 1 ms: one permit per 1 ms, not per 2 ms")
limiter.close()

# SWL-3, the utilization of the run (69.4%): random trace 14 (limit 746290, W = 2^32 ms) asks for
# the whole limit exactly one window after the last admission, three times; each refusal loses
# 746290 of the Spec's permits (2,238,870 of the 2,240,143 lost in the 50 traces).
bucket, limiter = log_bucket(746290, 4294967296)
steps = ((4294967372, 469594), (8589934667, 7), (12884901962, 746290), (12884901963, 1), (17179869258, 1),
         (17179869259, 22), (21474836555, 512), (25769803852, 746290), (30064771149, 5065),
         (30064771150, 741226), (34359738447, 497167), (38654705743, 746290), (38654705744, 746290))
check("SWL-3 sliding-window-log/random-seed-1-trace-14 (steps 1-12, then one more): the whole limit refused at the window edge",
      tuple(acquire(limiter, bucket, ms, n) for ms, n in steps),
      ("allowed", "allowed", "rejected(2 ms)") + ("allowed",) * 6 + ("rejected(4294967296 ms)", "allowed",
                                                                     "rejected(1 ms)", "allowed"),
      "the same but rejected(1 ms) at step 3, rejected(4294967295 ms) at step 10 and allowed(0) at step 12 "
      "(the 497167 of step 11 are exactly one window old)")
limiter.close()

# TB-4 / TB-6, the two ways of GCRA._emission_us (abstracts/algorithm.py), which TokenBucket is:
# max(1, ceil(interval * 1000 / limit)) microseconds per permit.
# (a) the floor of 1 us: at most 1000 permits per ms, however high the rate.
bucket, limiter = token_bucket(1_000_000_000, 1_000_000_000, 1, 1_000_000_000, 0)
check("TB-4 token-bucket/billion-per-nanosecond: 10^9 per ms refills at 1 per microsecond",
      (acquire(limiter, bucket, 0, 1_000_000_000), acquire(limiter, bucket, 1, 1_000_000_000),
       GCRAPolicy._emission_us(bucket.rates[0])),
      ("allowed", "rejected(999999 ms)", 1),
      "allowed, allowed(0) at 1 ms (the bucket refills in 1 ms)")
limiter.close()

# random trace 48: 10979173887236458 per 59999999999 ms (183 per us), created near the end of the
# timeline; the library refills 1000 per ms instead of 182986.
t = 9223372036095
bucket, limiter = token_bucket(29380734, 10979173887236458, 59999999999, 21935847, t)
check("TB-4 token-bucket/random-seed-1-trace-48: 183 permits per us refill at 1 per us",
      (acquire(limiter, bucket, t, -1), acquire(limiter, bucket, t, 18636),
       acquire(limiter, bucket, t + 1, 21917210), acquire(limiter, bucket, t + 2, 5),
       acquire(limiter, bucket, t + 3, 1), acquire(limiter, bucket, t + 3, 26067),
       GCRAPolicy._emission_us(bucket.rates[0])),
      ("invalid", "allowed", "allowed", "allowed", "allowed", "rejected(24 ms)", 1),
      "invalid, allowed x4, allowed(522886) at step 6")
limiter.close()

# random trace 46 (the worst of the run, 188972521267703490 ns late): 70929226121911134 per
# 3435691966 ms is 20.6 permits per us; the library makes 1 per us, so a wait for the whole
# capacity is 6 years instead of 9153.9 s.
C = 1368186828740278
bucket, limiter = token_bucket(C, 70929226121911134, 3435691966, 1185162738546907, 27)
steps = ((28, 16384), (30, 32231724), (30, 1), (31, C + 1), (31, C + 1), (32, 1), (34, 32), (36, 1000),
         (38, 5957552778339), (41, 1), (43, C + 1), (43, 1), (44, C))
check("TB-6 token-bucket/random-seed-1-trace-46: 20.6 permits per us refill at 1 per us (worst case)",
      tuple(acquire(limiter, bucket, ms, n) for ms, n in steps),
      ("allowed",) * 3 + ("never",) * 2 + ("allowed",) * 5 + ("never", "allowed", "rejected(188981675204 ms)"),
      "the same up to step 12, then rejected(9153936.296510 ms)")
limiter.close()

# random trace 11 as drawn (before shrinking): 1.29 permits per ns.
bucket, limiter = token_bucket(896312833368, 17372484938251659, 13498031824, 589755650022, 42)
check("TB-6 token-bucket/random-seed-1-trace-11 (as drawn): 1287 permits per us refill at 1 per us",
      (acquire(limiter, bucket, 42, 1939801328), acquire(limiter, bucket, 45, 896312833368)),
      ("allowed", "rejected(308496982 ms)"), "allowed, rejected(239692.249790 ms)")
limiter.close()

# (b) rounded up to whole microseconds: 1 ms / 3 = 333.33 us -> 334 us, paid by every missing permit.
bucket, limiter = token_bucket(1669, 3, 1, 1, 0)
check("TB-6 token-bucket/random-seed-1-trace-11 (shrunk, smallest case): 1668 missing permits at 334 us",
      (acquire(limiter, bucket, 0, 1669), GCRAPolicy._emission_us(bucket.rates[0])),
      ("rejected(558 ms)", 334), "rejected(556 ms)")
limiter.close()

# 3 per 10 ms is 3334 us per permit: three permits take 10.002 ms, seen at 11 ms on the ms clock.
bucket, limiter = token_bucket(10, 3, 10, 0, 0)
check("TB-4 token-bucket/fractions-carry: 3 permits per 10 ms are 10.002 ms, not 10",
      (acquire(limiter, bucket, 3, 1), acquire(limiter, bucket, 4, 1), acquire(limiter, bucket, 10, 2),
       acquire(limiter, bucket, 11, 2), GCRAPolicy._emission_us(bucket.rates[0])),
      ("rejected(1 ms)", "allowed", "rejected(1 ms)", "allowed", 3334),
      "rejected(0.333334 ms), allowed, allowed at 10 ms")
limiter.close()

# CORE-3: Rate asserts only that interval and limit are non-zero and burst >= 1; the buckets add
# nothing for one rate (enforce_rate_list orders several).
accepted = []
for strategy, args in (("token-bucket/refuse-negative-period", (1, -1, 1)),
                       ("token-bucket/refuse-refill-past-timeline", (1, 2, 9223372036854775807)),
                       ("fixed-window/refuse-negative-window", (1, -10))):
    try:
        rate = Rate(*args)
        if strategy.startswith("token-bucket"):
            StateBucket([rate], algorithm=TokenBucket())
        else:
            InMemoryBucket([rate], algorithm=FixedWindow())
        accepted.append(True)
    except (AssertionError, ValueError):
        accepted.append(False)
check("CORE-3 token-bucket/refuse-negative-period, refuse-refill-past-timeline, fixed-window/refuse-negative-window: created",
      accepted, [True, True, True],
      "refused (mustBePositive; the refill past the timeline: exceedsMaximum)")

# SWL-3 judged liveness with --random 200 --seed 1 (random trace 115, shrunk): two one-millisecond
# edge refusals of acquire(1), with acquire(1) admitted three times between them; CONF-5's
# sustained-refusal rule ("admissions in between do not end it") chains them into one refusal.
bucket, limiter = log_bucket(3, 2)
check("SWL-3 sliding-window-log/random-seed-1-trace-115 (200 traces, shrunk): acquire(1) admitted between two edge refusals",
      (acquire(limiter, bucket, 5, 1), acquire(limiter, bucket, 5, 1), acquire(limiter, bucket, 5, 1),
       acquire(limiter, bucket, 7, 1), acquire(limiter, bucket, 9, 1), acquire(limiter, bucket, 9, 1),
       acquire(limiter, bucket, 11, 1), acquire(limiter, bucket, 11, 1)),
      ("allowed",) * 3 + ("rejected(1 ms)",) + ("allowed",) * 3 + ("rejected(1 ms)",),
      "allowed at every step (each refusal is one window edge: the entries of 5 ms and 9 ms are exactly 2 ms old)")
limiter.close()

# ---- Earlier runs (2026-11-25, seeds 7 and 2): the same causes, still reproduced ----

# SWL-3 (seed 7, trace 0, shrunk).
bucket, limiter = log_bucket(3, 1)
check("SWL-3 sliding-window-log/random-seed-7-trace-0 (shrunk): an entry exactly one window old still counts",
      (acquire(limiter, bucket, 9, 3), acquire(limiter, bucket, 9, 1), acquire(limiter, bucket, 10, 1),
       acquire(limiter, bucket, 11, 1)),
      ("allowed", "rejected(2 ms)", "rejected(1 ms)", "allowed"),
      "allowed, rejected(1 ms), allowed at 10 ms (the entries of 9 ms expire at 10 ms)")
limiter.close()

# SWL-3 / CONF-5 (seed 2, trace 31, shrunk): the same longer window, met at two edges in a row,
# refuses acquire(1) at 5 ms and again at 7 ms where the Spec admits it at every step.
bucket, limiter = log_bucket(3, 1)
check("SWL-3 sliding-window-log/random-seed-2-trace-31 (shrunk): a refusal sustained over two window edges",
      (acquire(limiter, bucket, 4, 1), acquire(limiter, bucket, 4, 2), acquire(limiter, bucket, 5, 1),
       acquire(limiter, bucket, 6, 1), acquire(limiter, bucket, 7, 2), acquire(limiter, bucket, 7, 1)),
      ("allowed", "allowed", "rejected(1 ms)", "allowed", "allowed", "rejected(1 ms)"),
      "allowed, allowed, allowed at 5 ms, allowed, allowed, allowed at 7 ms")
limiter.close()

# TB-6 (seed 7, trace 34, shrunk): 1906 missing permits at 334 us instead of 333.33 us.
bucket, limiter = token_bucket(1907, 3, 1, 1, 0)
check("TB-6 token-bucket/random-seed-7-trace-34 (shrunk): 1906 missing permits at 334 us instead of 333.33 us",
      (acquire(limiter, bucket, 0, 1907), GCRAPolicy._emission_us(bucket.rates[0])),
      ("rejected(637 ms)", 334), "rejected(635.333334 ms)")
limiter.close()

# TB-6 (differences within a millisecond): waits are ceil((allow_at - now_us) / 1000) ms.
bucket, limiter = token_bucket(5, 3, 10, 0, 0)
check("TB-6 token-bucket/retry-after-rounds-up: the wait is whole milliseconds, rounded up",
      acquire(limiter, bucket, 0, 2), "rejected(7 ms)", "rejected(6.666667 ms)")
limiter.close()

# ---- No finding, shown for comparison ----

# GCRA: exact at the millisecond (Rate(1, T, burst=B): an emission interval of exactly T * 1000 us).
bucket = StateBucket([Rate(1, 10, burst=2)], algorithm=GCRA())
limiter = Limiter(bucket)
check("GCRA (no finding): burst 2, one per 10 ms",
      (acquire(limiter, bucket, 0, 2), acquire(limiter, bucket, 0, 1), acquire(limiter, bucket, 10, 1)),
      ("allowed", "rejected(10 ms)", "allowed"), "the same")
limiter.close()

# CORE-9: a negative weight raises in Limiter._try_acquire (assert weight >= 0), it is not admitted.
bucket, limiter = log_bucket(3, 10)
check("CORE-9 (no finding): try_acquire(weight=-1) raises AssertionError", acquire(limiter, bucket, 0, -1),
      "invalid", "invalid(permits)")
limiter.close()

print("\npyrate-limiter %s: %d checks, %d no longer reproduce" % (pyrate_limiter.__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
