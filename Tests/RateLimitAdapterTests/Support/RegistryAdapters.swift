import Foundation
import RateLimitActor
import RateLimitConformance
import RateLimitCore
import RateLimitDispatch
import RateLimitLock

/// A registry adapter, driven through the same operations as the others (async for all of them).
protocol RegistryAdapter: Sendable {
    var name: String { get }
    /// Whether time events of different keys due at one instant may come in another order than
    /// the pure registry's (REG-11 leaves it open; a sharded registry serves them shard by shard).
    var tiesInAnyOrder: Bool { get }
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
    func availability(_ key: String, permits: Int64, priority: RateLimitPriority) async -> WaitOutcome
    func remove(_ key: String) async -> Bool
    func resetAll() async
    func keys() async -> [String]
    func totals() async -> KeyStatistics
    func events() async -> AsyncStream<RegistryEvent>
    func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) async
    func waitingCount() async -> Int
    func close() async
}

extension RegistryAdapter {
    var tiesInAnyOrder: Bool { false }

    /// Whether `got` is the event stream `want`: the same events in the same order, except that
    /// with ``tiesInAnyOrder`` the events of one instant may interleave keys differently, each
    /// key's own in order.
    func sameEvents(_ got: [RegistryEvent], _ want: [RegistryEvent]) -> Bool {
        guard tiesInAnyOrder else { return got == want }
        func runs(_ events: [RegistryEvent]) -> [[String: [RegistryEvent]]] {
            var runs: [(Int64, [String: [RegistryEvent]])] = []
            for event in events {
                let (key, at) = event.keyAndInstant
                if runs.last?.0 != at { runs.append((at, [:])) }
                runs[runs.count - 1].1[key, default: []].append(event)
            }
            return runs.map(\.1)
        }
        return got.count == want.count && runs(got) == runs(want)
    }

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
    func availability(_ key: String, permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        await registry.availability(key, permits: permits, priority: priority)
    }
    func remove(_ key: String) async -> Bool { await registry.remove(key) }
    func resetAll() async { await registry.resetAll() }
    func keys() async -> [String] { await registry.keys }
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
    func availability(_ key: String, permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    func remove(_ key: String) -> Bool
    func resetAll()
    var keys: [String] { get }
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
    func availability(_ key: String, permits: Int64, priority: RateLimitPriority) async -> WaitOutcome {
        registry.availability(key, permits: permits, priority: priority)
    }
    func remove(_ key: String) async -> Bool { registry.remove(key) }
    func resetAll() async { registry.resetAll() }
    func keys() async -> [String] { registry.keys }
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
    /// Its shards (REG-13).
    let shards: Int
    var name: String { "lock (\(blocking ? "blocking" : "async"), \(shards) shard\(shards == 1 ? "" : "s"))" }
    var tiesInAnyOrder: Bool { shards > 1 }
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
    let clocks = (0..<5).map { _ in ManualClock() }
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
                blocking: false, shards: 16), clocks[1]
        ),
        (
            LockRegistryAdapter(
                registry: try LockedRateLimitRegistry(rules: rules, maximumKeys: maximumKeys, clock: clocks[2]),
                blocking: true, shards: 16), clocks[2]
        ),
        // One shard: one lock for every key, the pure registry's order of ties (REG-13).
        (
            LockRegistryAdapter(
                registry: try LockedRateLimitRegistry(
                    rules: rules, maximumKeys: maximumKeys, shards: 1, clock: clocks[4]),
                blocking: false, shards: 1), clocks[4]
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

extension RegistryEvent {
    /// The key it happened to and its instant.
    var keyAndInstant: (key: String, at: Int64) {
        switch self {
        case .rejected(let key, _, _, let at), .stateChanged(let key, _, _, let at),
            .statusChanged(let key, _, _, _, let at):
            (key, at.nanoseconds)
        }
    }
}
