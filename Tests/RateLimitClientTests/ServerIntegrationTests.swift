import Foundation
import RateLimitActor
import RateLimitClient
import RateLimitCore
import RateLimitHTTP
import RateLimitTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// The client over URLSession against a real HTTP server (Server/ratelimit_server.py, Python's
// standard library) that enforces its own limit (GCRA), answering
// 429 with Retry-After (whole seconds) and RateLimit fields beyond it. Each test starts its own
// server on a free port of 127.0.0.1 and stops it; the server also exits when its standard input
// closes, so it never outlives the test process.
//
// The rates are measured in real time, so these tests run alone: `make verify` runs them after the
// other tests with RATELIMIT_SERVER_TESTS=1 (a plain `swift test` skips them, as they would share
// the two cores with every other suite and measure the machine's load rather than the client).

/// The server's limit in the test of a matching policy: 20 per second (one per 50 ms), bursts of 10.
private let serverRate: Int64 = 20
private let serverBurst: Int64 = 10

@Suite(
    "The client against a real HTTP server (Spec/HTTP.md HTTP-11)", .serialized, .tags(.realTime),
    // 4 minutes of served time each: the nginx test's runs of 600 requests, ours and botocore's
    // adaptive mode, take 35 s at once, and 150 s one after the other.
    .realTime(exclusive: true, patience: .seconds(4 * 60)),
    .enabled(
        if: ProcessInfo.processInfo.environment["RATELIMIT_SERVER_TESTS"] == "1",
        "timed in real time: make verify runs them alone"))
struct ServerIntegrationRealTimeTests {
    @Test(
        "HTTP-11 with the server's policy (burst halved as the stated margin) the client triggers no 429 and reaches at least 90% of the allowed rate"
    )
    func matchingPolicy() async throws {
        let server = try TestServer(rate: serverRate, burst: serverBurst)
        defer { server.stop() }
        // The server's rate exactly; a burst of 5 instead of 10. The 5 spare requests absorb 250 ms
        // of transit jitter (requests bunched up on the way, or a stalled process) at 20 per second.
        let clientBurst: Int64 = 5
        let registry = try ActorRateLimitRegistry(rules: [
            try RateLimitRule(
                .exact("GET /limited"),
                try TokenBucket(capacity: clientBurst, permitsPerPeriod: serverRate, period: .seconds(1)),
                overflow: .queue(limit: 1_000))
        ])
        let client = URLSessionRateLimitedClient(session: server.session, limiter: registry, seed: 1)
        let log = EventLog(await client.events())
        let total = 40
        let (wallStart, servedStart) = (ContinuousClock.now, ServedTime.now)
        let statuses = try await send(total, through: client, to: server)
        // The share of the run the machine served this process (RateLimitTestSupport's served
        // time): while it is not served, no client sends, and a stall longer than the 250 ms the
        // spare burst absorbs costs rate that was never the client's to take.
        let served = min(1, (ServedTime.now - servedStart) / (ContinuousClock.now - wallStart))
        let stats = try await server.stats()
        let sent = await log.sentInstants(expecting: total)

        #expect(statuses == Array(repeating: 200, count: total))
        #expect(stats.refused == 0, "the client triggered \(stats.refused) 429s")
        #expect(stats.admitted == total)
        // The allowed rate is the server's 20 per second after a burst: measured from the first
        // request after the client's burst to the last, as the client sent them and as the server
        // received them.
        let clientRate = rate(Array(sent.dropFirst(Int(clientBurst) - 1)))
        let serverSideRate = rate(Array(stats.arrivals.map(\.first!).dropFirst(Int(clientBurst) - 1)))
        let bar = 0.9 * Double(serverRate) * served
        #expect(clientRate >= bar, "the client sent \(clientRate) per second (\(served) of the run served)")
        #expect(serverSideRate >= bar, "the server received \(serverSideRate) per second (\(served) served)")
        print(
            "HTTP-11 matching policy: \(total) requests, 0 refused; \(clientRate) sent and \(serverSideRate) received per second of \(serverRate) allowed, \(String(format: "%.0f%%", 100 * served)) of the run served"
        )
    }

