import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// Random traces find bugs the vectors were not written for, shrink them and name their cause
// (Spec/Conformance.md), on subjects with planted edge bugs.

@Suite("Random traces find, shrink and explain bugs")
struct RandomTraceTests {
    @Test("Random traces find an edge bug the vectors were not written for, and shrink it to a minimal trace")
    func randomFindsAndShrinks() async throws { try await offThePool { try randomFindsAndShrinksOnThread() } }

    private func randomFindsAndShrinksOnThread() throws {
        let edge = EdgeBug()
        let report = try run(
            edge, ConformanceOptions(strategies: [FixedWindow.identifier], randomTraces: 200, randomSteps: 60, seed: 11)
        )
        let strategy = try #require(report.strategies.first)
        let shrunk = try #require(strategy.shrunk, "200 random traces did not find the planted edge bug")
        #expect(
            shrunk.trace.steps.count <= 3,
            "shrunk to \(shrunk.trace.steps.count) steps:\n\(shrunk.lines.joined(separator: "\n"))")
        #expect(shrunk.lines.contains { $0.contains("<- here") })
        #expect(shrunk.outcome.primary?.cause.clause == "FW-3", "\(String(describing: shrunk.outcome.primary))")
        // The shrunk trace, as a vector file, replays: the reference passes it and the bug fails it.
        let file = try VectorFile(json: try JSONValue(parsing: shrunk.vectorFile.json.prettyText))
        var reference = ReferenceSubject()
        #expect(
            try ConformanceSuite.run(
                &reference, vectors: [file], options: ConformanceOptions(strategies: [FixedWindow.identifier])
            ).passes(at: .exact))
        var again = edge
        #expect(
            !(try ConformanceSuite.run(
                &again, vectors: [file], options: ConformanceOptions(strategies: [FixedWindow.identifier])
            ).passes(at: .exact)))
    }

    @Test("Shrinking keeps the most severe kind: an over-admission does not shrink into a retry-after 1 ns short")
    func shrinkingKeepsTheKind() async throws { try await offThePool { try shrinkingKeepsTheKindOnThread() } }

    private func shrinkingKeepsTheKindOnThread() throws {
        // Every retry-after 1 ns short, and an over-admission when a bucket's whole capacity is
        // asked for and refused: the over-admission is the failure to shrink.
        let bug = PlantedBug(mutate: { event, result, _ in
            switch (event, result) {
            case (.acquire(let permits), .rejected) where permits == 3: .allowed(remaining: 0)
            case (_, .rejected(let wait)) where wait > 1: .rejected(retryAfterNanoseconds: wait - 1)
            default: result
            }
        })
        let options = ConformanceOptions(
            strategies: [TokenBucket.identifier], cases: [], randomTraces: 60, randomSteps: 60, seed: 2)
        let strategy = try #require(try run(bug, options).strategies.first)
        #expect(
            strategy.randomTraces.contains { $0.primary?.kind == .earlyRetry },
            "the seed must also find the milder kind")
        let shrunk = try #require(strategy.shrunk)
        #expect(shrunk.original.primary?.kind == .overAdmission)
        #expect(shrunk.outcome.primary?.kind == .overAdmission, "\(shrunk.lines.joined(separator: "\n"))")
    }

    @Test(
        "CONF-10 CORE-10 Go's re-grant after time went back is found under CORE-10 by experiment, not by the step alone"
    )
    func causeByExperiment() async throws { try await offThePool { try causeByExperimentOnThread() } }

    private func causeByExperimentOnThread() throws {
        let report = try run(
            GoLikeBucket(),
            ConformanceOptions(strategies: [TokenBucket.identifier], cases: ["token-bucket/go-backward-time"]))
        let outcome = try #require(report.strategies.first?.outcomes.first)
        #expect(outcome.level == .failed)
        #expect(
            outcome.failure?.cause == FindingCause("CORE-10", "time going backwards"),
            "\(outcome.findings.map(ConformanceReport.describe))")
        // Without the experiment, the failing step shows only a retry-after or an admission.
        #expect(outcome.findings.dropLast().allSatisfy { $0.cause.clause != "CORE-10" })
    }
}

