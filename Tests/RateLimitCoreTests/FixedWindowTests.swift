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

    @Test("FW-11 a window never admits more than the limit")
    func invariants() {
        forEachAdmission(FixedWindow.self, "invariants") { history, window, step in
            guard let newest = history.last else { return true }
            let index = newest.instant / window.windowNanoseconds
            let total = totalPermits(history.filter { $0.instant / window.windowNanoseconds == index })
            return holds(
                total <= window.limit, "window \(index) admitted \(total): \(step.description)", replay: step.replay)
        }
    }
}
