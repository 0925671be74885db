#!/usr/bin/env python3
"""Reproduces each finding of README.md (memory store and Redis store) with the `throttled-py` library
alone, without the shim.

    Implementations/.venv/bin/python Implementations/throttled-py/findings.py

Each check builds a `Throttled(key="k", using=..., quota=per_duration(timedelta(seconds=...), limit,
burst), store=MemoryStore())` directly and calls `limit(cost=n)` and `peek("k")`, with the library's
clock replaced where it reads it, `throttled.utils.time` (`now_sec()` = `int(time.time())`,
`now_ms()` = `int(time.time() * 1000)`, `now_mono_f()` = `time.monotonic()`), by a settable one:
- `time.time()` reads the float nearest to `origin + t / 10^9` Unix seconds, the origin being
  1,700,000,000 s, or, for the window strategies, the first multiple of the window at or after it
  (so that the library's epoch-aligned windows are the Spec's windows);
- `time.monotonic()` reads the float nearest to `10^6 + L / 10^9` seconds (11.6 days of uptime),
  `L` the latest instant the limiter has seen (a monotonic clock does not go back when the wall
  clock does).
That is what the shim does. Instants are written in nanoseconds, as the suite prints them.

Then the same checks for the Redis store (README.md, "Redis store (`--redis`)"): the limiters are
on one `RedisStore(server=clocked.url)` (each its own key) over a `ClockedRedis`
(../common/redisclock.py: an unmodified redis-server whose wall clock, TIME, EXPIRE and lazy
deletion, reads the instant `set_clock` writes), set to the same wall-clock instant as `time.time()`
before each call, as the shim does with `--redis`. Without a redis-server or a C compiler the Redis
checks are skipped (said so) and the memory checks alone decide the exit status.

A check prints the library's answers next to the Spec's and exits 1 if the library no longer gives
the answers recorded here (for instance after a version change). Answers are written as the suite
writes them: `allowed(remaining)` for an admitted `limit()` (its `state.remaining`), `rejected(Nns)`
for a refused one (its `state.retry_after`, seconds, exactly, rounded up to a nanosecond),
`query(remaining)` for `peek()`, `invalid` for a `DataError`, `error(...)` for a
`StoreUnavailableError` (with the Redis error that caused it).
"""

import math
import os
import sys
import types
from datetime import timedelta
from fractions import Fraction

import throttled
import throttled.utils as utils
from throttled import RateLimiterType, Throttled, exceptions, per_duration
from throttled.store import MemoryStore, RedisStore

NS = 1_000_000_000
PRESENT = 1_700_000_000
MONO_ORIGIN = 1_000_000
INT64_MAX = (1 << 63) - 1
# The Redis checks: the ClockedRedis, the one RedisStore they share and how many limiters it holds.
REDIS = None


class Clock:
    wall = float(PRESENT)
    mono = float(MONO_ORIGIN)


CLOCK = Clock()
utils.time = types.SimpleNamespace(time=lambda: CLOCK.wall, monotonic=lambda: CLOCK.mono)

FW = RateLimiterType.FIXED_WINDOW.value
SW = RateLimiterType.SLIDING_WINDOW.value
TB = RateLimiterType.TOKEN_BUCKET.value
LB = RateLimiterType.LEAKING_BUCKET.value
GCRA = RateLimiterType.GCRA.value


class Lim:
    """One limiter of the library on its own clock. `created` and every instant in nanoseconds. With
    `redis=True` it is on the one RedisStore of the Redis checks (its own key), and `at()` also sets
    the redis-server's wall clock to the same instant (ClockedRedis, ../common/redisclock.py)."""

    def __init__(self, using, seconds, limit, burst=None, created=0, origin=PRESENT, prefill=0, redis=False):
        self.origin, self.latest, self.redis = origin, created, redis
        if redis:
            REDIS.limiters += 1
            self.key, store = "k-%d" % REDIS.limiters, REDIS.store
        else:
            self.key, store = "k", MemoryStore()
        self.at(created)
        self.throttle = Throttled(key=self.key, using=using,
                                  quota=per_duration(timedelta(seconds=seconds), limit, burst), store=store)
        if prefill:  # the Spec's initial tokens or level, reached with the library's own limit()
            assert not self.throttle.limit(cost=prefill).limited

    def at(self, now):
        self.latest = max(self.latest, now)
        CLOCK.wall = (self.origin * NS + now) / NS
        CLOCK.mono = (MONO_ORIGIN * NS + self.latest) / NS
        if self.redis:
            # The server's TIME, EXPIRE and lazy deletion read the wall clock's instant (not the
            # latest one): what the shim does with --redis.
            REDIS.server.set_clock(self.origin * NS + now)

    def step(self, now, n):
        self.at(now)
        if n == 0:
            return "query(%d)" % self.throttle.peek(self.key).remaining
        try:
            result = self.throttle.limit(cost=n)
        except exceptions.DataError:
            return "invalid"
        except exceptions.StoreUnavailableError as error:
            return "error(%s: %s)" % (type(error).__name__, str(error.__cause__).split(" script:")[0])
        if not result.limited:
            return "allowed(%d)" % result.state.remaining
        return "rejected(%dns)" % ceil_ns(result.state.retry_after)

    def run(self, steps):
        return [self.step(now, n) for now, n in steps]


