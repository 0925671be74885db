import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

// The adaptive rate (Spec/AdaptiveLimits.md, ADAPT-1 ... ADAPT-9, ADAPT-15, ADAPT-16): stories
// with answers worked out by hand, and properties over seeded random feedback.

/// Rates per 100 ns: from 4 (between 2 and 10), bursts of 4, +2 per round at first then +1,
/// decreases of 10% and 50%, a cool-down of 50 ns.
private let rate = try! AdaptiveRate(
    periodNanoseconds: 100, maximumRate: 10, initialRate: 4, minimumRate: 2, burst: 4, startIncrease: 2,
    increase: 1, decreasePercent: 10, steepDecreasePercent: 50, coolDownNanoseconds: 50)

/// Rates per 100 ns from 2 (between 1 and 10), bursts of 2, +5 per round at first then +1, no cool-down.
private let small = try! AdaptiveRate(
    periodNanoseconds: 100, maximumRate: 10, initialRate: 2, minimumRate: 1, burst: 2, startIncrease: 5,
    increase: 1, coolDownNanoseconds: 0)

/// Rates per 100 ns from 40 (between 1 and 100), bursts of 8, +4 per round at first then +1, no cool-down.
private let steep = try! AdaptiveRate(
    periodNanoseconds: 100, maximumRate: 100, initialRate: 40, minimumRate: 1, burst: 8, startIncrease: 4,
    increase: 1, coolDownNanoseconds: 0)

private func steepLimit(_ rate: Int64, _ burst: Int64, _ change: AdaptiveChange) -> AdaptiveAnswer<AdaptiveRate.Limit> {
    .limit(AdaptiveRate.Limit(rate: rate, burst: burst, periodNanoseconds: 100), change)
}

private func limit(_ rate: Int64, _ burst: Int64, _ change: AdaptiveChange) -> AdaptiveAnswer<AdaptiveRate.Limit> {
    .limit(AdaptiveRate.Limit(rate: rate, burst: burst, periodNanoseconds: 100), change)
}

@Suite("Adaptive rate (Spec/AdaptiveLimits.md)")
struct AdaptiveRateTests {
    @Test("ADAPT-2 each bad field is refused by name, in the table's order, at its bounds")
    func validation() {
        func make(
            period: Int64 = 100, maximum: Int64 = 10, initial: Int64 = 4, minimum: Int64 = 2, burst: Int64 = 4,
            start: Int64 = 0, increase: Int64 = 0, decrease: Int64 = 10, steep: Int64 = 50, coolDown: Int64 = 0
        ) throws(RateLimitInputError) -> AdaptiveRate {
            try AdaptiveRate(
                periodNanoseconds: period, maximumRate: maximum, initialRate: initial, minimumRate: minimum,
                burst: burst, startIncrease: start, increase: increase, decreasePercent: decrease,
                steepDecreasePercent: steep, coolDownNanoseconds: coolDown)
        }
        expectRefused(field: "periodNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try make(period: 0, maximum: 0)
        }
        expectBoundsRefused("Rate") { maximum, initial, minimum throws(RateLimitInputError) in
            try make(maximum: maximum, initial: initial, minimum: minimum)
        }
        expectRefused(field: "burst", .mustBePositive) { () throws(RateLimitInputError) in try make(burst: 0) }
        expectRefused(field: "burst", .exceedsMaximum(Int64.max / 100)) { () throws(RateLimitInputError) in
            try make(burst: Int64.max / 100 + 1)
        }
        #expect((try? make(burst: Int64.max / 100)) != nil)
        expectRefused(field: "startIncrease", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try make(start: -1)
        }
        expectRefused(field: "increase", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try make(increase: -1)
        }
        expectRefused(field: "decreasePercent", .mustBePositive) { () throws(RateLimitInputError) in
            try make(decrease: 0)
        }
        expectRefused(field: "decreasePercent", .exceedsMaximum(99)) { () throws(RateLimitInputError) in
            try make(decrease: 100)
        }
        #expect((try? make(decrease: 1)) != nil && (try? make(decrease: 99)) != nil)
        expectRefused(field: "steepDecreasePercent", .mustBePositive) { () throws(RateLimitInputError) in
            try make(steep: 0)
        }
        expectRefused(field: "steepDecreasePercent", .exceedsMaximum(99)) { () throws(RateLimitInputError) in
            try make(steep: 100)
        }
        expectRefused(field: "coolDownNanoseconds", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try make(coolDown: -1)
        }
        expectRefused(field: "coolDownNanoseconds", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try AdaptiveRate(
                period: .seconds(1), maximumRate: 1, initialRate: 1, minimumRate: 1, burst: 1, startIncrease: 0,
                increase: 0, coolDown: .nanoseconds(1) / 2)
        }
    }

