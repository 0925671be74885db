import Foundation
import RateLimitRedis
import RateLimitTestSupport
import RedisTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A failover for real (Spec/SharedLimits.md, SHARED-15): a master and its replica, both Redis
// Cluster nodes; four workers acquire at full rate from one GCRA key through the cluster client.
// The replica is frozen (SIGSTOP) and cut off (CLIENT KILL TYPE replica), so that the master's
// decisions from then on never reach it; the master is killed (SIGKILL), the replica thawed and
// promoted (CLUSTER FAILOVER TAKEOVER), and the workers go on until it has admitted for a while.
//
// The workers' own records judge the limit: each admission was decided at a server instant
// between the worker's send and its reply, so the admissions sent at or after s and answered by r
// lie in a server window of at most r − s, which admits at most B + ⌊(r − s) / T⌋ (GCRA-11). A
// correct store never exceeds that; the lost decisions do. The GCRA's burst is long (τ = B·T = 5
// s) so that the promoted replica, whose state is older, admits again what the lost decisions
// admitted however long the takeover took on a busy machine.

@Suite(
    "RateLimitRedis across a failover (SHARED-15)", .serialized, .tags(.realTime), .realTime(),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisFailoverRealTimeTests {
    static let (burst, interval): (Int64, Int64) = (100, 50_000_000)  // 100, then one permit per 50 ms

    @Test(
        "SHARED-15 a promoted replica that missed the last decisions admits again what they admitted, no more than a burst"
    )
    func lostDecisions() async throws {
        let run = try await Self.failover(acknowledgement: nil)
        print("failover, no WAIT: \(run)")
        #expect(run.excess >= 1, "the cut-off decisions were not admitted again: \(run)")
        #expect(run.excess <= min(Self.burst, run.missed), "\(run)")
    }

    @Test("SHARED-15 with WAIT for the replica, a failover admits nothing over the bound")
    func acknowledgedDecisions() async throws {
        let acknowledgement = try RedisReplicaAcknowledgement(replicas: 1, within: .milliseconds(20))
        let run = try await Self.failover(acknowledgement: acknowledgement)
        print("failover, WAIT 1 20 ms: \(run)")
        #expect(run.excess <= 0, "\(run)")
        #expect(run.notAcknowledged >= 1, "no decision went unacknowledged while the replica was cut off: \(run)")
    }

    @Test("SHARED-15 a decision no replica acknowledges is not given: NOREPLICAS, answered by the failure policy")
    func unacknowledged() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let acknowledgement = try RedisReplicaAcknowledgement(replicas: 1, within: .microseconds(1500))
        #expect(acknowledgement.milliseconds == 2)  // rounded up: WAIT takes whole milliseconds
        let redis = try RedisConnection(url: "redis://127.0.0.1:\(server.port)", acknowledgement: acknowledgement)
        let gcra = try GCRA(burst: 2, emissionIntervalNanoseconds: 3_600_000_000_000)  // 2, then one an hour
        let closed = RedisRateLimiter(gcra, key: "rl:{closed}", runner: redis)
        await #expect {
            _ = try await closed.tryAcquire(1)
        } throws: { error in
            guard case .serverError(let message) = error as? RedisLimitError else { return false }
            return message.hasPrefix("NOREPLICAS 0 of 1 replicas acknowledged the decision within 2 ms")
        }
        // The master counted the permit it did not give: only unused permits can be lost.
        let plain = RedisRateLimiter(
            gcra, key: "rl:{closed}", runner: try RedisConnection(url: "redis://127.0.0.1:\(server.port)"))
        #expect(try await plain.tryAcquire(2).isAdmitted == false)
        #expect(try await plain.tryAcquire(1).isAdmitted)
        // A refusal changes nothing and is answered as the store gave it, replicas or not.
        guard case .rejected = try await closed.tryAcquire(1) else {
            Issue.record("a refusal waited for the replicas")
            return
        }
        let local = RedisRateLimiter(gcra, key: "rl:{local}", runner: redis, onFailure: .fallback(gcra))
        #expect(try await local.tryAcquire(2) == .allowed(remaining: 0))
        // Each call's WAIT is sent with it, before its reply is known: the first FCALL (the library
        // not loaded yet) and the refusal had one too.
        #expect(redis.commandCounts["FCALL"] == 4 && redis.commandCounts["WAIT"] == 4, "\(redis.commandCounts)")
        // WAIT's reply comes after its wait: one as long as the connection's timeout is refused.
        #expect(throws: RedisConnectionError.self) {
            try RedisConnection(
                timeout: .milliseconds(50),
                acknowledgement: try RedisReplicaAcknowledgement(replicas: 1, within: .milliseconds(50)))
        }
        for (replicas, timeout) in [(0, Duration.milliseconds(1)), (1, .zero), (1, .seconds(86_401))] {
            #expect(throws: RedisConnectionError.self) {
                try RedisReplicaAcknowledgement(replicas: replicas, within: timeout)
            }
        }
    }

    /// Runs the failover with the workers' connections waiting for `acknowledgement`, and measures.
    static func failover(acknowledgement: RedisReplicaAcknowledgement?) async throws -> FailoverRun {
        let master = try await RedisServer.start(cluster: true)
        defer { master.stop() }
        let replica = try await RedisServer.startClusterNode()
        defer { replica.stop() }
        try await RedisCluster.attach(replica: replica, to: master)
        var newReplica: RedisServer?
        defer { newReplica?.stop() }

        let log = FailoverLog()
        let seeds = ["redis://127.0.0.1:\(master.port)", "redis://127.0.0.1:\(replica.port)"]
        let gcra = try GCRA(burst: burst, emissionIntervalNanoseconds: interval)
        let clients = try (0..<4).map { _ in
            try RedisClusterConnection(seeds: seeds, timeout: .seconds(5), acknowledgement: acknowledgement)
        }
        let workers = Task {
            await withTaskGroup(of: Void.self) { group in
                for client in clients {
                    group.addTask {
                        let limiter = RedisRateLimiter(gcra, key: "rl:{failover}", runner: client, timeout: .seconds(5))
                        while !log.stopped {
                            let wallClock = WallClockOffset.now()
                            let sent = ContinuousClock.now
                            do throws(RedisLimitError) {
                                let result = try await limiter.tryAcquire(1)
                                log.record(
                                    admitted: result.isAdmitted, sent: sent, answered: .now, wallClock: wallClock)
                            } catch {
                                log.record(error)
                            }
                        }
                    }
                }
            }
        }
        defer { log.stop() }
        func waitFor(_ what: String, _ condition: () -> Bool) async throws {
            guard await eventually(within: .seconds(60), condition) else {
                throw RedisTestFailure("waited a minute for \(what): \(log.summary)")
            }
        }

        // The bucket drained: the limit is what holds the workers back.
        try await waitFor("the burst") { log.admitted >= burst + 5 }
        let cut = ContinuousClock.now
        let decidedBefore = log.decisions
        replica.signal(SIGSTOP)
        _ = try RESPConnection(port: master.port).call("CLIENT", "KILL", "TYPE", "replica")
        // The master decides alone for at least 400 ms (8 emission intervals), and at least 8 times.
        try await waitFor("decisions the replica misses") {
            ContinuousClock.now - cut >= .milliseconds(400) && log.decisions >= decidedBefore + 8
        }
        master.signal(SIGKILL)
        let killed = ContinuousClock.now
        replica.signal(SIGCONT)
        // What the replica has: once it has read what reached it and found its master gone, the
        // instant of the last admission it received (the GCRA's `last`, on the server's clock,
        // nanoseconds since the epoch: SHARED-2), on the workers' clock. A replica that lagged
        // before the cut misses more than the cut-off.
        let view = try RESPConnection(port: replica.port)
        try await waitFor("the replica to find its master gone") {
            (try? view.call("INFO", "replication"))?.text?.contains("master_link_status:down") == true
        }
        _ = try view.call("READONLY")
        let lastReplicated = try view.call("HGET", "rl:{failover}", "last").text.flatMap { Int64($0) } ?? 0
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let replicatedUpTo =
            ContinuousClock.now
            - .nanoseconds(Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec) - lastReplicated)
        let promoted = try view.call("CLUSTER", "FAILOVER", "TAKEOVER")
        guard promoted == .status("OK") else {
            throw replica.failure("answered CLUSTER FAILOVER TAKEOVER with \(promoted)")
        }
        if acknowledgement != nil {
            // WAIT needs a replica of the new master.
            let node = try await RedisServer.startClusterNode()
            newReplica = node
            try await RedisCluster.attach(replica: node, to: replica)
        }
        try await waitFor("admissions by the promoted replica") { log.admitted(after: killed) >= 20 }
        log.stop()
        await workers.value
        return log.run(cut: cut, killed: killed, replicatedUpTo: replicatedUpTo)
    }
}

