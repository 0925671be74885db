#!/usr/bin/env python3
"""Reproduces each finding of README.md with the `redis-ratekit` library alone, without the shim.

    Implementations/redis-ratekit/.venv/bin/python Implementations/redis-ratekit/findings.py

Each check builds the library's limiters (`ratekit.RateLimiter(...)`) over a `redis.Redis` client
of an unmodified redis-server started by ../common/redisclock.py (`ClockedRedis`), whose wall clock
(TIME, key expiry) is set before each call; nothing else is replaced. The protocol's instant 0 is
1,700,000,000 s after the Unix epoch for the buckets, and the first multiple of the window at or
after it for the windows, as in the shim. Instants are given in nanoseconds from instant 0.

`isAllow(user_id)` answers a bool. Where a check needs the instant at which the library would
admit (what the shim sends as a retry-after) or whether it would admit once more (the shim's
`remaining`, up to 1), it asks the library's own `isAllow` of a copy of the limiter's keys
(Redis COPY, which keeps their expiry, into a namespace of its own) at that instant, so the
limiter itself never changes: `admits(...)`.

It prints what the library answers next to what the Spec answers, and exits 1 if any finding no
longer reproduces (for instance after a version change).
"""

import inspect
import os
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import ratekit  # noqa: E402
import redis  # noqa: E402
import redisclock  # noqa: E402
from ratekit import RateLimiter  # noqa: E402

NS = 1_000_000_000
PRESENT = 1_700_000_000
USER = "u"

SERVER = redisclock.start_for_findings()
if SERVER is None:
    sys.exit(2)
CLIENT = redis.Redis.from_url(SERVER.url)


class Limiter:
    """One library limiter, its namespace, and the clock as it reads for it."""
    count = 0

    def __init__(self, algorithm, origin, created=0, prefill=0, **arguments):
        Limiter.count += 1
        self.namespace = "F%d" % Limiter.count
        self.algorithm, self.origin, self.arguments = algorithm, origin, arguments
        self.library = RateLimiter(algorithm, redis_client=CLIENT, nameSpace=self.namespace, **arguments)
        self.now = created
        self.at(created)
        # An initial state other than a new key's, reached as the shim reaches it: isAllow() calls.
        for _ in range(prefill):
            assert self.library.isAllow(USER)

    def at(self, now):
        SERVER.set_clock(self.origin * NS + now)

    def allow(self, now):
        """isAllow() at `now` (ns from instant 0)."""
        self.now = now
        self.at(now)
        return self.library.isAllow(USER)

    @property
    def key(self):
        return "%s:%s" % (self.namespace, USER)

    def state(self):
        """The limiter's hash (buckets, counter) or log (member -> score), at its last instant."""
        self.at(self.now)
        if CLIENT.type(self.key) == b"zset":
            return [(m.decode(), s) for m, s in CLIENT.zrange(self.key, 0, -1, withscores=True)]
        return {k.decode(): v.decode() for k, v in CLIENT.hgetall(self.key).items()}

    def admits(self, when):
        """Whether the library's isAllow() admits at `when` on a copy of the keys as they are now
        (copied at the limiter's own instant, where they have not expired). Changes nothing."""
        probe = self.namespace + "p"
        self.at(self.now)
        for key in CLIENT.keys(self.namespace + ":*"):
            CLIENT.copy(key, probe + key.decode()[len(self.namespace):], replace=True)
        self.at(when)
        try:
            return RateLimiter(self.algorithm, redis_client=CLIENT, nameSpace=probe, **self.arguments).isAllow(USER)
        finally:
            for key in CLIENT.keys(probe + ":*"):
                CLIENT.delete(key)
            self.at(self.now)

    def first_admission(self, low, high, unit=10_000):
        """The first instant on the 10 us grid in (low, high] at which admits() is true, by bisection
        (the shim's search; the library's admission is monotone in time), or None."""
        if not self.admits(high):
            return None
        while high - low > unit:
            middle = low + (high - low) // 2 // unit * unit
            if self.admits(middle):
                high = middle
            else:
                low = middle
        return high


