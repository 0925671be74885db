import Foundation
import RateLimitConformance
import RateLimitRedis
import RateLimitTestSupport
import RedisTestSupport
import Testing

// Faults, each with the policy Spec/SharedLimits.md states (SHARED-10 to SHARED-12): a restart
// that loses every limit, a flushed script cache, a store that refuses connections or never
// answers, keys evicted under memory pressure and scripts refused by it. Time that matters (the
// timeout, the fallback's retry) is a manual clock the test moves; the servers are real.

@Suite(
    "RateLimitRedis under faults (SHARED-10 to SHARED-12)", .serialized, .tags(.realTime), .realTime(),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisFaultRealTimeTests {
    /// Bursts of 3, then one permit an hour: nothing comes back by itself during a test.
    static let hourly = try! GCRA(burst: 3, emissionIntervalNanoseconds: 3_600_000_000_000)

    @Test(
        "SHARED-12 SHARED-14 a restart loses every limit: one failed call, then the library or the script is sent again and a full burst",
        arguments: [true, false])
    func serverRestart(functions: Bool) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let connection = try RESPConnection(port: server.port)
        let runner: any RedisScriptRunner = functions ? connection : ScriptsOnly(connection)
        // What is checked is what a restart loses, not how fast a restarted server answers: the
        // limiter's timeout runs on a clock nobody moves (the default 1 s of real time failed once
        // beside the rest of `make verify`, and under ThreadSanitizer); the connection's own timeout
        // bounds a hang.
        let limiter = RedisRateLimiter(Self.hourly, key: "{restart}:gcra", runner: runner, clock: ManualClock())
        var answers: [RateLimitResult] = []
        for _ in 0..<4 { answers.append(try await limiter.tryAcquire()) }
        #expect(answers.prefix(3) == [.allowed(remaining: 2), .allowed(remaining: 1), .allowed(remaining: 0)])
        #expect(answers[3].retryAfter != nil, "\(answers[3])")
        try server.restart()
        // The connection the client held is gone: that call fails (fail closed: a typed error).
        await #expect(throws: RedisLimitError.self) { try await limiter.tryAcquire() }
        guard case .connectionFailed = limiter.lastFailure else {
            Issue.record("expected connectionFailed, got \(String(describing: limiter.lastFailure))")
            return
        }
        // The next one reconnects; the new server knows no library (Function not found, then
        // FUNCTION LOAD) or no script (NOSCRIPT, then EVAL), and no limit: a full burst again, the
        // cost of a restart without persistence.
        answers = []
        for _ in 0..<4 { answers.append(try await limiter.tryAcquire()) }
        #expect(answers.prefix(3) == [.allowed(remaining: 2), .allowed(remaining: 1), .allowed(remaining: 0)])
        #expect(answers[3].retryAfter != nil, "\(answers[3])")
        #expect(limiter.lastFailure == nil)
        let counts = connection.commandCounts
        if functions {
            #expect(counts["FUNCTION"] == 2 && counts["EVAL"] == nil, "\(counts)")
        } else {
            #expect(counts["EVAL"] == 2 && counts["FCALL"] == nil, "\(counts)")
        }
    }

    @Test(
        "SHARED-10 SHARED-14 a flushed script cache costs one EVAL, a flushed library one FUNCTION LOAD, and neither changes an answer",
        arguments: [true, false])
    func scriptCacheFlushed(functions: Bool) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let connection = try RESPConnection(port: server.port)
        let clock = ManualClock()
        let bucket = try TokenBucket(capacity: 4, permitsPerPeriod: 1, periodNanoseconds: 100)
        let limiter = RedisRateLimiter(
            bucket, key: "{flush}:bucket", runner: functions ? connection : ScriptsOnly(connection),
            clockSource: .caller { instant(of: clock) }, clock: clock)
        var model = RateLimiter(bucket, at: .origin)
        // (offset ns, permits); the cache is flushed before the fourth.
        let steps: [(Int64, Int64)] = [(0, 3), (10, 2), (50, 1), (60, 2), (250, 3), (260, 1)]
        for (index, (offset, permits)) in steps.enumerated() {
            if index == 3 {
                #expect(try await connection.send([functions ? "FUNCTION" : "SCRIPT", "FLUSH"]) == .status("OK"))
            }
            clock.set(to: ManualClock.Instant(offset: .nanoseconds(offset)))
            let expected = model.step(.acquire(permits), at: try RateLimitInstant(nanoseconds: offset))
            #expect(try await limiter.tryAcquire(permits) == expected, "step \(index + 1) at \(offset) ns")
        }
        let counts = connection.commandCounts
        if functions {
            // Every call an FCALL; the library missing twice (a new server, then the flush), each
            // time loaded and the call made again.
            #expect(counts["FUNCTION"] == 3, "\(counts)")  // the flush is one of them
            #expect(counts["FCALL"] == steps.count + 2 && counts["EVALSHA"] == nil, "\(counts)")
        } else {
            // Every call an EVALSHA; NOSCRIPT twice (a new server, then the flush), each answered by EVAL.
            #expect(counts["EVAL"] == 2 && counts["FCALL"] == nil, "\(counts)")
            #expect(counts["EVALSHA"] == steps.count, "\(counts)")
        }
    }

    @Test(
        "SHARED-14 a server that lets the user run no Functions (NOPERM), or has no FCALL, is sent scripts from then on, with the same answers",
        arguments: ["acl", "renamed"])
    func functionsUnavailable(how: String) async throws {
        // Redis before 7.0 answers FCALL as an unknown command: a server whose FCALL is renamed away
        // answers the same.
        let server = try await RedisServer.start(
            options: how == "renamed" ? ["--rename-command", "FCALL", "FCALL_\(UUID().uuidString.prefix(8))"] : [])
        defer { server.stop() }
        var url = "redis://127.0.0.1:\(server.port)"
        if how == "acl" {
            let admin = try RESPConnection(port: server.port)
            #expect(
                try await admin.send(["ACL", "SETUSER", "app", "on", ">secret", "~*", "+@all", "-fcall", "-function"])
                    == .status("OK"))
            url = "redis://app:secret@127.0.0.1:\(server.port)"
        }
        let connection = try RedisConnection(url: url)
        let clock = ManualClock()
        let limiter = RedisRateLimiter(
            Self.hourly, key: "{plain}:gcra", runner: connection, clockSource: .caller { instant(of: clock) },
            clock: clock)
        var answers: [RateLimitResult] = []
        for _ in 0..<4 { answers.append(try await limiter.tryAcquire()) }
        #expect(answers.prefix(3) == [.allowed(remaining: 2), .allowed(remaining: 1), .allowed(remaining: 0)])
        #expect(answers[3].retryAfter != nil, "\(answers[3])")
        #expect(limiter.lastFailure == nil)
        // One FCALL refused, then scripts only: the first EVALSHA found none (NOSCRIPT, then EVAL).
        let counts = connection.commandCounts
        #expect(counts["FCALL"] == 1 && counts["FUNCTION"] == nil, "\(counts)")
        #expect(counts["EVALSHA"] == 4 && counts["EVAL"] == 1, "\(counts)")
    }

    @Test("SHARED-10 SHARED-11 a refused connection fails closed at once, or the fallback decides until it retries")
    func unreachable() async throws {
        let nobody = try unusedPort()
        let clock = ManualClock()
        let closed = RedisRateLimiter(
            Self.hourly, key: "{down}:gcra", runner: RESPConnection(lazilyTo: nobody), clock: clock)
        await #expect(throws: RedisLimitError.self) { try await closed.tryAcquire() }
        guard case .connectionFailed = closed.lastFailure else {
            Issue.record("expected connectionFailed, got \(String(describing: closed.lastFailure))")
            return
        }
        #expect(clock.now == ManualClock.Instant(offset: .zero), "no time passed: refused at once")

        // A fallback of 2 permits, then 1 a second, for this process; the store again after 5 s.
        let router = Router(RESPConnection(lazilyTo: nobody))
        let local = try GCRA(burst: 2, emissionIntervalNanoseconds: 1_000_000_000)
        let limiter = RedisRateLimiter(
            Self.hourly, key: "{down}:gcra", runner: router, onFailure: .fallback(local, retryAfter: .seconds(5)),
            clock: clock)
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 1))
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 0))
        #expect(try await limiter.tryAcquire() == .rejected(retryAfterNanoseconds: 1_000_000_000))
        #expect(router.calls == 1, "one call failed; the fallback answered the others without calling")
        // The store comes back; before 5 s the fallback still answers (its permit is back at 1 s).
        let server = try await RedisServer.start()
        defer { server.stop() }
        router.target = try RESPConnection(port: server.port)
        clock.advance(by: .seconds(4))
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 1))
        #expect(router.calls == 1)
        // At 5 s the store decides again: its own limit, untouched, and no failure recorded.
        clock.advance(by: .seconds(1))
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 2))
        #expect(router.calls == 2 && limiter.lastFailure == nil)
    }

    @Test(
        "SHARED-10 SHARED-11 a store that never answers is timedOut after the timeout, failing closed or falling back")
    func silentStore() async throws {
        let silent = try SilentListener()
        let clock = ManualClock()
        let closed = RedisRateLimiter(
            Self.hourly, key: "{silent}:gcra", runner: RESPConnection(lazilyTo: silent.port),
            timeout: .milliseconds(200), clock: clock)
        let call = Task { try await closed.tryAcquire() }
        // The call is sent and its timer armed; 200 ms later on the limiter's clock it gives up.
        #expect(await eventually { clock.nextDeadline == ManualClock.Instant(offset: .milliseconds(200)) })
        clock.advance(by: .milliseconds(200))
        let result = await call.result
        guard case .failure(let error) = result, let failure = error as? RedisLimitError else {
            Issue.record("expected a RedisLimitError, got \(result)")
            return
        }
        #expect(failure == .timedOut(.milliseconds(200)))

        // The same with a fallback (and a clock of its own, so the deadline awaited is this call's).
        let local = try GCRA(burst: 1, emissionIntervalNanoseconds: 1_000_000_000)
        let fallbackClock = ManualClock()
        let falling = RedisRateLimiter(
            Self.hourly, key: "{silent}:gcra", runner: RESPConnection(lazilyTo: silent.port),
            timeout: .milliseconds(200), onFailure: .fallback(local), clock: fallbackClock)
        let decided = Task { try await falling.tryAcquire() }
        #expect(await eventually { fallbackClock.nextDeadline == ManualClock.Instant(offset: .milliseconds(200)) })
        fallbackClock.advance(by: .milliseconds(200))
        #expect(try await decided.value == .allowed(remaining: 0))
        #expect(falling.lastFailure == .timedOut(.milliseconds(200)))
        // Within the retry interval the fallback answers at once, without a call.
        #expect(try await falling.tryAcquire() == .rejected(retryAfterNanoseconds: 1_000_000_000))
    }

    @Test("SHARED-12 volatile-ttl evicts limiter keys first under memory pressure: the limit starts again")
    func evictedKey() async throws {
        let server = try await RedisServer.start(options: [
            "--maxmemory-policy", "volatile-ttl", "--maxmemory-samples", "64",
        ])
        defer { server.stop() }
        let connection = try RESPConnection(port: server.port)
        let limiter = RedisRateLimiter(Self.hourly, key: "{evict}:gcra", runner: connection, clock: ManualClock())
        // 20 values of 100 kB that expire in a day; the limiter's key expires when its state is idle,
        // in 3 hours, so it is the first key volatile-ttl evicts.
        try await fill(connection, keys: 20, expiring: true)
        for _ in 0..<3 { _ = try await limiter.tryAcquire() }
        #expect(try await limiter.tryAcquire().retryAfter != nil)
        try await squeeze(connection, by: 150_000)
        // The next script finds no key: a new limiter, a full burst again.
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 2))
        #expect(try await info(connection, "evicted_keys").flatMap { Int($0) } ?? 0 >= 1)
    }

    @Test("SHARED-12 under noeviction memory pressure refuses the script: serverError, and the limit is kept")
    func outOfMemory() async throws {
        let server = try await RedisServer.start(options: ["--maxmemory-policy", "noeviction"])
        defer { server.stop() }
        let connection = try RESPConnection(port: server.port)
        let limiter = RedisRateLimiter(Self.hourly, key: "{oom}:gcra", runner: connection, clock: ManualClock())
        try await fill(connection, keys: 20, expiring: false)
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 2))
        try await squeeze(connection, by: 150_000)
        await #expect(throws: RedisLimitError.self) { try await limiter.tryAcquire() }
        guard case .serverError(let message) = limiter.lastFailure else {
            Issue.record("expected serverError, got \(String(describing: limiter.lastFailure))")
            return
        }
        #expect(message.hasPrefix("OOM"), "\(message)")
        // Memory back: the limit is where it was, nothing counted while refused.
        #expect(try await connection.send(["CONFIG", "SET", "maxmemory", "0"]) == .status("OK"))
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 1))
    }
}

