import RateLimitConformance
import RateLimitCore
import Testing

/// A register: write(v) answers nil, read answers the value.
private enum RegisterOp: Sendable {
    case write(Int)
    case read
}

private func register(_ state: Int, _ op: RegisterOp) -> (Int, Int?) {
    switch op {
    case .write(let value): (value, nil)
    case .read: (state, state)
    }
}

private func op(_ call: UInt64, _ returned: UInt64, _ input: RegisterOp, _ output: Int?) -> HistoryOperation<
    RegisterOp, Int?
> {
    HistoryOperation(call: call, returned: returned, input: input, output: output)
}

@Suite("Linearizability checker")
struct LinearizabilityTests {
    @Test("Overlapping operations may be ordered either way")
    func overlapping() {
        // write(1) overlaps a read that sees 1, and a read that sees 0 (the initial value).
        let history = [op(1, 4, .write(1), nil), op(2, 5, .read, 1), op(3, 6, .read, 0)]
        let verdict = LinearizabilityChecker.check(history, initial: 0, step: register)
        #expect(verdict == .linearizable(order: [2, 0, 1]))
    }

    @Test("Real-time order is respected: a read after a completed write cannot see the old value")
    func realTime() {
        let history = [op(1, 2, .write(1), nil), op(3, 4, .read, 0)]
        #expect(
            LinearizabilityChecker.check(history, initial: 0, step: register) == .notLinearizable(longestPrefix: [0]))
    }

    @Test("A stale read between two writes is caught among many interleavings")
    func staleRead() {
        // write(1) [1,2]; write(2) [3,10]; reads overlap write(2); the last read sees 1 after
        // another read already saw 2: impossible.
        let history = [
            op(1, 2, .write(1), nil), op(3, 10, .write(2), nil),
            op(4, 5, .read, 2), op(6, 7, .read, 1),
        ]
        #expect(!LinearizabilityChecker.check(history, initial: 0, step: register).isLinearizable)
    }

    @Test("Histories of a real rate limiter: tryAcquire answers must fit one sequential order")
    func rateLimiterHistory() throws {
        let bucket = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 10)
        let limiter = RateLimiter(bucket, at: .origin)
        func step(_ state: RateLimiter<TokenBucket>, _ permits: Int64) -> (RateLimiter<TokenBucket>, RateLimitResult) {
            var next = state
            let result = next.acquire(permits, at: .origin)
            return (next, result)
        }
        // Three overlapping acquires of 1 at instant 0: two succeed (remaining 1, then 0), one fails.
        let good = [
            HistoryOperation(call: 1, returned: 6, input: Int64(1), output: RateLimitResult.allowed(remaining: 0)),
            HistoryOperation(
                call: 2, returned: 5, input: Int64(1), output: RateLimitResult.rejected(retryAfterNanoseconds: 10)),
            HistoryOperation(call: 3, returned: 4, input: Int64(1), output: RateLimitResult.allowed(remaining: 1)),
        ]
        #expect(LinearizabilityChecker.check(good, initial: limiter, step: step).isLinearizable)
        // Three successes out of a capacity of two: no order explains it.
        let overAdmitted = [
            HistoryOperation(call: 1, returned: 6, input: Int64(1), output: RateLimitResult.allowed(remaining: 1)),
            HistoryOperation(call: 2, returned: 5, input: Int64(1), output: RateLimitResult.allowed(remaining: 0)),
            HistoryOperation(call: 3, returned: 4, input: Int64(1), output: RateLimitResult.allowed(remaining: 0)),
        ]
        #expect(!LinearizabilityChecker.check(overAdmitted, initial: limiter, step: step).isLinearizable)
    }

    @Test("A long sequential history is checked quickly and in order")
    func longHistory() {
        var history: [HistoryOperation<RegisterOp, Int?>] = []
        for index in 0..<2_000 {
            let time = UInt64(index * 2 + 1)
            history.append(
                index % 2 == 0 ? op(time, time + 1, .write(index), nil) : op(time, time + 1, .read, index - 1))
        }
        #expect(
            LinearizabilityChecker.check(history, initial: 0, step: register) == .linearizable(order: Array(0..<2_000)))
    }
}
