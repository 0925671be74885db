import CHeapStatistics
import Foundation
import RateLimitClient
import RateLimitCore
import RateLimitTesting

// ratelimit-bench --soak SECONDS, second part: the rate-limited client (Spec/HTTP.md HTTP-11)
// under sustained mixed traffic for SECONDS of wall time, in simulated time on a manual clock.
// Endpoints appear and go idle (more of them than the registry holds), a simulated server refuses
// with and without Retry-After, fails with 503s and dropped connections, requests are cancelled
// while they wait or are in flight, some fall back, and the client learns its endpoints' rates
// (each change a reconfigure of the endpoint's key). Memory is sampled after every round, when no
// request is in progress. It fails (exit 1) when the heap grows after warm-up, a file descriptor
// or a sleeper on the clock leaks, a request never gets its one outcome, or a request is sent
// while the server's wait the client announced still holds the endpoint (HTTP-12).

/// A response of the simulated server.
private struct SoakReply: ServerResponse {
    let status: Int
    let fields: HTTPFields
}

private struct ConnectionDropped: Error {}

/// The simulated server: each endpoint has a limit of its own, stricter than the client's (3
/// requests at once, then one every 30 ms), so the client meets 429s; 2% of requests get a 503
/// naming a wait and 2% no response at all. What it remembers of an idle endpoint is dropped.
private actor SoakServer {
    private var theoreticalArrival: [String: Int64] = [:]
    private var generator = SeededGenerator(seed: 0x50a)

    func answer(_ endpoint: String, at now: Int64) throws(ConnectionDropped) -> SoakReply {
        let roll = Int.random(in: 0..<100, using: &generator)
        if roll < 2 { throw ConnectionDropped() }
        if roll < 4 { return SoakReply(status: 503, fields: ["Retry-After": "2"]) }
        let interval: Int64 = 30_000_000
        let tat = max(theoreticalArrival[endpoint] ?? now, now)
        guard tat - now <= 2 * interval else {
            // Most refusals say how long to wait; the rest are silent (HTTP-9's waits apply).
            return SoakReply(status: 429, fields: roll < 70 ? ["Retry-After": "1"] : [:])
        }
        theoreticalArrival[endpoint] = tat + interval
        return SoakReply(status: 200, fields: [:])
    }

    /// Forgets the endpoints whose limit is full again at `now`.
    func forgetIdle(at now: Int64) {
        theoreticalArrival = theoreticalArrival.filter { $0.value > now }
    }
}

/// What the event watcher saw: counts, and the requests sent inside a wait it announced.
private final class EventLedger: @unchecked Sendable {
    // @unchecked: every stored property is read and written only while `lock` is held.
    private let lock = NSLock()
    private var waitsUntil: [String: RateLimitInstant] = [:]
    private var violations: [String] = []
    private var counts: [String: Int] = [:]
    private var latest = RateLimitInstant.origin

    func record(_ event: ClientEvent) {
        lock.withLock {
            switch event {
            case .serverWait(let endpoint, let until, let at):
                waitsUntil[endpoint] = max(waitsUntil[endpoint] ?? until, until)
                latest = max(latest, at)
                counts["server waits", default: 0] += 1
            case .sent(let endpoint, _, let at):
                latest = max(latest, at)
                counts["sent", default: 0] += 1
                // HTTP-12: nothing is sent to the endpoint before the announced wait ends.
                if let until = waitsUntil[endpoint], at < until, violations.count < 5 {
                    violations.append(
                        "\(endpoint) was sent to at \(at.nanoseconds) ns, inside the wait until \(until.nanoseconds) ns (HTTP-12)"
                    )
                }
            case .received(_, let status, _):
                counts[status == 200 ? "answered" : "refused by the server", default: 0] += 1
            case .failed: counts["no response", default: 0] += 1
            case .retrying: counts["retries", default: 0] += 1
            case .fellBack: counts["fell back", default: 0] += 1
            case .limitChanged: counts["limits learned", default: 0] += 1
            }
            if case .sent = event, counts["sent", default: 0] % 20_000 == 0 {
                waitsUntil = waitsUntil.filter { $0.value > latest }
            }
        }
    }

    var summary: (counts: [String: Int], violations: [String]) { lock.withLock { (counts, violations) } }