def ceil_ns(seconds):
    value = Fraction(seconds) * NS
    return -((-value.numerator) // value.denominator)


def window_origin(seconds):
    """The first multiple of the window at or after 1,700,000,000 s: instant 0 on the window grid."""
    return -(-PRESENT // seconds) * seconds if seconds > 0 else PRESENT


def fw(limit, window_s, created=0, using=FW, redis=False):
    return Lim(using, window_s, limit, created=created, origin=window_origin(window_s), redis=redis)


def swc(limit, window_s, created=0, redis=False):
    return fw(limit, window_s, created, using=SW, redis=redis)


def tb(capacity, permits, period_s, initial, created=0, redis=False):
    return Lim(TB, period_s, permits, capacity, created=created, prefill=capacity - initial, redis=redis)


def lbm(capacity, leak, period_s, initial, created=0, redis=False):
    return Lim(LB, period_s, leak, capacity, created=created, prefill=initial, redis=redis)


def gcra(burst, interval_ns, created=0, redis=False):
    fraction = Fraction(interval_ns, NS)  # emission_interval = period_sec / limit = T / 10^9 s
    return Lim(GCRA, fraction.numerator, fraction.denominator, burst, created=created, redis=redis)


def s(seconds):
    """Whole seconds as nanoseconds."""
    return seconds * NS


def ms(milliseconds):
    return milliseconds * 1_000_000


FAILED = []
CHECKS = [0]


def check(name, observed, expected_by_library, spec):
    ok = observed == expected_by_library
    CHECKS[0] += 1
    print("%s %s\n     library: %s\n     Spec:    %s" % ("ok  " if ok else "GONE", name, observed, spec))
    if not ok:
        print("     (expected the library to answer %s)" % (expected_by_library,))
        FAILED.append(name)


def accepted(using, seconds, limit, burst=None, redis=False):
    """Whether the library builds the quota and a Throttled on it, and answers a limit(1)."""
    try:
        quota = per_duration(timedelta(seconds=seconds), limit, burst)
        if redis:
            REDIS.limiters += 1
            key, store = "k-%d" % REDIS.limiters, REDIS.store
        else:
            key, store = "k", MemoryStore()
        throttle = Throttled(key=key, using=using, quota=quota, store=store)
    except ZeroDivisionError:
        return "ZeroDivisionError"
    try:
        throttle.limit(cost=1)
        return "created"
    except exceptions.StoreUnavailableError as error:  # Redis only: see REPORT.md 15
        return "created, limit(1): StoreUnavailableError (%s)" % str(error.__cause__).split(" script:")[0]
    except ZeroDivisionError:
        return "ZeroDivisionError"


# ==================================================================================================
# token-bucket (TokenBucketRateLimiter, rate_limiter/token_bucket.py)
# ==================================================================================================

lim = tb(12608, 682, 1, 2837)
check("TB CORE-10 token-bucket/random-seed-1-trace-11, shrunk (over-admission, 12608 permits over): "
      "after a hit at 15 s, a hit at 13 s stores last_refreshed = 13 s; at 14 s the second 13-14 s "
      "refills again",
      lim.run([(s(15), 1), (s(13), 1), (s(14), 12608)]),
      ["allowed(12607)", "allowed(12606)", "allowed(0)"],
      "allowed(12607), allowed(12606), rejected(1002932552ns): evaluated at 15 s (CORE-10)")

lim = tb(3, 10, 1_000_000_000, 3)
check("TB CORE-10 token-bucket/go-backward-time (early retry, the row's worst, 10^17 ns early; the "
      "story scaled to whole seconds): the hits at 10^9 s are evaluated at 10^9 s, after one at "
      "1.1*10^9 s",
      lim.run([(s(1_100_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1)]),
      ["allowed(2)", "allowed(1)", "allowed(0)", "rejected(100000000000000000ns)"],
      "allowed(2), allowed(1), allowed(0), rejected(200000000000000000ns)")

lim = tb(46, 82, 2647, 46, created=s(53))
check("TB CORE-7 token-bucket/random-seed-1-trace-6 (retry forever): limit(cost=47) on a bucket of "
      "46 is refused with a finite retry_after, ceil((47 - 46) / (82/2647))",
      lim.run([(s(53), 47)]), ["rejected(33000000000ns)"], "neverAllowed: 47 > capacity 46")

lim = tb(3, 1, 34, 2, created=s(40))
check("TB CORE-7 token-bucket/random-seed-1-trace-23 (the row's worst, 4 s late): the retry_after is "
      "counted from now, ceil(1 / (1/34)) = 34 s, though 4 s of refill since the hit at 809 s count",
      lim.run([(s(809), 3), (s(813), 1)]), ["allowed(0)", "rejected(34000000000ns)"],
      "allowed(0), rejected(30000000000ns): the token is whole at 843 s")

lim = tb(10, 3, 10, 0)
check("TB TB-4 token-bucket/fractions-carry (liveness): the hit at 4 s stores last_refreshed = 4 s and "
      "drops the 0.2 token of floor(4 * 0.3); at 10 s floor(6 * 0.3) = 1 < 2",
      lim.run([(s(3), 1), (s(4), 1), (s(10), 2)]),
      ["rejected(4000000000ns)", "allowed(0)", "rejected(4000000000ns)"],
      "rejected(333333334ns), allowed(0), allowed(0): 0.2 + 1.8 = 2 tokens")

lim = tb(412, 179, 48840, 228, created=s(38))
check("TB TB-4 token-bucket/random-seed-1-trace-37 (the row's worst, 546 s late): every hit drops the "
      "fraction of its refill (179/48840 tokens a second)",
      lim.run([(s(309), 1), (s(580), 1), (s(853), 129), (s(1399), 3), (s(1672), 51), (s(1945), 47),
               (s(1946), 1), (s(2217), 2)]),
      ["allowed(227)", "allowed(226)", "allowed(98)", "allowed(97)", "allowed(47)", "allowed(1)",
       "allowed(0)", "rejected(546000000000ns)"],
      "steps 1-7 the same; step 8: allowed(0): the fractions the hits dropped make up the 2 tokens")

lim = tb(3, 2, 20, 3, created=s(54))
check("TB TB-6 token-bucket/random-3 (liveness): the hit at 88 s drops 0.3 token; at 106 s the "
      "retry_after is ceil((3 - 1) / 0.1) = 20 s from now",
      lim.run([(s(65), 3), (s(85), 1), (s(88), 1), (s(96), 1), (s(106), 3)]),
      ["allowed(0)", "allowed(1)", "allowed(0)", "rejected(10000000000ns)", "rejected(20000000000ns)"],
      "allowed(0), allowed(1), allowed(0), allowed(0), rejected(9000000000ns)")

TRACE_5 = [55, 57, 58, 59, 60, 61, 62, 62, 63, 64, 64, 65, 67, 68, 69, 70, 71, 72, 72, 73, 74, 74, 75, 76, 76,
           77, 78, 79, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 259, 260, 260, 260, 431, 432, 433, 434, 435,
           436, 437, 438, 439, 440, 441, 441, 442, 443, 444, 445, 446, 447, 448, 449, 620, 621, 622, 623, 624,
           625, 625, 626, 627, 627, 628, 629, 630, 631, 631, 633, 634, 634, 635, 636, 637, 637, 638, 639, 640,
           640, 811, 811, 812, 812, 813, 814, 815, 815, 817, 818, 819, 820]
lim = tb(17, 560, 95399, 13, created=s(54))
answers = lim.run([(s(t), 1) for t in TRACE_5])
check("TB TB-6 token-bucket/random-seed-1-trace-5 (the row's worst, 85223214285 ns late): 100 hits of 1; "
      "each admission restarts the refill (560/95399 tokens a second) from 0, each refusal says "
      "ceil(1 / (560/95399)) = 171 s from now",
      (answers[12], answers[13], answers[99], answers.count("rejected(171000000000ns)")),
      ("allowed(0)", "rejected(171000000000ns)", "rejected(171000000000ns)", 83),
      "step 100 at 820 s: rejected(85776785715ns) (step 14 at 68 s: rejected(156355357143ns))")

check("TB CORE-3 token-bucket/refuse-zero-capacity, refuse-negative-period, refuse-refill-past-timeline: "
      "Quota validates nothing (base.py:49-52 only divides)",
      (accepted(TB, 1, 1, 0), accepted(TB, -1, 1, 1), accepted(TB, 2, 1, INT64_MAX)),
      ("created", "created", "created"),
      "refused capacity (mustBePositive), periodNanoseconds (mustBePositive), periodNanoseconds "
      "(exceedsMaximum 1)")

lim = tb(291686250536825, 3896741665474963480, 2147483648, 149722962799180, created=s(76))
check("TB CORE-9 token-bucket/random-seed-1-trace-15 (difference): peek's floor(3 s * rate), the rate "
      "the float 3896741665474963480 / 2147483648, is one token short of the exact refill",
      lim.run([(s(77), 1), (s(78), 1), (s(78), 1), (s(81), 0)]),
      ["allowed(149724777360919)", "allowed(149726591922658)", "allowed(149726591922657)",
       "query(149732035607877)"],
      "..., allowed(149732035607878)")

lim = tb(496104, 813133, 1_000_000_000, 80726, created=s(13))
check("TB TB-5 token-bucket/random-seed-1-trace-1 (difference): 1229 s make 0.9993 token, floored to 0 "
      "and dropped at each hit",
      lim.run([(s(1242), 1), (s(2471), 1)]), ["allowed(80725)", "allowed(80724)"],
      "allowed(80725), allowed(80725): the two 0.9993 fractions make a token")

# ==================================================================================================
# gcra (GCRARateLimiter, rate_limiter/gcra.py): a float monotonic clock
# ==================================================================================================

lim = gcra(1, 10_000)
check("GCRA CORE-7 gcra/random-seed-1-trace-1, shrunk (retry forever): limit(cost=3) with burst 1 is "
      "refused with retry_after = (3 - 1) * 10 us",
      lim.run([(0, 3)]), ["rejected(20001ns)"], "neverAllowed: 3 > burst 1")

T49 = 9223372036854770000
lim = gcra(1000, 126227630580000, created=9223372036844790000)
check("GCRA CORE-7 gcra/random-seed-1-trace-49 (the row's worst, 2847 ns late, a GCRA-4 difference): at "
      "the end of the timeline the monotonic clock reads 9.22e9 s, floats 1.9 us apart",
      lim.run([(T49, 1), (T49, 1), (T49, 377), (T49, 620), (T49, 276), (T49, 2), (T49, 1)]),
      ["allowed(999)", "allowed(997)", "allowed(620)", "allowed(0)", "rejected(34712598409502835ns)",
       "rejected(126227630582840ns)", "rejected(2847ns)"],
      "allowed(999), allowed(998) (the float tat one interval ahead reads floor(-1.00000000000x) = -2), "
      "allowed(621), allowed(1), ..., step 7: allowed(0)")

lim = gcra(3, 100_000)
check("GCRA GCRA-6 gcra/boundary-conforms (retry-after not honoured): told 10 us at 90 us, refused at "
      "100 us, the boundary, because floor((now - tat) / 0.0001) of floats is -3",
      lim.run([(0, 3), (90_000, 1), (100_000, 1)]),
      ["allowed(0)", "rejected(10000ns)", "rejected(1ns)"],
      "allowed(0), rejected(10000ns), allowed(0)")

check("GCRA CORE-3 gcra/refuse-zero-burst: burst 0 is accepted", (accepted(GCRA, 1, 100000, 0),),
      ("created",), "refused burst (mustBePositive)")

lim = gcra(3, 100_000)
check("GCRA CORE-9 gcra/same-as-token-bucket (difference): peek at 100 us reads 0 for the same float "
      "floor",
      lim.run([(0, 3), (90_000, 1), (100_000, 0), (100_000, 1)]),
      ["allowed(0)", "rejected(10000ns)", "query(0)", "rejected(1ns)"],
      "allowed(0), rejected(10000ns), allowed(1), allowed(0)")

lim = gcra(3, 100_000)
check("GCRA GCRA-4 gcra/interval-bound (difference): refused at the exact instant one emission "
      "interval after the burst",
      lim.run([(0, 3), (100_000, 1)]), ["allowed(0)", "rejected(1ns)"], "allowed(0), allowed(0)")

T2 = 9223372036851170000
lim = gcra(1024, 600000000010000, created=T2)
check("GCRA GCRA-5 gcra/random-seed-1-trace-2 (difference): remaining = 1024 - 1003 + "
      "floor((now - tat) / T), the quotient a float just below -20",
      lim.run([(T2, 20), (T2, 1003)]), ["allowed(1004)", "allowed(0)"], "allowed(1004), allowed(1)")

TRACE_8 = [(3080000, 0), (30690000, 1), (30690000, 1), (39100000, 1), (39110000, 1), (66710000, 1),
           (66720000, 1), (94330000, 1), (121950000, 1), (121950000, 1), (129140000, 1), (156750000, 1),
           (184350000, 1), (226330000, 1), (226340000, 1), (253960000, 0), (281580000, 1), (281590000, 1),
           (282390000, 1), (289630000, 1), (291560000, 1), (291570000, 1), (319170000, 1), (319180000, 1),
           (346800000, 1), (350050000, 1), (392730000, 1), (392740000, 1), (392740000, 1), (392740000, 1),
           (392750000, 1), (392750000, -(1 << 63)), (417220000, 1), (417220000, 1), (417230000, 1),
           (420550000, 1), (426460000, 1), (426460000, 1), (435060000, 1), (435070000, 1), (462690000, 1),
           (465630000, 1), (465640000, 1), (465640000, 1), (493250000, 1), (493250000, 1), (520850000, 1),
           (520850000, 1), (527660000, 1)] + [(9223372036854770000, 1)] * 9
lim = gcra(9, 27610000, created=60000)
answers = lim.run(TRACE_8)
check("GCRA GCRA-5 gcra/random-seed-1-trace-8, the row's worst (step 58, 5807 ns late, up to the end "
      "of the timeline): near 9.22e9 s the monotonic clock's floats are 1.9 us apart; a negative cost "
      "is refused with DataError (step 32, the Spec's invalid)",
      (answers[31], answers[49:58]),
      ("invalid", ["allowed(8)", "allowed(6)", "allowed(5)", "allowed(4)", "allowed(3)", "allowed(2)",
                   "allowed(1)", "allowed(0)", "rejected(6231ns)"]),
      "step 32: invalid(permits: mustNotBeNegative); steps 50-58: allowed(8), allowed(7) (the float "
      "quotient just below -1 floors to -2: 6, a GCRA-5 difference), ..., step 58: allowed(0) (9 permits "
      "of a rested burst)")

lim = gcra(3, 20_000)
check("GCRA GCRA-6 gcra/random-3 (difference): retry_after = (tat - now) - (3 - 3) * T as floats is "
      "30000.0000x ns: on the 10 us clock, the next reading",
      lim.run([(20_000, 1), (30_000, 1), (30_000, 3)]),
      ["allowed(2)", "allowed(1)", "rejected(30001ns)"], "allowed(2), allowed(1), rejected(30000ns)")

T30 = 9223372036854770000
lim = gcra(727857, 3320000, created=570000)
answers = lim.run([(740000, 727857), (50650601810000, 1), (50650618730000, 727855), (50650624410000, 3),
                   (150608328534860000, 1), (150608328534860000, 727855), (1281417700702780000, 2),
                   (1281432110811930000, 727856), (T30, 1), (T30, 727857), (T30, 727857), (T30, 727856)])
check("GCRA utilization 82.7%: gcra/random-seed-1-trace-30, step 12: acquire(727856) refused 694 ns "
      "where the Spec admits it at once (the permits of this one step are most of the run's)",
      (answers[8], answers[9], answers[11]), ("allowed(727856)", "rejected(3320694ns)", "rejected(694ns)"),
      "step 9: allowed(727856); step 10: rejected(3320000ns); step 12: allowed(0)")

# ==================================================================================================
# fixed-window (FixedWindowRateLimiter, rate_limiter/fixed_window.py)
# ==================================================================================================

lim = fw(140, 26, created=s(71))
check("FW CORE-7 fixed-window/random-seed-1-trace-35 (over-admission, 65 permits over): back 49 s, "
      "int(time.time()) // 26 names another window, whose key is new",
      lim.run([(s(72), 1), (s(9223372036), 140), (s(9223371987), 65)]),
      ["allowed(139)", "allowed(0)", "allowed(75)"],
      "allowed(139), allowed(0), neverAllowed: evaluated at 9223372036 s, the next window starts past "
      "the end of the timeline")

lim = fw(677, 3, created=s(40))
check("FW CORE-7 fixed-window/random-seed-1-trace-0 (retry forever): limit(cost=678) above the limit "
      "677 is refused with the window's end (and counted)",
      lim.run([(s(40), 634), (s(41), 12), (s(42), 15), (s(45), 1), (s(48), 1), (s(55), 678)]),
      ["allowed(43)", "allowed(31)", "allowed(662)", "allowed(676)", "allowed(676)", "rejected(2000000000ns)"],
      "steps 1-5 the same; step 6: neverAllowed")

lim = fw(5, 4, created=s(69))
check("FW CORE-7 fixed-window/random-seed-1-trace-20 (the row's worst, 1 s late, FW-4's cause): the "
      "refused acquire(5) at 70 s is counted in [68 s, 72 s)",
      lim.run([(s(69), 2), (s(69), 1), (s(69), 0), (s(70), 5), (s(71), 1), (s(71), 2), (s(72), 1), (s(73), 6)]),
      ["allowed(3)", "allowed(2)", "query(2)", "rejected(2000000000ns)", "rejected(1000000000ns)",
       "rejected(1000000000ns)", "allowed(4)", "rejected(3000000000ns)"],
      "steps 5-6: allowed(1), allowed(0); step 8: neverAllowed")

lim = fw(257, 1)
check("FW CORE-10 fixed-window/random-seed-1-trace-8, shrunk (over-admission, 257 permits over): back "
      "1 s, the window of 9223371972 s is empty",
      lim.run([(s(9223371973), 1), (s(9223371972), 257)]), ["allowed(256)", "allowed(0)"],
      "allowed(256), rejected(2000000000ns): evaluated at 9223371973 s")

# random-seed-1-trace-25 up to step 21, without step 7 (a release: the library has none, the shim
# answers invalid(release) without calling it).
TRACE_25 = [(281434000000000, -1), (422125000000000, 1), (703509000000000, 1), (844202000000000, 8192),
            (1125586000000000, 16384), (1266278000000000, 9007199254740991), (1969738000000000, 127),
            (2251122000000000, -(1 << 63)), (2532506000000000, 1), (2673197000000000, 7), (2813888000000000, 327),
            (2954579000000000, 649359864105103086), (3235963000000000, 1), (3376656000000000, 1),
            (3798732000000000, 1), (4080116000000000, 1), (4220808000000000, 71177274), (4361501000000000, 1),
            (4783577000000000, 649359864105103085), (4602498000000000, 649359864105103086)]
lim = fw(649359864105103086, 140692, created=s(50))
answers = lim.run(TRACE_25)
check("FW CORE-10 fixed-window/random-seed-1-trace-25 (the row's worst, step 21: 649359864105103086 "
      "permits over, 321722 s early): after 649359864105103085 permits at 4783577 s, back 181079 s into window 32, which counts nothing",
      answers[-2:], ["allowed(1)", "allowed(0)"],
      "step 20: allowed(1); step 21: rejected(321722000000000ns): evaluated at 4783577 s, in the window "
      "[4783528 s, 4924220 s)")

lim = fw(3, 10)
check("FW CORE-10 fixed-window/refusals-record-nothing (over-admission): a peek at 15 s moves the "
      "monotonic clock to 15 s; back at 5 s, the key of [0 s, 10 s) has expired (its TTL, 10 s from "
      "the hit at 0 s, runs on the monotonic clock) and the count starts over",
      lim.run([(0, 3), (s(15), 0), (s(5), 1)]), ["allowed(0)", "query(3)", "allowed(2)"],
      "allowed(0), allowed(3), rejected(5000000000ns): the query recorded nothing, 5 s is in the full "
      "[0 s, 10 s)")

lim = fw(3, 10)
check("FW CORE-10 fixed-window/backward-time (over-promise): back in [0 s, 10 s), the count of "
      "[10 s, 20 s) is not seen",
      lim.run([(s(12), 2), (s(8), 1)]), ["allowed(1)", "allowed(2)"],
      "allowed(1), allowed(0): evaluated at 12 s")

check("FW CORE-3 fixed-window/refuse-negative-window: a negative period is accepted (a zero limit or "
      "period raises ZeroDivisionError, base.py:51-52: refused as the Spec refuses them)",
      (accepted(FW, -10, 1), accepted(FW, 10, 0), accepted(FW, 0, 1)),
      ("created", "ZeroDivisionError", "ZeroDivisionError"),
      "refused windowNanoseconds (mustBePositive); limit and windowNanoseconds (mustBePositive)")

lim = fw(3, 10)
check("FW FW-4 fixed-window/weighted (difference, 7 s late): the refused acquire(2) is counted "
      "(incremented before the comparison)",
      lim.run([(0, 2), (s(3), 2), (s(3), 1), (s(8), 1)]),
      ["allowed(1)", "rejected(7000000000ns)", "rejected(7000000000ns)", "rejected(2000000000ns)"],
      "allowed(1), rejected(7000000000ns), allowed(0), rejected(2000000000ns)")

# ==================================================================================================
# sliding-window-counter (SlidingWindowRateLimiter, rate_limiter/sliding_window.py)
# ==================================================================================================

E = 9223372036854000000
L16 = 21100857779455775
lim = swc(L16, 2147483647, created=ms(19))
check("SWC CORE-7 sliding-window-counter/random-seed-1-trace-16 (over-admission, 3457 permits over): "
      "at steps 4, 5 and 9 the library's wait ends past the end of the timeline (exact, CONF-1); at "
      "step 10, 38.5 years back, int(time.time()) // W names an earlier window, whose keys hold nothing",
      lim.run([(E, 66815699), (E, 1), (E, 1), (E, L16), (E, 21100857712640075), (E, 1),
               (E, 21100857712640072), (E, 1), (E, L16), (8008134959620000000, 3457)]),
      ["allowed(21100857712640076)", "allowed(21100857712640075)", "allowed(21100857712640074)",
       "rejected(1514046198146000147ns)", "rejected(1514046198146000147ns)", "allowed(21100857712640073)",
       "allowed(1)", "allowed(0)", "rejected(1514046198146000147ns)", "allowed(21100857779452318)"],
      "steps 4, 5, 9: neverAllowed (the admission lies past the end); step 10: neverAllowed "
      "(evaluated at the latest instant, its admission lies past the end too)")

lim = swc(250, 285154)
check("SWC CORE-7 sliding-window-counter/random-seed-1-trace-7 (retry forever): cost 251 above the limit "
      "250, refused with the rest of the window as its retry_after",
      lim.run([(285154001000000, 251)]), ["rejected(285153999000001ns)"], "neverAllowed")

lim = swc(181, 115137, created=ms(60))
check("SWC SWC-3 (alignment) sliding-window-counter/random-seed-1-trace-4, shrunk (over-admission, "
      "181 permits over): 60 ms into a window, previous = floor((1 - 60/115137000) * 1) = 0",
      lim.run([(805959060000000, 1), (921096060000000, 181)]), ["allowed(180)", "allowed(0)"],
      "allowed(180), rejected(115136940000000ns): the previous window's permit weighs 0.9999995")

lim = swc(1, 10)
check("SWC SWC-3 (edges) sliding-window-counter/no-floor (over-admission): floor(0.9 * 1) + 1 <= 1",
      lim.run([(s(9), 1), (s(11), 1)]), ["allowed(0)", "allowed(0)"],
      "allowed(0), rejected(9000000000ns): 0.9 + 1 > 1 until 20 s")

lim = swc(7, 129, created=ms(61))
check("SWC SWC-3 (edges) sliding-window-counter/random-seed-1-trace-28 (the row's worst, 7 permits "
      "over): 59 ms into the window the previous window's permit weighs 1 - 59/129000 = 0.99954, "
      "floored to 0",
      lim.run([(129060000000, 1), (258059000000, 7)]), ["allowed(6)", "allowed(0)"],
      "allowed(6), rejected(128941000000ns)")

lim = swc(5971477497078, 2572151679, created=ms(86))
check("SWC SWC-3 (edges) sliding-window-counter/random-seed-1-trace-13 (the row's worst, "
      "2572151679000000099 ns early): the retry_after is the current window's end, where the Spec "
      "admits after the next",
      lim.run([(ms(87), 1), (ms(87), 1), (ms(87), 1), (0, 1), (125208631821000000, 5971477497078)]),
      ["allowed(5971477497077)", "allowed(5971477497076)", "allowed(5971477497075)", "allowed(5971477497074)",
       "rejected(2446943047178999901ns)"],
      "step 5: rejected(5019094726179000000ns)")

lim = swc(4, 10)
check("SWC SWC-4 sliding-window-counter/backward-time (over-admission): back in window 0, the count of "
      "window 1 is not seen",
      lim.run([(s(15), 4), (s(8), 1)]), ["allowed(0)", "allowed(3)"],
      "allowed(0), rejected(14500000000ns): evaluated at 15 s")

lim = swc(4, 10)
check("SWC CORE-9 sliding-window-counter/weight-shrinks (over-promise): peek reports 4 - floor(3.2)",
      lim.run([(s(5), 4), (s(9), 0), (s(10), 0), (s(12), 0)]),
      ["allowed(0)", "query(0)", "query(0)", "query(1)"], "..., allowed(0): floor(4 - 3.2) = 0")

lim = swc(357, 25973, created=ms(89))
check("SWC CORE-10 sliding-window-counter/random-seed-1-trace-10 (over-promise): back 34000 s, in the "
      "window before, the hit of the later window is not seen",
      lim.run([(E, 1), (9223338036736000000, 11)]), ["allowed(356)", "allowed(346)"],
      "allowed(356), allowed(345): evaluated at the latest instant")

lim = swc(17369875377518, 110001270, created=ms(87))
check("SWC CORE-10 sliding-window-counter/random-seed-1-trace-35 (the row's worst, 23527474618 permits "
      "over): back in window 0, the 23527474618 permits of window 1 are not seen",
      lim.run([(0, 4161865422), (0, 1), (0, 129), (110001270000000000, 23527474618), (55066121396000000, 1)]),
      ["allowed(17365713512096)", "allowed(17365713512095)", "allowed(17365713511966)", "allowed(17342186037348)",
       "allowed(17365713511965)"],
      "step 5: allowed(17342186037347)")

lim = swc(4, 10)
check("SWC CORE-10 sliding-window-counter/refusals-record-nothing (early retry, 2.5 s): back at 8 s, "
      "the retry_after is the window's end, where the 4 permits weigh 4 again",
      lim.run([(s(5), 4), (s(25), 0), (s(8), 1)]), ["allowed(0)", "query(4)", "rejected(2000000000ns)"],
      "allowed(0), allowed(4), rejected(4500000000ns)")

lim = swc(10, 10)
check("SWC SWC-5 sliding-window-counter/worst-case (over-promise): the weight (1 - 0.8) * 10 as floats "
      "is 1.9999999999999996, floored to 1",
      lim.run([(s(9), 10), (s(18), 8)]), ["allowed(0)", "allowed(1)"], "allowed(0), allowed(0)")

lim = swc(4, 10)
check("SWC SWC-6 sliding-window-counter/retry-next-window (early retry): the retry_after is the "
      "window's end whatever the current count",
      lim.run([(s(5), 4), (s(6), 1)]), ["allowed(0)", "rejected(4000000000ns)"],
      "allowed(0), rejected(6500000000ns)")

lim = swc(491011109517000, 2147483647, created=ms(83))
check("SWC SWC-6 sliding-window-counter/random-seed-1-trace-15 (the row's worst, 107374182349999998 ns "
      "early): told the window's end, where the 20 permits still weigh 20",
      lim.run([(ms(83), 19), (617651242578000000, 1), (1168612798602000000, 491011109516981)]),
      ["allowed(491011109516981)", "allowed(491011109516980)", "rejected(978870848398000002ns)"],
      "step 3: rejected(1086245030748000000ns)")

lim = swc(4, 10)
check("SWC SWC-6 sliding-window-counter/retry-same-window (difference, the row's worst, 2166666667 ns "
      "late): cost <= previous: retry_after = 0.8 * 10 * 1 / floor(3.2)",
      lim.run([(s(5), 4), (s(10), 1), (s(12), 1)]),
      ["allowed(0)", "rejected(2500000000ns)", "rejected(2666666667ns)"],
      "allowed(0), rejected(2500000000ns), rejected(500000000ns)")

# ==================================================================================================
# leaky-bucket-meter (LeakingBucketRateLimiter, rate_limiter/leaking_bucket.py)
# ==================================================================================================

lim = lbm(1, 1, 1, 1)
check("LBM CORE-7 leaky-bucket-meter/random-seed-1-trace-2, shrunk (retry forever): cost 3 on a bucket "
      "of 1 is refused with ceil((3 - 0) / 1) s",
      lim.run([(0, 3)]), ["rejected(3000000000ns)"], "neverAllowed")

lim = lbm(3, 1, 10, 0)
check("LBM CORE-7 leaky-bucket-meter/refusals-record-nothing (retry forever; the row's worst, 5 s late): "
      "at 5 s the level is 3 - floor(5 * 0.1) = 3 and the retry_after, ceil(1 / 0.1) = 10 s, is counted "
      "from now, not from the hit at 0 s (the library itself admits at 10 s); at 30 s cost 4 > 3 is "
      "refused with a wait",
      lim.run([(0, 3), (s(30), 0), (s(5), 1), (s(30), 4)]),
      ["allowed(0)", "query(3)", "rejected(10000000000ns)", "rejected(10000000000ns)"],
      "allowed(0), allowed(3), rejected(5000000000ns), neverAllowed")

C34 = 3074457345618258602
lim = lbm(C34, 9223372036854775806, 1, 0, created=s(9223371535))
check("LBM CORE-10 leaky-bucket-meter/random-seed-1-trace-34 (liveness; utilization 0.2%): 1 s back, "
      "time_elapsed = -1 and the level rises by 9.2e18 permits",
      lim.run([(s(9223371535), 2184734887), (s(9223371534), 3074457343433523715)]),
      ["allowed(3074457343433523715)", "rejected(1000000000ns)"],
      "allowed(3074457343433523715), allowed(0): evaluated at 9223371535 s (3.07e18 of the run's "
      "permits, which the library refuses)")

lim = lbm(3, 10, 1_000_000_000, 0)
check("LBM CORE-10 leaky-bucket-meter/same-as-token-bucket (the row's worst, 10^17 ns late; the story "
      "scaled to whole seconds): 10^8 s back, the level rises by floor(-10^8 * 10^-8) = -1",
      lim.run([(s(1_100_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1)]),
      ["allowed(2)", "allowed(0)", "rejected(100000000000000000ns)", "rejected(100000000000000000ns)"],
      "allowed(2), allowed(1), allowed(0), rejected(200000000000000000ns)")

lim = lbm(3, 2, 19, 2, created=s(36))
check("LBM LBM-4 leaky-bucket-meter/random-seed-1-trace-21 (liveness): the hit at 44 s stores "
      "last_refreshed = 44 s and drops the 0.84 permit of floor(8 * 2/19)",
      lim.run([(s(44), 1), (s(53), 1)]), ["allowed(0)", "rejected(10000000000ns)"],
      "allowed(0), allowed(0): 2 - 16/19 + 1 - 18/19 + 1 <= 3")

lim = lbm(6, 6, 126, 6, created=s(98))
check("LBM LBM-4 leaky-bucket-meter/random-seed-1-trace-28 (the row's worst, 21 s late)",
      lim.run([(s(120), 1), (s(141), 1), (s(162), 1), (s(182), 1)]),
      ["allowed(0)", "allowed(0)", "allowed(0)", "rejected(21000000000ns)"],
      "step 4: allowed(0)")

lim = lbm(24, 128, 65, 0)
check("LBM LBM-6 leaky-bucket-meter/random-seed-1-trace-29 (liveness): whole-second retry_after from "
      "now, on a level that rose when time went back and lost its fraction at each hit",
      lim.run([(s(2), 17), (s(4), 6), (s(3), 7), (s(3), 22)]),
      ["allowed(7)", "allowed(4)", "rejected(3000000000ns)", "rejected(11000000000ns)"],
      "allowed(7), allowed(4), rejected(2046875000ns), rejected(9664062500ns)")

lim = lbm(31152, 193, 120987, 16667, created=s(10))
check("LBM LBM-6 leaky-bucket-meter/random-seed-1-trace-30 (the row's worst, 625580310880 ns late): the "
      "16667 permits poured at 10 s have leaked 0.997 by 635 s, floored to 0, and the retry_after, "
      "ceil(16667 / (193/120987)) s, is counted from 635 s, as if nothing had leaked since 10 s",
      lim.run([(s(635), 31152)]), ["rejected(10448137000000000ns)"], "rejected(10447511419689120ns)")

check("LBM CORE-3 leaky-bucket-meter/refuse-zero-capacity, refuse-drain-past-timeline: accepted",
      (accepted(LB, 1, 1, 0), accepted(LB, 2, 1, INT64_MAX)), ("created", "created"),
      "refused capacity (mustBePositive), periodNanoseconds (exceedsMaximum 1)")

lim = lbm(162, 27, 1707, 9, created=s(44))
check("LBM LBM-5 leaky-bucket-meter/random-seed-1-trace-3 (difference): 62 s leak 0.98 permit, floored "
      "to 0 and dropped",
      lim.run([(s(107), 1), (s(169), 1)]), ["allowed(152)", "allowed(151)"], "allowed(152), allowed(152)")

# ==================================================================================================
# Outside the run: defects the random traces stopped before (README.md, "Seen outside the run")
# ==================================================================================================

lim = swc(1, 10)
check("EXTRA sliding window: the first refused hit of a window is counted (MemoryStore only: "
      "backend.set(current_key, cost, ...) before the decision, sliding_window.py:99-102)",
      lim.run([(0, 2), (s(1), 1), (s(1), 0)]),
      ["rejected(10000000000ns)", "rejected(9000000000ns)", "query(0)"],
      "neverAllowed, allowed(0), allowed(0): the refused hit takes nothing")

lim = swc(4, 10)
check("EXTRA sliding window: a refused hit later in the window is not counted",
      lim.run([(0, 1), (s(1), 4), (s(1), 0)]), ["allowed(3)", "rejected(9000000000ns)", "query(3)"],
      "allowed(3), rejected(9000000000ns), allowed(3)")


def probe(lim, now):
    """limit(cost=0): the library's limit() with a cost of 0, which its docstring allows."""
    lim.at(now)
    result = lim.throttle.limit(cost=0)
    return "limit0(%d)" % result.state.remaining


lim_peek, lim_probe = tb(10, 3, 10, 0), tb(10, 3, 10, 0)
check("EXTRA token bucket: limit(cost=0) stores last_refreshed = now and drops the refill's fraction "
      "(peek does not): a probe at 7 s delays the next admission from 8 s to 11 s",
      (lim_peek.run([(s(4), 1), (s(7), 0), (s(8), 1)]),
       [lim_probe.step(s(4), 1), probe(lim_probe, s(7)), lim_probe.step(s(8), 1), lim_probe.step(s(11), 1)]),
      (["allowed(0)", "query(0)", "allowed(0)"],
       ["allowed(0)", "limit0(0)", "rejected(4000000000ns)", "allowed(0)"]),
      "a query changes nothing (CORE-9): acquire(1) admitted at 8 s (0.2 + 1.2 tokens)")

lim_peek, lim_probe = lbm(3, 3, 10, 3), lbm(3, 3, 10, 3)
check("EXTRA leaking bucket: limit(cost=0) stores last_refreshed = now and drops the leak's fraction",
      (lim_peek.run([(s(4), 1), (s(7), 0), (s(8), 1)]),
       [lim_probe.step(s(4), 1), probe(lim_probe, s(7)), lim_probe.step(s(8), 1), lim_probe.step(s(11), 1)]),
      (["allowed(0)", "query(0)", "allowed(0)"],
       ["allowed(0)", "limit0(0)", "rejected(4000000000ns)", "allowed(0)"]),
      "a query changes nothing (CORE-9): acquire(1) admitted at 8 s (the library, probed, admits at 11 s)")

MEMORY_CHECKS = CHECKS[0]

# ==================================================================================================
# Redis store (README.md, "Redis store (`--redis`)"): the same limiters on one RedisStore (each its
# own key) over a real redis-server whose wall clock reads the checks' instant (ClockedRedis). The
# fixed and sliding windows read the client's clock (as above); the token and leaking buckets' and
# GCRA's Lua scripts read the server's TIME. Each check below is the smallest case of a finding
# group of the `--redis` run (its recorded answers are the shim's), then the worst or a second case
# where that shows more. "NEW" marks defects that the memory store does not have.
# ==================================================================================================

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import redisclock  # noqa: E402

_server = redisclock.start_for_findings()
if _server is None:
    print("\nREDIS checks skipped")
if _server is not None:
    REDIS = types.SimpleNamespace(server=_server, store=RedisStore(server=_server.url), limiters=0)
    print("\nRedis store: redis-server %s, wall clock from a file (redisclock.c)" % (_server.version,))

if REDIS is not None:
    R = dict(redis=True)

    # ---------------------------------------------------------------------------------- token-bucket
    lim = tb(2, 8, 1, 1, **R)
    check("REDIS NEW TB TB-4 token-bucket/random-seed-1-trace-30, shrunk (over-admission): the prefill "
          "limit(cost=1) is admitted and the script runs EXPIRE key floor(2 * 2/8) = EXPIRE key 0, which "
          "deletes the bucket: acquire(2) finds it full",
          lim.run([(0, 2)]), ["allowed(0)"], "rejected(125000000ns): 1 token, the second at 125 ms")

    lim = tb(3, 9223372036854775806, 12, 1, created=s(33), **R)
    check("REDIS NEW TB TB-4 token-bucket/random-1 (over-admission): 4 permits at one instant from a "
          "bucket of 3 (EXPIRE key floor(2 * 3 / 7.7e17) = 0 after each admission)",
          lim.run([(s(34), 3), (s(34), 1)]), ["allowed(0)", "allowed(2)"], "allowed(0), rejected(1ns)")

    lim = tb(10, 100, 1, 10, **R)
    check("REDIS NEW TB (illustration, REPORT.md 13): burst 10, 100 a second: five limit(cost=10) at one "
          "instant are all admitted, 50 permits from a bucket of 10",
          lim.run([(0, 10)] * 5), ["allowed(0)"] * 5,
          "allowed(0), then rejected(100000000ns) four times")

    lim = tb(10, 3, 10, 0, **R)
    check("REDIS TB TB-4 token-bucket/fractions-carry (liveness, shared with memory): the script drops the "
          "refill's fraction at each admission too (token_bucket.py:32-42)",
          lim.run([(s(3), 1), (s(4), 1), (s(10), 2)]),
          ["rejected(4000000000ns)", "allowed(0)", "rejected(4000000000ns)"],
          "rejected(333333334ns), allowed(0), allowed(0)")

    lim = tb(46, 82, 2647, 46, created=s(53), **R)
    check("REDIS TB CORE-7 token-bucket/random-seed-1-trace-6 (retry forever, shared): cost 47 on a bucket "
          "of 46, a finite retry_after",
          lim.run([(s(53), 47)]), ["rejected(33000000000ns)"], "neverAllowed")

    lim = tb(17, 1, 519741599, 16, created=s(42), **R)
    check("REDIS TB CORE-10 token-bucket/random-seed-1-trace-25 (over-promise, shared): back at "
          "1570911356 s the script stores last_refreshed = now; at 2090652955 s the 507 million seconds "
          "after it refill a token already refilled up to 2078966439 s",
          lim.run([(s(519741641), 1), (s(1039483241), 1), (s(2078966439), 1), (s(1570911356), 1),
                   (s(2090652955), 1)]),
          ["allowed(16)", "allowed(16)", "allowed(16)", "allowed(15)", "allowed(15)"],
          "..., step 5: allowed(14)")

    lim = tb(3, 10, 1_000_000_000, 3, **R)
    check("REDIS TB CORE-10 token-bucket/go-backward-time (early retry, the row's worst, 10^17 ns early; "
          "scaled to whole seconds, shared)",
          lim.run([(s(1_100_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1)]),
          ["allowed(2)", "allowed(1)", "allowed(0)", "rejected(100000000000000000ns)"],
          "allowed(2), allowed(1), allowed(0), rejected(200000000000000000ns)")

    lim = tb(12608, 3074457345618258602, 2147483648, 5675, created=s(24), **R)
    check("REDIS NEW TB TB-5 token-bucket/random-seed-1-trace-11 (over-promise, 6933 permits): "
          "fill_time = 12608 / 1.43e9 s, EXPIRE key 0 deletes the prefilled bucket",
          lim.run([(s(23), 1)]), ["allowed(12607)"], "allowed(5674)")

    lim = tb(2, 6, 1, 1, **R)
    check("REDIS NEW TB TB-5 token-bucket/random-seed-1-trace-40, shrunk (the row's worst cause, 9776869 "
          "permits over unshrunk): EXPIRE key floor(2 * 2/6) = 0",
          lim.run([(0, 1)]), ["allowed(1)"], "allowed(0)")

    lim = tb(77915057457409545, 9435159, 1, 1, **R)
    check("REDIS NEW TB TB-5 token-bucket/random-seed-1-trace-26, shrunk (over-promise, 15 permits): the "
          "script's tokens are Lua doubles: capacity 77915057457409545 and the prefill's cost "
          "77915057457409544 round to ...552 and ...536 (2^56 < C: 16 apart), 16 tokens left, not 1",
          lim.run([(0, 1)]), ["allowed(15)"], "allowed(0)")

    lim = tb(496104, 813133, 1_000_000_000, 80726, created=s(13), **R)
    check("REDIS TB TB-5 token-bucket/random-seed-1-trace-1 (difference, shared): 1229 s make 0.9993 token, "
          "floored and dropped",
          lim.run([(s(1242), 1), (s(2471), 1)]), ["allowed(80725)", "allowed(80724)"],
          "allowed(80725), allowed(80725)")

    lim = tb(3, 2, 20, 3, created=s(54), **R)
    check("REDIS TB TB-6 token-bucket/random-3 (liveness, shared): retry_after ceil((3 - 1) / 0.1) = 20 s "
          "from now",
          lim.run([(s(65), 3), (s(85), 1), (s(88), 1), (s(96), 1), (s(106), 3)]),
          ["allowed(0)", "allowed(1)", "allowed(0)", "rejected(10000000000ns)", "rejected(20000000000ns)"],
          "allowed(0), allowed(1), allowed(0), allowed(0), rejected(9000000000ns)")

    check("REDIS TB CORE-3 token-bucket/refuse-zero-capacity, refuse-negative-period, "
          "refuse-refill-past-timeline (shared: Quota validates nothing)",
          (accepted(TB, 1, 1, 0, **R), accepted(TB, -1, 1, 1, **R), accepted(TB, 2, 1, INT64_MAX, **R)),
          ("created", "created", "created, limit(1): StoreUnavailableError (value is not an integer or out of range)"),
          "refused capacity, periodNanoseconds (mustBePositive), periodNanoseconds (exceedsMaximum 1); the "
          "third is accepted, and its first admission fails: EXPIRE key floor(2 * 1.8e19) is sent as "
          "'3.6893488147419103e+19' (REPORT.md 15)")

    lim = tb(291686250536825, 3896741665474963480, 2147483648, 149722962799180, created=s(76), **R)
    check("REDIS TB CORE-9 token-bucket/random-seed-1-trace-15 (difference, shared): peek's floor of the "
          "float refill, after hits that dropped fractions",
          lim.run([(s(77), 1), (s(78), 1), (s(78), 1), (s(81), 0)]),
          ["allowed(149724777360919)", "allowed(149726591922658)", "allowed(149726591922657)",
           "query(149732035607877)"],
          "..., allowed(149732035607878)")

    # ------------------------------------------------------------------------------------------ gcra
    lim = gcra(1, 10_000, **R)
    check("REDIS GCRA CORE-7 gcra/random-seed-1-trace-1, shrunk (retry forever, shared): cost 3 with burst "
          "1, retry_after (3 - 1) * 10 us as a float",
          lim.run([(0, 3)]), ["rejected(20001ns)"], "neverAllowed")

    lim = gcra(1019, 29955980000, created=170000, **R)
    check("REDIS NEW GCRA CORE-10 gcra/random-seed-1-trace-17 (over-promise): the script reads TIME, a wall "
          "clock; created at 170 us, two hits at 0 set tat from 0, so at T + 10 us one interval has passed "
          "for the library where the Spec (evaluating at 170 us) counts T + 160 us pending",
          lim.run([(0, 1), (0, 1), (29955990000, 1)]), ["allowed(1018)", "allowed(1016)", "allowed(1017)"],
          "allowed(1018), allowed(1017), allowed(1016)")

    lim = gcra(2, 10_000, **R)
    check("REDIS NEW GCRA CORE-10 gcra/random-seed-1-trace-15, shrunk (liveness; unshrunk the row's worst, "
          "11749530050004 ns late): 20 us back, now - tat is -30 us",
          lim.run([(9999999990000, 1), (9999999970000, 1)]), ["allowed(1)", "rejected(20004ns)"],
          "allowed(1), allowed(0): evaluated at the latest instant")

    check("REDIS GCRA CORE-3 gcra/refuse-zero-burst (shared)", (accepted(GCRA, 1, 100000, 0, **R),),
          ("created",), "refused burst (mustBePositive)")

    lim = gcra(1024, 600000000010000, created=9223372036851170000, **R)
    check("REDIS NEW GCRA GCRA-4 gcra/random-seed-1-trace-2 (difference, 589669130370901 ns late): the wall "
          "clock went back 1.19e6 s, which the script adds to tat - now",
          lim.run([(9222851679479700000, 20), (9221662010349320000, 1003)]),
          ["allowed(1004)", "rejected(589669130370901ns)"], "allowed(1004), allowed(1)")

    lim = gcra(59522, 21474836470000, created=520000, **R)
    check("REDIS GCRA GCRA-5 gcra/random-seed-1-trace-12 (difference; float seconds, shared cause): "
          "seconds since 2025-01-01 as a double (7.5 ns apart at 2023-2027 instants), "
          "floor((now - tat) / T) just below -1",
          lim.run([(530000, 1), (530000, 1)]), ["allowed(59521)", "allowed(59519)"],
          "allowed(59521), allowed(59520)")

    lim = gcra(1, 100_000, **R)
    check("REDIS GCRA GCRA-6 gcra/retry-after-from-earlier-now (difference, shared cause): "
          "retry_after = tat - now of doubles 7.5 ns apart, sent through tostring (14 digits)",
          lim.run([(1_000_000, 1), (950_000, 1)]), ["allowed(0)", "rejected(150003ns)"],
          "allowed(0), rejected(150000ns)")

    lim = gcra(3, 20_000, **R)
    answers = lim.run([(20000, 1), (30000, 1), (30000, 3), (60000, -1), (40000, 3), (50000, 1),
                       (10000000050000, 3), (10000000070000, 1), (10000000070000, 0), (10000000070000, 3)])
    check("REDIS GCRA GCRA-4 gcra/random-3 steps 7-10 (difference, REPORT.md 10's cause on Redis): after a "
          "burst of 3 at 10000000050 us, acquire(1) at the boundary one interval later is refused with a "
          "retry_after of 3 ns, and peek says 0 left",
          answers[6:], ["allowed(0)", "rejected(3ns)", "query(0)", "rejected(40003ns)"],
          "allowed(0), allowed(0), allowed(0), rejected(60000ns)")

    # -------------------------------------------------------------------------------- fixed-window
    lim = fw(140, 26, created=s(71), **R)
    check("REDIS FW CORE-7 fixed-window/random-seed-1-trace-35 (over-admission, shared): back 49 s, "
          "another window's key",
          lim.run([(s(72), 1), (s(9223372036), 140), (s(9223371987), 65)]),
          ["allowed(139)", "allowed(0)", "allowed(75)"], "allowed(139), allowed(0), neverAllowed")

    lim = fw(3, 10, **R)
    check("REDIS FW CORE-7 fixed-window/refusals-record-nothing (retry forever; on the memory store a CORE-10 "
          "over-admission): the key of [0 s, 10 s) expires on the server's wall clock, which is back at "
          "5 s, so the count is kept; acquire(4) above the limit gets the window's end",
          lim.run([(0, 3), (s(15), 0), (s(5), 1), (s(15), 4)]),
          ["allowed(0)", "query(3)", "rejected(5000000000ns)", "rejected(5000000000ns)"],
          "allowed(0), allowed(3), rejected(5000000000ns), neverAllowed")

    lim = fw(257, 1, **R)
    check("REDIS FW CORE-10 fixed-window/random-seed-1-trace-8, shrunk (over-admission, shared)",
          lim.run([(s(9223371973), 1), (s(9223371972), 257)]), ["allowed(256)", "allowed(0)"],
          "allowed(256), rejected(2000000000ns)")

    check("REDIS FW CORE-3 fixed-window/refuse-negative-window (shared)", (accepted(FW, -10, 1, **R),),
          ("created",), "refused windowNanoseconds (mustBePositive)")

    lim = fw(3, 10, **R)
    check("REDIS FW FW-4 fixed-window/weighted (difference, shared): INCRBY before the comparison "
          "(fixed_window.py:28-31) counts the refused acquire(2)",
          lim.run([(0, 2), (s(3), 2), (s(3), 1), (s(8), 1)]),
          ["allowed(1)", "rejected(7000000000ns)", "rejected(7000000000ns)", "rejected(2000000000ns)"],
          "allowed(1), rejected(7000000000ns), allowed(0), rejected(2000000000ns)")

    # ---------------------------------------------------------------------- sliding-window-counter
    lim = swc(169550584097337902, 1, **R)
    check("REDIS NEW SWC protocol sliding-window-counter/random-seed-1-trace-38 (misbehaviour): the script "
          "passes the Lua double cost 1.573992504963018e17 to INCRBY, which Redis formats "
          "'1.5739925049630179e+17' and refuses; redis-py's ResponseError becomes StoreUnavailableError",
          lim.run([(0, 1), (0, 157399250496301800)]),
          ["allowed(169550584097337901)", "error(StoreUnavailableError: value is not an integer or out of range)"],
          "allowed(169550584097337901), allowed(12151333601036101)")

    E = 9223372036854000000
    L16 = 21100857779455775
    lim = swc(L16, 2147483647, created=ms(19), **R)
    check("REDIS NEW SWC CORE-7 sliding-window-counter/random-seed-1-trace-16 (over-admission): used = "
          "previous + current + cost in Lua doubles is 21100857779455776, which the limit "
          "21100857779455775 also rounds to (2^54 < N: 4 apart): not above it",
          lim.run([(E, 66815699), (E, 1), (E, 1), (E, L16), (E, 21100857712640075)]),
          ["allowed(21100857712640076)", "allowed(21100857712640075)", "allowed(21100857712640074)",
           "rejected(1514046198145999909ns)", "allowed(0)"],
          "steps 4, 5: neverAllowed (step 5 needs 21100857779455776 > N)")

    lim = swc(181, 115137, created=ms(60), **R)
    check("REDIS SWC SWC-3 (alignment) sliding-window-counter/random-seed-1-trace-4 (over-admission, shared): "
          "60 ms into a window the previous window's permit is floored to 0",
          lim.run([(115137060000000, 49), (460548060000000, 1), (805959060000000, 1), (921096060000000, 181)]),
          ["allowed(132)", "allowed(180)", "allowed(180)", "allowed(0)"],
          "..., step 4: rejected(115136940000000ns)")

    lim = swc(1, 10, **R)
    check("REDIS SWC SWC-3 (edges) sliding-window-counter/no-floor (over-admission, shared): floor(0.9 * 1)",
          lim.run([(s(9), 1), (s(11), 1)]), ["allowed(0)", "allowed(0)"], "allowed(0), rejected(9000000000ns)")

    lim = swc(4, 10, **R)
    check("REDIS SWC SWC-4 sliding-window-counter/backward-time (over-admission, shared)",
          lim.run([(s(15), 4), (s(8), 1)]), ["allowed(0)", "allowed(3)"], "allowed(0), rejected(14500000000ns)")

    lim = swc(4, 10, **R)
    check("REDIS SWC SWC-4 sliding-window-counter/retry-same-window (over-admission; on the memory store "
          "the refused hit at 10 s is counted, REPORT.md 6, which hides it): floor(0.8 * 4) + 0 + 1 <= 4",
          lim.run([(s(5), 4), (s(10), 1), (s(12), 1)]),
          ["allowed(0)", "rejected(2500000000ns)", "allowed(0)"],
          "allowed(0), rejected(2500000000ns), rejected(500000000ns)")

    lim = swc(4, 10, **R)
    check("REDIS SWC CORE-9 sliding-window-counter/weight-shrinks (over-promise, shared)",
          lim.run([(s(5), 4), (s(9), 0), (s(10), 0), (s(12), 0)]),
          ["allowed(0)", "query(0)", "query(0)", "query(1)"], "..., allowed(0)")

    lim = swc(357, 25973, created=ms(89), **R)
    check("REDIS SWC CORE-10 sliding-window-counter/random-seed-1-trace-10 (over-promise, shared)",
          lim.run([(E, 1), (9223338036736000000, 11)]), ["allowed(356)", "allowed(346)"],
          "allowed(356), allowed(345)")

    lim = swc(10, 10, **R)
    check("REDIS SWC SWC-5 sliding-window-counter/worst-case (over-promise, shared): (1 - 0.8) * 10 in "
          "doubles, floored to 1",
          lim.run([(s(9), 10), (s(18), 8)]), ["allowed(0)", "allowed(1)"], "allowed(0), allowed(0)")

    lim = swc(4, 10, **R)
    check("REDIS SWC SWC-6 sliding-window-counter/retry-next-window (early retry, shared): the window's end",
          lim.run([(s(5), 4), (s(6), 1)]), ["allowed(0)", "rejected(4000000000ns)"],
          "allowed(0), rejected(6500000000ns)")

    # -------------------------------------------------------------------------- leaky-bucket-meter
    C34 = 3074457345618258602
    lim = lbm(C34, 536870911, 1, 0, **R)
    check("REDIS NEW LBM LBM-4 leaky-bucket-meter/random-seed-1-trace-34 (over-admission): the level is a "
          "Lua double: 2184734887 permits leave 3074457343433523712 (not ...715) and the full bucket plus 1 "
          "rounds to the capacity (2^61 < C: 512 apart)",
          lim.run([(0, 2184734887), (0, 3074457343433523715), (0, 1)]),
          ["allowed(3074457343433523712)", "allowed(0)", "allowed(0)"],
          "allowed(3074457343433523715), allowed(0), rejected(2ns)")

    lim = lbm(3, 2, 19, 2, created=s(36), **R)
    check("REDIS LBM LBM-4 leaky-bucket-meter/random-seed-1-trace-21 (liveness, shared): the leak's fraction "
          "is dropped at each admission (leaking_bucket.py:32-43)",
          lim.run([(s(44), 1), (s(53), 1)]), ["allowed(0)", "rejected(10000000000ns)"], "allowed(0), allowed(0)")

    lim = lbm(7411073394, 792992092053312, 1592606823, 3901891050, created=s(24), **R)
    check("REDIS LBM CORE-7 leaky-bucket-meter/random-seed-1-trace-2 (retry forever, shared)",
          lim.run([(s(25), 7411073395)]), ["rejected(7836000000000ns)"], "neverAllowed")

    lim = lbm(1000, 3, 15, 0, created=s(67), **R)
    check("REDIS NEW LBM CORE-10 leaky-bucket-meter/random-seed-1-trace-18 (over-promise; the memory store's "
          "level rises instead, REPORT.md 8): back at 63 s the script leaks nothing (max(0, ...)) but stores "
          "last_refreshed = 63 s; at 69 s it leaks the seconds up to 71 s again",
          lim.run([(s(71), 1), (s(63), 1), (s(69), 1)]), ["allowed(999)", "allowed(998)", "allowed(998)"],
          "allowed(999), allowed(998), allowed(997)")

    lim = lbm(3, 10, 1_000_000_000, 0, **R)
    check("REDIS NEW LBM CORE-10 leaky-bucket-meter/same-as-token-bucket (early retry, the row's worst, 10^17 "
          "ns early; scaled to whole seconds)",
          lim.run([(s(1_100_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1), (s(1_000_000_000), 1)]),
          ["allowed(2)", "allowed(1)", "allowed(0)", "rejected(100000000000000000ns)"],
          "allowed(2), allowed(1), allowed(0), rejected(200000000000000000ns): the leak counted from the "
          "latest instant (the memory store answers allowed(2), allowed(0), rejected(10^17 ns) twice: its "
          "level rises)")

    check("REDIS LBM CORE-3 leaky-bucket-meter/refuse-zero-capacity, refuse-drain-past-timeline (shared)",
          (accepted(LB, 1, 1, 0, **R), accepted(LB, 2, 1, INT64_MAX, **R)),
          ("created", "created, limit(1): StoreUnavailableError (value is not an integer or out of range)"),
          "refused capacity (mustBePositive), periodNanoseconds (exceedsMaximum 1); the second is accepted and "
          "its first admission fails (EXPIRE with a Lua double above 10^17, REPORT.md 15)")

    lim = lbm(162, 27, 1707, 9, created=s(44), **R)
    check("REDIS LBM LBM-5 leaky-bucket-meter/random-seed-1-trace-3 (difference, shared)",
          lim.run([(s(107), 1), (s(169), 1)]), ["allowed(152)", "allowed(151)"], "allowed(152), allowed(152)")

    lim = lbm(31152, 193, 120987, 16667, created=s(10), **R)
    check("REDIS LBM LBM-6 leaky-bucket-meter/random-seed-1-trace-30 (difference, shared; the row's worst, "
          "625580310880 ns late)",
          lim.run([(s(635), 31152)]), ["rejected(10448137000000000ns)"], "rejected(10447511419689120ns)")

    # ------------------------------------------------------------------- outside the run (Redis)
    lim = swc(1, 10, **R)
    check("REDIS EXTRA sliding window: the first refused hit of a window is NOT counted on Redis (the "
          "script sets the key only when it admits; REPORT.md 6 is memory only)",
          lim.run([(0, 2), (s(1), 1), (s(1), 0)]), ["rejected(10000000000ns)", "allowed(0)", "query(0)"],
          "neverAllowed, allowed(0), allowed(0)")

    lim = swc(10 ** 18, 10, **R)
    check("REDIS NEW EXTRA sliding window: an admitted first hit of 2*10^17 is stored as '2e+17' (SET with a "
          "Lua double, sliding_window.py:53), and every later hit of the window fails, cost 1 included",
          lim.run([(0, 2 * 10 ** 17), (s(1), 1), (s(1), 0)]),
          ["allowed(800000000000000000)", "error(StoreUnavailableError: value is not an integer or out of range)",
           "query(800000000000000000)"],
          "allowed(800000000000000000), allowed(799999999999999999), allowed(799999999999999999)")

    lim = lbm(20, 10, 1, 0, **R)
    check("REDIS EXTRA leaking bucket: the level does not rise when the clock steps back on Redis "
          "(the script has max(0, ...); REPORT.md 8 is memory only)",
          lim.run([(s(10), 1), (s(9), 0), (s(9), 1)]), ["allowed(19)", "query(19)", "allowed(18)"],
          "allowed(19), allowed(19), allowed(18)")

    lim_peek, lim_probe = tb(10, 3, 10, 0, **R), tb(10, 3, 10, 0, **R)
    check("REDIS EXTRA token bucket: limit(cost=0) stores last_refreshed = now on Redis too (REPORT.md 12)",
          (lim_peek.run([(s(4), 1), (s(7), 0), (s(8), 1)]),
           [lim_probe.step(s(4), 1), probe(lim_probe, s(7)), lim_probe.step(s(8), 1), lim_probe.step(s(11), 1)]),
          (["allowed(0)", "query(0)", "allowed(0)"],
           ["allowed(0)", "limit0(0)", "rejected(4000000000ns)", "allowed(0)"]),
          "a query changes nothing (CORE-9): acquire(1) admitted at 8 s")

    REDIS.server.stop()

print("\nthrottled-py %s: %d findings checked (%d memory store, %d Redis store), %d no longer reproduce"
      % (throttled.__version__, CHECKS[0], MEMORY_CHECKS, CHECKS[0] - MEMORY_CHECKS, len(FAILED)))
sys.exit(1 if FAILED else 0)

