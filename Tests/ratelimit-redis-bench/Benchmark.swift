import Foundation
import RateLimitRedis
import RedisTestSupport

// The method: one connection (RESPConnection, the tests' RESP2 client, each command on its own
// serial queue), one task calling it in a loop. The floor is one round trip of a trivial script
// (`return 1`, EVALSHA) through the same RedisScriptRunner method the limiter uses; the limiter
// is RedisRateLimiter.tryAcquire on the server's clock: the library's function (FCALL, SHARED-14)
// or the script (EVALSHA, through a runner of scripts only), its arithmetic on the server, the
// timeout race and the reply parsed. Floor and limiter run in alternating rounds, and each
// ratio is the median of the per-round ratios of medians, so the machine's drift (two cores
// shared with other work) falls on both alike.

/// One measured case.
struct Row {
    let name: String
    /// Latencies of the case, nanoseconds: median and 99th percentile over every call.
    let p50: Double
    let p99: Double
    /// The floor's, from the same rounds.
    let floorP50: Double
    let floorP99: Double
    /// Decisions per second of one caller (1 / mean latency).
    let perSecond: Double
    /// Median over rounds of (case median / floor median).
    let ratio: Double
}

struct Measured {
    var rows: [Row]
    var calls: Int

    var table: String {
        var lines = [
            "ratelimit-redis-bench: one caller, loopback, redis-server on this machine; \(calls) calls per case",
            "",
            "case                                    decisions/s   p50 µs   p99 µs   floor p50   floor p99   ratio (p50)",
            "--------------------------------------  -----------  -------  -------  ----------  ----------  -----------",
        ]
        for row in rows {
            lines.append(
                row.name.padding(toLength: 38, withPad: " ", startingAt: 0) + "  "
                    + pad(String(format: "%.0f", row.perSecond), 11) + "  "
                    + pad(String(format: "%.1f", row.p50 / 1_000), 7) + "  "
                    + pad(String(format: "%.1f", row.p99 / 1_000), 7) + "  "
                    + pad(String(format: "%.1f", row.floorP50 / 1_000), 10) + "  "
                    + pad(String(format: "%.1f", row.floorP99 / 1_000), 10) + "  "
                    + pad(String(format: "%.2fx", row.ratio), 11))
        }
        lines.append("")
        lines.append(
            "floor: EVALSHA of `return 1` on the same connection; the limiters call the library's functions (FCALL)"
                + " unless \"by script\"; target: the GCRA function alone <= 1.5x")
        return lines.joined(separator: "\n")
    }

    var json: [String: Any] {
        [
            "calls": calls,
            "rows": rows.map {
                [
                    "name": $0.name, "p50Nanoseconds": $0.p50, "p99Nanoseconds": $0.p99,
                    "floorP50Nanoseconds": $0.floorP50, "floorP99Nanoseconds": $0.floorP99,
                    "decisionsPerSecond": $0.perSecond, "ratio": $0.ratio,
                ] as [String: Any]
            },
        ]
    }
}

private func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

