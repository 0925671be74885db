import RateLimitCore

extension VectorCatalogue {
    static func leakyBucketMeter() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func meter(_ capacity: Int64, _ leak: Int64, per period: Int64, level: Int64 = 0) throws(RateLimitInputError)
            -> AnyRateLimitStrategy
        {
            .leakyBucketMeter(
                try LeakyBucketMeter(
                    capacity: capacity, leakPermitsPerPeriod: leak, periodNanoseconds: period, initialLevel: level))
        }
        let threePerTen = try meter(3, 1, per: 10)
        let stories = [
            StoryDraft(
                "starts-empty", "a new meter is empty unless told otherwise; its initial level counts",
                clauses: ["LBM-2"], try meter(4, 1, per: 10, level: 2),
                [
                    (0, .acquire(0)), (0, .acquire(3)), (0, .acquire(2)),
                ]),
            StoryDraft(
                "leak-edge", "one permit of room appears exactly one period after the bucket filled",
                clauses: ["LBM-3", "LBM-5"], threePerTen,
                [
                    (0, .acquire(3)), (9, .acquire(1)), (10, .acquire(0)), (10, .acquire(1)), (11, .acquire(1)),
                    (30, .acquire(0)),
                    (1_000, .acquire(0)),
                ]),
            StoryDraft(
                "weighted-rounds-up", "0.3 permits leak per ns: the wait is rounded up, then exact",
                clauses: ["LBM-4", "LBM-6"], try meter(5, 3, per: 10, level: 5),
                [
                    (0, .acquire(2)), (6, .acquire(2)), (7, .acquire(2)),
                ]),
            StoryDraft(
                "never", "more than capacity, or an admission past the end of the timeline, is never allowed",
                clauses: ["LBM-7", "CORE-7"], try meter(1, 1, per: 10), createdAt: end(10),
                [
                    (end(10), .acquire(2)), (end(10), .acquire(1)), (end(10), .acquire(1)), (end(), .acquire(1)),
                    (end(), .acquire(1)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the room; release and negative permits are invalid",
                clauses: ["LBM-8"], threePerTen,
                [
                    (0, .acquire(1)), (0, .acquire(0)), (0, .release(1)), (0, .acquire(-1)),
                ]),
            StoryDraft(
                "reset-to-initial-level", "reset restores the initial level at the latest instant",
                clauses: ["LBM-9"], try meter(2, 1, per: 10, level: 1),
                [
                    (0, .acquire(1)), (50, .reset), (40, .acquire(1)), (59, .acquire(1)), (60, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-keeps-room", "reconfigure keeps the room (the token bucket's tokens), capped",
                clauses: ["LBM-10"], try meter(10, 1, per: 10),
                [
                    (0, .acquire(4)), (5, .reconfigure(try meter(4, 1, per: 20))),
                    (5, .reconfigure(try meter(10, 1, per: 10))),
                    (14, .acquire(0)), (15, .acquire(0)),
                ]),
            StoryDraft(
                "interval-bound", "over [0, 20] at most capacity + 2 permits", clauses: ["LBM-11"], threePerTen,
                [
                    (0, .acquire(3)), (10, .acquire(1)), (20, .acquire(1)), (20, .acquire(1)),
                ]),
            StoryDraft(
                "same-as-token-bucket", "the token bucket's go-backward-time trace gives the same answers",
                clauses: ["LBM-12", "CORE-10"], try meter(3, 10, per: 1_000_000_000),
                [
                    (1_100_000_000, .acquire(1)), (1_000_000_000, .acquire(1)), (1_000_000_000, .acquire(1)),
                    (1_000_000_000, .acquire(1)), (1_100_000_000, .acquire(1)),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "LBM-3"], threePerTen,
                [
                    (0, .acquire(3)), (30, .acquire(0)), (5, .acquire(1)), (30, .acquire(4)), (5, .acquire(1)),
                    (30, .acquire(3)),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-capacity", "a capacity below 1",
                [("capacity", 0), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 1)]),
            RefusalDraft(
                "refuse-zero-leak", "nothing leaks",
                [("capacity", 1), ("leakPermitsPerPeriod", 0), ("periodNanoseconds", 1)]),
            RefusalDraft(
                "refuse-level-above-capacity", "an initial level above capacity",
                [("capacity", 3), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 1), ("initialLevel", 4)]),
            RefusalDraft(
                "refuse-drain-past-timeline", "draining would take 2 × Int64.max ns",
                [("capacity", Int64.max), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 2)]),
        ]
        return (stories, refusals)
    }
}