def bucket(algorithm, capacity, permits, period, created=0, prefill=0):
    """The shim's mapping of a bucket: the rate as a float per second, origin PRESENT."""
    rate = float(Fraction(permits * NS, period))
    name = "refill_rate" if algorithm == "token bucket" else "leakage_rate"
    return Limiter(algorithm, PRESENT, created, prefill, bucket_capacity=capacity, **{name: rate})


def window(algorithm, limit, seconds, created=0):
    """The shim's mapping of a window: whole seconds, instant 0 on a multiple of the window."""
    origin = -(-PRESENT // seconds) * seconds
    return Limiter(algorithm, origin, created, rate_limit=limit, window_size=seconds)


FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        print("     (expected the library to answer %s)" % (expected_by_library,))
        FAILED.append(name)


TB, LB, SWL, SWC = "token bucket", "leaky bucket", "sliding window log", "sliding window counter"
END = 9223372036854770000  # the profile's largest instant

# --- all four strategies --------------------------------------------------------------------------

check("CORE-9 negative permits (all four; not a library defect): isAllow() takes no count, so the "
      "shim answers acquire(-1) invalid(permits: notSupported), as it answers any count but 1",
      [list(inspect.signature(cls.isAllow).parameters) for cls in
       (ratekit.factory.Token_Bucket, ratekit.factory.Leaky_Bucket, ratekit.factory.Sliding_Window_Log,
        ratekit.factory.Sliding_Window_Counter)],
      [["self", "user_id"]] * 4, "invalid(permits: mustNotBeNegative)")

# --- token bucket ---------------------------------------------------------------------------------

lim = bucket(TB, 3, 3, 10_000, prefill=3)  # initialTokens 0: three calls at 0
a = lim.allow(10_000)
b = lim.allow(0)
check("CORE-10 token-bucket/random-seed-1-trace-31, shrunk (liveness): capacity 3, 3 per 10 us, empty at "
      "0; isAllow at 10 us, then at 0 s: the negative elapsed time takes 3 tokens away "
      "(token_bucket.lua:21; -1, and the float timestamps, :5), and the refusal stores them (:27)",
      (a, b, lim.state()["current_tokens"], lim.admits(0), lim.admits(10_000)),
      (True, False, "-1.0040740966796875", False, True),
      "allowed(1) at 0 s: evaluated at 10 us (CORE-10), 2 tokens left; the library admits only at 10 us "
      "(rejected(10000ns))")

lim = bucket(TB, 3, 10, 10_000_000_000_000)  # go-backward-time, scaled to the 10 us unit
a = lim.allow(11_000_000_000_000)
b = lim.allow(10_000_000_000_000)
c = lim.admits(10_000_000_000_000)
d = lim.allow(10_000_000_000_000)
check("CORE-10 token-bucket/go-backward-time (the row's worst, 1000 s late): capacity 3, 10 per 10000 s; "
      "at 11000 s, then at 10000 s the bucket loses the 1000 s of refill (one token)",
      (a, b, c, d, lim.admits(10_999_999_990_000), lim.admits(11_000_000_000_000)),
      (True, True, False, False, False, True),
      "allowed(2), allowed(1), allowed(0), then rejected(200 s) at 10000 s: evaluated at 11000 s; the "
      "library refuses step 3 and admits it only at 11000 s")

lim = bucket(TB, 2 ** 63 - 1, 1, 20_000)
check("CORE-3 token-bucket/refuse-refill-past-timeline: capacity 2^63-1 at 1 per 20 us (a refill of "
      "5.8 million years) is accepted (token_bucket.py:10 checks only > 0)",
      (lim.library.bucket_capacity, lim.allow(0)), (2 ** 63 - 1, True),
      "refused periodNanoseconds (exceedsMaximum 1)")

lim = bucket(TB, 1, 1, 100_000, created=470_000, prefill=1)  # initialTokens 0
a = lim.allow(580_000)
b = lim.allow(680_000)
check("TB-4 token-bucket/random-seed-1-trace-38 (difference, 10 us late): capacity 1, 1 per 100 us; "
      "100 us after the last admission the float timestamps (token_bucket.lua:5) give 0.99897 tokens",
      (a, b, lim.state()["current_tokens"], 1700000000.00068 - 1700000000.00058, lim.admits(690_000)),
      (True, False, "0.99897384643554688", 9.989738464355469e-05, True),
      "allowed(0) at 680 us: 100 us at 1 per 100 us is one token exactly")

lim = bucket(TB, 1, 1, 140_000)
a = lim.allow(0)
b = lim.allow(0)
check("TB-6 retry-after (difference, 10 us late; the arithmetic of random-seed-1-trace-22's step 21): "
      "capacity 1, 1 per 140 us, full; after one admission the library admits at 150 us, not 140 us",
      (a, b, lim.admits(140_000), lim.admits(150_000), lim.first_admission(0, 10 * NS)),
      (True, False, False, True, 150_000),
      "rejected(140000ns): 140 us at 1 per 140 us is one token exactly")

lim = bucket(TB, 2, 1, 10_000, prefill=1)
a = lim.allow(840_000)
check("TB-6's smallest case as the suite shrank it (token-bucket/random-seed-1-trace-22, shrunk): "
      "capacity 2, 1 per 10 us, 1 token at 0; at 840 us, then at 830 us: time going back (CORE-10's "
      "cause), 10 us late",
      (a, lim.allow(830_000), lim.admits(830_000), lim.admits(840_000)), (True, False, False, True),
      "allowed(0) at 830 us: evaluated at 840 us, one token left")

# --- leaky bucket (meter) -------------------------------------------------------------------------

lim = bucket(LB, 3, 3, 10_000)
a = lim.allow(9223372036854620000)
b = lim.allow(9223372036854610000)
check("CORE-10 leaky-bucket-meter/random-seed-1-trace-15, shrunk (liveness): capacity 3, 3 per 10 us; "
      "10 us back the negative elapsed time pours 3 permits in (leaky_bucket.lua:16; 4 in exact "
      "arithmetic, 3.86 from timestamps 1.9 us apart near 1.09e10 s, :5) and the refusal stores the level (:22)",
      (a, b, lim.state()["current_capacity"], lim.admits(9223372036854610000), lim.admits(9223372036854620000)),
      (True, False, "3.86102294921875", False, True),
      "allowed(1): evaluated at the later instant, the level is 1")

lim = bucket(LB, 3, 10, 10_000_000_000_000)  # same-as-token-bucket, scaled to the 10 us unit
a = lim.allow(11_000_000_000_000)
b = lim.allow(10_000_000_000_000)
c = lim.admits(10_000_000_000_000)
d = lim.allow(10_000_000_000_000)
check("CORE-10 leaky-bucket-meter/same-as-token-bucket (the row's worst, 1000 s late): capacity 3, leak "
      "10 per 10000 s; at 11000 s, then at 10000 s the level gains the 1000 s of leak (one permit)",
      (a, b, c, d, lim.admits(10_999_999_990_000), lim.admits(11_000_000_000_000)),
      (True, True, False, False, False, True),
      "allowed(2), allowed(1), allowed(0), then rejected(200 s) at 10000 s: evaluated at 11000 s")

lim = bucket(LB, 2 ** 63 - 1, 1, 20_000)
check("CORE-3 leaky-bucket-meter/refuse-drain-past-timeline: capacity 2^63-1 at 1 per 20 us is "
      "accepted (leaky_bucket.py:9 checks only > 0)",
      (lim.library.capacity_of_bucket, lim.allow(0)), (2 ** 63 - 1, True),
      "refused periodNanoseconds (exceedsMaximum 1)")

lim = bucket(LB, 3, 1, 190_000, created=360_000, prefill=2)  # initialLevel 2
answers = [lim.allow(t) for t in (360_000, 570_000, 880_000, 970_000, 1_190_000, 1_500_000)]
check("LBM-4 leaky-bucket-meter/random-seed-1-trace-21, shrunk (difference, 10 us late): capacity 3, "
      "leak 1 per 190 us, level 2 at 360 us; after six admissions the level at 1.5 ms is above 2 by the "
      "float timestamps, and a seventh call is refused there",
      (answers, lim.state()["current_capacity"], lim.admits(1_500_000), lim.admits(1_510_000)),
      ([True] * 6, "2.000635649028577", False, True),
      "allowed(1) at step 6: the level is exactly 2 (LBM-3), and one more fits")

lim = bucket(LB, 1, 1, 140_000)
a = lim.allow(0)
check("LBM-6 leaky-bucket-meter/random-seed-1-trace-19, shrunk (difference, 10 us late): capacity 1, "
      "leak 1 per 140 us; the library admits at 150 us, not 140 us",
      (a, lim.allow(0), lim.admits(140_000), lim.first_admission(0, 10 * NS)), (True, False, False, 150_000),
      "rejected(140000ns)")

# --- sliding window log ---------------------------------------------------------------------------

lim = window(SWL, 1, 1, created=9223372036854770000)
a = lim.allow(9223372036854770000)
b = lim.allow(9223372035369570000)
log = lim.state()
ttl = CLIENT.pttl(lim.key)
at = lim.first_admission(9223372035369570000, END)
check("CORE-7 sliding-window-log/random-seed-1-trace-8, shrunk (retry forever): limit 1, W 1 s; an "
      "admission at T (the end of the timeline), a refusal 1.4852 s earlier: the refusal's EXPIRE (sliding_window_log.lua:15-16) "
      "makes the log expire 1 s after the earlier instant, with its entry of T inside it; the library "
      "then admits at the earlier instant + 1.00043 s (the key's expiry, in whole ms)",
      (a, b, len(log), ttl, at - 9223372035369570000),
      (True, False, 1, 1000, 1_000_430_000),
      "neverAllowed: evaluated at T, the entry of T ends at T + 1 s, past the end of the timeline")

lim = window(SWL, 1, 1, created=10 * NS)
a = lim.allow(10 * NS)
b = lim.allow(8 * NS)
check("CORE-7's cause at an ordinary instant (1700000010 s): an admission at 10 s, a refusal at 8 s; "
      "the log (and its entry of 10 s) is deleted at 9.001 s, and the library admits there",
      (a, b, lim.admits(9 * NS), lim.admits(9_001_000_000), CLIENT.exists(lim.key)),
      (True, False, False, True, 1),
      "refused until 11 s: rejected(3 s) at 8 s (the entry of 10 s is in force until 11 s)")

lim = window(SWL, 4, 1, created=17_855_150_000)
answers = [lim.allow(t) for t in (17_855_150_000, 17_855_150_000, 0, 1_116_500_000)]
check("CORE-10 sliding-window-log/random-seed-1-trace-24, shrunk (over-promise): limit 4, W 1 s; two "
      "admissions at 17.85515 s, one at 0 s, one at 1.1165 s: the admission at 0 s is stamped 0 s "
      "(sliding_window_log.lua:5, 10) and its EXPIRE (:11-12) makes the whole log, with the two "
      "entries of 17.85515 s, expire at 1.001 s; at 1.1165 s the log holds only the new entry",
      (answers, sorted(score for _, score in lim.state()), lim.admits(1_116_500_000)),
      ([True] * 4, [1700000001.1165], True),
      "allowed(0) at step 4: all four are recorded at 17.85515 s (CORE-10) and in force")

lim = window(SWL, 2, 3, created=0)
a = lim.allow(0)
CLIENT.delete(lim.key)  # nothing else deletes the log alone: both keys always get the same EXPIRE
expiries = None
lim2 = window(SWL, 2, 3, created=0)
b = [lim2.allow(0), lim2.allow(1 * NS), lim2.allow(2 * NS)]
SERVER.set_clock(lim2.origin * NS + 2 * NS)
expiries = (CLIENT.pexpiretime(lim2.key), CLIENT.pexpiretime(lim2.key + "-seq"))
check("sliding-window-log (not a finding): the `-seq` counter and the log get the same EXPIRE on every "
      "call (sliding_window_log.lua:11-12, 15-16), so the counter never restarts while the log holds "
      "entries and no member is reused; a refusal refreshes both",
      (b, expiries[0] == expiries[1], lim2.state()), ([True, True, False], True,
                                                     [("1", 1700000001.0), ("2", 1700000002.0)]),
      "(the Spec keeps the log; the counter is the library's way to make members unique)")

# --- sliding window counter -----------------------------------------------------------------------

lim = window(SWC, 1, 10, created=0)
a = lim.allow(9 * NS)
check("SWC-3 sliding-window-counter/no-floor (over-admission): limit 1, W 10 s; at 11 s the estimate "
      "before the request is 0.9, and `0.9 < 1` admits (sliding_window_counter.lua:32-33): the "
      "request itself is not counted in the comparison",
      (a, lim.allow(11 * NS)), (True, True), "rejected(9 s): 0.9 + 1 > 1")

lim = window(SWC, 1, 1, created=1_041_620_000)
a = lim.allow(1_041_620_000)
b = lim.allow(976_510_000)
check("SWC-3 sliding-window-counter/random-seed-1-trace-21, shrunk (over-admission): limit 1, W 1 s; "
      "an admission at 1.04162 s, then one at 0.97651 s, in the window before: neither `==` nor `+1` "
      "(sliding_window_counter.lua:20, 29), so the `else` branch (:41-48) zeroes both counts",
      (a, b, lim.state()), (True, True, {"previous_window_id": "1700000000", "current_count": "1",
                                         "prev_count": "0"}),
      "rejected(2023490000ns): evaluated at 1.04162 s (CORE-10)")

lim = window(SWC, 1, 1, created=80_982_790_000)
a = lim.allow(80_982_790_000)
check("SWC-3 sliding-window-counter/random-seed-1-trace-35, shrunk (early retry; the row's worst is this "
      "trace's 31 s): limit 1, W 1 s; refused at 81 s (1 < 1 is false), admitted 10 us later (0.99999 < 1)",
      (a, lim.allow(80_982_790_000), lim.admits(81 * NS), lim.admits(81_000_010_000)),
      (True, False, False, True),
      "rejected(1017210000ns): admitted at 82 s, where the permit of 80.98 s no longer weighs")

lim = window(SWC, 36, 1, created=1_349_640_000)
answers = [lim.allow(1_349_640_000) for _ in range(35)]
b = lim.allow(674_820_000)
check("CORE-10 sliding-window-counter/random-seed-1-trace-45, shrunk (over-promise): limit 36, W 1 s; 35 "
      "admissions at 1.34964 s, then one at 0.67482 s, in the window before: the `else` branch zeroes "
      "the 35 (sliding_window_counter.lua:41-48), and 35 more would pass",
      (answers == [True] * 35, b, lim.state(), lim.admits(674_820_000)),
      (True, True, {"previous_window_id": "1700000000", "current_count": "1", "prev_count": "0"}, True),
      "allowed(0): evaluated at 1.34964 s, 36 permits in the window")

lim = window(SWC, 2, 1000000007, created=118416868 * NS)
a = lim.allow(118416868 * NS)
b = lim.allow(1118416874 * NS)
check("SWC-3 window alignment to the origin, sliding-window-counter/random-5 (over-promise; not "
      "alignment: the suite's experiment moved the creation, created at the first event): limit 2, W 1000000007 s; one admission in "
      "a window, one 11.8% into the next: the estimate is 0.88 + 1, and 1.88 < 2 admits a third "
      "(sliding_window_counter.lua:21-22)",
      (a, b, lim.admits(1118416874 * NS)), (True, True, True),
      "allowed(0): floor(2 - 1.88) = 0; a third is refused")

lim = window(SWC, 4, 459961, created=830_000)
answers = [lim.allow(t) for t in (830_000, 443294376030000, 903255376030000, 903255376030000)]
b = lim.allow(905834809300000)
check("SWC-5 sliding-window-counter/random-seed-1-trace-29 (over-promise): limit 4, W 459961 s; two "
      "admissions in window 0, two 96.38% into window 1, one at 96.94%: 2·0.0306 + 3 = 3.06 < 4 "
      "admits a fifth",
      (answers, b, lim.admits(905834809300000)), ([True] * 4, True, True),
      "allowed(0): floor(4 - 3.06) = 0")

lim = window(SWC, 3, 31, created=0)
answers = [lim.allow(0), lim.allow(0), lim.allow(37_322_980_000)]
check("SWC-5 sliding-window-counter/random-seed-1-trace-24, shrunk (over-promise): limit 3, W 31 s; two "
      "at 0 s, one at 37.32298 s: 2·0.796 + 1 = 2.59 < 3 admits a fourth",
      (answers, lim.admits(37_322_980_000)), ([True] * 3, True), "allowed(0): floor(3 - 2.59) = 0")

lim = window(SWC, 2, 38, created=58 * NS)
answers = [lim.allow(98 * NS), lim.allow(96 * NS), lim.allow(112 * NS)]
check("SWC-6 sliding-window-counter/random-2 (early retry, 19 s): limit 2, W 38 s; two in [76 s, 114 s), "
      "refused at 112 s; the library admits at 114.00001 s (2·0.9999997 < 2)",
      (answers, lim.admits(114 * NS), lim.first_admission(112 * NS, 200 * NS)),
      ([True, True, False], False, 114_000_010_000),
      "rejected(21 s): admitted at 133 s, where 2·(1 - 19/38) + 1 = 2")

lim = window(SWC, 1, 1, created=0)
a = lim.allow(0)
check("SWC-6 sliding-window-counter/random-seed-1-trace-43, shrunk (early retry): limit 1, W 1 s; the "
      "library admits at 1.00001 s, the Spec at 2 s",
      (a, lim.allow(0), lim.first_admission(0, 5 * NS)), (True, False, 1_000_010_000),
      "rejected(2000000000ns): the permit of 0 s weighs 1 - o/W > 0 until 2 s")

# --- the TTLs ------------------------------------------------------------------------------------

lim = bucket(TB, 5, 1, 2 * NS)
a = lim.allow(0)
ttl_tb = CLIENT.ttl(lim.key)
lim = bucket(LB, 5, 1, 2 * NS)
a = lim.allow(0)
ttl_lb = CLIENT.ttl(lim.key)
lim = window(SWC, 5, 7)
a = lim.allow(0)
ttl_swc = CLIENT.ttl(lim.key)
check("TTLs (not a finding): ceil(capacity / rate) + 5 s for the buckets (token_bucket.lua:12, "
      "leaky_bucket.lua:7), 2W + 1 s for the counter (sliding_window_counter.lua:12), W for the log: "
      "each outlives the state it would change, forward in time",
      (ttl_tb, ttl_lb, ttl_swc), (15, 15, 15),
      "a full bucket, an empty meter and zero counts are the keys' absence")

print("\nredis-ratekit %s (redis-server %s): %d findings checked, %d no longer reproduce"
      % (ratekit.__version__, SERVER.version, CHECKS[0], len(FAILED)))
SERVER.stop()
sys.exit(1 if FAILED else 0)
