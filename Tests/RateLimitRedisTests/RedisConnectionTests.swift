import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import RedisTestSupport
import Testing

@testable import RateLimitRedis

/// The Redis client the package ships (RedisConnection.swift): RESP2 framing, URLs, and a real
/// server with a password and a database.
@Suite("RedisConnection: the runner that ships (SHARED-10)")
struct RedisConnectionTests {
    @Test("SHARED-10 a reply split anywhere is read whole, once all of it has come, and no further")
    func repliesSplitAnywhere() throws {
        let wire = Array("*4\r\n$4\r\nkind\r\n$7\r\nallowed\r\n:3\r\n*2\r\n$-1\r\n+OK\r\n-ERR next\r\n".utf8)
        let whole = try #require(try RESP.reply(in: wire[...]))
        #expect(
            whole.0
                == .array([.bulk("kind"), .bulk("allowed"), .integer(3), .array([.null, .status("OK")])]))
        #expect(whole.1 == wire.count - "-ERR next\r\n".utf8.count, "the next reply stays in the buffer")
        for end in 0..<whole.1 {
            #expect(try RESP.reply(in: wire[..<end]) == nil, "a reply cut after \(end) bytes is not read yet")
        }
        #expect(try RESP.reply(in: Array("*-1\r\n".utf8)[...])?.0 == .null)
        #expect(try RESP.reply(in: Array("$0\r\n\r\n".utf8)[...])?.0 == .bulk(""))
    }

    @Test(
        "SHARED-10 hostile replies are refused with an error, never a trap, a stack overflow or an allocation the server chooses",
        arguments: [
            "*1\r\n" + String(repeating: "*1\r\n", count: 40) + ":1\r\n", "$1000000000000\r\n", "$-2\r\n",
            "$3\r\nabcde\r\n", ":twelve\r\n", "?what\r\n", "*-5\r\n", ":99999999999999999999\r\n",
        ])
    func hostileReplies(wire: String) {
        #expect(throws: RedisConnectionError.self) { try RESP.reply(in: Array(wire.utf8)[...]) }
    }

    @Test("A URL names the host, port, credentials and database; any other form is refused, naming it")
    func urls() throws {
        let plain = try RedisConnection()
        #expect(plain.host == "127.0.0.1" && plain.port == 6379)
        let full = try RedisConnection(url: "redis://limiter:secret@redis.internal:6380/2")
        #expect(full.host == "redis.internal" && full.port == 6380)
        for bad in ["http://127.0.0.1:6379", "redis://", "redis://host/db", "redis://host:6379/1?x=1", "127.0.0.1"] {
            #expect(throws: RedisConnectionError.self, "\(bad)") { try RedisConnection(url: bad) }
        }
    }

    @Test(
        "SHARED-9 a cluster's slot map and redirections are read from what the nodes answer; anything else is skipped")
    func clusterReplies() {
        func range(_ first: Int64, _ last: Int64, _ host: RedisReply, _ port: Int64) -> RedisReply {
            .array([.integer(first), .integer(last), .array([host, .integer(port), .bulk("id")])])
        }
        let reply = RedisReply.array([
            range(0, 9, .bulk("10.0.0.1"), 7000),
            range(10, 19, .bulk(""), 7001),  // the node that answered
            range(30, 20, .bulk("10.0.0.3"), 7002),  // out of order
            range(40, 16_384, .bulk("10.0.0.4"), 7003),  // past the last slot
            range(-5, 50, .bulk("10.0.0.5"), 7004),  // negative
            range(60, 69, .bulk("10.0.0.6"), 70_000),  // no such port
            .array([.integer(70), .integer(79)]),  // no master
            .bulk("garbage"),
        ])
        let owners = RedisClusterConnection.slotOwners(reply, answeredBy: "10.0.0.9")
        #expect(owners?.count == RedisClusterConnection.slotCount)
        #expect(owners?[0] == "10.0.0.1:7000" && owners?[9] == "10.0.0.1:7000" && owners?[10] == "10.0.0.9:7001")
        #expect(owners?[20...].allSatisfy { $0 == nil } == true)
        #expect(RedisClusterConnection.slotOwners(.status("OK"), answeredBy: "x") == nil)
        #expect(RedisClusterConnection.redirection("MOVED 3999 127.0.0.1:6381")! == ("MOVED", "127.0.0.1:6381"))
        #expect(RedisClusterConnection.redirection("(Redis) ASK 3999 10.0.0.2:6379")! == ("ASK", "10.0.0.2:6379"))
        for other in ["MOVED", "MOVED x 1.2.3.4:5", "ASK 1 nohost", "ERR unknown", ""] {
            #expect(RedisClusterConnection.redirection(other) == nil, "\(other)")
        }
    }
}

@Suite(
    "RedisConnection against a real redis-server", .tags(.realTime), .realTime(),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisConnectionRealTimeTests {
    @Test("SHARED-1 with a password and a database: AUTH and SELECT, then the limiter's scripts")
    func passwordAndDatabase() async throws {
        let server = try await RedisServer.start(options: ["--requirepass", "secret"])
        defer { server.stop() }
        let anonymous = try RedisConnection(url: "redis://127.0.0.1:\(server.port)")
        guard case .error(let refusal) = try anonymous.call(["PING"]) else {
            Issue.record("a server with a password answered a connection without one")
            return
        }
        #expect(refusal.hasPrefix("NOAUTH"), "\(refusal)")
        let wrong = try RedisConnection(url: "redis://:nope@127.0.0.1:\(server.port)")
        #expect(throws: RedisConnectionError.self) { try wrong.connect() }
        let redis = try RedisConnection(url: "redis://:secret@127.0.0.1:\(server.port)/3")
        #expect(try redis.call(["CLIENT", "INFO"]).text?.contains(" db=3 ") == true)
        // The limiter's timeout runs on a clock nobody moves: what is checked is AUTH and SELECT, not
        // how fast a server answers a machine under load (the connection's own timeout bounds a hang).
        let limiter = RedisRateLimiter(
            try GCRA(burst: 2, emissionInterval: .seconds(3_600)), key: "rl", runner: redis, clock: ManualClock())
        var answers: [RateLimitResult] = []
        for _ in 0..<3 { answers.append(try await limiter.tryAcquire()) }
        #expect(answers.prefix(2) == [.allowed(remaining: 1), .allowed(remaining: 0)])
        #expect(answers[2].retryAfter != nil, "\(answers[2])")
        #expect(try redis.call(["EXISTS", "rl"]) == .integer(1), "the key lives in database 3")
        // Through the Functions library (SHARED-14): the first call found it missing and loaded it.
        #expect(redis.commandCounts["FCALL"] == 4 && redis.commandCounts["FUNCTION"] == 1, "\(redis.commandCounts)")
    }
}
