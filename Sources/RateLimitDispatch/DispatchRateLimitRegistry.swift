// Limiters by key on a serial dispatch queue (Spec/Registry.md): the shell of
// `DispatchLimiter.swift` executing a registry.

import Dispatch
import RateLimitCore

/// Limiters by key (per endpoint, per user), configured by rules, on a serial dispatch queue with
/// completion handlers: requests, key states, quota, statistics and events (Spec/Registry.md).
public typealias DispatchRateLimitRegistry<Strategy: RateLimitStrategy, C: Clock> = DispatchLimiter<RateLimitRegistry<Strategy>, C>
    where C.Duration == Duration

extension DispatchLimiter {
    /// A registry of `rules` holding at most `maximumKeys` keys, on `clock`; completion and event
    /// handlers run on `callbackQueue` (REG-1, REG-8).
    ///
    /// - Throws: ``RateLimitRegistryError`` for duplicate rules or `maximumKeys < 1`.
    public convenience init<Strategy>(
        rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, clock: C, callbackQueue: DispatchQueue = .global()
    ) throws(RateLimitRegistryError) where Machine == RateLimitRegistry<Strategy> {
        self.init(machine: try RateLimitRegistry(rules: rules, maximumKeys: maximumKeys, at: .origin), label: "RateLimitDispatch.registry",
                  clock: clock, callbackQueue: callbackQueue)
    }

    /// Requests `permits` on `key`, waiting when the key's rule queues (REG-5); `completion` runs
    /// once on the callback queue with the grant or the error. A `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    public func acquire<Strategy>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<RateLimitGrant, RateLimitAcquireError>) -> Void
    ) where Machine == RateLimitRegistry<Strategy> {
        submit(permits: permits, completion: completion) { registry, now in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, at: now)
        }
    }
}

extension DispatchLimiter where C == ContinuousClock {
    /// A registry of `rules` on the continuous clock.
    public convenience init<Strategy>(
        rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, callbackQueue: DispatchQueue = .global()
    ) throws(RateLimitRegistryError) where Machine == RateLimitRegistry<Strategy> {
        try self.init(rules: rules, maximumKeys: maximumKeys, clock: ContinuousClock(), callbackQueue: callbackQueue)
    }
}
