// One rate limiter as an actor (Spec/WaitQueue.md): the shell of `ActorLimiter.swift` executing
// the wait queue of one strategy.

import RateLimitCore

/// A rate limiter of any strategy, as an actor: `tryAcquire` answers at once, `acquire` waits in a
/// bounded priority queue until it is granted, times out or is cancelled.
public typealias ActorRateLimiter<Strategy: RateLimitStrategy, C: Clock> = ActorLimiter<WaitQueue<Strategy>, C>
    where C.Duration == Duration

extension ActorLimiter {
    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits, on `clock`.
    ///
    /// - Throws: ``RateLimitInputError`` when `queueLimit` is negative.
    public init<Strategy>(_ strategy: Strategy, queueLimit: Int64 = 0, clock: C) throws(RateLimitInputError)
    where Machine == WaitQueue<Strategy> {
        self.init(machine: try WaitQueue(strategy, queueLimit: queueLimit, at: .origin), clock: clock)
    }

    /// Takes `permits` now if the limiter and the waiters ahead allow it; never waits (WQ-4).
    @inlinable
    public func tryAcquire<Strategy>(_ permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome
    where Machine == WaitQueue<Strategy> {
        guard !isClosed else { return .closed }
        return run { queue, now in
            let (outcome, completions) = queue.tryAcquire(permits, priority: priority, at: now)
            return (outcome, RateLimitEffects(completions: completions))
        }
    }

    /// Waits until `permits` are granted (WQ-4, WQ-5). A `delayed` grant (leaky bucket queue) also
    /// waits for its scheduled start before returning.
    ///
    /// - Parameter timeout: how long to wait at most; `nil` waits as long as it takes; zero or
    ///   less, or under a nanosecond, is granted or times out at once (WQ-11).
    /// - Throws: ``RateLimitAcquireError``: rejected at once, timed out, cancelled, or closed.
    public func acquire<Strategy>(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant where Machine == WaitQueue<Strategy> {
        guard !isClosed else { throw .closed }
        let now = timeline.now()
        let deadline = timeout.map { timeline.deadline(after: $0, from: now) }
        let (ticket, completions) = machine.acquire(permits, priority: priority, deadline: deadline, at: now)
        return try await outcome(of: ticket, permits: permits, effects: RateLimitEffects(completions: completions), at: now)
    }

    /// Gives back permits (concurrency limiter) and serves the waiters (WQ-8).
    @discardableResult
    public func release<Strategy>(_ permits: Int64) -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in
            let (result, completions) = queue.release(permits, at: now)
            return (result, RateLimitEffects(completions: completions))
        }
    }

    /// Resets the strategy's state; waiters are served from the fresh state (WQ-8).
    @discardableResult
    public func reset<Strategy>() -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in
            let (result, completions) = queue.reset(at: now)
            return (result, RateLimitEffects(completions: completions))
        }
    }

    /// Replaces the configuration; waiters are served under the new one (WQ-8).
    @discardableResult
    public func reconfigure<Strategy>(_ strategy: Strategy) -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in
            let (result, completions) = queue.reconfigure(strategy, at: now)
            return (result, RateLimitEffects(completions: completions))
        }
    }

    /// The permits an acquire could take now, without taking any: `tryAcquire(0)`, which serves
    /// the waiters due first (0 once closed).
    @inlinable
    public func remaining<Strategy>() -> Int64 where Machine == WaitQueue<Strategy> {
        if case .granted(let answer) = tryAcquire(0) { answer.remaining ?? 0 } else { 0 }
    }

    /// The strategy in force.
    public func strategy<Strategy>() -> Strategy where Machine == WaitQueue<Strategy> { machine.limiter.strategy }
}

extension ActorLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public init<Strategy>(_ strategy: Strategy, queueLimit: Int64 = 0) throws(RateLimitInputError)
    where Machine == WaitQueue<Strategy> {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock())
    }
}
