import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// A request that continues an earlier one (a retry) names that one's arrival and keeps its place
// (Spec/WaitQueue.md WQ-3, Registry.md REG-5, HTTP.md HTTP-11), through every adapter: the single
// limiters and the registries. The instants are worked out by hand below; the random scripts of
// AdapterModelTests and AdapterRegistryTests compare the same against the model.

/// The names of requests in the order their grants came, from any thread.
private final class GrantLog: @unchecked Sendable {
    // @unchecked: `names` is read and written only under `lock`.
    private let lock = NSLock()
    private var names: [String] = []
    func append(_ name: String) { lock.withLock { names.append(name) } }
    var order: [String] { lock.withLock { names } }
}

/// One bucket, one permit per 10 ns, empty at 0 (its one token taken): waiters `a` (arrives at 2)
/// and `b` (at 4); then `c` at 5 names arrival 3, and `d` at 6 names arrival 2, `a`'s own (a tie:
/// made later, it goes after `a`). Service order by arrival: a (2), d (2, made after a), c (3),
/// b (4); one grant per refill, at 10, 20, 30 and 40.
private let arrivals: [(name: String, at: Int64, arrival: Int64?)] = [
    ("a", 2, nil), ("b", 4, nil), ("c", 5, 3), ("d", 6, 2),
]
private let expectedOrder = ["a", "d", "c", "b"]

/// Empties the bucket at 0 with `takeOne`, makes the requests of `arrivals` at their instants with
/// `acquire` (each waits), then moves the clock to each refill and returns the order of the grants.
private func grantOrder(
    _ clock: ManualClock, now: () async -> RateLimitInstant, takeOne: () async -> Bool,
    acquire: @escaping @Sendable (RateLimitInstant?) async -> Bool, waiting: () async -> Int
) async -> [String] {
    #expect(await now() == .origin, "the timeline starts at the adapter's creation")
    #expect(await takeOne())
    let log = GrantLog()
    var tasks: [Task<Void, Never>] = []
    for (index, request) in arrivals.enumerated() {
        move(clock, to: request.at)
        #expect(await now() == .fromManual(request.at))
        let arrival = request.arrival.map(RateLimitInstant.fromManual)
        tasks.append(Task { if await acquire(arrival) { log.append(request.name) } })
        #expect(await eventually { await waiting() == index + 1 }, "\(request.name) waits")
    }
    for (index, instant) in [10, 20, 30, 40].enumerated() {
        move(clock, to: Int64(instant))
        #expect(await eventually { log.order.count == index + 1 }, "a grant at \(instant)")
    }
    for task in tasks { _ = await finishes { await task.value } }
    return log.order
}

@Suite("Retries keep their place, and registries tell and restore a key's rule, through every adapter")
struct AdapterArrivalTests {
    static let bucket = try! TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 10)  // constant, valid
    static let adapterNames = ["actor", "lock (async)", "lock (blocking)", "dispatch"]
    static let registryNames = [
        "actor", "lock (async, 16 shards)", "lock (blocking, 16 shards)", "lock (async, 1 shard)", "dispatch",
    ]

    @Test(
        "WQ-3 WQ-13 a request naming an earlier arrival (read as now) is served before the waiters that arrived after it, and after an equal arrival made before it, through every single limiter",
        arguments: adapterNames)
    func singleLimiter(_ name: String) async throws {
        let (adapter, clock) = try #require(
            try adapters(Self.bucket, queueLimit: 10).first { $0.0.name == name }, "no adapter \(name)")
        let order = await grantOrder(
            clock, now: { await adapter.now() }, takeOne: { await adapter.tryAcquire(1, priority: .normal).isGranted },
            acquire: { arrival in
                if case .success = await adapter.acquire(1, priority: .normal, timeout: nil, arrival: arrival) {
                    return true
                }
                return false
            }, waiting: { await adapter.waitingCount() })
        #expect(order == expectedOrder)
        await adapter.close()
    }

    @Test(
        "REG-5 WQ-3 WQ-13 a request naming an earlier arrival (read as now) keeps its place among a key's waiters, through every registry",
        arguments: registryNames)
    func registry(_ name: String) async throws {
        let rules = [
            try RateLimitRule(.anyKey, AnyRateLimitStrategy.tokenBucket(Self.bucket), overflow: .queue(limit: 10))
        ]
        let (adapter, clock) = try #require(
            try registryAdapters(rules).first { $0.0.name == name }, "no adapter \(name)")
        let order = await grantOrder(
            clock, now: { await adapter.now() },
            takeOne: { await adapter.tryAcquire("k", permits: 1, priority: .normal).isGranted },
            acquire: { arrival in
                let outcome = await adapter.acquire("k", permits: 1, priority: .normal, timeout: nil, arrival: arrival)
                if case .success = outcome { return true }
                return false
            }, waiting: { await adapter.waitingCount() })
        #expect(order == expectedOrder)
        await adapter.close()
    }

    @Test(
        "REG-2 REG-7 rule(for:) names the rule that governs a key, with its configuration now, through every registry",
        arguments: registryNames)
    func ruleForKey(_ name: String) async throws {
        let exact = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 3, windowNanoseconds: 100))
        let prefix = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 5, windowNanoseconds: 100))
        let rules = [
            try RateLimitRule(.exact("api/login"), exact), try RateLimitRule(.prefix("api/"), prefix),
        ]
        let (adapter, _) = try #require(try registryAdapters(rules).first { $0.0.name == name }, "no adapter \(name)")
        // The exact rule first, then the longest prefix (REG-2); no default rule: none for "other".
        #expect(await adapter.rule(for: "api/login")?.strategy == exact)
        #expect(await adapter.rule(for: "api/search")?.keys == .prefix("api/"))
        #expect(await adapter.rule(for: "other") == nil)
        // A key's own configuration is not its rule's; a rule reconfigured is read as it is now.
        let wider = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 8, windowNanoseconds: 100))
        try await adapter.reconfigure(rule: .prefix("api/"), to: wider)
        #expect(await adapter.rule(for: "api/search")?.strategy == wider)
        #expect(await adapter.rule(for: "api/login")?.strategy == exact)
        await adapter.close()
    }

    @Test(
        "REG-7 restoreRule gives a key with a configuration of its own its rule's again, keeping its count; otherwise nothing changes, through every registry",
        arguments: registryNames)
    func restoreRule(_ name: String) async throws {
        let five = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 5, windowNanoseconds: 100))
        let (adapter, _) = try #require(
            try registryAdapters([try RateLimitRule(.prefix("api/"), five)]).first { $0.0.name == name },
            "no adapter \(name)")
        #expect(await adapter.tryAcquire("api/a", permits: 1, priority: .normal) == .granted(.allowed(remaining: 4)))
        #expect(await adapter.restoreRule("api/a") == nil, "it follows its rule")
        #expect(await adapter.restoreRule("api/b") == nil, "not held")
        // 1 counted in the window: 1 left of 2 under its own configuration, 4 of 5 under the rule's (FW-10).
        let two = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 2, windowNanoseconds: 100))
        #expect(await adapter.reconfigure("api/a", to: two) == .allowed(remaining: 1))
        #expect(await adapter.restoreRule("api/a") == .allowed(remaining: 4))
        #expect(await adapter.restoreRule("api/a") == nil, "once is enough")
        #expect(await adapter.quota(of: "api/a")?.remaining == 4)
        await adapter.close()
    }
}
