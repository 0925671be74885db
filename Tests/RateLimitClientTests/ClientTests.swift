import RateLimitActor
import RateLimitClient
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import Testing

// The client's sequencing on a manual clock (Spec/HTTP.md HTTP-11), against scripted replies:
// exact instants, no network. The real server is in ServerIntegrationTests.

private let second = Duration.seconds(1)

@Suite("The rate-limited client on a manual clock (Spec/HTTP.md HTTP-11)", .timeLimit(.minutes(1)))
struct ClientTests {
    @Test("HTTP-11 a 429 with Retry-After holds the endpoint: the retry and every other request wait until it expires, then go")
    func retryAfterHoldsTheEndpoint() async throws {
        let (client, server, clock) = try scriptedClient([.success(Reply(429, ["Retry-After": "2"])), .success(Reply(200))])
        var events = await client.events().makeAsyncIterator()
        let first = Task { try await client.send("a", to: "api").status }
        var log: [ClientEvent] = []
        while let event = await events.next() {
            log.append(event)
            if case .retrying = event { break }
        }
        let at = { (seconds: Int64) in RateLimitInstant.origin.advanced(byNanoseconds: seconds * 1_000_000_000)! }
        #expect(log == [
            .sent(endpoint: "api", attempt: 1, at: at(0)), .received(endpoint: "api", status: 429, at: at(0)),
            .serverWait(endpoint: "api", until: at(2), at: at(0)), .retrying(endpoint: "api", afterNanoseconds: 2_000_000_000, at: at(0)),
        ])
        let second = Task { try await client.send("b", to: "api").status }
        #expect(await eventually { await client.limiter.waitingCount == 1 }, "b waits in the endpoint's queue")
        await advance(clock, to: .seconds(2))
        #expect(try await first.value == 200)
        #expect(try await second.value == 200)
        #expect(await server.sentAt == [.zero, .seconds(2), .seconds(2)])
        var after: [ClientEvent] = []
        while after.count < 4, let event = await events.next() { after.append(event) }
        let expected: [ClientEvent] = [
            .sent(endpoint: "api", attempt: 1, at: at(2)), .sent(endpoint: "api", attempt: 2, at: at(2)),
            .received(endpoint: "api", status: 200, at: at(2)), .received(endpoint: "api", status: 200, at: at(2)),
        ]
        #expect(after.sorted { "\($0)" < "\($1)" } == expected.sorted { "\($0)" < "\($1)" }, "\(after)")
    }

    @Test("HTTP-11 under a reject rule a request during the server's wait is refused with the exact time left, and the fallback answers it")
    func rejectRuleAndFallback() async throws {
        let noRetries = try Backoff(maximumRetries: 0, base: second, cap: second)
        let (client, server, clock) = try scriptedClient([.success(Reply(429, ["Retry-After": "5"])), .success(Reply(200))], rule: .reject, backoff: noRetries)
        do throws(RateLimitClientError) {
            _ = try await client.send("a", to: "api")
            Issue.record("a 429 with no retries left must not be delivered as a success")
        } catch {
            guard case .serverLimited("api", 429, 5_000_000_000) = error else { Issue.record("got \(error)"); return }
            #expect(error.retryAfter == .seconds(5))
        }
        clock.advance(by: .seconds(1))
        do throws(RateLimitClientError) {
            _ = try await client.send("b", to: "api")
            Issue.record("b must be refused while the server's wait holds the endpoint")
        } catch {
            guard case .limited("api", .limited(.rejected(let wait))) = error else { Issue.record("got \(error)"); return }
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

    @Test("HTTP-11 network failures are retried after the seeded backoff's waits; when the retries run out, the error or the fallback")
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
        #expect(await server.sentAt == [.zero, .nanoseconds(first), .nanoseconds(first + second)], "waits \(first), \(second) ns for seed 42")
        let fallback = Task { try await client.send("b", to: "api") { _ in Reply(200, ["X-Cache": "hit"]) } }
        #expect(await advanceToNextSleeper(clock) != nil)
        #expect(await advanceToNextSleeper(clock) != nil)
        #expect(try await fallback.value.fields.combined("X-Cache") == "hit", "the fallback answers when the retries run out")
        #expect(await server.sentAt.count == 6)
    }

    @Test("HTTP-11 another 4xx is delivered at once, never retried; a 5xx is retried and the last one delivered when the retries run out")
    func classification() async throws {
        let oneRetry = try Backoff(maximumRetries: 1, base: second, cap: second, jitter: .none)
        let (client, server, clock) = try scriptedClient([.success(Reply(404)), .success(Reply(500)), .success(Reply(500))], backoff: oneRetry)
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
            do throws(RateLimitClientError) { return "\(try await client.send("a", to: "api"))" } catch { return "\(error)" }
        }
        #expect(await eventually {
            let held = await client.serverQuota(for: "api")?.blockedUntil != nil
            return held && clock.sleeperCount >= 1
        })
        let queued = Task { () -> String in
            do throws(RateLimitClientError) { return "\(try await client.send("b", to: "api"))" } catch { return "\(error)" }
        }
        #expect(await eventually { await client.limiter.waitingCount == 1 })
        retrying.cancel()
        queued.cancel()
        #expect(await retrying.value == "cancelled")
        #expect(await queued.value == "cancelled")
        #expect(clock.now.offset == .zero, "no time passed")
        #expect(await server.requests == ["a"])
    }

    @Test("HTTP-11 a reported quota is counted down as requests go out; once spent, the endpoint waits for its reset")
    func reportedQuotaCountsDown() async throws {
        let (client, server, clock) = try scriptedClient([.success(Reply(200, ["RateLimit": #""p";r=1;t=5"#])), .success(Reply(200))])
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
        let (client, server, clock) = try scriptedClient([.success(Reply(429)), .success(Reply(429)), .success(Reply(200))], backoff: backoff)
        let sending = Task { try await client.send("a", to: "api").status }
        await advance(clock, to: .milliseconds(10))  // the backoff; the endpoint is still held until 1 s
        await advance(clock, to: .seconds(1))
        await advance(clock, to: .seconds(1) + .milliseconds(10))
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
}
