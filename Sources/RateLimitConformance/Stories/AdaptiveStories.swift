import RateLimitCore

// Spec/AdaptiveLimits.md: the adaptive rate raises its rate by a step per round of `r` served
// within two periods, lowers it by 10% on a refusal (from the measured rate when a round was
// measured, by 50% on a second refusal with no round between), shrinks a burst the server refused
// before it was spent, once per cool-down, and adopts a stated rate within its bounds; the adaptive
// concurrency moves by one per round trip on Vegas's queue estimate and cuts on a drop. Every
// answer below is worked out by hand from the clauses.

extension ScenarioCatalogue {
    // MARK: Feedback and answers (ADAPT-1)

    /// A response of `status` (the rate reads neither its latency nor the requests in flight).
    static func response(
        _ status: Int64, latency: Int64 = 1, inFlight: Int64 = 1, stated: (Int64, Int64)? = nil
    ) -> JSONValue {
        AdaptiveFeedback.response(
            status: status, latencyNanoseconds: latency, inFlight: inFlight,
            stated: stated.map { StatedRate(permits: $0.0, windowNanoseconds: $0.1) }
        ).json
    }
    static let failure = AdaptiveFeedback.failure.json
    static let forget = AdaptiveFeedback.reset.json

    /// `{"kind": "limit", "rate": r, "burst": b, "change": c}`.
    static func rate(_ rate: Int64, _ burst: Int64, _ change: AdaptiveChange) -> JSONValue {
        .object([
            ("kind", .string("limit")), ("rate", .integer(rate)), ("burst", .integer(burst)),
            ("change", .string(change.rawValue)),
        ])
    }

    /// `{"kind": "limit", "limit": n, "change": c}`.
    static func concurrency(_ limit: Int64, _ change: AdaptiveChange) -> JSONValue {
        .object([("kind", .string("limit")), ("limit", .integer(limit)), ("change", .string(change.rawValue))])
    }

    /// An adaptive rate's fields (ADAPT-2), in the table's order.
    static func adaptiveRate(
        period: Int64 = 100, maximum: Int64, initial: Int64, minimum: Int64, burst: Int64, start: Int64,
        increase: Int64, decrease: Int64 = 10, steep: Int64 = 50, coolDown: Int64
    ) -> JSONValue {
        fields([
            "periodNanoseconds": period, "maximumRate": maximum, "initialRate": initial, "minimumRate": minimum,
            "burst": burst, "startIncrease": start, "increase": increase, "decreasePercent": decrease,
            "steepDecreasePercent": steep, "coolDownNanoseconds": coolDown,
        ])
    }

    /// An adaptive concurrency's fields (ADAPT-10), in the table's order.
    static func adaptiveConcurrency(
        maximum: Int64, initial: Int64, minimum: Int64, alpha: Int64 = 2, beta: Int64 = 4, decrease: Int64,
        coolDown: Int64, window: Int64
    ) -> JSONValue {
        fields([
            "maximumLimit": maximum, "initialLimit": initial, "minimumLimit": minimum, "alpha": alpha, "beta": beta,
            "decreasePercent": decrease, "coolDownNanoseconds": coolDown, "baselineWindowNanoseconds": window,
        ])
    }

    // MARK: The adaptive rate (the plateau's stories: AdaptivePlateauStories.swift)