/// Runs every case against the server at `port`.
func benchmark(port: Int, smoke: Bool) async throws -> Measured {
    let connection = try RESPConnection(port: port)
    guard case .bulk(let trivial?) = try await connection.send(["SCRIPT", "LOAD", "return 1"]) else {
        throw RedisTestFailure("SCRIPT LOAD refused the trivial script")
    }
    let rounds = smoke ? 1 : 7
    let perRound = smoke ? 20 : 1_500
    let floor: @Sendable () async throws -> Void = {
        _ = try await connection.evalSHA(trivial, key: "bench:{floor}", arguments: [])
    }
    // A trivial function, to show what FCALL itself costs against EVALSHA.
    let trivialLibrary = "#!lua name=bench\nredis.register_function('bench_trivial', function() return 1 end)"
    _ = try await connection.send(["FUNCTION", "LOAD", "REPLACE", trivialLibrary])
    _ = try await connection.functionLoad(RedisScript.library)
    let scriptsOnly = ScriptsOnly(connection)
    // Always admitted: a GCRA whose burst is never used up (one nanosecond per permit).
    let admitting = RedisRateLimiter(
        try GCRA(burst: 1_000_000_000, emissionIntervalNanoseconds: 1), key: "bench:{admitted}", runner: connection)
    let admittingByScript = RedisRateLimiter(
        try GCRA(burst: 1_000_000_000, emissionIntervalNanoseconds: 1), key: "bench:{admitted-script}",
        runner: scriptsOnly)
    // Always refused after its first acquire: one permit per hour.
    let refusing = RedisRateLimiter(
        try GCRA(burst: 1, emissionIntervalNanoseconds: 3_600_000_000_000), key: "bench:{refused}", runner: connection)
    let bucket = RedisRateLimiter(
        try TokenBucket(capacity: 1_000_000, permitsPerPeriod: 1_000_000, periodNanoseconds: 1_000),
        key: "bench:{bucket}", runner: connection)
    let log = RedisRateLimiter(
        try SlidingWindowLog(limit: 100, windowNanoseconds: 60_000_000_000), key: "bench:{log}", runner: connection)
    // The GCRA script alone, through the runner: what the server adds to the floor, without the
    // limiter's Swift part (the timeout race, the arguments, the reply parsed).
    let gcra = RedisScript.all.first { $0.strategy == GCRA.identifier }!
    let gcraArguments = ["acquire", "", "1000000000", "1", "1"]
    var cases: [(String, @Sendable () async throws -> Void)] = [
        (
            "trivial function (FCALL)",
            { _ = try await connection.fcall("bench_trivial", key: "bench:{f}", arguments: []) }
        ),
        (
            "GCRA script alone, admitted",
            { _ = try await connection.evalSHA(gcra.sha1, key: "bench:{script}", arguments: gcraArguments) }
        ),
        (
            "GCRA function alone, admitted",
            { _ = try await connection.fcall(gcra.function, key: "bench:{function}", arguments: gcraArguments) }
        ),
        ("GCRA tryAcquire, admitted", { _ = try await admitting.tryAcquire() }),
        ("GCRA tryAcquire by script, admitted", { _ = try await admittingByScript.tryAcquire() }),
        ("GCRA tryAcquire, refused", { _ = try await refusing.tryAcquire() }),
        ("token bucket tryAcquire, admitted", { _ = try await bucket.tryAcquire() }),
        ("sliding log tryAcquire, mostly refused", { _ = try await log.tryAcquire() }),
    ]
    // The limiter's Swift part alone: a runner that answers at once, without I/O.
    let canned = CannedRunner()
    let inMemory = RedisRateLimiter(
        try GCRA(burst: 1_000_000_000, emissionIntervalNanoseconds: 1), key: "bench:{memory}", runner: canned)
    cases.append(("limiter, a runner without I/O", { _ = try await inMemory.tryAcquire() }))
    // Warm up: the scripts loaded, the connection and the code paths hot.
    _ = try await connection.eval(gcra.source, key: "bench:{script}", arguments: gcraArguments)
    for _ in 0..<(smoke ? 2 : 200) {
        try await floor()
        for (_, body) in cases { try await body() }
    }
    var rows: [Row] = []
    for (name, body) in cases {
        var floorAll: [Double] = []
        var caseAll: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<rounds {
            let floorRound = try await latencies(perRound, floor)
            let caseRound = try await latencies(perRound, body)
            floorAll += floorRound
            caseAll += caseRound
            ratios.append(percentile(caseRound, 0.5) / percentile(floorRound, 0.5))
        }
        rows.append(
            Row(
                name: name, p50: percentile(caseAll, 0.5), p99: percentile(caseAll, 0.99),
                floorP50: percentile(floorAll, 0.5), floorP99: percentile(floorAll, 0.99),
                perSecond: 1e9 / (caseAll.reduce(0, +) / Double(caseAll.count)), ratio: percentile(ratios, 0.5)))
    }
    return Measured(rows: rows, calls: rounds * perRound)
}

/// The latency of each of `count` calls of `body`, nanoseconds.
private func latencies(_ count: Int, _ body: @Sendable () async throws -> Void) async throws -> [Double] {
    var samples: [Double] = []
    samples.reserveCapacity(count)
    let clock = ContinuousClock()
    for _ in 0..<count {
        let start = clock.now
        try await body()
        let (seconds, attoseconds) = (clock.now - start).components
        samples.append(Double(seconds) * 1e9 + Double(attoseconds) / 1e9)
    }
    return samples
}

