"""The injectable bugs (for --mutation-score; Spec/Conformance.md, CONF-12): each one a realistic
mistake, named and described in BUGS, with the weakest level that must catch it (SAFETY_BUGS).

INJECTED is the one registry of the bugs injected into this process: the command line fills it
(inject) before the first request, and every module asks it through bug(name). It is a set changed
in place, never rebound, so a module that imported it or bug() sees every injection.
"""

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


INJECTED = set()  # the names of the injected bugs (changed in place only: see the docstring)


def inject(name):
    """Injects bug `name` (a key of BUGS) into every module of the package."""
    INJECTED.add(name)


def bug(name):
    return name in INJECTED
