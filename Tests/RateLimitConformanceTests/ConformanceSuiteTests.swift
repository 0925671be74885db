import RateLimitConformance
import RateLimitCore
import Testing

/// The reference with a bug planted in its answers: `mutate` rewrites each answer. Its state is
/// the reference's, so the planted bug shows exactly where `mutate` changes something.
struct PlantedBug: ConformanceSubject {
    var name = "planted bug"
    var strategies = Set(StrategyConfiguration.identifiers)
    let mutate: @Sendable (ConformanceEvent, RateLimitResult) -> RateLimitResult
    var unsupported: @Sendable (StrategyConfiguration) -> String? = { _ in nil }
    var acceptsEverything = false

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<ReferenceLimiter> {
        guard let configuration = request.configuration else {
            return acceptsEverything ? .created(ReferenceLimiter(.concurrency(try! ConcurrencyLimiter(limit: 1)), at: .origin))
                : ReferenceSubject().create(request, at: now)
        }
        if let reason = unsupported(configuration) { return .unsupported(reason: reason) }
        return ReferenceSubject().create(request, at: now)
    }

    func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64) -> RateLimitResult {
        mutate(event, ReferenceSubject().apply(event, to: &limiter, at: now))
    }
}

private func run<S: ConformanceSubject>(_ subject: S, _ options: ConformanceOptions = ConformanceOptions()) throws -> ConformanceReport {
    var subject = subject
    return try ConformanceSuite.run(&subject, options: options)
}

@Suite("The conformance suite judges implementations")
struct ConformanceSuiteTests {
    @Test("The reference passes every vector and random trace at level exact")
    func referencePasses() throws {
        let report = try run(ReferenceSubject(), ConformanceOptions(randomTraces: 5, seed: 3))
        #expect(report.passes(at: .exact))
        #expect(report.strategies.count == 9)
        for strategy in report.strategies {
            #expect(strategy.level == .exact, "\(strategy.strategy): \(strategy.level)")
            #expect(strategy.steps > 200)
        }
    }

    @Test("A retry-after one nanosecond short fails both levels and names the first step")
    func shortRetryAfterFails() throws {
        let bug = PlantedBug { _, result in
            if case .rejected(let wait) = result, wait > 1 { return .rejected(retryAfterNanoseconds: wait - 1) }
            return result
        }
        let report = try run(bug, ConformanceOptions(strategies: [TokenBucket.identifier]))
        let strategy = try #require(report.strategies.first)
        #expect(strategy.level == .failed)
        let outcome = try #require(strategy.outcomes.first { $0.id == "token-bucket/starts-full" })
        #expect(outcome.firstViolation?.step == 2)
        #expect(outcome.firstViolation?.safetyViolation == "retry-after 9 ns is shorter than the Spec's 10 ns")
    }

    @Test("A retry-after one nanosecond long is safe but not exact")
    func longRetryAfterIsSafe() throws {
        let bug = PlantedBug { _, result in
            if case .rejected(let wait) = result, wait < Int64.max { return .rejected(retryAfterNanoseconds: wait + 1) }
            return result
        }
        let report = try run(bug, ConformanceOptions(strategies: [GCRA.identifier, FixedWindow.identifier]))
        #expect(report.strategies.allSatisfy { $0.level == .safety })
        #expect(report.passes(at: .safety))
        #expect(!report.passes(at: .exact))
    }

    @Test("Admitting what the Spec refuses fails safety; promising more remaining fails safety")
    func overAdmissionFails() throws {
        let admitsAll = PlantedBug { event, result in
            if case .acquire = event, case .rejected = result { return .allowed(remaining: 0) }
            return result
        }
        let overPromises = PlantedBug { _, result in
            if case .allowed(let remaining) = result { return .allowed(remaining: remaining + 1) }
            return result
        }
        for bug in [admitsAll, overPromises] {
            let report = try run(bug, ConformanceOptions(strategies: [SlidingWindowLog.identifier]))
            #expect(report.strategies.first?.level == .failed)
        }
    }

    @Test("A release the Spec refuses, applied anyway, fails safety (CL-8)")
    func overReleaseFails() throws {
        let bug = PlantedBug { event, result in
            if case .release = event, case .invalid = result { return .allowed(remaining: 3) }
            return result
        }
        let report = try run(bug, ConformanceOptions(strategies: [ConcurrencyLimiter.identifier]))
        #expect(report.strategies.first?.level == .failed)
    }

    @Test("Unsupported strategies and configurations are skipped with their reason, not failed")
    func unsupportedIsSkipped() throws {
        var bug = PlantedBug { _, result in result }
        bug.strategies = [TokenBucket.identifier]
        bug.unsupported = { configuration in
            if case .tokenBucket(let bucket) = configuration, bucket.periodNanoseconds % 10 != 0 { return "periods must be multiples of 10 ns" }
            return nil
        }
        let report = try run(bug)
        let bucket = try #require(report.strategies.first { $0.strategy == TokenBucket.identifier })
        #expect(bucket.level == .exact)
        #expect(!bucket.skipped.isEmpty)
        #expect(bucket.skipped.allSatisfy { $0.skippedBecause == "periods must be multiples of 10 ns" })
        #expect(report.strategies.filter { $0.level == .skipped }.count == 8)
        #expect(report.passes(at: .exact))
    }

