import Foundation  // JSONDecoder, below
import RateLimitCore

// 10 requests per second, bursts of up to 5, starting full.
let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 10, period: .seconds(1))
var limiter = RateLimiter(bucket, at: .origin)

let now = try RateLimitInstant(nanoseconds: 250_000_000)  // from your monotonic clock
switch limiter.acquire(3, at: now) {
case .allowed(let remaining):
    print("go; \(remaining) left")
case .rejected(let retryAfterNanoseconds):
    print("retry in \(retryAfterNanoseconds) ns")  // exact: admitted then, not 1 ns before
case .neverAllowed:
    print("more than the bucket can ever hold")
case .delayed, .rejectedUntilRelease, .invalid:
    break  // other strategies (queue, concurrency) and bad input
}

// When would 5 permits be available? Asked without taking anything:
print(limiter.availability(of: 5, at: now).retryAfter ?? .zero)

// The pure form, for adapters and tests:
let (next, result) = bucket.step(limiter.state, .acquire(1), at: now)
print(next, result)

// Configurations are Codable, in the JSON the vectors and the protocol use:
let json = #"{"strategy": "gcra", "configuration": {"burst": 20, "emissionIntervalNanoseconds": 50000000}}"#
let loaded = try JSONDecoder().decode(AnyRateLimitStrategy.self, from: Data(json.utf8))
print(loaded)