    @Test("ADAPT-1 malformed feedback is invalid, naming the first bad field in order, and changes nothing")
    func invalidFeedback() {
        let cases: [(AdaptiveFeedback, RateLimitInputError)] = [
            (response(-1), RateLimitInputError(field: "status", value: -1, problem: .mustNotBeNegative)),
            (
                .response(status: 1000, latencyNanoseconds: -1, inFlight: -1),
                RateLimitInputError(
                    field: "status", value: 1000, problem: .exceedsMaximum(999), reason: "a status has three digits")
            ),
            (
                .response(status: 200, latencyNanoseconds: -1, inFlight: -1),
                RateLimitInputError(field: "latencyNanoseconds", value: -1, problem: .mustNotBeNegative)
            ),
            (
                .response(status: 200, latencyNanoseconds: 0, inFlight: -1),
                RateLimitInputError(field: "inFlight", value: -1, problem: .mustNotBeNegative)
            ),
            (
                response(200, stated: StatedRate(permits: -1, windowNanoseconds: 0)),
                RateLimitInputError(field: "stated.permits", value: -1, problem: .mustNotBeNegative)
            ),
            (
                response(200, stated: StatedRate(permits: 0, windowNanoseconds: 0)),
                RateLimitInputError(field: "stated.windowNanoseconds", value: 0, problem: .mustBePositive)
            ),
        ]
        for (feedback, error) in cases {
            var state = rate.initialState(at: t(5))
            let before = state
            #expect(rate.step(&state, feedback, at: t(9)) == .invalid(error))
            #expect(state == before, "\(feedback) changed the state")
        }
        // 999 and 0 are statuses (of no class): valid, and they change nothing but the instant.
        adaptiveStory(rate, [(0, response(999), limit(4, 4, .unchanged)), (0, response(0), limit(4, 4, .unchanged))])
    }

    @Test("ADAPT-3 a new machine holds the initial rate and burst, the maximum as its ceiling, and no round")
    func initialState() {
        let state = rate.initialState(at: t(7))
        #expect(state.rate == 4 && state.burst == 4 && state.ceiling == 10 && state.stated == nil)
        #expect(!state.decreased && state.coolDownUntil == 7 && state.served == 0 && state.roundCount == 0)
        #expect(state.measured == nil && state.last == 7)
        #expect(rate.limit(of: state) == AdaptiveRate.Limit(rate: 4, burst: 4, periodNanoseconds: 100))
    }

