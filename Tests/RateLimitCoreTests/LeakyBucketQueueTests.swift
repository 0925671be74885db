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