/// A token bucket with Go x/time/rate's handling of time (rate.go, `advance`): an instant
/// earlier than `last` becomes `last`, so the time between them is counted again later. Only
/// acquires, which is all the story it runs has. Tokens are kept in units of 1/P of a permit.
struct GoLikeBucket: ConformanceSubject {
    /// Not zero-sized: ThreadSanitizer crashes on a zero-sized inout subject (ReferenceSubject says why).
    private var notZeroSized: UInt8 = 0

    var name: String { "go-like bucket" }
    var strategies: Set<String> { [TokenBucket.identifier] }

    struct Limiter {
        var capacity: Int64, permits: Int64, period: Int64
        var units: Int64
        var last: Int64
    }

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
        guard case .tokenBucket(let bucket)? = request.configuration else {
            return .unsupported(reason: "token buckets only")
        }
        return .created(
            Limiter(
                capacity: bucket.capacity, permits: bucket.permitsPerPeriod, period: bucket.periodNanoseconds,
                units: bucket.initialTokens * bucket.periodNanoseconds, last: now))
    }

    func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) -> RateLimitResult {
        guard case .acquire(let n) = event, n > 0 else {
            return .invalid(RateLimitInputError(field: "event", value: nil, problem: .notSupported))
        }
        let last = min(limiter.last, now)  // Go: if t.Before(last) { last = t }
        let units = min(limiter.capacity * limiter.period, limiter.units + (now - last) * limiter.permits)
        guard units >= n * limiter.period else {
            let missing = n * limiter.period - units
            return .rejected(retryAfterNanoseconds: (missing + limiter.permits - 1) / limiter.permits)
        }
        (limiter.units, limiter.last) = (units - n * limiter.period, now)
        return .allowed(remaining: limiter.units / limiter.period)
    }
}

/// A fixed window whose count is not reset when an acquire lands exactly on a window start
/// (it uses the window of `now − 1`): the classic off-by-one at the edge.
struct EdgeBug: ConformanceSubject {
    /// Not zero-sized: ThreadSanitizer crashes on a zero-sized inout subject (ReferenceSubject says why).
    private var notZeroSized: UInt8 = 0

    var name: String { "edge bug" }
    var strategies: Set<String> { [FixedWindow.identifier] }

    /// Its reconfigure keeps the window index of the old length (a second bug, which long random
    /// histories find and shrink first): the profile leaves reconfigures out, so that the edge is
    /// what the random traces find.
    func profile(for strategy: String) -> ImplementationProfile {
        ImplementationProfile(events: Set(ImplementationProfile.Event.allCases).subtracting([.reconfigure]))
    }

