// What the adapters share (Spec/WaitQueue.md WQ-13, Spec/Registry.md): the operations every
// synchronous shell offers, written once over its `run`, and the fan-out of events to streams.
// Nothing here decides anything: each operation is one call on the machine, executed by the shell.

/// An adapter that runs machine operations synchronously under its own exclusion (the lock and
/// Dispatch adapters). Its immediate operations are defined once, in extensions of this protocol.
public protocol SynchronousRateLimitShell<Machine>: AnyObject, Sendable {
    associatedtype Machine: RateLimitMachine
    associatedtype ShellClock: Clock where ShellClock.Duration == Duration

    /// The adapter's clock, as the machine's timeline.
    var timeline: ClockTimeline<ShellClock> { get }

    /// Runs `operation` on the machine at the clock's reading, atomically, and executes its
    /// effects (outcomes, events, the timer); returns its value.
    @discardableResult
    func run<T>(_ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T

    /// ``run(_:)`` unless the adapter is closed (then `nil`).
    func runIfOpen<T>(_ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T?
}

// MARK: One limiter (Spec/WaitQueue.md)

extension SynchronousRateLimitShell {
    /// Takes `permits` now if the limiter and the waiters ahead allow it; never waits (WQ-4).
    @inlinable
    public func tryAcquire<Strategy>(_ permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome
    where Machine == WaitQueue<Strategy> {
        runIfOpen { queue, now in
            if let outcome = queue.tryAcquireIfNobodyWaits(permits, priority: priority, at: now) {
                return (outcome, RateLimitEffects())
            }
            let (outcome, completions) = queue.tryAcquireServing(permits, priority: priority, at: now)
            return (outcome, RateLimitEffects(completions: completions))
        } ?? .closed
    }

    /// Gives back permits (concurrency limiter) and serves the waiters (WQ-8).
    @discardableResult
    public func release<Strategy>(_ permits: Int64) -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in
            let (result, completions) = queue.release(permits, at: now)
            return (result, RateLimitEffects(completions: completions))
        }
    }

    /// Resets the strategy's state; waiters are served from the fresh state (WQ-8).
    @discardableResult
    public func reset<Strategy>() -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in
            let (result, completions) = queue.reset(at: now)
            return (result, RateLimitEffects(completions: completions))
        }
    }

    /// Replaces the configuration; waiters are served under the new one (WQ-8).
    @discardableResult
    public func reconfigure<Strategy>(_ strategy: Strategy) -> RateLimitResult where Machine == WaitQueue<Strategy> {
        run { queue, now in
            let (result, completions) = queue.reconfigure(strategy, at: now)
            return (result, RateLimitEffects(completions: completions))
        }
    }

    /// The permits an acquire could take now, without taking any: `tryAcquire(0)`, which serves
    /// the waiters due first (0 once closed).
    @inlinable
    public func remaining<Strategy>() -> Int64 where Machine == WaitQueue<Strategy> {
        if case .granted(let answer) = tryAcquire(0) { answer.remaining ?? 0 } else { 0 }
    }

    /// The strategy in force.
    public func strategy<Strategy>() -> Strategy where Machine == WaitQueue<Strategy> {
        run { queue, _ in (queue.limiter.strategy, RateLimitEffects()) }
    }
}

// MARK: Limiters by key (Spec/Registry.md)

extension SynchronousRateLimitShell {
    /// Takes `permits` on `key` now if its limit and its waiters allow it; never waits (REG-5).
    @inlinable
    public func tryAcquire<Strategy>(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal
    ) -> WaitOutcome where Machine == RateLimitRegistry<Strategy> {
        runIfOpen { registry, now in registry.tryAcquire(key, permits: permits, priority: priority, at: now) } ?? .closed
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
        let refusal: RateLimitRegistryError? = run { registry, now in
            do throws(RateLimitRegistryError) {
                return (nil, try registry.reconfigure(rule: pattern, to: strategy, at: now))
            } catch {
                return (error, RateLimitEffects())
            }
        }
        if let refusal { throw refusal }
    }

    /// Throttles `key` for `duration` from now (a server's Retry-After, REG-4).
    public func throttle<Strategy>(_ key: String, for duration: Duration) where Machine == RateLimitRegistry<Strategy> {
        let timeline = timeline
        run { registry, now in ((), registry.throttle(key, until: timeline.deadline(after: duration, from: now), at: now)) }
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
    public func totals<Strategy>() -> KeyStatistics where Machine == RateLimitRegistry<Strategy> {
        run { registry, _ in (registry.totals, RateLimitEffects()) }
    }
}

// MARK: Events

/// The streams an adapter publishes its events to (REG-10), each fed in order.
public struct EventSubscribers: Sendable {
    private var continuations: [Int: AsyncStream<RegistryEvent>.Continuation] = [:]
    private var next = 0
    private var finished = false

    public init() {}

    /// A new stream of the events published from now on; `unsubscribe` is called with its id
    /// when the consumer stops listening. A stream made after ``finishAll()`` is already over.
    public mutating func subscribe(unsubscribe: @escaping @Sendable (Int) -> Void) -> AsyncStream<RegistryEvent> {
        let (stream, continuation) = AsyncStream<RegistryEvent>.makeStream()
        guard !finished else {
            continuation.finish()
            return stream
        }
        let id = next
        next += 1
        continuations[id] = continuation
        continuation.onTermination = { _ in unsubscribe(id) }
        return stream
    }

    public mutating func remove(_ id: Int) { continuations[id] = nil }

    /// Yields `events` to every stream, in order.
    public func publish(_ events: [RegistryEvent]) {
        for event in events { for continuation in continuations.values { continuation.yield(event) } }
    }

    /// Ends every stream (the adapter closed or was released).
    public mutating func finishAll() {
        finished = true
        for continuation in continuations.values { continuation.finish() }
        continuations = [:]
    }
}
