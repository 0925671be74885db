// Limiters by key guarded by a lock (Spec/Registry.md): the shell of `LockedLimiter.swift`
// executing a registry.

import RateLimitCore

/// Limiters by key (per endpoint, per user), configured by rules, guarded by a lock: synchronous,
/// blocking and async requests, key states, quota, statistics and events (Spec/Registry.md).
public typealias LockedRateLimitRegistry<Strategy: RateLimitStrategy, C: Clock> = LockedLimiter<RateLimitRegistry<Strategy>, C>
    where C.Duration == Duration

extension LockedLimiter {
    /// A registry of `rules` holding at most `maximumKeys` keys, on `clock` (REG-1, REG-8).
    ///
    /// - Throws: ``RateLimitRegistryError`` for duplicate rules or `maximumKeys < 1`.
    public convenience init<Strategy>(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, clock: C) throws(RateLimitRegistryError)
    where Machine == RateLimitRegistry<Strategy> {
        self.init(machine: try RateLimitRegistry(rules: rules, maximumKeys: maximumKeys, at: .origin), clock: clock)
    }

    /// Parks the calling thread until `permits` on `key` are granted, refused, timed out or closed
    /// (REG-5); the rule's timeout applies when `timeout` is `nil`. A `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    public func acquireBlocking<Strategy>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) throws(RateLimitAcquireError) -> RateLimitGrant where Machine == RateLimitRegistry<Strategy> {
        try blockingOutcome(permits: permits) { registry, now in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, at: now)
        }
    }

    /// Waits asynchronously until `permits` on `key` are granted (REG-5); cancelling the task
    /// cancels the request. A `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    public func acquire<Strategy>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant where Machine == RateLimitRegistry<Strategy> {
        try await asyncOutcome(permits: permits) { registry, now in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, at: now)
        }
    }
}

extension LockedLimiter where C == ContinuousClock {
    /// A registry of `rules` on the continuous clock.
    public convenience init<Strategy>(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000) throws(RateLimitRegistryError)
    where Machine == RateLimitRegistry<Strategy> {
        try self.init(rules: rules, maximumKeys: maximumKeys, clock: ContinuousClock())
    }
}