    /// Events recorded so far.
    var recorded: Int { lock.withLock { counts.values.reduce(0, +) } }
}

/// How many requests have their outcome (a shared counter).
private final class Finished: @unchecked Sendable {
    // @unchecked: `count` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Runs the client's soak for `seconds` and prints what it saw; `false` when a check failed.
func clientSoak(seconds: Double) async -> Bool {
    let clock = ManualClock()
    let server = SoakServer()
    var failures: [String] = []
    let client: RateLimitedClient<String, SoakReply, GCRA, ManualClock>
    do {
        let limit = try GCRA(burst: 5, emissionIntervalNanoseconds: 10_000_000)
        let registry = try ActorRateLimitRegistry(
            rules: [
                try RateLimitRule(.prefix("q/"), limit, overflow: .queue(limit: 8, timeout: .milliseconds(300))),
                try RateLimitRule(.prefix("r/"), limit),
            ], maximumKeys: 1_000, clock: clock)
        client = RateLimitedClient(
            limiter: registry,
            adaptive: try AdaptivePolicy(rate: .standard, concurrency: .off, maximumIdleEndpoints: 200),
            retryPolicy: try RetryPolicy(
                backoff: try Backoff(maximumRetries: 2, base: .milliseconds(50), cap: .seconds(1)),
                maximumWait: .seconds(3)),
            seed: 0x50a,
            wallClock: { HTTPDate(secondsSinceEpoch: 1_700_000_000 + clock.now.offset.components.seconds) },
            operation: { endpoint in
                let reply = try await server.answer(endpoint, at: elapsed(clock))
                // The round trip takes 1 to 5 ms of the manual clock.
                try await clock.sleep(until: clock.now.advanced(by: .milliseconds(Int64.random(in: 1...5))))
                return reply
            })
    } catch {
        print("client soak: the configuration is refused: \(error)")
        return false
    }
    let ledger = EventLedger()
    let events = await client.events()
    let watcher = Task {
        for await event in events { ledger.record(event) }
    }

    var generator = SeededGenerator(seed: 0x50a)
    var outcomes: [String: Int] = [:]
    var samples: [(heap: Int, descriptors: Int, sleepers: Int)] = []
    var launched = 0
    var round = 0
    let started = ContinuousClock.now
    let wall = Duration.milliseconds(Int64(seconds * 1_000))
    soaking: while ContinuousClock.now - started < wall {
        // Each round: 400 requests over about a second of the clock, to endpoints drawn from a
        // window of 1,500 that moves on by 150 a round (so endpoints go idle and new ones come,
        // more than the registry's 1,000 keys), a third to five hot endpoints.
        let base = round * 150
        let finished = Finished()
        var requests: [Task<String, Never>] = []
        for _ in 0..<400 {
            let hot = Int.random(in: 0..<3, using: &generator) == 0
            let id =
                hot ? Int.random(in: 0..<5, using: &generator) : base + Int.random(in: 0..<1_500, using: &generator)
            let endpoint = (id % 2 == 0 ? "q/" : "r/") + (hot ? "hot-" : "") + String(id)
            let priority: RateLimitPriority = Int.random(in: 0..<20, using: &generator) == 0 ? .critical : .normal
            let fallsBack = Int.random(in: 0..<10, using: &generator) == 0
            requests.append(
                Task {
                    defer { finished.add() }
                    do throws(RateLimitClientError) {
                        let cached: (@Sendable (RateLimitClientError) async -> SoakReply?)? =
                            fallsBack ? { @Sendable _ in SoakReply(status: 200, fields: ["X-Cached": "1"]) } : nil
                        let reply = try await client.send(endpoint, to: endpoint, priority: priority, fallback: cached)
                        return reply.fields.values("X-Cached").isEmpty ? "answered (\(reply.status))" : "fell back"
                    } catch {
                        switch error {
                        case .limited: return "refused by the client's limit"
                        case .timedOut: return "timed out in the queue"
                        case .serverLimited: return "still refused by the server"
                        case .transport: return "no response"
                        case .cancelled: return "cancelled"
                        case .closed: return "closed"
                        }
                    }
                })
            launched += 1
            // One request in ten is cancelled a little later, waiting or in flight.
            if Int.random(in: 0..<10, using: &generator) == 0, let victim = requests.randomElement(using: &generator) {
                victim.cancel()
            }
            await settle()
            clock.advance(by: .microseconds(Int64.random(in: 0...5_000, using: &generator)))
        }
        // Then the clock moves from deadline to deadline until every request has its outcome.
        var stalled = ContinuousClock.now
        var done = finished.value
        while done < requests.count {
            await settle()
            if let next = clock.nextDeadline {
                clock.set(to: next)
            } else {
                try? await Task.sleep(for: .microseconds(100))
            }
            if finished.value != done {
                done = finished.value
                stalled = ContinuousClock.now
            } else if ContinuousClock.now - stalled > .seconds(30) {
                failures.append("\(requests.count - done) requests got no outcome in 30 s of waiting (WQ-2)")
                for request in requests { request.cancel() }
                break soaking
            }
        }
        for request in requests { outcomes[await request.value, default: 0] += 1 }
        // Idle: every wait has an end; past it nothing should sleep on the clock any more.
        clock.advance(by: .seconds(10))
        await settle()
        // The watcher catches up with the events (their buffer is the stream's, not the client's).
        var seen = -1
        while ledger.recorded != seen {
            seen = ledger.recorded
            try? await Task.sleep(for: .milliseconds(1))
        }
        await server.forgetIdle(at: elapsed(clock))  // the simulated server's memory, not the client's
        samples.append((ratelimit_heap_bytes_in_use(), openDescriptors(), clock.sleeperCount))
        round += 1
    }
    await client.limiter.close()
    watcher.cancel()
    _ = await watcher.value
    let (counts, violations) = ledger.summary
    failures += violations
    for kind in ["answered (200)", "refused by the client's limit", "timed out in the queue", "cancelled", "fell back"]
    where outcomes[kind, default: 0] == 0 {
        failures.append("no request ended \(kind): the traffic did not exercise it")
    }
    if counts["limits learned", default: 0] == 0 || counts["server waits", default: 0] == 0 {
        failures.append("the client never learned a limit or never honoured a server's wait")
    }
    if let most = samples.map(\.sleepers).max(), most > 0 {
        failures.append("\(most) tasks still slept on the clock with every request done and every wait over")
    }
    let warmUp = max(1, samples.count / 5)
    let settled = samples.prefix(warmUp).map(\.heap).max() ?? 0
    let later = samples.dropFirst(warmUp).map(\.heap).max() ?? settled
    if later > settled + settled / 4 + (1 << 20) {
        failures.append("the heap grew from \(megabytes(settled)) after warm-up to \(megabytes(later))")
    }
    // The runtime may open a descriptor or two while it starts its threads: counted from warm-up.
    let descriptorsAtWarmUp = samples.prefix(warmUp).map(\.descriptors).max() ?? 0
    if let last = samples.last, last.descriptors > descriptorsAtWarmUp {
        failures.append("open file descriptors went from \(descriptorsAtWarmUp) after warm-up to \(last.descriptors)")
    }
    let first = samples.first ?? (0, 0, 0)
    let last = samples.last ?? first
    print(
        "soak: client, \(String(format: "%.0f", seconds)) s, \(launched) requests in \(samples.count) rounds over \(clock.now.offset.components.seconds) simulated s, to \(round * 150 + 1_500) endpoints"
    )
    print(
        "  heap: \(megabytes(first.heap)) after round 1, \(megabytes(settled)) at most during warm-up, \(megabytes(last.heap)) at the end (\(megabytes(later)) at most after warm-up); file descriptors: \(first.descriptors) -> \(last.descriptors)"
    )
    print("  outcomes: " + outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
    print("  events: " + counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
    for failure in failures { print("  FAIL \(failure)") }
    print(failures.isEmpty ? "soak: PASS" : "soak: FAIL")
    return failures.isEmpty
}

/// The manual clock's reading in nanoseconds (it only moves forwards here, from zero).
private func elapsed(_ clock: ManualClock) -> Int64 {
    (try? clock.now.offset.wholeNanoseconds(field: "now")) ?? 0
}

/// Lets every task that can run reach its next wait on the clock (or its end).
private func settle() async {
    for _ in 0..<20 { await Task.yield() }
}