/// A runner that forwards to a connection the test can replace, counting the calls.
final class Router: RedisScriptRunner, @unchecked Sendable {
    // @unchecked: `current` and `count` are read and written only while `lock` is held.
    private let lock = NSLock()
    private var current: RESPConnection
    private var count = 0

    init(_ target: RESPConnection) { current = target }

    var target: RESPConnection {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }

    /// Script calls sent (EVALSHA; an EVAL after NOSCRIPT is the same call).
    var calls: Int { lock.withLock { count } }

    func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        let target = lock.withLock {
            count += 1
            return current
        }
        return try await target.evalSHA(sha1, key: key, arguments: arguments)
    }

    func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply {
        try await target.eval(script, key: key, arguments: arguments)
    }
}

/// Writes `keys` values of 100 kB, expiring in a day or never.
private func fill(_ connection: RESPConnection, keys: Int, expiring: Bool) async throws {
    let value = String(repeating: "x", count: 100_000)
    for index in 0..<keys {
        let reply = try await connection.send(
            ["SET", "{junk}:\(index)", value] + (expiring ? ["EX", "86400"] : []))
        #expect(reply == .status("OK"))
    }
}

/// Sets maxmemory `bytes` below the memory in use.
private func squeeze(_ connection: RESPConnection, by bytes: Int) async throws {
    let used = try #require(try await info(connection, "used_memory").flatMap { Int($0) })
    #expect(try await connection.send(["CONFIG", "SET", "maxmemory", "\(used - bytes)"]) == .status("OK"))
}

/// One field of INFO.
private func info(_ connection: RESPConnection, _ field: String) async throws -> String? {
    guard case .bulk(let text?) = try await connection.send(["INFO"]) else { return nil }
    let line = text.split(whereSeparator: \.isNewline).first { $0.hasPrefix("\(field):") }
    return line.map { String($0.dropFirst(field.count + 1)) }
}
