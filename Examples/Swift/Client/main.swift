import Foundation
import RateLimitClient

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

let limits = try ActorRateLimitRegistry(rules: [
    // GitHub's REST API: 5,000 an hour; bursts of 10, queued (30 s at most).
    try RateLimitRule(
        .prefix("api.github.com"), try TokenBucket(capacity: 10, permitsPerPeriod: 5_000, period: .seconds(3_600)),
        overflow: .queue(limit: 100, timeout: .seconds(30)))
])
let client = URLSessionRateLimitedClient(limiter: limits, retryPolicy: .standard)

let request = URLRequest(url: URL(string: "https://api.github.com/repos/apple/swift/contents/README.md")!)
do {
    let reply = try await client.send(request, to: "api.github.com")
    print(reply.status, reply.data.count)
} catch {
    print(error, error.retryAfter.map { "try again in \($0)" } ?? "")
}

// In a task group the error is `any Error`; `retryAfter` reads the same there.
do {
    try await withThrowingTaskGroup(of: URLSessionResponse.self) { group in
        for page in 1...3 {
            let pageRequest = URLRequest(
                url: URL(string: "https://api.github.com/repos/apple/swift/issues?page=\(page)")!)
            group.addTask { try await client.send(pageRequest, to: "api.github.com") }
        }
        for try await reply in group { print(reply.status) }
    }
} catch {
    print(error, error.retryAfter.map { "try again in \($0)" } ?? "")
}
