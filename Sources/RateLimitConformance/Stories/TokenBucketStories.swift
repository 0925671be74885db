import RateLimitCore

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
        let stories = [
            StoryDraft(
                "starts-full", "a new bucket holds its capacity; weighted acquires take all or nothing",
                clauses: ["TB-2", "TB-4"], threePerTen,
                [
                    (0, .acquire(2)), (0, .acquire(2)), (0, .acquire(1)), (0, .acquire(1)),
                ]),
            StoryDraft(
                "refill-edge", "a token arrives exactly one period after the bucket emptied: one before, at, one after",
                clauses: ["TB-3"], threePerTen,
                [
                    (0, .acquire(3)), (9, .acquire(1)), (10, .acquire(0)), (10, .acquire(1)), (11, .acquire(1)),
                    (19, .acquire(1)), (20, .acquire(1)), (21, .acquire(0)), (1_000, .acquire(0)),
                ]),
            StoryDraft(
                "fractions-carry", "0.3 tokens per ns: fractions accumulate exactly and remaining counts whole tokens",
                clauses: ["TB-3", "TB-5"], try bucket(10, 3, per: 10, initial: 0),
                [
                    (3, .acquire(1)), (4, .acquire(1)), (10, .acquire(2)), (13, .acquire(0)), (14, .acquire(0)),
                    (17, .acquire(2)),
                ]),
            StoryDraft(
                "retry-after-rounds-up", "the wait is rounded up to the nanosecond the tokens exist, then exact",
                clauses: ["TB-6"], try bucket(5, 3, per: 10, initial: 0),
                [
                    (0, .acquire(2)), (6, .acquire(2)), (7, .acquire(2)), (7, .acquire(5)), (23, .acquire(5)),
                    (24, .acquire(5)),
                ]),
            StoryDraft(
                "retry-after-from-earlier-now",
                "a retry-after is measured from the event's own now, even when time went back",
                clauses: ["TB-6", "CORE-10"], try bucket(1, 1, per: 10),
                [
                    (100, .acquire(1)), (95, .acquire(1)), (109, .acquire(1)), (110, .acquire(1)),
                ]),
            StoryDraft(
                "go-backward-time",
                "Go's TestLimiterJumpBackwards (burst 3, 10/s): t1, then t0 twice, then t1 again; Go re-grants a token at the last step",
                clauses: ["TB-12", "CORE-10"], try bucket(3, 10, per: 1_000_000_000),
                [
                    (1_100_000_000, .acquire(1)), (1_000_000_000, .acquire(1)), (1_000_000_000, .acquire(1)),
                    (1_000_000_000, .acquire(1)), (1_100_000_000, .acquire(1)),
                ]),
            StoryDraft(
                "never-above-capacity", "more than the capacity is never allowed, at any instant",
                clauses: ["TB-7"], threePerTen,
                [
                    (0, .acquire(4)), (1_000_000, .acquire(4)), (1_000_000, .acquire(3)), (end(), .acquire(4)),
                ]),
            StoryDraft(
                "end-of-timeline", "an admission at Int64.max is a retry-after; one past it is never allowed",
                clauses: ["TB-7", "CORE-7"], try bucket(1, 1, per: 10), createdAt: end(10),
                [
                    (end(10), .acquire(1)), (end(10), .acquire(1)), (end(), .acquire(1)), (end(), .acquire(1)),
                    (end(), .acquire(0)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["TB-8"], threePerTen,
                [
                    (0, .acquire(1)), (0, .acquire(0)), (0, .release(1)), (0, .acquire(-1)), (0, .release(-1)),
                    (0, .acquire(Int64.min)), (0, .acquire(2)),
                ]),
            StoryDraft(
                "reset-to-initial", "reset restores the initial tokens (not a full bucket) at the latest instant",
                clauses: ["TB-9"], try bucket(3, 1, per: 10, initial: 1),
                [
                    (0, .acquire(1)), (50, .reset), (40, .acquire(1)), (59, .acquire(1)), (60, .acquire(1)),
                ]),
            StoryDraft(
                "reset-with-earlier-now",
                "a reset sent with an earlier now creates the new bucket at the latest instant",
                clauses: ["TB-9", "CORE-10", "CORE-12"], threePerTen,
                [
                    (100, .acquire(3)), (90, .reset), (95, .acquire(3)), (105, .acquire(1)), (110, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-keeps-tokens",
                "reconfigure keeps the tokens, capped at the new capacity, and never refills",
                clauses: ["TB-10"], try bucket(10, 1, per: 10),
                [
                    (0, .acquire(4)), (5, .reconfigure(try bucket(4, 1, per: 20))),
                    (5, .reconfigure(try bucket(10, 1, per: 10))),
                    (14, .acquire(0)), (15, .acquire(0)),
                ]),
            StoryDraft(
                "reconfigure-keeps-fraction", "the fraction of a token is kept, rounded down to the new units",
                clauses: ["TB-10"], try bucket(10, 1, per: 3),
                [
                    (0, .acquire(10)), (2, .reconfigure(try bucket(10, 1, per: 2))), (2, .acquire(1)), (3, .acquire(1)),
                    (3, .reconfigure(try bucket(10, 1, per: 100))), (3, .acquire(1)), (103, .acquire(1)),
                ]),
            StoryDraft(
                "interval-bound", "over [0, 20] at most capacity + 2 tokens are admitted",
                clauses: ["TB-11"], threePerTen,
                [
                    (0, .acquire(3)), (10, .acquire(1)), (20, .acquire(1)), (20, .acquire(1)),
                ]),
            StoryDraft(
                "billion-per-nanosecond", "a billion tokens per nanosecond", clauses: ["TB-1"],
                try bucket(1_000_000_000, 1_000_000_000, per: 1),
                [
                    (0, .acquire(1_000_000_000)), (1, .acquire(1_000_000_000)), (1, .acquire(1)),
                    (2, .acquire(999_999_999)),
                ]),
            StoryDraft(
                "year-period", "one token per year; the idle time to the end of the timeline", clauses: ["TB-1"],
                try bucket(2, 1, per: year),
                [
                    (0, .acquire(2)), (0, .acquire(1)), (year - 1, .acquire(1)), (year, .acquire(1)),
                    (end(), .acquire(2)),
                    (end(), .acquire(1)),
                ]),
            StoryDraft(
                "long-idle-near-limits", "a huge bucket idles for most of the timeline and refills exactly",
                clauses: ["TB-3"], try bucket(Int64.max / 2, 1, per: 1, initial: 0),
                [
                    (0, .acquire(1)), (1, .acquire(1)), (Int64.max / 2, .acquire(Int64.max / 2)),
                    (end(), .acquire(Int64.max / 2)),
                    (end(), .acquire(1)),
                ]),
            StoryDraft(
                "refusals-record-nothing",
                "a refused acquire and a query at a later instant record nothing: an event between them is evaluated at its own instant",
                clauses: ["CORE-8", "CORE-10", "TB-3"], try bucket(3, 1, per: 10, initial: 0),
                [
                    (10, .acquire(2)), (5, .acquire(1)), (10, .acquire(0)), (5, .acquire(1)), (10, .acquire(1)),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-capacity", "a capacity below 1",
                [("capacity", 0), ("permitsPerPeriod", 1), ("periodNanoseconds", 1)]),
            RefusalDraft(
                "refuse-zero-rate", "no tokens per period",
                [("capacity", 1), ("permitsPerPeriod", 0), ("periodNanoseconds", 1)]),
            RefusalDraft(
                "refuse-negative-period", "a negative period",
                [("capacity", 1), ("permitsPerPeriod", 1), ("periodNanoseconds", -1)]),
            RefusalDraft(
                "refuse-negative-initial", "negative initial tokens",
                [("capacity", 3), ("permitsPerPeriod", 1), ("periodNanoseconds", 1), ("initialTokens", -1)]),
            RefusalDraft(
                "refuse-initial-above-capacity", "more initial tokens than capacity",
                [("capacity", 3), ("permitsPerPeriod", 1), ("periodNanoseconds", 1), ("initialTokens", 4)]),
            RefusalDraft(
                "refuse-refill-past-timeline", "refilling would take 2 × Int64.max ns",
                [("capacity", Int64.max), ("permitsPerPeriod", 1), ("periodNanoseconds", 2)]),
        ]
        return (stories, refusals)
    }
}
