// Limiters by key as an actor (Spec/Registry.md): a registry executed by the shell of
// `ActorShell.swift`.

import RateLimitCore
import RateLimitShell

/// Limiters by key (per endpoint, per user), configured by rules, as an actor: requests, key
/// states, quota, statistics and an event stream (Spec/Registry.md).
///
/// ```swift
/// let registry = try ActorRateLimitRegistry(rules: [
///     try RateLimitRule(.anyKey, TokenBucket(capacity: 5, permitsPerPeriod: 1, period: .seconds(1))),
/// ])
/// try await registry.acquire("api/search")
/// ```
public final actor ActorRateLimitRegistry<Strategy: RateLimitStrategy, C: Clock>: ActorShellHost
where C.Duration == Duration {
    @usableFromInline package let shell: ActorShell<RateLimitRegistry<Strategy>, C>

    /// A registry of `rules` holding at most `maximumKeys` keys, on `clock` (REG-1, REG-8).
    ///
    /// - Throws: `RateLimitRegistryError` for duplicate rules or `maximumKeys < 1`.
    public init(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, clock: C) throws(RateLimitRegistryError) {
        let shell = ActorShell(
            machine: try RateLimitRegistry(rules: rules, maximumKeys: maximumKeys, at: .origin), clock: clock)
        self.shell = shell
        timeline = shell.timeline
    }

    /// The registry's clock as its timeline (the client reads it to throttle a key until an instant).
    package nonisolated let timeline: ClockTimeline<C>

    /// The registry's clock now, as an instant of its timeline (which starts at `origin` when the
    /// registry is made): what a later request that continues this one names as its `arrival`.
    public nonisolated var now: RateLimitInstant { timeline.now() }

    /// Takes `permits` on `key` now if its limit and its waiters allow it; never waits (REG-5).
    @inlinable
    public func tryAcquire(_ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        let hash = shell.prefetch(key)
        return runIfOpen(otherwise: .closed) { registry, now in
            registry.tryAcquire(key, looked: hash, permits: permits, priority: priority, at: now)
        }
    }

    /// What ``tryAcquire(_:permits:priority:)`` would answer now, without taking anything or
    /// creating the key: whether `permits` are available and, when the limit refuses, the exact
    /// wait until they are.
    public func availability(_ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        runIfOpen(otherwise: .closed) { registry, now in
            (registry.availability(key, permits: permits, priority: priority, at: now), RateLimitEffects())
        }
    }

    /// Takes `permits` on `key`, waiting when the key's rule queues (REG-5); the rule's timeout
    /// applies when `timeout` is `nil`. Cancelling the task cancels the wait. A `timeout` of zero
    /// or less, or under a nanosecond, is granted or times out at once (WQ-11). A request that
    /// continues an earlier one (a retry) names that one's `arrival` (``now`` when it was made)
    /// and keeps its place among the key's waiters of its priority (WQ-3).
    ///
    /// - Throws: `RateLimitAcquireError`: rejected (with the limit's answer, `unknownKey`,
    ///   `tooManyKeys`), timed out, cancelled, or closed.
    public func acquire(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        try await outcome(permits: permits) { registry, now in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, arrival: arrival, at: now)
        }
    }

    /// Gives back permits on `key` (concurrency limits) and serves its waiters.
    @discardableResult
    public func release(_ key: String, permits: Int64) -> RateLimitResult {
        run { registry, now in registry.release(key, permits: permits, at: now) }
    }

    /// Resets `key`'s limit (REG-7).
    @discardableResult
    public func reset(_ key: String) -> RateLimitResult {
        run { registry, now in registry.reset(key, at: now) }
    }

    /// Resets every key's limit (REG-7).
    public func resetAll() {
        run { registry, now in ((), registry.resetAll(at: now)) }
    }

    /// Gives `key` a configuration of its own (REG-7).
    @discardableResult
    public func reconfigure(_ key: String, to strategy: Strategy) -> RateLimitResult {
        run { registry, now in registry.reconfigure(key, to: strategy, at: now) }
    }

    /// Gives `key` its rule's configuration again (REG-7): its own configuration is dropped, its
    /// state mapped as ``reconfigure(_:to:)`` maps it, and from then on it follows the rule (a rule
    /// reconfigured reaches it; idle, it may be forgotten, REG-8). Answers the strategy's answer to
    /// that reconfiguration, or `nil` when the key has no configuration of its own (nothing changes).
    @discardableResult
    public func restoreRule(_ key: String) -> RateLimitResult? {
        run { registry, now in registry.restoreRule(key, at: now) }
    }

    /// Replaces a rule's configuration for every key it governs (REG-7).
    ///
    /// - Throws: `RateLimitRegistryError` for an unknown rule or a threshold that no longer fits.
    public func reconfigure(rule pattern: KeyPattern, to strategy: Strategy) throws(RateLimitRegistryError) {
        let effects = try shell.machine.reconfigure(rule: pattern, to: strategy, at: shell.timeline.now())
        run { _, _ in ((), effects) }
    }

    /// Throttles `key` for `duration` from now (a server's Retry-After, REG-4).
    public func throttle(_ key: String, for duration: Duration) {
        let timeline = shell.timeline
        run { registry, now in
            ((), registry.throttle(key, until: timeline.deadline(after: duration, from: now), at: now))
        }
    }

    /// Throttles `key` until `until` on the registry's timeline (REG-4): a wait shared exactly with
    /// whoever sleeps until the same instant.
    package func throttle(_ key: String, until: RateLimitInstant) {
        run { registry, now in ((), registry.throttle(key, until: until, at: now)) }
    }

    /// Disables `key`: everything passes at once (REG-4).
    public func disable(_ key: String) {
        run { registry, now in ((), registry.disable(key, at: now)) }
    }

    /// Returns `key` to accepting (REG-4).
    public func resume(_ key: String) {
        run { registry, now in ((), registry.resume(key, at: now)) }
    }

    /// Removes `key` (REG-12): its waiters end `closed` and its next request starts it anew from
    /// its rule. Answers whether the key was held.
    @discardableResult
    public func remove(_ key: String) -> Bool {
        run { registry, now in registry.remove(key, at: now) }
    }

    /// The keys held now, sorted (REG-8, REG-12).
    public var keys: [String] { shell.machine.keys }

    /// The rule that governs `key` (REG-2), with its configuration now (REG-7); `nil` when no rule
    /// matches it. The rate-limited client starts learning an endpoint's limit from it (HTTP-13).
    public func rule(for key: String) -> RateLimitRule<Strategy>? { shell.machine.rule(for: key) }

    /// `key`'s state, quota status, remaining quota and statistics now, after serving what is due
    /// (REG-6, REG-9); `nil` when no rule matches it.
    public func quota(of key: String) -> KeyQuota? {
        run { registry, now in
            let served = registry.advance(to: now)
            return (registry.quota(of: key, at: now), served)
        }
    }

    /// Every request so far, over all keys (REG-9).
    public var totals: KeyStatistics { shell.machine.totals }

    /// A new stream of the events reported from now on, in order; it ends when the registry closes
    /// (REG-10).
    public func events() -> AsyncStream<RegistryEvent> { subscribe() }

    /// Calls `handler` with every event, in order, on the actor (keep it short; `nil` removes it).
    public func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) { shell.eventHandler = handler }

    /// Requests waiting for a grant, over all keys.
    public var waitingCount: Int { shell.machine.waitingCount }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() { closeShell() }
}

extension ActorRateLimitRegistry where C == ContinuousClock {
    /// A registry of `rules` on the continuous clock.
    public init(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000) throws(RateLimitRegistryError) {
        try self.init(rules: rules, maximumKeys: maximumKeys, clock: ContinuousClock())
    }
}

extension ActorRateLimitRegistry where Strategy == ConcurrencyLimiter {
    /// Runs `body` holding `permits` on `key`, acquired as ``acquire(_:permits:priority:timeout:arrival:)``
    /// does, and releases them however `body` ends: returning, throwing, or cancelled. `body` runs
    /// where the caller runs, not on the actor.
    public nonisolated(nonsending) func withPermits<T>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        _ body: () async throws -> T
    ) async throws -> T {
        let grant = try await acquire(key, permits: permits, priority: priority, timeout: timeout)
        do {
            let value = try await body()
            if !grant.bypassedLimit { await release(key, permits: permits) }  // a bypass took nothing
            return value
        } catch {
            if !grant.bypassedLimit { await release(key, permits: permits) }
            throw error
        }
    }
}
