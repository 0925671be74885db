// A concurrency limit shared through Redis (Spec/ConcurrencyLimiter.md with the leases of
// Spec/SharedLimits.md, SHARED-6 to SHARED-8): permits held across processes, each acquire a
// lease that ends when it is released or when its duration runs out, so the permits of a process
// that crashed come back by themselves.

/// Permits held by a ``RedisConcurrencyLimiter``: release them with
/// ``RedisConcurrencyLimiter/release(_:permits:)``, or they come back when the lease expires.
public struct RedisLease: Hashable, Sendable {
    /// The permits the lease holds.
    public let permits: Int64
    /// The store's handle (`<expiry>:<acquired>:<sequence>`, SHARED-8), or `nil` for permits the
    /// local fallback granted while the store could not be reached.
    public let handle: String?
}

/// An acquire's answer, and the lease it took when it was admitted.
public struct RedisLeaseAnswer: Hashable, Sendable {
    /// The answer, as an in-process `ConcurrencyLimiter` gives it.
    public let result: RateLimitResult
    /// The lease, when the acquire was admitted with at least one permit.
    public let lease: RedisLease?
}

/// A concurrency limit whose permits are held in Redis, shared by every process that uses the
/// same key, as leases that come back by themselves when they expire (SHARED-6).
public final class RedisConcurrencyLimiter<C: Clock>: Sendable where C.Duration == Duration {
    let engine: RedisLimitEngine<ConcurrencyLimiter, C>

    /// A limiter of `limiter` at `key`; the parameters are ``RedisRateLimiter``'s
    /// (``RedisRateLimiter/init(_:key:runner:clockSource:timeout:onFailure:clock:)``).
    public init(
        _ limiter: ConcurrencyLimiter, key: String, runner: any RedisScriptRunner,
        clockSource: RedisClockSource = .server, timeout: Duration = .seconds(1),
        onFailure: RedisFailurePolicy<ConcurrencyLimiter> = .failClosed, clock: C
    ) {
        engine = RedisLimitEngine(
            limiter, script: .concurrency, key: key, runner: runner, clockSource: clockSource, timeout: timeout,
            policy: onFailure, clock: clock)
    }

    /// The Redis key holding the leases.
    public var key: String { engine.key }

    /// The configuration this limiter sends (changed by a successful ``reconfigure(_:)``).
    public var strategy: ConcurrencyLimiter { engine.strategy }

    /// Why the last call the store did not answer failed; `nil` once it answers again.
    public var lastFailure: RedisLimitError? { engine.lastFailure }

    /// Takes `permits` as a lease of `duration` (1 ns to 2^63 ns, whole nanoseconds) if they are
    /// free now; never waits. A refusal is `RateLimitResult/rejectedUntilRelease(shortfall:)`.
    ///
    /// - Throws: ``RedisLimitError`` when the store does not answer and the policy fails closed.
    public func tryAcquire(_ permits: Int64 = 1, lease duration: Duration) async throws(RedisLimitError)
        -> RedisLeaseAnswer
    {
        guard permits >= 0 else {
            let answer = try await engine.apply(.acquire(permits, lease: nil))
            return RedisLeaseAnswer(result: answer.result, lease: nil)
        }
        let nanoseconds: String
        switch Self.leaseNanoseconds(duration) {
        case .success(let text): nanoseconds = text
        case .failure(let error): return RedisLeaseAnswer(result: .invalid(error), lease: nil)
        }
        let answer = try await engine.apply(.acquire(permits, lease: nanoseconds))
        guard answer.result.isAdmitted, permits > 0 else { return RedisLeaseAnswer(result: answer.result, lease: nil) }
        return RedisLeaseAnswer(
            result: answer.result, lease: RedisLease(permits: permits, handle: answer.isLocal ? nil : answer.lease))
    }

    /// Gives back `permits` of `lease` (all of them by default). A lease that expired, was
    /// released or was forgotten by a reset holds nothing: releasing it is
    /// `RateLimitResult/invalid(_:)` and gives nothing back twice (SHARED-7). A lease the local
    /// fallback granted is released to it.
    public func release(_ lease: RedisLease, permits: Int64? = nil) async throws(RedisLimitError) -> RateLimitResult {
        let count = permits ?? lease.permits
        guard let handle = lease.handle else {
            if let answer = RedisLimitEngine<ConcurrencyLimiter, C>.answerWithoutStore(
                .release(count, lease: nil), strategy: engine.strategy)
            {
                return answer.result
            }
            return engine.releaseLocally(count)
        }
        return try await engine.apply(.release(count, lease: handle)).result
    }

    /// Gives back `permits` held under this key without naming a lease: from the leases that
    /// expire first (CL-8, SHARED-7).
    public func release(_ permits: Int64) async throws(RedisLimitError) -> RateLimitResult {
        try await engine.apply(.release(permits, lease: nil)).result
    }

    /// The permits free now (CL-5).
    public func remaining() async throws(RedisLimitError) -> Int64 {
        try await engine.apply(.acquire(0, lease: nil)).result.remaining ?? 0
    }

    /// Forgets every lease (CL-9, SHARED-8), for every process. Needs the store.
    public func reset() async throws(RedisLimitError) -> RateLimitResult {
        try await engine.apply(.reset).result
    }

    /// Applies a new limit (CL-10: the leases in force are kept) and sends it from then on. Needs
    /// the store.
    public func reconfigure(_ limiter: ConcurrencyLimiter) async throws(RedisLimitError) -> RateLimitResult {
        try await engine.apply(.reconfigure(limiter)).result
    }

    /// A lease duration as the script takes it: whole nanoseconds, 1 ... 2^63 (SHARED-6).
    static func leaseNanoseconds(_ duration: Duration) -> Result<String, RateLimitInputError> {
        let field = "leaseNanoseconds"
        guard duration > .zero else {
            return .failure(RateLimitInputError(field: field, value: nil, problem: .mustBePositive))
        }
        let (seconds, attoseconds) = duration.components
        guard attoseconds % 1_000_000_000 == 0 else {
            return .failure(RateLimitInputError(field: field, value: nil, problem: .notWholeNanoseconds))
        }
        let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let total = scaled.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        guard !overflow, !total.overflow, total.partialValue <= 1 << 63 else {
            return .failure(
                RateLimitInputError(
                    field: field, value: nil, problem: .exceedsMaximum(.max),
                    reason: "a lease lasts at most 2^63 ns, longer than the timeline"))
        }
        return .success(String(total.partialValue))
    }
}

extension RedisConcurrencyLimiter where C == ContinuousClock {
    /// A limiter of `limiter` at `key` whose timeout and fallback run on the continuous clock.
    public convenience init(
        _ limiter: ConcurrencyLimiter, key: String, runner: any RedisScriptRunner,
        clockSource: RedisClockSource = .server, timeout: Duration = .seconds(1),
        onFailure: RedisFailurePolicy<ConcurrencyLimiter> = .failClosed
    ) {
        self.init(
            limiter, key: key, runner: runner, clockSource: clockSource, timeout: timeout, onFailure: onFailure,
            clock: ContinuousClock())
    }
}