    @Test("ADAPT-4 a round of r served within 2P raises the rate by the start step; one that took 2P + 1 does not")
    func rounds() {
        adaptiveStory(
            rate,
            [
                (0, response(200), limit(4, 4, .unchanged)),  // a round begins at 0: 1 of 4
                (10, response(200), limit(4, 4, .unchanged)),
                (20, response(204), limit(4, 4, .unchanged)),
                (200, response(404), limit(6, 4, .increased)),  // 4 served in Δ = 200 = 2P: 4 + a₀ (2)
                (201, response(200), limit(6, 4, .unchanged)),  // the next round needs 6, from 201
                (202, response(200), limit(6, 4, .unchanged)),
                (203, response(200), limit(6, 4, .unchanged)),
                (204, response(200), limit(6, 4, .unchanged)),
                (205, response(200), limit(6, 4, .unchanged)),
                (402, response(200), limit(6, 4, .unchanged)),  // 6 in Δ = 201 > 2P: measured, not raised
                (402, response(200), limit(6, 4, .unchanged)),  // a new round of 6 begins at 402
                (402, response(200), limit(6, 4, .unchanged)),
                (402, response(200), limit(6, 4, .unchanged)),
                (402, response(200), limit(6, 4, .unchanged)),
                (402, response(200), limit(6, 4, .unchanged)),
                (402, response(200), limit(8, 4, .increased)),  // Δ = 0: 6 + 2
                (402, response(429), limit(7, 4, .decreased)),  // measured Int64.max (Δ = 0): ⌊min(8, max)·0.9⌋ = 7
            ])
    }

    @Test(
        "ADAPT-5 a rejection takes 10% off the lower of rate and measured rate, a second one with no round in between 50%, and shrinks a burst that was not exceeded"
    )
    func decreases() {
        adaptiveStory(
            steep,
            [
                (0, response(429), steepLimit(36, 1, .decreased)),  // no round: the gentle step, ⌊40·0.9⌋; 0 served ≤ 8
                (0, response(429), steepLimit(18, 1, .decreased)),  // again with no round in between: ⌊36·0.5⌋
                (0, response(429), steepLimit(9, 1, .decreased)),
                (1, response(200), steepLimit(9, 1, .unchanged)),
                (2, response(200), steepLimit(9, 1, .unchanged)),
                (3, response(200), steepLimit(9, 1, .unchanged)),
                (4, response(200), steepLimit(9, 1, .unchanged)),
                (5, response(200), steepLimit(9, 1, .unchanged)),
                (6, response(200), steepLimit(9, 1, .unchanged)),
                (7, response(200), steepLimit(9, 1, .unchanged)),
                (8, response(200), steepLimit(9, 1, .unchanged)),
                (9, response(200), steepLimit(10, 1, .increased)),  // 9 in Δ = 8: + a (1); measured ⌊900/8⌋ = 112
                (10, response(429), steepLimit(9, 1, .decreased)),  // ⌊min(10, 112)·0.9⌋; 9 served > burst 1: kept
                (10, response(429), steepLimit(8, 1, .decreased)),  // after a measured decrease, gentle again: ⌊9·0.9⌋
            ])
        adaptiveStory(
            rate,
            [
                (0, response(200), limit(4, 4, .unchanged)),
                (0, response(200), limit(4, 4, .unchanged)),
                (0, response(200), limit(4, 4, .unchanged)),
                (0, response(200), limit(6, 4, .increased)),  // a round of 4 in Δ = 0: measured Int64.max
                (0, response(429), limit(5, 2, .decreased)),  // ⌊6·0.9⌋; 4 served ≤ burst 4: ⌊4·0.5⌋ = 2
            ])
        // The measured rate, when lower, is what the decrease starts from.
        adaptiveStory(
            small,
            [
                (0, response(200), limit(2, 2, .unchanged)),
                (200, response(200), limit(7, 2, .increased)),  // Δ = 200: + a₀ (5); measured ⌊2·100/200⌋ = 1
                (201, response(429), limit(1, 1, .decreased)),  // ⌊min(7, 1)·0.9⌋ = 0 → floor 1; 2 served ≤ 2: 1
            ])
    }

