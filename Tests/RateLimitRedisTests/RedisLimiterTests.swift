import Dispatch
import Foundation
import RateLimitConformance
import RateLimitRedis
import RateLimitTestSupport
import RedisTestSupport
import Testing

// The Swift limiters of RateLimitRedis on a real redis-server (Spec/SharedLimits.md): the scripts
// they embed are the files; their answers are the in-process limiters' on every vector and random
// trace; the server's clock; waiting by exact retry-afters; leases. Each test starts its own
// server (RedisTestSupport) and skips, saying how to install one, where there is none.

@Suite(
    "RateLimitRedis: the shared limiters (Spec/SharedLimits.md)", .serialized, .tags(.realTime), .realTime(),
    .enabled(Comment(rawValue: RedisServer.installHint)) { await RedisServer.installed.value != nil })
struct RedisLimiterRealTimeTests {
    @Test(
        "SHARED-1 SHARED-14 the embedded scripts are Sources/RateLimitRedis/Scripts/*.lua, their SHA-1s the server's, and functions.lua the library that registers each and the composite"
    )
    func embeddedScripts() async throws {
        let folder = repositoryRoot.appendingPathComponent("Sources/RateLimitRedis/Scripts")
        let prelude = try String(contentsOf: folder.appendingPathComponent("prelude.lua"), encoding: .utf8)
        #expect(
            RedisScript.all.map(\.strategy) == [
                "token-bucket", "token-bucket-interval", "gcra", "fixed-window",
                "sliding-window-log", "leaky-bucket-meter", "concurrency",
            ])
        let server = try await RedisServer.start()
        defer { server.stop() }
        let redis = try RESPConnection(port: server.port)
        for script in RedisScript.all {
            let file = try String(
                contentsOf: folder.appendingPathComponent("\(script.strategy).lua"), encoding: .utf8)
            #expect(script.source == prelude + "\n" + file, "\(script.strategy): run `make redis-scripts`")
            #expect(
                try await redis.send(["SCRIPT", "LOAD", script.source]) == .bulk(script.sha1), "\(script.strategy)")
        }
        // The composite limit's script, whole (made from the files by `make redis-scripts`).
        let composite = try String(contentsOf: folder.appendingPathComponent("composite-script.lua"), encoding: .utf8)
        #expect(RedisScript.composite.source == composite, "run `make redis-scripts`")
        #expect(try await redis.send(["SCRIPT", "LOAD", composite]) == .bulk(RedisScript.composite.sha1))
        let library = try String(contentsOf: folder.appendingPathComponent("functions.lua"), encoding: .utf8)
        #expect(RedisScript.library == library, "run `make redis-scripts`")
        #expect(try await redis.send(["FUNCTION", "LOAD", library]) == .bulk(RedisScript.libraryName))
        // Every script's function is the library's, and nothing else is.
        guard case .array(let libraries) = try await redis.send(["FUNCTION", "LIST"]), libraries.count == 1,
            case .array(let fields) = libraries[0], let index = fields.firstIndex(of: .bulk("functions")),
            case .array(let functions) = fields[index + 1]
        else {
            Issue.record("FUNCTION LIST: one library with its functions expected")
            return
        }
        let names = functions.compactMap { entry -> String? in
            guard case .array(let parts) = entry, parts.count > 1 else { return nil }
            return parts[1].text
        }
        #expect(Set(names) == Set((RedisScript.all + [.composite]).map(\.function)), "\(names)")
    }

    @Test(
        "CONF-3 SHARED-1 SHARED-3 SHARED-14 the Swift limiters answer as the in-process ones on every vector and random traces, through the Functions library and through scripts",
        arguments: [true, false])
    func conformance(functions: Bool) async throws {
        try await offThePool {
            let server = try await RedisServer.start()
            defer { server.stop() }
            let connection = try RESPConnection(port: server.port)
            var subject = RedisSubject(runner: functions ? connection : ScriptsOnly(connection))
            let report = try ConformanceSuite.run(
                &subject, options: ConformanceOptions(randomTraces: 10, randomSteps: 100, seed: 7))
            let ran = report.strategies.filter { $0.skippedBecause == nil }
            #expect(Set(ran.map(\.strategy)) == subject.strategies)
            for strategy in ran {
                let findings = strategy.groups.map { "\($0)" }.joined(separator: "\n")
                #expect(strategy.level == .exact, "\(strategy.strategy): \(strategy.level)\n\(findings)")
                #expect(!strategy.stories.isEmpty, "\(strategy.strategy)")
                #expect(strategy.randomTraces.count == 10, "\(strategy.strategy)")
            }
            // Each path alone: the library loaded once and every call an FCALL, or no FCALL at all.
            let counts = connection.commandCounts
            if functions {
                #expect(counts["FUNCTION"] == 1 && counts["EVALSHA"] == nil && counts["EVAL"] == nil, "\(counts)")
                #expect((counts["FCALL"] ?? 0) > 1_000, "\(counts)")
            } else {
                #expect(counts["FCALL"] == nil && counts["FUNCTION"] == nil, "\(counts)")
                #expect((counts["EVALSHA"] ?? 0) > 1_000, "\(counts)")
            }
        }
    }

    @Test(
        "COMP-4 COMP-5 COMP-7 COMP-8 SHARED-9 a composite limit answers as the in-process one, one call over its limits' keys, through the Functions library and through scripts",
        arguments: [true, false])
    func compositeLimits(functions: Bool) async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let connection = try RESPConnection(port: server.port)
        let runner: any RedisScriptRunner = functions ? connection : ScriptsOnly(connection)
        let kinds = [
            TokenBucket.identifier, IntervalTokenBucket.identifier, GCRA.identifier, FixedWindow.identifier,
            SlidingWindowLog.identifier, LeakyBucketMeter.identifier,
        ]
        let name = "compositeLimits"
        for trace in 0..<12 {
            var rng = TestSeed.generator(name, trace: trace)
            let replay = TestSeed.replay(name, trace: trace)
            func draw() -> [AnyRateLimitStrategy] {
                (0..<Int(rng.int(in: 1...3))).compactMap { _ in
                    TraceGenerator.configuration(rng.pick(kinds), using: &rng)
                }
            }
            var limits = draw()
            guard !limits.isEmpty, var composite = try? CompositeLimit(limits) else { continue }
            // Created at 0, so that no event comes before the creation: a limit whose state is idle
            // has no key (SHARED-4), and would be created at such an event instead (as with
            // `--expire`, whose profile declares a clock that never goes back).
            var now: Int64 = 0
            let instant = LockedInstant()
            instant.value = try RateLimitInstant(nanoseconds: now)
            let key = "rl:{composite-\(trace)}"
            let limiter = RedisRateLimiter(
                composite, key: key, runner: runner, clockSource: .caller { instant.value }, timeout: .seconds(10))
            var model = RateLimiter(composite, at: try RateLimitInstant(nanoseconds: now))
            // The limits' keys made at the model's creation instant (a query writes a state that is
            // not idle: a bucket that starts below its capacity), not at the first event's.
            #expect(try await limiter.remaining() == model.remaining(at: instant.value), "\(replay)")
            for step in 0..<150 {
                let span = limits.map(TraceGenerator.characteristicNanoseconds).min() ?? 1
                now = TraceGenerator.nextInstant(after: now, span: span, retryAfter: nil, using: &rng)
                let at = try RateLimitInstant(nanoseconds: now)
                instant.value = at
                let event: RateLimitEvent<CompositeLimit>
                switch rng.int(in: 0...99) {
                case 0..<4: event = .reset
                case 4..<10:
                    // The same strategies, other sizes; or, now and then, another shape (refused).
                    let replacement =
                        rng.chance(80)
                        ? limits.compactMap { TraceGenerator.configuration($0.kind, using: &rng) } : draw()
                    guard let next = try? CompositeLimit(replacement) else { continue }
                    event = .reconfigure(next)
                    if replacement.map(\.kind) == limits.map(\.kind) { (limits, composite) = (replacement, next) }
                default: event = .acquire(TraceGenerator.permits(maximum: composite.maximumPermits, using: &rng))
                }
                let expected = model.step(event, at: at)
                let answered: RateLimitResult
                switch event {
                case .acquire(let permits): answered = try await limiter.tryAcquire(permits)
                case .release(let permits): answered = limiter.release(permits)  // not drawn: no limit holds permits
                case .reset: answered = try await limiter.reset()
                case .reconfigure(let next): answered = try await limiter.reconfigure(next)
                }
                // An `invalid` is compared by what the protocol carries: its field and problem (with its maximum).
                let same =
                    if case .invalid(let got) = answered, case .invalid(let want) = expected {
                        got.field == want.field && got.problem == want.problem
                    } else { answered == expected }
                #expect(
                    same,
                    "trace \(trace) step \(step) at \(now): \(event) answered \(answered), expected \(expected), limits \(limits); \(replay)"
                )
                if !same { break }
            }
            // One key per limit, sharing the composite's hash tag: one slot.
            let stored = try await connection.send(["KEYS", "rl:{composite-\(trace)}*"])
            if case .array(let names) = stored {
                #expect(names.allSatisfy { $0.text?.hasPrefix(key + ":") == true }, "\(names)")
                // Written together (SHARED-9): all of the limits' keys, or none.
                #expect(names.isEmpty || names.count == limits.count, "\(names), \(limits.count) limits; \(replay)")
            }
        }
        let counts = connection.commandCounts
        #expect((counts[functions ? "FCALL" : "EVALSHA"] ?? 0) > 500, "\(counts)")
        // A fixed window aligned otherwise (FW-13) is refused by name, inside a composite too.
        let aligned = try CompositeLimit(
            .gcra(try GCRA(burst: 2, emissionIntervalNanoseconds: 10)),
            .fixedWindow(try FixedWindow(limit: 3, window: .nanoseconds(100), alignment: .creation)))
        let refused = try await RedisRateLimiter(aligned, key: "rl:{aligned}", runner: runner).tryAcquire()
        guard case .invalid(let error) = refused else {
            Issue.record("expected invalid, got \(refused)")
            return
        }
        #expect(error.field == "alignment" && error.problem == .notSupported)
        // A concurrency limit's permits would be leases no call names: refused by name.
        let leased = try CompositeLimit(
            .gcra(try GCRA(burst: 2, emissionIntervalNanoseconds: 10)),
            .concurrency(try ConcurrencyLimiter(limit: 2)))
        let refusal = try await RedisRateLimiter(leased, key: "rl:{leased}", runner: runner).tryAcquire()
        guard case .invalid(let leaseError) = refusal else {
            Issue.record("expected invalid, got \(refusal)")
            return
        }
        #expect(leaseError.field == "limits[1]" && leaseError.problem == .notSupported)
    }

    @Test(
        "SHARED-4 SHARED-9 a composite's keys are written together and expire together, once its last limit is idle; a call that writes nothing leaves none"
    )
    func compositeKeysTogether() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let redis = try RESPConnection(port: server.port)
        // One permit an hour and bursts of 5 per 100 ms: the bucket is idle last.
        let composite = try CompositeLimit(
            .tokenBucket(try TokenBucket(capacity: 2, permitsPerPeriod: 1, period: .seconds(3_600))),
            .gcra(try GCRA(burst: 5, emissionInterval: .milliseconds(100))))
        let limiter = RedisRateLimiter(composite, key: "rl:{together}", runner: redis)
        // A query of a new composite: every limit idle, nothing written.
        #expect(try await limiter.remaining() == 2)
        #expect(try await redis.send(["EXISTS", "rl:{together}:1", "rl:{together}:2"]) == .integer(0))
        let before = try redis.serverNanoseconds() / 1_000_000
        #expect(try await limiter.tryAcquire(1).isAdmitted)
        let expiries = try [1, 2].map { try redis.call("PEXPIRETIME", "rl:{together}:\($0)").integer }
        // Both at the bucket's idle instant, an hour away, not the GCRA's 100 ms.
        #expect(expiries[1] == expiries[0], "\(expiries)")
        #expect((expiries[0] ?? 0) >= before + 3_600_000, "\(expiries), TIME \(before) ms")
    }

    @Test("SHARED-2 on the server's clock a refusal's retry-after counts from the server's TIME")
    func serversClock() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let redis = try RESPConnection(port: server.port)
        // Bursts of 2, then one per hour: the third acquire waits until the first hour is over.
        let hour: Int64 = 3_600_000_000_000
        let limiter = RedisRateLimiter(
            try GCRA(burst: 2, emissionIntervalNanoseconds: hour), key: "{clock}:gcra", runner: redis,
            clock: ManualClock())
        let before = try await serverTime(redis)
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 1))
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 0))
        let refusal = try await limiter.tryAcquire()
        let after = try await serverTime(redis)
        // tat = first + 2 h, admitted again at tat - tau + T = first + 1 h; the refusal came at
        // `now` in [first, after], so its retry-after is first + 1 h - now.
        guard case .rejected(let retryAfter) = refusal else {
            Issue.record("expected a refusal, got \(refusal)")
            return
        }
        #expect(hour - (after - before) <= retryAfter && retryAfter <= hour, "\(retryAfter) ns")
        #expect(try await limiter.remaining() == 0)
        // The key expires when the state is idle: two hours after the first acquire (SHARED-4).
        let expiry = try #require(try await redis.send(["PEXPIRETIME", "{clock}:gcra"]).integer)
        #expect((before + 2 * hour) / 1_000_000 <= expiry && expiry <= (after + 2 * hour) / 1_000_000 + 1)
    }

    @Test("SHARED-4 a bucket that starts empty is written by its first event, even a refusal, and refills from it")
    func firstEventWritesAStateThatIsNotIdle() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let redis = try RESPConnection(port: server.port)
        let clock = ManualClock()
        // Empty at first, one token per 100 ns, up to 2.
        let bucket = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 100, initialTokens: 0)
        let limiter = RedisRateLimiter(
            bucket, key: "{empty}:bucket", runner: redis, clockSource: .caller { instant(of: clock) }, clock: clock)
        #expect(try await limiter.tryAcquire() == .rejected(retryAfterNanoseconds: 100))
        // The refusal wrote the bucket created at 0 (it never becomes idle, so it never expires).
        #expect(try await redis.send(["HGET", "{empty}:bucket", "last"]) == .bulk("0"))
        #expect(try await redis.send(["PTTL", "{empty}:bucket"]) == .integer(-1))
        clock.set(to: ManualClock.Instant(offset: .nanoseconds(50)))
        #expect(try await limiter.tryAcquire() == .rejected(retryAfterNanoseconds: 50))
        clock.set(to: ManualClock.Instant(offset: .nanoseconds(100)))
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 0))
    }

    @Test("SHARED-13 acquire sleeps the exact retry-after on its clock and asks again; past its timeout it refuses")
    func waitingByRetryAfter() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock()
        let limiter = RedisRateLimiter(
            try GCRA(burst: 1, emissionInterval: .milliseconds(100)), key: "{wait}:gcra",
            runner: try RESPConnection(port: server.port), clockSource: .caller { instant(of: clock) },
            timeout: .seconds(5), clock: clock)
        #expect(try await limiter.tryAcquire() == .allowed(remaining: 0))
        // 100 ms to wait, 50 ms allowed: refused at once, nothing slept.
        #expect(try await limiter.acquire(timeout: .milliseconds(50)) == .rejected(retryAfterNanoseconds: 100_000_000))
        #expect(clock.nextDeadline != ManualClock.Instant(offset: .milliseconds(100)))
        // 100 ms to wait, 1 s allowed: it sleeps until 100 ms, then the server admits it.
        let waiting = Task { try await limiter.acquire(timeout: .seconds(1)) }
        #expect(await eventually { clock.nextDeadline == ManualClock.Instant(offset: .milliseconds(100)) })
        clock.set(to: ManualClock.Instant(offset: .milliseconds(100)))
        #expect(try await waiting.value == .allowed(remaining: 0))
        // Never allowed and bad input answer at once.
        #expect(try await limiter.acquire(2, timeout: .seconds(1)) == .neverAllowed)
        if case .invalid(let error) = try await limiter.acquire(-1, timeout: .seconds(1)) {
            #expect(error.field == "permits" && error.problem == .mustNotBeNegative)
        } else {
            Issue.record("acquire(-1) must be invalid")
        }
        // A release is what an in-process GCRA answers (CORE-11), without the store.
        var model = RateLimiter(limiter.strategy, at: .origin)
        #expect(limiter.release(1) == model.step(.release(1), at: .origin))
    }

    @Test("SHARED-6 SHARED-7 a lease taken through the Swift limiter comes back at release, once, or at its expiry")
    func leases() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let clock = ManualClock()
        let limiter = RedisConcurrencyLimiter(
            try ConcurrencyLimiter(limit: 3), key: "{leases}:swift", runner: try RESPConnection(port: server.port),
            clockSource: .caller { instant(of: clock) }, clock: clock)
        let first = try await limiter.tryAcquire(2, lease: .nanoseconds(100))
        #expect(first.result == .allowed(remaining: 1))
        let lease = try #require(first.lease)
        #expect(lease.permits == 2 && lease.handle == "00000000000000000100:00000000000000000000:1")
        let refused = try await limiter.tryAcquire(2, lease: .seconds(1))
        #expect(refused.result == .rejectedUntilRelease(shortfall: 1) && refused.lease == nil)
        #expect(try await limiter.release(lease) == .allowed(remaining: 3))
        // Released once: a second release gives nothing back (invalid, maximum 0).
        guard case .invalid(let error) = try await limiter.release(lease) else {
            Issue.record("a second release must be invalid")
            return
        }
        #expect(error.field == "permits" && error.problem == .exceedsMaximum(0))
        // A lease of 100 ns taken at 10 is back at 110, with no release.
        clock.set(to: ManualClock.Instant(offset: .nanoseconds(10)))
        #expect(try await limiter.tryAcquire(3, lease: .nanoseconds(100)).result == .allowed(remaining: 0))
        clock.set(to: ManualClock.Instant(offset: .nanoseconds(109)))
        #expect(try await limiter.remaining() == 0)
        clock.set(to: ManualClock.Instant(offset: .nanoseconds(110)))
        #expect(try await limiter.remaining() == 3)
        // Durations the script cannot take are refused before any call.
        for (duration, problem) in [
            (Duration.zero, RateLimitInputError.Problem.mustBePositive),
            (.nanoseconds(1) / 2, .notWholeNanoseconds),
            (.seconds(9_223_372_037), .exceedsMaximum(.max)),
        ] {
            guard case .invalid(let error) = try await limiter.tryAcquire(lease: duration).result else {
                Issue.record("a lease of \(duration) must be invalid")
                continue
            }
            #expect(error.field == "leaseNanoseconds" && error.problem == problem, "\(duration)")
        }
    }
}