/// What the workers saw across one failover.
struct FailoverRun: CustomStringConvertible {
    /// The most permits any window held over the bound B + ⌊span / T⌋.
    var excess: Int64
    /// Admissions answered after the cut and sent before the kill: the ones the cut-off made the
    /// replica miss.
    var inGap: Int64
    /// Admissions answered after the last one the replica received: at least the ones it missed.
    var missed: Int64
    var admitted: Int64
    var refused: Int
    /// Decisions answered `NOREPLICAS` (WAIT fell short), and other errors by their text.
    var notAcknowledged: Int
    var errors: [String: Int]
    /// From the kill to the first admission the promoted replica answered.
    var outage: Duration?

    var description: String {
        "\(admitted) admitted, \(refused) refused, \(notAcknowledged) not acknowledged, \(inGap) admitted while "
            + "the replica was cut off, \(missed) after the last it received; excess over the bound \(excess); "
            + "no admission for "
            + "\(outage.map { "\($0)" } ?? "ever") after the kill; errors \(errors)"
    }
}

/// The workers' records, from any task.
final class FailoverLog: @unchecked Sendable {
    // @unchecked: every `var` is read and written only under `lock`.
    private let lock = NSLock()
    private var admissions:
        [(sent: ContinuousClock.Instant, answered: ContinuousClock.Instant, wallClock: WallClockOffset?)] = []
    private var refusals = 0
    private var errorCounts: [String: Int] = [:]
    private var unacknowledged = 0
    private var answered = 0
    private var isStopped = false

