// Limiters by key guarded by a lock (Spec/Registry.md): a registry executed by the shell of
// `LockShell.swift`.

import RateLimitCore
import RateLimitShell

/// Limiters by key (per endpoint, per user), configured by rules, guarded by a lock: synchronous,
/// blocking and async requests, key states, quota, statistics and events (Spec/Registry.md).
///
/// ```swift
/// let registry = try LockedRateLimitRegistry(rules: [
///     try RateLimitRule(.prefix("search/"), GCRA(burst: 5, emissionInterval: .milliseconds(200))),
/// ])
/// let outcome = registry.tryAcquire("search/books")
/// ```
public final class LockedRateLimitRegistry<Strategy: RateLimitStrategy, C: Clock>: Sendable
where C.Duration == Duration {
    @usableFromInline let shell: ShardedRegistryShell<Strategy, C>

    /// A registry of `rules` holding at most `maximumKeys` keys, on `clock` (REG-1, REG-8), its
    /// keys split among `shards` locks (REG-13): threads requesting keys of different shards do
    /// not wait for each other. One shard is one lock for every key. A `tryAcquire` that a held
    /// key's limit admits at once takes no shard lock at all (REG-13 item 5): threads on
    /// different keys then share no lock, whatever the shard count.
    ///
    /// - Throws: `RateLimitRegistryError` for duplicate rules, `maximumKeys < 1`, or a shard
    ///   count that is not a power of two from 1 to 1,024.
    public init(
        rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, shards: Int = 16, clock: C
    ) throws(RateLimitRegistryError) {
        shell = try ShardedRegistryShell(rules: rules, maximumKeys: maximumKeys, shards: shards, clock: clock)
    }

    /// Parks the calling thread until `permits` on `key` are granted, refused, timed out or closed
    /// (REG-5); the rule's timeout applies when `timeout` is `nil`. A `timeout` of zero or less,
    /// or under a nanosecond, is granted or times out at once (WQ-11). A request that continues
    /// an earlier one (a retry) names that one's `arrival` (``now`` when it was made) and keeps
    /// its place among the key's waiters of its priority (WQ-3).
    public func acquireBlocking(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil
    ) throws(RateLimitAcquireError) -> RateLimitGrant {
        try shell.blockingOutcome(key, permits: permits) { registry, now in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, arrival: arrival, at: now)
        }
    }

    /// Waits until `permits` on `key` are granted (REG-5); cancelling the task cancels the request.
    /// The rule's timeout applies when `timeout` is `nil`; a `timeout` of zero or less, or under a
    /// nanosecond, is granted or times out at once (WQ-11). A request that continues an earlier
    /// one (a retry) names that one's `arrival` (``now`` when it was made) and keeps its place
    /// among the key's waiters of its priority (WQ-3).
    ///
    /// - Throws: `RateLimitAcquireError`: rejected (with the limit's answer, `unknownKey`,
    ///   `tooManyKeys`), timed out, cancelled, or closed.
    public func acquire(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        try await shell.asyncOutcome(key, permits: permits) { registry, now in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, arrival: arrival, at: now)
        }
    }

    /// Calls `handler` with every event, in order, on a serial queue (`nil` removes it).
    public func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) { shell.setEventHandler(handler) }
}

// BEGIN shared with RateLimitDispatch: `make facades` copies what lies between the BEGIN
// and END lines into DispatchRateLimitRegistry+Shared.swift, with the type renamed. Edit it here.
extension LockedRateLimitRegistry {
    /// Takes `permits` on `key` now if its limit and its waiters allow it; never waits (REG-5).
    @inlinable
    public func tryAcquire(_ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        shell.tryAcquire(key, permits: permits, priority: priority)
    }

    /// What ``tryAcquire(_:permits:priority:)`` would answer now, without taking anything or
    /// creating the key: whether `permits` are available and, when the limit refuses, the exact
    /// wait until they are.
    public func availability(_ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        shell.availability(key, permits: permits, priority: priority)
    }

    /// The registry's clock now, as an instant of its timeline (which starts at `origin` when the
    /// registry is made): what a later request that continues this one names as its `arrival`.
    public var now: RateLimitInstant { shell.timeline.now() }

