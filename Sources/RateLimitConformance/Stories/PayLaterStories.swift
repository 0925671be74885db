import RateLimitCore

// Spec/PayLater.md: burst B, emission interval T, tolerance τ = B·T. In debt at e iff
// tat − e > τ − T (PL-3); not in debt, an acquire of any size is admitted and
// tat := max(tat, e) + n·T (PL-4); remaining is Int64.max when not in debt after the event, 0 when
// in debt (PL-5); in debt, every acquire is admitted at a = tat − (τ − T) (PL-6).

extension VectorCatalogue {
    static func payLater() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func payLater(_ burst: Int64, every interval: Int64, initial: Int64? = nil) throws(RateLimitInputError)
            -> AnyRateLimitStrategy
        {
            .payLater(try PayLater(burst: burst, emissionIntervalNanoseconds: interval, initialTokens: initial))
        }
        let burstThree = try payLater(3, every: 10)  // τ = 30: in debt when tat − e > 20
        let single = try payLater(1, every: 10)  // τ = 10: in debt when tat > e
        let any = Int64.max
        let stories = [
            StoryDraft(
                "any-size-when-not-in-debt",
                "a request of any size is admitted when the limiter is not in debt, and the next one pays for it",
                clauses: ["PL-4", "PL-7"], single,
                [
                    (0, .acquire(3), allowed(0), "3 on a burst of 1: admitted, tat = 0 + 30 = 30, in debt"),
                    (0, .acquire(1), rejected(30), "paid at 30 − (10 − 10) = 30"),
                    (29, .acquire(1), rejected(1), "one before"),
                    (30, .acquire(0), allowed(any), "tat = 30 = e: not in debt, any size"),
                    (30, .acquire(1_000), allowed(0), "tat = 30 + 10 000 = 10 030"),
                    (10_029, .acquire(1), rejected(1), "paid at 10 030"),
                ]),
            StoryDraft(
                "boundary-conforms", "tat − e = τ − T is not in debt: one before, at, one after",
                clauses: ["PL-3", "PL-4"],
                burstThree,
                [
                    (0, .acquire(3), allowed(0), "tat = 30; 30 − 0 > 20: in debt"),
                    (9, .acquire(1), rejected(1), "30 − 9 = 21 > 20: admitted at 30 − 20 = 10"),
                    (10, .acquire(1), allowed(0), "30 − 10 = 20: the boundary is admitted; tat = 40"),
                    (19, .acquire(0), allowed(0), "40 − 19 = 21 > 20"),
                    (20, .acquire(0), allowed(any), "40 − 20 = 20: not in debt"),
                    (21, .acquire(0), allowed(any), "40 − 21 = 19"),
                ]),
            StoryDraft(
                "remaining-any-size-or-none", "remaining is Int64.max when not in debt after the event, 0 in debt",
                clauses: ["PL-5"], burstThree,
                [
                    (0, .acquire(1), allowed(any), "tat = 10; 10 ≤ 20"),
                    (0, .acquire(2), allowed(0), "tat = 30; 30 > 20"),
                    (5, .acquire(0), allowed(0), "30 − 5 = 25 > 20"),
                    (10, .acquire(0), allowed(any), "30 − 10 = 20"),
                    (10, .acquire(5), allowed(0), "tat = 30 + 50 = 80"),
                ]),
            StoryDraft(
                "retry-after-independent-of-size",
                "in debt, every size is admitted at the instant the debt is paid", clauses: ["PL-6"], burstThree,
                [
                    (0, .acquire(7), allowed(0), "7 > burst, admitted: tat = 70"),
                    (0, .acquire(1), rejected(50), "admitted at 70 − 20 = 50"),
                    (0, .acquire(100), rejected(50), "the same instant for 100"),
                    (49, .acquire(3), rejected(1), "one before"),
                    (50, .acquire(100), allowed(0), "at 50: tat = 70 + 1 000 = 1 070"),
                    (50, .acquire(1), rejected(1_000), "admitted at 1 070 − 20 = 1 050"),
                ]),
            StoryDraft(
                "backward-time",
                "an earlier now is evaluated at the last instant; a stale reset cannot restart the schedule in the past",
                clauses: ["PL-3", "CORE-10"], try payLater(2, every: 10),
                [
                    (100, .acquire(1), allowed(any), "tat = 110, last = 100; 110 − 100 = 10 ≤ τ − T = 10"),
                    (90, .reset, allowed(any), "evaluated at 100: tat = last = 100"),
                    (90, .acquire(2), allowed(0), "evaluated at 100: tat = 120"),
                    (100, .acquire(1), rejected(10), "admitted at 120 − 10 = 110 (a reset at 90 would admit now)"),
                    (95, .acquire(0), allowed(0), "evaluated at 100: 120 − 100 = 20 > 10"),
                    (110, .acquire(1), allowed(0), "120 − 110 = 10: tat = 130"),
                ]),
            StoryDraft(
                "never-past-the-end", "a debt paid past the end of the timeline is never allowed",
                clauses: ["PL-6", "CORE-7"], single, createdAt: end(5),
                [
                    (end(5), .acquire(1), allowed(0), "tat = Int64.max − 5 + 10 = Int64.max + 5, in an unsigned word"),
                    (end(5), .acquire(1), never, "paid at Int64.max + 5"),
                    (end(), .acquire(3), never, "every size waits for the same instant"),
                    (end(), .acquire(0), allowed(0), "in debt at the end of the timeline"),
                ]),
            StoryDraft(
                "debt-past-the-end",
                "an admission whose cost runs past the end of the timeline saturates; nothing more until a reset",
                clauses: ["PL-2", "PL-7", "PL-10"], try payLater(2, every: 10),
                [
                    (0, .acquire(any), allowed(0), "10 × Int64.max runs past the end: tat = Int64.max + 1 + 20"),
                    (5, .acquire(1), never, "paid at Int64.max + 21 − 10 = Int64.max + 11"),
                    (end(), .acquire(0), allowed(0), "still in debt at the end of the timeline"),
                    (
                        end(), .reconfigure(try payLater(1, every: 1)), allowed(0),
                        "the debt, paid at Int64.max + 1, stays past the end: tat = Int64.max + 2"
                    ),
                    (end(), .acquire(1), never, "paid at Int64.max + 2 − 0"),
                    (end(), .reset, allowed(any), "a reset forgets the debt: tat = Int64.max"),
                    (end(), .acquire(1), allowed(0), "tat = Int64.max + 1, in debt"),
                ]),
            StoryDraft(
                "zero-release-invalid", "acquire(0) reads the quota; release and negative permits are invalid",
                clauses: ["PL-8"], burstThree,
                [
                    (0, .acquire(0), allowed(any), "a rested limiter: any size"),
                    (0, .release(1), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(3), allowed(0), "the invalid events changed nothing: tat = 30"),
                    (0, .acquire(0), allowed(0), "30 > 20: in debt"),
                ]),
            StoryDraft(
                "reset-initial-tokens", "a new or reset limiter holds its initial tokens", clauses: ["PL-2", "PL-9"],
                try payLater(3, every: 10, initial: 1),
                [
                    (0, .acquire(0), allowed(any), "created with 1 token: tat = 0 + (3 − 1)·10 = 20 ≤ 20"),
                    (0, .acquire(1), allowed(0), "tat = 30"),
                    (5, .acquire(1), rejected(5), "admitted at 30 − 20 = 10"),
                    (5, .reset, allowed(any), "tat = 5 + 20 = 25"),
                    (5, .acquire(2), allowed(0), "tat = 25 + 20 = 45"),
                    (5, .acquire(1), rejected(20), "admitted at 45 − 20 = 25"),
                ]),
            StoryDraft(
                "starts-in-debt", "initial tokens of 0: a new or reset limiter first pays one interval",
                clauses: ["PL-9"], try payLater(1, every: 10, initial: 0),
                [
                    (0, .acquire(1), rejected(10), "tat = 0 + 10: admitted at 10"),
                    (10, .acquire(1), allowed(0), "tat = 20"),
                    (10, .reset, allowed(0), "tat = 10 + 10 = 20: in debt"),
                    (19, .acquire(5), rejected(1), "admitted at 20"),
                    (20, .acquire(5), allowed(0), "tat = 20 + 50 = 70"),
                ]),
            StoryDraft(
                "reconfigure-keeps-tokens", "without debt, reconfigure keeps the tokens, rounded down and capped",
                clauses: ["PL-10"], burstThree,
                [
                    (0, .acquire(1), allowed(any), "tat = 10: A = 30 − 10 = 20 units of 10"),
                    (
                        0, .reconfigure(try payLater(5, every: 4)), allowed(any),
                        "⌊20·4/10⌋ = 8 units of 4: tat = 0 + 20 − 8 = 12 ≤ 16"
                    ),
                    (0, .acquire(2), allowed(0), "tat = 12 + 8 = 20 > 16"),
                    (3, .acquire(1), rejected(1), "admitted at 20 − 16 = 4"),
                    (4, .acquire(1), allowed(0), "tat = 24"),
                    (
                        4, .reconfigure(try payLater(1, every: 10)), allowed(0),
                        "A = 20 − 20 = 0: tat = 4 + 10 − 0 = 14, in debt"
                    ),
                    (13, .acquire(1), rejected(1), "admitted at 14"),
                ]),
            StoryDraft(
                "reconfigure-keeps-debt", "in debt, reconfigure keeps the instant the debt is paid",
                clauses: ["PL-10"], try payLater(2, every: 10),
                [
                    (0, .acquire(5), allowed(0), "tat = 50: p = 50 > τ = 20, a debt paid at 50 − 20 = 30"),
                    (
                        0, .reconfigure(try payLater(4, every: 5)), allowed(0),
                        "paid at 30 still: tat = 30 + 20 = 50; 50 > 15"
                    ),
                    (34, .acquire(1), rejected(1), "admitted at 50 − 15 = 35"),
                    (35, .acquire(2), allowed(0), "tat = 50 + 10 = 60"),
                    (35, .acquire(0), allowed(0), "60 − 35 = 25 > 15"),
                ]),
            StoryDraft(
                "reconfigure-caps-at-burst", "a full burst carried into a smaller one is capped at the new burst",
                clauses: ["PL-10"], burstThree,
                [
                    (0, .reconfigure(single), allowed(any), "30 units available, capped at τ' = 10: tat = 0"),
                    (0, .acquire(2), allowed(0), "tat = 20"),
                    (0, .acquire(1), rejected(20), "admitted at 20 − 0"),
                ]),
            StoryDraft(
                "interval-bound", "all but the last acquire total at most B − 1 + ⌊(e_j − e_i)/T⌋",
                clauses: ["PL-11"], burstThree,
                [
                    (0, .acquire(3), allowed(0), "tat = 30"),
                    (10, .acquire(1), allowed(0), "30 − 10 = 20: tat = 40"),
                    (20, .acquire(1), allowed(0), "before it 4 = 2 + ⌊20/10⌋ over [0, 20]: tat = 50"),
                    (20, .acquire(1), rejected(10), "a fifth before a last would break the bound"),
                    (30, .acquire(9), allowed(0), "before it 5 = 2 + ⌊30/10⌋; the last of any size: tat = 140"),
                    (30, .acquire(1), rejected(90), "admitted at 140 − 20 = 120"),
                ]),
            StoryDraft(
                "same-as-gcra", "one permit at a time: GCRA's answers (gcra/same-as-token-bucket), remaining aside",
                clauses: ["PL-12"], burstThree,
                [
                    (0, .acquire(1), allowed(any), "tat = 10 (GCRA: remaining 2)"),
                    (0, .acquire(1), allowed(any), "tat = 20 (GCRA: 1)"),
                    (0, .acquire(1), allowed(0), "tat = 30 (GCRA: 0)"),
                    (9, .acquire(1), rejected(1), "one before the permit of 10, as GCRA"),
                    (10, .acquire(0), allowed(any), "at it (GCRA: 1)"),
                    (10, .acquire(1), allowed(0), "takes it: tat = 40"),
                    (11, .acquire(1), rejected(9), "one after: the next at 20"),
                    (19, .acquire(1), rejected(1), "one before 20"),
                    (20, .acquire(1), allowed(0), "at 20: tat = 50"),
                    (21, .acquire(0), allowed(0), "50 − 21 = 29 > 20 (GCRA: 0)"),
                    (1_000, .acquire(0), allowed(any), "rested (GCRA: 3)"),
                ]),
            StoryDraft(
                "refusals-record-nothing", "a refused acquire and a query at a later instant record nothing",
                clauses: ["CORE-8", "CORE-10", "PL-3"], single,
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
                clauses: ["CORE-13", "PL-1"], burstThree,
                steps: [
                    DraftStep(0, .acquire(1), allowed(any), "tat = 10"),
                    DraftStep(
                        20,
                        reconfigureTo: [("burst", 3), ("emissionIntervalNanoseconds", 10), ("initialTokens", 4)],
                        invalid("initialTokens", .exceedsMaximum(3)), "4 initial tokens on a burst of 3 (PL-1)"),
                    DraftStep(
                        5, .acquire(0), allowed(any), "evaluated at 5: 10 − 5 = 5 ≤ 20; no instant recorded at 20"),
                    DraftStep(5, .acquire(3), allowed(0), "tat = 10 + 30 = 40"),
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
                "refuse-negative-initial-tokens", "initial tokens below 0",
                [("burst", 2), ("emissionIntervalNanoseconds", 1), ("initialTokens", -1)],
                refusedAs: "initialTokens", .mustNotBeNegative),
            RefusalDraft(
                "refuse-initial-tokens-above-burst", "initial tokens above the burst, checked before the tolerance",
                [("burst", 2), ("emissionIntervalNanoseconds", Int64.max), ("initialTokens", 3)],
                refusedAs: "initialTokens", .exceedsMaximum(2)),
            RefusalDraft(
                "refuse-tolerance-overflow", "burst × interval above Int64.max",
                [("burst", 2), ("emissionIntervalNanoseconds", Int64.max)],
                refusedAs: "emissionIntervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)),
        ]
        return (stories, refusals)
    }
}
