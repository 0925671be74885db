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
from pyrate_limiter import GCRA, InMemoryBucket, Limiter, Rate, RateItem, StateBucket, TokenBucket
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
    if limiter.try_acquire("k", weight=weight, blocking=False):
        return "allowed"
    return "rejected(%d ms)" % bucket.waiting(RateItem("k", ms, weight=weight))


# SWL-3: the window is [now - interval, now], both ends included (SlidingWindowLog.window_start
# and the inclusive bisect in InMemoryBucket.put); retry_after adds 1 ms to match.
bucket = InMemoryBucket([Rate(3, 1)])
limiter = Limiter(bucket)
check("SWL-3 sliding-window-log/random-seed-7-trace-0 (shrunk): an entry exactly one window old still counts",
      (acquire(limiter, bucket, 9, 3), acquire(limiter, bucket, 9, 1), acquire(limiter, bucket, 10, 1),
       acquire(limiter, bucket, 11, 1)),
      ("allowed", "rejected(2 ms)", "rejected(1 ms)", "allowed"),
      "allowed, rejected(1 ms), allowed at 10 ms (the entries of 9 ms expire at 10 ms)")
limiter.close()

# SWL-3 / CONF-5 (seed 2, trace 31, shrunk): the same longer window, met at two edges in a row,
# refuses acquire(1) at 5 ms and again at 7 ms where the Spec admits it at every step.
bucket = InMemoryBucket([Rate(3, 1)])
limiter = Limiter(bucket)
check("SWL-3 sliding-window-log/random-seed-2-trace-31 (shrunk): a refusal sustained over two window edges",
      (acquire(limiter, bucket, 4, 1), acquire(limiter, bucket, 4, 2), acquire(limiter, bucket, 5, 1),
       acquire(limiter, bucket, 6, 1), acquire(limiter, bucket, 7, 2), acquire(limiter, bucket, 7, 1)),
      ("allowed", "allowed", "rejected(1 ms)", "allowed", "allowed", "rejected(1 ms)"),
      "allowed, allowed, allowed at 5 ms, allowed, allowed, allowed at 7 ms")
limiter.close()

# TB-4: GCRA._emission_us is max(1, ceil(interval * 1000 / limit)) microseconds: at most one
# permit per microsecond, however high the rate.
bucket = StateBucket([Rate(1_000_000_000, 1, burst=1_000_000_000)], algorithm=TokenBucket())
limiter = Limiter(bucket)
check("TB-4 token-bucket/billion-per-nanosecond: 10^9 per ms refills at 1 per microsecond",
      (acquire(limiter, bucket, 0, 1_000_000_000), acquire(limiter, bucket, 1, 1_000_000_000),
       GCRAPolicy._emission_us(bucket.rates[0])),
      ("allowed", "rejected(999999 ms)", 1),
      "allowed, allowed(0) at 1 ms (the bucket refills in 1 ms)")
limiter.close()

# TB-6: the emission interval is rounded up to whole microseconds: 1 ms / 3 = 333.33 us -> 334,
# and every permit of a long wait pays the difference.
bucket = StateBucket([Rate(3, 1, burst=1907)], algorithm=TokenBucket())
limiter = Limiter(bucket)
acquire(limiter, bucket, 0, 1906)  # initialTokens 1
check("TB-6 token-bucket/random-seed-7-trace-34 (shrunk): 1906 missing permits at 334 us instead of 333.33 us",
      (acquire(limiter, bucket, 0, 1907), GCRAPolicy._emission_us(bucket.rates[0])),
      ("rejected(637 ms)", 334), "rejected(635.333334 ms)")
limiter.close()

# TB-6 (differences within a millisecond): waits are ceil((allow_at - now_us) / 1000) ms.
bucket = StateBucket([Rate(3, 10, burst=5)], algorithm=TokenBucket())
limiter = Limiter(bucket)
acquire(limiter, bucket, 0, 5)  # initialTokens 0
check("TB-6 token-bucket/retry-after-rounds-up: the wait is whole milliseconds, rounded up",
      acquire(limiter, bucket, 0, 2), "rejected(7 ms)", "rejected(6.666667 ms)")
limiter.close()

# GCRA: exact at the millisecond (no finding); shown for comparison.
bucket = StateBucket([Rate(1, 10, burst=2)], algorithm=GCRA())
limiter = Limiter(bucket)
check("GCRA (no finding): burst 2, one per 10 ms",
      (acquire(limiter, bucket, 0, 2), acquire(limiter, bucket, 0, 1), acquire(limiter, bucket, 10, 1)),
      ("allowed", "rejected(10 ms)", "allowed"), "the same")
limiter.close()

# CORE-3: Rate asserts only that interval and limit are non-zero and burst >= 1.
accepted = []
for args in ((1, -10), (-1, 10, 1), (1, 10, 9223372036854775807)):
    try:
        Rate(*args)
        accepted.append(True)
    except AssertionError:
        accepted.append(False)
check("CORE-3: negative intervals or limits are accepted", accepted, [True, True, True],
      "refused (mustBePositive; the refill past the timeline: exceedsMaximum)")

# CORE-9: a negative weight raises in Limiter._try_acquire (assert weight >= 0), it is not admitted.
bucket = InMemoryBucket([Rate(3, 10)])
limiter = Limiter(bucket)
try:
    limiter.try_acquire("k", weight=-1, blocking=False)
    raised = False
except AssertionError:
    raised = True
check("CORE-9 (no finding): try_acquire(weight=-1) raises AssertionError", raised, True, "invalid(permits)")
limiter.close()

print("\npyrate-limiter %s: %d checks, %d no longer reproduce" % (pyrate_limiter.__version__, CHECKS[0], len(FAILED)))
sys.exit(1 if FAILED else 0)