private func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// The multi-process test's worker: acquires 1, 2, 3, 1, 2, 3... permits of one GCRA key on the
/// server's clock until `milliseconds` have passed, and prints what it was granted.
func worker(port: Int, key: String, burst: Int64, interval: Int64, milliseconds: Int) async -> Int32 {
    do {
        let limiter = RedisRateLimiter(
            try GCRA(burst: burst, emissionIntervalNanoseconds: interval), key: key,
            runner: try RESPConnection(port: port), timeout: .seconds(5))
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        var admitted: Int64 = 0
        var decisions = 0
        var failures = 0
        while ContinuousClock.now < deadline {
            let permits = Int64(decisions % 3 + 1)
            decisions += 1
            do {
                if case .allowed = try await limiter.tryAcquire(permits) { admitted += permits }
            } catch {
                failures += 1
                FileHandle.standardError.write(Data("\(error)\n".utf8))
            }
        }
        print(#"{"admitted": \#(admitted), "decisions": \#(decisions), "failures": \#(failures)}"#)
        return failures == 0 ? 0 : 1
    } catch {
        FileHandle.standardError.write(Data("worker: \(error)\n".utf8))
        return 1
    }
}

/// A worker of the cluster test: weighted acquires (1, 2, 3, ...) on random keys of a GCRA each,
/// through one cluster client, until the file `stop` exists (or two minutes have passed); prints each
/// admission (key index, sent, answered, permits, the `tat` the store replied, the wall clock
/// against the monotonic one at the send) and a summary.
func clusterWorker(seeds: [String], keys: [String], burst: Int64, interval: Int64, stop: String) async -> Int32 {
    do {
        let client = try RedisClusterConnection(seeds: seeds, timeout: .seconds(5))
        let recorder = LastIdle(client)
        let strategy = try GCRA(burst: burst, emissionIntervalNanoseconds: interval)
        let limiters = keys.map { RedisRateLimiter(strategy, key: $0, runner: recorder, timeout: .seconds(5)) }
        let deadline = ContinuousClock.now + .seconds(120)
        var lines: [String] = []
        var decisions = 0
        var failures = 0
        var random = SystemRandomNumberGenerator()
        while decisions % 64 != 0 || !FileManager.default.fileExists(atPath: stop), ContinuousClock.now < deadline {
            let index = Int.random(in: 0..<keys.count, using: &random)
            let permits = Int64(decisions % 3 + 1)
            decisions += 1
            let wallClock = WallClockOffset.now()?.text ?? "-"
            let sent = monotonicNanoseconds()
            do {
                if try await limiters[index].tryAcquire(permits).isAdmitted {
                    lines.append(
                        "\(index) \(sent) \(monotonicNanoseconds()) \(permits) \(recorder.idle ?? "-") \(wallClock)")
                }
            } catch {
                failures += 1
                FileHandle.standardError.write(Data("\(keys[index]): \(error)\n".utf8))
            }
        }
        let (moved, ask) = client.redirectionsFollowed
        print(lines.joined(separator: "\n"))
        print(#"{"decisions": \#(decisions), "failures": \#(failures), "moved": \#(moved), "ask": \#(ask)}"#)
        return failures == 0 ? 0 : 1
    } catch {
        FileHandle.standardError.write(Data("cluster worker: \(error)\n".utf8))
        return 1
    }
}

/// Passes every call to `runner` and keeps the "idle" of the last reply (a GCRA's `tat` after an
/// admission, SHARED-4): the worker makes one call at a time.
private final class LastIdle: RedisFunctionRunner, @unchecked Sendable {
    // @unchecked: `last` is read and written only under `lock`.
    private let runner: RedisClusterConnection
    private let lock = NSLock()
    private var last: String?

    init(_ runner: RedisClusterConnection) { self.runner = runner }

    var idle: String? { lock.withLock { last } }

    private func kept(_ reply: RedisScriptReply) -> RedisScriptReply {
        if case .values(let values) = reply, let index = values.firstIndex(of: "idle"), index + 1 < values.count {
            lock.withLock { last = values[index + 1] }
        } else {
            lock.withLock { last = nil }
        }
        return reply
    }

    func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        kept(try await runner.evalSHA(sha1, key: key, arguments: arguments))
    }

    func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        kept(try await runner.eval(script, key: key, arguments: arguments))
    }

    func fcall(_ function: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        kept(try await runner.fcall(function, key: key, arguments: arguments))
    }

    func functionLoad(_ library: String) async throws -> RedisScriptReply {
        try await runner.functionLoad(library)
    }
}

