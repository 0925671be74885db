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

    @Test("SWC-3 SWC-5 the previous window's weight shrinks by 1/W per nanosecond into the new window")
    func weightShrinks() {
        story(
            fourPerTen,
            [
                (5, .acquire(4), .allowed(remaining: 0)),
                (9, .acquire(0), .allowed(remaining: 0)),
                (10, .acquire(0), .allowed(remaining: 0)),  // 4 × 10/10
                (12, .acquire(0), .allowed(remaining: 0)),  // 4 × 8/10 = 3.2
                (13, .acquire(0), .allowed(remaining: 1)),  // 4 × 7/10 = 2.8
                (15, .acquire(0), .allowed(remaining: 2)),  // 2.0
                (20, .acquire(0), .allowed(remaining: 4)),  // window 1 was empty
            ])
    }

    @Test("SWC-4 the estimate is compared exactly, not floored (Python limits admits at 11, this Spec at 20)")
    func noFloor() throws {
        let one = try SlidingWindowCounter(limit: 1, windowNanoseconds: 10)
        story(
            one,
            [
                (9, .acquire(1), .allowed(remaining: 0)),
                (11, .acquire(1), .rejected(retryAfterNanoseconds: 9)),  // 0.9 + 1 > 1
                (19, .acquire(1), .rejected(retryAfterNanoseconds: 1)),  // 0.1 + 1 > 1
                (20, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("SWC-6 case 1: admitted later in the same window as the previous weight shrinks")
    func retryAfterSameWindow() {
        story(
            fourPerTen,
            [
                (5, .acquire(4), .allowed(remaining: 0)),
                (10, .acquire(1), .rejected(retryAfterNanoseconds: 3)),  // 4·(10 − 3) ≤ 3·10
                (12, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (13, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("SWC-6 case 2: admitted in the next window once the current count weighs little enough")
    func retryAfterNextWindow() {
        story(
            fourPerTen,
            [
                (5, .acquire(4), .allowed(remaining: 0)),
                (6, .acquire(1), .rejected(retryAfterNanoseconds: 7)),  // at 13: 4·7 + 1·10 = 38 ≤ 40
            ])
    }

    @Test("SWC-6 case 3: admitted two windows on when the count never weighs little enough")
    func retryAfterTwoWindows() throws {
        let one = try SlidingWindowCounter(limit: 1, windowNanoseconds: 10)
        story(
            one,
            [
                (5, .acquire(1), .allowed(remaining: 0)),
                (6, .acquire(1), .rejected(retryAfterNanoseconds: 14)),
                (19, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (20, .acquire(1), .allowed(remaining: 0)),
            ])
    }

    @Test("SWC-7 more than the limit, or an admission past the end of the timeline, is never allowed")
    func neverAllowed() throws {
        let one = try SlidingWindowCounter(limit: 1, windowNanoseconds: 10)
        story(fourPerTen, [(0, .acquire(5), .neverAllowed)])
        // Int64.max − 7 starts the last window; the next one would start past Int64.max.
        story(
            one, createdAt: .max - 3,
            [
                (.max - 3, .acquire(1), .allowed(remaining: 0)),
                (.max - 3, .acquire(1), .neverAllowed),
            ])
    }

    @Test("SWC-8 acquire(0) reads the quota; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            fourPerTen,
            [
                (0, .acquire(1), .allowed(remaining: 3)),
                (0, .acquire(0), .allowed(remaining: 3)),
                (0, .release(1), .invalid(.releaseNotSupported)),
                (0, .acquire(-1), .invalid(.negativePermits(-1))),
            ])
    }

    @Test("SWC-9 reset clears both counts")
    func reset() {
        story(
            fourPerTen,
            [
                (5, .acquire(4), .allowed(remaining: 0)),
                (11, .reset, .allowed(remaining: 4)),
                (11, .acquire(4), .allowed(remaining: 0)),
            ])
    }

    @Test("SWC-10 reconfigure keeps both counts and re-aligns them to the new windows")
    func reconfigure() throws {
        let narrow = try SlidingWindowCounter(limit: 4, windowNanoseconds: 4)
        story(
            fourPerTen,
            [
                (5, .acquire(4), .allowed(remaining: 0)),
                (12, .reconfigure(narrow), .allowed(remaining: 0)),  // previous 4 at offset 0 of [12, 16)
                (13, .acquire(0), .allowed(remaining: 1)),  // 4 × 3/4 = 3
                (16, .acquire(0), .allowed(remaining: 4)),  // [12, 16) had nothing
            ])
    }

    @Test("SWC-11 the worst case is attained: 18 permits in one sliding window for limit 10, window 10")
    func worstCase() throws {
        let ten = try SlidingWindowCounter(limit: 10, windowNanoseconds: 10)
        story(
            ten,
            [
                (9, .acquire(10), .allowed(remaining: 0)),
                (18, .acquire(8), .allowed(remaining: 0)),  // 10·2/10 + 8 = 10; the window (8, 18] holds 18
                (18, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
            ])
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