    @Test(
        "HTTP-11 with a too generous policy the client gets 429s, sends nothing before their Retry-After expires, and completes every request"
    )
    func generousPolicy() async throws {
        // A slower server (10 per second, bursts of 5), so that even on a loaded machine, where
        // the requests reach it spread out, 20 sent at once cannot all be admitted.
        let server = try TestServer(rate: 10, burst: 5)
        defer { server.stop() }
        // 10 times the server's rate, in bursts of 50: the server must refuse.
        let registry = try ActorRateLimitRegistry(rules: [
            try RateLimitRule(
                .exact("GET /limited"), try TokenBucket(capacity: 50, permitsPerPeriod: 100, period: .seconds(1)),
                overflow: .queue(limit: 1_000))
        ])
        let patient = try RetryPolicy(
            backoff: try Backoff(maximumRetries: 10, base: .milliseconds(100), cap: .seconds(2)))
        let client = URLSessionRateLimitedClient(
            session: server.session, limiter: registry, retryPolicy: patient, seed: 2)
        let log = EventLog(await client.events())
        let total = 20
        let statuses = try await send(total, through: client, to: server)
        let stats = try await server.stats()
        let events = await log.all(expectingSent: stats.admitted + stats.refused)

        #expect(statuses == Array(repeating: 200, count: total), "every request completes")
        #expect(stats.refused > 0, "a too generous client must meet the server's limit")
        #expect(
            stats.admittedIDs.sorted() == (0..<total).map(String.init).sorted(),
            "each request admitted exactly once, none lost")
        // Server side, exactly: no refused request came back before its Retry-After expired.
        #expect(stats.early.isEmpty, "retried before their Retry-After expired: \(stats.early)")
        // Client side, exactly: once it learned of a wait, it sent nothing before the wait's end.
        var heldUntil = RateLimitInstant.origin
        var early: [ClientEvent] = []
        for event in events {
            switch event {
            case .serverWait(_, let until, _): heldUntil = max(heldUntil, until)
            case .sent(_, _, let at) where at < heldUntil: early.append(event)
            default: break
            }
        }
        #expect(early.isEmpty, "sent while the server's wait held the endpoint: \(early)")
        print("HTTP-11 generous policy: \(total) requests, \(stats.refused) refused (429), all completed, none early")
    }

    @Test(
        "HTTP-12 each hostile reply holds the endpoint no longer than the ceiling; then requests go out again",
        arguments: ["retry-after", "ratelimit", "date"])
    func hostileReplies(_ kind: String) async throws {
        let server = try TestServer(rate: 100, burst: 100)
        defer { server.stop() }
        let registry = try ActorRateLimitRegistry(rules: [
            try RateLimitRule(.exact("hostile"), try ConcurrencyLimiter(limit: 10), overflow: .queue(limit: 10))
        ])
        // The ceiling at 2 s; a first request that meets the reply stops at once (no retry
        // waits more than 0.5 s); the second waits in the endpoint's queue until it may go.
        let ceiling = Duration.seconds(2)
        let client = URLSessionRateLimitedClient(
            session: server.session, limiter: registry,
            retryPolicy: try RetryPolicy(backoff: .default, maximumWait: .milliseconds(500)),
            serverQuota: try ServerQuota(maximumWait: ceiling, longestWait: kind == "date" ? .seconds(60) : ceiling),
            seed: 3)
        let request = URLRequest(url: server.url("/hostile?kind=\(kind)"))
        // Served time (RateLimitTestSupport): a busy machine stretches the wall-clock wait.
        let started = ServedTime.now
        let first = try? await client.send(request, to: "hostile")
        let second = try await client.send(request, to: "hostile")
        let recovered = ServedTime.now - started
        #expect(first?.status != 200 || kind == "ratelimit")
        #expect(second.status == 200)
        // The reply asked for three years, 31 million years, or 56 years (a Date of 1970): the
        // endpoint is held the ceiling (2 s), or for the date the 1 to 3 s to its Retry-After.
        #expect(recovered < .seconds(4), "\(kind): recovered after \(recovered)")
        print("HTTP-12 \(kind): the endpoint recovered after \(recovered)")
    }

    @Test(
        "HTTP-9 429s naming no wait from one server burst are one signal: the client gets at least half the rate of a script that sleeps 1 s on each 429"
    )
    func silentRejectionsTogether() async throws {
        // The issue's setup: the server at 20 per second in bursts of 5, answering 429 with no
        // wait; the client twice as generous, 8 tasks.
        let server = try TestServer(rate: 20, burst: 5, silent: true)
        defer { server.stop() }
        let total = 60
        let naive = try await offThePool { try runNaiveClient(url: server.url("/limited"), tasks: 8, total: total) }
        let registry = try ActorRateLimitRegistry(rules: [
            try RateLimitRule(
                .exact("GET /limited"), try TokenBucket(capacity: 10, permitsPerPeriod: 40, period: .seconds(1)),
                overflow: .queue(limit: 1_000))
        ])
        let patient = try RetryPolicy(
            backoff: try Backoff(maximumRetries: 20, base: .milliseconds(100), cap: .seconds(2)))
        let client = URLSessionRateLimitedClient(
            session: server.session, limiter: registry, retryPolicy: patient, seed: 4)
        let started = ContinuousClock.now
        let statuses = try await sendPooled(total, tasks: 8, through: client, to: server)
        let elapsed = ContinuousClock.now - started
        let clientRate =
            Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        #expect(statuses.allSatisfy { $0 == 200 })
        let quota = await client.serverQuota(for: "GET /limited")
        #expect(
            (quota?.silentRejections ?? 0) <= 2, "no run of escalations from one burst: \(String(describing: quota))")
        // Measured: about 0.9 of the naive rate (4.96 and 5.43 per second); when every 429 of a
        // burst escalated the wait, about 0.13 (0.81 and 6.2). Half leaves room for a loaded machine.
        #expect(clientRate >= 0.5 * naive, "the client got \(clientRate) per second through, the naive script \(naive)")
        print("HTTP-9 silent 429s: the client got \(clientRate) requests per second through, the naive script \(naive)")
    }
}

