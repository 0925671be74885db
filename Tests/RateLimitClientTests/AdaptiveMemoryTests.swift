import RateLimitActor
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import Testing

@testable import RateLimitClient

// What the client learns is bounded (Spec/HTTP.md HTTP-13): at most `maximumIdleEndpoints`
// endpoints with no request in progress keep their learned limit; beyond it the one idle longest
// is forgotten, its key follows its rule again (so the registry may forget it, REG-8), and the
// forgetting is reported. All on a manual clock, against scripted replies.

private let second: Int64 = 1_000_000_000

/// The `limitChanged` events of `log`, as (endpoint, limit, instant).
private func changes(_ log: [ClientEvent]) -> [(String, LearnedLimit, RateLimitInstant)] {
    log.compactMap {
        if case .limitChanged(let endpoint, let limit, let at) = $0 { (endpoint, limit, at) } else { nil }
    }
}

/// The events received so far from `events`, stopping after `count` `limitChanged` ones.
private func limitChanges(_ count: Int, from events: inout AsyncStream<ClientEvent>.Iterator) async -> [(
    String, LearnedLimit, RateLimitInstant
)] {
    var log: [ClientEvent] = []
    while changes(log).count < count, let event = await events.next() { log.append(event) }
    return changes(log)
}

/// Replies by endpoint: each request (its endpoint's name) takes the next of its own script, the
/// last one repeating; a request not scripted gets `otherwise`.
private actor EndpointScripts {
    private var scripts: [String: [Result<Reply, NetworkDown>]]
    private let otherwise: Result<Reply, NetworkDown>
    init(_ scripts: [String: [Result<Reply, NetworkDown>]], otherwise: Result<Reply, NetworkDown>) {
        self.scripts = scripts
        self.otherwise = otherwise
    }
    func answer(_ endpoint: String) throws(NetworkDown) -> Reply {
        guard var script = scripts[endpoint], !script.isEmpty else { return try otherwise.get() }
        let reply = script.count > 1 ? script.removeFirst() : script[0]
        scripts[endpoint] = script
        return try reply.get()
    }
}

/// A client on a manual clock whose endpoints `api/…` have `limit`, queueing, in a registry of
/// `maximumKeys`; each request is its endpoint's name.
private func client(
    _ limit: AnyRateLimitStrategy, maximumKeys: Int = 10_000, adaptive: AdaptivePolicy, retries: Int = 0,
    scripts: [String: [Result<Reply, NetworkDown>]] = [:], otherwise: Result<Reply, NetworkDown>
) throws -> (RateLimitedClient<String, Reply, AnyRateLimitStrategy, ManualClock>, ManualClock) {
    let clock = ManualClock()
    let registry = try ActorRateLimitRegistry(
        rules: [try RateLimitRule(.prefix("api/"), limit, overflow: .queue(limit: 100))], maximumKeys: maximumKeys,
        clock: clock)
    let server = EndpointScripts(scripts, otherwise: otherwise)
    let client = RateLimitedClient(
        limiter: registry, adaptive: adaptive,
        retryPolicy: try RetryPolicy(backoff: Backoff(maximumRetries: retries, base: .seconds(1), cap: .seconds(1))),
        seed: 1, wallClock: { HTTPDate(secondsSinceEpoch: 1_700_000_000) },
        operation: { endpoint in try await server.answer(endpoint) })
    return (client, clock)
}

