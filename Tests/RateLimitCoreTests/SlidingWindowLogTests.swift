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

    @Test("SWL-3 an admission stops counting exactly one window later (one before, at, one after)")
    func expiryEdge() {
        story(
            threePerTen,
            [
                (5, .acquire(3), .allowed(remaining: 0)),
                (14, .acquire(0), .allowed(remaining: 0)),
                (14, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (15, .acquire(0), .allowed(remaining: 3)),
                (16, .acquire(0), .allowed(remaining: 3)),
            ])
    }

    @Test("SWL-4 SWL-5 SWL-6 a refused acquire waits for the oldest entries that free enough permits")
    func retryAfterWalksTheLog() {
        story(
            threePerTen,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (2, .acquire(1), .allowed(remaining: 1)),
                (4, .acquire(1), .allowed(remaining: 0)),
                (5, .acquire(2), .rejected(retryAfterNanoseconds: 7)),  // the entries at 0 and 2 must expire
                (10, .acquire(0), .allowed(remaining: 1)),
                (11, .acquire(2), .rejected(retryAfterNanoseconds: 1)),
                (12, .acquire(2), .allowed(remaining: 0)),
            ])
    }

    @Test("SWL-7 more than the limit, or an expiry past the end of the timeline, is never allowed")
    func neverAllowed() throws {
        let one = try SlidingWindowLog(limit: 1, windowNanoseconds: 10)
        story(threePerTen, [(0, .acquire(4), .neverAllowed)])
        story(
            one, createdAt: .max - 10,
            [
                (.max - 10, .acquire(1), .allowed(remaining: 0)),
                (.max - 10, .acquire(1), .rejected(retryAfterNanoseconds: 10)),
                (.max, .acquire(1), .allowed(remaining: 0)),
                (.max, .acquire(1), .neverAllowed),
            ])
    }

    @Test("SWL-8 acquire(0) reads the quota; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            threePerTen,
            [
                (0, .acquire(2), .allowed(remaining: 1)),
                (0, .acquire(0), .allowed(remaining: 1)),
                (0, .release(1), .invalid(.releaseNotSupported)),
                (0, .acquire(-1), .invalid(.negativePermits(-1))),
            ])
    }

    @Test("SWL-9 reset empties the log")
    func reset() {
        story(
            threePerTen,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (1, .reset, .allowed(remaining: 3)),
                (1, .acquire(3), .allowed(remaining: 0)),
                (10, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
            ])
    }

    @Test("SWL-10 reconfigure keeps the entries in force; a longer window does not bring back expired ones")
    func reconfigure() throws {
        let longer = try SlidingWindowLog(limit: 3, windowNanoseconds: 20)
        let lower = try SlidingWindowLog(limit: 1, windowNanoseconds: 10)
        story(
            threePerTen,
            [
                (0, .acquire(2), .allowed(remaining: 1)),
                (8, .acquire(1), .allowed(remaining: 0)),
                (12, .reconfigure(longer), .allowed(remaining: 2)),  // the entry at 0 expired under 10 ns
                (12, .acquire(2), .allowed(remaining: 0)),
                (27, .acquire(1), .rejected(retryAfterNanoseconds: 1)),  // the entry at 8 counts until 27
                (28, .acquire(1), .allowed(remaining: 0)),
            ])
        story(
            threePerTen,
            [
                (0, .acquire(2), .allowed(remaining: 1)),
                (1, .reconfigure(lower), .allowed(remaining: 0)),  // 2 in force, limit 1
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (10, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("SWL-12 SWC-11 on the sliding counter's worst-case trace the log admits only the limit")
    func counterWorstCase() throws {
        let ten = try SlidingWindowLog(limit: 10, windowNanoseconds: 10)
        story(
            ten,
            [
                (9, .acquire(10), .allowed(remaining: 0)),
                (18, .acquire(8), .rejected(retryAfterNanoseconds: 1)),  // the counter admits these 8 here
                (19, .acquire(8), .allowed(remaining: 2)),
            ])
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
