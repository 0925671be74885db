import Foundation
import RateLimitTestSupport
import RedisTestSupport
import Testing

// The Redis scripts of Sources/RateLimitRedis/Scripts (Spec/SharedLimits.md), driven by
// Implementations/redis/shim.py, on a real redis-server: the
// conformance suite through shim.py, and what the suite does not see: keys expiring on the
// server's clock, and leases. Each test starts its own server on a free port of 127.0.0.1, without
// persistence (the suite's first as a one-node Redis Cluster that owns every slot, so that a
// script that touched a key of another slot would fail, SHARED-9), and stops it, also when the
// test fails; the server also stops when this process ends however it ends, since a watcher kills
// it once the test's pipe to it closes. Without redis-server 7 or later the tests are skipped.
//
// Run time on a 2-core machine, about 15 s: 5 to 7 s for each suite run (the vectors and 30 random
// traces of up to 100 steps for each of the 7 strategies, seed 7: one EVALSHA an event; the
// default of up to 10,000 steps takes 150 s under ThreadSanitizer, past runCommand's limit), 2 s more for the one-node cluster to declare itself ok, under a second for the others
// (the server's clock test waits for expiries 300 ms ahead).

private let strategies = [
    "token-bucket", "token-bucket-interval", "gcra", "fixed-window", "sliding-window-log", "leaky-bucket-meter",
    "concurrency",
]
private let shim = "python3 Implementations/redis/shim.py"
private let cCompilerInstalled = ["cc", "gcc", "clang"].contains { name in
    (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
    }
}

