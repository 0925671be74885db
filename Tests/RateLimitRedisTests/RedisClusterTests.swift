import Foundation
import RateLimitConformance
import RateLimitRedis
import RateLimitTestSupport
import RedisTestSupport
import Testing

// The cluster runner (RedisClusterConnection) on real Redis Cluster nodes that the tests start:
// the slot of a key is the server's, and limiters on many keys of a cluster of three masters
// answer as the in-process ones while a slot moves under them (ASK during the migration, MOVED
// after it). SHARED-9.

@Suite(
    "RateLimitRedis on a Redis Cluster (SHARED-9)", .serialized, .tags(.realTime), .realTime(),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisClusterRealTimeTests {
    @Test("SHARED-9 a key's slot is the one the server computes, hash tags included")
    func slots() async throws {
        // Redis Cluster's own examples: the CRC16 of "123456789" is 0x31C3; a tag decides the slot;
        // an empty tag, or none, hashes the whole key; only the first tag counts.
        #expect(RedisClusterConnection.slot(of: "123456789") == 0x31C3)
        #expect(
            RedisClusterConnection.slot(of: "{user1000}.following")
                == RedisClusterConnection.slot(of: "{user1000}.followers"))
        #expect(RedisClusterConnection.slot(of: "foo{}{bar}") != RedisClusterConnection.slot(of: "bar"))
        #expect(RedisClusterConnection.slot(of: "foo{{bar}}zap") == RedisClusterConnection.slot(of: "{bar"))
        #expect(RedisClusterConnection.slot(of: "foo{bar}{zap}") == RedisClusterConnection.slot(of: "bar"))
        let server = try await RedisServer.start(cluster: true)
        defer { server.stop() }
        let redis = try RESPConnection(port: server.port)
        var random = TestSeed.generator("slots", trace: 0)
        let alphabet = Array("ab{}:é\u{0}xyz0")
        for _ in 0..<500 {
            let length = Int.random(in: 0...12, using: &random)
            let key = String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
            let slot = try await redis.send(["CLUSTER", "KEYSLOT", key]).integer
            #expect(
                slot == Int64(RedisClusterConnection.slot(of: key)),
                "\(key.debugDescription): \(TestSeed.replay("slots", trace: 0))")
        }
    }

    @Test(
        "SHARED-9 SHARED-14 on three masters, limiters on 48 keys answer as the in-process ones while a slot moves under them: ASK during the migration, MOVED after it"
    )
    func resharding() async throws {
        let cluster = try await RedisCluster.start(masters: 3)
        defer { cluster.stop() }
        let client = try RedisClusterConnection(seeds: cluster.seeds)
        let gcra = try GCRA(burst: 3, emissionIntervalNanoseconds: 100)
        // 40 keys of their own tags, spread over the masters, and 8 that share the tag `hot`,
        // whose slot moves.
        let keys = (0..<40).map { "rl:{k\($0)}" } + (0..<8).map { "rl:{hot}:\($0)" }
        let hot = RedisClusterConnection.slot(of: "{hot}")
        let limiters = keys.map { KeyUnderTest(key: $0, strategy: gcra, runner: client) }
        try await Self.steps(limiters, 20)
        #expect(client.masters.count == 3, "\(client.masters)")
        #expect(Set(keys.map { cluster.owner(of: RedisClusterConnection.slot(of: $0)) }).count == 3)
        // The hot keys move one at a time, each of them asked for after every key that moved.
        let source = cluster.owner(of: hot)
        let target = (source + 1) % 3
        try await cluster.migrate(slot: hot, from: source, to: target) {
            try await Self.steps(Array(limiters.suffix(8)), 1)
        }
        #expect(client.redirectionsFollowed.ask > 0, "\(client.redirectionsFollowed)")
        try await Self.steps(limiters, 20)
        #expect(client.redirectionsFollowed.moved > 0, "\(client.redirectionsFollowed)")
        // The keys live where the cluster says: the hot ones on the target now.
        let owner = try RESPConnection(port: cluster.nodes[target].port)
        for key in keys.suffix(8) {
            #expect(try await owner.send(["EXISTS", key]) == .integer(1), "\(key)")
        }
    }

    @Test(
        "SHARED-9 COMP-4 a composite whose slot moves under it answers as the in-process one: a call that finds some of its keys moved waits out TRYAGAIN"
    )
    func compositeMoves() async throws {
        let cluster = try await RedisCluster.start(masters: 3)
        defer { cluster.stop() }
        // The calls caught by the move wait as long as the test takes to move the rest, however
        // busy the machine (the default is about 1.4 s of waits).
        let client = try RedisClusterConnection(seeds: cluster.seeds, tryAgainWaits: 100_000)
        let composite = try CompositeLimit(
            .tokenBucket(TokenBucket(capacity: 6, permitsPerPeriod: 1, periodNanoseconds: 1_000)),
            .slidingWindowLog(SlidingWindowLog(limit: 8, windowNanoseconds: 5_000)),
            .gcra(GCRA(burst: 4, emissionIntervalNanoseconds: 300)))
        // Three composites of one tag, so of one slot: `split` is caught with one of its three keys
        // moved, `whole` is called before its keys move, `unseen` has no keys until the move is over.
        let (split, whole, unseen) = (
            KeyUnderTest(key: "rl:{mv}:split", strategy: composite, runner: client),
            KeyUnderTest(key: "rl:{mv}:whole", strategy: composite, runner: client),
            KeyUnderTest(key: "rl:{mv}:unseen", strategy: composite, runner: client)
        )
        let log = KeyUnderTest(
            key: "rl:{mv}:log", strategy: try SlidingWindowLog(limit: 8, windowNanoseconds: 5_000), runner: client)
        try await Self.steps([split, whole], 10)
        try await Self.steps([log], 10)
        let slot = RedisClusterConnection.slot(of: "{mv}")
        let (source, target) = (cluster.owner(of: slot), (cluster.owner(of: slot) + 1) % 3)
        try cluster.beginMoving(slot: slot, from: source, to: target)
        // One key of `split` moved: its next call finds the others on the source, which answers
        // TRYAGAIN until the rest have moved too.
        try cluster.move(["rl:{mv}:split:1"], from: source, to: target)
        let waiting = Task { try await split.step() }
        #expect(await eventually(within: .seconds(30)) { client.tryAgainsWaitedOut >= 1 }, "no TRYAGAIN")
        try cluster.move(["rl:{mv}:split:2", "rl:{mv}:split:3"], from: source, to: target)
        try await waiting.value
        #expect(client.redirectionsFollowed.ask >= 1, "\(client.redirectionsFollowed)")
        // `whole`, all of its keys still on the source, is decided there; a reset too, which
        // empties its log's entries without emptying the key (the node would refuse a command on
        // a key the script emptied, "non local key", leaving the reset half done). So is a log of
        // its own.
        try await Self.steps([whole], 5)
        try await Self.steps([log], 5)
        try await whole.reset()
        try await log.reset()
        try await Self.steps([whole], 5)
        try await Self.steps([log], 5)
        try cluster.move((1...3).map { "rl:{mv}:whole:\($0)" } + ["rl:{mv}:log"], from: source, to: target)
        // `unseen` has no key on either node: the target cannot tell it from one half moved
        // (TRYAGAIN), until the slot is its own.
        let tried = client.tryAgainsWaitedOut
        let created = Task { try await unseen.step() }
        #expect(await eventually(within: .seconds(30)) { client.tryAgainsWaitedOut > tried }, "no TRYAGAIN")
        try cluster.finishMoving(slot: slot, from: source, to: target)
        try await created.value
        try await Self.steps([split, whole, unseen], 20)
        try await Self.steps([log], 20)
        let owner = try RESPConnection(port: cluster.nodes[target].port)
        for key in ["split", "whole", "unseen"].flatMap({ name in (1...3).map { "rl:{mv}:\(name):\($0)" } }) {
            #expect(try await owner.send(["EXISTS", key]) == .integer(1), "\(key)")
        }
    }

    @Test(
        "SHARED-1 SHARED-9 GCRA-11 four processes on 24 keys of three masters, a slot moved under them: no key's window over its bound"
    )
    func processesAcrossMasters() async throws {
        let cluster = try await RedisCluster.start(masters: 3)
        defer { cluster.stop() }
        let (burst, interval): (Int64, Int64) = (5, 2_000_000)  // bursts of 5, then one permit per 2 ms
        let keys = (0..<16).map { "rl:{k\($0)}" } + (0..<8).map { "rl:{hot}:\($0)" }
        // The workers run until the test has seen traffic after the move (a file tells them).
        let stop = NSTemporaryDirectory() + "ratelimit-cluster-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: stop) }
        let arguments = [
            "--cluster-worker", cluster.seeds.joined(separator: ","), keys.joined(separator: ","), "\(burst)",
            "\(interval)", stop,
        ]
        let workers = (0..<4).map { _ in Task { try await runRedisBench(arguments) } }
        defer { _ = FileManager.default.createFile(atPath: stop, contents: nil) }  // when a step below throws
        // Once the workers call the hot keys' master, their slot moves, a key at a time, under them.
        // (A GCRA's key expires as soon as its burst is back, SHARED-4: the calls show the
        // workers there, not the keys.)
        let hot = RedisClusterConnection.slot(of: "{hot}")
        let source = cluster.owner(of: hot)
        let target = (source + 1) % 3
        func calls(_ node: Int) -> Int {
            let stats = (try? RESPConnection(port: cluster.nodes[node].port).call("INFO", "commandstats"))?.text ?? ""
            let line = stats.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_fcall:calls=") }
            return line.flatMap { Int($0.dropFirst("cmdstat_fcall:calls=".count).prefix { $0.isNumber }) } ?? 0
        }
        #expect(await eventually(within: .seconds(30)) { calls(source) >= 100 }, "the workers did not start")
        try await cluster.migrate(slot: hot, from: source, to: target)
        let moved = calls(target)
        #expect(await eventually(within: .seconds(30)) { calls(target) >= moved + 300 }, "no traffic after the move")
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        var admissions = Array(repeating: [ClientAdmission](), count: keys.count)
        var redirections = (moved: 0, ask: 0)
        for worker in workers {
            let (status, output, errors) = try await worker.value
            #expect(status == 0, "a worker failed: \(errors)")
            for line in output.split(separator: "\n") {
                let fields = line.split(separator: " ")
                let numbers = fields.prefix(4).compactMap { Int64($0) }
                if fields.count == 6, numbers.count == 4, let key = Int(exactly: numbers[0]), keys.indices.contains(key)
                {
                    admissions[key].append(
                        ClientAdmission(
                            sent: numbers[1], answered: numbers[2], permits: numbers[3], tat: Int64(fields[4]),
                            wallClock: WallClockOffset(text: fields[5])))
                } else if let summary = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Int] {
                    redirections.moved += summary["moved"] ?? 0
                    redirections.ask += summary["ask"] ?? 0
                }
            }
        }
        // The machine has one wall clock: its steps are judged over every worker's readings.
        let steps = wallClockSteps(admissions.flatMap { $0 })
        #expect(redirections.moved + redirections.ask > 0, "the slot moved after the workers were done")
        var worst = Int64.min
        for (key, records) in zip(keys, admissions) {
            // On the store's clock alone: each admission found the state the one before it left.
            #expect(records.allSatisfy { $0.tat != nil }, "\(key): an admission without its tat")
            let broken = gcraChainBreak(records, interval: interval, clockSteps: steps)
            #expect(broken == nil, "\(key): \(broken ?? "")")
            // On the clients' clock: no window over the bound.
            let excess = excessOverGCRABound(records, burst: burst, interval: interval, clockSteps: steps)
            worst = max(worst, excess)
            #expect(
                excess <= 0, "\(key): a window holds \(excess) permits over the bound (wall clock stepped \(steps) ns)")
            #expect(records.count > Int(burst), "\(key): \(records.count) admissions")
        }
        print(
            "cluster, four processes: \(admissions.map(\.count).reduce(0, +)) admissions on \(keys.count) keys, "
                + "redirections \(redirections); closest window \(-worst) permits under its bound; "
                + "the wall clock moved \(steps) ns against the monotonic one")
    }

    /// `count` events on each key, keys at once, each answer checked against the model's.
    private static func steps<S>(_ limiters: [KeyUnderTest<S>], _ count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for limiter in limiters {
                group.addTask { for _ in 0..<count { try await limiter.step() } }
            }
            try await group.waitForAll()
        }
    }
}

