import RateLimitCore

// Spec/WarmUp.md: pay later (burst B, interval T, τ = B·T, in debt iff tat − e > τ − T) whose
// permits cost more when cold. Coldness at e: σ_e = min(P, σ + max(0, e − tat)) (WU-3); an
// acquire of n spends s = min(n·T, σ_e) and costs n·T + ⌈(u(σ_e)² − u(σ_e − s)²) / 2P⌉ with
// u(x) = max(0, 2x − P) (WU-4); remaining, retry-after and never allowed are pay later's.

extension VectorCatalogue {
    static func warmUp() throws(RateLimitInputError) -> ([StoryDraft], [RefusalDraft]) {
        func warmUp(_ burst: Int64, every interval: Int64, period: Int64) throws(RateLimitInputError)
            -> AnyRateLimitStrategy
        {
            .warmUp(try WarmUp(burst: burst, emissionIntervalNanoseconds: interval, warmUpPeriodNanoseconds: period))
        }
        let guava = try warmUp(1, every: 100, period: 1_000)  // Guava's rate 10/s, warm-up 1 s, 10^6 times smaller
        let small = try warmUp(1, every: 10, period: 20)
        let any = Int64.max
        let stories = [
            StoryDraft(
                "guava-ramp", "from cold, permits cost 280, 240, 200, 160, 120, then the stable 100 (Guava's ramp)",
                clauses: ["WU-4"], guava,
                [
                    (0, .acquire(1), allowed(0), "σ 1000 → 900: u 1000 → 800, (10^6 − 640 000)/2000 = 180: tat = 280"),
                    (279, .acquire(1), rejected(1), "in debt until 280"),
                    (280, .acquire(1), allowed(0), "σ 900 → 800: (640 000 − 360 000)/2000 = 140: tat = 520"),
                    (520, .acquire(1), allowed(0), "σ 800 → 700: (360 000 − 160 000)/2000 = 100: tat = 720"),
                    (720, .acquire(1), allowed(0), "σ 700 → 600: (160 000 − 40 000)/2000 = 60: tat = 880"),
                    (880, .acquire(1), allowed(0), "σ 600 → 500 = P/2: 40 000/2000 = 20: tat = 1000, after P"),
                    (1_000, .acquire(1), allowed(0), "below the threshold: the stable 100, tat = 1100"),
                    (1_099, .acquire(1), rejected(1), "in debt until 1100"),
                ]),
            StoryDraft(
                "cools-when-idle", "each idle nanosecond past tat adds a nanosecond of coldness, up to the period",
                clauses: ["WU-3"], guava,
                [
                    (0, .acquire(5), allowed(0), "σ 1000 → 500: 500 + 10^6/2000 = 1000: tat = 1000"),
                    (1_000, .acquire(1), allowed(0), "no idle time: σ 500, the stable 100, tat = 1100, σ 400"),
                    (1_300, .acquire(1), allowed(0), "200 idle: σ 600 → 500, 100 + 40 000/2000 = 120, tat = 1420"),
                    (1_420, .acquire(1), allowed(0), "σ 500 → 400: 100, tat = 1520"),
                    (5_000, .acquire(1), allowed(0), "σ = min(1000, 400 + 3480): cold again, 280: tat = 5280"),
                    (5_279, .acquire(1), rejected(1), "in debt until 5280"),
                ]),
            StoryDraft(
                "remaining-any-size-or-none", "remaining is pay later's: Int64.max when not in debt, 0 in debt",
                clauses: ["WU-5"], try warmUp(2, every: 10, period: 40),
                [
                    (0, .acquire(0), allowed(any), "rested and cold: any size"),
                    (0, .acquire(1), allowed(0), "σ 40 → 30: 10 + (1600 − 400)/80 = 25: tat = 25 > 0 + 10"),
                    (14, .acquire(0), allowed(0), "25 − 14 = 11 > τ − T = 10"),
                    (15, .acquire(0), allowed(any), "25 − 15 = 10"),
                ]),
            StoryDraft(
                "retry-after-at-the-paid-instant", "in debt, every size waits for the instant the debt is paid",
                clauses: ["WU-6"], guava,
                [
                    (0, .acquire(3), allowed(0), "σ 1000 → 700: 300 + (10^6 − 160 000)/2000 = 720: tat = 720"),
                    (0, .acquire(1), rejected(720), "paid at 720"),
                    (0, .acquire(50), rejected(720), "the same instant for 50"),
                    (719, .acquire(2), rejected(1), "one before"),
                    (720, .acquire(2), allowed(0), "σ 700 → 500: 200 + 160 000/2000 = 280: tat = 1000, as acquire(5)"),
                ]),
            StoryDraft(
                "ramp-rounded-up",
                "each acquire's ramp area is rounded up; one acquire or three differ by the rounding",
                clauses: ["WU-4", "WU-11"], try warmUp(1, every: 1, period: 3),
                [
                    (0, .acquire(1), allowed(0), "σ 3 → 2: u 3 → 1, ⌈8/6⌉ = 2: cost 3, tat = 3"),
                    (2, .acquire(1), rejected(1), "in debt until 3"),
                    (3, .acquire(1), allowed(0), "σ 2 → 1: u 1 → 0, ⌈1/6⌉ = 1: cost 2, tat = 5"),
                    (5, .acquire(1), allowed(0), "σ 1 → 0: u 0: cost 1, tat = 6"),
                    (6, .acquire(0), allowed(any), "ramp charged 2 + 1 = 3 for an exact 8/6 + 1/6 = P/2"),
                    (6, .reset, allowed(any), "cold again: tat = 6, σ = 3"),
                    (6, .acquire(3), allowed(0), "σ 3 → 0 at once: 3 + ⌈9/6⌉ = 5: tat = 11"),
                    (10, .acquire(1), rejected(1), "in debt until 11"),
                ]),
            StoryDraft(
                "backward-time", "an earlier now is evaluated at the last instant, coldness included",
                clauses: ["WU-3", "CORE-10"], small,
                [
                    (100, .acquire(1), allowed(0), "σ = 20 → 10: 10 + 400/40 = 20: tat = 120, last = 100"),
                    (90, .reset, allowed(any), "evaluated at 100: tat = 100, cold"),
                    (90, .acquire(1), allowed(0), "evaluated at 100: cost 20, tat = 120"),
                    (100, .acquire(1), rejected(20), "paid at 120"),
                    (95, .acquire(0), allowed(0), "evaluated at 100: in debt"),
                    (120, .acquire(1), allowed(0), "σ 10 is below P/2: the stable 10, tat = 130"),
                ]),
            StoryDraft(
                "never-past-the-end", "a debt paid past the end of the timeline is never allowed",
                clauses: ["WU-6", "WU-7", "CORE-7"], small, createdAt: end(5),
                [
                    (end(5), .acquire(1), allowed(0), "cold: cost 20, tat = Int64.max − 5 + 20 = Int64.max + 15"),
                    (end(5), .acquire(1), never, "paid at Int64.max + 15"),
                    (end(), .acquire(0), allowed(0), "in debt at the end of the timeline"),
                ]),
            StoryDraft(
                "debt-past-the-end", "a cost past the end of the timeline saturates; a reset forgets it",
                clauses: ["WU-2", "WU-7"], try warmUp(2, every: 10, period: 20),
                [
                    (0, .acquire(any), allowed(0), "10 × Int64.max runs past the end: tat = Int64.max + 1 + 20"),
                    (5, .acquire(1), never, "paid at Int64.max + 21 − 10"),
                    (end(), .reset, allowed(any), "rested and cold at the end: tat = Int64.max, σ = 20"),
                    (end(), .acquire(1), allowed(0), "cost 10 + 400/40 = 20: tat = Int64.max + 20"),
                    (end(), .acquire(1), never, "paid at Int64.max + 10"),
                ]),
            StoryDraft(
                "zero-release-invalid",
                "acquire(0) reads the quota and stores no coldness; release and negative permits are invalid",
                clauses: ["WU-8"], try warmUp(2, every: 10, period: 20),
                [
                    (0, .acquire(0), allowed(any), "rested and cold"),
                    (0, .release(1), releaseNotSupported, "nothing to release"),
                    (0, .acquire(-1), negativePermits, "negative permits"),
                    (0, .acquire(1), allowed(0), "still cold: 10 + 400/40 = 20, tat = 20 > 10"),
                    (0, .acquire(0), allowed(0), "in debt"),
                ]),
            StoryDraft(
                "reset-cold", "reset gives a new limiter: rested, and cold again", clauses: ["WU-9"], guava,
                [
                    (0, .acquire(5), allowed(0), "σ 1000 → 500: cost 1000, tat = 1000"),
                    (1_000, .acquire(1), allowed(0), "warm: 100, tat = 1100, σ = 400"),
                    (1_100, .reset, allowed(any), "tat = 1100, σ = 1000"),
                    (1_100, .acquire(1), allowed(0), "cold: 280, tat = 1380"),
                    (1_379, .acquire(1), rejected(1), "in debt until 1380"),
                ]),
            StoryDraft(
                "reconfigure-keeps-coldness",
                "reconfigure keeps tokens as pay later does and the coldness, capped at the new period",
                clauses: ["WU-10"], guava,
                [
                    (0, .acquire(5), allowed(0), "tat = 1000, σ = 500"),
                    (
                        1_200, .reconfigure(try warmUp(1, every: 50, period: 400)), allowed(any),
                        "a full token: tat = 1200; σ = min(500 + 200, 400) = 400"
                    ),
                    (1_200, .acquire(1), allowed(0), "σ 400 → 350: u 400 → 300, ⌈70 000/800⌉ = 88: tat = 1338"),
                    (1_337, .acquire(1), rejected(1), "in debt until 1338"),
                    (
                        1_337, .reconfigure(guava), allowed(0),
                        "49 units of 50 → ⌊49·100/50⌋ = 98 of 100: tat = 1339; σ = 350"
                    ),
                    (1_338, .acquire(1), rejected(1), "in debt until 1339"),
                    (1_339, .acquire(1), allowed(0), "σ 350 is below P/2 = 500: the stable 100, tat = 1439"),
                ]),
            StoryDraft(
                "interval-bound",
                "all but the last acquire total at most B − 1 + ⌊(e_j − e_i)/T⌋; costs 1 to 3 intervals",
                clauses: ["WU-11"], try warmUp(2, every: 10, period: 20),
                [
                    (0, .acquire(1), allowed(0), "cold: 10 + 10 = 20 ≤ 3·10; tat = 20 > 10"),
                    (10, .acquire(1), allowed(0), "20 − 10 = 10: admitted, σ 10: 10, tat = 30"),
                    (20, .acquire(1), allowed(0), "before it 2 ≤ 1 + ⌊20/10⌋: tat = 40"),
                    (20, .acquire(1), rejected(10), "paid at 40 − 10 = 30"),
                ]),
            StoryDraft(
                "no-warm-up-is-pay-later", "a warm-up period of 0 answers as pay later (pay-later/boundary-conforms)",
                clauses: ["WU-12"], try warmUp(2, every: 10, period: 0),
                [
                    (0, .acquire(3), allowed(0), "tat = 30 > 10, as pay later"),
                    (19, .acquire(1), rejected(1), "paid at 30 − 10 = 20"),
                    (20, .acquire(1), allowed(0), "tat = 40"),
                    (1_000, .acquire(0), allowed(any), "rested; no coldness to pay for"),
                    (1_000, .acquire(1), allowed(any), "10, not more: tat = 1010"),
                    (1_000, .acquire(1), allowed(0), "tat = 1020"),
                ]),
            StoryDraft(
                "refusals-record-nothing",
                "a refused acquire and a query at a later instant record nothing, coldness included",
                clauses: ["CORE-8", "CORE-10", "WU-3"], small,
                [
                    (0, .acquire(1), allowed(0), "cold: 20, tat = 20, σ = 10"),
                    (18, .acquire(1), rejected(2), "paid at 20"),
                    (15, .acquire(1), rejected(5), "the refusal at 18 recorded nothing: evaluated at 15"),
                    (30, .acquire(0), allowed(any), "a query at 30: σ would be 20 there"),
                    (25, .acquire(1), allowed(0), "evaluated at 25: σ = 10 + 5 = 15, 10 + ⌈100/40⌉ = 13: tat = 38"),
                    (37, .acquire(1), rejected(1), "paid at 38"),
                ]),
            StoryDraft(
                "reconfigure-refused",
                "a reconfigure to a configuration the Spec refuses is invalid and changes nothing, not even the recorded instant",
                clauses: ["CORE-13", "WU-1"], small,
                steps: [
                    DraftStep(0, .acquire(0), allowed(any), "rested and cold"),
                    DraftStep(
                        20,
                        reconfigureTo: [
                            ("burst", 1), ("emissionIntervalNanoseconds", 10), ("warmUpPeriodNanoseconds", -1),
                        ], invalid("warmUpPeriodNanoseconds", .mustNotBeNegative), "a negative warm-up period (WU-1)"),
                    DraftStep(5, .acquire(1), allowed(0), "evaluated at 5, still cold: cost 20, tat = 25"),
                    DraftStep(24, .acquire(1), rejected(1), "paid at 25"),
                ]),
        ]
        let refusals = [
            RefusalDraft(
                "refuse-zero-burst", "a burst below 1",
                [("burst", 0), ("emissionIntervalNanoseconds", 1), ("warmUpPeriodNanoseconds", 0)],
                refusedAs: "burst", .mustBePositive),
            RefusalDraft(
                "refuse-zero-interval", "an emission interval of 0",
                [("burst", 1), ("emissionIntervalNanoseconds", 0), ("warmUpPeriodNanoseconds", 0)],
                refusedAs: "emissionIntervalNanoseconds", .mustBePositive),
            RefusalDraft(
                "refuse-negative-period", "a negative warm-up period, checked before the tolerance",
                [("burst", 2), ("emissionIntervalNanoseconds", Int64.max), ("warmUpPeriodNanoseconds", -5)],
                refusedAs: "warmUpPeriodNanoseconds", .mustNotBeNegative),
            RefusalDraft(
                "refuse-tolerance-overflow", "burst × interval above Int64.max",
                [("burst", 2), ("emissionIntervalNanoseconds", Int64.max), ("warmUpPeriodNanoseconds", 1)],
                refusedAs: "emissionIntervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)),
        ]
        return (stories, refusals)
    }
}
