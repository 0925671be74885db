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
