import RateLimitCore

// Spec/SlidingWindowLog.md: at most N permits in any window (t − W, t]; an entry (a, n) counts
// while a + W > t (SWL-3); a refusal waits until the oldest entries that free enough permits
// expire (SWL-6).

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
                    (5, .acquire(3), allowed(0), "3 at 5"),
                    (14, .acquire(0), allowed(0), "5 + 10 > 14: they still count"),
                    (14, .acquire(1), rejected(1), "one before they expire at 15"),
                    (15, .acquire(0), allowed(3), "at 15 they no longer count"),
                    (16, .acquire(3), allowed(0), "one after"),
                ]),
            StoryDraft(
                "retry-walks-the-log", "a refused acquire waits for the oldest entries that free enough permits",
                clauses: ["SWL-4", "SWL-5", "SWL-6"], threePerTen,
                [
                    (0, .acquire(1), allowed(2), "entry (0, 1)"),
                    (2, .acquire(1), allowed(1), "entry (2, 1)"),
                    (4, .acquire(1), allowed(0), "entry (4, 1)"),
                    (5, .acquire(2), rejected(7), "2 must expire: the entries of 0 and 2, at 2 + 10 = 12"),
                    (10, .acquire(0), allowed(1), "the entry of 0 expired"),
                    (11, .acquire(2), rejected(1), "1 more must expire: the entry of 2, at 12"),
                    (12, .acquire(2), allowed(0), "at 12"),
                ]),
            StoryDraft(
                "same-instant-merged", "admissions at one instant share an entry and expire together",
                clauses: ["SWL-2"], threePerTen,
                [
                    (4, .acquire(1), allowed(2), "entry (4, 1)"),
                    (4, .acquire(1), allowed(1), "merged: (4, 2)"),
                    (4, .acquire(1), allowed(0), "merged: (4, 3)"),
                    (13, .acquire(1), rejected(1), "all three expire at 14"),
                    (14, .acquire(3), allowed(0), "together"),
                ]),
            StoryDraft(
                "never", "more than the limit, or an expiry past the end of the timeline, is never allowed",
                clauses: ["SWL-7", "CORE-7"], try log(1, per: 10), createdAt: end(10),
                [
                    (end(10), .acquire(2), never, "2 > limit 1"),
                    (end(10), .acquire(1), allowed(0), "10 ns before the end"),
                    (end(10), .acquire(1), rejected(10), "it expires at Int64.max exactly"),
                    (end(), .acquire(1), allowed(0), "at Int64.max"),
                    (end(), .acquire(1), never, "it would expire at Int64.max + 10"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["SWL-8"], threePerTen,
                [
                    (0, .acquire(2), allowed(1), "2 of 3"),
                    (0, .acquire(0), allowed(1), "a query takes nothing"),
                    (0, .release(1), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(1), allowed(0), "the invalid events changed nothing"),
                ]),
            StoryDraft(
                "reset-empties", "reset empties the log", clauses: ["SWL-9"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "3 at 0"),
                    (1, .reset, allowed(3), "an empty log"),
                    (1, .acquire(3), allowed(0), "3 at 1"),
                    (10, .acquire(1), rejected(1), "those of 1 expire at 11; those of 0 are gone"),
                    (11, .acquire(1), allowed(2), "at 11"),
                ]),
            StoryDraft(
                "reconfigure-longer-window", "a longer window does not bring back entries that had expired",
                clauses: ["SWL-10"], threePerTen,
                [
                    (0, .acquire(2), allowed(1), "entry (0, 2)"),
                    (8, .acquire(1), allowed(0), "entry (8, 1)"),
                    (
                        12, .reconfigure(try log(3, per: 20)), allowed(2),
                        "(0, 2) expired at 10 and is dropped; (8, 1) kept"
                    ),
                    (12, .acquire(2), allowed(0), "1 + 2 = 3 under the window of 20"),
                    (27, .acquire(1), rejected(1), "(8, 1) now counts until 8 + 20 = 28"),
                    (28, .acquire(1), allowed(0), "at 28"),
                ]),
            StoryDraft(
                "reconfigure-lower-limit", "a lower limit is exceeded until entries expire",
                clauses: ["SWL-10"], threePerTen,
                [
                    (0, .acquire(2), allowed(1), "entry (0, 2)"),
                    (1, .reconfigure(try log(1, per: 10)), allowed(0), "2 in force, limit 1: remaining 0, not −1"),
                    (1, .acquire(0), allowed(0), "still 0"),
                    (9, .acquire(1), rejected(1), "both permits must expire: at 10"),
                    (10, .acquire(1), allowed(0), "at 10"),
                ]),
            StoryDraft(
                "window-bound", "no window (t − 10, t] admits more than 3", clauses: ["SWL-11"], threePerTen,
                [
                    (0, .acquire(1), allowed(2), "at 0"),
                    (3, .acquire(1), allowed(1), "at 3"),
                    (6, .acquire(1), allowed(0), "at 6"),
                    (9, .acquire(1), rejected(1), "(−1, 9] holds 3; the entry of 0 expires at 10"),
                    (10, .acquire(1), allowed(0), "(0, 10] holds 3 with it"),
                    (13, .acquire(1), allowed(0), "(3, 13]: the entry of 3 expired"),
                ]),
            StoryDraft(
                "counter-worst-case", "the sliding counter's worst-case trace: the log admits only the limit",
                clauses: ["SWL-12"], try log(10, per: 10),
                [
                    (9, .acquire(10), allowed(0), "the limit at 9"),
                    (18, .acquire(8), rejected(1), "the counter admits these 8 here; the log waits for 19"),
                    (19, .acquire(8), allowed(2), "at 19"),
                ]),
            StoryDraft(
                "backward-time", "an earlier now is evaluated at the latest instant", clauses: ["SWL-3", "CORE-10"],
                threePerTen,
                [
                    (20, .acquire(3), allowed(0), "3 at 20"),
                    (12, .acquire(1), rejected(18), "evaluated at 20: they expire at 30, 18 ns from 12"),
                    (29, .acquire(1), rejected(1), "one before"),
                    (30, .acquire(1), allowed(2), "at 30"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "SWL-3"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "3 at 0"),
                    (12, .acquire(0), allowed(3), "a query at 12: they expired at 10"),
                    (5, .acquire(1), rejected(5), "the query recorded nothing: evaluated at 5"),
                    (12, .acquire(4), never, "4 > limit 3"),
                    (5, .acquire(1), rejected(5), "the never-allowed acquire recorded nothing either"),
                    (12, .acquire(3), allowed(0), "at 12"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "SWL-1"], threePerTen,
                steps: [
                    DraftStep(0, .acquire(2), allowed(1), "entry (0, 2)"),
                    DraftStep(
                        15, reconfigureTo: [("limit", 1), ("windowNanoseconds", 0)],
                        invalid("windowNanoseconds", .mustBePositive), "a window of 0 is refused (SWL-1)"),
                    DraftStep(5, .acquire(1), allowed(0), "evaluated at 5: the entry of 0 still counts"),
                    DraftStep(9, .acquire(1), rejected(1), "the old limit and window: the entry of 0 expires at 10"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-negative-limit", "a negative limit", [("limit", -1), ("windowNanoseconds", 10)],
                refusedAs: "limit", .mustBePositive),
            RefusalDraft(
                "refuse-zero-limit", "a limit of 0", [("limit", 0), ("windowNanoseconds", 10)],
                refusedAs: "limit", .mustBePositive),
            RefusalDraft(
                "refuse-zero-window", "a window of 0", [("limit", 1), ("windowNanoseconds", 0)],
                refusedAs: "windowNanoseconds", .mustBePositive),
        ]
        return (stories, refusals)
    }
}
