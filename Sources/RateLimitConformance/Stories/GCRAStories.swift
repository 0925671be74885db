import RateLimitCore

// Spec/GCRA.md: burst B, emission interval T, tolerance τ = B·T. An acquire of n costs c = n·T
// and is admitted iff (max(tat, e) − e) + c ≤ τ (GCRA-4); remaining = ⌊(τ − max(tat − e, 0)) / T⌋
// (GCRA-5); a refusal is admitted at tat + c − τ (GCRA-6).

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
                    (0, .acquire(3), allowed(0), "the burst: tat = 30 = τ"),
                    (9, .acquire(1), rejected(1), "(30 − 9) + 10 = 31 > 30: one before the boundary"),
                    (10, .acquire(1), allowed(0), "(30 − 10) + 10 = 30 = τ: the boundary conforms; tat = 40"),
                    (19, .acquire(0), allowed(0), "⌊(30 − 21)/10⌋ = 0"),
                    (20, .acquire(0), allowed(1), "⌊(30 − 20)/10⌋ = 1"),
                    (21, .acquire(0), allowed(1), "⌊(30 − 19)/10⌋ = 1"),
                ]),
            StoryDraft(
                "remaining-slack", "remaining counts whole emission intervals of slack", clauses: ["GCRA-5"],
                burstThree,
                [
                    (0, .acquire(1), allowed(2), "tat = 10: ⌊(30 − 10)/10⌋ = 2"),
                    (5, .acquire(0), allowed(2), "⌊(30 − 5)/10⌋ = 2: half an interval is no permit"),
                    (10, .acquire(0), allowed(3), "tat reached: a full burst"),
                    (14, .acquire(2), allowed(1), "tat = 14 + 20 = 34: ⌊(30 − 20)/10⌋ = 1"),
                    (15, .acquire(0), allowed(1), "⌊(30 − 19)/10⌋ = 1"),
                ]),
            StoryDraft(
                "weighted-retry-after", "a weighted acquire waits until its whole cost fits the tolerance",
                clauses: ["GCRA-6"], burstThree,
                [
                    (0, .acquire(3), allowed(0), "the burst: tat = 30"),
                    (0, .acquire(2), rejected(20), "admitted at 30 + 20 − 30 = 20"),
                    (19, .acquire(2), rejected(1), "(30 − 19) + 20 = 31 > 30"),
                    (20, .acquire(2), allowed(0), "(30 − 20) + 20 = 30: tat = 50"),
                ]),
            StoryDraft(
                "backward-time",
                "an earlier now is evaluated at the last instant; a stale reset cannot restart the schedule in the past",
                clauses: ["GCRA-3", "CORE-10"], try gcra(2, every: 10),
                [
                    (100, .acquire(1), allowed(1), "tat = 110, last = 100"),
                    (90, .reset, allowed(2), "evaluated at 100: tat = last = 100"),
                    (90, .acquire(2), allowed(0), "evaluated at 100: tat = 120"),
                    (100, .acquire(1), rejected(10), "admitted at 120 + 10 − 20 = 110 (a reset at 90 would admit now)"),
                    (95, .acquire(0), allowed(0), "evaluated at 100: ⌊(20 − 20)/10⌋ = 0"),
                    (110, .acquire(1), allowed(0), "at 110: tat = 130"),
                ]),
            StoryDraft(
                "retry-after-from-earlier-now",
                "a retry-after is measured from the event's own now; a reset with an earlier now starts at the last instant",
                clauses: ["GCRA-3", "GCRA-6", "CORE-10"], single,
                [
                    (100, .acquire(1), allowed(0), "tat = 110, last = 100"),
                    (95, .acquire(1), rejected(15), "evaluated at 100, admitted at 110: 15 ns from 95"),
                    (95, .reset, allowed(1), "a new limiter at 100, not at 95"),
                    (90, .acquire(1), allowed(0), "evaluated at 100: tat = 110"),
                    (109, .acquire(1), rejected(1), "admitted at 110 + 10 − 10 = 110"),
                ]),
            StoryDraft(
                "never", "more than the burst, or an admission past the end of the timeline, is never allowed",
                clauses: ["GCRA-7", "CORE-7"], single, createdAt: end(5),
                [
                    (end(5), .acquire(2), never, "2 > burst 1"),
                    (end(5), .acquire(1), allowed(0), "tat = Int64.max + 5, held in an unsigned word"),
                    (end(5), .acquire(1), never, "admitted at tat + 10 − 10 = Int64.max + 5"),
                    (end(), .acquire(1), never, "still Int64.max + 5"),
                    (end(), .acquire(0), allowed(0), "⌊(10 − 5)/10⌋ = 0 at the end of the timeline"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["GCRA-8"], burstThree,
                [
                    (0, .acquire(0), allowed(3), "a rested limiter: the whole burst"),
                    (0, .release(1), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(3), allowed(0), "the invalid events changed nothing"),
                ]),
            StoryDraft(
                "reset-full-burst", "reset gives a full burst at the reset instant", clauses: ["GCRA-9"], burstThree,
                [
                    (0, .acquire(3), allowed(0), "the burst: tat = 30"),
                    (5, .reset, allowed(3), "tat = last = 5: a full burst"),
                    (5, .acquire(3), allowed(0), "the burst again: tat = 35"),
                    (5, .acquire(1), rejected(10), "admitted at 35 + 10 − 30 = 15"),
                ]),
            StoryDraft(
                "reconfigure-keeps-tokens", "reconfigure keeps the available tokens, rounded down and capped",
                clauses: ["GCRA-10"], burstThree,
                [
                    (0, .acquire(1), allowed(2), "tat = 10: 20 units of 10 available"),
                    (
                        0, .reconfigure(try gcra(5, every: 4)), allowed(2),
                        "⌊20·4/10⌋ = 8 units of 4: tat = 0 + 20 − 8 = 12"
                    ),
                    (0, .acquire(2), allowed(0), "(12 − 0) + 8 = 20 = τ': tat = 20"),
                    (3, .acquire(1), rejected(1), "admitted at 20 + 4 − 20 = 4"),
                    (4, .acquire(1), allowed(0), "tat = 24"),
                    (4, .reconfigure(single), allowed(0), "nothing available: tat = 4 + 10 − 0 = 14"),
                    (13, .acquire(1), rejected(1), "admitted at 14 + 10 − 10 = 14"),
                ]),
            StoryDraft(
                "reconfigure-caps-at-burst", "a full burst carried into a smaller one is capped at the new burst",
                clauses: ["GCRA-10"], burstThree,
                [
                    (0, .reconfigure(single), allowed(1), "30 units available, capped at τ' = 10: tat = 0"),
                    (0, .acquire(1), allowed(0), "the one permit of the new burst"),
                    (0, .acquire(1), rejected(10), "admitted at 10 + 10 − 10 = 10"),
                ]),
            StoryDraft(
                "interval-bound", "over [0, 20] at most burst + 2 permits", clauses: ["GCRA-11"], burstThree,
                [
                    (0, .acquire(3), allowed(0), "the burst"),
                    (10, .acquire(1), allowed(0), "one per interval: tat = 40"),
                    (20, .acquire(1), allowed(0), "5 = 3 + ⌊20/10⌋ admitted over [0, 20]: tat = 50"),
                    (20, .acquire(1), rejected(10), "a sixth would break the bound"),
                ]),
            StoryDraft(
                "same-as-token-bucket", "the trace of the token bucket's refill-edge story gives the same answers",
                clauses: ["GCRA-12"], burstThree,
                [
                    (0, .acquire(3), allowed(0), "the burst, as token-bucket/refill-edge step 1"),
                    (9, .acquire(1), rejected(1), "one before the permit of 10, as its step 2"),
                    (10, .acquire(0), allowed(1), "at it: the query reads 1"),
                    (10, .acquire(1), allowed(0), "takes it"),
                    (11, .acquire(1), rejected(9), "one after: the next at 20"),
                    (19, .acquire(1), rejected(1), "one before 20"),
                    (20, .acquire(1), allowed(0), "at 20"),
                    (21, .acquire(0), allowed(0), "1 ns of slack is no permit"),
                    (1_000, .acquire(0), allowed(3), "rested: the whole burst"),
                ]),
            StoryDraft(
                "tolerance-at-the-limit", "a burst whose tolerance is Int64.max, near the end of the timeline",
                clauses: ["GCRA-2"], try gcra(7, every: Int64.max / 7), createdAt: end(),
                [
                    (end(), .acquire(7), allowed(0), "τ = 7·(Int64.max/7) = Int64.max: tat = 2·Int64.max, unsigned"),
                    (end(), .acquire(1), never, "admitted at Int64.max + Int64.max/7"),
                    (end(), .acquire(0), allowed(0), "no slack left"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a refused acquire and a query at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "GCRA-3"], single,
                [
                    (0, .acquire(1), allowed(0), "tat = 10, last = 0"),
                    (8, .acquire(1), rejected(2), "admitted at 10"),
                    (5, .acquire(1), rejected(5), "the refusal at 8 recorded nothing: evaluated at 5"),
                    (8, .acquire(0), allowed(0), "a query at 8"),
                    (5, .acquire(1), rejected(5), "the query recorded nothing either"),
                    (10, .acquire(1), allowed(0), "at 10"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "GCRA-1"], burstThree,
                steps: [
                    DraftStep(0, .acquire(1), allowed(2), "tat = 10"),
                    DraftStep(
                        20, reconfigureTo: [("burst", 2), ("emissionIntervalNanoseconds", Int64.max)],
                        invalid("emissionIntervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)),
                        "τ = 2 × Int64.max is refused: the interval may be ⌊Int64.max/2⌋ (GCRA-1)"),
                    DraftStep(
                        5, .acquire(0), allowed(2), "evaluated at 5: ⌊(30 − 5)/10⌋ = 2; no instant recorded at 20"),
                    DraftStep(10, .acquire(3), allowed(0), "the old burst of 3"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-burst", "a burst below 1", [("burst", 0), ("emissionIntervalNanoseconds", 1)],
                refusedAs: "burst", .mustBePositive),
            RefusalDraft(
                "refuse-zero-interval", "an emission interval of 0",
                [("burst", 1), ("emissionIntervalNanoseconds", 0)],
                refusedAs: "emissionIntervalNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-tolerance-overflow", "burst × interval above Int64.max",
                [("burst", 2), ("emissionIntervalNanoseconds", Int64.max)],
                refusedAs: "emissionIntervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)),
        ]
        return (stories, refusals)
    }
}