/// A limiter on one key of the cluster (a composite's keys, `<key>:1 ...`) and the in-process
/// model beside it, on an instant of their own that each step moves.
private final class KeyUnderTest<Strategy: RedisScriptedStrategy>: @unchecked Sendable {
    // @unchecked: `model`, `now` and `index` are used only by `step`, which one task calls at a time.
    let key: String
    let limiter: RedisRateLimiter<Strategy, ContinuousClock>
    private var model: RateLimiter<Strategy>
    private let instant = LockedInstant()
    private var index = 0

    init(key: String, strategy: Strategy, runner: any RedisScriptRunner) {
        self.key = key
        let instant = self.instant
        limiter = RedisRateLimiter(
            strategy, key: key, runner: runner, clockSource: .caller { instant.value }, timeout: .seconds(10))
        model = RateLimiter(strategy, at: .origin)
    }

    func step() async throws {
        index += 1
        let now = try RateLimitInstant(nanoseconds: Int64(index) * 70)
        instant.value = now
        let permits = Int64(index % 3 + 1)
        let answer = try await limiter.tryAcquire(permits)
        #expect(answer == model.step(.acquire(permits), at: now), "\(key), event \(index)")
    }

    func reset() async throws {
        index += 1
        let now = try RateLimitInstant(nanoseconds: Int64(index) * 70)
        instant.value = now
        #expect(try await limiter.reset() == model.step(.reset, at: now), "\(key), reset at event \(index)")
    }
}

final class LockedInstant: @unchecked Sendable {
    // @unchecked: `current` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var current = RateLimitInstant.origin
    var value: RateLimitInstant {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}
