// What the lock and Dispatch shells share (Spec/WaitQueue.md WQ-13, Spec/Registry.md): their
// immediate operations, written once over `run`. Nothing here decides anything: each operation is
// one call on the machine, executed by the shell. The adapters' public types forward to these.

import RateLimitCore

/// A shell that runs machine operations synchronously under its own exclusion (the lock and
/// Dispatch adapters).
@usableFromInline package protocol SynchronousRateLimitShell<Machine>: AnyObject, Sendable {
    associatedtype Machine: RateLimitMachine
    associatedtype ShellClock: Clock where ShellClock.Duration == Duration

    /// The adapter's clock, as the machine's timeline.
    var timeline: ClockTimeline<ShellClock> { get }

    /// Runs `operation` on the machine at the clock's reading, atomically, and executes its
    /// effects (outcomes, events, the timer); returns its value.
    @discardableResult
    func run<T>(_ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T

    /// ``run(_:)`` unless the adapter is closed (then `closed`).
    func runIfOpen<T>(otherwise closed: T, _ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T
}

// MARK: One limiter (Spec/WaitQueue.md)

extension SynchronousRateLimitShell {
    @inlinable
    package func tryAcquire<Strategy>(_ permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    where Machine == WaitQueue<Strategy> {
        runIfOpen(otherwise: .closed) { queue, now in queue.tryAcquire(permits, priority: priority, at: now) }
    }

    package func availability<Strategy>(of permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    where Machine == WaitQueue<Strategy> {
        runIfOpen(otherwise: .closed) { queue, now in
            (queue.availability(of: permits, priority: priority, at: now), RateLimitEffects())
        }
    }

    package func release<Strategy>(_ permits: Int64) -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in queue.release(permits, at: now) }
    }

    package func reset<Strategy>() -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in queue.reset(at: now) }
    }

    package func reconfigure<Strategy>(_ strategy: Strategy) -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in queue.reconfigure(strategy, at: now) }
    }

    /// `tryAcquire(0)`, which serves the waiters due first (0 once closed).
    @inlinable
    package func remaining<Strategy>() -> Int64 where Machine == WaitQueue<Strategy> {
        if case .granted(let answer) = tryAcquire(0, priority: .normal) { answer.remaining ?? 0 } else { 0 }
    }

    package func strategy<Strategy>() -> Strategy where Machine == WaitQueue<Strategy> {
        run { queue, _ in (queue.limiter.strategy, RateLimitEffects()) }
    }
}

// MARK: Limiters by key (Spec/Registry.md)

extension SynchronousRateLimitShell {
    // `tryAcquire(_:permits:priority:)` is each shell's own (`RateLimitRegistry.tryAcquire(_:permits:priority:on:)`
    // under its exclusion): it prefetches the key before it reads the clock.

    package func availability<Strategy>(_ key: String, permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    where Machine == RateLimitRegistry<Strategy> {
        runIfOpen(otherwise: .closed) { registry, now in
            (registry.availability(key, permits: permits, priority: priority, at: now), RateLimitEffects())
        }
    }

    package func release<Strategy>(_ key: String, permits: Int64) -> RateLimitResult
    where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.release(key, permits: permits, at: now) }
    }

    package func reset<Strategy>(_ key: String) -> RateLimitResult where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.reset(key, at: now) }
    }

    package func resetAll<Strategy>() where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.resetAll(at: now)) }
    }

    package func reconfigure<Strategy>(_ key: String, to strategy: Strategy) -> RateLimitResult
    where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.reconfigure(key, to: strategy, at: now) }
    }

    package func restoreRule<Strategy>(_ key: String) -> RateLimitResult? where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.restoreRule(key, at: now) }
    }

    package func reconfigure<Strategy>(rule pattern: KeyPattern, to strategy: Strategy) throws(RateLimitRegistryError)
    where Machine == RateLimitRegistry<Strategy> {
        let refusal: RateLimitRegistryError? = run { registry, now in
            do throws(RateLimitRegistryError) {
                return (nil, try registry.reconfigure(rule: pattern, to: strategy, at: now))
            } catch {
                return (error, RateLimitEffects())
            }
        }
        if let refusal { throw refusal }
    }

    package func throttle<Strategy>(_ key: String, for duration: Duration)
    where Machine == RateLimitRegistry<Strategy> {
        let timeline = timeline
        run { registry, now in
            ((), registry.throttle(key, until: timeline.deadline(after: duration, from: now), at: now))
        }
    }

    package func disable<Strategy>(_ key: String) where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.disable(key, at: now)) }
    }

    package func resume<Strategy>(_ key: String) where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in ((), registry.resume(key, at: now)) }
    }

    package func remove<Strategy>(_ key: String) -> Bool where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in registry.remove(key, at: now) }
    }

    package func keys<Strategy>() -> [String] where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in (registry.keys, RateLimitEffects()) }
    }

    package func rule<Strategy>(for key: String) -> RateLimitRule<Strategy>?
    where Machine == RateLimitRegistry<Strategy> {
        run { registry, _ in (registry.rule(for: key), RateLimitEffects()) }
    }

    /// After serving what is due (REG-6, REG-9).
    package func quota<Strategy>(of key: String) -> KeyQuota? where Machine == RateLimitRegistry<Strategy> {
        run { registry, now in
            let served = registry.advance(to: now)
            return (registry.quota(of: key, at: now), served)
        }
    }

    package func totals<Strategy>() -> KeyStatistics where Machine == RateLimitRegistry<Strategy> {
        run { registry, _ in (registry.totals, RateLimitEffects()) }
    }
}
