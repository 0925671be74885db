import Foundation
import RateLimitActor
import RateLimitConformance
import RateLimitCore
import RateLimitDispatch
import RateLimitLock

/// A registry adapter, driven through the same operations as the others (async for all of them).
protocol RegistryAdapter: Sendable {
    var name: String { get }
    /// Waiting requests can be cancelled through task cancellation (actor, lock async).
    var cancellable: Bool { get }
    func tryAcquire(_ key: String, permits: Int64, priority: RateLimitPriority) async -> WaitOutcome
    /// A request that may wait; one that continues an earlier request names its `arrival` (WQ-3).
    func acquire(
        _ key: String, permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?
    ) async -> Result<RateLimitGrant, RateLimitAcquireError>
    /// The registry's clock as an instant of its timeline.
    func now() async -> RateLimitInstant
    func rule(for key: String) async -> RateLimitRule<AnyRateLimitStrategy>?
    func reconfigure(rule pattern: KeyPattern, to strategy: AnyRateLimitStrategy) async throws(RateLimitRegistryError)
    func reconfigure(_ key: String, to strategy: AnyRateLimitStrategy) async -> RateLimitResult
    func restoreRule(_ key: String) async -> RateLimitResult?
    func release(_ key: String, permits: Int64) async -> RateLimitResult
    func throttle(_ key: String, for duration: Duration) async
    func disable(_ key: String) async
    func resume(_ key: String) async
    func quota(of key: String) async -> KeyQuota?
    func totals() async -> KeyStatistics
    func events() async -> AsyncStream<RegistryEvent>
    func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) async
    func waitingCount() async -> Int
    func close() async
}

extension RegistryAdapter {
    /// A request that may wait, arriving now.
    func acquire(_ key: String, permits: Int64, priority: RateLimitPriority, timeout: Duration?) async -> Result<
        RateLimitGrant, RateLimitAcquireError
    > {
        await acquire(key, permits: permits, priority: priority, timeout: timeout, arrival: nil)
    }
}

struct ActorRegistryAdapter: RegistryAdapter {
    let registry: ActorRateLimitRegistry<AnyRateLimitStrategy, ManualClock>
    var name: String { "actor" }
    var cancellable: Bool { true }
    func tryAcquire(_ key: String, permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        await registry.tryAcquire(key, permits: permits, priority: priority)
    }
    func acquire(
        _ key: String, permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?
    ) async -> Result<RateLimitGrant, RateLimitAcquireError> {
        do {
            return .success(
                try await registry.acquire(
                    key, permits: permits, priority: priority, timeout: timeout, arrival: arrival))
        } catch { return .failure(error) }
    }
    func now() async -> RateLimitInstant { registry.now }
    func rule(for key: String) async -> RateLimitRule<AnyRateLimitStrategy>? { await registry.rule(for: key) }
    func reconfigure(_ key: String, to strategy: AnyRateLimitStrategy) async -> RateLimitResult {
        await registry.reconfigure(key, to: strategy)
    }
    func restoreRule(_ key: String) async -> RateLimitResult? { await registry.restoreRule(key) }
    func reconfigure(rule pattern: KeyPattern, to strategy: AnyRateLimitStrategy) async throws(RateLimitRegistryError) {
        try await registry.reconfigure(rule: pattern, to: strategy)
    }
    func release(_ key: String, permits: Int64) async -> RateLimitResult {
        await registry.release(key, permits: permits)
    }
    func throttle(_ key: String, for duration: Duration) async { await registry.throttle(key, for: duration) }
    func disable(_ key: String) async { await registry.disable(key) }
    func resume(_ key: String) async { await registry.resume(key) }
    func quota(of key: String) async -> KeyQuota? { await registry.quota(of: key) }
    func totals() async -> KeyStatistics { await registry.totals }
    func events() async -> AsyncStream<RegistryEvent> { await registry.events() }
    func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) async {
        await registry.setEventHandler(handler)
    }
    func waitingCount() async -> Int { await registry.waitingCount }
    func close() async { await registry.close() }
}

/// What the lock and Dispatch registries offer alike, without waiting.
protocol SynchronousRegistry: Sendable {
    func tryAcquire(_ key: String, permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    func release(_ key: String, permits: Int64) -> RateLimitResult
    func throttle(_ key: String, for duration: Duration)
    func disable(_ key: String)
    func resume(_ key: String)
    func quota(of key: String) -> KeyQuota?
    var totals: KeyStatistics { get }
    func events() -> AsyncStream<RegistryEvent>
    func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?)
    var waitingCount: Int { get }
    func close()
    var now: RateLimitInstant { get }
    func rule(for key: String) -> RateLimitRule<AnyRateLimitStrategy>?
    func reconfigure(rule pattern: KeyPattern, to strategy: AnyRateLimitStrategy) throws(RateLimitRegistryError)
    func reconfigure(_ key: String, to strategy: AnyRateLimitStrategy) -> RateLimitResult
    func restoreRule(_ key: String) -> RateLimitResult?
}

extension LockedRateLimitRegistry: SynchronousRegistry where Strategy == AnyRateLimitStrategy {}
extension DispatchRateLimitRegistry: SynchronousRegistry where Strategy == AnyRateLimitStrategy {}

