import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// At most three permits in flight.
private let three = try! ConcurrencyLimiter(limit: 3)

@Suite("Concurrency limiter (Spec/ConcurrencyLimiter.md)")
struct ConcurrencyLimiterTests {
    @Test("CL-1 a limit below 1 is refused by name")
    func validation() {
        expectRefused(field: "limit", .mustBePositive) { () throws(RateLimitInputError) in
            try ConcurrencyLimiter(limit: 0)
        }
    }

    @Test("CL-2 the state is the count in flight, 8 bytes")
    func state() {
        #expect(three.initialState(at: t(9)) == ConcurrencyLimiter.State(inFlight: 0))
        #expect(MemoryLayout<ConcurrencyLimiter.State>.size == 8)
    }

    @Test("CL-8 an over-release is invalid naming the permits asked for, the permits held and why")
    func overReleaseError() {
        var limiter = RateLimiter(three, at: t(0))
        _ = limiter.acquire(2, at: t(0))
        #expect(
            limiter.step(.release(3), at: t(0))
                == .invalid(
                    RateLimitInputError(
                        field: "permits", value: 3, problem: .exceedsMaximum(2),
                        reason: "a release must not exceed the permits in flight")))
    }

    @Test("CL-11 the count in flight is always acquired minus released since the last reset")
    func accounting() {
        var held: Int64 = 0
        var lowered = false  // a reconfigure since the last reset may leave more in flight than the limit
        forEachRandomStep(ConcurrencyLimiter.self, "accounting") { step in
            if step.index == 0 { (held, lowered) = (0, false) }
            switch (step.event, step.result) {
            case (.acquire(let permits), .allowed): held += permits
            case (.release(let permits), .allowed): held -= permits
            case (.reset, _): (held, lowered) = (0, false)
            case (.reconfigure, _): lowered = true
            default: break
            }
            guard
                holds(
                    step.after.inFlight == held && held >= 0,
                    "in flight \(step.after.inFlight), expected \(held): \(step.description)",
                    replay: step.replay)
            else { return false }
            return holds(
                lowered || held <= step.strategyAfter.limit, "in flight above the limit: \(step.description)",
                replay: step.replay)
        }
    }
}
