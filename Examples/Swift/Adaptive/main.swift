import Foundation
import RateLimitClient

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

// A guess at the server's limit (40 per second in bursts of 10, queued): the client learns the rest.
let limits = try ActorRateLimitRegistry(rules: [
    try RateLimitRule(
        .prefix("api.example.com"), try TokenBucket(capacity: 10, permitsPerPeriod: 40, period: .seconds(1)),
        overflow: .queue(limit: 1_000))
])
// `.standard`: each endpoint learns the rate (and, for a concurrency limit, the concurrency) its
// rule enforces; `.off`, the default, keeps the fixed limits.
let client = URLSessionRateLimitedClient(limiter: limits, adaptive: .standard)

// A quota indicator: every change of what the client learned, in order.
let events = await client.events()
Task {
    for await case .limitChanged(let endpoint, let learned, _) in events {
        if let rate = learned.rate {
            print("\(endpoint): \(rate.rate) per second, bursts of \(rate.burst) (\(learned.change))")
        }
    }
}

let request = URLRequest(url: URL(string: "https://api.example.com/items")!)
_ = try? await client.send(request, to: "api.example.com")
print(await client.learnedLimit(for: "api.example.com") as Any)  // what the registry's key enforces now
