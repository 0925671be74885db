import RateLimitActor
import RateLimitClient
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import RateLimitTestSupport
import Testing

// HTTP-12: one reply never locks an endpoint out; HTTP-9: 429s that arrive together are one
// signal. On a manual clock, against scripted replies.

private let hour = Duration.seconds(3_600)
/// The wall clock of `scriptedClient`.
private let wallClock: Int64 = 1_700_000_000

@Suite("The client against hostile replies (Spec/HTTP.md HTTP-12, HTTP-9)", .patience(.seconds(60)))
struct HostileServerTests {
    /// Sends "a", which meets `reply` and stops (no retry waits past 60 s), then "b", which waits
    /// in the endpoint's queue; returns when "b" was sent, on the manual clock.
    private func recovery(after reply: Reply) async throws -> Duration {
        let (client, server, clock) = try scriptedClient([.success(reply), .success(Reply(200))])
        _ = try? await client.send("a", to: "api")
        let b = Task { try await client.send("b", to: "api").status }
        let deadline = await advanceToNextSleeper(clock)
        #expect(try await b.value == 200)
        #expect(await server.requests == ["a", "b"])
        return try #require(deadline)
    }

    @Test("HTTP-12 Retry-After: 99999999 holds the endpoint for the ceiling (one hour by default), not three years")
    func hugeRetryAfter() async throws {
        #expect(try await recovery(after: Reply(429, ["Retry-After": "99999999"])) == hour)
    }

    @Test("HTTP-12 a 200 carrying RateLimit r=0 with a reset 31 million years away holds the endpoint for the ceiling")
    func hugeReset() async throws {
        #expect(try await recovery(after: Reply(200, ["RateLimit": #""default";r=0;t=999999999999999"#])) == hour)
    }

    @Test(
        "HTTP-12 a Date of 1970 with a date-form Retry-After 5 s after the local clock is clock skew: the wait is 5 s")
    func skewedDate() async throws {
        let retryAt = HTTPDate(secondsSinceEpoch: wallClock + 5).description
        let reply = Reply(429, ["Date": "Thu, 01 Jan 1970 00:00:00 GMT", "Retry-After": retryAt])
        let (client, server, clock) = try scriptedClient([.success(reply), .success(Reply(200))])
        let a = Task { try await client.send("a", to: "api").status }
        #expect(await advanceToNextSleeper(clock) == .seconds(5), "the retry waits 5 s, not 56 years")
        #expect(try await a.value == 200)
        #expect(await server.sentAt == [.zero, .seconds(5)])
        let feedback = ServerFeedback(
            status: 429, fields: reply.fields, receivedAt: HTTPDate(secondsSinceEpoch: wallClock))
        #expect(feedback.reference == HTTPDate(secondsSinceEpoch: wallClock))
        #expect(feedback.diagnostics.contains { $0.field == "Date" && $0.problem.contains("clock skew") })
    }