    struct Limiter {
        var limit: Int64
        var window: Int64
        var used: Int64 = 0
        var index: Int64
    }

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
        guard case .fixedWindow(let window)? = request.configuration else {
            return .refused(field: "limit", problem: .mustBePositive)
        }
        return .created(
            Limiter(
                limit: window.limit, window: window.windowNanoseconds, index: max(0, now - 1) / window.windowNanoseconds
            ))
    }

    func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) -> RateLimitResult {
        let index = max(limiter.index, max(0, now - 1) / limiter.window)
        let used = index == limiter.index ? limiter.used : 0
        switch event {
        case .acquire(let permits):
            if permits < 0 {
                return .invalid(RateLimitInputError(field: "permits", value: permits, problem: .mustNotBeNegative))
            }
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
        case .reset:
            (limiter.index, limiter.used) = (index, 0)
            return .allowed(remaining: limiter.limit)
        case .reconfigure(let configuration):
            guard case .fixedWindow(let window) = configuration else { return .neverAllowed }
            (limiter.index, limiter.used) = (index, used)
            (limiter.limit, limiter.window) = (window.limit, window.windowNanoseconds)
            return .allowed(remaining: max(0, window.limit - used))
        }
    }

    @Test(
        "CONF-3 CONF-8 An invalid answer or a refusal naming another maximum is a difference: safe, not exact, and the report prints both maxima"
    )
    func otherMaximumIsADifference() async throws { try await offThePool { try otherMaximumIsADifferenceOnThread() } }

    private func otherMaximumIsADifferenceOnThread() throws {
        let releases = PlantedBug { event, result in
            if case .release = event, case .invalid(let error) = result, case .exceedsMaximum(let held) = error.problem
            {
                return .invalid(RateLimitInputError(field: error.field, value: nil, problem: .exceedsMaximum(held + 1)))
            }
            return result
        }
        let report = try run(releases, ConformanceOptions(strategies: [ConcurrencyLimiter.identifier]))
        let strategy = try #require(report.strategies.first)
        #expect(strategy.level == .safety && strategy.validation == .exact)
        let outcome = try #require(strategy.outcomes.first { $0.id == "concurrency/invalid-releases" })
        let finding = try #require(outcome.primary)
        #expect(finding.kind == .difference && finding.step == 2)
        #expect(
            ConformanceReport.describe(finding)
                == "step 2 at 0 ns release(3): expected invalid(permits: exceedsMaximum 2), got invalid(permits: exceedsMaximum 3) (safe, not exact)"
        )
        #expect(report.passes(at: .safety) && !report.passes(at: .exact))

        let refusals = try run(OtherMaximum(), ConformanceOptions(strategies: [TokenBucket.identifier]))
        let bucket = try #require(refusals.strategies.first)
        #expect(bucket.level == .exact && bucket.validation == .safety)
        let refusal = try #require(bucket.refusals.first { $0.id == "token-bucket/refuse-initial-above-capacity" })
        #expect(refusal.level == .safety)
        #expect(
            refusal.primary.map(ConformanceReport.describe)
                == "create {\"capacity\":3,\"permitsPerPeriod\":1,\"periodNanoseconds\":1,\"initialTokens\":4}: expected refused initialTokens (exceedsMaximum 3), got refused initialTokens (exceedsMaximum 4) (safe, not exact)"
        )
        #expect(refusals.passes(at: .safety) && !refusals.passes(at: .exact))
    }

    @Test(
        "CORE-13 CONF-4 A reconfigure to a configuration the Spec refuses must be answered invalid: applying it fails safety, naming another field is a difference"
    )
    func refusedReconfigure() async throws { try await offThePool { try refusedReconfigureOnThread() } }

    private func refusedReconfigureOnThread() throws {
        let cases = Set(AnyRateLimitStrategy.identifiers.map { "\($0)/reconfigure-refused" })
        let options = ConformanceOptions(cases: cases)
        let exact = try run(RawReconfigure { $0 }, options)
        for strategy in exact.strategies {
            let outcome = try #require(strategy.stories.first, "\(strategy.strategy)")
            #expect(outcome.level == .exact && outcome.steps >= 4, "\(outcome.id): \(outcome.skippedBecause ?? "")")
            #expect(outcome.clauses.contains("CORE-13"))
        }
        #expect(exact.passes(at: .exact))

        let applies = try run(RawReconfigure { _ in .allowed(remaining: 0) }, options)
        for strategy in applies.strategies {
            let failure = try #require(strategy.stories.first?.failure, "\(strategy.strategy)")
            #expect(failure.step == 2 && failure.kind == .overAdmission, "\(strategy.strategy)")
            #expect(failure.cause.clause == "CORE-13" && failure.event.hasPrefix("reconfigure({"))
        }
        #expect(!applies.passes(at: .safety))

        let otherField = try run(
            RawReconfigure { _ in
                .invalid(RateLimitInputError(field: "configuration", value: nil, problem: .notSupported))
            },
            options)
        #expect(otherField.strategies.allSatisfy { $0.level == .safety })
        let malformed = try run(RawReconfigure { _ in .rejected(retryAfterNanoseconds: 5) }, options)
        #expect(malformed.strategies.allSatisfy { $0.stories.first?.failure?.kind == .malformed })

        // A Swift subject that builds its configurations itself cannot be sent one: the story is skipped.
        let builds = try run(PlantedBug { _, result in result }, options)
        for strategy in builds.strategies {
            let outcome = try #require(strategy.stories.first)
            #expect(outcome.outsideProfile && outcome.skippedBecause?.contains("cannot receive") == true)
        }
    }

}
