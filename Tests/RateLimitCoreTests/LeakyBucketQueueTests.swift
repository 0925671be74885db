import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// Starts one permit every 10 ns; up to 2 permits wait.
private let twoWaiting = try! LeakyBucketQueue(queueCapacity: 2, intervalNanoseconds: 10)

@Suite("Leaky bucket as a queue (Spec/LeakyBucketQueue.md)")
struct LeakyBucketQueueTests {
    @Test("LBQ-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "queueCapacity", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try LeakyBucketQueue(queueCapacity: -1, intervalNanoseconds: 10)
        }
        expectRefused(field: "queueCapacity", .exceedsMaximum(.max - 1)) { () throws(RateLimitInputError) in
            try LeakyBucketQueue(queueCapacity: .max, intervalNanoseconds: 1)
        }
        expectRefused(field: "intervalNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try LeakyBucketQueue(queueCapacity: 0, intervalNanoseconds: 0)
        }
        expectRefused(field: "intervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)) {
            () throws(RateLimitInputError) in
            try LeakyBucketQueue(queueCapacity: 1, intervalNanoseconds: .max)
        }
    }

    @Test("LBQ-2 the state is the next start and the last instant, 16 bytes")
    func state() {
        #expect(
            twoWaiting.initialState(at: t(4)) == LeakyBucketQueue.State(nextStartNanoseconds: 4, lastNanoseconds: 4))
        #expect(MemoryLayout<LeakyBucketQueue.State>.size == 16)
    }

    @Test("LBQ-3 a request admitted at the recorded instant waits from an earlier now")
    func backwardTime() {
        story(
            twoWaiting,
            [
                (100, .reset, .allowed(remaining: 3)),
                (95, .acquire(1), .delayed(waitNanoseconds: 5, remaining: 2)),  // starts at 100
                (95, .acquire(1), .delayed(waitNanoseconds: 15, remaining: 1)),  // starts at 110
            ])
    }

    @Test("LBQ-4 LBQ-5 the first request goes at once, later ones exactly one interval apart")
    func spacing() {
        story(
            twoWaiting,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (0, .acquire(1), .delayed(waitNanoseconds: 10, remaining: 1)),
                (0, .acquire(1), .delayed(waitNanoseconds: 20, remaining: 0)),
                (0, .acquire(1), .rejected(retryAfterNanoseconds: 10)),
                (10, .acquire(1), .delayed(waitNanoseconds: 20, remaining: 0)),
                (40, .acquire(1), .allowed(remaining: 2)),
            ])
    }

    @Test("LBQ-4 a weighted request occupies one interval per permit")
    func weighted() {
        story(
            twoWaiting,
            [
                (0, .acquire(2), .allowed(remaining: 1)),
                (0, .acquire(1), .delayed(waitNanoseconds: 20, remaining: 0)),
                (0, .acquire(1), .rejected(retryAfterNanoseconds: 10)),
            ])
    }

    @Test("LBQ-6 the retry-after is when room appears in the queue (one before, at, one after)")
    func retryAfterEdge() {
        story(
            twoWaiting,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (10, .acquire(0), .allowed(remaining: 1)),
                (11, .acquire(1), .delayed(waitNanoseconds: 19, remaining: 0)),
            ])
    }

    @Test("LBQ-7 more than queueCapacity + 1, or a start past the end of the timeline, is never allowed")
    func neverAllowed() {
        story(twoWaiting, [(0, .acquire(4), .neverAllowed)])
        story(
            twoWaiting, createdAt: .max - 15,
            [
                (.max - 15, .acquire(1), .allowed(remaining: 2)),
                // the next start is past the end
                (.max - 15, .acquire(1), .delayed(waitNanoseconds: 10, remaining: 0)),
                (.max - 15, .acquire(1), .neverAllowed),
                (.max, .acquire(1), .neverAllowed),
            ])
    }

    @Test("LBQ-8 acquire(0) reads the room; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            twoWaiting,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (0, .acquire(0), .allowed(remaining: 2)),
                (0, .release(1), .invalid(.releaseNotSupported)),
                (0, .acquire(-1), .invalid(.negativePermits(-1))),
            ])
    }

    @Test("LBQ-9 reset discards the schedule")
    func reset() {
        story(
            twoWaiting,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (1, .reset, .allowed(remaining: 3)),
                (1, .acquire(1), .allowed(remaining: 2)),
            ])
    }

    @Test("LBQ-10 reconfigure keeps the schedule: waiting requests keep their turn")
    func reconfigure() throws {
        let none = try LeakyBucketQueue(queueCapacity: 0, intervalNanoseconds: 5)
        story(
            twoWaiting,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (0, .acquire(1), .delayed(waitNanoseconds: 10, remaining: 1)),
                (0, .acquire(1), .delayed(waitNanoseconds: 20, remaining: 0)),  // the schedule is busy until 30
                (0, .reconfigure(none), .allowed(remaining: 0)),
                (0, .acquire(1), .rejected(retryAfterNanoseconds: 30)),
                (30, .acquire(1), .allowed(remaining: 0)),
                (31, .acquire(1), .rejected(retryAfterNanoseconds: 4)),
            ])
    }

    @Test("LBQ-11 starts are spaced by the permits before them and at most queueCapacity permits wait")
    func invariants() {
        forEachAdmission(LeakyBucketQueue.self, "invariants") { history, queue, step in
            guard let newest = history.last else { return true }
            guard
                holds(
                    newest.start >= newest.instant, "start before its instant: \(step.description)", replay: step.replay
                )
            else { return false }
            if history.count >= 2 {
                let previous = history[history.count - 2]
                let gap = floorMultiplyDivide(previous.permits, queue.intervalNanoseconds, 1)
                guard
                    holds(
                        gap.map { newest.start - previous.start >= $0 } ?? false,
                        "starts \(previous.start) and \(newest.start) closer than \(previous.permits) intervals: \(step.description)",
                        replay: step.replay)
                else { return false }
            }
            let waiting = totalPermits(history.filter { $0.start > newest.instant })
            return holds(
                waiting <= queue.queueCapacity, "\(waiting) permits waiting: \(step.description)", replay: step.replay)
        }
    }
}
