import Dispatch
import Foundation
import RateLimitActor
import RateLimitAtomic
import RateLimitConformance
import RateLimitCore
import RateLimitDispatch
import RateLimitLock
import RateLimitShell

/// One adapter, driven through the same operations as the others (async for all of them).
protocol Adapter<Strategy>: Sendable {
    associatedtype Strategy: RateLimitStrategy
    var name: String { get }
    /// Waiting requests can be cancelled through task cancellation (actor, lock async).
    var cancellable: Bool { get }
    /// The adapter has a wait queue (all but the lock-free GCRA).
    var queues: Bool { get }
    func tryAcquire(_ permits: Int64, priority: RateLimitPriority) async -> WaitOutcome
    /// A request that may wait; one that continues an earlier request names its `arrival` (WQ-3).
    func acquire(_ permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?) async
        -> Result<RateLimitGrant, RateLimitAcquireError>
    /// The adapter's clock as an instant of its timeline.
    func now() async -> RateLimitInstant
    func release(_ permits: Int64) async -> RateLimitResult
    func reset() async -> RateLimitResult
    func reconfigure(_ strategy: Strategy) async -> RateLimitResult
    func waitingCount() async -> Int
    func scheduledCount() async -> Int
    func close() async
}

extension Adapter {
    /// A request that may wait, arriving now.
    func acquire(_ permits: Int64, priority: RateLimitPriority, timeout: Duration?) async -> Result<
        RateLimitGrant, RateLimitAcquireError
    > {
        await acquire(permits, priority: priority, timeout: timeout, arrival: nil)
    }
}

struct ActorAdapter<Strategy: RateLimitStrategy>: Adapter {
    let limiter: ActorRateLimiter<Strategy, ManualClock>
    var name: String { "actor" }
    var cancellable: Bool { true }
    var queues: Bool { true }
    func tryAcquire(_ permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        await limiter.tryAcquire(permits, priority: priority)
    }
    func acquire(_ permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?) async
        -> Result<RateLimitGrant, RateLimitAcquireError>
    {
        do {
            return .success(try await limiter.acquire(permits, priority: priority, timeout: timeout, arrival: arrival))
        } catch { return .failure(error) }
    }
    func now() async -> RateLimitInstant { limiter.now }
    func release(_ permits: Int64) async -> RateLimitResult { await limiter.release(permits) }
    func reset() async -> RateLimitResult { await limiter.reset() }
    func reconfigure(_ strategy: Strategy) async -> RateLimitResult { await limiter.reconfigure(strategy) }
    func waitingCount() async -> Int { await limiter.waitingCount }
    func scheduledCount() async -> Int { await limiter.scheduledCount }
    func close() async { await limiter.close() }
}

struct LockAdapter<Strategy: RateLimitStrategy>: Adapter {
    let limiter: LockedRateLimiter<Strategy, ManualClock>
    /// Waiting requests park a thread in `acquireBlocking` instead of suspending a task.
    let blocking: Bool
    var name: String { blocking ? "lock (blocking)" : "lock (async)" }
    var cancellable: Bool { !blocking }
    var queues: Bool { true }
    func tryAcquire(_ permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        limiter.tryAcquire(permits, priority: priority)
    }
    func acquire(_ permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?) async
        -> Result<RateLimitGrant, RateLimitAcquireError>
    {
        guard blocking else {
            do {
                return .success(
                    try await limiter.acquire(permits, priority: priority, timeout: timeout, arrival: arrival))
            } catch { return .failure(error) }
        }
        let limiter = self.limiter
        return await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: Result { () throws(RateLimitAcquireError) in
                        try limiter.acquireBlocking(permits, priority: priority, timeout: timeout, arrival: arrival)
                    })
            }.start()
        }
    }
    func now() async -> RateLimitInstant { limiter.now }
    func release(_ permits: Int64) async -> RateLimitResult { limiter.release(permits) }
    func reset() async -> RateLimitResult { limiter.reset() }
    func reconfigure(_ strategy: Strategy) async -> RateLimitResult { limiter.reconfigure(strategy) }
    func waitingCount() async -> Int { limiter.waitingCount }
    func scheduledCount() async -> Int { limiter.scheduledCount }
    func close() async { limiter.close() }
}

