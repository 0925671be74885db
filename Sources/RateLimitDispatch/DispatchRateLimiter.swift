// One rate limiter on a serial dispatch queue (Spec/WaitQueue.md): the shell of
// `DispatchLimiter.swift` executing the wait queue of one strategy.

import Dispatch
import RateLimitCore

/// A rate limiter of any strategy on a serial dispatch queue, with completion handlers.
public typealias DispatchRateLimiter<Strategy: RateLimitStrategy, C: Clock> = DispatchLimiter<WaitQueue<Strategy>, C>
    where C.Duration == Duration

extension DispatchLimiter {
    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits, on `clock`;
    /// completion handlers run on `callbackQueue`.
    ///
    /// - Throws: ``RateLimitInputError`` when `queueLimit` is negative.
    public convenience init<Strategy>(
        _ strategy: Strategy, queueLimit: Int64 = 0, clock: C, callbackQueue: DispatchQueue = .global()
    ) throws(RateLimitInputError) where Machine == WaitQueue<Strategy> {
        self.init(machine: try WaitQueue(strategy, queueLimit: queueLimit, at: .origin), label: "RateLimitDispatch.\(Strategy.identifier)",
                  clock: clock, callbackQueue: callbackQueue)
    }

    /// Requests `permits`, waiting in the queue if needed; `completion` runs once on the callback
    /// queue with the grant (after the scheduled start of a `delayed` grant) or the error.
    /// A `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    public func acquire<Strategy>(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<RateLimitGrant, RateLimitAcquireError>) -> Void
    ) where Machine == WaitQueue<Strategy> {
        let timeline = timeline
        submit(permits: permits, completion: completion) { queue, now in
            let deadline = timeout.map { timeline.deadline(after: $0, from: now) }
            let (ticket, completions) = queue.acquire(permits, priority: priority, deadline: deadline, at: now)
            return (ticket, RateLimitEffects(completions: completions))
        }
    }
}

extension DispatchLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public convenience init<Strategy>(_ strategy: Strategy, queueLimit: Int64 = 0, callbackQueue: DispatchQueue = .global()) throws(RateLimitInputError)
    where Machine == WaitQueue<Strategy> {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock(), callbackQueue: callbackQueue)
    }
}