@Suite(
    "The Redis scripts (Sources/RateLimitRedis/Scripts, Spec/SharedLimits.md)", .serialized, .tags(.realTime),
    .realTime(),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisConformanceRealTimeTests {
    @Test(
        "CONF-3 SHARED-1 SHARED-3 SHARED-9 SHARED-14 every strategy's script, and its function of the library, conforms exactly on a Redis Cluster node",
        arguments: ["", " --functions"])
    func conformance(option: String) async throws {
        try await offThePool {
            let server = try await RedisServer.start(cluster: true)
            defer { server.stop() }
            let run = try await runCommand(
                [
                    "--exec", shim + option, "--strategy", strategies.joined(separator: ","), "--random", "30",
                    "--random-steps", "100", "--seed", "7",
                ],
                environment: ["REDIS_PORT": "\(server.port)"])
            #expect(run.status == 0, "\(run.output)\(run.errors)")
            #expect(run.output.contains("PASS: 7 of 7 strategies conform at level exact"), "\(run.output)")
            for strategy in strategies {
                // The whole profile: every vector ran (none skipped), every random trace exact.
                let row = run.output.split(separator: "\n").first { $0.hasPrefix("\(strategy) ") } ?? ""
                let columns = row.split(separator: " ")
                #expect(columns.count > 8 && columns[1] == "exact" && columns[7] == "0", "\(strategy): \(row)")
                #expect(row.contains(" 30/0/0 "), "\(strategy): \(row)")
            }
            #expect(!run.output.contains("NOT CHECKED"), "the scripts declare the Spec's whole profile: \(run.output)")
            #expect(!run.output.contains("DIFF") && !run.output.contains("FAIL "), "\(run.output)")
        }
    }

    @Test("SHARED-5 CORE-15 forgetting each key once it is idle, on the suite's monotonic clock, changes no answer")
    func forgettingIdleKeys() async throws {
        try await offThePool {
            let server = try await RedisServer.start()
            defer { server.stop() }
            let run = try await runCommand(
                [
                    "--exec", "\(shim) --expire", "--strategy", strategies.joined(separator: ","), "--random", "30",
                    "--random-steps", "100", "--seed", "7",
                ],
                environment: ["REDIS_PORT": "\(server.port)"])
            #expect(run.status == 0, "\(run.output)\(run.errors)")
            #expect(run.output.contains("PASS: 7 of 7 strategies conform at level exact"), "\(run.output)")
            for strategy in strategies {
                let row = run.output.split(separator: "\n").first { $0.hasPrefix("\(strategy) ") } ?? ""
                #expect(row.contains(" exact ") && row.contains(" 30/0/0 "), "\(strategy): \(row)")
                // Declared, since expiry on a clock that goes back is not exact (SHARED-5).
                #expect(
                    run.output.contains("NOT CHECKED \(strategy): CORE-10 time going backwards (monotonic clock)"),
                    "\(run.output)")
            }
            #expect(!run.output.contains("DIFF") && !run.output.contains("FAIL "), "\(run.output)")
        }
    }

    @Test(
        "SHARED-2 SHARED-4 the matrix's Redis rows run on a server whose wall clock is the suite's: expiry exact to the millisecond",
        .enabled(
            if: cCompilerInstalled, "no C compiler (cc, gcc or clang) to build Implementations/common/redisclock.c"))
    func matrixServerClock() async throws {
        // Implementations/common/redisclock.py starts an unmodified redis-server with its wall clock
        // (and nothing else) read from a file, and checks TIME, expiry to the millisecond, lazy
        // deletion, a script's clock, a clock that goes back, and that real time changes nothing.
        let run = try await runCommand(
            ["python3", "Implementations/common/redisclock.py", "--self-test"], executable: "/usr/bin/env")
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.hasSuffix("the clock of redis-server is exact\n"), "\(run.output)")
        #expect(run.output.split(separator: "\n").filter { $0.hasPrefix("ok: ") }.count == 12, "\(run.output)")
    }

    @Test("SHARED-2 SHARED-4 on the server's clock a key expires when its state becomes idle, not before")
    func expiryOnTheServersClock() async throws {
        try await offThePool {
            let server = try await RedisServer.start()
            defer { server.stop() }
            let redis = try RESPConnection(port: server.port)
            // One acquire, or an acquire and its release, on the server's clock (now = ""): each
            // state becomes idle (CORE-15) 300 ms later, the interval bucket and the fixed window at
            // a boundary of their grid, aligned to the Unix epoch (SHARED-2), the concurrency
            // limiter at once after the release.
            let span: Int64 = 300_000_000
            var idleAt: [(key: String, idle: Int64)] = []
            for (strategy, configuration, permits, grid) in [
                ("gcra", ["2", "150000000"], ["2"], nil),  // tat = now + 2 · 150 ms
                ("token-bucket", ["2", "1", "150000000", ""], ["2"], nil),  // full after 2 · 150 ms
                ("token-bucket-interval", ["2", "1", "150000000", ""], ["2"], 150_000_000),  // full at the 2nd boundary
                ("fixed-window", ["2", "300000000"], ["1"], 300_000_000),  // the next window's start
                ("sliding-window-log", ["2", "300000000"], ["1"], nil),  // the entry expires at now + W
                ("leaky-bucket-meter", ["2", "1", "150000000", ""], ["2"], nil),  // empty after 2 · 150 ms
                ("concurrency", ["2"], ["1", "300000000"], nil),  // a lease of 300 ms
            ] as [(String, [String], [String], Int64?)] {
                let key = "{expiry}:\(strategy)"
                let before = try redis.serverNanoseconds()
                let reply = try redis.evaluate(strategy, key: key, ["acquire", ""] + configuration + permits)
                let after = try redis.serverNanoseconds()
                #expect(reply["kind"] == "allowed", "\(strategy): \(reply)")
                let idle = try #require(reply["idle"].flatMap { Int64($0) }, "\(strategy): \(reply)")
                if let grid {
                    // The boundary after which the state is idle: within span of now, on the grid.
                    #expect(
                        idle % grid == 0 && before < idle && idle - span <= after, "\(idle) in \(before)...\(after)")
                } else {
                    #expect(
                        before + span <= idle && idle <= after + span, "\(strategy): \(idle) in \(before)...\(after)")
                }
                // PEXPIREAT ⌈idle / 10^6⌉ ms: PTTL counts down to that millisecond from the server's.
                let ttl = try #require(try redis.call("PTTL", key).integer)
                let read = try redis.serverNanoseconds()
                let expiry = (idle + 999_999) / 1_000_000
                #expect(
                    after / 1_000_000 + ttl <= expiry && expiry <= read / 1_000_000 + ttl,
                    "\(strategy): PTTL \(ttl) ms between \(after) and \(read) ns, expiry \(expiry) ms")
                idleAt.append((key, idle))
            }
            // Released, the concurrency limiter holds nothing: idle at once.
            let held = try redis.evaluate(
                "concurrency", key: "{expiry}:released", ["acquire", "", "2", "1", "60000000000"])
            let lease = try #require(held["lease"])
            let released = try redis.evaluate(
                "concurrency", key: "{expiry}:released", ["release", "", "2", "1", lease])
            #expect(released["kind"] == "allowed" && released["remaining"] == "2", "\(released)")
            idleAt.append(("{expiry}:released", try #require(released["idle"].flatMap { Int64($0) })))
            // A bucket that starts below its capacity is never idle: its key never expires.
            let partial = try redis.evaluate(
                "token-bucket", key: "{expiry}:partial", ["acquire", "", "2", "1", "1", "1", "1"])
            #expect(partial["idle"] == "never", "\(partial)")
            #expect(try redis.call("PTTL", "{expiry}:partial").integer == -1)

            // Each key expires at the millisecond its state becomes idle, exactly: PEXPIRETIME is the
            // absolute expiry Redis keeps (so nothing here waits on Redis's real-time clock). A key
            // already idle when written is gone at once.
            for (key, idle) in idleAt {
                let expiry = (idle + 999_999) / 1_000_000
                let stored = try #require(try redis.call("PEXPIRETIME", key).integer)
                if stored == -2 {
                    #expect(
                        try redis.serverNanoseconds() / 1_000_000 >= expiry,
                        "\(key) gone before its state became idle at \(idle) ns")
                } else {
                    #expect(stored == expiry, "\(key) expires at \(stored) ms, its state is idle at \(idle) ns")
                }
            }
            #expect(try redis.call("EXISTS", "{expiry}:partial").integer == 1)
        }
    }

    @Test("SHARED-6 SHARED-7 a lease's permits come back at its expiry; releasing it afterwards is invalid")
    func leases() async throws {
        try await offThePool {
            let server = try await RedisServer.start()
            defer { server.stop() }
            let redis = try RESPConnection(port: server.port)
            // The caller's clock (instants in ns); limit 3. Lease handles: expiry, acquired, number.
            let a = "00000000000000000100:00000000000000000000:1"
            let b = "00000000000000001050:00000000000000000050:2"
            let c = "00000000000000001100:00000000000000000100:3"
            let unknown = "00000000000000000999:00000000000000000001:7"
            let steps: [(arguments: [String], expected: [String: String])] = [
                // 1: a lease of 2 until 100; 2: a lease of 1 until 1050: all 3 held.
                (["acquire", "0", "3", "2", "100"], allowed(1, lease: a, expiresAt: "100", idle: "100")),
                (["acquire", "50", "3", "1", "1000"], allowed(0, lease: b, expiresAt: "1050", idle: "1050")),
                (["acquire", "99", "3", "1", "1000"], ["kind": "rejectedUntilRelease", "shortfall": "1"]),
                // 4: at 100 the first lease has expired: its 2 permits are back, no release needed.
                (["acquire", "100", "3", "0", "1000"], allowed(2)),
                (["acquire", "100", "3", "2", "1000"], allowed(0, lease: c, expiresAt: "1100", idle: "1100")),
                // 6, 7: the expired lease and an unknown one hold nothing: nothing comes back twice.
                (["release", "120", "3", "2", a], invalid("permits", "exceedsMaximum", maximum: "0")),
                (["release", "120", "3", "1", unknown], invalid("permits", "exceedsMaximum", maximum: "0")),
                (["acquire", "120", "3", "1", "1000"], ["kind": "rejectedUntilRelease", "shortfall": "1"]),
                // 9, 10: a lease in force gives back at most what it holds.
                (["release", "130", "3", "2", b], invalid("permits", "exceedsMaximum", maximum: "1")),
                (["release", "130", "3", "1", b], allowed(1, idle: "1100")),
                // 11: an instant before the last is evaluated at the last (130): the lease runs from there.
                (
                    ["acquire", "90", "3", "1", "5"],
                    allowed(0, lease: "00000000000000000135:00000000000000000130:4", expiresAt: "135", idle: "1100")
                ),
                (["acquire", "134", "3", "0", "5"], allowed(0)),
                (["acquire", "135", "3", "0", "5"], allowed(1)),
                // 14: a release naming no lease takes from the leases that expire first (the third).
                (["release", "140", "3", "1", ""], allowed(2, idle: "1100")),
                (["acquire", "150", "3", "1", "0"], invalid("leaseNanoseconds", "mustBePositive")),
                (
                    ["acquire", "150", "3", "1", "9223372036854775809"],
                    invalid("leaseNanoseconds", "exceedsMaximum", maximum: "9223372036854775808")
                ),
                (["acquire", "1099", "3", "0", "5"], allowed(2)),
                (["acquire", "1100", "3", "0", "5"], allowed(3)),
            ]
            for (index, step) in steps.enumerated() {
                let reply = try redis.evaluate("concurrency", key: "{leases}:limit", step.arguments)
                #expect(reply == step.expected, "step \(index + 1) \(step.arguments): got \(reply)")
            }
        }
    }

    @Test("SHARED-8 a reset forgets every lease and handles are never reused; a reconfigure keeps the leases")
    func leasesAcrossResetAndReconfigure() async throws {
        try await offThePool {
            let server = try await RedisServer.start()
            defer { server.stop() }
            let redis = try RESPConnection(port: server.port)
            let before = "00000000000000001000:00000000000000000000:1"
            let after = "00000000000000001000:00000000000000000010:2"  // same expiry, a new handle
            let kept = "00000000000000000130:00000000000000000030:3"
            let steps: [(arguments: [String], expected: [String: String])] = [
                (["acquire", "0", "2", "1", "1000"], allowed(1, lease: before, expiresAt: "1000", idle: "1000")),
                (["reset", "10", "2"], allowed(2, idle: "10")),
                (["acquire", "10", "2", "1", "990"], allowed(1, lease: after, expiresAt: "1000", idle: "1000")),
                (["release", "20", "2", "1", before], invalid("permits", "exceedsMaximum", maximum: "0")),
                (["release", "20", "2", "1", after], allowed(2, idle: "20")),
                (["acquire", "30", "2", "2", "100"], allowed(0, lease: kept, expiresAt: "130", idle: "130")),
                // To a limit of 1 with 2 held (CL-10): the lease is kept, whole.
                (["reconfigure", "40", "2", "1"], allowed(0, idle: "130")),
                (["release", "50", "1", "1", kept], allowed(0, idle: "130")),
                (["release", "60", "1", "1", kept], allowed(1, idle: "60")),
                (["release", "70", "1", "1", kept], invalid("permits", "exceedsMaximum", maximum: "0")),
            ]
            for (index, step) in steps.enumerated() {
                let reply = try redis.evaluate("concurrency", key: "{reset}:limit", step.arguments)
                #expect(reply == step.expected, "step \(index + 1) \(step.arguments): got \(reply)")
            }
        }
    }
}

