import RateLimitActor
import RateLimitClient
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import RateLimitTestSupport
import Testing

// The client's sequencing on a manual clock (Spec/HTTP.md HTTP-11), against scripted replies:
// exact instants, no network. The real server is in ServerIntegrationTests.

private let second = Duration.seconds(1)

@Suite("The rate-limited client on a manual clock (Spec/HTTP.md HTTP-11)", .patience(.seconds(60)))
struct ClientTests {
    @Test(
        "HTTP-11 a 429 with Retry-After holds the endpoint: the retry and every other request wait until it expires, then go"
    )
    func retryAfterHoldsTheEndpoint() async throws {
        let (client, server, clock) = try scriptedClient([
            .success(Reply(429, ["Retry-After": "2"])), .success(Reply(200)),
        ])
        var events = await client.events().makeAsyncIterator()
        let first = Task { try await client.send("a", to: "api").status }
        var log: [ClientEvent] = []
        while let event = await events.next() {
            log.append(event)
            if case .retrying = event { break }
        }
        let at = { (seconds: Int64) in RateLimitInstant.origin.advanced(byNanoseconds: seconds * 1_000_000_000)! }
        #expect(
            log == [
                .sent(endpoint: "api", attempt: 1, at: at(0)), .received(endpoint: "api", status: 429, at: at(0)),
                .serverWait(endpoint: "api", until: at(2), at: at(0)),
                .retrying(endpoint: "api", afterNanoseconds: 2_000_000_000, at: at(0)),
            ])
        let second = Task { try await client.send("b", to: "api").status }
        #expect(
            await eventually { await client.limiter.waitingCount == 2 }, "a's retry and b wait in the endpoint's queue")
        await advance(clock, to: .seconds(2))
        #expect(try await first.value == 200)
        #expect(try await second.value == 200)
        #expect(await server.sentAt == [.zero, .seconds(2), .seconds(2)])
        var after: [ClientEvent] = []
        while after.count < 6, let event = await events.next() { after.append(event) }
        let expected: [ClientEvent] = [
            // a's retry, then b, hold the endpoint before they queue.
            .serverWait(endpoint: "api", until: at(2), at: at(0)),
            .serverWait(endpoint: "api", until: at(2), at: at(0)),
            .sent(endpoint: "api", attempt: 1, at: at(2)), .sent(endpoint: "api", attempt: 2, at: at(2)),
            .received(endpoint: "api", status: 200, at: at(2)), .received(endpoint: "api", status: 200, at: at(2)),
        ]
        #expect(after.sorted { "\($0)" < "\($1)" } == expected.sorted { "\($0)" < "\($1)" }, "\(after)")
    }

    @Test(
        "HTTP-11 under a reject rule a request during the server's wait is refused with the exact time left, and the fallback answers it"
    )
    func rejectRuleAndFallback() async throws {
        let noRetries = try Backoff(maximumRetries: 0, base: second, cap: second)
        let (client, server, clock) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "5"])), .success(Reply(200))], rule: .reject, backoff: noRetries)
        do throws(RateLimitClientError) {
            _ = try await client.send("a", to: "api")
            Issue.record("a 429 with no retries left must not be delivered as a success")
        } catch {
            guard case .serverLimited("api", 429, 5_000_000_000) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(error.retryAfter == .seconds(5))
        }
        clock.advance(by: .seconds(1))
        do throws(RateLimitClientError) {
            _ = try await client.send("b", to: "api")
            Issue.record("b must be refused while the server's wait holds the endpoint")
        } catch {
            guard case .limited("api", .limited(let wait)) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(wait == 4_000_000_000, "the exact time left of the server's 5 s")
            #expect(error.retryAfter == .seconds(4))
        }
        let cached = try await client.send("c", to: "api") { reason in
            guard case .limited = reason else { return nil }
            return Reply(200, ["X-Cache": "hit"])
        }
        #expect(cached == Reply(200, ["X-Cache": "hit"]))
        #expect(await server.requests == ["a"], "nothing was sent while the endpoint was held")
        clock.advance(by: .seconds(4))
        #expect(try await client.send("d", to: "api").status == 200)
    }

    @Test(
        "HTTP-11 network failures are retried after the seeded backoff's waits; when the retries run out, the error or the fallback"
    )
    func networkFailuresBackOff() async throws {
        let backoff = try Backoff(maximumRetries: 2, base: second, cap: .seconds(10), jitter: .full)
        var expected = SeededGenerator(seed: 42)
        let first = backoff.delay(retry: 0, previous: nil, using: &expected)
        let second = backoff.delay(retry: 1, previous: first, using: &expected)
        let (client, server, clock) = try scriptedClient([.failure(NetworkDown())], backoff: backoff, seed: 42)
        let sending = Task { () -> String in
            do throws(RateLimitClientError) {
                _ = try await client.send("a", to: "api")
                return "delivered"
            } catch {
                guard case .transport("api", let cause) = error, cause is NetworkDown else { return "\(error)" }
                return "transport"
            }
        }
        await advance(clock, to: .nanoseconds(first))
        await advance(clock, to: .nanoseconds(first + second))
        #expect(await sending.value == "transport")
        #expect(
            await server.sentAt == [.zero, .nanoseconds(first), .nanoseconds(first + second)],
            "waits \(first), \(second) ns for seed 42")
        let fallback = Task { try await client.send("b", to: "api") { _ in Reply(200, ["X-Cache": "hit"]) } }
        #expect(await advanceToNextSleeper(clock) != nil)
        #expect(await advanceToNextSleeper(clock) != nil)
        #expect(
            try await fallback.value.fields.combined("X-Cache") == "hit",
            "the fallback answers when the retries run out")
        #expect(await server.sentAt.count == 6)
    }

    @Test(
        "HTTP-11 another 4xx is delivered at once, never retried; a 5xx is retried and the last one delivered when the retries run out"
    )
    func classification() async throws {
        let oneRetry = try Backoff(maximumRetries: 1, base: second, cap: second, jitter: .none)
        let (client, server, clock) = try scriptedClient(
            [.success(Reply(404)), .success(Reply(500)), .success(Reply(500))], backoff: oneRetry)
        #expect(try await client.send("a", to: "api").status == 404)
        #expect(await server.sentAt == [.zero])
        let failing = Task { try await client.send("b", to: "api").status }
        await advance(clock, to: .seconds(1))
        #expect(try await failing.value == 500)
        #expect(await server.sentAt == [.zero, .zero, .seconds(1)])
    }

    @Test("HTTP-11 cancelling stops a retry's wait and a queued request's wait at once, with nothing more sent")
    func cancellation() async throws {
        let (client, server, clock) = try scriptedClient([.success(Reply(429, ["Retry-After": "60"]))])
        let retrying = Task { () -> String in
            do throws(RateLimitClientError) { return "\(try await client.send("a", to: "api"))" } catch {
                return "\(error)"
            }
        }
        #expect(
            await eventually {
                let held = await client.serverQuota(for: "api")?.blockedUntil != nil
                return held && clock.sleeperCount >= 1
            })
        let queued = Task { () -> String in
            do throws(RateLimitClientError) { return "\(try await client.send("b", to: "api"))" } catch {
                return "\(error)"
            }
        }
        #expect(await eventually { await client.limiter.waitingCount == 1 })
        retrying.cancel()
        queued.cancel()
        #expect(await retrying.value == "cancelled")
        #expect(await queued.value == "cancelled")
        #expect(await server.requests == ["a"])
    }

    @Test("HTTP-11 a reported quota is counted down as requests go out; once spent, the endpoint waits for its reset")
    func reportedQuotaCountsDown() async throws {
        let (client, server, clock) = try scriptedClient([
            .success(Reply(200, ["RateLimit": #""p";r=1;t=5"#])), .success(Reply(200)),
        ])
        #expect(try await client.send("a", to: "api").status == 200)
        #expect(try await client.send("b", to: "api").status == 200, "one left")
        let third = Task { try await client.send("c", to: "api").status }
        await advance(clock, to: .seconds(5))
        #expect(try await third.value == 200)
        #expect(await server.sentAt == [.zero, .zero, .seconds(5)])
    }

    @Test("HTTP-11 a 429 naming no wait waits the stated 1 s, then 2 s for the next in a row")
    func silentRejections() async throws {
        let backoff = try Backoff(maximumRetries: 3, base: .milliseconds(10), cap: .milliseconds(10), jitter: .none)
        let (client, server, clock) = try scriptedClient(
            [.success(Reply(429)), .success(Reply(429)), .success(Reply(200))], backoff: backoff)
        let sending = Task { try await client.send("a", to: "api").status }
        // The backoff (10 ms) ends inside the endpoint's hold: the retry waits in the queue for its end.
        await advance(clock, to: .seconds(1))
        await advance(clock, to: .seconds(3))
        #expect(try await sending.value == 200)
        #expect(await server.sentAt == [.zero, .seconds(1), .seconds(3)])
    }

    @Test("HTTP-11 a concurrency limit's permit is given back after each attempt, a retry's included")
    func concurrencyPermitsComeBack() async throws {
        let (client, server, clock) = try scriptedClient(
            [.success(Reply(503, ["Retry-After": "1"])), .success(Reply(200)), .success(Reply(200))], rule: .reject,
            strategy: .concurrency(try ConcurrencyLimiter(limit: 1)))
        let sending = Task { try await client.send("a", to: "api").status }
        await advance(clock, to: .seconds(1))
        #expect(try await sending.value == 200)
        #expect(try await client.send("b", to: "api").status == 200)
        #expect(await client.limiter.quota(of: "api")?.remaining == 1, "nothing held after the requests")
        #expect(await server.sentAt == [.zero, .seconds(1), .seconds(1)])
    }

    @Test("HTTP-11 a queued request cancelled before its grant is not sent, even when the grant comes first")
    func cancelledWhileQueuedIsNotSent() async throws {
        let (client, server, _) = try scriptedClient([.success(Reply(200))])
        await client.limiter.throttle("api", until: RateLimitInstant.origin.advanced(byNanoseconds: 60_000_000_000)!)
        let queued = Task { () -> String in
            do throws(RateLimitClientError) { return "\(try await client.send("b", to: "api").status)" } catch {
                return "\(error)"
            }
        }
        #expect(await eventually { await client.limiter.waitingCount == 1 })
        queued.cancel()
        await client.limiter.resume("api")
        #expect(await queued.value == "cancelled")
        #expect(await server.requests.isEmpty, "nothing is sent for a cancelled request")
        #expect(await client.limiter.quota(of: "api")?.statistics.admitted ?? 0 <= 1)
    }

    @Test(
        "HTTP-11 a critical request, which the registry lets through, sleeps the server's wait out itself; cancelling ends the sleep"
    )
    func criticalSleepsOut() async throws {
        let (client, server, clock) = try scriptedClient([
            .success(Reply(429, ["Retry-After": "10"])), .success(Reply(200)),
        ])
        let first = Task { try await client.send("a", to: "api").status }
        #expect(await eventually { await client.serverQuota(for: "api")?.blockedUntil != nil })
        let critical = Task { try await client.send("c", to: "api", priority: .critical).status }
        let cancelled = Task { () -> String in
            do throws(RateLimitClientError) {
                return "\(try await client.send("d", to: "api", priority: .critical).status)"
            } catch { return "\(error)" }
        }
        #expect(
            await eventually { clock.sleeperCount >= 3 },
            "a's retry, c and d sleep until 10 s (and the registry's timer)")
        cancelled.cancel()
        #expect(await cancelled.value == "cancelled")
        await advance(clock, to: .seconds(10))
        #expect(try await first.value == 200)
        #expect(try await critical.value == 200)
        #expect(await server.sentAt == [.zero, .seconds(10), .seconds(10)], "nothing before the server's 10 s")
        #expect(await server.requests.sorted() == ["a", "a", "c"])
    }

    @Test("HTTP-11 cancelling and closing end a request without asking the fallback")
    func noFallbackForCancelOrClose() async throws {
        let (client, server, _) = try scriptedClient([.success(Reply(200))])
        await client.limiter.close()
        let asked = Counter()
        do throws(RateLimitClientError) {
            _ = try await client.send("a", to: "api") { _ in
                await asked.increment()
                return Reply(200)
            }
            Issue.record("a closed limiter must not deliver")
        } catch {
            guard case .closed = error else {
                Issue.record("got \(error)")
                return
            }
        }
        #expect(await asked.value == 0)
        #expect(await server.requests.isEmpty)
    }

    @Test("HTTP-11 a 503 that named a wait is serverLimited when the retries run out; one that named none is delivered")
    func finalServiceUnavailable() async throws {
        let noRetries = try Backoff(maximumRetries: 0, base: second, cap: second)
        let (named, _, _) = try scriptedClient([.success(Reply(503, ["Retry-After": "3"]))], backoff: noRetries)
        do throws(RateLimitClientError) {
            _ = try await named.send("a", to: "api")
            Issue.record("a 503 asking to wait must not be delivered when no retry is left")
        } catch {
            guard case .serverLimited("api", 503, 3_000_000_000) = error else {
                Issue.record("got \(error)")
                return
            }
        }
        let (silent, _, _) = try scriptedClient([.success(Reply(503))], backoff: noRetries)
        #expect(try await silent.send("a", to: "api").status == 503)
    }

    @Test(
        "HTTP-11 under a reject rule the server's wait and the retry end at the same instant: the retry is not refused by the throttle"
    )
    func rejectRuleRetryAtTheThrottlesEnd() async throws {
        let (client, server, clock) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "2"])), .success(Reply(200))], rule: .reject)
        var events = await client.events().makeAsyncIterator()
        let sending = Task { try await client.send("a", to: "api").status }
        var held: RateLimitInstant?
        while let event = await events.next() {
            if case .serverWait(_, let until, _) = event { held = until }
            if case .retrying = event { break }
        }
        let state = await client.limiter.quota(of: "api")?.state
        #expect(held != nil && state == .throttled(until: held!), "the key is throttled until the client's own instant")
        await advance(clock, to: .seconds(2))
        #expect(try await sending.value == 200)
        #expect(await server.sentAt == [.zero, .seconds(2)])
    }

    @Test(
        "HTTP-11 a server wait beyond the policy's maximum stops at once: serverLimited with that wait, and the fallback answers"
    )
    func hugeWaitStops() async throws {
        let (client, server, _) = try scriptedClient([.success(Reply(429, ["Retry-After": "99999999999999"]))])
        let reason = Box()
        let reply = try await client.send("a", to: "api") { error in
            await reason.set("\(error)")
            return Reply(200, ["X-Cache": "hit"])
        }
        #expect(reply.fields.combined("X-Cache") == "hit")
        let why = await reason.value
        #expect(why.hasPrefix("api: the server still refused (429)"), "\(why)")
        #expect(await server.sentAt == [.zero], "no retry waits out 3 million years")
    }

    @Test(
        "HTTP-11 WQ-3 a retry keeps its place: it waits out the server's wait in the endpoint's queue by its first arrival, before a request that came during the wait"
    )
    func retryKeepsItsPlace() async throws {
        // One request per second, bursts of 1: at each second exactly one request can go.
        let (client, server, clock) = try scriptedClient(
            [.success(Reply(429, ["Retry-After": "1"])), .success(Reply(200))],
            strategy: .tokenBucket(try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: second)))
        var events = await client.events().makeAsyncIterator()
        let first = Task { try await client.send("a", to: "api").status }
        while let event = await events.next() {
            if case .retrying = event { break }
        }
        clock.advance(by: .milliseconds(500))
        let second = Task { try await client.send("b", to: "api").status }
        // Both wait in the queue: a's retry (arrived at 0) ahead of b (arrived at 0.5 s).
        guard await eventually({ await client.limiter.waitingCount == 2 }) else {
            Issue.record("a's retry must wait in the queue, not asleep: \(await client.limiter.waitingCount) waiting")
            first.cancel()
            second.cancel()
            return
        }
        await advance(clock, to: .seconds(1))
        #expect(try await first.value == 200)
        await advance(clock, to: .seconds(2))
        #expect(try await second.value == 200)
        #expect(await server.requests == ["a", "a", "b"])
        #expect(await server.sentAt == [.zero, .seconds(1), .seconds(2)], "the token of 1 s went to a's retry")
    }

    @Test("HTTP-11 the client forgets an endpoint's server quota once nothing it said matters any more")
    func forgetsIdleQuotas() async throws {
        let (client, _, clock) = try scriptedClient([
            .success(Reply(200, ["RateLimit": #""p";r=5;t=2"#])), .success(Reply(200)),
        ])
        #expect(try await client.send("a", to: "api").status == 200)
        #expect(await client.serverQuota(for: "api")?.budget?.remaining == 5)
        clock.advance(by: .seconds(3))
        #expect(try await client.send("b", to: "api").status == 200)
        #expect(await client.serverQuota(for: "api") == nil)
    }
}

actor Counter {
    private(set) var value = 0
    func increment() { value += 1 }
}

actor Box {
    private(set) var value = ""
    func set(_ text: String) { value = text }
}
