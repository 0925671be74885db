import RateLimitLock  // synchronous code, or threads you own

let pool = try LockedRateLimiter(try ConcurrencyLimiter(limit: 4), queueLimit: 16)
// Parks this thread until a permit is free (1 s at most): not from a Task.
let rows = try pool.withPermitsBlocking(timeout: .seconds(1)) { () -> Int in
    42  // use the connection; the permit comes back however this ends
}
print(rows)

let api = try LockedRateLimiter(try GCRA(burst: 5, emissionInterval: .milliseconds(200)))
switch api.tryAcquire() {
case .granted: print("send")
case let refused: print("wait \(refused.retryAfter ?? .zero)")
}

// On the coarse clock (every adapter re-exports it): a decision reads the system's last tick, a
// few nanoseconds, and a wait can come out up to one tick (its resolution) longer.
let hot = try LockedRateLimiter(try GCRA(burst: 5, emissionInterval: .milliseconds(200)), clock: CoarseMonotonicClock())
print(hot.tryAcquire().isGranted, CoarseMonotonicClock.resolution)
