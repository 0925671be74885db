import RateLimitCore

extension VectorCatalogue {
    static func fixedWindow() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func window(_ limit: Int64, per window: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .fixedWindow(try FixedWindow(limit: limit, windowNanoseconds: window))
        }
        let threePerTen = try window(3, per: 10)
        let stories = [
            StoryDraft(
                "window-edges", "a new window starts exactly at a multiple of the window: one before, at, one after",
                clauses: ["FW-3"], threePerTen,
                [
                    (0, .acquire(3)), (9, .acquire(0)), (9, .acquire(1)), (10, .acquire(0)), (11, .acquire(1)),
                ]),
            StoryDraft(
                "aligned-to-origin", "windows are aligned to the origin, not to the creation instant",
                clauses: ["FW-3"], threePerTen, createdAt: 5,
                [
                    (5, .acquire(3)), (9, .acquire(1)), (10, .acquire(1)),
                ]),
            StoryDraft(
                "weighted", "a weighted acquire waits for the next window when the rest does not fit",
                clauses: ["FW-4", "FW-5", "FW-6"], threePerTen,
                [
                    (0, .acquire(2)), (3, .acquire(2)), (3, .acquire(1)), (8, .acquire(1)), (10, .acquire(3)),
                ]),
            StoryDraft(
                "never", "more than the limit, or a next window past the end of the timeline, is never allowed",
                clauses: ["FW-7", "CORE-7"], try window(1, per: 10), createdAt: end(17),
                [
                    (end(17), .acquire(2)), (end(17), .acquire(1)), (end(17), .acquire(1)), (end(7), .acquire(1)),
                    (end(), .acquire(1)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["FW-8"], threePerTen,
                [
                    (0, .acquire(1)), (1, .acquire(0)), (1, .release(1)), (1, .acquire(-2)),
                ]),
            StoryDraft(
                "reset-keeps-windows", "reset clears the count and keeps the windows where they are",
                clauses: ["FW-9"], threePerTen,
                [
                    (0, .acquire(3)), (5, .reset), (5, .acquire(3)), (9, .acquire(1)), (10, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-keeps-count", "reconfigure keeps the current count, attributed to the new window",
                clauses: ["FW-10"], threePerTen,
                [
                    (5, .acquire(2)), (6, .reconfigure(try window(2, per: 4))), (7, .acquire(1)), (8, .acquire(1)),
                    (12, .reconfigure(threePerTen)), (12, .acquire(2)),
                ]),
            StoryDraft(
                "boundary-burst", "2 × limit fit within two nanoseconds across a boundary; never more in one window",
                clauses: ["FW-11"], threePerTen,
                [
                    (9, .acquire(3)), (10, .acquire(3)), (11, .acquire(1)),
                ]),
            StoryDraft(
                "backward-time", "an earlier now counts in the window of the latest instant",
                clauses: ["FW-3", "CORE-10"], threePerTen,
                [
                    (12, .acquire(2)), (8, .acquire(1)), (8, .acquire(1)), (19, .acquire(1)), (20, .acquire(3)),
                ]),
            StoryDraft(
                "same-as-interval-bucket", "the interval bucket's lumps-equal-capacity trace gives the same answers",
                clauses: ["FW-12"], threePerTen,
                [
                    (9, .acquire(3)), (9, .acquire(1)), (10, .acquire(3)), (19, .acquire(1)), (20, .acquire(2)),
                ]),
            StoryDraft(
                "huge-window", "a window of Int64.max ns: the next window lies past the end of the timeline",
                clauses: ["FW-6"], try window(2, per: Int64.max),
                [
                    (0, .acquire(2)), (end(1), .acquire(1)), (end(), .acquire(1)),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire in a later window record nothing",
                clauses: ["CORE-8", "CORE-10", "FW-3"], threePerTen,
                [
                    (0, .acquire(3)), (15, .acquire(0)), (5, .acquire(1)), (15, .acquire(4)), (5, .acquire(1)),
                    (15, .acquire(3)),
                ]),
        ]
        let refusals = [
            RefusalDraft("refuse-zero-limit", "a limit below 1", [("limit", 0), ("windowNanoseconds", 10)]),
            RefusalDraft("refuse-negative-window", "a negative window", [("limit", 1), ("windowNanoseconds", -10)]),
        ]
        return (stories, refusals)
    }
}