/// The lock and Dispatch registries share their immediate operations.
protocol SynchronousRegistryAdapter: RegistryAdapter {
    associatedtype Registry: SynchronousRegistry
    var registry: Registry { get }
}

extension SynchronousRegistryAdapter {
    func tryAcquire(_ key: String, permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        registry.tryAcquire(key, permits: permits, priority: priority)
    }
    func release(_ key: String, permits: Int64) async -> RateLimitResult { registry.release(key, permits: permits) }
    func throttle(_ key: String, for duration: Duration) async { registry.throttle(key, for: duration) }
    func disable(_ key: String) async { registry.disable(key) }
    func resume(_ key: String) async { registry.resume(key) }
    func quota(of key: String) async -> KeyQuota? { registry.quota(of: key) }
    func totals() async -> KeyStatistics { registry.totals }
    func events() async -> AsyncStream<RegistryEvent> { registry.events() }
    func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) async { registry.setEventHandler(handler) }
    func waitingCount() async -> Int { registry.waitingCount }
    func close() async { registry.close() }
    func now() async -> RateLimitInstant { registry.now }
    func rule(for key: String) async -> RateLimitRule<AnyRateLimitStrategy>? { registry.rule(for: key) }
    func reconfigure(_ key: String, to strategy: AnyRateLimitStrategy) async -> RateLimitResult {
        registry.reconfigure(key, to: strategy)
    }
    func restoreRule(_ key: String) async -> RateLimitResult? { registry.restoreRule(key) }
    func reconfigure(rule pattern: KeyPattern, to strategy: AnyRateLimitStrategy) async throws(RateLimitRegistryError) {
        try registry.reconfigure(rule: pattern, to: strategy)
    }
}

struct LockRegistryAdapter: SynchronousRegistryAdapter {
    let registry: LockedRateLimitRegistry<AnyRateLimitStrategy, ManualClock>
    /// Waiting requests park a thread in `acquireBlocking` instead of suspending a task.
    let blocking: Bool
    var name: String { blocking ? "lock (blocking)" : "lock (async)" }
    var cancellable: Bool { !blocking }
    func acquire(
        _ key: String, permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?
    ) async -> Result<RateLimitGrant, RateLimitAcquireError> {
        guard blocking else {
            do {
                return .success(
                    try await registry.acquire(
                        key, permits: permits, priority: priority, timeout: timeout, arrival: arrival))
            } catch { return .failure(error) }
        }
        let registry = self.registry
        return await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: Result { () throws(RateLimitAcquireError) in
                        try registry.acquireBlocking(
                            key, permits: permits, priority: priority, timeout: timeout, arrival: arrival)
                    })
            }.start()
        }
    }
}

struct DispatchRegistryAdapter: SynchronousRegistryAdapter {
    let registry: DispatchRateLimitRegistry<AnyRateLimitStrategy, ManualClock>
    var name: String { "dispatch" }
    var cancellable: Bool { false }
    func acquire(
        _ key: String, permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: RateLimitInstant?
    ) async -> Result<RateLimitGrant, RateLimitAcquireError> {
        await withCheckedContinuation { continuation in
            registry.acquire(key, permits: permits, priority: priority, timeout: timeout, arrival: arrival) {
                continuation.resume(returning: $0)
            }
        }
    }
}

/// Every registry adapter of `rules`, each on its own manual clock starting at 0.
func registryAdapters(_ rules: [RateLimitRule<AnyRateLimitStrategy>], maximumKeys: Int = 10_000) throws -> [(
    any RegistryAdapter, ManualClock
)] {
    let clocks = (0..<4).map { _ in ManualClock() }
    // A serial callback queue keeps the event handler's calls in order.
    let callbacks = DispatchQueue(label: "RegistryAdapters.callbacks")
    return [
        (
            ActorRegistryAdapter(
                registry: try ActorRateLimitRegistry(rules: rules, maximumKeys: maximumKeys, clock: clocks[0])),
            clocks[0]
        ),
        (
            LockRegistryAdapter(
                registry: try LockedRateLimitRegistry(rules: rules, maximumKeys: maximumKeys, clock: clocks[1]),
                blocking: false), clocks[1]
        ),
        (
            LockRegistryAdapter(
                registry: try LockedRateLimitRegistry(rules: rules, maximumKeys: maximumKeys, clock: clocks[2]),
                blocking: true), clocks[2]
        ),
        (
            DispatchRegistryAdapter(
                registry: try DispatchRateLimitRegistry(
                    rules: rules, maximumKeys: maximumKeys, clock: clocks[3], callbackQueue: callbacks)),
            clocks[3]
        ),
    ]
}

/// Events recorded from any thread, in arrival order.
final class EventLog: @unchecked Sendable {
    // @unchecked: `recorded` is read and written only under `lock`.
    private let lock = NSLock()
    private var recorded: [RegistryEvent] = []
    func append(_ event: RegistryEvent) { lock.withLock { recorded.append(event) } }
    var events: [RegistryEvent] { lock.withLock { recorded } }
}
