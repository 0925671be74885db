import RateLimitCore

extension VectorCatalogue {
    static func slidingWindowCounter() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func counter(_ limit: Int64, per window: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .slidingWindowCounter(try SlidingWindowCounter(limit: limit, windowNanoseconds: window))
        }
        let fourPerTen = try counter(4, per: 10)
        let one = try counter(1, per: 10)
        let stories = [
            StoryDraft(
                "weight-shrinks", "the previous window's weight shrinks by 1/W per nanosecond",
                clauses: ["SWC-3", "SWC-5"], fourPerTen,
                [
                    (5, .acquire(4)), (9, .acquire(0)), (10, .acquire(0)), (12, .acquire(0)), (13, .acquire(0)),
                    (15, .acquire(0)),
                    (20, .acquire(0)),
                ]),
            StoryDraft(
                "no-floor", "the estimate is compared exactly, not floored (Python limits admits at 11)",
                clauses: ["SWC-4"], one,
                [
                    (9, .acquire(1)), (11, .acquire(1)), (19, .acquire(1)), (20, .acquire(1)),
                ]),
            StoryDraft(
                "retry-same-window", "case 1: admitted later in the same window as the previous weight shrinks",
                clauses: ["SWC-6"], fourPerTen,
                [
                    (5, .acquire(4)), (10, .acquire(1)), (12, .acquire(1)), (13, .acquire(1)),
                ]),
            StoryDraft(
                "retry-next-window", "case 2: admitted in the next window once the current count weighs little enough",
                clauses: ["SWC-6"], fourPerTen,
                [
                    (5, .acquire(4)), (6, .acquire(1)), (12, .acquire(1)), (13, .acquire(1)),
                ]),
            StoryDraft(
                "retry-two-windows", "case 3: admitted two windows on", clauses: ["SWC-6"], one,
                [
                    (5, .acquire(1)), (6, .acquire(1)), (19, .acquire(1)), (20, .acquire(1)),
                ]),
            StoryDraft(
                "never", "more than the limit, or an admission past the end of the timeline, is never allowed",
                clauses: ["SWC-7", "CORE-7"], one, createdAt: end(3),
                [
                    (end(3), .acquire(2)), (end(3), .acquire(1)), (end(3), .acquire(1)), (end(), .acquire(1)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["SWC-8"], fourPerTen,
                [
                    (0, .acquire(1)), (0, .acquire(0)), (0, .release(1)), (0, .acquire(-1)),
                ]),
            StoryDraft(
                "reset-clears", "reset clears both counts", clauses: ["SWC-9"], fourPerTen,
                [
                    (5, .acquire(4)), (11, .reset), (11, .acquire(4)), (11, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-realigns", "reconfigure keeps both counts and re-aligns them to the new windows",
                clauses: ["SWC-10"], fourPerTen,
                [
                    (5, .acquire(4)), (12, .reconfigure(try counter(4, per: 4))), (13, .acquire(0)), (16, .acquire(0)),
                ]),
            StoryDraft(
                "worst-case", "18 permits in one sliding window for limit 10, window 10: N + ⌊N(W − 2)/W⌋",
                clauses: ["SWC-11"], try counter(10, per: 10),
                [
                    (9, .acquire(10)), (18, .acquire(8)), (18, .acquire(1)),
                ]),
            StoryDraft(
                "stricter-than-fixed-window", "where a fixed window would admit at 10, the counter waits",
                clauses: ["SWC-12"], fourPerTen,
                [
                    (9, .acquire(4)), (10, .acquire(4)), (10, .acquire(1)),
                ]),
            StoryDraft(
                "backward-time", "an earlier now is evaluated at the latest instant", clauses: ["SWC-3", "CORE-10"],
                fourPerTen,
                [
                    (15, .acquire(4)), (8, .acquire(1)), (22, .acquire(1)), (3, .acquire(0)),
                ]),
            StoryDraft(
                "huge-counts", "counts and windows near Int64.max compared at 128 bits",
                clauses: ["SWC-4"], try counter(Int64.max, per: Int64.max / 2),
                [
                    (0, .acquire(Int64.max)), (Int64.max / 2, .acquire(1)),
                    (Int64.max / 2 + Int64.max / 4, .acquire(Int64.max / 2)),
                    (Int64.max / 2 + Int64.max / 4, .acquire(0)),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "SWC-3"], fourPerTen,
                [
                    (5, .acquire(4)), (25, .acquire(0)), (8, .acquire(1)), (25, .acquire(5)), (8, .acquire(1)),
                    (25, .acquire(4)),
                ]),
        ]
        let refusals = [
            RefusalDraft("refuse-zero-limit", "a limit below 1", [("limit", 0), ("windowNanoseconds", 10)]),
            RefusalDraft("refuse-zero-window", "a window of 0", [("limit", 1), ("windowNanoseconds", 0)]),
        ]
        return (stories, refusals)
    }
}
