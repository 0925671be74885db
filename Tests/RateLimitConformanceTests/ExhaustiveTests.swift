import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitConformance

/// Every reachable state of small limiters (ExhaustiveChecker), not a sample: the standard
/// spaces of `ExhaustiveSpaces.swift` (their bounds, and why they are enough, are written there),
/// each to its fixpoint: every reachable state.
@Suite("Exhaustive: every reachable state of small limiters")
struct ExhaustiveTests {
    static func expectClean(_ report: ExhaustiveChecker.Report, elapsed: Duration) {
        print("exhaustive: \(report) in \(elapsed)")
        #expect(report.states > 10, "the walk reached more than the start: \(report)")
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
    }

    /// `strategy` in the standard space of its kind, without reconfigures (their targets are of
    /// the standard configuration's type, not `S`).
    static func space<S: RateLimitStrategy>(_ strategy: S) throws -> ExhaustiveSpace<S> {
        let standard = try #require(ExhaustiveSpace.standard(S.identifier))
        let events = standard.events.compactMap { event -> RateLimitEvent<S>? in
            switch event {
            case .acquire(let permits): .acquire(permits)
            case .release(let permits): .release(permits)
            case .reset: .reset
            case .reconfigure: nil
            }
        }
        return standard.with(strategy, events: events)
    }

    @Test(
        "PL-11 the admission bound counts what came before the last acquire even when that acquire takes Int64.max permits"
    )
    func debtBoundSurvivesASaturatedAcquire() throws {
        let payLater = try PayLater(burst: 2, emissionIntervalNanoseconds: 10)
        let bound = AdmissionBound(.payLater(payLater))
        var monitor = AdmissionMonitor(createdAt: 0)
        var violations: [String] = []
        // Two permits at 0, then Int64.max more at 0: before the last acquire 2 were admitted,
        // more than PL-11's B − 1 = 1, whatever the last one took.
        for permits in [1, 1, Int64.max] {
            violations += monitor.observe(
                RateLimitEvent<PayLater>.acquire(permits), at: 0, result: .allowed(remaining: 0), bound: bound,
                after: bound)
        }
        #expect(violations.count == 1, "\(violations)")
        #expect(violations.first?.hasPrefix("PL-11 2 permits") == true, "\(violations)")
    }

    @Test(
        "CORE-5 CORE-6 CORE-7 CORE-8 CORE-10 CORE-13 and each strategy's clause 11 hold on every reachable state",
        arguments: AnyRateLimitStrategy.identifiers)
    func everyStrategy(_ identifier: String) async throws {
        let space = try #require(ExhaustiveSpace.standard(identifier))
        await offThePool {
            var report: ExhaustiveChecker.Report!
            let elapsed = ContinuousClock().measure {
                report = ExhaustiveChecker.walk(space, name: identifier).report
            }
            Self.expectClean(report, elapsed: elapsed)
            #expect(report.complete, "the walk reaches its fixpoint: \(report)")
        }
    }

