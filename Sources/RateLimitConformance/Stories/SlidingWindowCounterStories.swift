import RateLimitCore

// Spec/SlidingWindowCounter.md: counts c (this window) and p (the one before); at offset o an
// acquire of n is admitted iff p·(W − o) + (c + n)·W ≤ N·W (SWC-4); remaining is
// ⌊(N·W − p·(W − o)) / W⌋ − c (SWC-5); a refusal is admitted at the first instant of SWC-6's
// three cases.

extension VectorCatalogue {
    static func slidingWindowCounter() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func counter(_ limit: Int64, per window: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .slidingWindowCounter(try SlidingWindowCounter(limit: limit, windowNanoseconds: window))
        }
        let fourPerTen = try counter(4, per: 10)
        let one = try counter(1, per: 10)
        let half = Int64.max / 2  // 4_611_686_018_427_387_903
        let quarter = Int64.max / 4  // 2_305_843_009_213_693_951
        let stories = [
            StoryDraft(
                "weight-shrinks", "the previous window's weight shrinks by 1/W per nanosecond",
                clauses: ["SWC-3", "SWC-5"], fourPerTen,
                [
                    (5, .acquire(4), allowed(0), "4 in window [0, 10)"),
                    (9, .acquire(0), allowed(0), "still window 0"),
                    (10, .acquire(0), allowed(0), "4·10/10 = 4 carried into [10, 20)"),
                    (12, .acquire(0), allowed(0), "4·8/10 = 3.2: ⌊0.8⌋ = 0 left"),
                    (13, .acquire(0), allowed(1), "4·7/10 = 2.8: ⌊1.2⌋ = 1 left"),
                    (15, .acquire(0), allowed(2), "4·5/10 = 2"),
                    (20, .acquire(0), allowed(4), "window [10, 20) was empty"),
                ]),
            StoryDraft(
                "no-floor", "the estimate is compared exactly, not floored (Python limits admits at 11)",
                clauses: ["SWC-4"], one,
                [
                    (9, .acquire(1), allowed(0), "1 in [0, 10)"),
                    (11, .acquire(1), rejected(9), "0.9 + 1 > 1 (floored, 0 + 1 would fit); admitted at 20"),
                    (19, .acquire(1), rejected(1), "0.1 + 1 > 1"),
                    (20, .acquire(1), allowed(0), "the previous window no longer overlaps"),
                ]),
            StoryDraft(
                "retry-same-window", "case 1: admitted later in the same window as the previous weight shrinks",
                clauses: ["SWC-6"], fourPerTen,
                [
                    (5, .acquire(4), allowed(0), "4 in [0, 10)"),
                    (10, .acquire(1), rejected(3), "s = 3, q = ⌊3·10/4⌋ = 7: at 10 + (10 − 7) = 13"),
                    (12, .acquire(1), rejected(1), "4·8 + 1·10 = 42 > 40"),
                    (13, .acquire(1), allowed(0), "4·7 + 1·10 = 38 ≤ 40"),
                ]),
            StoryDraft(
                "retry-next-window", "case 2: admitted in the next window once the current count weighs little enough",
                clauses: ["SWC-6"], fourPerTen,
                [
                    (5, .acquire(4), allowed(0), "4 in [0, 10)"),
                    (6, .acquire(1), rejected(7), "c = 4 > 3: q = ⌊3·10/4⌋ = 7, at 10 + (10 − 7) = 13"),
                    (12, .acquire(1), rejected(1), "4·8 + 10 = 42 > 40"),
                    (13, .acquire(1), allowed(0), "4·7 + 10 = 38 ≤ 40"),
                ]),
            StoryDraft(
                "retry-two-windows", "case 3: admitted two windows on", clauses: ["SWC-6"], one,
                [
                    (5, .acquire(1), allowed(0), "1 in [0, 10)"),
                    (6, .acquire(1), rejected(14), "q = ⌊0·10/1⌋ = 0 in window 1: the start of window 2, 20"),
                    (19, .acquire(1), rejected(1), "1·1 + 1·10 = 11 > 10"),
                    (20, .acquire(1), allowed(0), "both counts are zero"),
                ]),
            StoryDraft(
                "never", "more than the limit, or an admission past the end of the timeline, is never allowed",
                clauses: ["SWC-7", "CORE-7"], one, createdAt: end(3),
                [
                    (end(3), .acquire(2), never, "2 > limit 1"),
                    (end(3), .acquire(1), allowed(0), "in the last window, from ...800 = Int64.max − 7"),
                    (end(3), .acquire(1), never, "admitted only two windows on, past Int64.max"),
                    (end(), .acquire(1), never, "still the last window"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["SWC-8"], fourPerTen,
                [
                    (0, .acquire(1), allowed(3), "1 of 4"),
                    (0, .acquire(0), allowed(3), "a query takes nothing"),
                    (0, .release(1), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(3), allowed(0), "the invalid events changed nothing"),
                ]),
            StoryDraft(
                "reset-clears", "reset clears both counts", clauses: ["SWC-9"], fourPerTen,
                [
                    (5, .acquire(4), allowed(0), "4 in [0, 10)"),
                    (11, .reset, allowed(4), "both counts 0: nothing carried from [0, 10)"),
                    (11, .acquire(4), allowed(0), "4 in [10, 20)"),
                    (11, .acquire(1), rejected(12), "c = 4 > 3: q = ⌊3·10/4⌋ = 7, at 20 + (10 − 7) = 23"),
                ]),
            StoryDraft(
                "reconfigure-realigns", "reconfigure keeps both counts and re-aligns them to the new windows",
                clauses: ["SWC-10"], fourPerTen,
                [
                    (5, .acquire(4), allowed(0), "4 in [0, 10)"),
                    (
                        12, .reconfigure(try counter(4, per: 4)), allowed(0),
                        "p = 4 for [8, 12), at offset 0 of [12, 16)"
                    ),
                    (13, .acquire(0), allowed(1), "4·3/4 = 3"),
                    (16, .acquire(0), allowed(4), "[12, 16) had nothing"),
                ]),
            StoryDraft(
                "worst-case", "18 permits in one sliding window for limit 10, window 10: N + ⌊N(W − 2)/W⌋",
                clauses: ["SWC-11"], try counter(10, per: 10),
                [
                    (9, .acquire(10), allowed(0), "10 at the last instant of [0, 10)"),
                    (18, .acquire(8), allowed(0), "10·2/10 + 8 = 10: (8, 18] holds 18"),
                    (18, .acquire(1), rejected(1), "s = 1, q = ⌊1·10/10⌋ = 1: at 10 + 9 = 19"),
                ]),
            StoryDraft(
                "stricter-than-fixed-window", "where a fixed window would admit at 10, the counter waits",
                clauses: ["SWC-12"], fourPerTen,
                [
                    (9, .acquire(4), allowed(0), "4 at the last instant of [0, 10)"),
                    (10, .acquire(4), rejected(10), "a fixed window admits; 4 + 4 > 4, first at 20"),
                    (10, .acquire(1), rejected(3), "s = 3, q = 7: at 13"),
                ]),
            StoryDraft(
                "backward-time", "an earlier now is evaluated at the latest instant", clauses: ["SWC-3", "CORE-10"],
                fourPerTen,
                [
                    (15, .acquire(4), allowed(0), "4 in [10, 20)"),
                    (8, .acquire(1), rejected(15), "evaluated at 15: q = 7, at 20 + 3 = 23, 15 ns from 8"),
                    (22, .acquire(1), rejected(1), "4·8 + 10 = 42 > 40"),
                    (3, .acquire(0), allowed(0), "evaluated at 15: the refusal at 22 recorded nothing"),
                ]),
            StoryDraft(
                "huge-counts", "counts and windows near Int64.max compared at 128 bits",
                clauses: ["SWC-4"], try counter(Int64.max, per: half),
                [
                    (0, .acquire(Int64.max), allowed(0), "the limit, Int64.max, at once"),
                    (half, .acquire(1), rejected(1), "p·W + 1·W > N·W; q = ⌊(N − 1)·W/p⌋ = W − 1: at W + 1"),
                    (half + quarter, .acquire(half), rejected(1), "q = ⌊(N − W)·W/p⌋ = ⌊Int64.max/4⌋: at 2W − q"),
                    (
                        half + quarter, .acquire(0), allowed(half - 1),
                        "⌊p·o/W⌋ = 2·⌊Int64.max/4⌋: one short of the acquire above"
                    ),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "SWC-3"], fourPerTen,
                [
                    (5, .acquire(4), allowed(0), "4 in [0, 10)"),
                    (25, .acquire(0), allowed(4), "a query two windows on"),
                    (8, .acquire(1), rejected(5), "the query recorded nothing: evaluated at 8, admitted at 13"),
                    (25, .acquire(5), never, "5 > limit 4"),
                    (8, .acquire(1), rejected(5), "the never-allowed acquire recorded nothing either"),
                    (25, .acquire(4), allowed(0), "both counts zero at 25"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "SWC-1"], fourPerTen,
                steps: [
                    DraftStep(5, .acquire(2), allowed(2), "2 in [0, 10)"),
                    DraftStep(
                        25, reconfigureTo: [("limit", 0), ("windowNanoseconds", 10)], invalid("limit", .mustBePositive),
                        "limit 0 is refused (SWC-1)"),
                    DraftStep(8, .acquire(2), allowed(0), "evaluated at 8: the counts were not rolled to 25"),
                    DraftStep(9, .acquire(1), rejected(4), "the old limit: c = 4 > 3, q = ⌊3·10/4⌋ = 7, at 13"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-limit", "a limit below 1", [("limit", 0), ("windowNanoseconds", 10)],
                refusedAs: "limit", .mustBePositive),
            RefusalDraft(
                "refuse-zero-window", "a window of 0", [("limit", 1), ("windowNanoseconds", 0)],
                refusedAs: "windowNanoseconds", .mustBePositive),
        ]
        return (stories, refusals)
    }
}
