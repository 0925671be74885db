import RateLimitTestSupport
import Testing

@testable import RateLimitCore

@Suite("Pay later (Spec/PayLater.md)")
struct PayLaterTests {
    @Test("PL-1 each bad field is refused by name, initial tokens before the tolerance")
    func validation() {
        expectRefused(field: "burst", .mustBePositive) { () throws(RateLimitInputError) in
            try PayLater(burst: 0, emissionIntervalNanoseconds: 1)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try PayLater(burst: 1, emissionIntervalNanoseconds: -1)
        }
        expectRefused(field: "initialTokens", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try PayLater(burst: 2, emissionIntervalNanoseconds: 1, initialTokens: -1)
        }
        expectRefused(field: "initialTokens", .exceedsMaximum(2)) { () throws(RateLimitInputError) in
            try PayLater(burst: 2, emissionIntervalNanoseconds: .max, initialTokens: 3)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)) {
            () throws(RateLimitInputError) in
            try PayLater(burst: 2, emissionIntervalNanoseconds: .max)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try PayLater(burst: 1, emissionInterval: .nanoseconds(3) / 2)
        }
        // The largest tolerance is accepted: τ = 7 × ⌊Int64.max / 7⌋.
        #expect((try? PayLater(burst: 7, emissionIntervalNanoseconds: Int64.max / 7)) != nil)
    }

    @Test("PL-2 a new limiter owes (burst − initial tokens) intervals from its creation; 16 bytes")
    func initialState() throws {
        let cold = try PayLater(burst: 3, emissionIntervalNanoseconds: 10, initialTokens: 1)
        #expect(cold.initialState(at: t(5)) == PayLater.State(theoreticalArrivalNanoseconds: 25, lastNanoseconds: 5))
        let rested = try PayLater(burst: 3, emissionIntervalNanoseconds: 10)
        #expect(rested.initialState(at: t(5)).theoreticalArrivalNanoseconds == 5)
        #expect(MemoryLayout<PayLater.State>.size == 16)
    }

    @Test("PL-2 PL-4 a debt past the end of the timeline saturates at Int64.max + 1 + τ, never beyond")
    func saturation() throws {
        // The largest tolerance and the largest request, at the end of the timeline: every sum overflows 64 bits.
        let widest = try PayLater(burst: 7, emissionIntervalNanoseconds: Int64.max / 7)
        let ceiling = UInt64(Int64.max) + 1 + UInt64(7 * (Int64.max / 7))
        var state = widest.initialState(at: t(.max))
        #expect(widest.step(&state, .acquire(.max), at: t(.max)) == .allowed(remaining: 0))
        #expect(state.theoreticalArrivalNanoseconds == ceiling)
        #expect(widest.step(&state, .acquire(1), at: t(.max)) == .neverAllowed)
        #expect(widest.step(&state, .reconfigure(widest), at: t(.max)) == .allowed(remaining: 0))
        #expect(state.theoreticalArrivalNanoseconds == ceiling)
        // Random traces: the bound holds after every event.
        forEachRandomStep(PayLater.self, "saturation") { step in
            let limit =
                UInt64(Int64.max) + 1
                + UInt64(step.strategyAfter.burst * step.strategyAfter.emissionIntervalNanoseconds)
            return holds(
                step.after.theoreticalArrivalNanoseconds <= limit,
                "PL-2 tat \(step.after.theoreticalArrivalNanoseconds) above \(limit): \(step.description)",
                replay: step.replay)
        }
    }

    @Test("PL-4 PL-6 the decision does not depend on the size: 1 and Int64.max permits get the same answer kind")
    func sizeDoesNotDecide() {
        forEachRandomStep(PayLater.self, "sizeDoesNotDecide") { step in
            let one = step.probe(.acquire(1), at: step.now).result
            let huge = step.probe(.acquire(.max), at: step.now).result
            let same: Bool =
                switch (one, huge) {
                case (.allowed, .allowed): true
                case (.rejected(let a), .rejected(let b)): a == b
                case (.neverAllowed, .neverAllowed): true
                default: false
                }
            return holds(
                same, "acquire(1) → \(one) but acquire(Int64.max) → \(huge): \(step.description)", replay: step.replay)
        }
    }

    @Test("PL-11 all but the last acquire total at most burst − 1 + ⌊(e_j − e_i) / T⌋")
    func safetyBound() {
        forEachAdmission(PayLater.self, "safetyBound") { history, limiter, step in
            allButLastBoundHolds(
                history, burst: limiter.burst, intervalNanoseconds: limiter.emissionIntervalNanoseconds,
                clause: "PL-11", replay: step.replay, describe: step.description)
        }
    }
}