// MARK: Expected replies (the scripts' flat name/value arrays, as dictionaries)

private func allowed(_ remaining: Int, lease: String? = nil, expiresAt: String? = nil, idle: String? = nil)
    -> [String: String]
{
    var reply = ["kind": "allowed", "remaining": "\(remaining)"]
    if let lease { reply["lease"] = lease }
    if let expiresAt { reply["expiresAt"] = expiresAt }
    if let idle { reply["idle"] = idle }
    return reply
}

private func invalid(_ field: String, _ problem: String, maximum: String? = nil) -> [String: String] {
    var reply = ["kind": "invalid", "field": field, "problem": problem]
    if let maximum { reply["maximum"] = maximum }
    return reply
}

// MARK: Running a script as the files say

extension RESPConnection {
    /// Runs a strategy's script (prelude.lua, then the strategy's file, as shim.py sends it) on
    /// `key`; its reply, a flat array of names and values, as a dictionary.
    fileprivate func evaluate(_ strategy: String, key: String, _ argv: [String]) throws -> [String: String] {
        let folder = Repository.path("Sources/RateLimitRedis/Scripts")
        let source =
            try String(contentsOfFile: "\(folder)/prelude.lua", encoding: .utf8) + "\n"
            + String(contentsOfFile: "\(folder)/\(strategy).lua", encoding: .utf8)
        let reply = try call(arguments: ["EVAL", source, "1", key] + argv)
        guard case .array(let items) = reply, items.count % 2 == 0 else {
            throw RedisTestFailure("\(strategy) \(argv): \(reply)")
        }
        let texts = items.compactMap(\.text)
        return Dictionary(
            uniqueKeysWithValues: stride(from: 0, to: texts.count, by: 2).map { (texts[$0], texts[$0 + 1]) })
    }
}
