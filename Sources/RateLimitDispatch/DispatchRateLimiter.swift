// One rate limiter on a serial dispatch queue (Spec/WaitQueue.md): the wait queue of one strategy,
// executed by the shell of `DispatchShell.swift`. What this adapter answers as the lock adapter does
// is in `DispatchRateLimiter+Shared.swift`, generated (`make facades`).

import Dispatch
@_exported import RateLimitClock
@_exported import RateLimitCore
import RateLimitShell

/// A rate limiter of any strategy on a serial dispatch queue, for code built on completion
/// handlers: `tryAcquire` answers at once, `acquire` calls its completion handler on the callback
/// queue when the request is granted, times out or is refused (Spec/WaitQueue.md).
///
/// Keep the limiter alive while requests wait: one released from memory ends them `closed`.
public final class DispatchRateLimiter<Strategy: RateLimitStrategy, C: Clock>: Sendable where C.Duration == Duration {
    @usableFromInline let shell: DispatchShell<WaitQueue<Strategy>, C>

    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits (by default
    /// `WaitQueue.defaultQueueLimit`, so that `acquire` waits; 0 refuses whatever would wait),
    /// on `clock`;
    /// completion handlers run on `callbackQueue`.
    ///
    /// - Throws: `RateLimitInputError` when `queueLimit` is negative.
    public init(
        _ strategy: Strategy, queueLimit: Int64 = WaitQueue<Strategy>.defaultQueueLimit, clock: C,
        callbackQueue: DispatchQueue = .global()
    )
        throws(RateLimitInputError)
    {
        shell = DispatchShell(
            machine: try WaitQueue(strategy, queueLimit: queueLimit, at: .origin),
            label: "RateLimitDispatch.\(Strategy.identifier)",
            clock: clock, callbackQueue: callbackQueue)
    }

    /// Requests `permits`, waiting in the queue if needed; `completion` runs once on the callback
    /// queue with the grant (after the scheduled start of a `delayed` grant) or the error. A
    /// `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    /// A request that continues an earlier one (a retry) names that one's `arrival` (``now`` when
    /// it was made) and keeps its place among the waiters of its priority (WQ-3).
    public func acquire(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil,
        completion: @escaping @Sendable (Result<RateLimitGrant, RateLimitAcquireError>) -> Void
    ) {
        let timeline = shell.timeline
        shell.submit(permits: permits, completion: completion) { queue, now in
            queue.acquire(
                permits, priority: priority, deadline: timeout.map { timeline.deadline(after: $0, from: now) },
                arrival: arrival, at: now)
        }
    }
}

extension DispatchRateLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public convenience init(
        _ strategy: Strategy, queueLimit: Int64 = WaitQueue<Strategy>.defaultQueueLimit,
        callbackQueue: DispatchQueue = .global()
    )
        throws(RateLimitInputError)
    {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock(), callbackQueue: callbackQueue)
    }
}
