import RateLimitCore

// Spec/SlidingWindowSegments.md: limit N, S segments of G ns, window W = S·G. Segment j covers
// [j·G, (j+1)·G) and is in force at e while ⌊e/G⌋ − S < j (SWS-3); an acquire is admitted iff the
// permits U of the segments in force plus n are at most N (SWS-4); remaining is N − U (SWS-5); a
// refusal is admitted when enough segments, oldest first, have slid out, at (j + S)·G (SWS-6).

extension VectorCatalogue {
    static func slidingWindowSegments() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func segments(_ limit: Int64, _ count: Int64, of length: Int64) throws(RateLimitInputError)
            -> AnyRateLimitStrategy
        {
            .slidingWindowSegments(
                try SlidingWindowSegments(limit: limit, segmentsPerWindow: count, segmentNanoseconds: length))
        }
        let threeByTen = try segments(3, 3, of: 10)  // W = 30
        let stories = [
            StoryDraft(
                "segment-slides-out-whole", "a segment's permits leave together, when the segment slides out",
                clauses: ["SWS-3", "SWS-4"], threeByTen,
                [
                    (0, .acquire(1), allowed(2), "segment 0 holds 1"),
                    (15, .acquire(2), allowed(0), "segment 1 holds 2: U = 3"),
                    (29, .acquire(1), rejected(1), "segments 0 … 2 in force: segment 0 slides out at (0 + 3)·10 = 30"),
                    (30, .acquire(1), allowed(0), "segments 1 … 3: U = 2, then 3"),
                    (39, .acquire(0), allowed(0), "segment 1 (2) and segment 3 (1) still in force"),
                    (40, .acquire(0), allowed(2), "segment 1 slid out at 40, not at 15 + 30 = 45 as in the log"),
                ]),
            StoryDraft(
                "slide-edge", "a segment slides out exactly at (j + S)·G: one before, at, one after",
                clauses: ["SWS-3"], threeByTen,
                [
                    (9, .acquire(3), allowed(0), "segment 0 holds 3, taken at its last instant"),
                    (29, .acquire(1), rejected(1), "one before: segment 0 still in force"),
                    (30, .acquire(1), allowed(2), "at 30 it has slid out: U = 0, then 1"),
                    (31, .acquire(0), allowed(2), "one after"),
                ]),
            StoryDraft(
                "remaining-counts-segments-in-force",
                "remaining is the limit less the permits of the segments in force",
                clauses: ["SWS-5"], threeByTen,
                [
                    (0, .acquire(0), allowed(3), "no segment"),
                    (5, .acquire(2), allowed(1), "segment 0 holds 2"),
                    (12, .acquire(0), allowed(1), "segment 0 still in force"),
                    (29, .acquire(0), allowed(1), "segment 0 in force until 30"),
                    (30, .acquire(0), allowed(3), "segment 0 slid out"),
                ]),
            StoryDraft(
                "retry-after-walks-segments",
                "a refusal waits for the oldest segments whose permits, together, make room", clauses: ["SWS-6"],
                threeByTen,
                [
                    (0, .acquire(1), allowed(2), "segment 0"),
                    (10, .acquire(1), allowed(1), "segment 1"),
                    (20, .acquire(1), allowed(0), "segment 2"),
                    (20, .acquire(2), rejected(20), "x = 3 + 2 − 3 = 2: segments 0 and 1, the second slides out at 40"),
                    (39, .acquire(2), rejected(1), "one before"),
                    (40, .acquire(2), allowed(0), "segments 2 … 4: U = 1, then 3"),
                    (40, .acquire(1), rejected(10), "x = 1: segment 2 slides out at 50"),
                ]),
            StoryDraft(
                "backward-time",
                "an earlier now is evaluated at the last instant; a stale reset does not restart the past",
                clauses: ["SWS-3", "CORE-10"], threeByTen,
                [
                    (25, .acquire(3), allowed(0), "segment 2 holds 3, last = 25"),
                    (10, .acquire(1), rejected(40), "evaluated at 25: segment 2 slides out at 50, 40 ns from 10"),
                    (10, .reset, allowed(3), "evaluated at 25: no segment, last = 25"),
                    (5, .acquire(2), allowed(1), "evaluated at 25: segment 2 holds 2"),
                    (49, .acquire(2), rejected(1), "x = 1: segment 2 slides out at 50"),
                ]),
            StoryDraft(
                "never", "more than the limit, or an admission past the end of the timeline, is never allowed",
                clauses: ["SWS-7", "CORE-7"], try segments(2, 2, of: 10), createdAt: end(5),
                [
                    (end(5), .acquire(3), never, "3 > limit 2"),
                    (end(5), .acquire(2), allowed(0), "segment k = ⌊(Int64.max − 5)/10⌋, k·10 = Int64.max − 7"),
                    (end(), .acquire(1), never, "segment k slides out at (k + 2)·10 = Int64.max + 13"),
                    (end(), .acquire(0), allowed(0), "still in force at the end of the timeline"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["SWS-8"], threeByTen,
                [
                    (0, .acquire(0), allowed(3), "no segment"),
                    (0, .release(1), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(3), allowed(0), "the invalid events changed nothing"),
                ]),
            StoryDraft(
                "reset-forgets-segments", "reset forgets every segment; segments stay aligned to the origin",
                clauses: ["SWS-9"], threeByTen,
                [
                    (0, .acquire(3), allowed(0), "segment 0 holds 3"),
                    (5, .reset, allowed(3), "no segment, last = 5"),
                    (5, .acquire(3), allowed(0), "segment 0 again, aligned to the origin, not to 5"),
                    (29, .acquire(1), rejected(1), "segment 0 slides out at 30, not at 35"),
                ]),
            StoryDraft(
                "reconfigure-keeps-segments",
                "reconfigure moves each segment in force to the new segment of its last instant",
                clauses: ["SWS-10"], threeByTen,
                [
                    (5, .acquire(1), allowed(2), "segment 0"),
                    (17, .acquire(1), allowed(1), "segment 1"),
                    (
                        23, .reconfigure(try segments(2, 2, of: 4)), allowed(1),
                        "0 → ⌊9/4⌋ = 2, 1 → ⌊19/4⌋ = 4; at 23 segments 4 and 5 are in force: U = 1"
                    ),
                    (23, .acquire(1), allowed(0), "segment 5 holds 1; segment 2 dropped"),
                    (23, .acquire(1), rejected(1), "x = 1: segment 4 slides out at (4 + 2)·4 = 24"),
                    (24, .acquire(1), allowed(0), "segments 5 and 6: U = 1, then 2"),
                ]),
            StoryDraft(
                "reconfigure-lower-limit", "a lower limit may be exceeded until segments slide out",
                clauses: ["SWS-10"], threeByTen,
                [
                    (0, .acquire(3), allowed(0), "segment 0 holds 3"),
                    (5, .reconfigure(try segments(1, 3, of: 10)), allowed(0), "3 permits in force, limit 1"),
                    (5, .acquire(1), rejected(25), "x = 3 + 1 − 1 = 3: segment 0 slides out at 30"),
                    (30, .acquire(1), allowed(0), "segment 0 slid out"),
                ]),
            StoryDraft(
                "segments-bound", "any S consecutive segments admit at most N; any W consecutive ns up to 2N",
                clauses: ["SWS-11"], try segments(2, 2, of: 10),
                [
                    (9, .acquire(2), allowed(0), "segment 0, at its last instant"),
                    (19, .acquire(1), rejected(1), "segments 0 and 1 hold at most 2"),
                    (
                        20, .acquire(2), allowed(0),
                        "segment 2: 4 = 2N within [9, 20], 12 ns; 2 within any 11 = W − G + 1"
                    ),
                    (29, .acquire(1), rejected(11), "segment 2 slides out at 40"),
                ]),
            StoryDraft(
                "one-segment-is-fixed-window",
                "with one segment, the fixed window's answers (fixed-window/boundary-burst)", clauses: ["SWS-12"],
                try segments(2, 1, of: 10),
                [
                    (9, .acquire(2), allowed(0), "window 0 at its last instant"),
                    (9, .acquire(1), rejected(1), "window 1 starts at 10"),
                    (10, .acquire(2), allowed(0), "2N across the boundary, as FW-11"),
                    (19, .acquire(0), allowed(0), "still window 1"),
                    (20, .acquire(0), allowed(2), "window 2"),
                ]),
            StoryDraft(
                "one-nanosecond-segments-are-the-log",
                "with segments of 1 ns, the sliding log's answers: each admission leaves exactly W later",
                clauses: ["SWS-12"], try segments(2, 5, of: 1),
                [
                    (0, .acquire(1), allowed(1), "segment 0 = instant 0"),
                    (3, .acquire(1), allowed(0), "instant 3"),
                    (4, .acquire(1), rejected(1), "the admission at 0 expires at 0 + 5 = 5"),
                    (5, .acquire(1), allowed(0), "at 5"),
                    (7, .acquire(1), rejected(1), "the admission at 3 expires at 8"),
                    (8, .acquire(1), allowed(0), "at 8"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a refused acquire and a query at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "SWS-3"], threeByTen,
                [
                    (0, .acquire(3), allowed(0), "segment 0 holds 3, last = 0"),
                    (29, .acquire(1), rejected(1), "segment 0 slides out at 30"),
                    (25, .acquire(1), rejected(5), "the refusal at 29 recorded nothing: evaluated at 25"),
                    (35, .acquire(0), allowed(3), "a query at 35: segment 0 slid out"),
                    (25, .acquire(1), rejected(5), "the query recorded nothing either"),
                    (30, .acquire(3), allowed(0), "at 30"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "SWS-1"], threeByTen,
                steps: [
                    DraftStep(0, .acquire(1), allowed(2), "segment 0 holds 1"),
                    DraftStep(
                        20,
                        reconfigureTo: [("limit", 2), ("segmentsPerWindow", 2), ("segmentNanoseconds", Int64.max)],
                        invalid("segmentNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)),
                        "a window of 2 × Int64.max is refused: the segment may be ⌊Int64.max/2⌋ (SWS-1)"),
                    DraftStep(5, .acquire(0), allowed(2), "evaluated at 5: no instant recorded at 20"),
                    DraftStep(29, .acquire(2), allowed(0), "the old limit of 3"),
                    DraftStep(30, .acquire(1), allowed(0), "segment 0 slid out: 2, then 3"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-limit", "a limit below 1",
                [("limit", 0), ("segmentsPerWindow", 1), ("segmentNanoseconds", 1)], refusedAs: "limit",
                .mustBePositive),
            RefusalDraft(
                "refuse-negative-segments", "segments per window below 1, even negative",
                [("limit", 1), ("segmentsPerWindow", -2), ("segmentNanoseconds", 1)], refusedAs: "segmentsPerWindow",
                .mustBePositive),
            RefusalDraft(
                "refuse-zero-segments", "no segment per window",
                [("limit", 1), ("segmentsPerWindow", 0), ("segmentNanoseconds", 1)], refusedAs: "segmentsPerWindow",
                .mustBePositive),
            RefusalDraft(
                "refuse-zero-segment", "a segment of 0 ns",
                [("limit", 1), ("segmentsPerWindow", 2), ("segmentNanoseconds", 0)],
                refusedAs: "segmentNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-window-overflow", "segments × segment length above Int64.max",
                [("limit", 1), ("segmentsPerWindow", 3), ("segmentNanoseconds", Int64.max / 3 + 1)],
                refusedAs: "segmentNanoseconds", .exceedsMaximum(3_074_457_345_618_258_602)),
        ]
        return (stories + (try alignedToTheCreation()), refusals)
    }

    /// SWS-13's variant: run only for an implementation whose profile declares it (the file names
    /// it beside the configuration).
    private static func alignedToTheCreation() throws(RateLimitInputError) -> [StoryDraft] {
        func creation(_ limit: Int64, _ count: Int64, of length: Int64) throws(RateLimitInputError)
            -> AnyRateLimitStrategy
        {
            .slidingWindowSegments(
                try SlidingWindowSegments(
                    limit: limit, segmentsPerWindow: count, segmentNanoseconds: length, alignment: .creation))
        }
        return [
            StoryDraft(
                "creation-segments",
                "aligned to the creation: segments start at the creation instant plus multiples of G",
                clauses: ["SWS-13"], try creation(3, 3, of: 10), createdAt: 7,
                [
                    (7, .acquire(1), allowed(2), "segment 0, [7, 17)"),
                    (22, .acquire(2), allowed(0), "segment 1, [17, 27): U = 3"),
                    (36, .acquire(1), rejected(1), "segment 0 slides out at 7 + 3·10 = 37, not 30"),
                    (37, .acquire(1), allowed(0), "segments 1 … 3 in force: U = 2, then 3"),
                    (47, .acquire(0), allowed(2), "segment 1 slid out at 47"),
                ]),
            StoryDraft(
                "creation-reset-reanchors",
                "aligned to the creation: a reset starts the segments again from its instant",
                clauses: ["SWS-13", "SWS-9"], try creation(2, 2, of: 5), createdAt: 3,
                [
                    (4, .acquire(2), allowed(0), "segment 0, [3, 8)"),
                    (6, .reset, allowed(2), "as created at 6: segments [6, 11), [11, 16) …"),
                    (6, .acquire(2), allowed(0), "segment 0, [6, 11)"),
                    (15, .acquire(1), rejected(1), "it slides out at 6 + 2·5 = 16, not 13"),
                    (16, .acquire(1), allowed(1), "segment 2, [16, 21)"),
                ]),
            StoryDraft(
                "creation-reconfigure-keeps-anchor",
                "aligned to the creation: a reconfigure keeps the anchor; kept permits go to their segment's last instant",
                clauses: ["SWS-13", "SWS-10"], try creation(3, 3, of: 10), createdAt: 7,
                [
                    (8, .acquire(2), allowed(1), "segment 0, [7, 17)"),
                    (
                        20, .reconfigure(try creation(3, 2, of: 4)), allowed(1),
                        "the 2 go to 16, the last instant of [7, 17): new segment ⌊(16 − 7)/4⌋ = 2, [15, 19)"
                    ),
                    (22, .acquire(2), rejected(1), "U = 2: new segment 2 slides out at 7 + (2 + 2)·4 = 23"),
                    (23, .acquire(2), allowed(1), "it has: U = 0, then 2"),
                ]),
        ]
    }
}
