#!/usr/bin/env python3
"""A rate limiter written from the Spec alone (Spec/*.md), speaking the
ratelimit-conformance JSON-lines protocol (Spec/protocol.md) on stdin/stdout.

Every strategy of the Spec (and composite limits, the wait queue and the adaptive rate and
concurrency of the scenario vectors), exact integer arithmetic (Python ints are arbitrary precision,
so every "128-bit" product of the Spec is exact here), no floating point in any
decision.

    python3 ratelimiter.py               speak the protocol on stdin/stdout
    python3 ratelimiter.py --list-bugs   print the names of the injectable bugs
    python3 ratelimiter.py --bug NAME    speak the protocol with one bug injected (repeat
                                         --bug NAME to inject several)

Standard library only; Python 3.9+.
"""

import copy
import json
import math
import os
import sys

INT64_MAX = (1 << 63) - 1

IMPLEMENTATION = "python-example 1"

STRATEGIES = [
    "token-bucket",
    "token-bucket-interval",
    "gcra",
    "pay-later",
    "warm-up",
    "fixed-window",
    "sliding-window-log",
    "sliding-window-counter",
    "sliding-window-segments",
    "leaky-bucket-meter",
    "leaky-bucket-queue",
    "concurrency",
]

# ---------------------------------------------------------------------------
# Injectable bugs (for --mutation-score). Each one is a realistic mistake.
# ---------------------------------------------------------------------------

BUGS = {
    "window-edge-off-by-one":
        "fixed window and sliding counter treat the instant k*W as the previous window ((t-1)//W)",
    "retry-after-rounded-down":
        "token bucket and leaky bucket meter round the wait down (floor) instead of up",
    "float-accumulation":
        "token bucket keeps tokens as a float (tokens += elapsed * rate / period)",
    "refill-on-rejection":
        "token bucket stores the refilled state (advances last) even when the acquire is rejected",
    "backward-time-regrant":
        "token bucket sets last = now when now < last (Go x/time/rate), re-granting tokens",
    "count-rejected":
        "fixed window counts a rejected acquire's permits anyway (Python limits)",
    "window-aligned-to-creation":
        "fixed window aligns its windows to the creation instant instead of the origin",
    "release-without-acquire":
        "concurrency limiter accepts an over-release and lets in-flight go negative",
    "log-expiry-inclusive":
        "sliding window log still counts an entry exactly one window old (a + W >= t)",
    "gcra-boundary-exclusive":
        "GCRA rejects the boundary case (< instead of <= in the tolerance check)",
    "zero-permits-consumes":
        "token bucket acquire(0) stores the refilled state instead of being a pure query",
    "queue-no-spacing":
        "leaky bucket queue answers allowed (go now) for queued requests instead of delayed",
    # Additional bugs.
    "never-allowed-saturates":
        "an admission past Int64.max is reported as a retry-after saturated at the end of the timeline",
    "retry-after-from-evaluation-instant":
        "token bucket measures the retry-after from the evaluation instant, not from the event's now",
    "reset-at-now":
        "token bucket reset stores now (not max(now, last)) as its instant, re-granting after time went back",
    "reconfigure-refills":
        "token bucket reconfigure fills the bucket to the new capacity instead of keeping the tokens",
    "interval-aligned-to-creation":
        "interval token bucket aligns its grid to the creation instant instead of the origin",
    "sliding-counter-floor":
        "sliding window counter floors the weighted previous count before comparing (Python limits)",
    "meter-keeps-water":
        "leaky bucket meter reconfigure keeps the water level instead of the room",
    "queue-excludes-current":
        "leaky bucket queue tolerance is Q*T instead of (Q+1)*T (forgets the request starting now)",
    "gcra-reset-at-now":
        "GCRA reset restarts the schedule at now instead of at max(now, last)",
    "gcra-one-word":
        "GCRA keeps only tat and evaluates at max(now, tat - tau); a stale reset grants permits twice",
    "log-reconfigure-keeps-expired":
        "sliding window log reconfigure keeps entries that had expired under the old window",
    "pay-later-charges-first":
        "pay later admits only a request whose whole cost fits the tolerance, as GCRA does "
        "(the textbook check), so a request larger than the burst is never allowed",
    "pay-later-debt-as-tokens":
        "pay later reconfigure converts a debt to the new interval as negative tokens "
        "instead of keeping the instant it is paid",
    "pay-later-remaining-as-gcra":
        "pay later reports as remaining the whole permits of slack, as GCRA-5 does, "
        "instead of any size (Int64.max) when not in debt",
    "warm-up-ramp-rounded-down":
        "warm-up rounds each acquire's ramp area down instead of up",
    "warm-up-starts-warm":
        "warm-up starts (and resets) warm, with no coldness, instead of cold",
    "warm-up-zero-period-unlimited":
        "warm-up with a period of 0 stops limiting after its first idle stretch (Guava's 0/0)",
    "warm-up-coldness-scaled":
        "warm-up reconfigure scales the coldness by the new period over the old instead of keeping it",
    "segments-slide-one-early":
        "segmented window counts a window of S - 1 segments and the present one's start: "
        "each segment slides out one segment early",
    "segments-aligned-to-creation":
        "segmented window aligns its segments to the creation instant (.NET) instead of the origin",
    "segments-reconfigure-at-first-instant":
        "segmented window reconfigure moves each segment to the new segment of its first instant "
        "instead of its last",
    # Bugs the conformance levels must catch at level safety (CONF-1, CONF-4, CONF-5).
    "retry-after-in-microseconds":
        "token bucket computes the wait in whole microseconds, truncated: under 1 us it answers rejected(0)",
    "negative-permits-add-tokens":
        "token bucket does not check for negative permits: acquire(-n) is allowed and adds n tokens",
    "counter-rounds-nearest":
        "sliding window counter rounds the weighted previous count to the nearest integer: "
        "conservative when it rounds up, over-admits when it rounds down",
    "last-updated-before-refill":
        "token bucket sets last = now before computing the refill, so it never refills: "
        "after the first burst it refuses everything, each time with a retry-after it does not keep",
    # Bugs that hide from the vectors: they need mid-range or large sizes, long histories or a
    # rare event, which only exploration draws (Spec/Conformance.md, "What a run explores").
    "log-capped-at-64":
        "sliding window log keeps at most 64 entries, dropping the oldest when a 65th comes",
    "bulk-acquire-chunked":
        "token bucket checks an acquire of more than 64 permits against its first chunk of 64 only",
    "segments-ring-of-16":
        "segmented window keeps its counts in a ring of 16 slots: a window of more segments forgets the oldest",
    "window-counter-32-bit":
        "fixed window counts in a signed 32-bit integer, which wraps past 2^31 - 1",
    "meter-level-as-double":
        "leaky bucket meter keeps its level as a double: above 2^53 it rounds, down as often as up",
    "gcra-remaining-16-bit":
        "GCRA reports remaining in an unsigned 16-bit field (modulo 65,536)",
    "queue-capacity-in-a-byte":
        "leaky bucket queue stores its queue capacity in a byte (modulo 256)",
    "interval-refill-capped":
        "interval token bucket refills at most 100 intervals at a time (a loop bound), however long the idle",
    "counter-product-wraps":
        "sliding window counter computes the weighted count p * (W - o) in 64 bits, which wraps",
    "gcra-sum-wraps":
        "GCRA tests (s - e) + c <= tau in 64 bits, which wraps when tau is above Int64.max / 2",
    "log-compaction-drops-newest":
        "sliding window log compacts itself every 128 appends, and the compaction drops the newest entry",
    "gcra-renormalise-every-1000":
        "GCRA rebases its schedule every 1,000 acquires, truncating it to whole microseconds",
    "fraction-lost-every-500":
        "token bucket zeroes its fractional refill every 500 acquires (a periodic renormalisation)",
    "counter-window-index-16-bit":
        "sliding window counter keeps its window index in 16 bits: after 65,536 windows it sees the same window",
    "window-history-crash":
        "fixed window records each window's count in an array of 256 and crashes at the 257th window",
    "concurrency-crash-at-150th-event":
        "concurrency limiter keeps its last 150 operations in a fixed buffer and crashes at the 150th event",
    "meter-huge-reconfigure-crash":
        "leaky bucket meter crashes when reconfigured to a capacity above 2^40",
    "pay-later-debt-32-bit":
        "pay later keeps the debt past the tolerance in a signed 32-bit count of intervals, which wraps",
    "warm-up-coldness-truncated":
        "warm-up stores its coldness in whole microseconds, so each acquire spends up to 999 ns less ramp",
    "queue-start-saturates-early":
        "leaky bucket queue saturates its next start at 2^62 instead of Int64.max, admitting what never starts",
    "segments-reconfigure-drops-current":
        "segmented window reconfigure to more than 8 segments leaves the current segment's count behind",
    "log-merges-nearby":
        "sliding window log merges an admission into the last entry when they are within 16 ns, keeping the older instant",
    "tokens-as-double-above-2-53":
        "token bucket keeps its tokens as a double once the capacity is above 2^53",
    "counter-remaining-capped":
        "fixed window reports at most 999 permits remaining (a display field of three digits)",
    "concurrency-release-chunked":
        "concurrency limiter releases more than 64 permits as 64 (its bulk path handles one chunk)",
    # Bugs of the machines of the scenario vectors (judged exactly, so at every level).
    "composite-records-refused":
        "a composite lets every limit that admitted record the request even when another refused it",
    "queue-newest-first":
        "the wait queue serves the newest waiter of a priority first (LIFO), so an early waiter starves",
    "adaptive-no-cool-down":
        "the adaptive rate decreases on every refusal, so that one burst of 429s is many decreases",
    "vegas-every-sample":
        "the adaptive concurrency moves on every sample, those of requests sent before the last change included",
    "queue-edf-within-priority":
        "the wait queue serves the waiter with the earliest deadline first within a priority, not the earliest arrival",
    "composite-first-remaining":
        "a composite reports the first limit's remaining after an admission, not the smallest",
    "queue-holds-at-most-16":
        "the wait queue keeps at most 16 waiters whatever its queue limit (a fixed array), refusing the 17th as full",
    "vegas-limit-in-a-byte":
        "the adaptive concurrency keeps its limit in an unsigned byte once it has dropped, so a limit above 255 wraps",
}

