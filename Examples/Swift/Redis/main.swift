import RateLimitRedis  // limits shared through Redis, with the Redis client your app already uses

/// A partner's quota for one API token, shared by the four instances of this app: 5,000 requests an
/// hour, bursts of 10. `runner` is your Redis client behind two commands (RediStack and
/// valkey-swift below).
func callPartner(runner: some RedisScriptRunner) async throws {
    let quota = RedisRateLimiter(
        try GCRA(burst: 10, emissionInterval: .milliseconds(720)), key: "rl:{partner}:token-42", runner: runner,
        timeout: .milliseconds(250),
        // Redis unreachable or slow: this instance decides alone, with its quarter of the limit.
        onFailure: .fallback(try GCRA(burst: 3, emissionInterval: .milliseconds(2_880))))
    switch try await quota.tryAcquire() {
    case .allowed: print("call the partner")
    case let refused: print("retry in \(refused.retryAfter ?? .zero)")  // exact, on the server's clock
    }
    // Or wait for a permit, 2 s at most: the exact retry-after, then again (no shared queue).
    if case .allowed = try await quota.acquire(timeout: .seconds(2)) { print("call the partner") }

    // At most 20 database connections across every process; a lease comes back by itself after
    // 30 s if its process dies before releasing it.
    let connections = RedisConcurrencyLimiter(
        try ConcurrencyLimiter(limit: 20), key: "rl:{db}:connections", runner: runner)
    if let lease = try await connections.tryAcquire(lease: .seconds(30)).lease {
        print("query the database")
        _ = try await connections.release(lease)
    }
}