struct DispatchAdapter<Strategy: RateLimitStrategy>: Adapter {
    let limiter: DispatchRateLimiter<Strategy, ManualClock>
    var name: String { "dispatch" }
    var cancellable: Bool { false }
    var queues: Bool { true }
    func tryAcquire(_ permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        limiter.tryAcquire(permits, priority: priority)
    }
    func acquire(_ permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?) async
        -> Result<RateLimitGrant, RateLimitAcquireError>
    {
        await withCheckedContinuation { continuation in
            limiter.acquire(permits, priority: priority, timeout: timeout, arrival: arrival) {
                continuation.resume(returning: $0)
            }
        }
    }
    func now() async -> RateLimitInstant { limiter.now }
    func release(_ permits: Int64) async -> RateLimitResult { limiter.release(permits) }
    func reset() async -> RateLimitResult { limiter.reset() }
    func reconfigure(_ strategy: Strategy) async -> RateLimitResult { limiter.reconfigure(strategy) }
    func waitingCount() async -> Int { limiter.waitingCount }
    func scheduledCount() async -> Int { limiter.scheduledCount }
    func close() async { limiter.close() }
}

/// The lock-free GCRA: no queue, no reconfigure; its answers are GCRA's own.
struct AtomicAdapter: Adapter {
    typealias Strategy = GCRA
    let limiter: AtomicGCRA<ManualClock>
    let clock: ManualClock
    var name: String { "atomic" }
    var cancellable: Bool { true }
    var queues: Bool { false }
    func tryAcquire(_ permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        WaitOutcome(limiter.tryAcquire(permits))
    }
    /// No queue: an arrival orders nothing.
    func acquire(_ permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?) async
        -> Result<RateLimitGrant, RateLimitAcquireError>
    {
        do { return .success(try await limiter.acquire(permits, timeout: timeout)) } catch { return .failure(error) }
    }
    func now() async -> RateLimitInstant { instant(of: clock) }
    func release(_ permits: Int64) async -> RateLimitResult {
        .invalid(RateLimitInputError(field: "release", value: nil, problem: .notSupported))
    }
    func reset() async -> RateLimitResult { limiter.reset() }
    func reconfigure(_ strategy: GCRA) async -> RateLimitResult {
        .invalid(RateLimitInputError(field: "reconfigure", value: nil, problem: .notSupported))
    }
    func waitingCount() async -> Int { 0 }
    func scheduledCount() async -> Int { 0 }
    func close() async {}
}

/// Every queueing adapter of `strategy`, each on its own manual clock starting at 0 (plus the
/// lock-free one for GCRA).
func adapters<S: RateLimitStrategy>(_ strategy: S, queueLimit: Int64) throws -> [(any Adapter<S>, ManualClock)] {
    var made: [(any Adapter<S>, ManualClock)] = []
    let clocks = (0..<4).map { _ in ManualClock() }
    made.append(
        (ActorAdapter(limiter: try ActorRateLimiter(strategy, queueLimit: queueLimit, clock: clocks[0])), clocks[0]))
    made.append(
        (
            LockAdapter(
                limiter: try LockedRateLimiter(strategy, queueLimit: queueLimit, clock: clocks[1]), blocking: false),
            clocks[1]
        ))
    made.append(
        (
            LockAdapter(
                limiter: try LockedRateLimiter(strategy, queueLimit: queueLimit, clock: clocks[2]), blocking: true),
            clocks[2]
        ))
    made.append(
        (
            DispatchAdapter(limiter: try DispatchRateLimiter(strategy, queueLimit: queueLimit, clock: clocks[3])),
            clocks[3]
        ))
    if let gcra = strategy as? GCRA {
        let clock = ManualClock()
        let atomic: any Adapter<GCRA> = AtomicAdapter(limiter: AtomicGCRA(gcra, clock: clock), clock: clock)
        if let typed = atomic as? any Adapter<S> { made.append((typed, clock)) }
    }
    return made
}

/// A manual clock's reading as an instant of a timeline whose origin is the clock's start (0).
func instant(of clock: ManualClock) -> RateLimitInstant {
    ClockTimeline(clock: ManualClock()).instant(of: clock.now)
}

/// Moves `clock` to the timeline instant `nanoseconds` (from its start at 0).
func move(_ clock: ManualClock, to nanoseconds: Int64) {
    clock.set(to: ManualClock.Instant(offset: .nanoseconds(nanoseconds)))
}

/// The strategy types, by identifier.
let strategyTypes: [String: any RateLimitStrategy.Type] = [
    TokenBucket.identifier: TokenBucket.self, IntervalTokenBucket.identifier: IntervalTokenBucket.self,
    GCRA.identifier: GCRA.self, PayLater.identifier: PayLater.self, WarmUp.identifier: WarmUp.self,
    FixedWindow.identifier: FixedWindow.self,
    SlidingWindowLog.identifier: SlidingWindowLog.self,
    SlidingWindowCounter.identifier: SlidingWindowCounter.self,
    SlidingWindowSegments.identifier: SlidingWindowSegments.self, LeakyBucketMeter.identifier: LeakyBucketMeter.self,
    LeakyBucketQueue.identifier: LeakyBucketQueue.self, ConcurrencyLimiter.identifier: ConcurrencyLimiter.self,
]
