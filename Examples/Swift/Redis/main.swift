import Foundation
import RateLimitRedis  // limits shared through Redis: every process using a key shares its limit

// Try it: start `redis-server`, then `swift run example-redis` (twice: the second run shares the
// first one's quota). REDIS_URL names another server (default redis://127.0.0.1:6379).
let redis = try RedisConnection(url: ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379")

// A partner's quota for one API token, shared by every instance of this app: 5,000 requests an
// hour, bursts of 10.
let quota = RedisRateLimiter(
    try GCRA(burst: 10, emissionInterval: .milliseconds(720)), key: "rl:{partner}:token-42", runner: redis,
    timeout: .milliseconds(250),
    // Redis unreachable or slow: this instance decides alone, with a quarter of the limit.
    onFailure: .fallback(try GCRA(burst: 3, emissionInterval: .milliseconds(2_880))))
for request in 1...12 {
    switch try await quota.tryAcquire() {
    case .allowed(let remaining): print("request \(request): call the partner (\(remaining) more in this burst)")
    case let refused: print("request \(request): retry in \(refused.retryAfter ?? .zero)")  // exact, server's clock
    }
}
// Or wait for a permit, 2 s at most: the exact retry-after, then again (no shared queue).
if case .allowed = try await quota.acquire(timeout: .seconds(2)) { print("request 13: waited, then called") }
if let failure = quota.lastFailure {
    print("Redis did not answer (\(failure)): this process decided alone, with its fallback limit")
} else {
    print("every answer came from Redis at \(redis.host):\(redis.port), shared by every process using the key")
}

// At most 20 database connections across every process; a lease comes back by itself after 30 s
// if its process dies before releasing it.
let connections = RedisConcurrencyLimiter(try ConcurrencyLimiter(limit: 20), key: "rl:{db}:connections", runner: redis)
if let lease = try? await connections.tryAcquire(lease: .seconds(30)).lease {
    print("query the database, holding one of the 20 connections")
    _ = try await connections.release(lease)
}
