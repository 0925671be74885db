import Foundation
import RateLimitActor
import RateLimitClient
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The documentation's client example (RateLimitClient's article "Respecting the server"), compiled and run on a manual clock while the server's wait holds
// the endpoint: the request waits in the queue, times out, and the fallback answers (no network).

@Suite("The documented client wrapping a URLSession request (Spec/HTTP.md HTTP-11)", .patience(.seconds(60)))
struct ReadmeExampleTests {
    @Test(
        "HTTP-11 the documented URLSession client waits its queue's 30 s, then the cached copy answers; without one, timedOut"
    )
    func readmeClient() async throws {
        let clock = ManualClock()
        let limits = try ActorRateLimitRegistry(
            rules: [
                try RateLimitRule(
                    .prefix("api.github.com"),
                    try TokenBucket(capacity: 10, permitsPerPeriod: 5_000, period: .seconds(3_600)),
                    overflow: .queue(limit: 100, timeout: .seconds(30)))
            ], clock: clock)
        let client = URLSessionRateLimitedClient(limiter: limits, retryPolicy: .standard)
        await limits.throttle("api.github.com", for: .seconds(100))  // as after a 429 with Retry-After: 100
        let request = URLRequest(url: URL(string: "https://api.github.com/repos/apple/swift/contents/README.md")!)
        let cached = Data("cached".utf8)
        let ok = try #require(
            HTTPURLResponse(
                url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["X-Cache": "hit"]))
        let withCache = Task {
            try await client.send(request, to: "api.github.com") { _ in URLSessionResponse(data: cached, response: ok) }
        }
        await advance(clock, to: .seconds(30))
        let reply = try await withCache.value
        #expect(reply.data == cached && reply.fields.combined("X-Cache") == "hit")
        let withoutCache = Task { () -> String in
            do throws(RateLimitClientError) {
                return "\(try await client.send(request, to: "api.github.com").status)"
            } catch { return "\(error)" }
        }
        await advance(clock, to: .seconds(60))
        #expect(await withoutCache.value == "api.github.com: timed out waiting for the client's limit")
    }
}