/// The instant of a manual clock on the limiter's timeline (its offset, whole nanoseconds).
func instant(of clock: ManualClock) -> RateLimitInstant {
    let (seconds, attoseconds) = clock.now.offset.components
    return (try? RateLimitInstant(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) ?? .origin
}

/// The server's clock in nanoseconds, read without blocking a thread of the pool.
func serverTime(_ redis: RESPConnection) async throws -> Int64 {
    guard case .array(let parts) = try await redis.send(["TIME"]), parts.count == 2,
        let seconds = parts[0].text.flatMap({ Int64($0) }), let micros = parts[1].text.flatMap({ Int64($0) })
    else { throw RedisTestFailure("TIME gave no time") }
    return seconds * 1_000_000_000 + micros * 1_000
}

// MARK: The limiters as a conformance subject

/// The instant the suite's next event carries, read by the limiters as their caller's clock.
private final class SuiteInstant: @unchecked Sendable {
    // @unchecked: `value` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var value = RateLimitInstant.origin
    var current: RateLimitInstant {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// One protocol limiter: a `RedisRateLimiter` or `RedisConcurrencyLimiter` behind closures.
struct SubjectLimiter {
    let apply: @Sendable (ConformanceEvent) async throws(RedisLimitError) -> RateLimitResult
}

/// Every strategy with a script, as `RedisRateLimiter` and `RedisConcurrencyLimiter` on the
/// suite's instants (the caller's clock, SHARED-2), each limiter its own key. The concurrency
/// limiter's leases last 2^63 ns, longer than the timeline, so they are CL's plain permits
/// (SHARED-6). Their state begins at their first event: a key that does not exist is a new
/// limiter (SHARED-4), and the Swift limiters have no `create`.
struct RedisSubject: ConformanceSubject {
    let runner: any RedisScriptRunner
    private let instant = SuiteInstant()
    private let prefix = UUID().uuidString
    private var next = 0

    init(runner: any RedisScriptRunner) { self.runner = runner }

    var name: String { "RateLimitRedis" }
    var strategies: Set<String> { Set(RedisScript.all.map(\.strategy)) }

    func profile(for strategy: String) -> ImplementationProfile {
        // Its state begins at its first event; on an earlier instant after that event a key that
        // was never written (its state idle) is a new limiter at that instant, the caveat of
        // SHARED-4 for clocks that go back: the Swift limiters are checked on time going forwards
        // (the scripts themselves, with `create`, also on time going back: RedisConformanceTests).
        ImplementationProfile(monotonic: true, createdAtFirstEvent: true)
    }

    mutating func create(_ request: CreateRequest, at now: Int64) throws(SubjectFailure) -> CreateOutcome<
        SubjectLimiter
    > {
        // The configuration is a Swift value: the core's validation refuses what the Spec refuses.
        guard let configuration = request.configuration else {
            switch ReferenceSubject().create(request, at: now) {
            case .refused(let field, let problem): return .refused(field: field, problem: problem)
            case .created, .unsupported: return .unsupported(reason: "malformed configuration")
            }
        }
        next += 1
        let key = "ratelimit-swift:{\(prefix):\(next)}"
        let clock = ContinuousClock()
        let source = RedisClockSource.caller { [instant] in instant.current }
        switch configuration {
        case .tokenBucket(let s): return .created(limiter(s, key: key, source: source, clock: clock))
        case .intervalTokenBucket(let s): return .created(limiter(s, key: key, source: source, clock: clock))
        case .gcra(let s): return .created(limiter(s, key: key, source: source, clock: clock))
        case .fixedWindow(let s): return .created(limiter(s, key: key, source: source, clock: clock))
        case .slidingWindowLog(let s): return .created(limiter(s, key: key, source: source, clock: clock))
        case .leakyBucketMeter(let s): return .created(limiter(s, key: key, source: source, clock: clock))
        case .concurrency(let s):
            let limiter = RedisConcurrencyLimiter(
                s, key: key, runner: runner, clockSource: source, timeout: .seconds(10), clock: clock)
            let forever = Duration.nanoseconds(Int64.max) + .nanoseconds(1)  // 2^63 ns
            return .created(
                SubjectLimiter { event throws(RedisLimitError) in
                    switch event {
                    case .acquire(let permits): return try await limiter.tryAcquire(permits, lease: forever).result
                    case .release(let permits): return try await limiter.release(permits)
                    case .reset: return try await limiter.reset()
                    case .reconfigure(let any):
                        guard let typed = any.typed(as: ConcurrencyLimiter.self) else {
                            throw .unexpectedReply("reconfigure to \(any)")
                        }
                        return try await limiter.reconfigure(typed)
                    }
                })
        case .payLater, .warmUp, .slidingWindowCounter, .slidingWindowSegments, .leakyBucketQueue:
            return .unsupported(reason: "no Redis script for \(configuration.kind)")
        }
    }

    private func limiter<S: RedisScriptedStrategy>(
        _ strategy: S, key: String, source: RedisClockSource, clock: ContinuousClock
    ) -> SubjectLimiter {
        let limiter = RedisRateLimiter(
            strategy, key: key, runner: runner, clockSource: source, timeout: .seconds(10), clock: clock)
        return SubjectLimiter { event throws(RedisLimitError) in
            switch event {
            case .acquire(let permits): return try await limiter.tryAcquire(permits)
            case .release(let permits): return limiter.release(permits)
            case .reset: return try await limiter.reset()
            case .reconfigure(let any):
                guard let typed = any.typed(as: S.self) else { throw .unexpectedReply("reconfigure to \(any)") }
                return try await limiter.reconfigure(typed)
            }
        }
    }

    mutating func apply(_ event: ConformanceEvent, to limiter: inout SubjectLimiter, at now: Int64)
        throws(SubjectFailure) -> RateLimitResult
    {
        guard let at = try? RateLimitInstant(nanoseconds: now) else {
            return .invalid(RateLimitInputError(field: "now", value: now, problem: .mustNotBeNegative))
        }
        instant.current = at
        let apply = limiter.apply
        switch blocking({ () async throws(RedisLimitError) in try await apply(event) }) {
        case .success(let result): return result
        case .failure(let error): throw SubjectFailure("\(error)")
        }
    }
}

/// A value written once by a task before it signals, read after the wait.
private final class Handoff<T: Sendable>: @unchecked Sendable {
    // @unchecked: `result` is written by one task before `DispatchSemaphore.signal()` and read
    // only after `wait()` returned, which orders the two.
    var result: Result<T, RedisLimitError>?
}

/// Waits, blocking this thread (the heavy lane's, never the pool's), for `body` run in a task.
private func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws(RedisLimitError) -> T) -> Result<
    T, RedisLimitError
> {
    let handoff = Handoff<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do throws(RedisLimitError) {
            handoff.result = .success(try await body())
        } catch {
            handoff.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return handoff.result ?? .failure(.cancelled)
}

/// What the shared limiters refuse before they call the store.
@Suite("RateLimitRedis: what the scripts do not implement is refused by name")
struct RedisLimiterRefusalTests {
    @Test(
        "FW-13 a fixed window aligned otherwise than to the origin is invalid at every call, never run on the origin grid"
    )
    func alignmentVariants() async throws {
        // Nothing listens there: a call that reached the store would fail with connectionFailed.
        let nowhere = RESPConnection(lazilyTo: try unusedPort())
        for alignment in [WindowAlignment.creation, .firstEvent] {
            let window = try FixedWindow(limit: 2, windowNanoseconds: 1_000, alignment: alignment)
            let aligned = RedisRateLimiter(window, key: "{fw}:aligned", runner: nowhere, clock: ManualClock())
            let origin = RedisRateLimiter(
                window.aligned(.origin), key: "{fw}:origin", runner: nowhere, clock: ManualClock())
            for result in [
                try await aligned.tryAcquire(), try await aligned.reset(), try await origin.reconfigure(window),
            ] {
                guard case .invalid(let error) = result else {
                    Issue.record("\(alignment): expected invalid, got \(result)")
                    continue
                }
                #expect(error.field == "alignment" && error.problem == .notSupported, "\(error)")
            }
        }
    }
}
