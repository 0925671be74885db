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

    @Test("CL-3 time plays no part: instants that go back change nothing")
    func timeIgnored() {
        story(
            three,
            [
                (100, .acquire(2), .allowed(remaining: 1)),
                (5, .acquire(1), .allowed(remaining: 0)),
                (.max, .acquire(1), .rejectedUntilRelease(shortfall: 1)),
                (0, .release(3), .allowed(remaining: 3)),
            ])
    }

    @Test("CL-4 CL-5 CL-6 acquire takes free permits; a refusal says how many must be released first")
    func acquireAndRelease() {
        story(
            three,
            [
                (0, .acquire(2), .allowed(remaining: 1)),
                (0, .acquire(1), .allowed(remaining: 0)),
                (0, .acquire(1), .rejectedUntilRelease(shortfall: 1)),
                (0, .acquire(2), .rejectedUntilRelease(shortfall: 2)),
                (0, .release(1), .allowed(remaining: 1)),
                (0, .acquire(2), .rejectedUntilRelease(shortfall: 1)),
                (0, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("CL-7 more than the limit is never allowed")
    func neverAllowed() {
        story(three, [(0, .acquire(4), .neverAllowed), (0, .acquire(3), .allowed(remaining: 0))])
    }

    @Test("CL-8 releasing more than is held, or a negative count, is invalid and changes nothing")
    func invalidReleases() {
        story(
            three,
            [
                (0, .acquire(2), .allowed(remaining: 1)),
                (
                    0, .release(3),
                    .invalid(
                        RateLimitInputError(
                            field: "permits", value: 3, problem: .exceedsMaximum(2),
                            reason: "a release must not exceed the permits in flight"))
                ),
                (0, .release(-1), .invalid(.negativePermits(-1))),
                (0, .acquire(-1), .invalid(.negativePermits(-1))),
                (0, .acquire(0), .allowed(remaining: 1)),
                (0, .release(0), .allowed(remaining: 1)),
                (0, .release(2), .allowed(remaining: 3)),
            ])
    }

    @Test("CL-9 reset forgets the permits in flight; releasing them afterwards is invalid")
    func reset() {
        story(
            three,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (0, .reset, .allowed(remaining: 3)),
                (
                    0, .release(1),
                    .invalid(
                        RateLimitInputError(
                            field: "permits", value: 1, problem: .exceedsMaximum(0),
                            reason: "a release must not exceed the permits in flight"))
                ),
            ])
    }

    @Test("CL-10 reconfigure keeps the permits in flight, even above the new limit")
    func reconfigure() throws {
        let two = try ConcurrencyLimiter(limit: 2)
        story(
            three,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (0, .reconfigure(two), .allowed(remaining: 0)),
                (0, .acquire(1), .rejectedUntilRelease(shortfall: 2)),
                (0, .release(2), .allowed(remaining: 1)),
                (0, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("CL-12 unlike a semaphore, an over-release never raises the limit")
    func notASemaphore() {
        story(
            three,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (
                    0, .release(2),
                    .invalid(
                        RateLimitInputError(
                            field: "permits", value: 2, problem: .exceedsMaximum(1),
                            reason: "a release must not exceed the permits in flight"))
                ),
                (0, .acquire(2), .allowed(remaining: 0)),
                (0, .acquire(1), .rejectedUntilRelease(shortfall: 1)),
            ])
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
