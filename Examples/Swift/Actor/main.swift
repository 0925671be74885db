import RateLimitActor  // async/await

let limiter = try ActorRateLimiter(
    try TokenBucket(capacity: 5, permitsPerPeriod: 10, period: .seconds(1)),
    queueLimit: 100)  // up to 100 permits may wait
do {
    // Waits its turn (priority, then arrival); cancelling the task cancels the wait.
    let grant = try await limiter.acquire(2, priority: .high, timeout: .seconds(3))
    print("go with \(grant.permits)")
} catch .timedOut {
    print("gave up after 3 s; nothing was taken")
} catch {
    print("refused: \(error)")  // rejected (queueFull, neverAllowed, ...), cancelled, closed
}
let outcome = await limiter.tryAcquire()  // never waits
if let retryAfter = outcome.retryAfter {
    print("refused; the same request is admitted in \(retryAfter)")
}

// A registry: one limiter per key, from the rule that matches it (Spec/Registry.md).
let registry = try ActorRateLimitRegistry(rules: [
    // 10 per second and 1,000 per hour; up to 20 requests wait, 5 s at most; "warning" at 3 left.
    try RateLimitRule(
        .prefix("GET /search"),
        try CompositeLimit(
            .tokenBucket(try TokenBucket(capacity: 10, permitsPerPeriod: 10, period: .seconds(1))),
            .slidingWindowLog(try SlidingWindowLog(limit: 1_000, window: .seconds(3_600)))),
        overflow: .queue(limit: 20, timeout: .seconds(5)), warningThreshold: 3),
    // Everything else: bursts of 20, then one every 100 ms.
    try RateLimitRule(.anyKey, try CompositeLimit(.gcra(try GCRA(burst: 20, emissionInterval: .milliseconds(100))))),
])

// A quota indicator fed by the event stream: every change, in order, stamped with its instant.
let events = await registry.events()
Task {
    for await event in events {
        if case .statusChanged(let key, _, let status, let remaining, _) = event {
            print("\(key): \(status), \(remaining) left")  // ok / warning / limited
        }
    }
}

_ = try await registry.acquire("GET /search", priority: .high)  // waits its turn, 5 s at most
await registry.throttle("GET /search", for: .seconds(30))  // the server answered 429, Retry-After: 30
print(await registry.quota(of: "GET /search") as Any)  // state, status, remaining, statistics

// A concurrency limit held while the body runs, and given back however it ends.
let connections = try ActorRateLimiter(try ConcurrencyLimiter(limit: 4))
let page = try await connections.withPermits { "fetched" }
print(page)
