// Limiters by key on a serial dispatch queue (Spec/Registry.md): a registry executed by the shell
// of `DispatchShell.swift`. What this adapter answers as the lock adapter does is in
// `DispatchRateLimitRegistry+Shared.swift`, generated (`make facades`).

import Dispatch
import RateLimitCore
import RateLimitShell

/// Limiters by key (per endpoint, per user), configured by rules, on a serial dispatch queue with
/// completion handlers: requests, key states, quota, statistics and events (Spec/Registry.md).
public final class DispatchRateLimitRegistry<Strategy: RateLimitStrategy, C: Clock>: Sendable
where C.Duration == Duration {
    @usableFromInline let shell: DispatchShell<RateLimitRegistry<Strategy>, C>

    /// A registry of `rules` holding at most `maximumKeys` keys, on `clock`; completion and event
    /// handlers run on `callbackQueue` (REG-1, REG-8).
    ///
    /// - Throws: `RateLimitRegistryError` for duplicate rules or `maximumKeys < 1`.
    public init(
        rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, clock: C, callbackQueue: DispatchQueue = .global()
    ) throws(RateLimitRegistryError) {
        shell = DispatchShell(
            machine: try RateLimitRegistry(rules: rules, maximumKeys: maximumKeys, at: .origin),
            label: "RateLimitDispatch.registry",
            clock: clock, callbackQueue: callbackQueue)
    }

    /// Requests `permits` on `key`, waiting when the key's rule queues (REG-5); `completion` runs
    /// once on the callback queue with the grant or the error. The rule's timeout applies when
    /// `timeout` is `nil`; a `timeout` of zero or less, or under a nanosecond, is granted or times
    /// out at once (WQ-11). A request that continues an earlier one (a retry) names that one's
    /// `arrival` (``now`` when it was made) and keeps its place among the key's waiters of its
    /// priority (WQ-3).
    public func acquire(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil,
        completion: @escaping @Sendable (Result<RateLimitGrant, RateLimitAcquireError>) -> Void
    ) {
        shell.submit(permits: permits, completion: completion) { registry, now in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, arrival: arrival, at: now)
        }
    }

    /// Calls `handler` with every event, in order and one at a time, on the callback queue (`nil`
    /// removes it).
    public func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) { shell.setEventHandler(handler) }
}

extension DispatchRateLimitRegistry where C == ContinuousClock {
    /// A registry of `rules` on the continuous clock.
    public convenience init(
        rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, callbackQueue: DispatchQueue = .global()
    ) throws(RateLimitRegistryError) {
        try self.init(rules: rules, maximumKeys: maximumKeys, clock: ContinuousClock(), callbackQueue: callbackQueue)
    }
}