/// Answers every script at once with an admission: the limiter's own cost, without a server.
private struct CannedRunner: RedisScriptRunner {
    func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        .values(["kind", "allowed", "remaining", "1"])
    }

    func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        .values(["kind", "allowed", "remaining", "1"])
    }
}

/// Throughput of a Redis Cluster against one master: the same clients, on the same keys, through
/// RedisClusterConnection, on a one-node cluster and on one of `masters` nodes, in alternating
/// rounds.
struct ClusterThroughput {
    var masters: Int
    var clients: Int
    /// Decisions per second over every round, median of the rounds.
    var oneMaster: Double
    var cluster: Double

    var table: String {
        let ratio = cluster / oneMaster
        return """
            cluster: \(clients) clients (tasks, a cluster connection each) on 32 keys, GCRA tryAcquire, admitted
            one master          \(String(format: "%8.0f", oneMaster)) decisions/s
            \(masters) masters           \(String(format: "%8.0f", cluster)) decisions/s, \(String(format: "%.0f", cluster / Double(masters))) per master
            ratio               \(String(format: "%.2f", ratio))x one master's (\(String(format: "%.2f", ratio / Double(masters)))x per master); the servers and the clients share this machine's \(ProcessInfo.processInfo.activeProcessorCount) cores
            """
    }

    var json: [String: Any] {
        ["masters": masters, "clients": clients, "oneMasterPerSecond": oneMaster, "clusterPerSecond": cluster]
    }
}

/// Measures ``ClusterThroughput``: `clients` tasks acquiring on 32 keys of their own tags.
func clusterThroughput(masters: Int = 3, clients: Int = 8, smoke: Bool) async throws -> ClusterThroughput {
    let single = try await RedisServer.start(cluster: true)
    defer { single.stop() }
    let cluster = try await RedisCluster.start(masters: masters)
    defer { cluster.stop() }
    let strategy = try GCRA(burst: 1_000_000_000, emissionIntervalNanoseconds: 1)
    let keys = (0..<32).map { "bench:{k\($0)}" }
    func limiters(_ seeds: [String]) throws -> [[RedisRateLimiter<GCRA, ContinuousClock>]] {
        try (0..<clients).map { _ in
            let client = try RedisClusterConnection(seeds: seeds)
            return keys.map { RedisRateLimiter(strategy, key: $0, runner: client) }
        }
    }
    let onOne = try limiters(["redis://127.0.0.1:\(single.port)"])
    let onCluster = try limiters(cluster.seeds)
    let duration: Duration = smoke ? .milliseconds(100) : .seconds(2)
    var one: [Double] = []
    var many: [Double] = []
    for round in 0..<(smoke ? 1 : 5) {
        let warm = round == 0
        _ = try await decisionsPerSecond(onOne, for: warm ? duration / 4 : .zero)
        _ = try await decisionsPerSecond(onCluster, for: warm ? duration / 4 : .zero)
        one.append(try await decisionsPerSecond(onOne, for: duration))
        many.append(try await decisionsPerSecond(onCluster, for: duration))
    }
    return ClusterThroughput(
        masters: masters, clients: clients, oneMaster: percentile(one, 0.5), cluster: percentile(many, 0.5))
}

/// Decisions per second of every client acquiring on random keys of its own limiters for `duration`.
private func decisionsPerSecond(
    _ clients: [[RedisRateLimiter<GCRA, ContinuousClock>]], for duration: Duration
) async throws -> Double {
    guard duration > .zero else { return 0 }
    let start = ContinuousClock.now
    let deadline = start + duration
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for limiters in clients {
            group.addTask {
                var count = 0
                var random = SystemRandomNumberGenerator()
                while ContinuousClock.now < deadline {
                    _ = try await limiters[Int.random(in: 0..<limiters.count, using: &random)].tryAcquire()
                    count += 1
                }
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return Double(total) / (Double(seconds) + Double(attoseconds) / 1e18)
}