# The weakest level that must catch each bug: "safety" when the bug over-admits, answers outside
# CORE-5 or breaks liveness (so even --level safety fails), "exact" when it is only imprecise.
SAFETY_BUGS = {
    "window-edge-off-by-one", "float-accumulation", "backward-time-regrant", "count-rejected",
    "window-aligned-to-creation", "release-without-acquire", "gcra-boundary-exclusive",
    "never-allowed-saturates", "reset-at-now", "reconfigure-refills", "interval-aligned-to-creation",
    "sliding-counter-floor", "meter-keeps-water", "queue-excludes-current", "gcra-reset-at-now",
    "gcra-one-word", "log-expiry-inclusive", "retry-after-rounded-down", "refill-on-rejection",
    "zero-permits-consumes", "queue-no-spacing", "retry-after-from-evaluation-instant",
    "retry-after-in-microseconds", "negative-permits-add-tokens", "counter-rounds-nearest",
    "last-updated-before-refill", "composite-records-refused", "queue-newest-first",
    "adaptive-no-cool-down", "vegas-every-sample", "queue-edf-within-priority", "composite-first-remaining",
    "queue-holds-at-most-16", "vegas-limit-in-a-byte",
    "pay-later-charges-first", "pay-later-debt-as-tokens",
    "segments-slide-one-early", "segments-aligned-to-creation", "segments-reconfigure-at-first-instant",
    "warm-up-ramp-rounded-down", "warm-up-starts-warm", "warm-up-zero-period-unlimited",
    "warm-up-coldness-scaled",
    "log-capped-at-64", "bulk-acquire-chunked", "segments-ring-of-16", "window-counter-32-bit",
    "meter-level-as-double", "counter-product-wraps", "gcra-sum-wraps", "log-compaction-drops-newest",
    "gcra-renormalise-every-1000", "window-history-crash", "concurrency-crash-at-150th-event",
    "meter-huge-reconfigure-crash", "pay-later-debt-32-bit", "warm-up-coldness-truncated",
    "queue-start-saturates-early", "segments-reconfigure-drops-current", "log-merges-nearby",
    "tokens-as-double-above-2-53",
}

BUG = set()  # the names of the injected bugs

# The profile declared for every strategy (Spec/protocol.md, "Profiles"): exact integer
# nanoseconds up to Int64.max, any order of instants, every event, configurations validated.
PROFILE = {
    "timeUnitNanoseconds": 1,
    "largestInstantNanoseconds": INT64_MAX,
    "monotonic": False,
    "events": ["weighted", "query", "invalid", "reset", "reconfigure"],
    "toleranceNanoseconds": 0,
    "validation": True,
    "createdAtFirstEvent": False,
}


def bug(name):
    return name in BUG


