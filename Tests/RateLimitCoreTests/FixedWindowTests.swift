import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// Three permits per window [10·j, 10·(j+1)).
private let threePerTen = try! FixedWindow(limit: 3, windowNanoseconds: 10)

@Suite("Fixed window (Spec/FixedWindow.md)")
struct FixedWindowTests {
    @Test("FW-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "limit", .mustBePositive) { () throws(RateLimitInputError) in
            try FixedWindow(limit: 0, windowNanoseconds: 10)
        }
        expectRefused(field: "windowNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try FixedWindow(limit: 1, windowNanoseconds: -10)
        }
        expectRefused(field: "windowNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try FixedWindow(limit: 1, window: .zero)
        }
    }

    @Test("FW-2 the state is the count and the last instant, 16 bytes")
    func state() {
        #expect(threePerTen.initialState(at: t(3)) == FixedWindow.State(used: 0, lastNanoseconds: 3))
        #expect(MemoryLayout<FixedWindow.State>.size == 16)
    }

    @Test("FW-3 a new window starts exactly at a multiple of the window (one before, at, one after)")
    func windowEdges() {
        story(
            threePerTen,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (9, .acquire(0), .allowed(remaining: 0)),
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (10, .acquire(0), .allowed(remaining: 3)),
                (11, .acquire(1), .allowed(remaining: 2)),
            ])
    }

    @Test("FW-3 windows are aligned to the origin, not to the creation instant")
    func alignedToOrigin() {
        story(
            threePerTen, createdAt: 5,
            [
                (5, .acquire(3), .allowed(remaining: 0)),
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (10, .acquire(1), .allowed(remaining: 2)),
            ])
    }

    @Test("FW-4 FW-5 FW-6 a weighted acquire waits for the next window when the rest does not fit")
    func weighted() {
        story(
            threePerTen,
            [
                (0, .acquire(2), .allowed(remaining: 1)),
                (3, .acquire(2), .rejected(retryAfterNanoseconds: 7)),
                (3, .acquire(1), .allowed(remaining: 0)),
                (8, .acquire(1), .rejected(retryAfterNanoseconds: 2)),
            ])
    }

    @Test("FW-7 more than the limit, or a next window past the end of the timeline, is never allowed")
    func neverAllowed() throws {
        let one = try FixedWindow(limit: 1, windowNanoseconds: 10)
        story(threePerTen, [(0, .acquire(4), .neverAllowed)])
        // Int64.max ends in ...807: the last window starts at Int64.max − 7.
        story(
            one, createdAt: .max - 17,
            [
                (.max - 17, .acquire(1), .allowed(remaining: 0)),
                (.max - 17, .acquire(1), .rejected(retryAfterNanoseconds: 10)),
                (.max - 7, .acquire(1), .allowed(remaining: 0)),
                (.max, .acquire(1), .neverAllowed),
            ])
    }

    @Test("FW-8 acquire(0) reads the quota; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            threePerTen,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (1, .acquire(0), .allowed(remaining: 2)),
                (1, .release(1), .invalid(.releaseNotSupported)),
                (1, .acquire(-2), .invalid(.negativePermits(-2))),
            ])
    }

    @Test("FW-9 reset clears the count and keeps the windows where they are")
    func reset() {
        story(
            threePerTen,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (5, .reset, .allowed(remaining: 3)),
                (5, .acquire(3), .allowed(remaining: 0)),
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (10, .acquire(1), .allowed(remaining: 2)),
            ])
    }

    @Test("FW-10 reconfigure keeps the current count, attributed to the new window")
    func reconfigure() throws {
        let narrow = try FixedWindow(limit: 2, windowNanoseconds: 4)
        story(
            threePerTen,
            [
                (5, .acquire(2), .allowed(remaining: 1)),
                (6, .reconfigure(narrow), .allowed(remaining: 0)),  // 2 used in [4, 8)
                (7, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (8, .acquire(1), .allowed(remaining: 1)),
            ])
        story(
            threePerTen,
            [
                (5, .acquire(3), .allowed(remaining: 0)),
                (12, .reconfigure(narrow), .allowed(remaining: 2)),  // a new window under the old one: count 0
            ])
    }

    @Test("FW-11 a window never admits more than the limit, but 2 × limit fit across a boundary")
    func invariants() {
        story(
            threePerTen,
            [
                (9, .acquire(3), .allowed(remaining: 0)),
                (10, .acquire(3), .allowed(remaining: 0)),  // 6 permits within 2 ns
            ])
        forEachAdmission(FixedWindow.self, "invariants") { history, window, step in
            guard let newest = history.last else { return true }
            let index = newest.instant / window.windowNanoseconds
            let total = totalPermits(history.filter { $0.instant / window.windowNanoseconds == index })
            return holds(
                total <= window.limit, "window \(index) admitted \(total): \(step.description)", replay: step.replay)
        }
    }
}