    func record(
        admitted: Bool, sent: ContinuousClock.Instant, answered: ContinuousClock.Instant, wallClock: WallClockOffset?
    ) {
        lock.withLock {
            if admitted { admissions.append((sent, answered, wallClock)) } else { refusals += 1 }
            self.answered += 1
        }
    }

    func record(_ error: RedisLimitError) {
        lock.withLock {
            if case .serverError(let message) = error, message.hasPrefix("NOREPLICAS") {
                unacknowledged += 1
                answered += 1
            } else {
                // The kind of error, without the addresses and numbers that vary.
                let kind = "\(error)".prefix { !$0.isNumber }
                errorCounts[String(kind), default: 0] += 1
            }
        }
    }

    var admitted: Int64 { lock.withLock { Int64(admissions.count) } }
    var notAcknowledged: Int { lock.withLock { unacknowledged } }
    /// Decisions the store made: admissions, refusals and decisions not acknowledged.
    var decisions: Int { lock.withLock { answered } }
    var stopped: Bool { lock.withLock { isStopped } }
    var summary: String { lock.withLock { "\(admissions.count) admitted, \(refusals) refused, errors \(errorCounts)" } }
    func stop() { lock.withLock { isStopped = true } }

    func admitted(after instant: ContinuousClock.Instant) -> Int64 {
        lock.withLock { Int64(admissions.count { $0.sent >= instant }) }
    }

    /// The measures of the run (`cut`: when the replica was cut off; `killed`: the master's end).
    func run(
        cut: ContinuousClock.Instant, killed: ContinuousClock.Instant, replicatedUpTo: ContinuousClock.Instant
    ) -> FailoverRun {
        lock.withLock {
            let origin = admissions.map(\.sent).min() ?? cut
            let records = admissions.map {
                ClientAdmission(
                    sent: ($0.sent - origin).nanoseconds, answered: ($0.answered - origin).nanoseconds, permits: 1,
                    wallClock: $0.wallClock)
            }
            let excess = excessOverGCRABound(
                records, burst: RedisFailoverRealTimeTests.burst, interval: RedisFailoverRealTimeTests.interval,
                clockSteps: wallClockSteps(records))
            return FailoverRun(
                excess: excess, inGap: Int64(admissions.count { $0.answered >= cut && $0.sent <= killed }),
                missed: Int64(admissions.count { $0.answered > replicatedUpTo && $0.sent <= killed }),
                admitted: Int64(admissions.count), refused: refusals, notAcknowledged: unacknowledged,
                errors: errorCounts,
                outage: admissions.filter { $0.sent >= killed }.map(\.answered).min().map { $0 - killed })
        }
    }
}

extension Duration {
    /// Whole nanoseconds (rounded down), saturated.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow
            ? (seconds < 0 ? .min : .max) : product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
