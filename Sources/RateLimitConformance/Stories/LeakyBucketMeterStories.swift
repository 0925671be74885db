import RateLimitCore

// Spec/LeakyBucketMeter.md: a bucket of C permits of water leaking R permits every P ns; the
// level λ is in units (one permit is P units, R units leak per ns). An acquire of n is admitted
// iff λ + n·P ≤ C·P (LBM-4); remaining is ⌊(C·P − λ) / P⌋ (LBM-5); a refusal waits
// ⌈(λ + n·P − C·P) / R⌉ ns (LBM-6).

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
                    (0, .acquire(0), allowed(2), "initial level 2 of 4: room for 2"),
                    (0, .acquire(3), rejected(10), "20 + 30 − 40 = 10 units to leak at 1 per ns"),
                    (0, .acquire(2), allowed(0), "fills it"),
                ]),
            StoryDraft(
                "leak-edge", "one permit of room appears exactly one period after the bucket filled",
                clauses: ["LBM-3", "LBM-5"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "fills it at 0"),
                    (9, .acquire(1), rejected(1), "9 of 10 units leaked: one before"),
                    (10, .acquire(0), allowed(1), "at: room for one"),
                    (10, .acquire(1), allowed(0), "takes it"),
                    (11, .acquire(1), rejected(9), "one after: 1 unit leaked, 9 to go"),
                    (30, .acquire(0), allowed(2), "20 units leaked since 10"),
                    (1_000, .acquire(0), allowed(3), "empty: the level never goes below 0"),
                ]),
            StoryDraft(
                "weighted-rounds-up", "0.3 permits leak per ns: the wait is rounded up, then exact",
                clauses: ["LBM-4", "LBM-6"], try meter(5, 3, per: 10, level: 5),
                [
                    (0, .acquire(2), rejected(7), "20 units to leak at 3 per ns: ⌈20/3⌉ = 7"),
                    (6, .acquire(2), rejected(1), "18 leaked: 2 units over, ⌈2/3⌉ = 1"),
                    (7, .acquire(2), allowed(0), "21 leaked: 29 + 20 = 49 ≤ 50"),
                ]),
            StoryDraft(
                "never", "more than capacity, or an admission past the end of the timeline, is never allowed",
                clauses: ["LBM-7", "CORE-7"], try meter(1, 1, per: 10), createdAt: end(10),
                [
                    (end(10), .acquire(2), never, "2 > capacity 1"),
                    (end(10), .acquire(1), allowed(0), "fills it 10 ns before the end"),
                    (end(10), .acquire(1), rejected(10), "room at Int64.max exactly"),
                    (end(), .acquire(1), allowed(0), "at Int64.max"),
                    (end(), .acquire(1), never, "room would come at Int64.max + 10"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the room; release and negative permits are invalid",
                clauses: ["LBM-8"], threePerTen,
                [
                    (0, .acquire(1), allowed(2), "1 of 3"),
                    (0, .acquire(0), allowed(2), "a query takes nothing"),
                    (0, .release(1), releaseNotSupported, "water cannot be released"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(2), allowed(0), "the invalid events changed nothing"),
                ]),
            StoryDraft(
                "reset-to-initial-level", "reset restores the initial level at the latest instant",
                clauses: ["LBM-9"], try meter(2, 1, per: 10, level: 1),
                [
                    (0, .acquire(1), allowed(0), "1 + 1 = 2: full"),
                    (50, .reset, allowed(1), "the initial level 1, not the empty bucket 50 ns of leak would give"),
                    (40, .acquire(1), allowed(0), "evaluated at 50"),
                    (59, .acquire(1), rejected(1), "the leak counts from 50"),
                    (60, .acquire(1), allowed(0), "one period after the reset"),
                ]),
            StoryDraft(
                "reconfigure-keeps-room", "reconfigure keeps the room (the token bucket's tokens), capped",
                clauses: ["LBM-10"], try meter(10, 1, per: 10),
                [
                    (0, .acquire(4), allowed(6), "room for 6 of 10"),
                    (
                        5, .reconfigure(try meter(4, 1, per: 20)), allowed(4),
                        "6.5 permits of room, capped at 4: level 0"
                    ),
                    (5, .reconfigure(try meter(10, 1, per: 10)), allowed(4), "room 4 kept: level 6, not 0"),
                    (14, .acquire(0), allowed(4), "9 units leaked"),
                    (15, .acquire(0), allowed(5), "a permit of room 10 ns after 5"),
                ]),
            StoryDraft(
                "interval-bound", "over [0, 20] at most capacity + 2 permits", clauses: ["LBM-11"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "the capacity"),
                    (10, .acquire(1), allowed(0), "the permit leaked by 10"),
                    (20, .acquire(1), allowed(0), "by 20: 5 = 3 + ⌊1·20/10⌋ admitted over [0, 20]"),
                    (20, .acquire(1), rejected(10), "a sixth would break the bound"),
                ]),
            StoryDraft(
                "same-as-token-bucket", "the token bucket's go-backward-time trace gives the same answers",
                clauses: ["LBM-12", "CORE-10"], try meter(3, 10, per: 1_000_000_000),
                [
                    (
                        1_100_000_000, .acquire(1), allowed(2),
                        "t1: room for 2 more, as token-bucket/go-backward-time step 1"
                    ),
                    (1_000_000_000, .acquire(1), allowed(1), "t0 is evaluated at t1"),
                    (1_000_000_000, .acquire(1), allowed(0), "full, still at t1"),
                    (1_000_000_000, .acquire(1), rejected(200_000_000), "room at t1 + 100 ms, 200 ms after t0"),
                    (1_100_000_000, .acquire(1), rejected(100_000_000), "t1 again: still full"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a query and a never-allowed acquire at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "LBM-3"], threePerTen,
                [
                    (0, .acquire(3), allowed(0), "fills it at 0"),
                    (30, .acquire(0), allowed(3), "a query at 30: all leaked"),
                    (5, .acquire(1), rejected(5), "the query recorded nothing: evaluated at 5"),
                    (30, .acquire(4), never, "4 > capacity 3"),
                    (5, .acquire(1), rejected(5), "the never-allowed acquire recorded nothing either"),
                    (30, .acquire(3), allowed(0), "at 30"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "LBM-1"], threePerTen,
                steps: [
                    DraftStep(0, .acquire(2), allowed(1), "level 2 of 3"),
                    DraftStep(
                        30,
                        reconfigureTo: [
                            ("capacity", 3), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 10),
                            ("initialLevel", 4),
                        ], invalid("initialLevel", .exceedsMaximum(3)), "an initial level above the capacity 3 (LBM-1)"),
                    DraftStep(5, .acquire(0), allowed(1), "evaluated at 5: 1.5 permits of water, no leak to 30"),
                    DraftStep(10, .acquire(2), allowed(0), "the old configuration: level 1 + 2 = 3"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-capacity", "a capacity below 1",
                [("capacity", 0), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 1)],
                refusedAs: "capacity", .mustBePositive),
            RefusalDraft(
                "refuse-zero-leak", "nothing leaks",
                [("capacity", 1), ("leakPermitsPerPeriod", 0), ("periodNanoseconds", 1)],
                refusedAs: "leakPermitsPerPeriod", .mustBePositive),
            RefusalDraft(
                "refuse-zero-period", "a period of 0",
                [("capacity", 1), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 0)],
                refusedAs: "periodNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-level-above-capacity", "an initial level above capacity",
                [("capacity", 3), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 1), ("initialLevel", 4)],
                refusedAs: "initialLevel", .exceedsMaximum(3)),
            RefusalDraft(
                "refuse-drain-past-timeline", "draining would take 2 × Int64.max ns",
                [("capacity", Int64.max), ("leakPermitsPerPeriod", 1), ("periodNanoseconds", 2)],
                refusedAs: "periodNanoseconds", .exceedsMaximum(1)),
        ]
        return (stories, refusals)
    }
}
