import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

@Suite("Segmented sliding window (Spec/SlidingWindowSegments.md)")
struct SlidingWindowSegmentsTests {
    @Test("SWS-1 each bad field is refused by name; the window must fit in Int64")
    func validation() {
        expectRefused(field: "limit", .mustBePositive) { () throws(RateLimitInputError) in
            try SlidingWindowSegments(limit: 0, segmentsPerWindow: 1, segmentNanoseconds: 1)
        }
        expectRefused(field: "segmentsPerWindow", .mustBePositive) { () throws(RateLimitInputError) in
            try SlidingWindowSegments(limit: 1, segmentsPerWindow: -1, segmentNanoseconds: 1)
        }
        expectRefused(field: "segmentNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try SlidingWindowSegments(limit: 1, segmentsPerWindow: 1, segmentNanoseconds: 0)
        }
        expectRefused(field: "segmentNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)) {
            () throws(RateLimitInputError) in
            try SlidingWindowSegments(limit: 1, segmentsPerWindow: 2, segmentNanoseconds: .max)
        }
        expectRefused(field: "segmentNanoseconds", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try SlidingWindowSegments(limit: 1, segmentsPerWindow: 2, segment: .nanoseconds(1) / 2)
        }
        // The widest window: one segment of Int64.max, or Int64.max segments of 1 ns.
        #expect((try? SlidingWindowSegments(limit: 1, segmentsPerWindow: 1, segmentNanoseconds: .max)) != nil)
        #expect((try? SlidingWindowSegments(limit: 1, segmentsPerWindow: .max, segmentNanoseconds: 1)) != nil)
    }

    @Test("SWS-2 after every admission the state holds at most min(segments, limit) entries, each in force")
    func boundedMemory() {
        forEachRandomStep(SlidingWindowSegments.self, "boundedMemory") { step in
            guard case .acquire(let n) = step.event, n > 0, step.result.isAdmitted else { return true }
            let window = step.strategy
            let count = Int64(step.after.segments.count)
            let current = step.after.lastNanoseconds / window.segmentNanoseconds
            return holds(
                count <= min(window.segmentsPerWindow, window.limit)
                    && step.after.segments.allSatisfy { current - $0.index < window.segmentsPerWindow },
                "SWS-2 \(count) entries \(Array(step.after.segments)) after an admission: \(step.description)",
                replay: step.replay)
        }
    }

    @Test("SWS-11 the permits admitted in any S consecutive segments total at most the limit")
    func safetyBound() {
        forEachAdmission(SlidingWindowSegments.self, "safetyBound") { history, window, step in
            guard let last = history.last else { return true }
            let segment = window.segmentNanoseconds
            let inWindow = history.filter { last.instant / segment - $0.instant / segment < window.segmentsPerWindow }
            let total = totalPermits(inWindow)
            return holds(
                total <= window.limit,
                "SWS-11 \(total) permits in the \(window.segmentsPerWindow) segments ending at \(last.instant): \(step.description)",
                replay: step.replay)
        }
    }

    @Test("SWS-12 given its own admissions, the segmented window admits whenever the log of the same window would")
    func neverStricterThanTheLog() {
        // The admissions since the last reset; after a reconfigure (which keeps counts in new
        // segments, SWS-10) the log has no such history, so steps are compared up to the first one.
        var history: [Admission] = []
        var comparable = true
        forEachRandomStep(SlidingWindowSegments.self, "neverStricterThanTheLog") { step in
            if step.index == 0 { (history, comparable) = ([], true) }
            switch step.event {
            case .reset:
                (history, comparable) = ([], true)
                return true
            case .reconfigure:
                comparable = false
                return true
            case .release:
                return true
            case .acquire(let n):
                let window = step.strategy
                guard comparable, n > 0, n <= window.limit else { return true }
                let instant = window.evaluationInstant(step.before, now: step.now)
                // The log of W = S·G holding the same admissions counts those of the last W ns.
                let span = window.segmentsPerWindow * window.segmentNanoseconds
                let logged = totalPermits(history.filter { instant - $0.instant < span })
                if step.result.isAdmitted { history.append(Admission(instant: instant, permits: n, start: instant)) }
                return holds(
                    logged > window.limit - n || step.result.isAdmitted,
                    "SWS-12 the log with the same admissions counts \(logged) and admits \(n), the segments refuse: \(step.description)",
                    replay: step.replay)
            }
        }
    }
}

/// The creation variant (SWS-13).
@Suite("Segmented sliding window aligned to the creation (Spec/SlidingWindowSegments.md SWS-13)")
struct SlidingWindowSegmentsAlignmentTests {
    @Test("SWS-13 creation: a limiter created at c answers at t as the origin design created at 0 answers at t − c")
    func creationIsTheOriginShifted() {
        checkCreationIsTheOriginShifted(
            "SWS creationIsTheOriginShifted",
            random: { rng in
                try! SlidingWindowSegments(
                    limit: rng.int(in: 1...5), segmentsPerWindow: rng.int(in: 1...4),
                    segmentNanoseconds: rng.int(in: 1...12))
            }, creation: { $0.aligned(.creation)! })
    }

    @Test("SWS-13 hand-worked: segments from the creation; first-event and another alignment are refused")
    func handWorked() throws {
        // 2 permits per 2 segments of 5 ns, created at 3: segments [3, 8), [8, 13), [13, 18)...
        let window = try SlidingWindowSegments(
            limit: 2, segmentsPerWindow: 2, segmentNanoseconds: 5, alignment: .creation)
        var limiter = RateLimiter(window, at: t(3))
        #expect(limiter.step(.acquire(1), at: t(4)) == .allowed(remaining: 1))
        #expect(limiter.step(.acquire(1), at: t(9)) == .allowed(remaining: 0))
        #expect(limiter.step(.acquire(1), at: t(12)) == .rejected(retryAfterNanoseconds: 1), "[3, 8) slides out at 13")
        #expect(limiter.step(.acquire(1), at: t(13)) == .allowed(remaining: 0))
        #expect(limiter.step(.reset, at: t(14)) == .allowed(remaining: 2))
        #expect(limiter.step(.acquire(2), at: t(15)) == .allowed(remaining: 0))
        #expect(
            limiter.step(.acquire(1), at: t(20)) == .rejected(retryAfterNanoseconds: 4), "re-anchored at 14: out at 24")
        let refused = limiter.step(.reconfigure(window.aligned(.origin)!), at: t(21))
        guard case .invalid(let error) = refused else {
            Issue.record("expected invalid, got \(refused)")
            return
        }
        #expect(error.field == "alignment" && error.problem == .notSupported)
        expectRefused(field: "alignment", .notSupported) { () throws(RateLimitInputError) in
            try SlidingWindowSegments(limit: 1, segmentsPerWindow: 1, segmentNanoseconds: 1, alignment: .firstEvent)
        }
    }
}