    @Test("ADAPT-6 within the cool-down a rejection changes nothing; at its end it decreases again")
    func coolDown() {
        adaptiveStory(
            rate,
            [
                (10, response(429), limit(3, 1, .decreased)),  // ⌊4·0.9⌋; cool-down until 10 + 50 = 60
                (59, response(429), limit(3, 1, .unchanged)),
                (59, response(503), limit(3, 1, .unchanged)),
                (60, response(200), limit(3, 1, .unchanged)),
                (61, response(200), limit(3, 1, .unchanged)),
                (62, response(200), limit(4, 1, .increased)),  // a round of 3 in 2 ns: measured 150
                // 62 ≥ 60: ⌊min(4, 150)·0.9⌋; the plateau min(4 − 1, ⌊4·0.95⌋) = 3; until 112.
                (62, response(429), limit(3, 1, .decreased)),
                (100, response(200), limit(3, 1, .unchanged)),
                (101, response(200), limit(3, 1, .unchanged)),
                (102, response(200), limit(3, 1, .unchanged)),  // at the plateau: held 1 of 8 rounds
                (111, response(429), limit(3, 1, .unchanged)),  // one before the end
                (112, response(429), limit(2, 1, .decreased)),  // at it: ⌊min(3, 150)·0.9⌋
            ])
    }

    @Test(
        "ADAPT-7 a stated rate is adopted at once within the bounds, a repeated one is ignored, and it caps increases")
    func statedRate() {
        adaptiveStory(
            rate,
            [
                (0, response(200, stated: StatedRate(permits: 7, windowNanoseconds: 100)), limit(7, 4, .adopted)),
                (1, response(200, stated: StatedRate(permits: 7, windowNanoseconds: 100)), limit(7, 4, .unchanged)),
                // 30 per 200 ns is 15 per 100: above the ceiling 10, which wins.
                (2, response(200, stated: StatedRate(permits: 30, windowNanoseconds: 200)), limit(10, 4, .adopted)),
                // ⌊1·100/1000⌋ = 0: below the floor 2; lower, and still adopted, not decreased.
                (3, response(200, stated: StatedRate(permits: 1, windowNanoseconds: 1_000)), limit(2, 4, .adopted)),
                // The same statement, then the rejection: ⌊2·0.9⌋ → floor 2; 4 served ≤ 4: the burst ⌊4·0.5⌋.
                (4, response(429, stated: StatedRate(permits: 1, windowNanoseconds: 1_000)), limit(2, 2, .decreased)),
                // After its cool-down (until 54) a new statement is adopted (10), then the rejection,
                // the second with no round in between, halves it; 0 served ≤ 2: the burst 1.
                (60, response(429, stated: StatedRate(permits: 20, windowNanoseconds: 100)), limit(5, 1, .decreased)),
            ])
        adaptiveStory(
            small,
            [
                (0, response(200, stated: StatedRate(permits: 3, windowNanoseconds: 100)), limit(3, 2, .adopted)),
                (1, response(200), limit(3, 2, .unchanged)),
                (2, response(200), limit(3, 2, .unchanged)),  // a round of 3 in 2 ns: 3 + 5 capped at the stated 3
                (3, response(429), limit(2, 2, .decreased)),  // measured ⌊3·100/2⌋ = 150: ⌊min(3, 150)·0.9⌋; 3 > 2
                (3, response(429), limit(1, 1, .decreased)),  // no cool-down; after a measured one, gentle: ⌊2·0.9⌋
                (4, response(200), limit(2, 1, .increased)),  // a round of 1: + a (1), up to the plateau 2
                (5, response(200), limit(2, 1, .unchanged)),
                (6, response(200), limit(2, 1, .unchanged)),  // at the plateau, held
            ])
    }

