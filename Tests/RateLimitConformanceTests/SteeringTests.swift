import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

/// The reference, except that from its 1,000th admission on every admission answers one permit
/// more than is left (a schedule renormalised every 1,000 acquires).
private struct WrongAfterThousandAdmissions: ConformanceSubject {
    /// Not zero-sized: ThreadSanitizer crashes on a zero-sized inout subject (ReferenceSubject says why).
    private var notZeroSized: UInt8 = 0
    struct Limiter {
        var reference: ReferenceLimiter
        var admitted = 0
    }
    var name: String { "wrong after 1,000 admissions" }
    var strategies: Set<String> { [GCRA.identifier] }
    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
        ReferenceSubject().create(request, at: now).map { Limiter(reference: $0) }
    }
    func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) -> RateLimitResult {
        let answer = ReferenceSubject().apply(event, to: &limiter.reference, at: now)
        guard case .acquire(let permits) = event, permits > 0, case .allowed(let remaining) = answer else {
            return answer
        }
        limiter.admitted += 1
        return limiter.admitted >= 1_000 ? .allowed(remaining: remaining + 1) : answer
    }
}

/// The reference, except that a sliding window log keeps at most 64 entries: with more than 64
/// permits in its window it answers one more left than there is.
private struct LogOfSixtyFour: ConformanceSubject {
    private var notZeroSized: UInt8 = 0
    struct Limiter {
        var reference: ReferenceLimiter
        var limit: Int64
    }
    var name: String { "a log of 64 entries" }
    var strategies: Set<String> { [SlidingWindowLog.identifier] }
    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
        guard case .slidingWindowLog(let log)? = request.configuration else {
            return ReferenceSubject().create(request, at: now).map { Limiter(reference: $0, limit: 0) }
        }
        return ReferenceSubject().create(request, at: now).map { Limiter(reference: $0, limit: log.limit) }
    }
    func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) -> RateLimitResult {
        let answer = ReferenceSubject().apply(event, to: &limiter.reference, at: now)
        if case .reconfigure(.slidingWindowLog(let log)) = event, answer.isAdmitted { limiter.limit = log.limit }
        guard case .acquire(let permits) = event, permits > 0, case .allowed(let remaining) = answer,
            limiter.limit - remaining > 64
        else { return answer }
        return .allowed(remaining: remaining + 1)
    }
}

@Suite("Random traces steered by coverage (Generation/Steering.swift)")
struct SteeringTests {
    @Test("CONF-7 trace K replays alone: the traces before it are planned again, as the whole run planned them")
    func replay() {
        let options = ConformanceOptions(randomSteps: 600, seed: TestSeed.base)
        for strategy in [GCRA.identifier, SlidingWindowLog.identifier, ConcurrencyLimiter.identifier] {
            var steering = TraceSteering(strategy: strategy)
            let traces = (0..<14).compactMap { _ in steering.draw(options: options, profile: .full) }
            #expect(traces.count == 14)
            for index in [0, 4, 9, 13] {
                var alone = TraceSteering(strategy: strategy)
                alone.skip(to: index, options: options, profile: .full)
                let replayed = alone.draw(options: options, profile: .full)
                #expect(replayed?.0 == traces[index].0, "seed \(TestSeed.base), \(strategy) trace \(index)")
                #expect(replayed?.1 == traces[index].1, "seed \(TestSeed.base), \(strategy) trace \(index)")
            }
        }
    }

    @Test(
        "CONF-7 after four short blind traces, every regime of instants with mid-range sizes is tried, a long history first"
    )
    func opening() {
        var steering = TraceSteering(strategy: TokenBucket.identifier)
        let options = ConformanceOptions(seed: TestSeed.base)
        let plans = (0..<11).compactMap { _ in steering.draw(options: options, profile: .full)?.1 }
        #expect(plans.prefix(4).allSatisfy { $0.history == nil && $0.steps <= 20 }, "seed \(TestSeed.base)")
        #expect(plans.dropFirst(4).map(\.swarm.times) == [.march, .burst, .dense, .edges, .classic, .idle, .backwards])
        #expect(plans.dropFirst(4).allSatisfy { $0.swarm.sizes == .medium })
        #expect(plans[4].history == .long && plans[4].steps > 1_000, "seed \(TestSeed.base): \(plans[4].steps) steps")
        #expect(steering.seen.count > 100, "seed \(TestSeed.base): \(steering.seen.count) features")
    }

    @Test("CONF-7 a GCRA wrong from its 1,000th admission on is found within 16 traces")
    func thousandthAdmission() async throws {
        try await offThePool {
            var subject = WrongAfterThousandAdmissions()
            let report = try ConformanceSuite.run(
                &subject,
                options: ConformanceOptions(
                    strategies: [GCRA.identifier], cases: [], randomTraces: 16, seed: TestSeed.base))
            let strategy = try #require(report.strategies.first)
            #expect(strategy.randomTraces.count == 16)
            #expect(strategy.randomTraces.contains { $0.level == .failed }, "seed \(TestSeed.base)")
        }
    }

    @Test("CONF-7 a sliding window log that keeps 64 entries is found within 16 traces")
    func logOfSixtyFour() async throws {
        try await offThePool {
            var subject = LogOfSixtyFour()
            let report = try ConformanceSuite.run(
                &subject,
                options: ConformanceOptions(
                    strategies: [SlidingWindowLog.identifier], cases: [], randomTraces: 16, seed: TestSeed.base))
            let strategy = try #require(report.strategies.first)
            #expect(strategy.randomTraces.count == 16)
            #expect(strategy.randomTraces.contains { $0.level != .exact }, "seed \(TestSeed.base)")
        }
    }

    @Test("CONF-7 a feature is an outcome with a quantity of its step bucketed by bit length")
    func features() throws {
        let gcra = AnyRateLimitStrategy.gcra(try GCRA(burst: 3, emissionIntervalNanoseconds: 10))
        let steps = [0, 0, 0, 0, 50].map { TraceStep(now: $0, event: .acquire(1)) }
        var reference = ReferenceLimiter(gcra, at: .origin)
        let answers = steps.map { reference.apply($0.event, at: .generated($0.now)) }
        let features = CoverageFeature.features(of: steps, answers: answers, initial: gcra, createdAt: 0)
        let admitted = CoverageFeature.outcome(of: .acquire(1), answer: .allowed(remaining: 0))
        let refused = CoverageFeature.outcome(of: .acquire(1), answer: .rejected(retryAfterNanoseconds: 1))
        func has(_ outcome: UInt8, _ aspect: CoverageFeature.Aspect, _ bucket: UInt8) -> Bool {
            features.contains(CoverageFeature(outcome: outcome, aspect: aspect.rawValue, bucket: bucket))
        }
        // Four admissions (bit length 3), three in a row (1, 2, 2), then a refusal waiting 10 ns (4).
        #expect(has(admitted, .stepsInTrace, 3) && !has(admitted, .stepsInTrace, 2))
        #expect(has(admitted, .inARow, 1) && has(admitted, .inARow, 2) && !has(admitted, .inARow, 3))
        #expect(has(refused, .wait, 4) && has(refused, .stepsInTrace, 1))
        #expect(has(admitted, .remaining, 0) && has(admitted, .remaining, 2) && has(admitted, .forward, 6))
        #expect(has(admitted, .largestAcquire, 2))
    }
}