def wrap(value, bits):
    """`value` as a signed integer of `bits` bits holds it, wrapped (two's complement)."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def crash():
    """Ends the process at once, as a crash does: no answer, no goodbye."""
    sys.stdout.flush()
    os._exit(3)


# ---------------------------------------------------------------------------
# Results and errors
# ---------------------------------------------------------------------------


class ConfigError(Exception):
    def __init__(self, field, problem, maximum=None):
        Exception.__init__(self, field, problem, maximum)
        self.field = field
        self.problem = problem
        self.maximum = maximum


def allowed(remaining):
    return {"kind": "allowed", "remaining": remaining}


def delayed(wait, remaining):
    return {"kind": "delayed", "waitNanoseconds": wait, "remaining": remaining}


def never():
    return {"kind": "neverAllowed"}


def invalid(field, problem, maximum=None):
    r = {"kind": "invalid", "field": field, "problem": problem}
    if maximum is not None:
        r["maximum"] = maximum
    return r


def refuse_at(a, now):
    """CORE-7: a refused acquire with admission instant a."""
    if a > INT64_MAX:
        if bug("never-allowed-saturates"):
            return {"kind": "rejected", "retryAfterNanoseconds": INT64_MAX - now}
        return never()
    return {"kind": "rejected", "retryAfterNanoseconds": a - now}


def ceil_div(a, b):
    return -((-a) // b)


# ---------------------------------------------------------------------------
# Configuration validation (CORE-3): fields in the order of each Spec table,
# the first bad field wins.
# ---------------------------------------------------------------------------


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _get(cfg, name, default=None, span=False):
    if name not in cfg:
        if default is not None:
            return default
        raise ConfigError(name, "mustBePositive")
    v = cfg[name]
    if isinstance(v, float):  # the protocol sends integers; be strict about anything else
        if not (math.isfinite(v) and v == math.floor(v)):
            raise ConfigError(name, "notWholeNanoseconds" if span else "notSupported")
        v = int(v)
    if not _is_int(v):
        raise ConfigError(name, "notSupported")
    if v > INT64_MAX:  # CORE-3: too large for an integer
        raise ConfigError(name, "exceedsMaximum", INT64_MAX)
    return v


def positive(cfg, name, span=False):
    v = _get(cfg, name, span=span)
    if v < 1:
        raise ConfigError(name, "mustBePositive")
    return v


def non_negative(cfg, name, default, span=False):
    v = _get(cfg, name, default=default, span=span)
    if v < 0:
        raise ConfigError(name, "mustNotBeNegative")
    return v


def at_most(name, v, maximum):
    if v > maximum:
        raise ConfigError(name, "exceedsMaximum", maximum)


def validate_token_bucket(cfg):  # TB-1
    c = positive(cfg, "capacity")
    r = positive(cfg, "permitsPerPeriod")
    p = positive(cfg, "periodNanoseconds", span=True)
    i = non_negative(cfg, "initialTokens", c)
    at_most("initialTokens", i, c)
    at_most("periodNanoseconds", p, INT64_MAX * r // c)  # refill time, checked last
    return (c, r, p, i)


def validate_interval_bucket(cfg):  # TBI-1
    c = positive(cfg, "capacity")
    k = positive(cfg, "tokensPerInterval")
    i = positive(cfg, "intervalNanoseconds", span=True)
    init = non_negative(cfg, "initialTokens", c)
    at_most("initialTokens", init, c)
    at_most("intervalNanoseconds", i, INT64_MAX // ceil_div(c, k))  # refill time, checked last
    return (c, k, i, init)


def validate_gcra(cfg):  # GCRA-1
    b = positive(cfg, "burst")
    t = positive(cfg, "emissionIntervalNanoseconds", span=True)
    at_most("emissionIntervalNanoseconds", t, INT64_MAX // b)
    return (b, t)


def validate_pay_later(cfg):  # PL-1
    b = positive(cfg, "burst")
    t = positive(cfg, "emissionIntervalNanoseconds", span=True)
    i = non_negative(cfg, "initialTokens", b)
    at_most("initialTokens", i, b)
    at_most("emissionIntervalNanoseconds", t, INT64_MAX // b)  # tolerance, checked last
    return (b, t, i)


def validate_warm_up(cfg):  # WU-1
    b = positive(cfg, "burst")
    t = positive(cfg, "emissionIntervalNanoseconds", span=True)
    p = non_negative(cfg, "warmUpPeriodNanoseconds", None, span=True)
    at_most("emissionIntervalNanoseconds", t, INT64_MAX // b)  # tolerance, checked last
    return (b, t, p)


def validate_window(cfg):  # FW-1, SWL-1, SWC-1
    n = positive(cfg, "limit")
    w = positive(cfg, "windowNanoseconds", span=True)
    return (n, w)


def validate_segments(cfg):  # SWS-1
    n = positive(cfg, "limit")
    s = positive(cfg, "segmentsPerWindow")
    g = positive(cfg, "segmentNanoseconds", span=True)
    at_most("segmentNanoseconds", g, INT64_MAX // s)  # the window, checked last
    return (n, s, g)


def validate_meter(cfg):  # LBM-1
    c = positive(cfg, "capacity")
    r = positive(cfg, "leakPermitsPerPeriod")
    p = positive(cfg, "periodNanoseconds", span=True)
    lvl = non_negative(cfg, "initialLevel", 0)
    at_most("initialLevel", lvl, c)
    at_most("periodNanoseconds", p, INT64_MAX * r // c)  # drain time, checked last
    return (c, r, p, lvl)


def validate_queue(cfg):  # LBQ-1
    q = non_negative(cfg, "queueCapacity", None)
    at_most("queueCapacity", q, INT64_MAX - 1)
    t = positive(cfg, "intervalNanoseconds", span=True)
    at_most("intervalNanoseconds", t, INT64_MAX // (q + 1))  # tolerance, checked last
    return (q, t)


def validate_concurrency(cfg):  # CL-1
    return (positive(cfg, "limit"),)


# ---------------------------------------------------------------------------
# Strategies. Each has acquire(n, now) for n >= 0, reset(now), reconfigure(cfg, now).
# ---------------------------------------------------------------------------


class TokenBucket:  # TB
    validate = staticmethod(validate_token_bucket)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        c, r, p, i = cfg
        self.k, self.f, self.last = i, 0, t0
        self.acquires = 0
        if bug("float-accumulation"):
            self.tokens = float(i)

    def refilled(self, now):
        """TB-3: (e, k, f) refilled to the evaluation instant, not stored."""
        c, r, p, _ = self.cfg
        last = self.last
        if bug("backward-time-regrant") and now < last:
            return now, self.k, self.f  # Go: last := now, elapsed 0
        if bug("last-updated-before-refill"):
            self.last = last = max(now, last)
        e = max(now, last)
        k, f = self.k, self.f
        if e == last or k == c:
            return e, k, f
        u = r * (e - last) + f
        if u < p:
            return e, k, u
        q, rem = divmod(u, p)
        if q >= c - k:
            return e, c, 0
        return e, k + q, rem

    def store(self, e, k, f):
        if bug("tokens-as-double-above-2-53") and self.cfg[0] > 1 << 53:
            k = int(float(k))
        self.k, self.f, self.last = k, f, e

    def acquire(self, n, now):
        c, r, p, _ = self.cfg
        if n > c:
            return never()  # TB-7
        if bug("float-accumulation"):
            return self._acquire_float(n, now)
        e, k, f = self.refilled(now)
        if n == 0:  # TB-8
            if bug("zero-permits-consumes"):
                self.store(e, k, f)
            return allowed(k)
        self.acquires += 1
        if bug("fraction-lost-every-500") and self.acquires % 500 == 0:
            f = 0
        if bug("bulk-acquire-chunked") and n > 64 and k >= 64:
            self.store(e, max(0, k - n), f)
            return allowed(max(0, k - n))
        if k >= n:  # TB-4
            self.store(e, k - n, f)
            return allowed(k - n)
        if bug("refill-on-rejection"):
            self.store(e, k, f)
        m = (n - k) * p - f  # TB-6
        w = m // r if bug("retry-after-rounded-down") else ceil_div(m, r)
        a = e + w
        if bug("retry-after-from-evaluation-instant"):
            return refuse_at(a - e + now, now)
        if bug("retry-after-in-microseconds") and a <= INT64_MAX:
            return {"kind": "rejected", "retryAfterNanoseconds": (a - now) // 1000 * 1000}
        return refuse_at(a, now)

    def _acquire_float(self, n, now):
        c, r, p, _ = self.cfg
        e = max(now, self.last)
        rate = r / p  # tokens per nanosecond
        tokens = min(float(c), self.tokens + (e - self.last) * rate)
        if n == 0:
            return allowed(int(tokens))
        if tokens >= n:
            self.tokens, self.last = tokens - n, e
            return allowed(int(self.tokens))
        w = math.ceil((n - tokens) / rate)
        return refuse_at(e + w, now)

    def reset(self, now):  # TB-9
        c, r, p, i = self.cfg
        e = now if bug("reset-at-now") else max(now, self.last)
        self.store(e, i, 0)
        if bug("float-accumulation"):
            self.tokens = float(i)
        return allowed(i)

    def reconfigure(self, cfg, now):  # TB-10
        c2, r2, p2, _ = cfg
        if bug("float-accumulation"):
            e = max(now, self.last)
            c, r, p, _ = self.cfg
            tokens = min(float(c), self.tokens + (e - self.last) * (r / p))
            self.cfg = cfg
            self.tokens, self.last = min(tokens, float(c2)), e
            return allowed(int(self.tokens))
        e, k, f = self.refilled(now)
        p = self.cfg[2]
        self.cfg = cfg
        if bug("reconfigure-refills") or k >= c2:
            self.store(e, c2, 0)
        else:
            self.store(e, k, f * p2 // p)
        return allowed(self.k)


class IntervalTokenBucket:  # TBI
    validate = staticmethod(validate_interval_bucket)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.t0 = t0
        self.k, self.last = cfg[3], t0

    def index(self, t):
        i = self.cfg[2]
        if bug("interval-aligned-to-creation"):
            return (t - self.t0) // i
        return t // i

    def boundary(self, j):
        i = self.cfg[2]
        if bug("interval-aligned-to-creation"):
            return self.t0 + j * i
        return j * i

    def refilled(self, now):  # TBI-3
        c, kk, i, _ = self.cfg
        e = max(now, self.last)
        b = self.index(e) - self.index(self.last)
        if bug("interval-refill-capped"):
            b = min(b, 100)
        return e, min(c, self.k + b * kk)

    def acquire(self, n, now):
        c, kk, i, _ = self.cfg
        if n > c:
            return never()  # TBI-7
        e, k = self.refilled(now)
        if n == 0:
            return allowed(k)
        if k >= n:  # TBI-4
            self.k, self.last = k - n, e
            return allowed(k - n)
        m = ceil_div(n - k, kk)  # TBI-6
        return refuse_at(self.boundary(self.index(e) + m), now)

    def reset(self, now):  # TBI-9
        e = max(now, self.last)
        self.k, self.last = self.cfg[3], e
        return allowed(self.k)

    def reconfigure(self, cfg, now):  # TBI-10
        e, k = self.refilled(now)
        self.cfg = cfg
        self.k, self.last = min(k, cfg[0]), e
        return allowed(self.k)


class GCRA:  # GCRA
    validate = staticmethod(validate_gcra)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.tat, self.last = t0, t0  # GCRA-2
        self.acquires = 0

    def tau(self):
        return self.cfg[0] * self.cfg[1]

    def evaluation(self, now):  # GCRA-3
        if bug("gcra-one-word"):
            return max(now, self.tat - self.tau())
        return max(now, self.last)

    def remaining(self, e):  # GCRA-5
        left = (self.tau() - max(self.tat - e, 0)) // self.cfg[1]
        return left % 65536 if bug("gcra-remaining-16-bit") else left

    def acquire(self, n, now):
        b, t = self.cfg
        if n > b:
            return never()  # GCRA-7
        e = self.evaluation(now)
        if n == 0:
            return allowed(self.remaining(e))  # GCRA-8
        tau = self.tau()
        s = max(self.tat, e)
        c = n * t
        if bug("gcra-boundary-exclusive"):
            ok = (s - e) + c < tau
        elif bug("gcra-sum-wraps"):
            ok = wrap((s - e) + c, 64) <= tau
        else:
            ok = (s - e) + c <= tau
        if ok:  # GCRA-4
            self.tat, self.last = s + c, e
            self.acquires += 1
            if bug("gcra-renormalise-every-1000") and self.acquires % 1000 == 0:
                self.tat = self.last + (self.tat - self.last) // 1000 * 1000
            return allowed(self.remaining(e))
        return refuse_at(self.tat - (tau - c), now)  # GCRA-6

    def reset(self, now):  # GCRA-9
        e = now if bug("gcra-reset-at-now") else self.evaluation(now)
        self.tat, self.last = e, e
        return allowed(self.remaining(e))

    def reconfigure(self, cfg, now):  # GCRA-10
        tau = self.tau()
        t = self.cfg[1]
        e = self.evaluation(now)
        a = tau - max(self.tat - e, 0)
        b2, t2 = cfg
        tau2 = b2 * t2
        a2 = min(a * t2 // t, tau2)
        self.cfg = cfg
        self.tat, self.last = e + (tau2 - a2), e
        return allowed(self.remaining(e))


class PayLater:  # PL
    validate = staticmethod(validate_pay_later)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        b, t, i = cfg
        self.tat, self.last = t0 + (b - i) * t, t0  # PL-2

    def tau(self):
        return self.cfg[0] * self.cfg[1]

    def in_debt(self, e):  # PL-3: less than one whole permit available
        return self.tat - e > self.tau() - self.cfg[1]

    def remaining(self, e):  # PL-5
        if bug("pay-later-remaining-as-gcra"):
            return max(0, (self.tau() - max(self.tat - e, 0)) // self.cfg[1])
        return 0 if self.in_debt(e) else INT64_MAX

    def acquire(self, n, now):
        b, t, _ = self.cfg
        e = max(now, self.last)  # PL-3
        if bug("pay-later-charges-first") and n > 0:
            if n > b:
                return never()
            if max(self.tat, e) - e + n * t > self.tau():
                return refuse_at(self.tat - (self.tau() - n * t), now)
        if self.in_debt(e):
            if n == 0:
                return allowed(0)  # PL-8
            return refuse_at(self.tat - (self.tau() - t), now)  # PL-6: paid at tat - (tau - T)
        if n == 0:
            return allowed(self.remaining(e))  # PL-8
        # PL-4: any size; a debt paid past the end of the timeline saturates (PL-2)
        self.tat = min(max(self.tat, e) + n * t, INT64_MAX + 1 + self.tau())
        if bug("pay-later-debt-32-bit"):
            intervals = (self.tat - e - self.tau()) // t  # whole intervals of debt past the tolerance
            if intervals > 0:
                self.tat -= (intervals - wrap(intervals, 32)) * t
        self.last = e
        return allowed(self.remaining(e))

    def reset(self, now):  # PL-9
        b, t, i = self.cfg
        e = max(now, self.last)
        self.tat, self.last = e + (b - i) * t, e
        return allowed(self.remaining(e))

    def reconfigure(self, cfg, now):  # PL-10
        e = max(now, self.last)
        tau, t = self.tau(), self.cfg[1]
        b2, t2, _ = cfg
        tau2 = b2 * t2
        p = max(self.tat - e, 0)
        if p <= tau or bug("pay-later-debt-as-tokens"):
            a2 = min((tau - p) * t2 // t, tau2)  # tokens kept, rounded down, capped
            tat = min(e + tau2 - a2, INT64_MAX + 1 + tau2)
        else:
            tat = (self.tat - tau) + tau2  # the instant the debt is paid is kept
        self.cfg = cfg
        self.tat, self.last = tat, e
        return allowed(self.remaining(e))


class WarmUp:  # WU: pay later whose permits cost more when cold
    validate = staticmethod(validate_warm_up)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.tat, self.cold, self.last = t0, self.initial_coldness(), t0  # WU-2: rested and cold

    def initial_coldness(self):
        return 0 if bug("warm-up-starts-warm") else self.cfg[2]

    def tau(self):
        return self.cfg[0] * self.cfg[1]

    def in_debt(self, e):  # WU-3 (PL-3)
        return self.tat - e > self.tau() - self.cfg[1]

    def remaining(self, e):  # WU-5 (PL-5)
        return 0 if self.in_debt(e) else INT64_MAX

    def coldness(self, e):  # WU-3: one ns per idle ns past tat, up to P
        p = self.cfg[2]
        if bug("warm-up-zero-period-unlimited") and p == 0 and e > self.tat:
            return None  # Guava: 0 / 0.0 is NaN, and so is every later cost
        return min(p, self.cold + max(0, e - self.tat))

    def ramp(self, sigma, spent):  # WU-4: the ramp's area over the coldness spent
        p = self.cfg[2]
        if p == 0:
            return 0
        u0, u1 = max(0, 2 * sigma - p), max(0, 2 * (sigma - spent) - p)
        if bug("warm-up-ramp-rounded-down"):
            return (u0 * u0 - u1 * u1) // (2 * p)
        return ceil_div(u0 * u0 - u1 * u1, 2 * p)

    def acquire(self, n, now):
        b, t, p = self.cfg
        e = max(now, self.last)
        if self.in_debt(e):
            if n == 0:
                return allowed(0)  # WU-8
            return refuse_at(self.tat - (self.tau() - t), now)  # WU-6
        if n == 0:
            return allowed(INT64_MAX)  # WU-5, WU-8
        sigma = self.coldness(e)
        if sigma is None:  # the injected bug: no cost at all
            self.tat, self.cold, self.last = max(self.tat, e), 0, e
            return allowed(self.remaining(e))
        spent = min(n * t, sigma)
        if bug("warm-up-coldness-truncated"):
            sigma = sigma // 1000 * 1000
            spent = min(n * t, sigma)
        cost = n * t + self.ramp(sigma, spent)  # WU-4
        self.tat = min(max(self.tat, e) + cost, INT64_MAX + 1 + self.tau())
        self.cold, self.last = sigma - spent, e
        return allowed(self.remaining(e))

    def reset(self, now):  # WU-9
        e = max(now, self.last)
        self.tat, self.cold, self.last = e, self.initial_coldness(), e
        return allowed(INT64_MAX)

    def reconfigure(self, cfg, now):  # WU-10: tokens or debt as PL-10, coldness kept and capped
        e = max(now, self.last)
        b, t, p = self.cfg
        b2, t2, p2 = cfg
        tau, tau2 = b * t, b2 * t2
        sigma = self.coldness(e)
        sigma = 0 if sigma is None else sigma
        pending = max(self.tat - e, 0)
        if pending <= tau:
            a2 = min((tau - pending) * t2 // t, tau2)
            tat = e + tau2 - a2
        else:
            tat = (self.tat - tau) + tau2
        if bug("warm-up-coldness-scaled"):
            cold = sigma * p2 // p if p > 0 else 0
        else:
            cold = min(sigma, p2)
        self.cfg = cfg
        self.tat, self.cold, self.last = tat, cold, e
        return allowed(self.remaining(e))


class FixedWindow:  # FW
    validate = staticmethod(validate_window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.t0 = t0
        self.u, self.last = 0, t0
        self.history = []  # window-history-crash: one count per window, at most 256

    def index(self, t):
        w = self.cfg[1]
        if bug("window-edge-off-by-one"):
            return (t - 1) // w
        if bug("window-aligned-to-creation"):
            return (t - self.t0) // w
        return t // w

    def start(self, j):
        w = self.cfg[1]
        if bug("window-aligned-to-creation"):
            return self.t0 + j * w
        return j * w

    def counted(self, now):  # FW-3
        e = max(now, self.last)
        u = 0 if self.index(e) > self.index(self.last) else self.u
        if bug("window-history-crash") and self.index(e) > self.index(self.last):
            if len(self.history) == 256:
                crash()
            self.history.append(self.u)
        return e, u

    def left(self, lim, u):
        left = max(0, lim - u)
        return min(left, 999) if bug("counter-remaining-capped") else left

    def acquire(self, n, now):
        lim = self.cfg[0]
        if n > lim:
            return never()  # FW-7
        e, u = self.counted(now)
        if n == 0:
            return allowed(self.left(lim, u))
        if bug("window-counter-32-bit") and wrap(u + n, 32) <= lim:
            self.u, self.last = wrap(u + n, 32), e
            return allowed(max(0, lim - self.u))
        if n <= lim - u:  # FW-4
            self.u, self.last = u + n, e
            return allowed(self.left(lim, self.u))
        if bug("count-rejected"):
            self.u, self.last = u + n, e
        return refuse_at(self.start(self.index(e) + 1), now)  # FW-6

    def reset(self, now):  # FW-9
        self.u, self.last = 0, max(now, self.last)
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # FW-10
        e, u = self.counted(now)
        self.cfg = cfg
        self.u, self.last = u, e
        return allowed(max(0, cfg[0] - u))


class SlidingWindowLog:  # SWL
    validate = staticmethod(validate_window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.log = []  # [instant, permits], increasing instants
        self.last = t0
        self.appends = 0

    def in_force(self, a, t, w):  # SWL-3
        if bug("log-expiry-inclusive"):
            return a + w >= t
        return a + w > t

    def live(self, e, w):
        return [x for x in self.log if self.in_force(x[0], e, w)]

    def acquire(self, n, now):
        lim, w = self.cfg
        if n > lim:
            return never()  # SWL-7
        e = max(now, self.last)
        entries = self.live(e, w)
        f = sum(x[1] for x in entries)
        if n == 0:
            return allowed(max(0, lim - f))
        if f + n <= lim:  # SWL-4
            if entries and entries[-1][0] == e:
                entries[-1] = [e, entries[-1][1] + n]
            elif bug("log-merges-nearby") and entries and e - entries[-1][0] <= 16:
                entries[-1] = [entries[-1][0], entries[-1][1] + n]
            else:
                entries.append([e, n])
                self.appends += 1
                if bug("log-capped-at-64") and len(entries) > 64:
                    entries = entries[-64:]
                if bug("log-compaction-drops-newest") and self.appends % 128 == 0:
                    entries = entries[:-1]
            self.log, self.last = entries, e
            return allowed(max(0, lim - f - n))
        x = f + n - lim  # SWL-6
        acc = 0
        for a, m in entries:
            acc += m
            if acc >= x:
                return refuse_at(a + w, now)
        return never()  # unreachable: n <= lim

    def reset(self, now):  # SWL-9
        self.log, self.last = [], max(now, self.last)
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # SWL-10
        e = max(now, self.last)
        if not bug("log-reconfigure-keeps-expired"):
            self.log = self.live(e, self.cfg[1])
        self.cfg = cfg
        self.last = e
        f = sum(x[1] for x in self.live(e, cfg[1]))
        return allowed(max(0, cfg[0] - f))


class SlidingWindowCounter:  # SWC
    validate = staticmethod(validate_window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.c, self.p, self.last = 0, 0, t0

    def index(self, t):
        w = self.cfg[1]
        if bug("window-edge-off-by-one"):
            return (t - 1) // w
        if bug("counter-window-index-16-bit"):
            return t // w % 65536
        return t // w

    def rolled(self, now):  # SWC-3
        w = self.cfg[1]
        e = max(now, self.last)
        d = self.index(e) - self.index(self.last)
        c, p = self.c, self.p
        if d == 1:
            p, c = c, 0
        elif d >= 2:
            p, c = 0, 0
        o = e % w if bug("counter-window-index-16-bit") else e - self.index(e) * w  # e mod W
        return e, c, p, o

    def remaining(self, c, p, o):  # SWC-5
        lim, w = self.cfg
        x = p * (w - o)
        if bug("sliding-counter-floor"):
            return max(0, lim - x // w - c)
        if x > lim * w:
            return 0
        return max(0, (lim * w - x) // w - c)

    def acquire(self, n, now):
        lim, w = self.cfg
        if n > lim:
            return never()  # SWC-7
        e, c, p, o = self.rolled(now)
        if n == 0:
            return allowed(self.remaining(c, p, o))
        if bug("sliding-counter-floor"):
            ok = p * (w - o) // w + c + n <= lim
        elif bug("counter-product-wraps"):
            ok = wrap(wrap(p * (w - o), 64) + (c + n) * w, 64) <= lim * w
        elif bug("counter-rounds-nearest"):
            ok = (2 * p * (w - o) + w) // (2 * w) + c + n <= lim
        else:
            ok = p * (w - o) + (c + n) * w <= lim * w  # SWC-4
        if ok:
            self.c, self.p, self.last = c + n, p, e
            return allowed(self.remaining(c + n, p, o))
        k = self.index(e)  # SWC-6
        s = lim - c - n
        if s >= 0 and p > 0:
            q = s * w // p
            if q >= 1:
                return refuse_at(k * w + (w - q), now)
        if c <= lim - n:
            return refuse_at((k + 1) * w, now)
        q = (lim - n) * w // c
        if q >= 1:
            return refuse_at((k + 1) * w + (w - q), now)
        return refuse_at((k + 2) * w, now)

    def reset(self, now):  # SWC-9
        self.c, self.p, self.last = 0, 0, max(now, self.last)
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # SWC-10
        e, c, p, _ = self.rolled(now)
        self.cfg = cfg
        self.c, self.p, self.last = c, p, e
        o = e % cfg[1] if bug("counter-window-index-16-bit") else e - self.index(e) * cfg[1]
        return allowed(self.remaining(c, p, o))


class SlidingWindowSegments:  # SWS
    validate = staticmethod(validate_segments)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.t0 = t0
        self.segments, self.last = [], t0  # [j, count], increasing j (SWS-2)

    def start(self, j, g):  # the first instant of segment j
        if bug("segments-aligned-to-creation"):
            return self.t0 + j * g
        return j * g

    def index(self, t, g):  # the segment of instant t
        if bug("segments-aligned-to-creation"):
            return (t - self.t0) // g
        return t // g

    def live(self, e, cfg):  # SWS-3: segments k - S < j <= k
        _, s, g = cfg
        k = self.index(e, g)
        first = k - s + 2 if bug("segments-slide-one-early") else k - s + 1
        if bug("segments-ring-of-16"):
            first = max(first, k - 15)
        return [[j, c] for j, c in self.segments if j >= first]

    def acquire(self, n, now):
        lim, s, g = self.cfg
        if n > lim:
            return never()  # SWS-7
        e = max(now, self.last)
        live = self.live(e, self.cfg)
        u = sum(c for _, c in live)
        if n == 0:
            return allowed(max(0, lim - u))  # SWS-5
        if u + n <= lim:  # SWS-4
            k = self.index(e, g)
            if live and live[-1][0] == k:
                live[-1][1] += n
            else:
                live.append([k, n])
            self.segments, self.last = live, e
            return allowed(lim - u - n)
        x = u + n - lim  # SWS-6: oldest segments first
        acc = 0
        for j, c in live:
            acc += c
            if acc >= x:
                shift = s - 1 if bug("segments-slide-one-early") else s
                return refuse_at(self.start(j + shift, g), now)
        return never()  # unreachable: n <= lim

    def reset(self, now):  # SWS-9
        self.segments, self.last = [], max(now, self.last)
        return allowed(self.cfg[0])

    def reconfigure(self, cfg, now):  # SWS-10
        e = max(now, self.last)
        g, g2 = self.cfg[2], cfg[2]
        moved = []
        for j, c in self.live(e, self.cfg):
            if bug("segments-reconfigure-at-first-instant"):
                t = self.start(j, g)
            else:
                t = min(self.start(j + 1, g) - 1, e)  # its last instant, not after e
            j2 = self.index(t, g2)
            if moved and moved[-1][0] == j2:
                moved[-1][1] += c
            else:
                moved.append([j2, c])
        if bug("segments-reconfigure-drops-current") and cfg[1] > 8 and moved:
            if moved[-1][0] == self.index(e, g2):
                moved.pop()
        self.cfg = cfg
        self.segments, self.last = moved, e
        u = sum(c for _, c in self.live(e, cfg))
        return allowed(max(0, cfg[0] - u))


class LeakyBucketMeter:  # LBM
    validate = staticmethod(validate_meter)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.level, self.last = cfg[3] * cfg[2], t0

    def leaked(self, now):  # LBM-3
        r = self.cfg[1]
        e = max(now, self.last)
        return e, max(0, self.level - r * (e - self.last))

    def room(self, level):  # LBM-5
        c, r, p, _ = self.cfg
        return (c * p - level) // p

    def acquire(self, n, now):
        c, r, p, _ = self.cfg
        if n > c:
            return never()  # LBM-7
        e, level = self.leaked(now)
        if n == 0:
            return allowed(self.room(level))
        if level + n * p <= c * p:  # LBM-4
            self.level, self.last = level + n * p, e
            if bug("meter-level-as-double"):
                self.level = int(float(self.level))
            return allowed(self.room(self.level))
        excess = level + n * p - c * p  # LBM-6
        w = excess // r if bug("retry-after-rounded-down") else ceil_div(excess, r)
        return refuse_at(e + w, now)

    def reset(self, now):  # LBM-9
        c, r, p, lvl = self.cfg
        self.level, self.last = lvl * p, max(now, self.last)
        return allowed(self.room(self.level))

    def reconfigure(self, cfg, now):  # LBM-10
        if bug("meter-huge-reconfigure-crash") and cfg[0] > 1 << 40:
            crash()
        e, level = self.leaked(now)
        c, _, p, _ = self.cfg
        c2, _, p2, _ = cfg
        if bug("meter-keeps-water"):
            level2 = min(level * p2 // p, c2 * p2)
        else:
            rho = c * p - level
            rho2 = min(rho * p2 // p, c2 * p2)
            level2 = c2 * p2 - rho2
        self.cfg = cfg
        self.level, self.last = level2, e
        return allowed(self.room(level2))


class LeakyBucketQueue:  # LBQ
    validate = staticmethod(validate_queue)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.start, self.last = t0, t0

    def tau(self):
        q, t = self.cfg
        if bug("queue-excludes-current"):
            return q * t
        if bug("queue-capacity-in-a-byte"):
            return (q % 256 + 1) * t
        return (q + 1) * t

    def remaining(self, e):  # LBQ-5
        if self.start > INT64_MAX:
            return 0
        tau = self.tau()
        p = max(self.start - e, 0)
        if p >= tau:
            return 0
        return (tau - p) // self.cfg[1]

    def acquire(self, n, now):
        q, t = self.cfg
        if n > q + 1:
            return never()  # LBQ-7
        e = max(now, self.last)  # LBQ-3
        if n == 0:
            return allowed(self.remaining(e))
        if self.start > INT64_MAX:
            return never()
        tau = self.tau()
        s = max(self.start, e)  # LBQ-4
        c = n * t
        p = max(self.start - e, 0)
        if p + c <= tau:
            self.start, self.last = s + c, e
            if bug("queue-start-saturates-early"):
                self.start = min(self.start, 1 << 62)
            rem = self.remaining(e)
            if s == now or bug("queue-no-spacing"):
                return allowed(rem)
            return delayed(s - now, rem)
        return refuse_at(self.start - (tau - c), now)  # LBQ-6

    def reset(self, now):  # LBQ-9
        e = max(now, self.last)
        self.start, self.last = e, e
        return allowed(self.remaining(e))

    def reconfigure(self, cfg, now):  # LBQ-10
        e = max(now, self.last)
        self.cfg = cfg
        self.last = e
        return allowed(self.remaining(e))


class ConcurrencyLimiter:  # CL
    validate = staticmethod(validate_concurrency)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.h = 0
        self.events = 0

    def count_event(self):
        self.events += 1
        if bug("concurrency-crash-at-150th-event") and self.events == 150:
            crash()

    def remaining(self):  # CL-5
        return max(0, self.cfg[0] - self.h)

    def acquire(self, n, now):
        lim = self.cfg[0]
        if n > lim:
            return never()  # CL-7
        self.count_event()
        if n == 0:
            return allowed(self.remaining())
        if self.h + n <= lim:  # CL-4
            self.h += n
            return allowed(self.remaining())
        return {"kind": "rejectedUntilRelease", "shortfall": self.h + n - lim}  # CL-6

    def release(self, n, now):  # CL-8
        self.count_event()
        if n < 0:
            return invalid("permits", "mustNotBeNegative")
        if n > self.h and not bug("release-without-acquire"):
            return invalid("permits", "exceedsMaximum", self.h)
        self.h -= min(n, 64) if bug("concurrency-release-chunked") else n
        return allowed(self.remaining())

    def reset(self, now):  # CL-9
        self.h = 0
        return allowed(self.remaining())

    def reconfigure(self, cfg, now):  # CL-10
        self.cfg = cfg
        return allowed(self.remaining())


KINDS = {
    "token-bucket": TokenBucket,
    "token-bucket-interval": IntervalTokenBucket,
    "gcra": GCRA,
    "pay-later": PayLater,
    "warm-up": WarmUp,
    "fixed-window": FixedWindow,
    "sliding-window-log": SlidingWindowLog,
    "sliding-window-counter": SlidingWindowCounter,
    "sliding-window-segments": SlidingWindowSegments,
    "leaky-bucket-meter": LeakyBucketMeter,
    "leaky-bucket-queue": LeakyBucketQueue,
    "concurrency": ConcurrencyLimiter,
}


def apply_event(limiter, event, now):
    """CORE-4 .. CORE-13: one event at one instant; returns the result object."""
    if not _is_int(now) or now < 0:
        return invalid("now", "mustNotBeNegative")  # CORE-1
    kind = event.get("kind")
    if kind == "acquire":
        n = event.get("permits")
        if not _is_int(n):
            return invalid("permits", "notSupported")
        if n < 0 and bug("negative-permits-add-tokens") and isinstance(limiter, TokenBucket):
            limiter.k = min(limiter.cfg[0], limiter.k - n)
            return allowed(limiter.k)
        if n < 0:
            return invalid("permits", "mustNotBeNegative")  # CORE-9
        return limiter.acquire(n, now)
    if kind == "release":
        if not isinstance(limiter, ConcurrencyLimiter):
            return invalid("release", "notSupported")  # CORE-11
        n = event.get("permits")
        if not _is_int(n):
            return invalid("permits", "notSupported")
        return limiter.release(n, now)
    if kind == "reset":
        return limiter.reset(now)  # CORE-12
    if kind == "reconfigure":
        try:
            cfg = limiter.validate(event.get("configuration") or {})
        except ConfigError as err:
            return invalid(err.field, err.problem, err.maximum)
        return limiter.reconfigure(cfg, now)  # CORE-13
    return None


# ---------------------------------------------------------------------------
# Composite limits (Spec/CompositeLimit.md) and the wait queue (Spec/WaitQueue.md),
# run as the scenarios of Spec/vectors/scenarios (protocol extensions "composite"
# and "wait-queue").
# ---------------------------------------------------------------------------


def maximum_permits(limiter):
    """X-7: the largest acquire the strategy ever admits."""
    if isinstance(limiter, LeakyBucketQueue):
        return limiter.cfg[0] + 1
    if isinstance(limiter, (PayLater, WarmUp)):
        return INT64_MAX  # PL-7, WU-7: any size
    return limiter.cfg[0]


def probe(limiter, n, now):
    """The answer acquire(n) would get at now, changing nothing."""
    return copy.deepcopy(limiter).acquire(n, now)


def admitted(result):
    return result["kind"] in ("allowed", "delayed")


def read_limit(item, field):
    """A limit of a composite or a wait queue: its class and validated configuration."""
    if not isinstance(item, dict):
        raise ConfigError(field, "notSupported")
    cls = KINDS.get(item.get("strategy"))
    if cls is None:
        raise ConfigError(field, "notSupported")
    return cls, cls.validate(item.get("configuration") or {})


class Composite:  # COMP
    @staticmethod
    def validate(cfg):  # COMP-2: no limit; then limit by limit, its own refusal or a queue
        items = cfg.get("limits")
        if not isinstance(items, list):
            raise ConfigError("limits", "notSupported")
        if not items:
            raise ConfigError("limits", "mustBePositive")
        limits = []
        for i, item in enumerate(items):
            cls, c = read_limit(item, "limits[%d]" % i)
            if cls is LeakyBucketQueue:
                raise ConfigError("limits[%d]" % i, "notSupported")
            limits.append((cls, c))
        return limits

    def __init__(self, cfg, t0):
        self.limits = [cls(c, t0) for cls, c in cfg]

    def remaining(self, now):
        return min(probe(limit, 0, now)["remaining"] for limit in self.limits)

    def acquire(self, n, now):  # COMP-4, COMP-5, COMP-6
        copies = [copy.deepcopy(limit) for limit in self.limits]
        answers = [c.acquire(n, now) for c in copies]
        if bug("composite-records-refused"):
            self.limits = copies
        if all(admitted(a) for a in answers):
            self.limits = copies
            if bug("composite-first-remaining"):
                return allowed(answers[0]["remaining"])
            return allowed(min(a["remaining"] for a in answers))
        for a in answers:
            if a["kind"] == "invalid":
                return a
        if any(a["kind"] == "neverAllowed" for a in answers):
            return never()
        shortfalls = [a["shortfall"] for a in answers if a["kind"] == "rejectedUntilRelease"]
        if shortfalls:
            return {"kind": "rejectedUntilRelease", "shortfall": max(shortfalls)}
        return {"kind": "rejected",
                "retryAfterNanoseconds": max(a["retryAfterNanoseconds"] for a in answers if a["kind"] == "rejected")}

    def release(self, n, now):  # COMP-7
        holders = [i for i, limit in enumerate(self.limits) if isinstance(limit, ConcurrencyLimiter)]
        if not holders:
            return invalid("release", "notSupported")
        if n < 0:
            return invalid("permits", "mustNotBeNegative")
        copies = list(self.limits)
        for i in holders:
            copies[i] = copy.deepcopy(self.limits[i])
            answer = copies[i].release(n, now)
            if answer["kind"] == "invalid":
                return answer
        self.limits = copies
        return allowed(self.remaining(now))

    def reset(self, now):  # COMP-7
        for limit in self.limits:
            limit.reset(now)
        return allowed(self.remaining(now))

    def reconfigure(self, cfg, now):  # COMP-8
        if len(cfg) != len(self.limits):
            return invalid("limits", "notSupported")
        for i, ((cls, _), limit) in enumerate(zip(cfg, self.limits)):
            if not isinstance(limit, cls):
                return invalid("limits[%d]" % i, "notSupported")
        for (_, c), limit in zip(cfg, self.limits):
            limit.reconfigure(c, now)
        return allowed(self.remaining(now))

    def step(self, event, now):
        kind = event.get("kind")
        if kind == "reconfigure":
            try:
                cfg = Composite.validate(event.get("configuration") or {})
            except ConfigError as err:
                return invalid(err.field, err.problem, err.maximum)  # CORE-13: nothing changes
            return self.reconfigure(cfg, now)
        n = event.get("permits")
        if kind == "acquire":
            return invalid("permits", "mustNotBeNegative") if n < 0 else self.acquire(n, now)
        if kind == "release":
            return self.release(n, now)
        if kind == "reset":
            return self.reset(now)
        return None


PRIORITIES = ["low", "normal", "high", "critical"]


def rejected(reason, **members):
    outcome = {"kind": "rejected", "reason": reason}
    outcome.update(members)
    return outcome


def outcome_of(answer):
    """WQ-2: a strategy's answer as the outcome of a request that may not wait."""
    kind = answer["kind"]
    if kind in ("allowed", "delayed"):
        return {"kind": "granted", "result": answer}
    if kind == "rejected":
        return rejected("limited", retryAfterNanoseconds=answer["retryAfterNanoseconds"])
    if kind == "rejectedUntilRelease":
        return rejected("untilRelease", shortfall=answer["shortfall"])
    if kind == "neverAllowed":
        return rejected("neverAllowed")
    members = {k: v for k, v in answer.items() if k != "kind"}
    return rejected("invalid", **members)


