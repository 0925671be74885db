import RateLimitHTTP  // pure: reads what servers say, decides retries; no networking

let now = HTTPDate(secondsSinceEpoch: 1_700_000_000)  // the wall clock when the response arrived
let reply = ServerFeedback(
    status: 429,
    fields: [
        "Retry-After": "30",
        "RateLimit-Policy": #""burst";q=100;w=60"#,
        "RateLimit": #""burst";r=0;t=30"#,
    ], receivedAt: now)
print(reply.requestedWaitNanoseconds as Any)  // 30 s, in nanoseconds
print(reply.diagnostics)  // fields ignored, and why (never a trap)

// What the server asked, remembered per endpoint on the limiter's timeline.
var quota = ServerQuota.standard
_ = quota.record(reply, at: .origin)
print(quota.permit(at: .origin))  // wait(nanoseconds: 30000000000)

// Retries: exponential backoff with full jitter, from a seeded generator.
var random = SystemRandomNumberGenerator()
let delay = Backoff.default.delay(retry: 2, previous: nil, using: &random)
print("retry in \(delay) ns")