    static func adaptiveRateCases() -> [ScenarioCase] {
        let machine = ScenarioMachine.adaptiveRate
        // Per 100 ns: from 4 (2 … 10), bursts of 4, +2 per round at first then +1, 10% and 50%, cool-down 50 ns.
        let four = adaptiveRate(maximum: 10, initial: 4, minimum: 2, burst: 4, start: 2, increase: 1, coolDown: 50)
        // From 40 (1 … 100), bursts of 8, +4 then +1, no cool-down.
        let forty = adaptiveRate(maximum: 100, initial: 40, minimum: 1, burst: 8, start: 4, increase: 1, coolDown: 0)
        // From 2 (1 … 10), bursts of 2, +5 then +1, no cool-down.
        let two = adaptiveRate(maximum: 10, initial: 2, minimum: 1, burst: 2, start: 5, increase: 1, coolDown: 0)
        let max = Int64.max
        return [
            story(
                machine, "rounds",
                "a round of r served within two periods raises the rate by the start step; one slower does not",
                clauses: ["ADAPT-3", "ADAPT-4"], four,
                [
                    (0, response(200), rate(4, 4, .unchanged), "a round begins at 0: 1 served of 4"),
                    (10, response(200), rate(4, 4, .unchanged), "2 of 4"),
                    (20, response(204), rate(4, 4, .unchanged), "3 of 4: any status 100 … 499 but 429 is served"),
                    (200, response(404), rate(6, 4, .increased), "4 in Δ = 200 = 2P: 4 + a₀ = 6"),
                    (201, response(200), rate(6, 4, .unchanged), "the next round needs 6, from 201"),
                    (202, response(200), rate(6, 4, .unchanged), "2 of 6"),
                    (203, response(200), rate(6, 4, .unchanged), "3 of 6"),
                    (204, response(200), rate(6, 4, .unchanged), "4 of 6"),
                    (205, response(200), rate(6, 4, .unchanged), "5 of 6"),
                    (402, response(200), rate(6, 4, .unchanged), "6 in Δ = 201 = 2P + 1: measured, not raised"),
                    (402, response(200), rate(6, 4, .unchanged), "a new round begins at 402"),
                    (402, response(200), rate(6, 4, .unchanged), "2 of 6"),
                    (402, response(200), rate(6, 4, .unchanged), "3 of 6"),
                    (402, response(200), rate(6, 4, .unchanged), "4 of 6"),
                    (402, response(200), rate(6, 4, .unchanged), "5 of 6"),
                    (402, response(200), rate(8, 4, .increased), "6 in Δ = 0: 6 + 2; measured Int64.max (Δ = 0)"),
                    (
                        402, response(429), rate(7, 4, .decreased),
                        "a round was measured: ⌊min(8, Int64.max)·0.9⌋ = 7; 16 served > burst 4: kept"
                    ),
                ]),
            story(
                machine, "gentle-then-steep",
                "a refusal takes 10%; a second one with no round served in between 50%; after a measured one, 10% again",
                clauses: ["ADAPT-5"], forty,
                [
                    (0, response(429), rate(36, 1, .decreased), "no round: ⌊40·0.9⌋ = 36; 0 served ≤ 8: the burst 1"),
                    (0, response(429), rate(18, 1, .decreased), "again with no round in between: ⌊36·0.5⌋ = 18"),
                    (0, response(429), rate(9, 1, .decreased), "⌊18·0.5⌋ = 9"),
                    (1, response(200), rate(9, 1, .unchanged), "a round of 9 begins"),
                    (2, response(200), rate(9, 1, .unchanged), "2 of 9"),
                    (3, response(200), rate(9, 1, .unchanged), "3 of 9"),
                    (4, response(200), rate(9, 1, .unchanged), "4 of 9"),
                    (5, response(200), rate(9, 1, .unchanged), "5 of 9"),
                    (6, response(200), rate(9, 1, .unchanged), "6 of 9"),
                    (7, response(200), rate(9, 1, .unchanged), "7 of 9"),
                    (8, response(200), rate(9, 1, .unchanged), "8 of 9"),
                    (9, response(200), rate(10, 1, .increased), "9 in Δ = 8: + a (1); measured ⌊9·100/8⌋ = 112"),
                    (10, response(429), rate(9, 1, .decreased), "⌊min(10, 112)·0.9⌋ = 9; 9 served > burst 1: kept"),
                    (10, response(429), rate(8, 1, .decreased), "after a measured decrease, gentle: ⌊9·0.9⌋ = 8"),
                ]),
            story(
                machine, "burst-and-measured",
                "a burst refused before it was spent shrinks; a lower measured rate is where the decrease starts",
                clauses: ["ADAPT-4", "ADAPT-5"], two,
                [
                    (0, response(200), rate(2, 2, .unchanged), "1 of 2"),
                    (200, response(200), rate(7, 2, .increased), "2 in Δ = 200: + a₀ (5); measured ⌊2·100/200⌋ = 1"),
                    (
                        201, response(429), rate(1, 1, .decreased),
                        "⌊min(7, 1)·0.9⌋ = 0 → the floor 1; 2 served ≤ the burst 2: ⌊2·0.5⌋ = 1"
                    ),
                ]),
            story(
                machine, "burst-equal", "as many served as the burst since the last decrease: the burst shrinks",
                clauses: ["ADAPT-5"], four,
                [
                    (0, response(200), rate(4, 4, .unchanged), "1 of 4"),
                    (0, response(200), rate(4, 4, .unchanged), "2 of 4"),
                    (0, response(200), rate(4, 4, .unchanged), "3 of 4"),
                    (0, response(200), rate(6, 4, .increased), "a round of 4 in Δ = 0: 4 + 2"),
                    (0, response(429), rate(5, 2, .decreased), "⌊6·0.9⌋ = 5; 4 served ≤ 4: ⌊4·0.5⌋ = 2"),
                ]),
            story(
                machine, "cool-down", "within the cool-down a refusal changes nothing; at its end it decreases again",
                clauses: ["ADAPT-6"], four,
                [
                    (10, response(429), rate(3, 1, .decreased), "⌊4·0.9⌋ = 3; 0 served ≤ 4: 1; cool-down until 60"),
                    (59, response(429), rate(3, 1, .unchanged), "one before its end"),
                    (59, response(503), rate(3, 1, .unchanged), "a 503 is a refusal too"),
                    (60, response(200), rate(3, 1, .unchanged), "served responses count during it: 1 of 3"),
                    (61, response(200), rate(3, 1, .unchanged), "2 of 3"),
                    (62, response(200), rate(4, 1, .increased), "3 in Δ = 2: + 1; measured ⌊300/2⌋ = 150"),
                    (
                        62, response(429), rate(3, 1, .decreased),
                        "62 ≥ 60: ⌊min(4, 150)·0.9⌋ = 3, the plateau min(4 − 1, ⌊4·0.95⌋) = 3; until 112"
                    ),
                    (100, response(200), rate(3, 1, .unchanged), "1 of 3"),
                    (101, response(200), rate(3, 1, .unchanged), "2 of 3"),
                    (102, response(200), rate(3, 1, .unchanged), "3 in Δ = 2: at the plateau, held 1 of 8 rounds"),
                    (111, response(429), rate(3, 1, .unchanged), "one before the end of the cool-down"),
                    (
                        112, response(429), rate(2, 1, .decreased),
                        "at it: ⌊min(3, 150)·0.9⌋ = 2, the plateau max(2, min(3 − 1, ⌊3·0.95⌋)) = 2"
                    ),
                ]),
            story(
                machine, "stated-rate", "a stated rate is adopted within the bounds; a repeated one is ignored",
                clauses: ["ADAPT-7"], four,
                [
                    (0, response(200, stated: (7, 100)), rate(7, 4, .adopted), "7 per 100 ns: adopted, the ceiling"),
                    (1, response(200, stated: (7, 100)), rate(7, 4, .unchanged), "the same statement: nothing"),
                    (2, response(200, stated: (30, 200)), rate(10, 4, .adopted), "⌊30·100/200⌋ = 15 > the maximum 10"),
                    (
                        3, response(200, stated: (1, 1_000)), rate(2, 4, .adopted),
                        "⌊1·100/1000⌋ = 0 < the floor 2: adopted (lower, not a decrease)"
                    ),
                    (
                        4, response(429, stated: (1, 1_000)), rate(2, 2, .decreased),
                        "the same statement, then the refusal: ⌊2·0.9⌋ → the floor 2; 4 served ≤ 4: the burst 2"
                    ),
                    (
                        60, response(429, stated: (20, 100)), rate(5, 1, .decreased),
                        "after the cool-down (until 54): 20 adopted (10), then the second refusal with no round: ⌊10·0.5⌋"
                    ),
                ]),
            story(
                machine, "stated-ceiling",
                "increases stop at the stated rate; refusals go below it, rounds climb back to the plateau",
                clauses: ["ADAPT-4", "ADAPT-7"], two,
                [
                    (0, response(200, stated: (3, 100)), rate(3, 2, .adopted), "3 per 100 ns; 1 served of 3"),
                    (1, response(200), rate(3, 2, .unchanged), "2 of 3"),
                    (2, response(200), rate(3, 2, .unchanged), "3 in Δ = 2: 3 + 5 capped at 3; measured 150"),
                    (
                        3, response(429), rate(2, 2, .decreased),
                        "⌊min(3, 150)·0.9⌋ = 2, the plateau min(3 − 1, ⌊3·0.95⌋) = 2; 3 served > 2: kept"
                    ),
                    (
                        3, response(429), rate(1, 1, .decreased),
                        "no cool-down; after a measured one gentle: ⌊2·0.9⌋ = 1 (no round: the plateau stays 2)"
                    ),
                    (4, response(200), rate(2, 1, .increased), "a round of 1: + a (1), up to the plateau 2"),
                    (5, response(200), rate(2, 1, .unchanged), "1 of 2"),
                    (6, response(200), rate(2, 1, .unchanged), "2 in Δ = 1: at the plateau, held 1 of 8 rounds"),
                ]),
            plateauStory(machine),
            plateauAtTheCeilingStory(machine),
            story(
                machine, "failures-and-reset",
                "failures, server errors and statuses of no class change nothing; a reset starts over at the latest instant",
                clauses: ["ADAPT-1", "ADAPT-8"], four,
                [
                    (0, failure, rate(4, 4, .unchanged), "no response: nothing of the server's rate"),
                    (1, response(500), rate(4, 4, .unchanged), "a server error"),
                    (1, response(502), rate(4, 4, .unchanged), "a server error"),
                    (1, response(599), rate(4, 4, .unchanged), "a server error"),
                    (1, response(99), rate(4, 4, .unchanged), "no class"),
                    (1, response(600), rate(4, 4, .unchanged), "no class"),
                    (1, response(100), rate(4, 4, .unchanged), "served: 1 of 4"),
                    (1, response(503), rate(3, 1, .decreased), "a refusal: ⌊4·0.9⌋ = 3; 1 served ≤ 4: ⌊1·0.5⌋ → 1"),
                    (100, forget, rate(4, 4, .reset), "the initial limit, at 100"),
                    (90, response(429), rate(3, 1, .decreased), "evaluated at 100: a cool-down until 150"),
                    (149, response(429), rate(3, 1, .unchanged), "within it"),
                    (150, response(429), rate(2, 1, .decreased), "the second with no round: ⌊3·0.5⌋ = 1 → the floor 2"),
                ]),
            story(
                machine, "invalid-feedback",
                "malformed feedback is invalid, naming the first bad field, and changes nothing",
                clauses: ["ADAPT-1"], four,
                [
                    (0, response(-1, latency: -1), invalid("status", .mustNotBeNegative), "the status first"),
                    (0, response(1_000), invalid("status", .exceedsMaximum(999)), "three digits at most"),
                    (
                        0, response(200, latency: -1, inFlight: -1), invalid("latencyNanoseconds", .mustNotBeNegative),
                        "then the latency"
                    ),
                    (
                        0, response(200, inFlight: -1), invalid("inFlight", .mustNotBeNegative),
                        "then the requests in flight"
                    ),
                    (
                        0, response(200, stated: (-1, 0)), invalid("stated.permits", .mustNotBeNegative),
                        "then the stated permits"
                    ),
                    (
                        0, response(200, stated: (0, 0)), invalid("stated.windowNanoseconds", .mustBePositive),
                        "then its window"
                    ),
                    (0, response(999), rate(4, 4, .unchanged), "999 is a status, of no class"),
                    (
                        0, response(429), rate(3, 1, .decreased),
                        "nothing was served or decreased before: the first refusal"
                    ),
                ]),
            story(
                machine, "end-of-the-timeline",
                "sums and products saturate at Int64.max: the step, the measured rate, the cool-down, a stated rate",
                clauses: ["ADAPT-2", "ADAPT-4", "ADAPT-6", "ADAPT-7"],
                adaptiveRate(
                    period: 1_000_000_000_000_000_000, maximum: max, initial: 1, minimum: 1, burst: 9, start: max,
                    increase: 1, coolDown: max),
                [
                    (0, response(200), rate(max, 9, .increased), "a round of 1 in Δ = 0: 1 + Int64.max saturates"),
                    (
                        5, response(429), rate(8_301_034_833_169_298_226, 1, .decreased),
                        "measured Int64.max: ⌊Int64.max·0.9⌋; 1 served ≤ 9: 1; cool-down until Int64.max"
                    ),
                    (max - 1, response(429), rate(8_301_034_833_169_298_226, 1, .unchanged), "one before its end"),
                    (
                        max, response(429), rate(7_470_931_349_852_368_403, 1, .decreased),
                        "at it: ⌊8301034833169298226·0.9⌋"
                    ),
                    (
                        max, response(200, stated: (max, 1)), rate(max, 1, .adopted),
                        "⌊Int64.max·10^18 / 1⌋ saturates at Int64.max, the maximum"
                    ),
                ]),
            refusal(
                machine, "refuse-period", "a period of 0", clauses: ["ADAPT-2"],
                adaptiveRate(
                    period: 0, maximum: 0, initial: 0, minimum: 0, burst: 0, start: -1, increase: -1, decrease: 0,
                    steep: 0, coolDown: -1), "periodNanoseconds", .mustBePositive),
            refusal(
                machine, "refuse-maximum", "a maximum rate of 0", clauses: ["ADAPT-2"],
                adaptiveRate(maximum: 0, initial: 0, minimum: 0, burst: 0, start: 0, increase: 0, coolDown: 0),
                "maximumRate", .mustBePositive),
            refusalWithMaximum(
                machine, "refuse-initial-above-maximum", "an initial rate above the maximum", clauses: ["ADAPT-2"],
                adaptiveRate(maximum: 10, initial: 11, minimum: 1, burst: 1, start: 0, increase: 0, coolDown: 0),
                "initialRate", 10),
            refusalWithMaximum(
                machine, "refuse-minimum-above-initial", "a minimum rate above the initial one", clauses: ["ADAPT-2"],
                adaptiveRate(maximum: 10, initial: 4, minimum: 5, burst: 1, start: 0, increase: 0, coolDown: 0),
                "minimumRate", 4),
            refusalWithMaximum(
                machine, "refuse-burst-beyond", "a burst that would refill in more than Int64.max ns",
                clauses: ["ADAPT-2"],
                adaptiveRate(
                    period: 1_000_000_000_000_000_000, maximum: 1, initial: 1, minimum: 1, burst: 10, start: 0,
                    increase: 0, coolDown: 0), "burst", 9),
            refusal(
                machine, "refuse-negative-start", "a negative start step", clauses: ["ADAPT-2"],
                adaptiveRate(maximum: 1, initial: 1, minimum: 1, burst: 1, start: -1, increase: -1, coolDown: -1),
                "startIncrease", .mustNotBeNegative),
            refusal(
                machine, "refuse-negative-increase", "a negative step", clauses: ["ADAPT-2"],
                adaptiveRate(maximum: 1, initial: 1, minimum: 1, burst: 1, start: 0, increase: -1, coolDown: -1),
                "increase", .mustNotBeNegative),
            refusalWithMaximum(
                machine, "refuse-decrease-of-everything", "a decrease of 100%", clauses: ["ADAPT-2"],
                adaptiveRate(
                    maximum: 1, initial: 1, minimum: 1, burst: 1, start: 0, increase: 0, decrease: 100, coolDown: 0),
                "decreasePercent", 99),
            refusal(
                machine, "refuse-steep-of-nothing", "a steep decrease of 0%", clauses: ["ADAPT-2"],
                adaptiveRate(
                    maximum: 1, initial: 1, minimum: 1, burst: 1, start: 0, increase: 0, steep: 0, coolDown: 0),
                "steepDecreasePercent", .mustBePositive),
            refusal(
                machine, "refuse-negative-cool-down", "a negative cool-down", clauses: ["ADAPT-2"],
                adaptiveRate(maximum: 1, initial: 1, minimum: 1, burst: 1, start: 0, increase: 0, coolDown: -1),
                "coolDownNanoseconds", .mustNotBeNegative),
        ]
    }

