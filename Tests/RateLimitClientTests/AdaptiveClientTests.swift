import RateLimitActor
import RateLimitClient
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import Testing

// The client learning its endpoints' limits on a manual clock (Spec/HTTP.md HTTP-13), against
// scripted replies: what each attempt feeds the machines, what the registry's key enforces after,
// what is reported. The real server is in AdaptiveServerIntegrationTests.

private let second: Int64 = 1_000_000_000

/// The `limitChanged` events of `log`.
private func changes(_ log: [ClientEvent]) -> [(LearnedLimit, RateLimitInstant)] {
    log.compactMap { if case .limitChanged(_, let limit, let at) = $0 { (limit, at) } else { nil } }
}

/// The client's events up to its first `retrying`.
private func eventsUntilRetrying(_ events: inout AsyncStream<ClientEvent>.Iterator) async -> [ClientEvent] {
    var log: [ClientEvent] = []
    while let event = await events.next() {
        log.append(event)
        if case .retrying = event { break }
    }
    return log
}

@Suite("The client learning the server's limit on a manual clock (Spec/HTTP.md HTTP-13)", .patience(.seconds(60)))
struct AdaptiveClientTests {
    @Test(
        "HTTP-13 a 429 lowers the learned rate and burst, the endpoint's key enforces them, an event reports it, and forgetting restores the rule's limit"
    )
    func rejectionLowersTheRate() async throws {
        // The rule: 100 per second in bursts of 100 (scriptedClient's default); the standard rate.
        let (client, server, clock) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "1"])), .success(Reply(200))], adaptive: .standard)
        var events = await client.events().makeAsyncIterator()
        let request = Task { try await client.send("a", to: "api").status }
        let log = await eventsUntilRetrying(&events)
        // The first refusal, no round served: the gentle step, ⌊100·0.9⌋ = 90; 0 served ≤ the
        // burst 100: the burst ⌊0·0.5⌋ → 1.
        let learned = try #require(changes(log).first)
        #expect(learned.0.rate == AdaptiveRate.Limit(rate: 90, burst: 1, periodNanoseconds: second))
        #expect(learned.0.concurrency == nil && learned.0.change == .decreased && learned.1 == .origin)
        #expect(await client.learnedLimit(for: "api") == learned.0)
        // The key enforces a burst of 1 now: 2 at once are never allowed.
        #expect(await client.limiter.availability("api", permits: 2) == .rejected(.neverAllowed))
        await advance(clock, to: .seconds(1))
        #expect(try await request.value == 200)
        #expect(await server.sentAt == [.zero, .seconds(1)])
        await client.forgetLearnedLimit(for: "api")
        #expect(await client.learnedLimit(for: "api") == nil)
        // The rule's bucket again, keeping the tokens it had (TB-10): 2 are allowed once refilled.
        clock.advance(by: .seconds(1))
        #expect(await client.limiter.availability("api", permits: 2).isGranted, "the rule's burst of 100 again")
    }

    @Test("HTTP-13 a stated RateLimit-Policy is adopted at the first response and reported once")
    func statedRateAdopted() async throws {
        let stated: HTTPFields = ["RateLimit-Policy": #""hour";q=3600;w=3600, "second";q=30;w=1"#]
        let (client, _, _) = try scriptedClient([.success(Reply(200, stated))], adaptive: .standard)
        var events = await client.events().makeAsyncIterator()
        _ = try await client.send("a", to: "api")
        _ = try await client.send("b", to: "api")
        var log: [ClientEvent] = []
        while log.count < 5, let event = await events.next() { log.append(event) }
        // 3600 per hour is 1 per second, the fewer: ⌊3600·1 s / 3600 s⌋ = 1 per second.
        let learned = changes(log)
        #expect(learned.count == 1, "\(log)")
        #expect(learned.first?.0.rate == AdaptiveRate.Limit(rate: 1, burst: 100, periodNanoseconds: second))
        #expect(learned.first?.0.change == .adopted)
    }

    @Test("HTTP-13 an attempt with no response is a drop for the concurrency, which the key's limiter then enforces")
    func failureIsADrop() async throws {
        let (client, _, clock) = try scriptedClient(
            [.failure(NetworkDown()), .success(Reply(200))], strategy: .concurrency(try ConcurrencyLimiter(limit: 4)),
            adaptive: .standard)
        var events = await client.events().makeAsyncIterator()
        let request = Task { try await client.send("a", to: "api").status }
        let log = await eventsUntilRetrying(&events)
        // ⌊4·0.9⌋ = 3; the concurrency machine only: the limiter enforces no rate.
        let learned = try #require(changes(log).first)
        #expect(learned.0.concurrency == 3 && learned.0.rate == nil && learned.0.change == .decreased)
        #expect(await client.limiter.availability("api", permits: 4) == .rejected(.neverAllowed))
        _ = await advanceToNextSleeper(clock)
        #expect(try await request.value == 200)
    }

    @Test("HTTP-13 without an adaptive policy, or for an endpoint it does not cover, nothing is learned")
    func offByDefault() async throws {
        let (fixed, _, _) = try scriptedClient([.success(Reply(404))])
        _ = try await fixed.send("a", to: "api")
        #expect(await fixed.learnedLimit(for: "api") == nil)
        let elsewhere = AdaptivePolicy(rate: .standard, concurrency: .off, endpoints: .prefix("other"))
        let (uncovered, _, _) = try scriptedClient([.success(Reply(404))], adaptive: elsewhere)
        _ = try await uncovered.send("a", to: "api")
        #expect(await uncovered.learnedLimit(for: "api") == nil)
        let (covered, _, _) = try scriptedClient([.success(Reply(404))], adaptive: .standard)
        _ = try await covered.send("a", to: "api")
        #expect(
            await covered.learnedLimit(for: "api")?.rate
                == AdaptiveRate.Limit(rate: 100, burst: 100, periodNanoseconds: second))
    }

    @Test("HTTP-13 a custom machine applies its own start to the key before the first request")
    func customStart() async throws {
        let machine = try AdaptiveRate(
            period: .seconds(1), maximumRate: 10, initialRate: 2, minimumRate: 1, burst: 1, startIncrease: 1,
            increase: 1, coolDown: .seconds(1))
        let (client, _, _) = try scriptedClient(
            [.success(Reply(200))], adaptive: AdaptivePolicy(rate: .custom(machine), concurrency: .off))
        _ = try await client.send("a", to: "api")
        #expect(
            await client.limiter.availability("api", permits: 1)
                == .rejected(.limited(retryAfterNanoseconds: 500_000_000)))
    }
}
