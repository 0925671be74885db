import RateLimitCore

// Spec/FixedWindow.md: at most N permits in each window [j·W, (j+1)·W), aligned to the origin
// (FW-3); a refusal is admitted at the start of the next window (FW-6).

extension VectorCatalogue {
    static func fixedWindow() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func window(_ limit: Int64, per window: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .fixedWindow(try FixedWindow(limit: limit, windowNanoseconds: window))
        }
        func windowOf(_ limit: Int64, _ span: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            try window(limit, per: span)
        }
        let threePerTen = try window(3, per: 10)
        let stories = [
            StoryDraft(
                "window-edges", "a new window starts exactly at a multiple of the window: one before, at, one after",
                clauses: ["FW-3"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "fills window [0, 10)"),
                    (9, .acquire(0), allowed(0), "its last instant"),
                    (9, .acquire(1), rejected(1), "one before: the next window starts at 10"),
                    (10, .acquire(0), allowed(3), "at: a new window"),
                    (11, .acquire(1), allowed(2), "one after: counted in [10, 20)"),
                ]),
            StoryDraft(
                "aligned-to-origin", "windows are aligned to the origin, not to the creation instant",
                clauses: ["FW-3"], threePerTen, createdAt: 5,
                [
                    (5, .acquire(3), allowed(0), "fills window [0, 10)"),
                    (9, .acquire(1), rejected(1), "the next window starts at 10, not 5 + 10"),
                    (10, .acquire(1), allowed(2), "5 ns after creation"),
                ]),
            StoryDraft(
                "weighted", "a weighted acquire waits for the next window when the rest does not fit",
                clauses: ["FW-4", "FW-5", "FW-6"], threePerTen,
                [
                    (0, .acquire(2), allowed(1), "2 of 3"),
                    (3, .acquire(2), rejected(7), "2 + 2 > 3: the next window, 10"),
                    (3, .acquire(1), allowed(0), "the refused acquire took nothing: 1 fits"),
                    (8, .acquire(1), rejected(2), "full until 10"),
                    (10, .acquire(3), allowed(0), "a whole window"),
                ]),
            StoryDraft(
                "never", "more than the limit, or a next window past the end of the timeline, is never allowed",
                clauses: ["FW-7", "CORE-7"], try window(1, per: 10), createdAt: end(17),
                [
                    (end(17), .acquire(2), never, "2 > limit 1"),
                    (end(17), .acquire(1), allowed(0), "window ...790 (Int64.max ends in 807)"),
                    (end(17), .acquire(1), rejected(10), "the last window starts at ...800 = Int64.max − 7"),
                    (end(7), .acquire(1), allowed(0), "in the last window"),
                    (end(), .acquire(1), never, "the next window, ...810, lies past Int64.max"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["FW-8"], threePerTen,
                [
                    (0, .acquire(1), allowed(2), "1 of 3"),
                    (1, .acquire(0), allowed(2), "a query takes nothing"),
                    (1, .release(1), releaseNotSupported, "nothing to release"),
                    (1, .acquire(-2), negativePermits, "negative permits"),
                    (1, .acquire(2), allowed(0), "the invalid events changed nothing"),
                ]),
            StoryDraft(
                "reset-keeps-windows", "reset clears the count and keeps the windows where they are",
                clauses: ["FW-9"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "fills [0, 10)"),
                    (5, .reset, allowed(3), "count 0"),
                    (5, .acquire(3), allowed(0), "a full window's worth again"),
                    (9, .acquire(1), rejected(1), "the window still ends at 10, not 15"),
                    (10, .acquire(1), allowed(2), "a new window at 10"),
                ]),
            StoryDraft(
                "reconfigure-keeps-count", "reconfigure keeps the current count, attributed to the new window",
                clauses: ["FW-10"], threePerTen,
                [
                    (5, .acquire(2), allowed(1), "2 in [0, 10)"),
                    (6, .reconfigure(try window(2, per: 4)), allowed(0), "the 2 count in the new window [4, 8)"),
                    (7, .acquire(1), rejected(1), "full until 8"),
                    (8, .acquire(1), allowed(1), "the new grid's window [8, 12)"),
                    (12, .reconfigure(threePerTen), allowed(3), "[12, 16) began under the old window: count 0"),
                    (12, .acquire(2), allowed(1), "2 of 3 in [10, 20)"),
                ]),
            StoryDraft(
                "boundary-burst", "2 × limit fit within two nanoseconds across a boundary; never more in one window",
                clauses: ["FW-11"], threePerTen,
                [
                    (9, .acquire(3), allowed(0), "3 at the last instant of [0, 10)"),
                    (10, .acquire(3), allowed(0), "3 more at the first of [10, 20): 6 in 2 ns"),
                    (11, .acquire(1), rejected(9), "but never 4 in one window"),
                ]),
            StoryDraft(
                "backward-time", "an earlier now counts in the window of the latest instant",
                clauses: ["FW-3", "CORE-10"], threePerTen,
                [
                    (12, .acquire(2), allowed(1), "2 in [10, 20)"),
                    (8, .acquire(1), allowed(0), "evaluated at 12: counted in [10, 20), not [0, 10)"),
                    (8, .acquire(1), rejected(12), "[10, 20) is full: 20 is 12 ns from 8"),
                    (19, .acquire(1), rejected(1), "still full"),
                    (20, .acquire(3), allowed(0), "a new window"),
                ]),
            StoryDraft(
                "same-as-interval-bucket", "the interval bucket's lumps-equal-capacity trace gives the same answers",
                clauses: ["FW-12"], threePerTen,
                [
                    (
                        9, .acquire(3), allowed(0),
                        "the whole limit, as token-bucket-interval/lumps-equal-capacity step 1"
                    ),
                    (9, .acquire(1), rejected(1), "the next window at 10, as its step 2"),
                    (10, .acquire(3), allowed(0), "a new window: the limit again"),
                    (19, .acquire(1), rejected(1), "the next window at 20"),
                    (20, .acquire(2), allowed(1), "2 of the window at 20"),
                ]),
            StoryDraft(
                "huge-window", "a window of Int64.max ns: the next window lies past the end of the timeline",
                clauses: ["FW-6"], try window(2, per: Int64.max),
                [
                    (0, .acquire(2), allowed(0), "fills window 0, [0, Int64.max)"),
                    (end(1), .acquire(1), rejected(1), "window 1 starts at Int64.max"),
                    (end(), .acquire(1), allowed(1), "window 1 is the instant Int64.max alone"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire in a later window record nothing",
                clauses: ["CORE-8", "CORE-10", "FW-3"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "fills [0, 10)"),
                    (15, .acquire(0), allowed(3), "a query in [10, 20)"),
                    (5, .acquire(1), rejected(5), "the query recorded nothing: evaluated at 5, in the full [0, 10)"),
                    (15, .acquire(4), never, "4 > limit 3"),
                    (5, .acquire(1), rejected(5), "the never-allowed acquire recorded nothing either"),
                    (15, .acquire(3), allowed(0), "[10, 20) is still empty"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "FW-1"], threePerTen,
                steps: [
                    DraftStep(5, .acquire(2), allowed(1), "2 in [0, 10)"),
                    DraftStep(
                        15, reconfigureTo: [("limit", 0), ("windowNanoseconds", 10)], invalid("limit", .mustBePositive),
                        "limit 0 is refused (FW-1)"),
                    DraftStep(
                        8, .acquire(1), allowed(0),
                        "evaluated at 8, in [0, 10): the refused reconfigure recorded no instant"),
                    DraftStep(9, .acquire(1), rejected(1), "the old limit of 3"),
                ]),
        ]
        return (stories + (try alignmentVariants(windowOf)), refusals())
    }

    /// FW-13's variants: run only for an implementation whose profile declares the story's
    /// alignment (the file names it beside the configuration).
    private static func alignmentVariants(
        _ window: (Int64, Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy
    ) throws(RateLimitInputError) -> [StoryDraft] {
        func creation(_ limit: Int64, per span: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            try window(limit, span).aligned(.creation)
        }
        func firstEvent(_ limit: Int64, per span: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            try window(limit, span).aligned(.firstEvent)
        }
        return [
            StoryDraft(
                "creation-windows",
                "aligned to the creation: windows start at the creation instant plus multiples of W",
                clauses: ["FW-13"], try creation(3, per: 10), createdAt: 5,
                [
                    (5, .acquire(3), allowed(0), "fills [5, 15)"),
                    (14, .acquire(1), rejected(1), "the next window starts at 5 + 10 = 15, not 10"),
                    (15, .acquire(1), allowed(2), "a new window at 15"),
                    (24, .acquire(0), allowed(2), "the last instant of [15, 25)"),
                    (25, .acquire(0), allowed(3), "[25, 35)"),
                ]),
            StoryDraft(
                "creation-reset-reanchors",
                "aligned to the creation: a reset starts the windows again from its instant",
                clauses: ["FW-13", "FW-9"], try creation(3, per: 10), createdAt: 5,
                [
                    (6, .acquire(3), allowed(0), "fills [5, 15)"),
                    (8, .reset, allowed(3), "as created at 8: windows [8, 18), [18, 28)"),
                    (8, .acquire(3), allowed(0), "fills [8, 18)"),
                    (15, .acquire(1), rejected(3), "the window ends at 18, not 15"),
                    (18, .acquire(1), allowed(2), "[18, 28)"),
                ]),
            StoryDraft(
                "creation-reconfigure-keeps-anchor",
                "aligned to the creation: a reconfigure keeps the anchor, the count goes to the new grid's window",
                clauses: ["FW-13", "FW-10"], try creation(3, per: 10), createdAt: 5,
                [
                    (6, .acquire(2), allowed(1), "2 in [5, 15)"),
                    (7, .reconfigure(try creation(2, per: 4)), allowed(0), "the 2 count in [5, 9) of the new grid"),
                    (8, .acquire(1), rejected(1), "full until 9"),
                    (9, .acquire(1), allowed(1), "[9, 13)"),
                ]),
            StoryDraft(
                "first-event-opens",
                "aligned to the first event: an admission opens a window; a query or a refusal opens none",
                clauses: ["FW-13"], try firstEvent(3, per: 10),
                [
                    (4, .acquire(0), allowed(3), "a query opens no window"),
                    (7, .acquire(4), never, "4 > limit 3: opens nothing"),
                    (13, .acquire(2), allowed(1), "the first admission opens [13, 23)"),
                    (22, .acquire(2), rejected(1), "2 + 2 > 3: the window ends at 23"),
                    (23, .acquire(2), allowed(1), "opens [23, 33)"),
                    (40, .acquire(1), allowed(2), "idle since 33: opens [40, 50)"),
                    (45, .acquire(3), rejected(5), "1 + 3 > 3: at 50"),
                ]),
            StoryDraft(
                "first-event-reset-reconfigure",
                "aligned to the first event: a reset closes the window; a shorter window that no longer holds now reopens at now",
                clauses: ["FW-13", "FW-9", "FW-10"], try firstEvent(2, per: 10),
                [
                    (3, .acquire(2), allowed(0), "opens [3, 13)"),
                    (5, .reset, allowed(2), "count 0: no window open"),
                    (8, .acquire(1), allowed(1), "opens [8, 18)"),
                    (
                        16, .reconfigure(try firstEvent(2, per: 5)), allowed(1),
                        "[8, 13) does not hold 16: the count of 1 moves to a window opened at 16"
                    ),
                    (17, .acquire(2), rejected(4), "1 + 2 > 2: the window [16, 21) ends at 21"),
                    (21, .acquire(2), allowed(0), "opens [21, 26)"),
                ]),
        ]
    }

    private static func refusals() -> [RefusalDraft] {
        [
            RefusalDraft(
                "refuse-zero-limit", "a limit below 1", [("limit", 0), ("windowNanoseconds", 10)],
                refusedAs: "limit", .mustBePositive),
            RefusalDraft(
                "refuse-negative-window", "a negative window", [("limit", 1), ("windowNanoseconds", -10)],
                refusedAs: "windowNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-zero-window", "a window of 0", [("limit", 1), ("windowNanoseconds", 0)],
                refusedAs: "windowNanoseconds", .mustBePositive),
        ]
    }
}