    @Test("A configuration the Spec refuses must be refused (CORE-3)")
    func refusalsChecked() throws {
        var bug = PlantedBug { _, result in result }
        bug.acceptsEverything = true
        let report = try run(bug, ConformanceOptions(strategies: [FixedWindow.identifier]))
        let refusal = try #require(report.strategies.first?.outcomes.first { $0.id == "fixed-window/refuse-zero-limit" })
        #expect(refusal.level == .failed)
        #expect(refusal.firstViolation?.safetyViolation == "accepted a configuration the Spec refuses")
    }

    @Test("--case filters by id or by prefix")
    func caseFilter() throws {
        let one = try run(ReferenceSubject(), ConformanceOptions(cases: ["gcra/boundary-conforms"]))
        #expect(one.strategies.flatMap(\.outcomes).map(\.id) == ["gcra/boundary-conforms"])
        let refusals = try run(ReferenceSubject(), ConformanceOptions(strategies: [GCRA.identifier], cases: ["gcra/refuse-zero-burst", "gcra/random-1"]))
        #expect(refusals.strategies.first?.outcomes.count == 2)
    }

    @Test("Random traces find an edge bug the vectors were not written for, and shrink it to a minimal trace")
    func randomFindsAndShrinks() throws {
        let edge = EdgeBug()
        let report = try run(edge, ConformanceOptions(strategies: [FixedWindow.identifier], randomTraces: 200, randomSteps: 60, seed: 11))
        let strategy = try #require(report.strategies.first)
        let shrunk = try #require(strategy.shrunk, "200 random traces did not find the planted edge bug")
        #expect(shrunk.trace.steps.count <= 3, "shrunk to \(shrunk.trace.steps.count) steps:\n\(shrunk.table)")
        #expect(shrunk.table.contains("<- differs"))
        // The shrunk trace, as a vector file, replays: the reference passes it and the bug fails it.
        let file = try VectorFile(json: try JSONValue(parsing: shrunk.vectorFile.json.prettyText))
        var reference = ReferenceSubject()
        #expect(try ConformanceSuite.run(&reference, vectors: [file], options: ConformanceOptions(strategies: [FixedWindow.identifier])).passes(at: .exact))
        var again = edge
        #expect(!(try ConformanceSuite.run(&again, vectors: [file], options: ConformanceOptions(strategies: [FixedWindow.identifier])).passes(at: .exact)))
    }
}

/// A fixed window whose count is not reset when an acquire lands exactly on a window start
/// (it uses the window of `now − 1`): the classic off-by-one at the edge.
struct EdgeBug: ConformanceSubject {
    var name: String { "edge bug" }
    var strategies: Set<String> { [FixedWindow.identifier] }

    struct Limiter {
        var limit: Int64
        var window: Int64
        var used: Int64 = 0
        var index: Int64
    }

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
        guard case .fixedWindow(let window)? = request.configuration else { return .refused(field: "limit", problem: .mustBePositive) }
        return .created(Limiter(limit: window.limit, window: window.windowNanoseconds, index: max(0, now - 1) / window.windowNanoseconds))
    }

    func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) -> RateLimitResult {
        let index = max(limiter.index, max(0, now - 1) / limiter.window)
        let used = index == limiter.index ? limiter.used : 0
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(RateLimitInputError(field: "permits", value: permits, problem: .mustNotBeNegative)) }
            if permits > limiter.limit { return .neverAllowed }
            if permits == 0 { return .allowed(remaining: max(0, limiter.limit - used)) }
            guard permits <= limiter.limit - used else {
                let (start, overflow) = (index + 1).multipliedReportingOverflow(by: limiter.window)
                guard !overflow, start < Int64.max else { return .neverAllowed }
                return .rejected(retryAfterNanoseconds: start + 1 - now)
            }
            (limiter.index, limiter.used) = (index, used + permits)
            return .allowed(remaining: limiter.limit - used - permits)
        case .release: return .invalid(RateLimitInputError(field: "release", value: nil, problem: .notSupported))
        case .reset: (limiter.index, limiter.used) = (index, 0); return .allowed(remaining: limiter.limit)
        case .reconfigure(let configuration):
            guard case .fixedWindow(let window) = configuration else { return .neverAllowed }
            (limiter.limit, limiter.window, limiter.index, limiter.used) = (window.limit, window.windowNanoseconds, index, used)
            return .allowed(remaining: max(0, window.limit - used))
        }
    }
}
