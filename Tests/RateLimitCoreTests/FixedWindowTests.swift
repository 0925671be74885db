import RateLimitConformance
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

    @Test("FW-2 FW-13 the state is the count, the last instant and the anchor, 24 bytes")
    func state() {
        #expect(threePerTen.initialState(at: t(3)) == FixedWindow.State(used: 0, lastNanoseconds: 3))
        #expect(
            threePerTen.aligned(.creation).initialState(at: t(3))
                == FixedWindow.State(used: 0, lastNanoseconds: 3, anchorNanoseconds: 3))
        #expect(MemoryLayout<FixedWindow.State>.size == 24)
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

/// The declared alignment variants (FW-13), each against what defines it: `creation` against the
/// origin design shifted by the creation instant, `first-event` against a model of open windows
/// written from the clause's words.
@Suite("Fixed window alignment variants (Spec/FixedWindow.md FW-13)")
struct FixedWindowAlignmentTests {
    @Test("FW-13 hand-worked: windows from the creation instant, and from the first admission")
    func handWorked() {
        // Created at 7 with windows of 10: [7, 17), [17, 27)...
        var creation = RateLimiter(try! FixedWindow(limit: 2, windowNanoseconds: 10, alignment: .creation), at: t(7))
        #expect(creation.step(.acquire(2), at: t(9)) == .allowed(remaining: 0))
        #expect(creation.step(.acquire(1), at: t(10)) == .rejected(retryAfterNanoseconds: 7), "admitted at 17, not 20")
        #expect(creation.step(.acquire(1), at: t(17)) == .allowed(remaining: 1))
        #expect(creation.step(.reset, at: t(20)) == .allowed(remaining: 2))
        #expect(creation.step(.acquire(2), at: t(21)) == .allowed(remaining: 0))
        #expect(creation.step(.acquire(1), at: t(22)) == .rejected(retryAfterNanoseconds: 8), "a reset re-anchors: 30")
        // The first admission opens [a, a + 10); a query or a refusal opens nothing.
        var first = RateLimiter(try! FixedWindow(limit: 2, windowNanoseconds: 10, alignment: .firstEvent), at: t(0))
        #expect(first.step(.acquire(0), at: t(4)) == .allowed(remaining: 2))
        #expect(first.step(.acquire(3), at: t(5)) == .neverAllowed)
        #expect(first.step(.acquire(1), at: t(13)) == .allowed(remaining: 1), "opens [13, 23)")
        #expect(first.step(.acquire(2), at: t(20)) == .rejected(retryAfterNanoseconds: 3))
        #expect(first.step(.acquire(2), at: t(23)) == .allowed(remaining: 0), "opens [23, 33)")
        #expect(first.step(.acquire(1), at: t(40)) == .allowed(remaining: 1), "idle since 33: opens [40, 50)")
        // A shorter window that no longer contains e: the kept count moves to a window opened at e.
        let shorter = try! FixedWindow(limit: 2, windowNanoseconds: 5, alignment: .firstEvent)
        #expect(first.step(.reconfigure(shorter), at: t(46)) == .allowed(remaining: 1))
        #expect(first.step(.acquire(2), at: t(47)) == .rejected(retryAfterNanoseconds: 4), "[46, 51)")
    }

    @Test("FW-13 a reconfigure to another alignment is refused and changes nothing")
    func alignmentIsTheLimiters() {
        var limiter = RateLimiter(threePerTen.aligned(.creation), at: t(5))
        #expect(limiter.step(.acquire(2), at: t(6)) == .allowed(remaining: 1))
        let result = limiter.step(.reconfigure(threePerTen), at: t(7))
        guard case .invalid(let error) = result else {
            Issue.record("expected invalid, got \(result)")
            return
        }
        #expect(error.field == "alignment" && error.problem == .notSupported)
        #expect(limiter.step(.acquire(0), at: t(8)) == .allowed(remaining: 1))
    }

    @Test("FW-13 creation: a limiter created at c answers at t as the origin design created at 0 answers at t − c")
    func creationIsTheOriginShifted() {
        checkCreationIsTheOriginShifted(
            "creationIsTheOriginShifted", random: { randomWindow(.origin, using: &$0) },
            creation: { $0.aligned(.creation) })
    }

    @Test("FW-13 first-event: every answer is the one a model of open windows gives")
    func firstEventAgainstOpenWindows() {
        for trace in 0..<200 {
            var rng = PropertySeed.generator("FW-13 first-event", trace: trace)
            let replay = PropertySeed.replay("firstEventAgainstOpenWindows", trace: trace)
            var strategy = randomWindow(.firstEvent, using: &rng)
            var now = rng.chance(20) ? Int64.max - rng.int(in: 0...1_000) : rng.int(in: 0...1_000)
            var state = strategy.initialState(at: t(now))
            var model = OpenWindows(limit: strategy.limit, window: strategy.windowNanoseconds, last: now)
            for index in 0..<300 {
                now = rng.chance(10) ? max(0, now - rng.int(in: 0...20)) : later(now, by: rng.int(in: 0...25))
                let next = rng.int(in: 0...19) == 0 ? randomWindow(.firstEvent, using: &rng) : nil
                let event: RateLimitEvent<FixedWindow> =
                    next.map { .reconfigure($0) }
                    ?? (rng.chance(5) ? .reset : .acquire(rng.int(in: -1...strategy.limit + 1)))
                let expected = model.step(event, at: now)
                let got = strategy.step(&state, event, at: t(now))
                if let next { strategy = next }
                guard
                    holds(
                        got == expected, "step \(index) at \(now): \(event) -> \(got), model \(expected)",
                        replay: replay)
                else { break }
            }
        }
    }
}

/// A fixed window of 1 to 4 permits per 1 to 30 ns, aligned as asked.
private func randomWindow(_ alignment: WindowAlignment, using rng: inout SeededGenerator) -> FixedWindow {
    try! FixedWindow(limit: rng.int(in: 1...4), windowNanoseconds: rng.int(in: 1...30), alignment: alignment)
}

/// FW-13's first-event variant in its own words: a window opened by an admission, open while it has
/// permits counted and has not run its length.
private struct OpenWindows {
    var limit: Int64
    var window: Int64
    var last: Int64
    var opened: Int64 = 0
    var counted: Int64 = 0

    func isOpen(at instant: Int64) -> Bool { counted > 0 && instant - opened < window }

    mutating func step(_ event: RateLimitEvent<FixedWindow>, at now: Int64) -> RateLimitResult {
        let e = max(now, last)
        let inWindow = isOpen(at: e) ? counted : 0
        switch event {
        case .acquire(let n) where n < 0: return .invalid(.negativePermits(n))
        case .acquire(let n) where n > limit: return .neverAllowed
        case .acquire(0): return .allowed(remaining: max(0, limit - inWindow))
        case .acquire(let n):
            guard inWindow + n <= limit else {
                // Past the end of the timeline: never (CORE-7).
                let (admission, overflow) = opened.addingReportingOverflow(window)
                return overflow ? .neverAllowed : .rejected(retryAfterNanoseconds: admission - now)
            }
            if !isOpen(at: e) { opened = e }
            counted = inWindow + n
            last = e
            return .allowed(remaining: limit - counted)
        case .release: return .invalid(.releaseNotSupported)
        case .reset:
            (counted, opened, last) = (0, e, e)
            return .allowed(remaining: limit)
        case .reconfigure(let next):
            counted = inWindow
            (limit, window, last) = (next.limit, next.windowNanoseconds, e)
            if counted == 0 || e - opened >= window { opened = e }
            return .allowed(remaining: max(0, limit - counted))
        }
    }
}
