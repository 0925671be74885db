import RateLimitTestSupport
import Testing

@testable import RateLimitCore

@Suite("Warm-up (Spec/WarmUp.md)")
struct WarmUpTests {
    @Test("WU-1 each bad field is refused by name; a warm-up period of 0 is valid")
    func validation() {
        expectRefused(field: "burst", .mustBePositive) { () throws(RateLimitInputError) in
            try WarmUp(burst: 0, emissionIntervalNanoseconds: 1, warmUpPeriodNanoseconds: 0)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try WarmUp(burst: 1, emissionIntervalNanoseconds: 0, warmUpPeriodNanoseconds: 0)
        }
        expectRefused(field: "warmUpPeriodNanoseconds", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try WarmUp(burst: 2, emissionIntervalNanoseconds: .max, warmUpPeriodNanoseconds: -1)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)) {
            () throws(RateLimitInputError) in
            try WarmUp(burst: 2, emissionIntervalNanoseconds: .max, warmUpPeriodNanoseconds: 0)
        }
        expectRefused(field: "warmUpPeriodNanoseconds", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try WarmUp(burst: 1, emissionInterval: .nanoseconds(1), warmUpPeriod: .nanoseconds(3) / 2)
        }
        #expect((try? WarmUp(burst: 1, emissionIntervalNanoseconds: 1, warmUpPeriodNanoseconds: 0)) != nil)
        #expect((try? WarmUp(burst: 1, emissionIntervalNanoseconds: .max, warmUpPeriodNanoseconds: .max)) != nil)
    }

    @Test("WU-2 a new limiter is rested and cold; 24 bytes")
    func initialState() throws {
        let limiter = try WarmUp(burst: 3, emissionIntervalNanoseconds: 10, warmUpPeriodNanoseconds: 70)
        #expect(
            limiter.initialState(at: t(5))
                == WarmUp.State(theoreticalArrivalNanoseconds: 5, coldnessNanoseconds: 70, lastNanoseconds: 5))
        #expect(MemoryLayout<WarmUp.State>.size == 24)
    }

    @Test(
        "WU-2 PL-2 the configurations are no larger than GCRA's, so an any-strategy (COMP-1), copied at every step, does not grow"
    )
    func configurationSizes() {
        #expect(MemoryLayout<PayLater>.size == 32)
        #expect(MemoryLayout<WarmUp>.size == MemoryLayout<GCRA>.size)
        #expect(MemoryLayout<SlidingWindowSegments>.size <= MemoryLayout<GCRA>.size)
        #expect(MemoryLayout<AnyRateLimitStrategy>.size == MemoryLayout<GCRA>.size + 1)
        // The largest state is the segmented window's (its log, last instant and creation anchor,
        // SWS-13: 40 bytes), one tag byte more in an any-strategy.
        #expect(MemoryLayout<AnyRateLimitStrategy.State>.size == MemoryLayout<SlidingWindowSegments.State>.size + 1)
        #expect(MemoryLayout<SlidingWindowSegments.State>.size <= 40)
    }

    @Test("WU-4 WU-11 the widest numbers: Int64.max permits, period and interval, with no trap and no overflow")
    func widest() throws {
        let widest = try WarmUp(burst: 1, emissionIntervalNanoseconds: .max, warmUpPeriodNanoseconds: .max)
        var state = widest.initialState(at: t(0))
        // Cold, with T = P: the first permit spends all the coldness and costs T + ⌈P/2⌉, past the timeline.
        #expect(widest.step(&state, .acquire(1), at: t(0)) == .allowed(remaining: 0))
        #expect(state.coldnessNanoseconds == 0)
        #expect(widest.step(&state, .acquire(.max), at: t(.max)) == .neverAllowed)
        let fine = try WarmUp(burst: 2, emissionIntervalNanoseconds: 1, warmUpPeriodNanoseconds: .max)
        var cold = fine.initialState(at: t(0))
        #expect(fine.step(&cold, .acquire(.max), at: t(0)) == .allowed(remaining: 0))
        // Int64.max permits of 1 ns spend all the coldness: Int64.max + ⌈P/2⌉ ns, past the timeline.
        #expect(cold.theoreticalArrivalNanoseconds == UInt64(Int64.max) + 1 + 2)
    }

    @Test("WU-4 WU-11 each admission costs between n·T and 3·n·T, and spends min(n·T, σ) of the coldness")
    func costBounds() {
        forEachRandomStep(WarmUp.self, "costBounds") { step in
            guard case .acquire(let n) = step.event, n > 0, step.result.isAdmitted else { return true }
            let limiter = step.strategy
            let instant = limiter.evaluationInstant(step.before, now: step.now)
            let start = max(step.before.theoreticalArrivalNanoseconds, UInt64(instant))
            let saturated = UInt64(Int64.max) + 1 + UInt64(limiter.burst * limiter.emissionIntervalNanoseconds)
            guard step.after.theoreticalArrivalNanoseconds < saturated else { return true }
            let cost = step.after.theoreticalArrivalNanoseconds - start
            // Not saturated, so n·T ≤ cost < 2^64; 3·n·T may not fit, and then bounds nothing.
            let (stable, overflow) = UInt64(n).multipliedReportingOverflow(
                by: UInt64(limiter.emissionIntervalNanoseconds))
            let (triple, tripleOverflows) = stable.multipliedReportingOverflow(by: 3)
            let coldness = limiter.cooled(step.before, to: instant)
            let spent = min(stable, UInt64(coldness))
            return holds(
                !overflow && cost >= stable && (tripleOverflows || cost <= triple)
                    && UInt64(coldness - step.after.coldnessNanoseconds) == spent,
                "cost \(cost) for \(n) permits of \(limiter.emissionIntervalNanoseconds), coldness \(coldness) → \(step.after.coldnessNanoseconds): \(step.description)",
                replay: step.replay)
        }
    }

    @Test("WU-11 one acquire of n or n acquires of 1, each at its admission instant, cost the same within n − 1 ns")
    func oneOrMany() {
        forEachRandomStep(WarmUp.self, "oneOrMany") { step in
            guard case .acquire(let n) = step.event, n > 0, n <= 50, step.result.isAdmitted else { return true }
            let limiter = step.strategy
            let saturated = UInt64(Int64.max) + 1 + UInt64(limiter.burst * limiter.emissionIntervalNanoseconds)
            guard step.after.theoreticalArrivalNanoseconds < saturated else { return true }
            var state = step.before
            var now = step.now
            for index in 0..<n {
                let answer = limiter.step(&state, .acquire(1), at: t(now))
                guard answer.isAdmitted else {
                    return holds(false, "single \(index) refused: \(answer): \(step.description)", replay: step.replay)
                }
                // The next single at its admission instant: no cooling in between (WU-6).
                switch limiter.step(state, .acquire(1), at: t(now)).result {
                case .rejected(let wait): now += wait
                case .neverAllowed: return true  // the singles' debt reaches the end of the timeline
                case .allowed, .delayed, .rejectedUntilRelease, .invalid: break
                }
            }
            let whole = step.after.theoreticalArrivalNanoseconds
            let singles = state.theoreticalArrivalNanoseconds
            return holds(
                singles >= whole && singles - whole <= UInt64(n - 1)
                    && state.coldnessNanoseconds == step.after.coldnessNanoseconds,
                "acquire(\(n)) to \(whole), \(n) singles to \(singles): \(step.description)", replay: step.replay)
        }
    }

    @Test("WU-11 all but the last acquire total at most burst − 1 + ⌊(e_j − e_i) / T⌋, as PL-11")
    func safetyBound() {
        forEachAdmission(WarmUp.self, "safetyBound") { history, limiter, step in
            allButLastBoundHolds(
                history, burst: limiter.burst, intervalNanoseconds: limiter.emissionIntervalNanoseconds,
                clause: "WU-11", replay: step.replay, describe: step.description)
        }
    }
}
