import RateLimitCore

// Spec/IntervalTokenBucket.md: C tokens at most, K tokens at each boundary j·I of a grid aligned
// to the origin (TBI-3); a refused acquire of n waits for the ⌈(n − k)/K⌉-th boundary after e (TBI-6).

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
                    (5, .acquire(3), allowed(0), "empties the bucket at 5"),
                    (9, .acquire(1), rejected(1), "one before the boundary 10"),
                    (10, .acquire(0), allowed(1), "at the boundary: one token"),
                    (10, .acquire(1), allowed(0), "takes it"),
                    (11, .acquire(1), rejected(9), "one after: the next boundary is 20"),
                    (19, .acquire(0), allowed(0), "nothing between boundaries"),
                    (20, .acquire(0), allowed(1), "the boundary 20"),
                    (35, .acquire(0), allowed(2), "boundaries 20 and 30 since 10"),
                ]),
            StoryDraft(
                "aligned-to-origin", "the grid is aligned to the origin: created at 5, the first token comes at 10",
                clauses: ["TBI-3"], try bucket(3, 1, every: 10, initial: 0), createdAt: 5,
                [
                    (9, .acquire(1), rejected(1), "empty; the boundary is 10, not 5 + 10"),
                    (10, .acquire(1), allowed(0), "5 ns after creation"),
                    (10, .acquire(1), rejected(10), "the next boundary is 20"),
                ]),
            StoryDraft(
                "created-on-boundary",
                "a bucket created, or reset, exactly on a boundary gets nothing from that boundary (TBI-3, CORE-12)",
                clauses: ["TBI-3", "TBI-9", "CORE-12"], try bucket(3, 1, every: 10, initial: 0), createdAt: 10,
                [
                    (10, .acquire(1), rejected(10), "created at 10: the boundary 10 is not after it; the next is 20"),
                    (19, .acquire(1), rejected(1), "one before 20"),
                    (20, .acquire(1), allowed(0), "the boundary 20"),
                    (30, .acquire(0), allowed(1), "the boundary 30"),
                    (30, .reset, allowed(0), "reset at 30: the initial 0 tokens, nothing from the boundary 30"),
                    (30, .acquire(1), rejected(10), "so the next token comes at 40"),
                ]),
            StoryDraft(
                "lumps-capped", "each boundary adds tokensPerInterval, capped at capacity", clauses: ["TBI-3"], lumpy,
                [
                    (10, .acquire(0), allowed(4), "one boundary: 4"),
                    (20, .acquire(0), allowed(8), "two: 8"),
                    (30, .acquire(0), allowed(10), "three: 12, capped at 10"),
                    (30, .acquire(10), allowed(0), "the capacity"),
                ]),
            StoryDraft(
                "weighted-waits-for-boundary", "a weighted acquire waits for the boundary that brings enough tokens",
                clauses: ["TBI-4", "TBI-6"], lumpy,
                [
                    (3, .acquire(6), rejected(17), "⌈6/4⌉ = 2 boundaries: 20"),
                    (19, .acquire(6), rejected(1), "4 tokens since 10; the boundary 20 brings 4 more"),
                    (20, .acquire(6), allowed(2), "8 tokens"),
                    (20, .acquire(3), rejected(10), "2 tokens: one boundary more, 30"),
                    (29, .acquire(3), rejected(1), "one before it"),
                ]),
            StoryDraft(
                "never", "more than capacity, or a boundary past the end of the timeline, is never allowed",
                clauses: ["TBI-7", "CORE-7"], try bucket(1, 1, every: 10), createdAt: end(17),
                [
                    (end(17), .acquire(2), never, "2 > capacity 1"),
                    (end(17), .acquire(1), allowed(0), "the initial token (Int64.max − 17 ends in 790)"),
                    (end(17), .acquire(1), rejected(10), "the last boundary, ...800 = Int64.max − 7"),
                    (end(7), .acquire(1), allowed(0), "at the last boundary"),
                    (end(3), .acquire(1), never, "the next boundary, ...810, lies past Int64.max"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["TBI-8"], oneEveryTen,
                [
                    (0, .acquire(0), allowed(3), "a full bucket"),
                    (0, .release(2), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-7), negativePermits, "negative permits"),
                    (0, .acquire(3), allowed(0), "the invalid events changed nothing"),
                ]),
            StoryDraft(
                "reset-keeps-grid", "reset restores the initial tokens; the grid does not move",
                clauses: ["TBI-9"], try bucket(3, 1, every: 10, initial: 0),
                [
                    (10, .acquire(1), allowed(0), "the token of the boundary 10"),
                    (15, .reset, allowed(0), "the initial 0 tokens"),
                    (19, .acquire(1), rejected(1), "the next boundary is 20, not 15 + 10"),
                    (20, .acquire(1), allowed(0), "at 20"),
                ]),
            StoryDraft(
                "reconfigure-new-grid",
                "reconfigure keeps tokens up to the new capacity; later boundaries follow the new grid",
                clauses: ["TBI-10"], try bucket(10, 1, every: 10),
                [
                    (0, .acquire(2), allowed(8), "8 of 10 left"),
                    (5, .reconfigure(try bucket(5, 2, every: 7)), allowed(5), "8 tokens, capped at the new capacity 5"),
                    (5, .acquire(5), allowed(0), "empties it"),
                    (6, .acquire(0), allowed(0), "no boundary of the new grid yet"),
                    (7, .acquire(0), allowed(2), "the new grid's boundary 7 brings 2"),
                    (14, .acquire(0), allowed(4), "and 14 two more"),
                ]),
            StoryDraft(
                "backward-time", "an earlier now is evaluated at the latest instant; no boundary is counted twice",
                clauses: ["TBI-3", "CORE-10"], oneEveryTen,
                [
                    (25, .acquire(3), allowed(0), "empties the bucket at 25"),
                    (15, .acquire(1), rejected(15), "evaluated at 25; the boundary 30 is 15 ns from 15"),
                    (29, .acquire(1), rejected(1), "the boundary 20 is not counted again"),
                    (30, .acquire(1), allowed(0), "at 30"),
                    (5, .acquire(1), rejected(35), "evaluated at 30; the boundary 40 is 35 ns from 5"),
                ]),
            StoryDraft(
                "interval-bound", "over [5, 25] at most capacity + 2 boundaries' tokens", clauses: ["TBI-11"],
                oneEveryTen,
                [
                    (5, .acquire(3), allowed(0), "the capacity"),
                    (10, .acquire(1), allowed(0), "the boundary 10"),
                    (20, .acquire(1), allowed(0), "the boundary 20: 5 = 3 + 1·(2 − 0) admitted over [5, 25]"),
                    (25, .acquire(1), rejected(5), "a sixth would break the bound; the boundary 30"),
                ]),
            StoryDraft(
                "lumps-equal-capacity", "tokensPerInterval = capacity behaves as a fixed window",
                clauses: ["TBI-12"], try bucket(3, 3, every: 10),
                [
                    (9, .acquire(3), allowed(0), "the whole lump at 9"),
                    (9, .acquire(1), rejected(1), "the next lump at 10"),
                    (10, .acquire(3), allowed(0), "a full lump at 10: 6 within 2 ns"),
                    (19, .acquire(1), rejected(1), "the next lump at 20"),
                    (20, .acquire(2), allowed(1), "2 of the lump at 20"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a refused acquire and a query at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "TBI-3"], try bucket(3, 1, every: 10, initial: 0),
                [
                    (10, .acquire(2), rejected(10), "1 token at 10; the second at 20"),
                    (5, .acquire(1), rejected(5), "the refusal recorded nothing: evaluated at 5"),
                    (10, .acquire(0), allowed(1), "a query at 10"),
                    (5, .acquire(1), rejected(5), "the query recorded nothing either"),
                    (10, .acquire(1), allowed(0), "the token of 10"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "TBI-1"], oneEveryTen,
                steps: [
                    DraftStep(0, .acquire(1), allowed(2), "2 of 3 left"),
                    DraftStep(
                        20,
                        reconfigureTo: [
                            ("capacity", 3), ("tokensPerInterval", 0), ("intervalNanoseconds", 10),
                            ("initialTokens", 3),
                        ], invalid("tokensPerInterval", .mustBePositive), "no tokens per interval is refused (TBI-1)"),
                    DraftStep(
                        5, .acquire(0), allowed(2), "evaluated at 5: the refused reconfigure recorded no instant"),
                    DraftStep(10, .acquire(3), allowed(0), "the old configuration: the boundary 10 brings the third"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-capacity", "a capacity below 1",
                [("capacity", 0), ("tokensPerInterval", 1), ("intervalNanoseconds", 1)],
                refusedAs: "capacity", .mustBePositive),
            RefusalDraft(
                "refuse-zero-tokens", "no tokens per interval",
                [("capacity", 1), ("tokensPerInterval", 0), ("intervalNanoseconds", 1)],
                refusedAs: "tokensPerInterval", .mustBePositive),
            RefusalDraft(
                "refuse-zero-interval", "an interval of 0",
                [("capacity", 1), ("tokensPerInterval", 1), ("intervalNanoseconds", 0)],
                refusedAs: "intervalNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-initial-above-capacity", "more initial tokens than capacity",
                [("capacity", 3), ("tokensPerInterval", 1), ("intervalNanoseconds", 1), ("initialTokens", 4)],
                refusedAs: "initialTokens", .exceedsMaximum(3)),
            RefusalDraft(
                "refuse-refill-past-timeline", "four boundaries of ⌊Int64.max/4⌋ + 1 ns exceed the timeline",
                [("capacity", 10), ("tokensPerInterval", 3), ("intervalNanoseconds", 2_305_843_009_213_693_952)],
                refusedAs: "intervalNanoseconds", .exceedsMaximum(2_305_843_009_213_693_951)),
        ]
        return (stories, refusals)
    }
}
