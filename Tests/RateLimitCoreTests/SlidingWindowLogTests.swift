import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// Three permits in any window (t − 10, t].
private let threePerTen = try! SlidingWindowLog(limit: 3, windowNanoseconds: 10)

@Suite("Sliding window log (Spec/SlidingWindowLog.md)")
struct SlidingWindowLogTests {
    @Test("SWL-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "limit", .mustBePositive) { () throws(RateLimitInputError) in
            try SlidingWindowLog(limit: -1, windowNanoseconds: 10)
        }
        expectRefused(field: "windowNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try SlidingWindowLog(limit: 1, windowNanoseconds: 0)
        }
    }

    @Test("SWL-2 admissions at the same instant share one log entry")
    func mergedEntries() {
        var limiter = RateLimiter(threePerTen, at: t(0))
        for _ in 0..<3 { _ = limiter.acquire(1, at: t(4)) }
        #expect(Array(limiter.state.entries) == [SlidingWindowLog.Entry(instantNanoseconds: 4, permits: 3)])
    }

    @Test("SWL-11 no window (t − W, t] admits more than the limit; the log holds at most limit entries")
    func invariants() {
        forEachAdmission(SlidingWindowLog.self, "invariants") { history, log, step in
            guard let newest = history.last else { return true }
            let inWindow = totalPermits(
                history.filter {
                    $0.instant <= newest.instant && $0.instant > newest.instant - log.windowNanoseconds
                })
            guard
                holds(
                    inWindow <= log.limit,
                    "\(inWindow) permits in the window ending at \(newest.instant): \(step.description)",
                    replay: step.replay)
            else { return false }
            return holds(
                step.after.entries.count <= log.limit, "\(step.after.entries.count) entries: \(step.description)",
                replay: step.replay)
        }
    }
}
