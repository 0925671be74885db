// One rate limiter as an actor (Spec/WaitQueue.md): the wait queue of one strategy, executed by
// the shell of `ActorShell.swift`.

@_exported import RateLimitClock
@_exported import RateLimitCore
import RateLimitShell

/// A rate limiter of any strategy, as an actor: `tryAcquire` answers at once, `acquire` waits in a
/// bounded priority queue until the request is granted, times out or is cancelled
/// (Spec/WaitQueue.md).
///
/// ```swift
/// let limiter = try ActorRateLimiter(GCRA(burst: 10, emissionInterval: .milliseconds(100)))
/// try await limiter.acquire()
/// ```
public final actor ActorRateLimiter<Strategy: RateLimitStrategy, C: Clock>: ActorShellHost
where C.Duration == Duration {
    @usableFromInline package let shell: ActorShell<WaitQueue<Strategy>, C>

    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits (by default
    /// `WaitQueue.defaultQueueLimit`, so that `acquire` waits; 0 refuses whatever would wait),
    /// on `clock`.
    ///
    /// - Throws: `RateLimitInputError` when `queueLimit` is negative.
    public init(_ strategy: Strategy, queueLimit: Int64 = WaitQueue<Strategy>.defaultQueueLimit, clock: C)
        throws(RateLimitInputError)
    {
        let shell = ActorShell(machine: try WaitQueue(strategy, queueLimit: queueLimit, at: .origin), clock: clock)
        self.shell = shell
        timeline = shell.timeline
    }

    /// The limiter's clock as its timeline.
    private nonisolated let timeline: ClockTimeline<C>

    /// Takes `permits` now if the limiter and the waiters ahead allow it; never waits (WQ-4).
    @inlinable
    public func tryAcquire(_ permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        runIfOpen(otherwise: .closed) { queue, now in queue.tryAcquire(permits, priority: priority, at: now) }
    }

    /// What ``tryAcquire(_:priority:)`` would answer now, without taking anything: whether
    /// `permits` are available and, when the strategy refuses, the exact wait until they are.
    public func availability(of permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        runIfOpen(otherwise: .closed) { queue, now in
            (queue.availability(of: permits, priority: priority, at: now), RateLimitEffects())
        }
    }

    /// Waits until `permits` are granted (WQ-4, WQ-5); cancelling the task cancels the request. A
    /// `delayed` grant (leaky bucket queue) also waits for its scheduled start before returning.
    ///
    /// - Parameters:
    ///   - permits: how many permits the request takes (weighted, CORE-6).
    ///   - priority: its place in the queue, higher priorities first (WQ-3); `critical` does not
    ///     queue (WQ-4).
    ///   - timeout: how long to wait at most; `nil` waits as long as it takes; zero or less, or
    ///     under a nanosecond, is granted or times out at once (WQ-11).
    ///   - arrival: for a request that continues an earlier one (a retry), that one's arrival
    ///     (``now`` when it was made): it keeps its place among the waiters of its priority (WQ-3).
    /// - Throws: `RateLimitAcquireError`: rejected at once, timed out, cancelled, or closed.
    public func acquire(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        let timeline = shell.timeline
        return try await outcome(permits: permits) { queue, now in
            queue.acquire(
                permits, priority: priority, deadline: timeout.map { timeline.deadline(after: $0, from: now) },
                arrival: arrival, at: now)
        }
    }

    /// The limiter's clock now, as an instant of its timeline (which starts at `origin` when the
    /// limiter is made): what a later request that continues this one names as its `arrival`.
    public nonisolated var now: RateLimitInstant { timeline.now() }

    /// Gives back permits (concurrency limiter) and serves the waiters (WQ-8).
    @discardableResult
    public func release(_ permits: Int64) -> RateLimitResult {
        run { queue, now in queue.release(permits, at: now) }
    }

    /// Resets the strategy's state; waiters are served from the fresh state (WQ-8).
    @discardableResult
    public func reset() -> RateLimitResult {
        run { queue, now in queue.reset(at: now) }
    }

    /// Replaces the configuration; waiters are served under the new one (WQ-8).
    @discardableResult
    public func reconfigure(_ strategy: Strategy) -> RateLimitResult {
        run { queue, now in queue.reconfigure(strategy, at: now) }
    }

    /// The permits an acquire could take now: `tryAcquire(0)`, which serves the waiters due first
    /// (0 once closed).
    @inlinable
    public func remaining() -> Int64 {
        if case .granted(let answer) = tryAcquire(0) { answer.remaining ?? 0 } else { 0 }
    }

    /// The strategy in force.
    public var strategy: Strategy { shell.machine.limiter.strategy }

    /// Requests waiting for a grant.
    public var waitingCount: Int { shell.machine.waitingCount }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    public var scheduledCount: Int { shell.scheduledStarts }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() { closeShell() }
}

extension ActorRateLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public init(_ strategy: Strategy, queueLimit: Int64 = WaitQueue<Strategy>.defaultQueueLimit)
        throws(RateLimitInputError)
    {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock())
    }
}

extension ActorRateLimiter where Strategy == ConcurrencyLimiter {
    /// Runs `body` holding `permits`, acquired as ``acquire(_:priority:timeout:arrival:)`` does, and
    /// releases them however `body` ends: returning, throwing, or cancelled (CL). `body` runs
    /// where the caller runs, not on the actor.
    public nonisolated(nonsending) func withPermits<T>(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        _ body: () async throws -> T
    ) async throws -> T {
        let grant = try await acquire(permits, priority: priority, timeout: timeout)
        do {
            let value = try await body()
            if !grant.bypassedLimit { await release(permits) }  // a bypass took nothing
            return value
        } catch {
            if !grant.bypassedLimit { await release(permits) }
            throw error
        }
    }
}
