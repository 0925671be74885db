import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// Four estimated permits per sliding 10 ns.
private let fourPerTen = try! SlidingWindowCounter(limit: 4, windowNanoseconds: 10)

@Suite("Sliding window counter (Spec/SlidingWindowCounter.md)")
struct SlidingWindowCounterTests {
    @Test("SWC-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "limit", .mustBePositive) { () throws(RateLimitInputError) in
            try SlidingWindowCounter(limit: 0, windowNanoseconds: 10)
        }
        expectRefused(field: "windowNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try SlidingWindowCounter(limit: 1, windowNanoseconds: 0)
        }
    }

    @Test("SWC-2 the state is two counts and the last instant, 24 bytes")
    func state() {
        #expect(
            fourPerTen.initialState(at: t(8)) == SlidingWindowCounter.State(current: 0, previous: 0, lastNanoseconds: 8)
        )
        #expect(MemoryLayout<SlidingWindowCounter.State>.size == 24)
    }

    @Test("SWC-11 no window (t − W, t] admits more than N + ⌊N·(W − 2)/W⌋")
    func worstCaseBound() {
        forEachAdmission(SlidingWindowCounter.self, "worstCaseBound") { history, counter, step in
            guard let newest = history.last else { return true }
            let (limit, window) = (counter.limit, counter.windowNanoseconds)
            guard let extra = window >= 2 ? floorMultiplyDivide(limit, window - 2, window) : 0,
                extra <= Int64.max - limit
            else { return true }
            let inWindow = totalPermits(
                history.filter { $0.instant <= newest.instant && $0.instant > newest.instant - window })
            return holds(
                inWindow <= limit + extra,
                "\(inWindow) permits in the window ending at \(newest.instant): \(step.description)",
                replay: step.replay)
        }
    }
}