    @Test(
        "ADAPT-4 ADAPT-5 at the plateau the rate holds 8 rounds, then probes one rate above it; a refused probe goes back without a cut and doubles the hold; a probe served 8 rounds raises the plateau, the next probe going twice as far"
    )
    func plateau() throws {
        let machine = try AdaptiveRate(
            periodNanoseconds: 100, maximumRate: 20, initialRate: 2, minimumRate: 1, burst: 2, startIncrease: 1,
            increase: 1, coolDownNanoseconds: 0)
        var state = machine.initialState(at: t(0))
        var now: Int64 = 0
        func feed(_ status: Int64) -> AdaptiveAnswer<AdaptiveRate.Limit> {
            defer { now += 1 }
            return machine.step(&state, .response(status: status, latencyNanoseconds: 1, inFlight: 1), at: t(now))
        }
        /// Serves `rounds` rounds at the rate in force; the rates answered.
        func serve(rounds: Int) -> [Int64] {
            var rates: [Int64] = []
            for _ in 0..<rounds {
                for _ in 0..<state.rate {
                    guard case .limit(let limit, _) = feed(200) else {
                        Issue.record("a served response is answered with a limit")
                        return rates
                    }
                    rates.append(limit.rate)
                }
            }
            return rates
        }
        _ = serve(rounds: 1)  // a round of 2 in 1 ns: + 1, measured 200
        #expect(state.rate == 3 && state.plateau == nil)
        _ = feed(429)  // ⌊3·0.9⌋ = 2; the plateau min(3 − 1, ⌊3·0.95⌋) = 2
        #expect(state.rate == 2 && state.plateau == 2 && state.holdRounds == AdaptiveRate.plateauRounds)
        #expect(serve(rounds: 7) == Array(repeating: 2, count: 14), "held at the plateau")
        #expect(serve(rounds: 1).last == 3 && state.probing, "after 8 rounds held, a probe one step above")
        #expect(serve(rounds: 1) == [3, 3, 3] && state.probedRounds == 1, "a round of the probe served")
        #expect(feed(429) == .limit(.init(rate: 2, burst: 1, periodNanoseconds: 100), .decreased))
        #expect(state.plateau == 2 && state.holdRounds == 16 && !state.probing, "back, with no cut; hold doubled")
        #expect(state.probedRounds == 0, "the refused probe's rounds are not counted towards the next")
        #expect(serve(rounds: 15) == Array(repeating: 2, count: 30))
        #expect(serve(rounds: 1).last == 3 && state.probing)
        #expect(serve(rounds: 7) == Array(repeating: 3, count: 21), "a probe holds its rate: no climb")
        #expect(
            serve(rounds: 1).last == 3 && state.plateau == 3 && !state.probing, "served 8 rounds: the plateau rises")
        #expect(state.probeStep == 2 && state.holdRounds == 16 && state.heldRounds == 0)
        #expect(serve(rounds: 15) == Array(repeating: 3, count: 45), "held at the new plateau")
        #expect(serve(rounds: 1).last == 5 && state.probing, "the next probe goes twice as far: 3 + 2")
        _ = serve(rounds: 8)
        #expect(state.plateau == 5 && state.probeStep == 4)
        _ = serve(rounds: 16)
        #expect(state.rate == 9 && state.probing, "5 + 4")
        _ = feed(429)
        #expect(state.rate == 5 && state.probeStep == 1 && state.holdRounds == 32, "refused: one step again")
        // A stated rate forgets the plateau too (ADAPT-7).
        _ = serve(rounds: 1)
        _ = feed(429)
        #expect(state.plateau != nil)
        _ = machine.step(
            &state,
            .response(
                status: 200, latencyNanoseconds: 1, inFlight: 1, stated: StatedRate(permits: 4, windowNanoseconds: 100)),
            at: t(now))
        #expect(state.plateau == nil && state.rate == 4 && state.holdRounds == AdaptiveRate.plateauRounds)
        // A refusal at the plateau, not a probe's: the limit fell, so the plateau follows it and the
        // doubled hold starts again at 8.
        state = machine.initialState(at: t(now))
        _ = serve(rounds: 1)
        _ = feed(429)
        _ = serve(rounds: 8)
        _ = feed(429)
        #expect(state.plateau == 2 && state.holdRounds == 16)
        _ = serve(rounds: 1)
        _ = feed(429)  // measured: ⌊2·0.9⌋ = 1, the plateau max(1, min(2 − 1, ⌊2·0.95⌋)) = 1
        #expect(state.rate == 1 && state.plateau == 1 && state.holdRounds == AdaptiveRate.plateauRounds)
    }

    @Test(
        "ADAPT-8 failures, server errors and statuses of no class change nothing; a reset restores the start at the latest instant"
    )
    func failuresAndReset() {
        adaptiveStory(
            rate,
            [
                (0, .failure, limit(4, 4, .unchanged)),
                (1, response(500), limit(4, 4, .unchanged)),
                (1, response(502), limit(4, 4, .unchanged)),
                (1, response(599), limit(4, 4, .unchanged)),
                (1, response(99), limit(4, 4, .unchanged)),
                (1, response(600), limit(4, 4, .unchanged)),
                (1, response(100), limit(4, 4, .unchanged)),  // served: a round begins
                (1, response(503), limit(3, 1, .decreased)),  // a rejection: ⌊4·0.9⌋; 1 served ≤ 4: the burst 1
                (100, .reset, limit(4, 4, .reset)),
                (90, response(429), limit(3, 1, .decreased)),  // evaluated at 100: cool-down until 150
                (149, response(429), limit(3, 1, .unchanged)),
                (150, response(429), limit(2, 1, .decreased)),  // the second with no round: ⌊3·0.5⌋ → floor 2
            ])
    }

    @Test(
        "ADAPT-9 on random feedback the rate stays within its floor and ceiling, the burst within 1 and its start, the plateau and its probe within theirs, and decreases are a cool-down apart"
    )
    func invariants() async {
        await offThePool {
            var spacing = DecreaseSpacing()
            var (probes, refusedProbes) = (0, 0)
            forEachRandomFeedback("invariants", spread: 120, AdaptiveRate.random) { step in
                let (machine, state, before) = (step.machine, step.after, step.before)
                if state.probing && !before.probing { probes += 1 }
                if before.probing && !state.probing && state.plateau == before.plateau && state.rate < before.rate {
                    refusedProbes += 1
                }
                let bounded =
                    machine.minimumRate <= state.rate && state.rate <= state.ceiling
                    && state.ceiling <= machine.maximumRate && 1 <= state.burst && state.burst <= machine.burst
                    && step.limit == machine.limit(of: state)
                    && (state.plateau.map { machine.minimumRate <= $0 } ?? true)
                    && state.holdRounds >= AdaptiveRate.plateauRounds && state.probeStep >= machine.increase
                    && (state.probing ? state.plateau.map { state.rate > $0 } ?? false : state.probedRounds == 0)
                guard holds(bounded, "ADAPT-9 out of bounds: \(step.description)", replay: step.replay),
                    spacing.holds(
                        step, coolDownUntil: \.coolDownUntil, latest: \.last, coolDown: machine.coolDownNanoseconds,
                        clause: "ADAPT-6")
                else { return false }
                guard case .response(let status, _, _, nil) = step.feedback else { return true }
                let monotone =
                    ResponseClass(status: status) == .rejection
                    ? state.rate <= before.rate && state.burst <= before.burst
                    : state.rate >= before.rate && state.burst == before.burst
                return holds(
                    monotone, "ADAPT-9 a rejection raised or a response lowered: \(step.description)",
                    replay: step.replay)
            }
            #expect(
                probes > 0 && refusedProbes > 0,
                "the plateau was not exercised: \(probes) probes, \(refusedProbes) refused")
        }
    }

    @Test(
        "ADAPT-15 a learned rate is enforced by a token bucket, a GCRA or pay later, in a composite or not; a reconfigure keeps tokens"
    )
    func enforcing() throws {
        let learned = AdaptiveRate.Limit(rate: 20, burst: 5, periodNanoseconds: 1_000_000_000)
        let bucket = try TokenBucket(capacity: 10, permitsPerPeriod: 40, period: .seconds(1))
        #expect(bucket.enforcedRate == AdaptiveRate.Limit(rate: 40, burst: 10, periodNanoseconds: 1_000_000_000))
        #expect(try bucket.enforcing(learned) == TokenBucket(capacity: 5, permitsPerPeriod: 20, period: .seconds(1)))
        // One permit per 50 ms is 20 per second; 20 per second back is one per 50 ms; 3 per second
        // is one per ⌈333,333,333.3⌉ ns (the rate rounded down).
        let gcra = try GCRA(burst: 5, emissionInterval: .milliseconds(50))
        #expect(gcra.enforcedRate == AdaptiveRate.Limit(rate: 20, burst: 5, periodNanoseconds: 1_000_000_000))
        #expect(try gcra.enforcing(learned) == GCRA(burst: 5, emissionInterval: .milliseconds(50)))
        #expect(
            gcra.enforcing(AdaptiveRate.Limit(rate: 3, burst: 2, periodNanoseconds: 1_000_000_000))?
                .emissionIntervalNanoseconds == 333_333_334)
        let slow = try GCRA(burst: 1, emissionInterval: .seconds(3))
        #expect(slow.enforcedRate == AdaptiveRate.Limit(rate: 1, burst: 1, periodNanoseconds: 3_000_000_000))
        // Pay later as GCRA; a new limiter keeps at most the tokens the old one started with.
        let payLater = try PayLater(burst: 5, emissionInterval: .milliseconds(50), initialTokens: 2)
        #expect(payLater.enforcedRate == AdaptiveRate.Limit(rate: 20, burst: 5, periodNanoseconds: 1_000_000_000))
        #expect(
            try payLater.enforcing(AdaptiveRate.Limit(rate: 10, burst: 1, periodNanoseconds: 1_000_000_000))
                == PayLater(burst: 1, emissionInterval: .milliseconds(100), initialTokens: 1))
        #expect(
            try AnyRateLimitStrategy.payLater(payLater).enforcing(learned)
                == .payLater(PayLater(burst: 5, emissionInterval: .milliseconds(50), initialTokens: 2)))
        // Warm-up's rate is bound to its cold rate and period: it learns nothing.
        let warmUp = try WarmUp(burst: 5, emissionInterval: .milliseconds(50), warmUpPeriod: .seconds(1))
        #expect(AnyRateLimitStrategy.warmUp(warmUp).enforcedRate == nil)
        #expect(AnyRateLimitStrategy.warmUp(warmUp).enforcing(learned) == nil)
        let limiter = try ConcurrencyLimiter(limit: 8)
        #expect(limiter.enforcedRate == nil && limiter.enforcedConcurrency == 8)
        #expect(try limiter.enforcing(concurrency: 3) == ConcurrencyLimiter(limit: 3))
        #expect(bucket.enforcing(concurrency: 3) == nil && limiter.enforcing(learned) == nil)
        // A composite learns its first rate and its first concurrency; its other limits stay.
        let window = try FixedWindow(limit: 1_000, window: .seconds(3_600))
        let composite = try CompositeLimit(.concurrency(limiter), .fixedWindow(window), .tokenBucket(bucket))
        #expect(composite.enforcedRate == bucket.enforcedRate && composite.enforcedConcurrency == 8)
        #expect(
            try composite.enforcing(learned)
                == CompositeLimit(
                    .concurrency(limiter), .fixedWindow(window), .tokenBucket(try #require(bucket.enforcing(learned)))))
        #expect(AnyRateLimitStrategy.fixedWindow(window).enforcedRate == nil)
        #expect(AnyRateLimitStrategy.fixedWindow(window).enforcing(learned) == nil)
        // Applied by a reconfigure: the bucket keeps its tokens, capped at the new burst (TB-10).
        var applied = RateLimiter(bucket, at: t(0))
        _ = applied.acquire(3, at: t(0))  // 7 left of 10
        #expect(applied.step(.reconfigure(try #require(bucket.enforcing(learned))), at: t(0)) == .allowed(remaining: 5))
    }

    @Test(
        "ADAPT-16 against servers whose Retry-After is whole seconds (nginx's limit_req at 20 per second from half and twice its rate, a leaky bucket at 100 from twice), from 1 and 8 tasks, the second half of 600 admissions is at 95% of the rate with no refusal",
        arguments: [(20, 6, 40, 10), (20, 6, 10, 3), (100, 10, 200, 20)] as [(Int64, Int64, Int64, Int64)])
    func settlesUnderWholeSecondHolds(server: Int64, serverBurst: Int64, start: Int64, startBurst: Int64) async {
        // nginx's `limit_req rate=20r/s burst=5 nodelay` admits 6 at once (its first request after an
        // idle stretch is free): a GCRA of burst 6. Its 429 says `Retry-After: 1`, as the tests'
        // Python server does (a leaky bucket, 100 per second in bursts of 10). Each such refusal
        // holds the client a whole second, so a refusal in the second half of a run of 600
        // (15 s at 20 per second, 3 s at 100) costs 7 to 33% of it: the plateau (ADAPT-4, ADAPT-5)
        // must hold, and its probes must be refused seldom. From half of 100 per second the start
        // step (+12 a round) crosses the limit at 5.8 s, in the last third of the run, and the
        // second half is at 74%: not claimed.
        await offThePool {
            let second: Int64 = 1_000_000_000
            for trace in 0..<8 {
                var random = PropertySeed.generator("adaptive-rate whole seconds", trace: trace)
                let replay = PropertySeed.replay("settlesUnderWholeSecondHolds", trace: trace)
                let tasks = [1, 8][trace % 2]
                let run = simulateAdaptiveClient(
                    server: AdaptiveRate.Limit(rate: server, burst: serverBurst, periodNanoseconds: second),
                    start: AdaptiveRate.Limit(rate: start, burst: startBurst, periodNanoseconds: second),
                    tasks: tasks, periods: 1_000, latency: 1_000_000, retryAfter: .wholeSeconds, admissions: 600,
                    using: &random)
                let half = run.secondHalf
                let description =
                    "server \(server)/s burst \(serverBurst), start \(start)/s burst \(startBurst), \(tasks) tasks: \(run), second half \(half.rate)/s, refused at \(run.refusals) ns, the rate and plateau from \(run.changes)"
                guard
                    holds(
                        half.rate >= 0.95 * Double(server), "ADAPT-16 below 95% of the server's rate: \(description)",
                        replay: replay),
                    holds(half.refused == 0, "ADAPT-16 refused in the second half: \(description)", replay: replay)
                else { return }
            }
        }
    }

    @Test(
        "ADAPT-16 against a steady server the standard adaptive rate, from half to twice the server's rate, serves at least 75% of it over the second half with at most 6% refused"
    )
    func convergence() async {
        await offThePool {
            let second: Int64 = 1_000_000_000
            for trace in 0..<24 {
                var random = PropertySeed.generator("adaptive-rate convergence", trace: trace)
                let replay = PropertySeed.replay("convergence", trace: trace)
                let server = AdaptiveRate.Limit(
                    rate: [20, 50, 100][trace % 3], burst: [5, 10][trace % 2], periodNanoseconds: second)
                // Half to twice the server, rate and burst.
                let scale = Int64.random(in: 50...200, using: &random)
                let start = AdaptiveRate.Limit(
                    rate: server.rate * scale / 100, burst: max(1, server.burst * scale / 100),
                    periodNanoseconds: second)
                let tasks = [1, 8][trace / 3 % 2]
                let run = simulateAdaptiveClient(
                    server: server, start: start, tasks: tasks, periods: 40, latency: 2_000_000, using: &random)
                let description =
                    "server \(server.rate)/s burst \(server.burst), start \(start.rate)/s burst \(start.burst), \(tasks) tasks: \(run)"
                guard
                    holds(
                        Int64(run.servedInSecondHalf) * 100 >= 75 * server.rate * 20,
                        "ADAPT-16 below 75% of the server's rate: \(description)", replay: replay),
                    holds(
                        run.rejections * 100 <= 6 * run.requests, "ADAPT-16 more than 6% refused: \(description)",
                        replay: replay)
                else { return }
            }
        }
    }
}
