import RateLimitCore

extension VectorCatalogue {
    static func intervalTokenBucket() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func bucket(_ capacity: Int64, _ tokens: Int64, every interval: Int64, initial: Int64? = nil)
            throws(RateLimitInputError) -> AnyRateLimitStrategy
        {
            .intervalTokenBucket(
                try IntervalTokenBucket(
                    capacity: capacity, tokensPerInterval: tokens, intervalNanoseconds: interval, initialTokens: initial
                ))
        }
        let oneEveryTen = try bucket(3, 1, every: 10)
        let lumpy = try bucket(10, 4, every: 10, initial: 0)
        let stories = [
            StoryDraft(
                "boundary-edges", "tokens arrive exactly at multiples of the interval: one before, at, one after",
                clauses: ["TBI-3", "TBI-5"], oneEveryTen,
                [
                    (5, .acquire(3)), (9, .acquire(1)), (10, .acquire(0)), (10, .acquire(1)), (11, .acquire(1)),
                    (19, .acquire(0)), (20, .acquire(0)), (35, .acquire(0)),
                ]),
            StoryDraft(
                "aligned-to-origin", "the grid is aligned to the origin: created at 5, the first token comes at 10",
                clauses: ["TBI-3"], try bucket(3, 1, every: 10, initial: 0), createdAt: 5,
                [
                    (9, .acquire(1)), (10, .acquire(1)), (10, .acquire(1)),
                ]),
            StoryDraft(
                "lumps-capped", "each boundary adds tokensPerInterval, capped at capacity", clauses: ["TBI-3"], lumpy,
                [
                    (10, .acquire(0)), (20, .acquire(0)), (30, .acquire(0)), (30, .acquire(10)),
                ]),
            StoryDraft(
                "weighted-waits-for-boundary", "a weighted acquire waits for the boundary that brings enough tokens",
                clauses: ["TBI-4", "TBI-6"], lumpy,
                [
                    (3, .acquire(6)), (19, .acquire(6)), (20, .acquire(6)), (20, .acquire(3)), (29, .acquire(3)),
                ]),
            StoryDraft(
                "never", "more than capacity, or a boundary past the end of the timeline, is never allowed",
                clauses: ["TBI-7", "CORE-7"], try bucket(1, 1, every: 10), createdAt: end(17),
                [
                    (end(17), .acquire(2)), (end(17), .acquire(1)), (end(17), .acquire(1)), (end(7), .acquire(1)),
                    (end(3), .acquire(1)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["TBI-8"], oneEveryTen,
                [
                    (0, .acquire(0)), (0, .release(2)), (0, .acquire(-7)), (0, .acquire(3)),
                ]),
            StoryDraft(
                "reset-keeps-grid", "reset restores the initial tokens; the grid does not move",
                clauses: ["TBI-9"], try bucket(3, 1, every: 10, initial: 0),
                [
                    (10, .acquire(1)), (15, .reset), (19, .acquire(1)), (20, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-new-grid",
                "reconfigure keeps tokens up to the new capacity; later boundaries follow the new grid",
                clauses: ["TBI-10"], try bucket(10, 1, every: 10),
                [
                    (0, .acquire(2)), (5, .reconfigure(try bucket(5, 2, every: 7))), (5, .acquire(5)), (6, .acquire(0)),
                    (7, .acquire(0)), (14, .acquire(0)),
                ]),
            StoryDraft(
                "backward-time", "an earlier now is evaluated at the latest instant; no boundary is counted twice",
                clauses: ["TBI-3", "CORE-10"], oneEveryTen,
                [
                    (25, .acquire(3)), (15, .acquire(1)), (29, .acquire(1)), (30, .acquire(1)), (5, .acquire(1)),
                ]),
            StoryDraft(
                "interval-bound", "over [5, 25] at most capacity + 2 boundaries' tokens", clauses: ["TBI-11"],
                oneEveryTen,
                [
                    (5, .acquire(3)), (10, .acquire(1)), (20, .acquire(1)), (25, .acquire(1)),
                ]),
            StoryDraft(
                "lumps-equal-capacity", "tokensPerInterval = capacity behaves as a fixed window",
                clauses: ["TBI-12"], try bucket(3, 3, every: 10),
                [
                    (9, .acquire(3)), (9, .acquire(1)), (10, .acquire(3)), (19, .acquire(1)), (20, .acquire(2)),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a refused acquire and a query at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "TBI-3"], try bucket(3, 1, every: 10, initial: 0),
                [
                    (10, .acquire(2)), (5, .acquire(1)), (10, .acquire(0)), (5, .acquire(1)), (10, .acquire(1)),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-capacity", "a capacity below 1",
                [("capacity", 0), ("tokensPerInterval", 1), ("intervalNanoseconds", 1)]),
            RefusalDraft(
                "refuse-zero-tokens", "no tokens per interval",
                [("capacity", 1), ("tokensPerInterval", 0), ("intervalNanoseconds", 1)]),
            RefusalDraft(
                "refuse-zero-interval", "an interval of 0",
                [("capacity", 1), ("tokensPerInterval", 1), ("intervalNanoseconds", 0)]),
            RefusalDraft(
                "refuse-initial-above-capacity", "more initial tokens than capacity",
                [("capacity", 3), ("tokensPerInterval", 1), ("intervalNanoseconds", 1), ("initialTokens", 4)]),
            RefusalDraft(
                "refuse-refill-past-timeline", "four boundaries of ⌊Int64.max/4⌋ + 1 ns exceed the timeline",
                [("capacity", 10), ("tokensPerInterval", 3), ("intervalNanoseconds", 2_305_843_009_213_693_952)]),
        ]
        return (stories, refusals)
    }
}
