// One rate limiter on a serial dispatch queue (Spec/WaitQueue.md): the wait queue of one strategy,
// executed by the shell of `DispatchShell.swift`.

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

    /// Takes `permits` now if the limiter and the waiters ahead allow it; never waits (WQ-4).
    @inlinable
    public func tryAcquire(_ permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        shell.tryAcquire(permits, priority: priority)
    }

    /// What ``tryAcquire(_:priority:)`` would answer now, without taking anything: whether
    /// `permits` are available and, when the strategy refuses, the exact wait until they are.
    public func availability(of permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        shell.availability(of: permits, priority: priority)
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

    /// The limiter's clock now, as an instant of its timeline (which starts at `origin` when the
    /// limiter is made): what a later request that continues this one names as its `arrival`.
    public var now: RateLimitInstant { shell.timeline.now() }

    /// Gives back permits (concurrency limiter) and serves the waiters (WQ-8).
    @discardableResult
    public func release(_ permits: Int64) -> RateLimitResult { shell.release(permits) }

    /// Resets the strategy's state; waiters are served from the fresh state (WQ-8).
    @discardableResult
    public func reset() -> RateLimitResult { shell.reset() }

    /// Replaces the configuration; waiters are served under the new one (WQ-8).
    @discardableResult
    public func reconfigure(_ strategy: Strategy) -> RateLimitResult { shell.reconfigure(strategy) }

    /// The permits an acquire could take now: `tryAcquire(0)`, which serves the waiters due first
    /// (0 once closed).
    @inlinable
    public func remaining() -> Int64 { shell.remaining() }

    /// The strategy in force.
    public var strategy: Strategy { shell.strategy() }

    /// Requests waiting for a grant.
    public var waitingCount: Int { shell.waitingCount }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    public var scheduledCount: Int { shell.scheduledCount }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() { shell.close() }
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
