import RateLimitCore

// Spec/TokenBucket.md: C tokens at most, R tokens every P ns. One token is P units and each
// nanosecond adds R units (TB-2, TB-3); a refused acquire of n waits ⌈((n − k)·P − f) / R⌉ ns (TB-6).

extension VectorCatalogue {
    static func tokenBucket() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func bucket(_ capacity: Int64, _ permits: Int64, per period: Int64, initial: Int64? = nil)
            throws(RateLimitInputError) -> AnyRateLimitStrategy
        {
            .tokenBucket(
                try TokenBucket(
                    capacity: capacity, permitsPerPeriod: permits, periodNanoseconds: period, initialTokens: initial))
        }
        let threePerTen = try bucket(3, 1, per: 10)
        let year: Int64 = 31_557_600_000_000_000
        let half = Int64.max / 2  // 4_611_686_018_427_387_903
        let stories = [
            StoryDraft(
                "starts-full", "a new bucket holds its capacity; weighted acquires take all or nothing",
                clauses: ["TB-2", "TB-4"], threePerTen,
                [
                    (0, .acquire(2), allowed(1), "2 of the 3 tokens a new bucket holds"),
                    (0, .acquire(2), rejected(10), "1 token is not 2: nothing taken; the second arrives in 10 ns"),
                    (0, .acquire(1), allowed(0), "the refused acquire took nothing: the last token is still there"),
                    (0, .acquire(1), rejected(10), "empty: one period for the next token"),
                ]),
            StoryDraft(
                "refill-edge", "a token arrives exactly one period after the bucket emptied: one before, at, one after",
                clauses: ["TB-3"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "empties the bucket at 0"),
                    (9, .acquire(1), rejected(1), "one before: 9 of the token's 10 units"),
                    (10, .acquire(0), allowed(1), "at: the token is there"),
                    (10, .acquire(1), allowed(0), "takes it"),
                    (11, .acquire(1), rejected(9), "one after: 1 unit of the next token, 9 ns to go"),
                    (19, .acquire(1), rejected(1), "one before the second token"),
                    (20, .acquire(1), allowed(0), "at the second token"),
                    (21, .acquire(0), allowed(0), "1 unit: a fraction is not a token"),
                    (1_000, .acquire(0), allowed(3), "98 tokens' worth of idle time fills only the capacity"),
                ]),
            StoryDraft(
                "fractions-carry", "0.3 tokens per ns: fractions accumulate exactly and remaining counts whole tokens",
                clauses: ["TB-3", "TB-5"], try bucket(10, 3, per: 10, initial: 0),
                [
                    (3, .acquire(1), rejected(1), "0.9 token: 1 unit missing, ⌈1/3⌉ = 1 ns"),
                    (4, .acquire(1), allowed(0), "1.2 tokens: one taken, 0.2 kept"),
                    (10, .acquire(2), allowed(0), "0.2 + 1.8 = 2.0 exactly: nothing lost to rounding"),
                    (13, .acquire(0), allowed(0), "0.9 token counts as 0"),
                    (14, .acquire(0), allowed(1), "1.2 tokens count as 1"),
                    (17, .acquire(2), allowed(0), "2.1 tokens: 2 taken"),
                ]),
            StoryDraft(
                "retry-after-rounds-up", "the wait is rounded up to the nanosecond the tokens exist, then exact",
                clauses: ["TB-6"], try bucket(5, 3, per: 10, initial: 0),
                [
                    (0, .acquire(2), rejected(7), "20 units missing at 3 per ns: ⌈20/3⌉ = 7"),
                    (6, .acquire(2), rejected(1), "1.8 tokens: 2 units missing, ⌈2/3⌉ = 1"),
                    (7, .acquire(2), allowed(0), "2.1 tokens at the instant promised; 0.1 kept"),
                    (7, .acquire(5), rejected(17), "49 units missing: ⌈49/3⌉ = 17"),
                    (23, .acquire(5), rejected(1), "4.9 tokens, one nanosecond before"),
                    (24, .acquire(5), allowed(0), "5.2 tokens, capped at 5: admitted at 7 + 17"),
                ]),
            StoryDraft(
                "retry-after-from-earlier-now",
                "a retry-after is measured from the event's own now, even when time went back",
                clauses: ["TB-6", "CORE-10"], try bucket(1, 1, per: 10),
                [
                    (100, .acquire(1), allowed(0), "takes the only token at 100"),
                    (95, .acquire(1), rejected(15), "evaluated at 100, admitted at 110: 15 ns from its own 95"),
                    (109, .acquire(1), rejected(1), "one before 110"),
                    (110, .acquire(1), allowed(0), "at 110"),
                ]),
            StoryDraft(
                "go-backward-time",
                "Go's TestLimiterJumpBackwards (burst 3, 10/s): t1, then t0 twice, then t1 again; Go re-grants a token at the last step",
                clauses: ["TB-12", "CORE-10"], try bucket(3, 10, per: 1_000_000_000),
                [
                    (1_100_000_000, .acquire(1), allowed(2), "t1: the full bucket gives one"),
                    (1_000_000_000, .acquire(1), allowed(1), "t0 is evaluated at t1"),
                    (1_000_000_000, .acquire(1), allowed(0), "the third token, still at t1"),
                    (1_000_000_000, .acquire(1), rejected(200_000_000), "next token at t1 + 100 ms, 200 ms after t0"),
                    (1_100_000_000, .acquire(1), rejected(100_000_000), "t1 again: still empty (Go admits here)"),
                ]),
            StoryDraft(
                "never-above-capacity", "more than the capacity is never allowed, at any instant",
                clauses: ["TB-7"], threePerTen,
                [
                    (0, .acquire(4), never, "4 > capacity 3"),
                    (1_000_000, .acquire(4), never, "however long the bucket rested"),
                    (1_000_000, .acquire(3), allowed(0), "the capacity itself is admitted"),
                    (end(), .acquire(4), never, "at the end of the timeline too"),
                ]),
            StoryDraft(
                "end-of-timeline", "an admission at Int64.max is a retry-after; one past it is never allowed",
                clauses: ["TB-7", "CORE-7"], try bucket(1, 1, per: 10), createdAt: end(10),
                [
                    (end(10), .acquire(1), allowed(0), "takes the only token 10 ns before the end"),
                    (end(10), .acquire(1), rejected(10), "the next token comes at Int64.max exactly"),
                    (end(), .acquire(1), allowed(0), "at Int64.max"),
                    (end(), .acquire(1), never, "the next token would come after Int64.max"),
                    (end(), .acquire(0), allowed(0), "a query at the end of the timeline"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["TB-8"], threePerTen,
                [
                    (0, .acquire(1), allowed(2), "one of three"),
                    (0, .acquire(0), allowed(2), "a query reads the 2 left and takes nothing"),
                    (0, .release(1), releaseNotSupported, "a bucket holds no permits to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .release(-1), releaseNotSupported, "release is not supported, whatever its count"),
                    (0, .acquire(Int64.min), negativePermits, "Int64.min permits, without a trap"),
                    (0, .acquire(2), allowed(0), "the invalid events changed nothing: 2 tokens left"),
                ]),
            StoryDraft(
                "reset-to-initial", "reset restores the initial tokens (not a full bucket) at the latest instant",
                clauses: ["TB-9"], try bucket(3, 1, per: 10, initial: 1),
                [
                    (0, .acquire(1), allowed(0), "the one initial token"),
                    (50, .reset, allowed(1), "the initial 1 token, though 3 would have refilled by 50"),
                    (40, .acquire(1), allowed(0), "40 is evaluated at the reset's 50"),
                    (59, .acquire(1), rejected(1), "refill counts from 50"),
                    (60, .acquire(1), allowed(0), "one period after the reset"),
                ]),
            StoryDraft(
                "reset-with-earlier-now",
                "a reset sent with an earlier now creates the new bucket at the latest instant",
                clauses: ["TB-9", "CORE-10", "CORE-12"], threePerTen,
                [
                    (100, .acquire(3), allowed(0), "empties the bucket at 100"),
                    (90, .reset, allowed(3), "a full bucket, made at 100 (the latest instant), not at 90"),
                    (95, .acquire(3), allowed(0), "evaluated at 100"),
                    (105, .acquire(1), rejected(5), "refill counts from 100: a bucket made at 90 would have a token"),
                    (110, .acquire(1), allowed(0), "one period after 100"),
                ]),
            StoryDraft(
                "reconfigure-keeps-tokens",
                "reconfigure keeps the tokens, capped at the new capacity, and never refills",
                clauses: ["TB-10"], try bucket(10, 1, per: 10),
                [
                    (0, .acquire(4), allowed(6), "6 of 10 left"),
                    (
                        5, .reconfigure(try bucket(4, 1, per: 20)), allowed(4),
                        "6.5 tokens, capped at the new capacity 4"
                    ),
                    (
                        5, .reconfigure(try bucket(10, 1, per: 10)), allowed(4),
                        "back to capacity 10: kept at 4, not refilled"
                    ),
                    (14, .acquire(0), allowed(4), "9 units of the next token"),
                    (15, .acquire(0), allowed(5), "the fraction was dropped at the cap: a token 10 ns after 5"),
                ]),
            StoryDraft(
                "reconfigure-keeps-fraction", "the fraction of a token is kept, rounded down to the new units",
                clauses: ["TB-10"], try bucket(10, 1, per: 3),
                [
                    (0, .acquire(10), allowed(0), "empties the bucket"),
                    (2, .reconfigure(try bucket(10, 1, per: 2)), allowed(0), "2/3 of a token: ⌊2·2/3⌋ = 1 of 2 units"),
                    (2, .acquire(1), rejected(1), "1/2 of a token: 1 unit missing"),
                    (3, .acquire(1), allowed(0), "1/2 + 1/2: a token at 3, not at 2 + 2"),
                    (3, .reconfigure(try bucket(10, 1, per: 100)), allowed(0), "nothing left to carry"),
                    (3, .acquire(1), rejected(100), "a whole new period of 100"),
                    (103, .acquire(1), allowed(0), "at 3 + 100"),
                ]),
            StoryDraft(
                "reconfigure-scales-fraction-up", "a fraction carried into finer units is kept exactly",
                clauses: ["TB-10"], try bucket(10, 1, per: 10),
                [
                    (0, .acquire(10), allowed(0), "empties the bucket"),
                    (
                        7, .reconfigure(try bucket(10, 1, per: 100)), allowed(0),
                        "0.7 of a token: 7·100/10 = 70 of 100 units"
                    ),
                    (7, .acquire(1), rejected(30), "30 units missing at 1 per ns"),
                    (37, .acquire(1), allowed(0), "at 7 + 30"),
                ]),
            StoryDraft(
                "interval-bound", "over [0, 20] at most capacity + 2 tokens are admitted",
                clauses: ["TB-11"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "the capacity at 0"),
                    (10, .acquire(1), allowed(0), "the token of 10"),
                    (20, .acquire(1), allowed(0), "the token of 20: 5 = 3 + ⌊1·20/10⌋ admitted over [0, 20]"),
                    (20, .acquire(1), rejected(10), "a sixth would break the bound"),
                ]),
            StoryDraft(
                "billion-per-nanosecond", "a billion tokens per nanosecond", clauses: ["TB-1"],
                try bucket(1_000_000_000, 1_000_000_000, per: 1),
                [
                    (0, .acquire(1_000_000_000), allowed(0), "the whole capacity at once"),
                    (1, .acquire(1_000_000_000), allowed(0), "one nanosecond refills it all"),
                    (1, .acquire(1), rejected(1), "a single token needs the next nanosecond"),
                    (2, .acquire(999_999_999), allowed(1), "all but one of the refilled billion"),
                ]),
            StoryDraft(
                "year-period", "one token per year; the idle time to the end of the timeline", clauses: ["TB-1"],
                try bucket(2, 1, per: year),
                [
                    (0, .acquire(2), allowed(0), "both tokens"),
                    (0, .acquire(1), rejected(year), "the next one in a year (31,557,600,000,000,000 ns)"),
                    (year - 1, .acquire(1), rejected(1), "one nanosecond before the year is out"),
                    (year, .acquire(1), allowed(0), "a year after 0"),
                    (end(), .acquire(2), allowed(0), "about 291 years later, full again"),
                    (end(), .acquire(1), never, "the next token would come a year after Int64.max"),
                ]),
            StoryDraft(
                "long-idle-near-limits", "a huge bucket idles for most of the timeline and refills exactly",
                clauses: ["TB-3"], try bucket(half, 1, per: 1, initial: 0),
                [
                    (0, .acquire(1), rejected(1), "empty; one token per nanosecond"),
                    (1, .acquire(1), allowed(0), "the first token"),
                    (half, .acquire(half), rejected(1), "Int64.max/2 − 1 tokens since 1: one short"),
                    (end(), .acquire(half), allowed(0), "Int64.max − 1 ns of refill, capped at the capacity"),
                    (end(), .acquire(1), never, "empty at Int64.max: the next token lies past it"),
                ]),
            StoryDraft(
                "refusals-record-nothing",
                "a refused acquire and a query at a later instant record nothing: an event between them is evaluated at its own instant",
                clauses: ["CORE-8", "CORE-10", "TB-3"], try bucket(3, 1, per: 10, initial: 0),
                [
                    (10, .acquire(2), rejected(10), "1 token at 10; the second at 20"),
                    (5, .acquire(1), rejected(5), "the refusal recorded nothing: evaluated at 5, not 10"),
                    (10, .acquire(0), allowed(1), "a query at 10"),
                    (5, .acquire(1), rejected(5), "the query recorded nothing either"),
                    (10, .acquire(1), allowed(0), "the token of 10"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "TB-1"], threePerTen,
                steps: [
                    DraftStep(0, .acquire(1), allowed(2), "2 of 3 left"),
                    DraftStep(
                        20,
                        reconfigureTo: [
                            ("capacity", 0), ("permitsPerPeriod", 1), ("periodNanoseconds", 10), ("initialTokens", 0),
                        ], invalid("capacity", .mustBePositive), "capacity 0 is refused (TB-1)"),
                    DraftStep(
                        5, .acquire(0), allowed(2), "evaluated at 5: the refused reconfigure recorded no instant"),
                    DraftStep(
                        5,
                        reconfigureTo: [
                            ("capacity", 3), ("permitsPerPeriod", 1), ("periodNanoseconds", 10), ("initialTokens", 4),
                        ], invalid("initialTokens", .exceedsMaximum(3)), "more initial tokens than the capacity 3"),
                    DraftStep(10, .acquire(3), allowed(0), "the old configuration: 2 + 1 tokens at 10"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-capacity", "a capacity below 1",
                [("capacity", 0), ("permitsPerPeriod", 1), ("periodNanoseconds", 1)],
                refusedAs: "capacity", .mustBePositive),
            RefusalDraft(
                "refuse-zero-rate", "no tokens per period",
                [("capacity", 1), ("permitsPerPeriod", 0), ("periodNanoseconds", 1)],
                refusedAs: "permitsPerPeriod", .mustBePositive),
            RefusalDraft(
                "refuse-negative-period", "a negative period",
                [("capacity", 1), ("permitsPerPeriod", 1), ("periodNanoseconds", -1)],
                refusedAs: "periodNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-zero-period", "a period of 0",
                [("capacity", 1), ("permitsPerPeriod", 1), ("periodNanoseconds", 0)],
                refusedAs: "periodNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-negative-initial", "negative initial tokens",
                [("capacity", 3), ("permitsPerPeriod", 1), ("periodNanoseconds", 1), ("initialTokens", -1)],
                refusedAs: "initialTokens", .mustNotBeNegative),
            RefusalDraft(
                "refuse-initial-above-capacity", "more initial tokens than capacity",
                [("capacity", 3), ("permitsPerPeriod", 1), ("periodNanoseconds", 1), ("initialTokens", 4)],
                refusedAs: "initialTokens", .exceedsMaximum(3)),
            RefusalDraft(
                "refuse-refill-past-timeline", "refilling would take 2 × Int64.max ns",
                [("capacity", Int64.max), ("permitsPerPeriod", 1), ("periodNanoseconds", 2)],
                refusedAs: "periodNanoseconds", .exceedsMaximum(1)),
        ]
        return (stories, refusals)
    }
}
