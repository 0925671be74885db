import RateLimitActor
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import Testing

@testable import RateLimitClient

// What the client remembers of each server is bounded (Spec/HTTP.md HTTP-9, HTTP-12): an
// endpoint's quota, hold and the bookkeeping of throttles on their way to the registry last only
// while they matter. On a manual clock, against scripted replies.

@Suite("The client's memory of servers (Spec/HTTP.md HTTP-9, HTTP-12)", .patience(.seconds(60)))
struct ServerStateMemoryTests {
    @Test(
        "HTTP-12 over 500 endpoints each held by a Retry-After and then forgotten by the app, the client keeps nothing of them"
    )
    func forgottenHoldsLeaveNothing() async throws {
        let (client, server, _) = try heldClient(replies: 500)
        for index in 0..<500 {
            let endpoint = "api/\(index)"
            do {
                _ = try await client.send(endpoint, to: endpoint)
                Issue.record("\(endpoint) was answered")
            } catch {
                guard case .serverLimited = error else {
                    Issue.record("\(endpoint): \(error), not the server's refusal")
                    break
                }
            }
            // The server's wait holds the endpoint's key until the app forgets it.
            #expect(await client.machine.holds.until(of: endpoint) != nil, "\(endpoint) is held")
            await client.forgetServerState(for: endpoint)
            let machine = await client.machine
            let (holds, landing, quotas, inFlight) = (
                machine.holds.count, machine.holds.inFlight, machine.quotas.count, machine.inFlight.count
            )
            #expect(holds == 0 && landing == 0 && inFlight == 0, "after \(endpoint)")
            #expect(quotas == 0, "after \(endpoint): \(quotas) quotas")
        }
        #expect(await server.requests.count == 500)
    }

    @Test(
        "HTTP-9 HTTP-12 over 3,000 endpoints each held 5 s by a Retry-After, the client remembers at most about twice the endpoints whose wait has not ended"
    )
    func expiredWaitsAreForgotten() async throws {
        let (client, _, clock) = try heldClient(replies: 3_000)
        var most = 0
        for index in 0..<3_000 {
            _ = try? await client.send("api/\(index)", to: "api/\(index)")
            // 100 new endpoints a second: the waits of the last 5 seconds, 500 endpoints, still
            // matter at any time.
            if index % 100 == 99 { clock.advance(by: .seconds(1)) }
            most = await max(most, client.machine.quotas.count, client.machine.holds.count)
            #expect(await client.machine.quotas["api/\(index)"] != nil, "a wait that has not ended is remembered")
        }
        // A sweep runs when what is remembered has doubled since the last one: never more than
        // twice what mattered then, where without it all 3,000 would be.
        #expect(most <= 2 * 500 + 100, "at most \(most) endpoints remembered")
    }

    @Test(
        "HTTP-12 a request cancelled while its attempt is in flight leaves the endpoint counted idle, so the sweep can forget it"
    )
    func cancelledAttemptLeavesNothingInFlight() async throws {
        let clock = ManualClock()
        let rule = try RateLimitRule(.prefix("api/"), AnyRateLimitStrategy.concurrency(ConcurrencyLimiter(limit: 10)))
        let client = RateLimitedClient(
            limiter: try ActorRateLimitRegistry(rules: [rule], clock: clock), retryPolicy: try RetryPolicy(), seed: 1,
            wallClock: { HTTPDate(secondsSinceEpoch: 1_700_000_000) },
            operation: { (_: String) async throws -> Reply in
                // The attempt lasts until the task is cancelled, and then fails.
                try await clock.sleep(until: clock.now.advanced(by: .seconds(3_600)))
                return Reply(200)
            })
        let request = Task { () async throws(RateLimitClientError) -> Reply in
            try await client.send("api/a", to: "api/a")
        }
        while await client.machine.inFlight["api/a"] != 1 { await Task.yield() }
        request.cancel()
        let outcome = await request.result
        guard case .failure(let error) = outcome, case .cancelled = error as? RateLimitClientError else {
            Issue.record("the request ended \(outcome), not cancelled")
            return
        }
        #expect(await client.machine.inFlight.isEmpty, "the cancelled attempt is no longer in flight")
    }
}

/// A client on a manual clock for endpoints `api/…` (a concurrency limit each, queued), whose
/// scripted server refuses `replies` requests with `Retry-After: 5`; the retry policy waits at
/// most 1 s, so each request stops at its 429 and the server's wait holds its endpoint.
private func heldClient(replies: Int) throws -> (
    RateLimitedClient<String, Reply, AnyRateLimitStrategy, ManualClock>, ScriptedServer, ManualClock
) {
    let clock = ManualClock()
    let rule = try RateLimitRule(
        .prefix("api/"), AnyRateLimitStrategy.concurrency(ConcurrencyLimiter(limit: 10)), overflow: .queue(limit: 10))
    let registry = try ActorRateLimitRegistry(rules: [rule], clock: clock)
    let server = ScriptedServer(
        Array(repeating: .success(Reply(429, ["Retry-After": "5"])), count: replies), clock: clock)
    let client = RateLimitedClient(
        limiter: registry, retryPolicy: try RetryPolicy(maximumWait: .seconds(1)), seed: 1,
        wallClock: { HTTPDate(secondsSinceEpoch: 1_700_000_000) },
        operation: { request in try await server.answer(request) })
    return (client, server, clock)
}
