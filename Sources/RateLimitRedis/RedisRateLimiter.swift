// A limit shared by every process that uses the same Redis key (Spec/SharedLimits.md): each event
// is one script run on the server, which decides it from the state all of them share, so its
// answers are the strategy's for the order in which the server applied the events (SHARED-1).
//
// No queue: waiting (`acquire(_:timeout:)`) sleeps the exact retry-after the server answered and
// asks again, as the lock-free GCRA does; the order among waiters is the server's, not a queue's
// (SHARED-13 says why a shared queue is out of scope).

/// A rate limiter whose state lives in Redis, shared by every process that uses the same key.
///
/// Its answers are the in-process limiters' `RateLimitResult`s, decided on the server by the
/// strategy's script (``RedisScript``) through your Redis client (``RedisScriptRunner``). Every
/// call is bounded by `timeout`; when the store does not answer, the ``RedisFailurePolicy`` says
/// what the limiter answers: a ``RedisLimitError`` (fail closed, the default) or the decision of
/// a local fallback limiter.
public final class RedisRateLimiter<Strategy: RedisScriptedStrategy, C: Clock>: Sendable where C.Duration == Duration {
    let engine: RedisLimitEngine<Strategy, C>

    /// A limiter of `strategy` at `key`.
    ///
    /// - Parameters:
    ///   - strategy: the configuration; every process using `key` must pass the same one
    ///     (it travels with each call, SHARED-1).
    ///   - key: the Redis key holding the state; limits that must live on one Cluster shard share
    ///     a hash tag (`rl:{user:42}:search`, SHARED-9).
    ///   - runner: sends the scripts, with your Redis client.
    ///   - clockSource: where `now` comes from: the server's clock by default (SHARED-2).
    ///   - timeout: how long one call may take on `clock` before it is ``RedisLimitError/timedOut(_:)``.
    ///   - onFailure: what to answer when the store does not (SHARED-11).
    ///   - clock: measures the timeout, the waits and the fallback's time.
    public init(
        _ strategy: Strategy, key: String, runner: any RedisScriptRunner, clockSource: RedisClockSource = .server,
        timeout: Duration = .seconds(1), onFailure: RedisFailurePolicy<Strategy> = .failClosed, clock: C
    ) {
        engine = RedisLimitEngine(
            strategy, script: Strategy.redisScript, key: key, runner: runner, clockSource: clockSource,
            timeout: timeout, policy: onFailure, clock: clock)
    }

    /// The Redis key holding the state.
    public var key: String { engine.key }

    /// The configuration this limiter sends (changed by a successful ``reconfigure(_:)``).
    public var strategy: Strategy { engine.strategy }

    /// Why the last call the store did not answer failed; `nil` once it answers again.
    public var lastFailure: RedisLimitError? { engine.lastFailure }

    /// Takes `permits` if the shared limit allows it now; never waits.
    ///
    /// - Throws: ``RedisLimitError`` when the store does not answer and the policy fails closed.
    public func tryAcquire(_ permits: Int64 = 1) async throws(RedisLimitError) -> RateLimitResult {
        try await engine.apply(.acquire(permits, lease: nil)).result
    }

    /// Takes `permits`, waiting up to `timeout` on the limiter's clock: after each refusal it
    /// sleeps the exact retry-after and asks again (no queue: SHARED-13). Returns the admission,
    /// or the refusal whose retry-after would end past the timeout (also `RateLimitResult/neverAllowed`
    /// and `RateLimitResult/invalid(_:)`, at once).
    ///
    /// - Throws: ``RedisLimitError`` when the store does not answer and the policy fails closed;
    ///   ``RedisLimitError/cancelled`` when the task is cancelled while it waits.
    public func acquire(_ permits: Int64 = 1, timeout: Duration) async throws(RedisLimitError) -> RateLimitResult {
        let deadline = engine.clock.now.advanced(by: timeout)
        while true {
            let result = try await tryAcquire(permits)
            guard case .rejected(let retryAfter) = result else { return result }
            let wake = engine.clock.now.advanced(by: .nanoseconds(retryAfter))
            guard wake <= deadline else { return result }
            do { try await engine.clock.sleep(until: wake, tolerance: nil) } catch { throw .cancelled }
        }
    }

    /// The answer of an in-process limiter of this strategy to a release: a time-based strategy
    /// holds no permits, so it is `RateLimitResult/invalid(_:)` (CORE-11, or CORE-9 for negative
    /// permits), given here without the store.
    public func release(_ permits: Int64) -> RateLimitResult {
        let strategy = engine.strategy
        var scratch = strategy.initialState(at: .origin)
        return strategy.step(&scratch, .release(permits), at: .origin)
    }

    /// The permits an acquire could take now, without taking any (an acquire of 0, CORE-9).
    public func remaining() async throws(RedisLimitError) -> Int64 {
        try await engine.apply(.acquire(0, lease: nil)).result.remaining ?? 0
    }

    /// Forgets the shared history: the key's state becomes that of a new limiter (CORE-12), for
    /// every process. Needs the store, whatever the policy.
    public func reset() async throws(RedisLimitError) -> RateLimitResult {
        try await engine.apply(.reset).result
    }

    /// Applies a new configuration to the shared state (CORE-13) and sends it from then on. The
    /// other processes keep sending theirs until they are reconfigured too (SHARED-1). Needs the
    /// store, whatever the policy.
    public func reconfigure(_ strategy: Strategy) async throws(RedisLimitError) -> RateLimitResult {
        try await engine.apply(.reconfigure(strategy)).result
    }
}

extension RedisRateLimiter where C == ContinuousClock {
    /// A limiter of `strategy` at `key` whose timeout, waits and fallback run on the continuous
    /// clock; see ``init(_:key:runner:clockSource:timeout:onFailure:clock:)``.
    public convenience init(
        _ strategy: Strategy, key: String, runner: any RedisScriptRunner, clockSource: RedisClockSource = .server,
        timeout: Duration = .seconds(1), onFailure: RedisFailurePolicy<Strategy> = .failClosed
    ) {
        self.init(
            strategy, key: key, runner: runner, clockSource: clockSource, timeout: timeout, onFailure: onFailure,
            clock: ContinuousClock())
    }
}