class WaitQueue:  # WQ
    @staticmethod
    def validate(cfg):  # WQ-1: the strategy first, then the queue limit
        cls, c = read_limit(cfg, "configuration")
        limit = cfg.get("queueLimit")
        if not _is_int(limit) or limit < 0:
            raise ConfigError("queueLimit", "mustNotBeNegative")
        return cls, c, limit

    def __init__(self, cfg, t0):
        cls, c, self.queue_limit = cfg
        self.limiter = cls(c, t0)
        self.waiters = []  # dicts: ticket, permits, priority, deadline, arrival
        self.arrivals = 0
        self.served_up_to = t0

    def ordered(self):  # WQ-3: priority, then arrival (its instant, then the order of requests)
        if bug("queue-newest-first"):
            return sorted(self.waiters, key=lambda w: (-w["priority"], -w["arrival"]))
        if bug("queue-edf-within-priority"):
            return sorted(self.waiters, key=lambda w: (
                -w["priority"], INT64_MAX if w["deadline"] is None else w["deadline"], w["since"], w["arrival"]))
        return sorted(self.waiters, key=lambda w: (-w["priority"], w["since"], w["arrival"]))

    def expire(self, now, inclusive, out):
        due = [w for w in self.waiters
               if w["deadline"] is not None and (w["deadline"] < now or (inclusive and w["deadline"] == now))]
        for w in sorted(due, key=lambda w: (w["deadline"], w["arrival"])):  # WQ-14
            self.waiters.remove(w)
            out.append({"ticket": w["ticket"], "outcome": {"kind": "timedOut"}, "at": now})
        return bool(due)

    def serve(self, now, out):  # WQ-5
        self.served_up_to = max(self.served_up_to, now)
        self.expire(now, False, out)
        while True:
            while self.waiters:
                head = self.ordered()[0]
                answer = probe(self.limiter, head["permits"], now)
                if answer["kind"] in ("rejected", "rejectedUntilRelease"):
                    break
                if admitted(answer):
                    self.limiter.acquire(head["permits"], now)
                self.waiters.remove(head)
                out.append({"ticket": head["ticket"], "outcome": outcome_of(answer), "at": now})
            if not self.expire(now, True, out):
                return

    def next_wake_up(self, now):  # WQ-7
        if not self.waiters:
            return None
        candidates = [w["deadline"] for w in self.waiters if w["deadline"] is not None]
        answer = probe(self.limiter, self.ordered()[0]["permits"], now)
        if answer["kind"] == "rejected":
            candidates.append(now + answer["retryAfterNanoseconds"])
        elif answer["kind"] != "rejectedUntilRelease":
            candidates.append(now)
        return min(candidates) if candidates else None

    def catch_up(self, now, out):  # WQ-7: each wake-up due before now, at its own instant
        while self.served_up_to < now:
            wake = self.next_wake_up(self.served_up_to)
            if wake is None or wake >= now:
                return
            before = (self.served_up_to, len(self.waiters))
            self.serve(max(wake, self.served_up_to), out)
            if (self.served_up_to, len(self.waiters)) == before:
                return

    def newcomer(self, n, priority, now, since=None):  # WQ-4 steps 1-4
        if n < 0:
            return rejected("invalid", field="permits", problem="mustNotBeNegative")
        if n > maximum_permits(self.limiter):
            return rejected("neverAllowed")
        if n == 0:
            return {"kind": "granted", "result": probe(self.limiter, 0, now)}
        if priority == 3:
            answer = self.limiter.acquire(n, now)
            return {"kind": "granted", "result": answer} if admitted(answer) else {"kind": "bypassed"}
        since = now if since is None else since
        if any(w["priority"] > priority or (w["priority"] == priority and w["since"] <= since)
               for w in self.waiters):  # WQ-3: a waiter that comes before it
            return rejected("waitersAhead")
        return outcome_of(self.limiter.acquire(n, now))

    @staticmethod
    def may_wait(outcome):
        return outcome["kind"] == "rejected" and outcome["reason"] in ("limited", "untilRelease", "waitersAhead")

    def request(self, n, priority, now, out, ticket=None, deadline=None, since=None):
        self.catch_up(now, out)
        self.serve(now, out)
        since = now if since is None else min(since, now)  # WQ-3: an arrival after its own is its own
        outcome = self.newcomer(n, priority, now, since)
        if ticket is None:  # tryAcquire: answered at once
            if outcome["kind"] == "granted":
                self.serve(now, out)
            return outcome
        if not self.may_wait(outcome):
            out.append({"ticket": ticket, "outcome": outcome, "at": now})
            if outcome["kind"] == "granted":
                self.serve(now, out)
        elif deadline is not None and deadline <= now:  # WQ-4 step 5
            out.append({"ticket": ticket, "outcome": {"kind": "timedOut"}, "at": now})
        elif n > self.queue_limit - sum(w["permits"] for w in self.waiters) or (
                bug("queue-holds-at-most-16") and len(self.waiters) >= 16):
            out.append({"ticket": ticket, "outcome": rejected("queueFull"), "at": now})
        else:
            self.arrivals += 1
            self.waiters.append({"ticket": ticket, "permits": n, "priority": priority,
                                 "deadline": deadline, "arrival": self.arrivals, "since": since})
        return None

    def step(self, event, now):
        kind = event.get("kind")
        out = []
        answer = {}
        if kind in ("acquire", "tryAcquire", "availability"):
            priority = PRIORITIES.index(event.get("priority"))
            n = event.get("permits")
            if kind == "availability":  # WQ-4: what tryAcquire would answer, changing nothing
                return {"outcome": copy.deepcopy(self).request(n, priority, now, [])}
            if kind == "tryAcquire":
                answer["outcome"] = self.request(n, priority, now, out)
            else:
                self.request(n, priority, now, out, event.get("ticket"), event.get("deadline"), event.get("arrival"))
        elif kind == "cancel":  # WQ-6
            self.catch_up(now, out)
            for w in self.waiters:
                if w["ticket"] == event.get("ticket"):
                    self.waiters.remove(w)
                    out.append({"ticket": w["ticket"], "outcome": {"kind": "cancelled"}, "at": now})
                    break
            self.serve(now, out)
        elif kind == "advance":
            self.catch_up(now, out)
            self.serve(now, out)
        elif kind in ("release", "reset", "reconfigure"):  # WQ-8
            self.catch_up(now, out)
            if kind == "reconfigure":
                event = dict(event, configuration=self.limiter.validate(event.get("configuration") or {}))
            answer["result"] = apply_event(self.limiter, event, now) if kind != "reconfigure" \
                else self.limiter.reconfigure(event["configuration"], now)
            self.serve(now, out)
        elif kind == "close":  # WQ-9
            self.catch_up(now, out)
            self.serve(now, out)
            for w in sorted(self.waiters, key=lambda w: w["arrival"]):
                out.append({"ticket": w["ticket"], "outcome": {"kind": "closed"}, "at": self.served_up_to})
            self.waiters = []
        else:
            return None
        answer["completions"] = out
        answer["nextWakeUp"] = self.next_wake_up(now)
        return answer


