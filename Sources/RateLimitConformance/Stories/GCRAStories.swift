import RateLimitCore

extension VectorCatalogue {
    static func gcra() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func gcra(_ burst: Int64, every interval: Int64) throws(RateLimitInputError) -> AnyRateLimitStrategy {
            .gcra(try GCRA(burst: burst, emissionIntervalNanoseconds: interval))
        }
        let burstThree = try gcra(3, every: 10)
        let single = try gcra(1, every: 10)
        let stories = [
            StoryDraft(
                "boundary-conforms", "now = tat + cost − τ conforms: one before, at, one after",
                clauses: ["GCRA-4"], burstThree,
                [
                    (0, .acquire(3)), (9, .acquire(1)), (10, .acquire(1)), (19, .acquire(0)), (20, .acquire(0)),
                    (21, .acquire(0)),
                ]),
            StoryDraft(
                "remaining-slack", "remaining counts whole emission intervals of slack", clauses: ["GCRA-5"],
                burstThree,
                [
                    (0, .acquire(1)), (5, .acquire(0)), (10, .acquire(0)), (14, .acquire(2)), (15, .acquire(0)),
                ]),
            StoryDraft(
                "weighted-retry-after", "a weighted acquire waits until its whole cost fits the tolerance",
                clauses: ["GCRA-6"], burstThree,
                [
                    (0, .acquire(3)), (0, .acquire(2)), (19, .acquire(2)), (20, .acquire(2)),
                ]),
            StoryDraft(
                "backward-time",
                "an earlier now is evaluated at the last instant; a stale reset cannot restart the schedule in the past",
                clauses: ["GCRA-3", "CORE-10"], try gcra(2, every: 10),
                [
                    (100, .acquire(1)), (90, .reset), (90, .acquire(2)), (100, .acquire(1)), (95, .acquire(0)),
                    (110, .acquire(1)),
                ]),
            StoryDraft(
                "never", "more than the burst, or an admission past the end of the timeline, is never allowed",
                clauses: ["GCRA-7", "CORE-7"], single, createdAt: end(5),
                [
                    (end(5), .acquire(2)), (end(5), .acquire(1)), (end(5), .acquire(1)), (end(), .acquire(1)),
                    (end(), .acquire(0)),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["GCRA-8"], burstThree,
                [
                    (0, .acquire(0)), (0, .release(1)), (0, .acquire(-1)), (0, .acquire(3)),
                ]),
            StoryDraft(
                "reset-full-burst", "reset gives a full burst at the reset instant", clauses: ["GCRA-9"], burstThree,
                [
                    (0, .acquire(3)), (5, .reset), (5, .acquire(3)), (5, .acquire(1)),
                ]),
            StoryDraft(
                "reconfigure-keeps-tokens", "reconfigure keeps the available tokens, rounded down and capped",
                clauses: ["GCRA-10"], burstThree,
                [
                    (0, .acquire(1)), (0, .reconfigure(try gcra(5, every: 4))), (0, .acquire(2)), (3, .acquire(1)),
                    (4, .acquire(1)),
                    (4, .reconfigure(single)), (13, .acquire(1)),
                ]),
            StoryDraft(
                "interval-bound", "over [0, 20] at most burst + 2 permits", clauses: ["GCRA-11"], burstThree,
                [
                    (0, .acquire(3)), (10, .acquire(1)), (20, .acquire(1)), (20, .acquire(1)),
                ]),
            StoryDraft(
                "same-as-token-bucket", "the trace of the token bucket's refill-edge story gives the same answers",
                clauses: ["GCRA-12"], burstThree,
                [
                    (0, .acquire(3)), (9, .acquire(1)), (10, .acquire(0)), (10, .acquire(1)), (11, .acquire(1)),
                    (19, .acquire(1)), (20, .acquire(1)), (21, .acquire(0)), (1_000, .acquire(0)),
                ]),
            StoryDraft(
                "tolerance-at-the-limit", "a burst whose tolerance is Int64.max, near the end of the timeline",
                clauses: ["GCRA-2"], try gcra(7, every: Int64.max / 7), createdAt: end(),
                [
                    (end(), .acquire(7)), (end(), .acquire(1)), (end(), .acquire(0)),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a refused acquire and a query at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "GCRA-3"], single,
                [
                    (0, .acquire(1)), (8, .acquire(1)), (5, .acquire(1)), (8, .acquire(0)), (5, .acquire(1)),
                    (10, .acquire(1)),
                ]),
        ]
        let refusals = [
            RefusalDraft("refuse-zero-burst", "a burst below 1", [("burst", 0), ("emissionIntervalNanoseconds", 1)]),
            RefusalDraft(
                "refuse-zero-interval", "an emission interval of 0", [("burst", 1), ("emissionIntervalNanoseconds", 0)]),
            RefusalDraft(
                "refuse-tolerance-overflow", "burst × interval above Int64.max",
                [("burst", 2), ("emissionIntervalNanoseconds", Int64.max)]),
        ]
        return (stories, refusals)
    }
}
