// One rate limiter guarded by a lock (Spec/WaitQueue.md): the shell of `LockedLimiter.swift`
// executing the wait queue of one strategy.

import RateLimitCore

/// A rate limiter of any strategy guarded by a lock: synchronous `tryAcquire`, a blocking
/// `acquireBlocking` with a timeout, and an async `acquire`.
public typealias LockedRateLimiter<Strategy: RateLimitStrategy, C: Clock> = LockedLimiter<WaitQueue<Strategy>, C>
    where C.Duration == Duration

extension LockedLimiter {
    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits, on `clock`.
    ///
    /// - Throws: ``RateLimitInputError`` when `queueLimit` is negative.
    public convenience init<Strategy>(_ strategy: Strategy, queueLimit: Int64 = 0, clock: C) throws(RateLimitInputError)
    where Machine == WaitQueue<Strategy> {
        self.init(machine: try WaitQueue(strategy, queueLimit: queueLimit, at: .origin), clock: clock)
    }

    /// Parks the calling thread until `permits` are granted, the timeout passes, or the limiter is
    /// closed. A `delayed` grant (leaky bucket queue) also waits for its scheduled start.
    /// A `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    public func acquireBlocking<Strategy>(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) throws(RateLimitAcquireError) -> RateLimitGrant where Machine == WaitQueue<Strategy> {
        try blockingOutcome(permits: permits) { queue, now in request(&queue, permits, priority, timeout, at: now) }
    }

    /// Waits asynchronously until `permits` are granted; cancelling the task cancels the request.
    /// A `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    public func acquire<Strategy>(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant where Machine == WaitQueue<Strategy> {
        try await asyncOutcome(permits: permits) { queue, now in request(&queue, permits, priority, timeout, at: now) }
    }

    private func request<Strategy>(
        _ queue: inout WaitQueue<Strategy>, _ permits: Int64, _ priority: RateLimitPriority, _ timeout: Duration?, at now: RateLimitInstant
    ) -> (WaitTicket, RateLimitEffects) {
        let deadline = timeout.map { timeline.deadline(after: $0, from: now) }
        let (ticket, completions) = queue.acquire(permits, priority: priority, deadline: deadline, at: now)
        return (ticket, RateLimitEffects(completions: completions))
    }
}

extension LockedLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public convenience init<Strategy>(_ strategy: Strategy, queueLimit: Int64 = 0) throws(RateLimitInputError)
    where Machine == WaitQueue<Strategy> {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock())
    }
}
