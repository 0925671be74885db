// Limiters by key as an actor (Spec/Registry.md): the shell of `ActorLimiter.swift` executing a
// registry.

import RateLimitCore

/// Limiters by key (per endpoint, per user), configured by rules, as an actor: requests, key
/// states, quota, statistics and an event stream (Spec/Registry.md).
public typealias ActorRateLimitRegistry<Strategy: RateLimitStrategy, C: Clock> = ActorLimiter<RateLimitRegistry<Strategy>, C>
    where C.Duration == Duration

extension ActorLimiter {
    /// A registry of `rules` holding at most `maximumKeys` keys, on `clock` (REG-1, REG-8).
    ///
    /// - Throws: ``RateLimitRegistryError`` for duplicate rules or `maximumKeys < 1`.
    public init<Strategy>(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, clock: C) throws(RateLimitRegistryError)
    where Machine == RateLimitRegistry<Strategy> {
        self.init(machine: try RateLimitRegistry(rules: rules, maximumKeys: maximumKeys, at: .origin), clock: clock)
    }

    /// Takes `permits` on `key` now if its limit and its waiters allow it; never waits (REG-5).
    @inlinable
    public func tryAcquire<Strategy>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal
    ) -> WaitOutcome where Machine == RateLimitRegistry<Strategy> {
        guard !isClosed else { return .closed }
        return run { registry, now in registry.tryAcquire(key, permits: permits, priority: priority, at: now) }
    }

    /// Takes `permits` on `key`, waiting when the key's rule queues (REG-5); the rule's timeout
    /// applies when `timeout` is `nil`. Cancelling the task cancels the wait. A `timeout` of zero or less, or under a nanosecond, is granted or times out at once (WQ-11).
    ///
    /// - Throws: ``RateLimitAcquireError``: rejected (with the limit's answer, `unknownKey`,
    ///   `tooManyKeys`), timed out, cancelled, or closed.
    public func acquire<Strategy>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant where Machine == RateLimitRegistry<Strategy> {
        guard !isClosed else { throw .closed }
        let now = timeline.now()
        let (ticket, effects) = machine.acquire(key, permits: permits, priority: priority, timeout: timeout, at: now)
        return try await outcome(of: ticket, permits: permits, effects: effects, at: now)
    }

    /// Gives back permits on `key` (concurrency limits) and serves its waiters.
    @discardableResult
    public func release<Strategy>(_ key: String, permits: Int64) -> RateLimitResult where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.release(key, permits: permits, at: now) }
    }

    /// Resets `key`'s limit (REG-7).
    @discardableResult
    public func reset<Strategy>(_ key: String) -> RateLimitResult where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.reset(key, at: now) }
    }

    /// Resets every key's limit (REG-7).
    public func resetAll<Strategy>() where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.resetAll(at: now)) }
    }

    /// Gives `key` a configuration of its own (REG-7).
    @discardableResult
    public func reconfigure<Strategy>(_ key: String, to strategy: Strategy) -> RateLimitResult where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.reconfigure(key, to: strategy, at: now) }
    }

    /// Replaces a rule's configuration for every key it governs (REG-7).
    ///
    /// - Throws: ``RateLimitRegistryError`` for an unknown rule or a threshold that no longer fits.
    public func reconfigure<Strategy>(rule pattern: KeyPattern, to strategy: Strategy) throws(RateLimitRegistryError)
    where Machine == RateLimitRegistry<Strategy> {
        let now = timeline.now()
        let effects = try machine.reconfigure(rule: pattern, to: strategy, at: now)
        run { _, _ in ((), effects) }
    }

    /// Throttles `key` for `duration` from now (a server's Retry-After, REG-4).
    public func throttle<Strategy>(_ key: String, for duration: Duration) where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.throttle(key, until: timeline.deadline(after: duration, from: now), at: now)) }
    }

    /// Throttles `key` until `until` on the limiter's timeline (REG-4): a wait shared exactly with
    /// whoever sleeps until the same instant.
    public func throttle<Strategy>(_ key: String, until: RateLimitInstant) where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.throttle(key, until: until, at: now)) }
    }

    /// Disables `key`: everything passes at once (REG-4).
    public func disable<Strategy>(_ key: String) where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.disable(key, at: now)) }
    }

    /// Returns `key` to accepting (REG-4).
    public func resume<Strategy>(_ key: String) where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.resume(key, at: now)) }
    }

    /// `key`'s state, quota status, remaining quota and statistics now, after serving what is due
    /// (REG-6, REG-9).
    public func quota<Strategy>(of key: String) -> KeyQuota? where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in
            let served = registry.advance(to: now)
            return (registry.quota(of: key, at: now), served)
        }
    }

    /// Every request so far, over all keys (REG-9).
    public func totals<Strategy>() -> KeyStatistics where Machine == RateLimitRegistry<Strategy> { machine.totals }
}

extension ActorLimiter where C == ContinuousClock {
    /// A registry of `rules` on the continuous clock.
    public init<Strategy>(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000) throws(RateLimitRegistryError)
    where Machine == RateLimitRegistry<Strategy> {
        try self.init(rules: rules, maximumKeys: maximumKeys, clock: ContinuousClock())
    }
}