# ---------------------------------------------------------------------------
# The adaptive rate and concurrency (Spec/AdaptiveLimits.md), run as the scenarios of
# Spec/vectors/scenarios (protocol extensions "adaptive-rate" and "adaptive-concurrency"):
# machines that learn a limit from the server's responses and answer the limit in force.
# ---------------------------------------------------------------------------


def percent(cfg, name):  # ADAPT-2, ADAPT-10: 1 ... 99
    v = positive(cfg, name)
    at_most(name, v, 99)
    return v


def response_class(status):  # ADAPT-1
    if status in (429, 503):
        return "rejection"
    if 100 <= status <= 499:
        return "served"
    if 500 <= status <= 599:
        return "serverError"
    return "none"


def check_feedback(event):
    """ADAPT-1: the first bad field of a response, as an invalid answer, or None."""
    status, latency, in_flight = event.get("status"), event.get("latencyNanoseconds"), event.get("inFlight")
    if status < 0:
        return invalid("status", "mustNotBeNegative")
    if status > 999:
        return invalid("status", "exceedsMaximum", 999)
    if latency < 0:
        return invalid("latencyNanoseconds", "mustNotBeNegative")
    if in_flight < 0:
        return invalid("inFlight", "mustNotBeNegative")
    stated = event.get("stated")
    if stated is not None:
        if stated["permits"] < 0:
            return invalid("stated.permits", "mustNotBeNegative")
        if stated["windowNanoseconds"] < 1:
            return invalid("stated.windowNanoseconds", "mustBePositive")
    return None