/// Sends `count` requests with `tasks` workers, each sending its next request when the last
/// one ends (ids 0 ..< count, to `path`); returns the statuses in id order.
func sendPooled<S: RateLimitStrategy>(
    _ count: Int, tasks: Int, through client: URLSessionRateLimitedClient<S, ContinuousClock>,
    to server: some LearningServer, path: String = "/limited", endpoint: String = "GET /limited"
) async throws -> [Int] {
    let ids = IDPool(count)
    let base = server.url(path).absoluteString
    return try await withThrowingTaskGroup(of: [(Int, Int)].self) { group in
        for _ in 0..<tasks {
            group.addTask {
                var done: [(Int, Int)] = []
                while let id = await ids.next() {
                    let request = URLRequest(url: URL(string: "\(base)?id=\(id)")!)
                    done.append((id, try await client.send(request, to: endpoint).status))
                }
                return done
            }
        }
        var statuses = Array(repeating: 0, count: count)
        for try await done in group { for (id, status) in done { statuses[id] = status } }
        return statuses
    }
}

private actor IDPool {
    private var given = 0
    private let count: Int
    init(_ count: Int) { self.count = count }
    func next() -> Int? {
        guard given < count else { return nil }
        defer { given += 1 }
        return given
    }
}

/// Runs `Server/naive_client.py` against `url` and returns the requests per second it completed.
func runNaiveClient(url: URL, tasks: Int, total: Int) throws -> Double {
    struct Result: Decodable { let rate: Double }
    return try JSONDecoder().decode(
        Result.self,
        from: runScript(
            "naive_client.py", python: "python3",
            ["--url", url.absoluteString, "--tasks", "\(tasks)", "--total", "\(total)"])
    ).rate
}

/// Runs the client script `name` of Server/ with `python` (a path, or a name looked up on the
/// PATH) and returns what it printed.
func runScript(_ name: String, python: String, _ arguments: [String]) throws -> Data {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Server/\(name)")
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: python.hasPrefix("/") ? python : "/usr/bin/env")
    process.arguments = (python.hasPrefix("/") ? [] : [python]) + [script.path] + arguments
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return data
}

/// Sends `count` requests at once (ids 0 ..< count) and returns their statuses in id order.
private func send(
    _ count: Int, through client: URLSessionRateLimitedClient<TokenBucket, ContinuousClock>, to server: TestServer
) async throws -> [Int] {
    try await withThrowingTaskGroup(of: (Int, Int).self) { group in
        for id in 0..<count {
            let request = URLRequest(url: server.url("/limited?id=\(id)"))
            group.addTask { (id, try await client.send(request, to: "GET /limited").status) }
        }
        var statuses = Array(repeating: 0, count: count)
        for try await (id, status) in group { statuses[id] = status }
        return statuses
    }
}