    // MARK: The adaptive concurrency

    static func adaptiveConcurrencyCases() -> [ScenarioCase] {
        let machine = ScenarioMachine.adaptiveConcurrency
        // From 10 (2 … 20); alpha 2, beta 4; drops halve it, 100 ns apart; windows of 1000 ns.
        let vegas = adaptiveConcurrency(
            maximum: 20, initial: 10, minimum: 2, decrease: 50, coolDown: 100, window: 1_000)
        let max = Int64.max
        return [
            story(
                machine, "queue-estimate",
                "the queue ⌈N·(ℓ − base)/ℓ⌉ above beta lowers the limit by one, below alpha raises it when half is used, once per round trip",
                clauses: ["ADAPT-11", "ADAPT-12"], vegas,
                [
                    (
                        100, response(200, latency: 100, inFlight: 10), concurrency(11, .increased),
                        "the baseline 100: q = 0 < 2, 2·10 ≥ 10"
                    ),
                    (
                        150, response(200, latency: 100, inFlight: 10), concurrency(11, .unchanged),
                        "sent at 50, before the change at 100"
                    ),
                    (
                        300, response(200, latency: 200, inFlight: 11), concurrency(10, .decreased),
                        "sent at 100: q = ⌈11·100/200⌉ = 6 > 4"
                    ),
                    (
                        450, response(200, latency: 150, inFlight: 10), concurrency(10, .unchanged),
                        "q = ⌈10·50/150⌉ = 4: not above beta"
                    ),
                    (
                        460, response(200, latency: 120, inFlight: 4), concurrency(10, .unchanged),
                        "q = ⌈10·20/120⌉ = 2: not below alpha"
                    ),
                    (
                        470, response(200, latency: 110, inFlight: 4), concurrency(10, .unchanged),
                        "q = 1 < 2, but 2·4 < 10"
                    ),
                    (480, response(200, latency: 110, inFlight: 5), concurrency(11, .increased), "2·5 ≥ 10"),
                    (
                        1_000, response(200, latency: 300, inFlight: 11), concurrency(10, .decreased),
                        "window 1: 100 is the previous window's; q = ⌈11·200/300⌉ = 8"
                    ),
                    (
                        2_400, response(200, latency: 300, inFlight: 10), concurrency(11, .increased),
                        "window 2: 100 forgotten, the baseline 300"
                    ),
                    (
                        3_500, response(200, latency: 250, inFlight: 11), concurrency(12, .increased),
                        "window 3: 250 < 300, q = 0"
                    ),
                    (
                        5_000, response(200, latency: 400, inFlight: 12), concurrency(13, .increased),
                        "window 5: both windows forgotten"
                    ),
                    (
                        5_000, response(200, latency: 0, inFlight: 13), concurrency(14, .increased),
                        "a latency of 0: q = 0"
                    ),
                    (
                        5_010, response(200, latency: 10, inFlight: 14), concurrency(13, .decreased),
                        "the baseline 0: q = ⌈14·10/10⌉ = 14"
                    ),
                    (
                        5_015, response(200, latency: 10, inFlight: 13), concurrency(13, .unchanged),
                        "sent at 5,005, before the change at 5,010"
                    ),
                ]),
            story(
                machine, "drops",
                "a refusal or a failure cuts the limit once per cool-down; server errors change nothing; a reset starts over",
                clauses: ["ADAPT-13"], vegas,
                [
                    (60, response(429, inFlight: 10), concurrency(5, .decreased), "⌊10·0.5⌋ = 5; until 160"),
                    (159, failure, concurrency(5, .unchanged), "within the cool-down"),
                    (159, response(503), concurrency(5, .unchanged), "within the cool-down"),
                    (160, failure, concurrency(2, .decreased), "⌊5·0.5⌋ = 2, the floor"),
                    (300, response(500), concurrency(2, .unchanged), "a server error"),
                    (300, response(502), concurrency(2, .unchanged), "a server error"),
                    (300, response(600), concurrency(2, .unchanged), "no class"),
                    (300, failure, concurrency(2, .unchanged), "at the floor"),
                    (250, forget, concurrency(10, .reset), "evaluated at 300"),
                    (299, response(429), concurrency(5, .decreased), "evaluated at 300, the reset's cool-down end"),
                    (
                        1_400, response(200, latency: 1_000, inFlight: 5), concurrency(6, .increased),
                        "the 429's latency was no sample: q = 0"
                    ),
                ]),
            story(
                machine, "bounds", "a limit held between equal bounds never moves",
                clauses: ["ADAPT-14"],
                adaptiveConcurrency(maximum: 3, initial: 3, minimum: 3, decrease: 10, coolDown: 0, window: 10),
                [
                    (0, response(200, latency: 5, inFlight: 3), concurrency(3, .unchanged), "q = 0: 3 + 1 capped at 3"),
                    (1, response(429), concurrency(3, .unchanged), "⌊3·0.9⌋ = 2 below the floor 3"),
                ]),
            story(
                machine, "invalid-feedback", "malformed feedback is invalid, in order, and changes nothing",
                clauses: ["ADAPT-1"], vegas,
                [
                    (
                        3, response(200, latency: -5, inFlight: -1), invalid("latencyNanoseconds", .mustNotBeNegative),
                        "the latency before the requests in flight"
                    ),
                    (3, response(1_000), invalid("status", .exceedsMaximum(999)), "three digits at most"),
                    (
                        3, response(200, stated: (1, 0)), invalid("stated.windowNanoseconds", .mustBePositive),
                        "a stated rate is checked too"
                    ),
                    (
                        3, response(200, latency: 3, inFlight: 5), concurrency(11, .increased),
                        "nothing changed before: the first sample (sent at 0), q = 0"
                    ),
                ]),
            story(
                machine, "end-of-the-timeline", "the queue estimate at 128 bits; a cool-down saturated at Int64.max",
                clauses: ["ADAPT-12", "ADAPT-13"],
                adaptiveConcurrency(
                    maximum: max, initial: max - 1, minimum: 1, decrease: 1, coolDown: max, window: max),
                [
                    (
                        1, response(200, latency: 1, inFlight: max), concurrency(max, .increased),
                        "q = 0; 2n saturates, ≥ N"
                    ),
                    (
                        2, response(429), concurrency(9_131_138_316_486_228_048, .decreased),
                        "⌊Int64.max·0.99⌋; until Int64.max"
                    ),
                    (max - 1, failure, concurrency(9_131_138_316_486_228_048, .unchanged), "within the cool-down"),
                    (
                        max, response(200, latency: max - 2, inFlight: 1),
                        concurrency(9_131_138_316_486_228_047, .decreased),
                        "sent at 2, window 1: the baseline 1, q = ⌈N·(Int64.max − 3)/(Int64.max − 2)⌉ = N > 4"
                    ),
                ]),
            refusal(
                machine, "refuse-maximum", "a maximum of 0", clauses: ["ADAPT-10"],
                adaptiveConcurrency(maximum: 0, initial: 0, minimum: 0, decrease: 0, coolDown: -1, window: 0),
                "maximumLimit", .mustBePositive),
            refusalWithMaximum(
                machine, "refuse-initial-above-maximum", "an initial limit above the maximum", clauses: ["ADAPT-10"],
                adaptiveConcurrency(maximum: 5, initial: 6, minimum: 1, decrease: 10, coolDown: 0, window: 1),
                "initialLimit", 5),
            refusalWithMaximum(
                machine, "refuse-minimum-above-initial", "a minimum above the initial limit", clauses: ["ADAPT-10"],
                adaptiveConcurrency(maximum: 5, initial: 3, minimum: 4, decrease: 10, coolDown: 0, window: 1),
                "minimumLimit", 3),
            refusal(
                machine, "refuse-negative-alpha", "a negative alpha", clauses: ["ADAPT-10"],
                adaptiveConcurrency(
                    maximum: 5, initial: 3, minimum: 1, alpha: -1, beta: -1, decrease: 10, coolDown: 0, window: 1),
                "alpha", .mustNotBeNegative),
            refusal(
                machine, "refuse-negative-beta", "a negative beta", clauses: ["ADAPT-10"],
                adaptiveConcurrency(maximum: 5, initial: 3, minimum: 1, beta: -1, decrease: 10, coolDown: 0, window: 1),
                "beta", .mustNotBeNegative),
            refusalWithMaximum(
                machine, "refuse-decrease-of-everything", "a decrease of 100%", clauses: ["ADAPT-10"],
                adaptiveConcurrency(maximum: 5, initial: 3, minimum: 1, decrease: 100, coolDown: 0, window: 1),
                "decreasePercent", 99),
            refusal(
                machine, "refuse-negative-cool-down", "a negative cool-down", clauses: ["ADAPT-10"],
                adaptiveConcurrency(maximum: 5, initial: 3, minimum: 1, decrease: 10, coolDown: -1, window: 0),
                "coolDownNanoseconds", .mustNotBeNegative),
            refusal(
                machine, "refuse-empty-window", "a baseline window of 0", clauses: ["ADAPT-10"],
                adaptiveConcurrency(maximum: 5, initial: 3, minimum: 1, decrease: 10, coolDown: 0, window: 0),
                "baselineWindowNanoseconds", .mustBePositive),
        ]
    }

    /// A configuration the Spec refuses as above its `maximum`.
    static func refusalWithMaximum(
        _ machine: ScenarioMachine, _ name: String, _ summary: String, clauses: [String], _ configuration: JSONValue,
        _ field: String, _ maximum: Int64
    ) -> ScenarioCase {
        refusal(machine, name, summary, clauses: clauses, configuration, field, .exceedsMaximum(maximum))
    }
}
