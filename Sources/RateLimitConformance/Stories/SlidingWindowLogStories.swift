import RateLimitCore

extension VectorCatalogue {
    static func slidingWindowLog() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func log(_ limit: Int64, per window: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .slidingWindowLog(try SlidingWindowLog(limit: limit, windowNanoseconds: window))
        }
        let threePerTen = try log(3, per: 10)
        let stories = [
            StoryDraft(
                "expiry-edge", "an admission stops counting exactly one window later: one before, at, one after",
                clauses: ["SWL-3"], threePerTen,
                [
                    (5, .acquire(3)), (14, .acquire(0)), (14, .acquire(1)), (15, .acquire(0)), (16, .acquire(3)),
                ]),
            StoryDraft(
                "retry-walks-the-log", "a refused acquire waits for the oldest entries that free enough permits",
                clauses: ["SWL-4", "SWL-5", "SWL-6"], threePerTen,
                [
                    (0, .acquire(1)), (2, .acquire(1)), (4, .acquire(1)), (5, .acquire(2)), (10, .acquire(0)),
                    (11, .acquire(2)), (12, .acquire(2)),
                ]),
            StoryDraft(
                "same-instant-merged", "admissions at one instant share an entry and expire together",
                clauses: ["SWL-2"], threePerTen,
                [
                    (4, .acquire(1)), (4, .acquire(1)), (4, .acquire(1)), (13, .acquire(1)), (14, .acquire(3)),
                ]),
            StoryDraft(
                "never", "more than the limit, or an expiry past the end of the timeline, is never allowed",
                clauses: ["SWL-7", "CORE-7"], try log(1, per: 10), createdAt: end(10),
                [
                    (end(10), .acquire(2)), (end(10), .acquire(1)), (end(10), .acquire(1)), (end(), .acquire(1)),
                    (end(), .acquire(1)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["SWL-8"], threePerTen,
                [
                    (0, .acquire(2)), (0, .acquire(0)), (0, .release(1)), (0, .acquire(-1)),
                ]),
            StoryDraft(
                "reset-empties", "reset empties the log", clauses: ["SWL-9"], threePerTen,
                [
                    (0, .acquire(3)), (1, .reset), (1, .acquire(3)), (10, .acquire(1)), (11, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-longer-window", "a longer window does not bring back entries that had expired",
                clauses: ["SWL-10"], threePerTen,
                [
                    (0, .acquire(2)), (8, .acquire(1)), (12, .reconfigure(try log(3, per: 20))), (12, .acquire(2)),
                    (27, .acquire(1)), (28, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-lower-limit", "a lower limit is exceeded until entries expire",
                clauses: ["SWL-10"], threePerTen,
                [
                    (0, .acquire(2)), (1, .reconfigure(try log(1, per: 10))), (1, .acquire(0)), (9, .acquire(1)),
                    (10, .acquire(1)),
                ]),
            StoryDraft(
                "window-bound", "no window (t − 10, t] admits more than 3", clauses: ["SWL-11"], threePerTen,
                [
                    (0, .acquire(1)), (3, .acquire(1)), (6, .acquire(1)), (9, .acquire(1)), (10, .acquire(1)),
                    (13, .acquire(1)),
                ]),
            StoryDraft(
                "counter-worst-case", "the sliding counter's worst-case trace: the log admits only the limit",
                clauses: ["SWL-12"], try log(10, per: 10),
                [
                    (9, .acquire(10)), (18, .acquire(8)), (19, .acquire(8)),
                ]),
            StoryDraft(
                "backward-time", "an earlier now is evaluated at the latest instant", clauses: ["SWL-3", "CORE-10"],
                threePerTen,
                [
                    (20, .acquire(3)), (12, .acquire(1)), (29, .acquire(1)), (30, .acquire(1)),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "SWL-3"], threePerTen,
                [
                    (0, .acquire(3)), (12, .acquire(0)), (5, .acquire(1)), (12, .acquire(4)), (5, .acquire(1)),
                    (12, .acquire(3)),
                ]),
        ]
        let refusals = [
            RefusalDraft("refuse-negative-limit", "a negative limit", [("limit", -1), ("windowNanoseconds", 10)]),
            RefusalDraft("refuse-zero-window", "a window of 0", [("limit", 1), ("windowNanoseconds", 0)]),
        ]
        return (stories, refusals)
    }
}
