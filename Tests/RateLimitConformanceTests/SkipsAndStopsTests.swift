import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// What a conformance run skips, covers and stops at (Spec/Conformance.md CONF-8, CONF-11), on
// the planted-bug subjects of ConformanceSuiteTests.swift.

@Suite("What a conformance run skips, covers and stops at")
struct SkipsAndStopsTests {
    @Test("CONF-11 A strategy stops after three consecutive cases in which the implementation crashed")
    func consecutiveCrashesStop() async throws { try await offThePool { try consecutiveCrashesStopOnThread() } }

    private func consecutiveCrashesStopOnThread() throws {
        struct Crashes: ConformanceSubject {
            /// Not zero-sized: ThreadSanitizer crashes on a zero-sized inout subject (ReferenceSubject says why).
            private var notZeroSized: UInt8 = 0
            var name: String { "crashes" }
            var strategies: Set<String> { [GCRA.identifier] }
            func create(_ request: CreateRequest, at now: Int64) throws(SubjectFailure) -> CreateOutcome<Int> {
                throw SubjectFailure("exit status 3", kind: .crashed)
            }
            func apply(_ event: ConformanceEvent, to limiter: inout Int, at now: Int64) -> RateLimitResult {
                .neverAllowed
            }
        }
        let report = try run(Crashes(), ConformanceOptions(randomTraces: 100))
        let strategy = try #require(report.strategies.first { $0.strategy == GCRA.identifier })
        #expect(strategy.level == .failed)
        #expect(strategy.outcomes.count == 3)
        #expect(
            strategy.stoppedBecause?.hasPrefix(
                "stopped after 3 consecutive cases in which the implementation crashed; ") == true)
    }

    @Test(
        "CONF-11 CONF-7 a STOP after three cases that each broke at a reconfigure suggests declaring the profile's events without it"
    )
    func stopSuggestsTheProfile() async throws { try await offThePool { try stopSuggestsTheProfileOnThread() } }

    private func stopSuggestsTheProfileOnThread() throws {
        /// The reference, except that it answers an error to every reconfigure.
        struct NoReconfigure: ConformanceSubject {
            /// Not zero-sized: ThreadSanitizer crashes on a zero-sized inout subject (ReferenceSubject says why).
            private var notZeroSized: UInt8 = 0
            var name: String { "no reconfigure" }
            var strategies: Set<String> { [TokenBucket.identifier] }
            func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<ReferenceLimiter> {
                ReferenceSubject().create(request, at: now)
            }
            func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64)
                throws(SubjectFailure) -> RateLimitResult
            {
                if case .reconfigure = event {
                    throw SubjectFailure("reconfigure is not supported", kind: .brokeProtocol)
                }
                return ReferenceSubject().apply(event, to: &limiter, at: now)
            }
        }
        let ids = ["reconfigure-keeps-tokens", "reconfigure-keeps-fraction", "reconfigure-scales-fraction-up"]
        let report = try run(
            NoReconfigure(), ConformanceOptions(cases: Set(ids.map { "token-bucket/\($0)" }), randomTraces: 0))
        let stopped = try #require(report.strategies.first?.stoppedBecause)
        #expect(
            stopped.contains(
                "broke the protocol, each time at a reconfigure event: an implementation without it declares the profile's \"events\" without \"reconfigure\""
            ), "\(stopped)")
        // The optional events of a profile, by the event's form.
        #expect(ImplementationProfile.Event(optional: .acquire(0)) == .query)
        #expect(ImplementationProfile.Event(optional: .acquire(-2)) == .invalid)
        #expect(ImplementationProfile.Event(optional: .acquire(3)) == .weighted)
        #expect(ImplementationProfile.Event(optional: .acquire(1)) == nil)
        #expect(ImplementationProfile.Event(optional: .release(1)) == nil)
    }

    @Test(
        "CONF-11 a crash at the 150th event of three random traces ends those traces only: the implementation is restarted and every other trace is judged"
    )
    func crashEndsOneTrace() async throws { try await offThePool { try crashEndsOneTraceOnThread() } }

    private func crashEndsOneTraceOnThread() throws {
        /// The reference, except that the first three limiters to get 150 events crash at the 150th.
        struct CrashesAt150: ConformanceSubject {
            var crashes = 0
            struct Limiter {
                var reference: ReferenceLimiter
                var events = 0
            }
            var name: String { "crashes at the 150th event" }
            var strategies: Set<String> { [GCRA.identifier] }
            func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
                ReferenceSubject().create(request, at: now).map { Limiter(reference: $0) }
            }
            mutating func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64)
                throws(SubjectFailure) -> RateLimitResult
            {
                limiter.events += 1
                if limiter.events == 150, crashes < 3 {
                    crashes += 1
                    throw SubjectFailure("exit status 139", kind: .crashed)
                }
                return ReferenceSubject().apply(event, to: &limiter.reference, at: now)
            }
        }
        let options = ConformanceOptions(cases: [], randomTraces: 80, randomSteps: 2_000, seed: TestSeed.base)
        let report = try run(CrashesAt150(), options)
        let strategy = try #require(report.strategies.first { $0.strategy == GCRA.identifier })
        let crashed = strategy.randomTraces.filter { $0.subjectFailure != nil }
        #expect(strategy.randomTraces.count == 80 && strategy.stoppedBecause == nil, "seed \(TestSeed.base)")
        #expect(crashed.count == 3, "seed \(TestSeed.base): \(crashed.count) crashed")
        #expect(crashed.allSatisfy { $0.findings.contains { $0.step == 150 } }, "seed \(TestSeed.base)")
        #expect(strategy.randomTraces.filter { $0.level == .exact }.count == 77, "seed \(TestSeed.base)")
    }

    @Test(
        "The report counts the random traces' steps per clause reached, in text and JSON, and names the clauses no step reached"
    )
    func clauseCoverage() async throws { try await offThePool { try clauseCoverageOnThread() } }

    private func clauseCoverageOnThread() throws {
        let report = try run(ReferenceSubject(), ConformanceOptions(cases: [], randomTraces: 30, seed: TestSeed.base))
        for strategy in report.strategies {
            let prefix = AnyRateLimitStrategy.clausePrefixes[strategy.strategy] ?? strategy.strategy
            let steps = strategy.randomTraces.reduce(0) { $0 + $1.steps }
            // Every step reaches at least one clause of its own, by its answer's kind.
            let own = strategy.clauseHits.filter { $0.key.hasPrefix(prefix + "-") }.values.reduce(0, +)
            #expect(own >= steps && steps > 0, "\(strategy.strategy): \(own) of \(steps) (seed \(TestSeed.base))")
            #expect(strategy.clauseHits["\(prefix)-4"] == strategy.clauseHits["CORE-6"], "\(strategy.strategy)")
            let members = try #require(strategy.json["clauseCoverage"])
            #expect(members["\(prefix)-5"]?.int64 == strategy.clauseHits["\(prefix)-5"].map(Int64.init))
        }
        #expect(report.coverageLines.count == report.strategies.count)
        #expect(report.coverageLines.allSatisfy { $0.hasPrefix("COVERAGE ") }, "\(report.coverageLines)")
        let noReset = try run(
            OwnHistory(strategies: [GCRA.identifier], declared: ImplementationProfile(events: [.weighted, .query])) {
                event, state, now, _ in (state.probe(event, at: .generated(now)), now)
            }, ConformanceOptions(cases: [], randomTraces: 20, seed: TestSeed.base))
        let features = try #require(noReset.strategies.first { $0.strategy == GCRA.identifier }?.coverageFeatures)
        #expect(
            noReset.coverageLines.first?.hasSuffix(
                "not reached: CORE-12, CORE-13, GCRA-9, GCRA-10; \(features) coverage features") == true,
            "\(noReset.coverageLines)")
        #expect(features > 100 && report.strategies.allSatisfy { $0.json["coverageFeatures"]?.int64 ?? 0 > 100 })
    }

    @Test("Unsupported strategies and configurations are skipped with their reason, not failed")
    func unsupportedIsSkipped() async throws { try await offThePool { try unsupportedIsSkippedOnThread() } }

    private func unsupportedIsSkippedOnThread() throws {
        var bug = PlantedBug { _, result in result }
        bug.strategies = [TokenBucket.identifier]
        bug.unsupported = { configuration in
            if case .tokenBucket(let bucket) = configuration, bucket.periodNanoseconds % 10 != 0 {
                return "periods must be multiples of 10 ns"
            }
            return nil
        }
        let report = try run(bug)
        let bucket = try #require(report.strategies.first { $0.strategy == TokenBucket.identifier })
        #expect(bucket.level == .exact)
        #expect(!bucket.skipped.isEmpty)
        #expect(
            bucket.skipped.filter { !$0.outsideProfile }.allSatisfy {
                $0.skippedBecause == "periods must be multiples of 10 ns"
            })
        // A Swift subject builds its configurations itself: it is not sent a refused one (CORE-13).
        #expect(bucket.skipped.filter(\.outsideProfile).map(\.id) == ["token-bucket/reconfigure-refused"])
        #expect(report.strategies.filter { $0.level == .skipped }.count == AnyRateLimitStrategy.identifiers.count - 1)
        #expect(report.passes(at: .exact))
    }

    @Test(
        "CONF-7 CORE-3 A refusal case answered unsupported is never silent: NOT CHECKED names it, in text and JSON, and validation is judged on the others"
    )
    func unsupportedRefusalIsNotChecked() async throws {
        try await offThePool { try unsupportedRefusalIsNotCheckedOnThread() }
    }

    private func unsupportedRefusalIsNotCheckedOnThread() throws {
        /// The reference, but a window of 0 is "unsupported" (a library that reads it as no window).
        struct ZeroWindowUnsupported: ConformanceSubject {
            var name = "zero window unsupported"
            var strategies: Set<String> = [FixedWindow.identifier]
            func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<ReferenceLimiter> {
                if request.fields["windowNanoseconds"] == .integer(0) {
                    return .unsupported(reason: "0 means no window")
                }
                return ReferenceSubject().create(request, at: now)
            }
            func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64) -> RateLimitResult
            {
                ReferenceSubject().apply(event, to: &limiter, at: now)
            }
        }
        let report = try run(ZeroWindowUnsupported(), ConformanceOptions(strategies: [FixedWindow.identifier]))
        let window = try #require(report.strategies.first)
        let line =
            "CORE-3 the refusal fixed-window/refuse-zero-window, answered unsupported (0 means no window): validation is judged on the other refusals"
        #expect(window.notChecked == [line], "\(window.notChecked)")
        #expect(report.skippedLines.contains("NOT CHECKED fixed-window: " + line), "\(report.skippedLines)")
        #expect(report.json["strategies"]?.array?.first?["notChecked"] == .array([.string(line)]))
        #expect(window.validation == .exact && window.refusals.contains { $0.skippedBecause == nil })
    }

    @Test(
        "CONF-8 CORE-3 Accepting a configuration the Spec refuses fails validation, reported under CORE-3, not as an over-admission"
    )
    func refusalsChecked() async throws { try await offThePool { try refusalsCheckedOnThread() } }

    private func refusalsCheckedOnThread() throws {
        var bug = PlantedBug { _, result in result }
        bug.acceptsEverything = true
        let report = try run(bug, ConformanceOptions(strategies: [FixedWindow.identifier]))
        let strategy = try #require(report.strategies.first)
        #expect(strategy.level == .exact, "admissions are a verdict of their own")
        #expect(strategy.validation == .failed)
        #expect(!report.passes(at: .safety))
        let refusal = try #require(strategy.refusals.first { $0.id == "fixed-window/refuse-zero-limit" })
        #expect(refusal.failure?.kind == .acceptedBadConfiguration)
        #expect(refusal.failure?.cause.clause == "CORE-3")
        #expect(strategy.groups.map(\.cause.clause) == ["CORE-3"])
    }

    @Test("CONF-3 CONF-8 A failed validation fails the run even when every story of the strategy was unsupported")
    func validationAloneCounts() async throws { try await offThePool { try validationAloneCountsOnThread() } }

    private func validationAloneCountsOnThread() throws {
        var bug = PlantedBug { _, result in result }
        bug.strategies = [TokenBucket.identifier]
        bug.acceptsEverything = true
        bug.unsupported = { _ in "nothing valid is supported" }
        let report = try run(bug, ConformanceOptions(strategies: [TokenBucket.identifier]))
        let strategy = try #require(report.strategies.first)
        #expect(strategy.level == .skipped)
        #expect(strategy.validation == .failed)
        #expect(!report.passes(at: .safety))
    }

    @Test("--case filters by id or by prefix")
    func caseFilter() async throws { try await offThePool { try caseFilterOnThread() } }

    private func caseFilterOnThread() throws {
        let one = try run(ReferenceSubject(), ConformanceOptions(cases: ["gcra/boundary-conforms"]))
        #expect(one.strategies.flatMap(\.outcomes).map(\.id) == ["gcra/boundary-conforms"])
        let refusals = try run(
            ReferenceSubject(),
            ConformanceOptions(strategies: [GCRA.identifier], cases: ["gcra/refuse-zero-burst", "gcra/random-1"]))
        #expect(
            (refusals.strategies.first?.outcomes.count ?? 0) + (refusals.strategies.first?.refusals.count ?? 0) == 2)
    }
}
