import Foundation
import RateLimitActor
import RateLimitClient
import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import RateLimitTestSupport
import Testing

/// A response made up by a test.
struct Reply: ServerResponse, Equatable {
    let status: Int
    let fields: HTTPFields
    init(_ status: Int, _ fields: HTTPFields = [:]) {
        self.status = status
        self.fields = fields
    }
}

struct NetworkDown: Error {}

/// A server played from a script: each attempt takes the next reply (the last one repeats) and
/// is logged with the manual clock's reading.
actor ScriptedServer {
    private var replies: [Result<Reply, NetworkDown>]
    private(set) var sentAt: [Duration] = []
    private(set) var requests: [String] = []
    let clock: ManualClock

    init(_ replies: [Result<Reply, NetworkDown>], clock: ManualClock) {
        self.replies = replies
        self.clock = clock
    }

    func answer(_ request: String) throws(NetworkDown) -> Reply {
        sentAt.append(clock.now.offset)
        requests.append(request)
        let reply = replies.count > 1 ? replies.removeFirst() : replies[0]
        return try reply.get()
    }
}

/// A client on a manual clock whose one endpoint, "api", has `rule`'s limit.
func scriptedClient(
    _ replies: [Result<Reply, NetworkDown>], rule overflow: OverflowPolicy = .queue(limit: 100),
    strategy: AnyRateLimitStrategy? = nil, backoff: Backoff = .default, seed: UInt64 = 1,
    adaptive: AdaptivePolicy = .off
) throws -> (RateLimitedClient<String, Reply, AnyRateLimitStrategy, ManualClock>, ScriptedServer, ManualClock) {
    let clock = ManualClock()
    let limit = try strategy ?? .tokenBucket(TokenBucket(capacity: 100, permitsPerPeriod: 100, period: .seconds(1)))
    let registry = try ActorRateLimitRegistry(
        rules: [try RateLimitRule(.exact("api"), limit, overflow: overflow)], clock: clock)
    let server = ScriptedServer(replies, clock: clock)
    let client = RateLimitedClient(
        limiter: registry, adaptive: adaptive, retryPolicy: try RetryPolicy(backoff: backoff), seed: seed,
        wallClock: { HTTPDate(secondsSinceEpoch: 1_700_000_000) },
        operation: { request in try await server.answer(request) })
    return (client, server, clock)
}

/// Once someone sleeps on `clock` until `offset`, moves the clock there.
func advance(_ clock: ManualClock, to offset: Duration, sourceLocation: SourceLocation = #_sourceLocation) async {
    let target = ManualClock.Instant(offset: offset)
    let reached = await eventually { clock.nextDeadline == target }
    #expect(
        reached, "nobody slept until \(offset); next deadline \(String(describing: clock.nextDeadline))",
        sourceLocation: sourceLocation)
    clock.set(to: target)
}

/// Once someone sleeps on `clock`, moves the clock to the earliest deadline; returns it.
func advanceToNextSleeper(_ clock: ManualClock) async -> Duration? {
    guard await eventually({ clock.nextDeadline != nil }), let deadline = clock.nextDeadline else { return nil }
    clock.set(to: deadline)
    return deadline.offset
}