    @Test(
        "TB-12 LBM-12 GCRA-12 TBI-12 FW-12 SWS-12 SWL-12 WU-12 PL-12 the equivalences between strategies hold on every reachable pair of states"
    )
    func equivalences() async throws {
        let spaces = (
            try Self.space(TokenBucket(capacity: 3, permitsPerPeriod: 2, periodNanoseconds: 3, initialTokens: 1)),
            try Self.space(
                LeakyBucketMeter(capacity: 3, leakPermitsPerPeriod: 2, periodNanoseconds: 3, initialLevel: 2)),
            try Self.space(TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 2)),
            try Self.space(GCRA(burst: 3, emissionIntervalNanoseconds: 2)),
            try Self.space(IntervalTokenBucket(capacity: 3, tokensPerInterval: 3, intervalNanoseconds: 4)),
            try Self.space(FixedWindow(limit: 3, windowNanoseconds: 4)),
            try Self.space(SlidingWindowSegments(limit: 3, segmentsPerWindow: 1, segmentNanoseconds: 4)),
            try Self.space(SlidingWindowSegments(limit: 3, segmentsPerWindow: 4, segmentNanoseconds: 1)),
            try Self.space(SlidingWindowLog(limit: 3, windowNanoseconds: 4)),
            try Self.space(WarmUp(burst: 3, emissionIntervalNanoseconds: 2, warmUpPeriodNanoseconds: 0)),
            try Self.space(PayLater(burst: 3, emissionIntervalNanoseconds: 2))
        )
        await offThePool {
            let pairs = [
                ExhaustiveChecker.walkPair(
                    spaces.0, spaces.1, name: "token bucket (3, 2, 3, 1) ≡ leaky bucket meter (3, 2, 3, 2)"),
                ExhaustiveChecker.walkPair(spaces.2, spaces.3, name: "token bucket (3, 1, 2, 3) ≡ GCRA (3, 2)"),
                ExhaustiveChecker.walkPair(
                    spaces.4, spaces.5, name: "interval token bucket (3, 3, 4, 3) ≡ fixed window (3, 4)"),
                ExhaustiveChecker.walkPair(
                    spaces.6, spaces.5, name: "segmented window (3, 1, 4) ≡ fixed window (3, 4)"),
                ExhaustiveChecker.walkPair(
                    spaces.7, spaces.8, name: "segmented window (3, 4, 1) ≡ sliding window log (3, 4)"),
                ExhaustiveChecker.walkPair(spaces.9, spaces.10, name: "warm-up (3, 2, 0) ≡ pay later (3, 2)"),
            ]
            for report in pairs {
                print("exhaustive: \(report)")
                #expect(report.complete && report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
            }
        }
    }

    /// A configuration that admits more than the standard one, whose bound the walk then checks.
    static let generous: [String: AnyRateLimitStrategy] = {
        var configurations: [String: AnyRateLimitStrategy] = [:]
        configurations[TokenBucket.identifier] = try? .tokenBucket(
            TokenBucket(capacity: 3, permitsPerPeriod: 3, periodNanoseconds: 3))
        configurations[IntervalTokenBucket.identifier] = try? .intervalTokenBucket(
            IntervalTokenBucket(capacity: 3, tokensPerInterval: 3, intervalNanoseconds: 4, initialTokens: 0))
        configurations[GCRA.identifier] = try? .gcra(GCRA(burst: 3, emissionIntervalNanoseconds: 1))
        configurations[PayLater.identifier] = try? .payLater(PayLater(burst: 3, emissionIntervalNanoseconds: 1))
        configurations[WarmUp.identifier] = try? .warmUp(
            WarmUp(burst: 2, emissionIntervalNanoseconds: 1, warmUpPeriodNanoseconds: 0))
        configurations[FixedWindow.identifier] = try? .fixedWindow(FixedWindow(limit: 4, windowNanoseconds: 4))
        configurations[SlidingWindowLog.identifier] = try? .slidingWindowLog(
            SlidingWindowLog(limit: 3, windowNanoseconds: 3))
        configurations[SlidingWindowCounter.identifier] = try? .slidingWindowCounter(
            SlidingWindowCounter(limit: 4, windowNanoseconds: 4))
        configurations[SlidingWindowSegments.identifier] = try? .slidingWindowSegments(
            SlidingWindowSegments(limit: 4, segmentsPerWindow: 2, segmentNanoseconds: 2))
        configurations[LeakyBucketMeter.identifier] = try? .leakyBucketMeter(
            LeakyBucketMeter(capacity: 4, leakPermitsPerPeriod: 2, periodNanoseconds: 3))
        configurations[LeakyBucketQueue.identifier] = try? .leakyBucketQueue(
            LeakyBucketQueue(queueCapacity: 2, intervalNanoseconds: 2))
        configurations[ConcurrencyLimiter.identifier] = try? .concurrency(ConcurrencyLimiter(limit: 4))
        return configurations
    }()

    @Test(
        "TB-11 TBI-11 GCRA-11 PL-11 WU-11 FW-11 SWL-11 SWC-11 SWS-11 LBM-11 LBQ-11 CL-11 the walk finds admissions beyond each bound (a more generous configuration)",
        arguments: AnyRateLimitStrategy.identifiers)
    func boundsAreChecked(_ identifier: String) async throws {
        var space = try #require(ExhaustiveSpace.standard(identifier))
        let bound = AdmissionBound(space.strategy)
        space.strategy = try #require(Self.generous[identifier])
        space.events.removeAll { if case .reconfigure = $0 { true } else { false } }
        let report = await offThePool {
            ExhaustiveChecker.walk(space, name: identifier, depthLimit: 3, bound: { _ in bound }).report
        }
        #expect(
            report.violations.contains { $0.contains("\(bound.clause) ") }, "\(bound.clause) unchecked: \(report)")
    }

    @Test(
        "CONF-7 the exhaustive pass honours a monotonic profile: no path of any strategy sends an instant before the one before it, or before creation"
    )
    func monotonicProfileNeverGoesBack() throws {
        let profile = ImplementationProfile(largestInstantNanoseconds: 1_000_000, monotonic: true)
        for strategy in AnyRateLimitStrategy.identifiers {
            let cover = try #require(ExhaustiveCover(strategy, profile: profile, depth: 2))
            #expect(cover.paths.count > 10, "\(strategy)")
            for (index, path) in cover.paths.enumerated() {
                let instants = [path.trace.createdAt] + path.trace.steps.map(\.now)
                guard zip(instants, instants.dropFirst()).allSatisfy({ $0 <= $1 }) else {
                    Issue.record("\(strategy) path \(index) goes back: \(instants)")
                    break
                }
            }
        }
    }

    @Test(
        "CONF-10 the exhaustive pass goes on past a failing path: three planted faults give three causes, each with its first path shrunk"
    )
    func everyCause() {
        // Remaining one too many (TB-5), retry-afters one short (TB-6), resets promising one more (TB-9).
        var bug = PlantedBug { event, result in
            switch (event, result) {
            case (.reset, .allowed(let remaining)): .allowed(remaining: remaining + 1)
            case (.acquire(let permits), .allowed(let remaining)) where permits > 0 && remaining >= 1:
                .allowed(remaining: remaining + 1)
            case (.acquire, .rejected(let retry)) where retry > 1: .rejected(retryAfterNanoseconds: retry - 1)
            default: result
            }
        }
        bug.strategies = [TokenBucket.identifier]
        let report = ConformanceSuite.exhaustive(
            &bug, options: ExhaustiveOptions(depth: 2, strategies: [TokenBucket.identifier]))
        let bucket = report.strategies[0]
        let causes = bucket.findings.map(\.cause)
        #expect(
            Set(causes.map { String($0.prefix { $0 != " " }) }) == ["TB-5", "TB-6", "TB-9"],
            "\(causes)")
        #expect(bucket.findings.allSatisfy { ($0.shrunk?.trace.steps.count ?? .max) <= 3 }, "\(report.lines)")
        #expect(bucket.pathsRun == bucket.paths && bucket.failure != nil && !report.passes(at: .safety))
        #expect(bucket.findings.reduce(0) { $0 + $1.paths } > 3)
        #expect(report.lines.contains { $0.hasPrefix("token-bucket: 3 distinct causes on ") }, "\(report.lines)")
    }

    @Test("The exhaustive pass says what it does before its walk and during its paths, and times each strategy")
    func progressAndTime() {
        var subject = ReferenceSubject()
        var lines: [String] = []
        var tick = 0.0
        let report = ConformanceSuite.exhaustive(
            &subject, options: ExhaustiveOptions(depth: 2, strategies: [GCRA.identifier]),
            clock: {
                tick += 0.001
                return tick
            }, progress: { lines.append($0) })
        #expect(lines.first == "gcra exhaustive depth 2: walking the reference's states", "\(lines)")
        #expect(lines.dropFirst().first?.hasPrefix("gcra exhaustive depth 2: path 1/") == true, "\(lines)")
        #expect(report.strategies[0].seconds > 0 && report.table.first?.hasSuffix("time") == true)
    }

    @Test("CORE-7 CORE-8 the walk finds a retry-after rounded down and a refusal that records its refill")
    func relationsAreChecked() async throws {
        let tokenBucket = try #require(ExhaustiveSpace.standard(TokenBucket.identifier))
        for (mutation, clause) in [(Mutation.roundingFlip, "CORE-7 retry-after"), (.refillOnRejection, "CORE-8 ")] {
            let space = tokenBucket.with(
                Mutant(inner: tokenBucket.strategy, mutation: mutation),
                events: tokenBucket.events.compactMap { if case .acquire(let n) = $0 { .acquire(n) } else { nil } })
            let report = await offThePool {
                ExhaustiveChecker.walk(space, name: mutation.rawValue, depthLimit: 3).report
            }
            #expect(report.violations.contains { $0.contains(clause) }, "\(mutation): \(report)")
        }
    }
}