/// Requests per second from the first instant to the last (nanoseconds), over the gaps between.
func rate(_ instants: [Int64]) -> Double {
    guard let first = instants.min(), let last = instants.max(), last > first else { return 0 }
    return Double(instants.count - 1) / (Double(last - first) / 1e9)
}

private func rate(_ instants: [RateLimitInstant]) -> Double { rate(instants.map(\.nanoseconds)) }

/// The client's events, collected as they come.
actor EventLog {
    private var events: [ClientEvent] = []

    init(_ stream: AsyncStream<ClientEvent>) {
        Task { await self.consume(stream) }
    }

    private func consume(_ stream: AsyncStream<ClientEvent>) async {
        for await event in stream { events.append(event) }
    }

    /// Every event once `sent` attempts have gone out and come back (yielding, not sleeping).
    func all(expectingSent sent: Int) async -> [ClientEvent] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let out = events.filter { if case .sent = $0 { true } else { false } }.count
            let back = events.filter {
                if case .received = $0 { true } else if case .failed = $0 { true } else { false }
            }.count
            if out >= sent && back >= out { break }
            await Task.yield()
        }
        return events
    }

    /// The instants requests went out at, once `count` went out and came back.
    func sentInstants(expecting count: Int) async -> [RateLimitInstant] {
        await all(expectingSent: count).compactMap { if case .sent(_, _, let at) = $0 { at } else { nil } }
    }
}

/// The decoded `/stats` of the server.
struct ServerStats: Decodable {
    let admitted: Int
    let refused: Int
    let early: [String]
    let admittedIDs: [String]
    /// (instant in nanoseconds since the server started, status, the Retry-After of a 429 in
    /// nanoseconds or 0) per request, in arrival order.
    let arrivals: [[Int64]]
    /// The id of each of those requests.
    let arrivalIDs: [String]
    /// What `/slow` did.
    let slow: SlowStats

    struct SlowStats: Decodable {
        let served: Int
        let refused: Int
        let servedIDs: [String]
        /// (arrival in nanoseconds since the server started, requests in flight then, latency) per request served.
        let samples: [[Int64]]
    }
}

/// A server the tests send to and read back what it saw: the Python server or nginx.
protocol LearningServer: AnyObject {
    var session: URLSession { get }
    func url(_ path: String) -> URL
    func stats() async throws -> ServerStats
    func stop()
}

/// `Server/ratelimit_server.py`, running for one test.
final class TestServer: LearningServer {
    let session: URLSession
    private let process = Process()
    private let input = Pipe()
    private let port: Int

    /// A server limiting `/limited` to `rate` per second in bursts of `burst`, answering with the
    /// `fields` the script names (`ratelimit`, `retry-after`, `policy`, `none`), and serving `/slow`
    /// with `workers` workers of `serviceMilliseconds` each, refusing beyond `refuseAbove` in flight.
    init(
        rate: Int64, burst: Int64, silent: Bool = false, fields: String = "ratelimit", workers: Int = 4,
        serviceMilliseconds: Int = 25, refuseAbove: Int = 1_000
    ) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Server/ratelimit_server.py")
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", script.path, "--rate", "\(rate)", "--burst", "\(burst)", "--lifetime", "90", "--fields",
                silent ? "none" : fields, "--workers", "\(workers)", "--service-ms", "\(serviceMilliseconds)",
                "--refuse-above", "\(refuseAbove)",
            ]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The first line is {"port": N}; end of output first means the server could not start.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw ServerFailure(output: String(decoding: line, as: UTF8.self)) }
            line.append(chunk)
        }
        struct Greeting: Decodable { let port: Int }
        port = try JSONDecoder().decode(Greeting.self, from: line).port
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 20
        configuration.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: configuration)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func stats() async throws -> ServerStats {
        let (data, _) = try await session.data(for: URLRequest(url: url("/stats")))
        return try JSONDecoder().decode(ServerStats.self, from: data)
    }

    /// Stops the server and waits for it to exit.
    func stop() {
        session.invalidateAndCancel()
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    struct ServerFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "the test server did not start: \(output)" }
    }
}
