import RateLimitCore

extension VectorCatalogue {
    static func leakyBucketQueue() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func queue(_ capacity: Int64, every interval: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .leakyBucketQueue(try LeakyBucketQueue(queueCapacity: capacity, intervalNanoseconds: interval))
        }
        let twoWaiting = try queue(2, every: 10)
        let stories = [
            StoryDraft(
                "spacing", "the first request goes at once, later ones exactly one interval apart",
                clauses: ["LBQ-4", "LBQ-5"], twoWaiting,
                [
                    (0, .acquire(1)), (0, .acquire(1)), (0, .acquire(1)), (0, .acquire(1)), (10, .acquire(1)),
                    (40, .acquire(1)),
                ]),
            StoryDraft(
                "weighted", "a weighted request occupies one interval per permit", clauses: ["LBQ-4"], twoWaiting,
                [
                    (0, .acquire(2)), (0, .acquire(1)), (0, .acquire(1)),
                ]),
            StoryDraft(
                "retry-edge", "the retry-after is when room appears in the queue: one before, at, one after",
                clauses: ["LBQ-6"], twoWaiting,
                [
                    (0, .acquire(3)), (9, .acquire(1)), (10, .acquire(0)), (11, .acquire(1)),
                ]),
            StoryDraft(
                "backward-time", "a request admitted at the recorded instant waits from an earlier now",
                clauses: ["LBQ-3", "CORE-10"], twoWaiting,
                [
                    (100, .reset), (95, .acquire(1)), (95, .acquire(1)), (90, .acquire(1)), (120, .acquire(1)),
                ]),
            StoryDraft(
                "never", "more than queueCapacity + 1, or a start past the end of the timeline, is never allowed",
                clauses: ["LBQ-7", "CORE-7"], twoWaiting, createdAt: end(15),
                [
                    (end(15), .acquire(4)), (end(15), .acquire(1)), (end(15), .acquire(1)), (end(15), .acquire(1)),
                    (end(), .acquire(1)), (end(), .acquire(0)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the room; release and negative permits are invalid",
                clauses: ["LBQ-8"], twoWaiting,
                [
                    (0, .acquire(1)), (0, .acquire(0)), (0, .release(1)), (0, .acquire(-1)),
                ]),
            StoryDraft(
                "reset-discards-schedule", "reset discards the schedule", clauses: ["LBQ-9"], twoWaiting,
                [
                    (0, .acquire(3)), (1, .reset), (1, .acquire(1)), (1, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-keeps-schedule", "reconfigure keeps the schedule: waiting requests keep their turn",
                clauses: ["LBQ-10"], twoWaiting,
                [
                    (0, .acquire(1)), (0, .acquire(1)), (0, .acquire(1)), (0, .reconfigure(try queue(0, every: 5))),
                    (0, .acquire(1)), (30, .acquire(1)), (31, .acquire(1)),
                ]),
            StoryDraft(
                "at-most-queue-waiting", "at most queueCapacity permits wait at any instant", clauses: ["LBQ-11"],
                try queue(1, every: 10),
                [
                    (0, .acquire(1)), (0, .acquire(1)), (0, .acquire(1)), (5, .acquire(1)), (10, .acquire(1)),
                    (20, .acquire(1)),
                ]),
            StoryDraft(
                "same-as-gcra", "the GCRA's boundary-conforms trace admits the same requests (scheduled here)",
                clauses: ["LBQ-12"], twoWaiting,
                [
                    (0, .acquire(3)), (9, .acquire(1)), (10, .acquire(1)), (19, .acquire(0)), (20, .acquire(0)),
                    (21, .acquire(0)),
                ]),
            StoryDraft(
                "no-queue", "queueCapacity 0: only an idle schedule admits", clauses: ["LBQ-1"],
                try queue(0, every: 10),
                [
                    (0, .acquire(1)), (0, .acquire(1)), (10, .acquire(1)), (25, .acquire(1)), (2, .acquire(1)),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "LBQ-3"], try queue(0, every: 10),
                [
                    (0, .acquire(1)), (20, .acquire(0)), (5, .acquire(1)), (20, .acquire(2)), (5, .acquire(1)),
                    (20, .acquire(1)),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-negative-queue", "a negative queue capacity",
                [("queueCapacity", -1), ("intervalNanoseconds", 10)]),
            RefusalDraft(
                "refuse-queue-at-max", "queueCapacity + 1 would overflow",
                [("queueCapacity", Int64.max), ("intervalNanoseconds", 1)]),
            RefusalDraft(
                "refuse-zero-interval", "an interval of 0", [("queueCapacity", 0), ("intervalNanoseconds", 0)]),
            RefusalDraft(
                "refuse-tolerance-overflow", "(queueCapacity + 1) × interval above Int64.max",
                [("queueCapacity", 1), ("intervalNanoseconds", Int64.max)]),
        ]
        return (stories, refusals)
    }
}