    /// Gives back permits on `key` (concurrency limits) and serves its waiters.
    @discardableResult
    public func release(_ key: String, permits: Int64) -> RateLimitResult { shell.release(key, permits: permits) }

    /// Resets `key`'s limit (REG-7).
    @discardableResult
    public func reset(_ key: String) -> RateLimitResult { shell.reset(key) }

    /// Resets every key's limit (REG-7).
    public func resetAll() { shell.resetAll() }

    /// Gives `key` a configuration of its own (REG-7).
    @discardableResult
    public func reconfigure(_ key: String, to strategy: Strategy) -> RateLimitResult {
        shell.reconfigure(key, to: strategy)
    }

    /// Gives `key` its rule's configuration again (REG-7): its own configuration is dropped, its
    /// state mapped as ``reconfigure(_:to:)`` maps it, and from then on it follows the rule (a rule
    /// reconfigured reaches it; idle, it may be forgotten, REG-8). Answers the strategy's answer to
    /// that reconfiguration, or `nil` when the key has no configuration of its own (nothing changes).
    @discardableResult
    public func restoreRule(_ key: String) -> RateLimitResult? { shell.restoreRule(key) }

    /// Replaces a rule's configuration for every key it governs (REG-7).
    ///
    /// - Throws: `RateLimitRegistryError` for an unknown rule or a threshold that no longer fits.
    public func reconfigure(rule pattern: KeyPattern, to strategy: Strategy) throws(RateLimitRegistryError) {
        try shell.reconfigure(rule: pattern, to: strategy)
    }

    /// Throttles `key` for `duration` from now (a server's Retry-After, REG-4).
    public func throttle(_ key: String, for duration: Duration) { shell.throttle(key, for: duration) }

    /// Disables `key`: everything passes at once (REG-4).
    public func disable(_ key: String) { shell.disable(key) }

    /// Returns `key` to accepting (REG-4).
    public func resume(_ key: String) { shell.resume(key) }

    /// Removes `key` (REG-12): its waiters end `closed` and its next request starts it anew from
    /// its rule. Answers whether the key was held.
    @discardableResult
    public func remove(_ key: String) -> Bool { shell.remove(key) }

    /// The keys held now, sorted (REG-8, REG-12).
    public var keys: [String] { shell.keys() }

    /// The rule that governs `key` (REG-2), with its configuration now (REG-7); `nil` when no rule
    /// matches it.
    public func rule(for key: String) -> RateLimitRule<Strategy>? { shell.rule(for: key) }

    /// `key`'s state, quota status, remaining quota and statistics now, after serving what is due
    /// (REG-6, REG-9); `nil` when no rule matches it.
    public func quota(of key: String) -> KeyQuota? { shell.quota(of: key) }

    /// Every request so far, over all keys (REG-9).
    public var totals: KeyStatistics { shell.totals() }

    /// A new stream of the events reported from now on, in order; it ends when the registry closes
    /// (REG-10).
    public func events() -> AsyncStream<RegistryEvent> { shell.events() }

    /// Requests waiting for a grant, over all keys.
    public var waitingCount: Int { shell.waitingCount }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() { shell.close() }
}
// END shared with RateLimitDispatch

extension LockedRateLimitRegistry where C == ContinuousClock {
    /// A registry of `rules` on the continuous clock, its keys split among `shards` locks (REG-13).
    public convenience init(
        rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, shards: Int = 16
    ) throws(RateLimitRegistryError) {
        try self.init(rules: rules, maximumKeys: maximumKeys, shards: shards, clock: ContinuousClock())
    }
}

extension LockedRateLimitRegistry where Strategy == ConcurrencyLimiter {
    /// Runs `body` holding `permits` on `key`, acquired as ``acquire(_:permits:priority:timeout:arrival:)``
    /// does, and releases them however `body` ends: returning, throwing, or cancelled.
    public nonisolated(nonsending) func withPermits<T>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        _ body: () async throws -> T
    ) async throws -> T {
        let grant = try await acquire(key, permits: permits, priority: priority, timeout: timeout)
        defer { if !grant.bypassedLimit { release(key, permits: permits) } }  // a bypass took nothing
        return try await body()
    }
}
