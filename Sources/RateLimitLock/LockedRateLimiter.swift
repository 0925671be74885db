// One rate limiter guarded by a lock (Spec/WaitQueue.md): the wait queue of one strategy, executed
// by the shell of `LockShell.swift`.

@_exported import RateLimitClock
@_exported import RateLimitCore
import RateLimitShell

/// A rate limiter of any strategy guarded by a lock: `tryAcquire` answers at once,
/// `acquireBlocking` parks the calling thread and `acquire` suspends the task until the request is
/// granted, times out or is cancelled, in a bounded priority queue (Spec/WaitQueue.md).
///
/// ```swift
/// let limiter = try LockedRateLimiter(TokenBucket(capacity: 10, permitsPerPeriod: 5, period: .seconds(1)))
/// if limiter.tryAcquire().isGranted { sendRequest() }
/// ```
public final class LockedRateLimiter<Strategy: RateLimitStrategy, C: Clock>: Sendable where C.Duration == Duration {
    @usableFromInline let shell: LockShell<WaitQueue<Strategy>, C>

    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits (by default
    /// `WaitQueue.defaultQueueLimit`, so that `acquire` waits; 0 refuses whatever would wait),
    /// on `clock`.
    ///
    /// - Throws: `RateLimitInputError` when `queueLimit` is negative.
    public init(_ strategy: Strategy, queueLimit: Int64 = WaitQueue<Strategy>.defaultQueueLimit, clock: C)
        throws(RateLimitInputError)
    {
        shell = LockShell(machine: try WaitQueue(strategy, queueLimit: queueLimit, at: .origin), clock: clock)
    }

    /// Parks the calling thread until `permits` are granted, the timeout passes, or the limiter is
    /// closed; a `delayed` grant (leaky bucket queue) also waits for its scheduled start. A
    /// `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    /// Call it from a thread you own, never from a Swift concurrency task. A request that
    /// continues an earlier one (a retry) names that one's `arrival` (``now`` when it was made)
    /// and keeps its place among the waiters of its priority (WQ-3).
    public func acquireBlocking(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil
    ) throws(RateLimitAcquireError) -> RateLimitGrant {
        let timeline = shell.timeline
        return try shell.blockingOutcome(permits: permits) { queue, now in
            queue.acquire(
                permits, priority: priority, deadline: timeout.map { timeline.deadline(after: $0, from: now) },
                arrival: arrival, at: now)
        }
    }

    /// Waits until `permits` are granted (WQ-4, WQ-5); cancelling the task cancels the request. A
    /// `delayed` grant (leaky bucket queue) also waits for its scheduled start. A `timeout` of
    /// zero or less, or under a nanosecond, is granted or times out at once (WQ-11). A request
    /// that continues an earlier one (a retry) names that one's `arrival` (``now`` when it was
    /// made) and keeps its place among the waiters of its priority (WQ-3).
    ///
    /// - Throws: `RateLimitAcquireError`: rejected, timed out, cancelled, or closed.
    public func acquire(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        let timeline = shell.timeline
        return try await shell.asyncOutcome(permits: permits) { queue, now in
            queue.acquire(
                permits, priority: priority, deadline: timeout.map { timeline.deadline(after: $0, from: now) },
                arrival: arrival, at: now)
        }
    }
}

// BEGIN shared with RateLimitDispatch: `make facades` copies what lies between the BEGIN
// and END lines into DispatchRateLimiter+Shared.swift, with the type renamed. Edit it here.
extension LockedRateLimiter {
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
// END shared with RateLimitDispatch

extension LockedRateLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public convenience init(_ strategy: Strategy, queueLimit: Int64 = WaitQueue<Strategy>.defaultQueueLimit)
        throws(RateLimitInputError)
    {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock())
    }
}

extension LockedRateLimiter where Strategy == ConcurrencyLimiter {
    /// Runs `body` holding `permits`, acquired as ``acquire(_:priority:timeout:arrival:)`` does, and
    /// releases them however `body` ends: returning, throwing, or cancelled (CL).
    public nonisolated(nonsending) func withPermits<T>(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        _ body: () async throws -> T
    ) async throws -> T {
        let grant = try await acquire(permits, priority: priority, timeout: timeout)
        defer { if !grant.bypassedLimit { release(permits) } }  // a bypass took nothing
        return try await body()
    }

    /// Runs `body` holding `permits`, acquired as ``acquireBlocking(_:priority:timeout:arrival:)`` does,
    /// and releases them however `body` ends.
    public func withPermitsBlocking<T>(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil, _ body: () throws -> T
    ) throws -> T {
        let grant = try acquireBlocking(permits, priority: priority, timeout: timeout)
        defer { if !grant.bypassedLimit { release(permits) } }  // a bypass took nothing
        return try body()
    }
}