    @Test("HTTP-12 a ceiling of the client's choosing bounds every server wait")
    func chosenCeiling() async throws {
        let (registry, clock) = try concurrencyRegistry()
        let server = ScriptedServer(
            [.success(Reply(429, ["Retry-After": "86400"])), .success(Reply(200))], clock: clock)
        let client = RateLimitedClient(
            limiter: registry, serverQuota: try ServerQuota(maximumWait: .seconds(30), longestWait: .seconds(30)),
            seed: 1,
            wallClock: { HTTPDate(secondsSinceEpoch: wallClock) },
            operation: { request in try await server.answer(request) })
        let a = Task { try await client.send("a", to: "api").status }
        #expect(
            await advanceToNextSleeper(clock) == .seconds(30), "the retry waits the ceiling, within the policy's 60 s")
        #expect(try await a.value == 200)
    }

    @Test(
        "HTTP-12 resuming the endpoint's key on the limiter resumes it: the client forgets the server's wait instead of holding it again"
    )
    func resumeMeansResume() async throws {
        let (client, server, _) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "99999999"])), .success(Reply(200))], rule: .reject)
        _ = try? await client.send("a", to: "api")
        do throws(RateLimitClientError) {
            _ = try await client.send("b", to: "api")
            Issue.record("b must be refused while the server's wait holds the endpoint")
        } catch {
            #expect(error.retryAfter == hour, "the refusal carries the server's wait, at its ceiling: \(error)")
        }
        await client.limiter.resume("api")
        #expect(try await client.send("c", to: "api").status == 200)
        #expect(await server.requests == ["a", "c"])
        #expect(await client.serverQuota(for: "api")?.wait(at: .origin) == nil)
    }

    @Test(
        "HTTP-12 resuming the key releases a request already queued behind the client's hold, and serverQuota(for:) shows it at once"
    )
    func resumeReleasesTheQueue() async throws {
        let noRetries = try Backoff(maximumRetries: 0, base: .seconds(1), cap: .seconds(1))
        let (client, server, _) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "600"])), .success(Reply(200))], backoff: noRetries)
        _ = try? await client.send("a", to: "api")
        let b = Task { try await client.send("b", to: "api").status }
        #expect(await eventually { await client.limiter.waitingCount == 1 }, "b waits behind the hold")
        await client.limiter.resume("api")
        #expect(await client.serverQuota(for: "api")?.wait(at: .origin) == nil, "resumed: nothing held any more")
        #expect(try await b.value == 200)
        #expect(await server.requests == ["a", "b"])
        #expect(await client.limiter.quota(of: "api")?.state == .accepting, "the client did not hold the key again")
    }

    @Test(
        "HTTP-12 forgetServerState(for:) as soon as the client reports a server wait still lifts the hold, which was on its way"
    )
    func forgetWhileHolding() async throws {
        let noRetries = try Backoff(maximumRetries: 0, base: .seconds(1), cap: .seconds(1))
        let (client, server, _) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "600"])), .success(Reply(200))], rule: .reject, backoff: noRetries)
        let events = await client.events()
        let watcher = Task {
            for await event in events {
                if case .serverWait = event {
                    await client.forgetServerState(for: "api")
                    return
                }
            }
        }
        _ = try? await client.send("a", to: "api")
        await watcher.value
        #expect(await client.limiter.quota(of: "api")?.state == .accepting)
        #expect(try await client.send("b", to: "api").status == 200)
        #expect(await server.requests == ["a", "b"])
    }

    @Test("HTTP-12 a silent 429 that stops the retries fails with the wait the client holds the endpoint for")
    func silentStopCarriesTheWait() async throws {
        let noRetries = try Backoff(maximumRetries: 0, base: .seconds(1), cap: .seconds(1))
        let (client, _, _) = try scriptedClient([.success(Reply(429))], rule: .reject, backoff: noRetries)
        do throws(RateLimitClientError) {
            _ = try await client.send("a", to: "api")
            Issue.record("the 429 must fail the request")
        } catch {
            #expect(error.retryAfter == .seconds(1), "\(error)")
        }
    }

    @Test("HTTP-12 forgetServerState(for:) clears what the client learned of an endpoint and lifts its hold")
    func forgetServerState() async throws {
        let (client, server, _) = try scriptedClient(
            [.success(Reply(200, ["RateLimit": #""p";r=0;t=600"#])), .success(Reply(200))], rule: .reject)
        #expect(try await client.send("a", to: "api").status == 200)
        #expect(await client.serverQuota(for: "api")?.budget?.remaining == 0)
        await client.forgetServerState(for: "api")
        #expect(await client.serverQuota(for: "api")?.budget == nil)
        #expect(try await client.send("b", to: "api").status == 200)
        #expect(await server.requests == ["a", "b"])
    }

    @Test(
        "HTTP-10 send with any permit count never traps: negative is invalid, more than the limit never allowed, both typed",
        arguments: [Int64.min, -1, 0, 1, 100, 101, Int64.max])
    func extremePermits(_ permits: Int64) async throws {
        let (client, server, _) = try scriptedClient([.success(Reply(200))], rule: .reject)
        do throws(RateLimitClientError) {
            let reply = try await client.send("a", to: "api", permits: permits)
            #expect((0...100).contains(permits), "\(permits) permits were sent: \(reply)")
        } catch {
            switch (permits, error) {
            case (..<0, .limited("api", .invalid(let problem))): #expect(problem.field == "permits")
            case (101..., .limited("api", .neverAllowed)): break
            default: Issue.record("\(permits) permits: \(error)")
            }
            #expect(await server.requests.isEmpty)
        }
    }

    @Test("HTTP-12 error.retryAfter reads the same where the error is any Error, as from a throwing task group")
    func retryAfterFromTaskGroup() async throws {
        let noRetries = try Backoff(maximumRetries: 0, base: .seconds(1), cap: .seconds(1))
        let (client, _, _) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "5"]))], rule: .reject, backoff: noRetries)
        do {
            try await withThrowingTaskGroup(of: Reply.self) { group in
                group.addTask { try await client.send("a", to: "api") }
                for try await _ in group {}
            }
            Issue.record("the 429 must fail the request")
        } catch {
            #expect(error.retryAfter == .seconds(5), "\(error)")
        }
        let acquire: any Error = RateLimitAcquireError.rejected(.limited(retryAfterNanoseconds: 7))
        #expect(acquire.retryAfter == .nanoseconds(7))
        #expect((NetworkDown() as any Error).retryAfter == nil)
    }

    @Test(
        "HTTP-9 429s naming no wait, to requests in flight together, are one signal: the endpoint waits 1 s, not 1, 2, 4 then 8"
    )
    func concurrentSilentRejections() async throws {
        let (registry, clock) = try concurrencyRegistry()
        let gate = Gate()
        let noRetries = try RetryPolicy(backoff: try Backoff(maximumRetries: 0, base: .seconds(1), cap: .seconds(1)))
        let client = RateLimitedClient(
            limiter: registry, retryPolicy: noRetries, seed: 1, wallClock: { HTTPDate(secondsSinceEpoch: wallClock) },
            operation: { (request: String) in await gate.answer(request) })
        let requests = (0..<4).map { index in Task { try? await client.send("r\(index)", to: "api") } }
        #expect(await eventually { await gate.waiting == 4 }, "the four requests are in flight together")
        await gate.open(Reply(429))
        for request in requests { _ = await request.value }
        let quota = try #require(await client.serverQuota(for: "api"))
        #expect(quota.blockedUntil == RateLimitInstant.origin.advanced(byNanoseconds: 1_000_000_000), "one signal: 1 s")
        #expect(quota.silentRejections == 1)
        // A request sent after that signal that meets a silent 429 is the next signal: 2 s.
        let next = Task { try? await client.send("r4", to: "api") }
        await advance(clock, to: .seconds(1))
        #expect(await eventually { await gate.waiting == 1 })
        await gate.open(Reply(429))
        _ = await next.value
        #expect(
            await client.serverQuota(for: "api")?.blockedUntil
                == RateLimitInstant.origin.advanced(byNanoseconds: 3_000_000_000))
    }

    @Test(
        "HTTP-9 the quota alone: four silent 429s to requests sent in one epoch wait 1 s; sent after each other, 1, 2, 4, 8 s"
    )
    func silentSignals() throws {
        let now = RateLimitInstant.origin
        let silent = ServerFeedback(
            status: 429, fields: HTTPFields([]), receivedAt: HTTPDate(secondsSinceEpoch: wallClock))
        var together = ServerQuota.standard
        for _ in 0..<4 { together.record(silent, at: now, sentInEpoch: 0) }
        #expect(together.wait(at: now) == 1_000_000_000)
        var inARow = ServerQuota.standard
        var waits: [Int64] = []
        for _ in 0..<4 {
            let epoch = inARow.rejectionEpoch
            inARow.record(silent, at: now, sentInEpoch: epoch)
            waits.append(inARow.wait(at: now) ?? 0)
        }
        #expect(waits == [1, 2, 4, 8].map { $0 * 1_000_000_000 })
    }
}

/// A registry on a manual clock whose one endpoint, "api", lets 10 requests be in flight (and
/// queues 10 more): the server's replies, not the client's limit, decide these tests.
private func concurrencyRegistry() throws -> (ActorRateLimitRegistry<AnyRateLimitStrategy, ManualClock>, ManualClock) {
    let clock = ManualClock()
    let rule = try RateLimitRule(
        .exact("api"), AnyRateLimitStrategy.concurrency(ConcurrencyLimiter(limit: 10)), overflow: .queue(limit: 10))
    return (try ActorRateLimitRegistry(rules: [rule], clock: clock), clock)
}

/// An operation whose replies wait until the test opens the gate: requests in flight together.
actor Gate {
    private var waiters: [CheckedContinuation<Reply, Never>] = []
    var waiting: Int { waiters.count }

    func answer(_ request: String) async -> Reply {
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Answers every request waiting with `reply`.
    func open(_ reply: Reply) {
        for waiter in waiters { waiter.resume(returning: reply) }
        waiters.removeAll()
    }
}