class AdaptiveRate:  # ADAPT-2 ... ADAPT-9
    @staticmethod
    def validate(cfg):  # ADAPT-2, in the table's order
        p = positive(cfg, "periodNanoseconds")
        maximum = positive(cfg, "maximumRate")
        initial = positive(cfg, "initialRate")
        at_most("initialRate", initial, maximum)
        minimum = positive(cfg, "minimumRate")
        at_most("minimumRate", minimum, initial)
        burst = positive(cfg, "burst")
        at_most("burst", burst, INT64_MAX // p)
        start = non_negative(cfg, "startIncrease", None)
        step = non_negative(cfg, "increase", None)
        d = percent(cfg, "decreasePercent")
        steep = percent(cfg, "steepDecreasePercent")
        cool = non_negative(cfg, "coolDownNanoseconds", None)
        return (p, maximum, initial, minimum, burst, start, step, d, steep, cool)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.start(t0)

    def start(self, e):  # ADAPT-3
        p, maximum, initial, minimum, burst, _, _, _, _, _ = self.cfg
        self.rate, self.burst, self.ceiling, self.stated = initial, burst, maximum, None
        self.decreased = self.unmeasured = False
        self.cool_until, self.served, self.k, self.round_start, self.measured, self.last = e, 0, 0, e, None, e

    def answer(self, change):
        return {"kind": "limit", "rate": self.rate, "burst": self.burst, "change": change}

    def adopt(self, stated):  # ADAPT-7
        p, maximum, _, minimum = self.cfg[:4]
        rate = min(INT64_MAX, stated["permits"] * p // stated["windowNanoseconds"])
        if rate == self.stated:
            return False
        self.stated = rate
        self.ceiling = max(minimum, min(maximum, rate))
        self.rate, self.k, self.measured = self.ceiling, 0, None
        return True

    def serve(self, e):  # ADAPT-4: whether the rate went up
        p, start, step = self.cfg[0], self.cfg[5], self.cfg[6]
        self.served = min(INT64_MAX, self.served + 1)
        if self.k == 0:
            self.round_start = e
        self.k += 1
        if self.k < self.rate:
            return False
        span = e - self.round_start
        self.measured = INT64_MAX if span == 0 else min(INT64_MAX, self.k * p // span)
        self.k = 0
        if span > min(INT64_MAX, 2 * p):
            return False
        before = self.rate
        self.rate = min(self.ceiling, min(INT64_MAX, self.rate + (step if self.decreased else start)))
        return self.rate > before

    def decrease(self, e):  # ADAPT-5, ADAPT-6: whether the rate or the burst went down
        minimum, d, steep, cool = self.cfg[3], self.cfg[7], self.cfg[8], self.cfg[9]
        if e < self.cool_until and not bug("adaptive-no-cool-down"):
            return False
        before = (self.rate, self.burst)
        if self.measured is not None:
            lowered = min(self.rate, self.measured) * (100 - d) // 100
        elif not self.unmeasured:
            lowered = self.rate * (100 - d) // 100
        else:
            lowered = self.rate * (100 - steep) // 100
        self.rate = min(self.rate, max(minimum, lowered))
        if self.served <= self.burst:
            self.burst = max(1, self.served * (100 - steep) // 100)
        self.unmeasured = self.measured is None
        self.decreased = True
        self.cool_until = min(INT64_MAX, e + cool)
        self.served, self.k, self.measured = 0, 0, None
        return self.rate < before[0] or self.burst < before[1]

    def step(self, event, now):  # ADAPT-1
        kind = event.get("kind")
        e = max(now, self.last)
        if kind == "reset":  # ADAPT-8
            self.start(e)
            return self.answer("reset")
        if kind == "failure":  # ADAPT-8
            self.last = e
            return self.answer("unchanged")
        if kind != "response":
            return None
        error = check_feedback(event)
        if error is not None:
            return error
        self.last = e
        adopted = event.get("stated") is not None and self.adopt(event["stated"])
        change = "adopted" if adopted else "unchanged"
        klass = response_class(event["status"])
        if klass == "served" and self.serve(e) and not adopted:
            change = "increased"
        elif klass == "rejection" and self.decrease(e):
            change = "decreased"
        return self.answer(change)


class AdaptiveConcurrency:  # ADAPT-10 ... ADAPT-14
    @staticmethod
    def validate(cfg):  # ADAPT-10, in the table's order
        maximum = positive(cfg, "maximumLimit")
        initial = positive(cfg, "initialLimit")
        at_most("initialLimit", initial, maximum)
        minimum = positive(cfg, "minimumLimit")
        at_most("minimumLimit", minimum, initial)
        alpha = non_negative(cfg, "alpha", None)
        beta = non_negative(cfg, "beta", None)
        d = percent(cfg, "decreasePercent")
        cool = non_negative(cfg, "coolDownNanoseconds", None)
        window = positive(cfg, "baselineWindowNanoseconds")
        return (maximum, initial, minimum, alpha, beta, d, cool, window)

    def __init__(self, cfg, t0):
        self.cfg = cfg
        self.start(t0)

    def start(self, e):  # ADAPT-11
        self.limit = self.cfg[1]
        self.window, self.current, self.previous = e // self.cfg[7], None, None
        self.cool_until = self.changed_at = self.last = e

    def roll(self, e):  # ADAPT-11: the baseline's windows, rolled to e
        window = e // self.cfg[7]
        if window == self.window + 1:
            self.previous, self.current = self.current, None
        elif window > self.window + 1:
            self.previous = self.current = None
        self.window, self.last = window, e

    def serve(self, latency, in_flight, e):  # ADAPT-12
        maximum, _, minimum, alpha, beta = self.cfg[:5]
        self.current = latency if self.current is None else min(self.current, latency)
        if e - latency < self.changed_at and not bug("vegas-every-sample"):
            return
        base = min(v for v in (self.current, self.previous) if v is not None)
        queue = 0 if latency == 0 else ceil_div(self.limit * (latency - base), latency)
        if queue > beta:
            self.limit = max(minimum, self.limit - 1)
        elif queue < alpha and 2 * in_flight >= self.limit:
            self.limit = min(maximum, self.limit + 1)

    def drop(self, e):  # ADAPT-13
        minimum, d, cool = self.cfg[2], self.cfg[5], self.cfg[6]
        if e < self.cool_until:
            return
        self.limit = max(minimum, self.limit * (100 - d) // 100)
        if bug("vegas-limit-in-a-byte"):
            self.limit = max(minimum, self.limit % 256)
        self.cool_until = min(INT64_MAX, e + cool)

    def step(self, event, now):  # ADAPT-1
        kind = event.get("kind")
        e = max(now, self.last)
        before = self.limit
        if kind == "reset":  # ADAPT-13
            self.start(e)
            return {"kind": "limit", "limit": self.limit, "change": "reset"}
        if kind == "failure":
            self.roll(e)
            self.drop(e)
        elif kind == "response":
            error = check_feedback(event)
            if error is not None:
                return error
            self.roll(e)
            klass = response_class(event["status"])
            if klass == "served":
                self.serve(event["latencyNanoseconds"], event["inFlight"], e)
            elif klass == "rejection":
                self.drop(e)
        else:
            return None
        if self.limit != before:
            self.changed_at = e
        change = "decreased" if self.limit < before else "increased" if self.limit > before else "unchanged"
        return {"kind": "limit", "limit": self.limit, "change": change}


MACHINES = {"composite": Composite, "wait-queue": WaitQueue, "adaptive-rate": AdaptiveRate,
            "adaptive-concurrency": AdaptiveConcurrency}


# ---------------------------------------------------------------------------
# The JSON-lines protocol
# ---------------------------------------------------------------------------


def refused(lid, err):
    """The answer to a create or scenario whose configuration the Spec refuses (CORE-3)."""
    r = {"type": "refused", "id": lid, "field": err.field, "problem": err.problem}
    if err.maximum is not None:
        r["maximum"] = err.maximum
    return r


def handle(msg, limiters):
    """Returns the answer object, or None for no answer."""
    t = msg.get("type")
    if t == "hello":
        # Protocol 2 when the harness offers it: the profile declares nanoseconds, the whole
        # timeline, time that may go back, every event, no tolerance (the Spec's own profile).
        offered = msg.get("protocol")
        answer = {"type": "hello", "protocol": 2 if _is_int(offered) and offered >= 2 else 1,
                  "implementation": IMPLEMENTATION, "strategies": list(STRATEGIES)}
        if answer["protocol"] == 2:
            answer["profiles"] = {strategy: dict(PROFILE) for strategy in STRATEGIES}
            answer["extensions"] = sorted(MACHINES)
            # Lines are read and answered one at a time, in order: any window offered is fine
            # (Spec/protocol.md, "Pipelining").
            window = msg.get("window")
            if _is_int(window) and window > 1:
                answer["window"] = window
        return answer
    if t == "create":
        lid = msg.get("id")
        cls = KINDS.get(msg.get("strategy"))
        if cls is None:
            return {"type": "unsupported", "id": lid, "reason": "unknown strategy"}
        now = msg.get("now")
        if not _is_int(now) or now < 0:
            return {"type": "refused", "id": lid, "field": "now", "problem": "mustNotBeNegative"}
        try:
            cfg = cls.validate(msg.get("configuration") or {})
        except ConfigError as err:
            return refused(lid, err)
        limiters[lid] = cls(cfg, now)
        return {"type": "created", "id": lid}
    if t == "event":
        lid = msg.get("id")
        limiter = limiters.get(lid)
        if limiter is None:
            return {"type": "error", "message": "unknown limiter %r" % (lid,)}
        result = apply_event(limiter, msg.get("event") or {}, msg.get("now"))
        if result is None:
            return {"type": "error", "message": "unknown event"}
        return {"type": "result", "id": lid, "result": result}
    if t == "scenario":
        sid = msg.get("id")
        machine = MACHINES.get(msg.get("machine"))
        if machine is None:
            return {"type": "error", "message": "unknown machine"}
        try:
            cfg = machine.validate(msg.get("configuration") or {})
        except ConfigError as err:
            return refused(sid, err)
        limiters[sid] = machine(cfg, msg.get("now"))
        return {"type": "created", "id": sid}
    if t == "step":
        sid = msg.get("id")
        scenario = limiters.get(sid)
        answer = None if scenario is None else scenario.step(msg.get("event") or {}, msg.get("now"))
        if answer is None:
            return {"type": "error", "message": "unknown scenario or event"}
        return {"type": "answer", "id": sid, "answer": answer}
    if t == "drop":
        lid = msg.get("id")
        limiters.pop(lid, None)
        return {"type": "dropped", "id": lid}
    return {"type": "error", "message": "unknown message type %r" % (t,)}


def encode(obj):
    return json.dumps(obj, separators=(",", ":")) + "\n"


def answer_line(line, limiters):
    """The answer to one request line, encoded; None for no answer."""
    try:
        msg = json.loads(line)
        if not isinstance(msg, dict):
            raise ValueError("not an object")
    except Exception as exc:  # noqa: BLE001 - answer, never crash
        return encode({"type": "error", "message": "bad JSON: %s" % (exc,)})
    try:
        answer = handle(msg, limiters)
    except Exception as exc:  # noqa: BLE001
        answer = {"type": "error", "message": "internal error: %r" % (exc,)}
    return None if answer is None else encode(answer)


def serve():
    """Answers every complete line read, in order, then writes the answers at once: a harness
    that sends one request at a time gets each answer at once, one that pipelines (a window
    accepted at hello) gets a batch per read."""
    limiters = {}
    pending = b""
    while True:
        try:
            chunk = os.read(0, 1 << 16)
        except InterruptedError:
            continue
        if not chunk:
            return 0
        *lines, pending = (pending + chunk).split(b"\n")
        answers = []
        for raw in lines:
            line = raw.strip()
            if not line:
                continue
            if b'"bye"' in line and _is_bye(line):
                sys.stdout.write("".join(answers))
                sys.stdout.flush()
                return 0
            answer = answer_line(line, limiters)
            if answer is not None:
                answers.append(answer)
        if answers:
            sys.stdout.write("".join(answers))
            sys.stdout.flush()


def _is_bye(line):
    try:
        msg = json.loads(line)
    except Exception:  # noqa: BLE001
        return False
    return isinstance(msg, dict) and msg.get("type") == "bye"


def main(argv):
    global BUG
    # Nothing may ever reach standard error (the harness fails a case on it).
    try:
        sys.stderr = open(os.devnull, "w")
    except OSError:
        pass
    args = argv[1:]
    if args[:1] == ["--list-bugs"]:
        for name in BUGS:
            sys.stdout.write("%s %s\n" % (name, "safety" if name in SAFETY_BUGS else "exact"))
        sys.stdout.flush()
        return 0
    while args[:1] == ["--bug"]:
        if len(args) < 2 or args[1] not in BUGS:
            sys.stdout.write(json.dumps({"type": "error", "message": "unknown bug"}) + "\n")
            sys.stdout.flush()
            return 2
        BUG.add(args[1])
        args = args[2:]
    if args[:1] == ["--profile"] and len(args) >= 2:
        # Declares a narrower profile than the implementation's own (its members override
        # PROFILE's): how the harness's handling of thin profiles is tested. Answers are unchanged.
        PROFILE.update(json.loads(args[1]))
        args = args[2:]
    if args:
        sys.stdout.write(json.dumps({"type": "error", "message": "unknown arguments"}) + "\n")
        sys.stdout.flush()
        return 2
    return serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