@Suite("What the client learns is bounded (Spec/HTTP.md HTTP-13)", .patience(.seconds(60)))
struct AdaptiveMemoryTests {
    @Test(
        "HTTP-13 REG-8 over 1,000 endpoints at most maximumIdleEndpoints keep what they learned, and the registry of 3 keys, which forgets keys that follow their rule, never refuses one"
    )
    func boundedOverManyEndpoints() async throws {
        // Each request fails without a response: a drop, the concurrency 4 → ⌊4·0.9⌋ = 3, a
        // configuration of the key's own (which REG-8 never forgets).
        let policy = try AdaptivePolicy(rate: .off, concurrency: .standard, maximumIdleEndpoints: 2)
        let (client, _) = try client(
            .concurrency(try ConcurrencyLimiter(limit: 4)), maximumKeys: 3, adaptive: policy,
            otherwise: .failure(NetworkDown()))
        for index in 0..<1_000 {
            do {
                _ = try await client.send("api/\(index)", to: "api/\(index)")
                Issue.record("api/\(index) got a response")
            } catch {
                guard case .transport = error else {
                    Issue.record("api/\(index): \(error), not the operation's failure")
                    break
                }
            }
            // The two last endpoints keep their learned limit, the one before is forgotten.
            #expect(await client.learnedLimit(for: "api/\(index)")?.concurrency == 3)
            if index >= 1 { #expect(await client.learnedLimit(for: "api/\(index - 1)")?.concurrency == 3) }
            if index >= 2 { #expect(await client.learnedLimit(for: "api/\(index - 2)") == nil, "api/\(index - 2)") }
            // What the client holds for learning stays bounded.
            let learning = try #require(await client.learning)
            let (learners, idle, storage, writes) = (
                learning.learners.count, learning.idle.count, learning.idle.storage, learning.keyWrites.count
            )
            #expect(learners <= 2 && idle <= 2 && storage <= 2 * 2 + 16 && writes == 0, "after api/\(index)")
            #expect(await client.limiter.keys.count <= 3)
        }
        #expect(await client.learnedLimit(for: "api/0") == nil)
        #expect(await client.learning?.learnersMade == 1_000)
    }

    @Test(
        "HTTP-13 a forgotten endpoint starts again from its rule: its key enforces the rule's limit, the forgetting is reported with it, and its next refusal decreases from the rule's rate"
    )
    func forgottenStartsFromItsRule() async throws {
        // The rule: 100 per second in bursts of 100; a 503 (no Retry-After: no hold) is a refusal.
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 100, permitsPerPeriod: 100, period: .seconds(1)))
        let policy = try AdaptivePolicy(rate: .standard, concurrency: .off, maximumIdleEndpoints: 1)
        let (client, clock) = try client(bucket, adaptive: policy, otherwise: .success(Reply(503)))
        var events = await client.events().makeAsyncIterator()
        #expect(try await client.send("api/a", to: "api/a").status == 503)
        // The first refusal, no round served: ⌊100·0.9⌋ = 90; 0 served ≤ the burst: ⌊0·0.5⌋ → 1.
        let learned = AdaptiveRate.Limit(rate: 90, burst: 1, periodNanoseconds: second)
        #expect(await client.learnedLimit(for: "api/a")?.rate == learned)
        #expect(await client.limiter.availability("api/a", permits: 2) == .rejected(.neverAllowed))
        // api/b's request ends: two idle endpoints, one too many; api/a, idle longest, is forgotten.
        #expect(try await client.send("api/b", to: "api/b").status == 503)
        #expect(await client.learnedLimit(for: "api/a") == nil)
        #expect(await client.learnedLimit(for: "api/b")?.rate == learned)
        let rule = AdaptiveRate.Limit(rate: 100, burst: 100, periodNanoseconds: second)
        // Its key enforces the rule's burst of 100 again (full once a second has refilled it).
        clock.advance(by: .seconds(1))
        #expect(await client.limiter.availability("api/a", permits: 100).isGranted)
        // Learning starts over from the rule: the gentle step from 100 again, not from 90.
        #expect(try await client.send("api/a", to: "api/a").status == 503)
        #expect(await client.learnedLimit(for: "api/a")?.rate == learned)
        #expect(await client.learnedLimit(for: "api/b") == nil)
        let reported = await limitChanges(5, from: &events)
        let at = RateLimitInstant.origin
        let later = try RateLimitInstant(nanoseconds: second)
        #expect(reported.map(\.0) == ["api/a", "api/b", "api/a", "api/a", "api/b"])
        #expect(
            reported.map(\.1) == [
                LearnedLimit(rate: learned, concurrency: nil, change: .decreased),
                LearnedLimit(rate: learned, concurrency: nil, change: .decreased),
                LearnedLimit(rate: rule, concurrency: nil, change: .reset),
                LearnedLimit(rate: learned, concurrency: nil, change: .decreased),
                LearnedLimit(rate: rule, concurrency: nil, change: .reset),
            ])
        #expect(reported.map(\.2) == [at, at, at, later, later])
    }

    @Test("HTTP-13 an endpoint with a request in progress is never forgotten, however long ago it was first used")
    func busyIsKept() async throws {
        // api/a's first attempt is refused for 1 s; its retry waits in its queue meanwhile.
        let policy = try AdaptivePolicy(rate: .standard, concurrency: .off, maximumIdleEndpoints: 1)
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 100, permitsPerPeriod: 100, period: .seconds(1)))
        let (client, clock) = try client(
            bucket, adaptive: policy, retries: 1,
            scripts: ["api/a": [.success(Reply(429, ["Retry-After": "1"])), .success(Reply(200))]],
            otherwise: .success(Reply(200)))
        var events = await client.events().makeAsyncIterator()
        let a = Task { try await client.send("api/a", to: "api/a").status }
        _ = await limitChanges(1, from: &events)  // api/a's refusal was learned
        _ = try await client.send("api/b", to: "api/b")
        _ = try await client.send("api/c", to: "api/c")
        // Idle: api/b, then api/c, one too many: api/b goes; api/a, busy, stays.
        #expect(await client.learnedLimit(for: "api/a")?.change == .decreased)
        #expect(await client.learnedLimit(for: "api/b") == nil)
        #expect(await client.learnedLimit(for: "api/c") != nil)
        await advance(clock, to: .seconds(1))
        #expect(try await a.value == 200)
        // api/a's request ended: idle api/c, then api/a; api/c goes.
        #expect(await client.learnedLimit(for: "api/a") != nil)
        #expect(await client.learnedLimit(for: "api/c") == nil)
    }

    @Test("HTTP-13 a negative maximumIdleEndpoints is refused, naming it; 0 forgets an endpoint when its request ends")
    func maximumIdleEndpoints() async throws {
        #expect(throws: RateLimitHTTPError.invalid(field: "maximumIdleEndpoints", reason: "must not be negative")) {
            try AdaptivePolicy(rate: .standard, concurrency: .off, maximumIdleEndpoints: -1)
        }
        #expect(AdaptivePolicy.standard.maximumIdleEndpoints == 1_000)
        let policy = try AdaptivePolicy(rate: .standard, concurrency: .off, maximumIdleEndpoints: 0)
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 100, permitsPerPeriod: 100, period: .seconds(1)))
        let (client, clock) = try client(bucket, adaptive: policy, otherwise: .success(Reply(503)))
        #expect(try await client.send("api/a", to: "api/a").status == 503)
        #expect(await client.learnedLimit(for: "api/a") == nil)
        clock.advance(by: .seconds(1))
        #expect(await client.limiter.availability("api/a", permits: 100).isGranted, "the rule's burst of 100")
    }
}
