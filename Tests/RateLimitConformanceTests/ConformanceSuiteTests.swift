import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

/// The reference with a bug planted in its answers: `mutate` rewrites each answer (given the
/// event and the instant). Its state is the reference's, so the planted bug shows exactly where
/// `mutate` changes something.
struct PlantedBug: ConformanceSubject {
    var name = "planted bug"
    var strategies = Set(AnyRateLimitStrategy.identifiers)
    let mutate: @Sendable (ConformanceEvent, RateLimitResult, Int64) -> RateLimitResult
    var unsupported: @Sendable (AnyRateLimitStrategy) -> String? = { _ in nil }
    var acceptsEverything = false

    init(mutate: @escaping @Sendable (ConformanceEvent, RateLimitResult, Int64) -> RateLimitResult) {
        self.mutate = mutate
    }

    init(_ mutate: @escaping @Sendable (ConformanceEvent, RateLimitResult) -> RateLimitResult) {
        self.mutate = { event, result, _ in mutate(event, result) }
    }

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<ReferenceLimiter> {
        guard let configuration = request.configuration else {
            return acceptsEverything
                ? .created(ReferenceLimiter(.concurrency(try! ConcurrencyLimiter(limit: 1)), at: .origin))
                : ReferenceSubject().create(request, at: now)
        }
        if let reason = unsupported(configuration) { return .unsupported(reason: reason) }
        return ReferenceSubject().create(request, at: now)
    }

    func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64) -> RateLimitResult {
        mutate(event, ReferenceSubject().apply(event, to: &limiter, at: now), now)
    }
}

/// A limiter that follows its own decisions: `decide` sees its state (a reference limiter) and
/// returns the answer to give and the instant at which to apply the event to that state (`nil`:
/// not applied). `memo` is the limiter's own scratch value.
struct OwnHistory: ConformanceSubject {
    var name = "own history"
    var strategies = Set(AnyRateLimitStrategy.identifiers)
    var declared = ImplementationProfile.full
    /// (event, state, now, memo) -> (answer, apply at)
    let decide: @Sendable (ConformanceEvent, ReferenceLimiter, Int64, inout Int) -> (RateLimitResult, Int64?)

    struct Limiter {
        var reference: ReferenceLimiter
        var memo = 0
    }

    func profile(for strategy: String) -> ImplementationProfile { declared }

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<Limiter> {
        ReferenceSubject().create(request, at: now).map { Limiter(reference: $0) }
    }

    func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) -> RateLimitResult {
        let (answer, instant) = decide(event, limiter.reference, now, &limiter.memo)
        if let instant { _ = limiter.reference.apply(event, at: .generated(instant)) }
        return answer
    }
}

/// The reference, answering a reconfigure to a configuration the Spec refuses with `answer` applied
/// to the reference's own answer (an implementation that receives raw values, CORE-13).
struct RawReconfigure: ConformanceSubject {
    var name = "raw reconfigure"
    var strategies = Set(AnyRateLimitStrategy.identifiers)
    let answer: @Sendable (RateLimitResult) -> RateLimitResult

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<ReferenceLimiter> {
        ReferenceSubject().create(request, at: now)
    }

    func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64) -> RateLimitResult {
        ReferenceSubject().apply(event, to: &limiter, at: now)
    }

    func reconfigure(_ limiter: inout ReferenceLimiter, toRefusedFields fields: JSONValue, at now: Int64)
        -> RateLimitResult?
    {
        ReferenceSubject().reconfigure(&limiter, toRefusedFields: fields, at: now).map(answer)
    }
}

/// The reference, refusing a configuration the Spec refuses with `exceedsMaximum` naming another maximum.
struct OtherMaximum: ConformanceSubject {
    var name = "other maximum"
    var strategies = Set(AnyRateLimitStrategy.identifiers)

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<ReferenceLimiter> {
        switch ReferenceSubject().create(request, at: now) {
        case .refused(let field, .exceedsMaximum(let maximum)):
            .refused(field: field, problem: .exceedsMaximum(maximum + 1))
        case let outcome: outcome
        }
    }

    func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64) -> RateLimitResult {
        ReferenceSubject().apply(event, to: &limiter, at: now)
    }
}

extension RateLimitInstant {
    static func generated(_ nanoseconds: Int64) -> RateLimitInstant {
        (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin
    }
}

private func run<S: ConformanceSubject>(_ subject: S, _ options: ConformanceOptions = ConformanceOptions()) throws
    -> ConformanceReport
{
    var subject = subject
    return try ConformanceSuite.run(&subject, options: options)
}

private func isInvalid(_ result: RateLimitResult) -> Bool { if case .invalid = result { true } else { false } }

/// Every strategy but the concurrency limiter (which has no time, so no tolerance or retry-after).
private let timed = Set(AnyRateLimitStrategy.identifiers).subtracting([ConcurrencyLimiter.identifier])

@Suite("The conformance suite judges implementations")
struct ConformanceSuiteTests {
    @Test("The subjects and drivers the suite takes inout are not zero-sized, which crashes ThreadSanitizer")
    func notZeroSized() {
        // Swift 6.3 passes a zero-sized inout argument as an undefined address; TSan's access hook
        // crashed on it in `ConformanceSuite.run` (CI, `make tsan-all`), by chance of the register.
        #expect(MemoryLayout<ReferenceSubject>.size > 0)
        #expect(MemoryLayout<ReferenceScenarioDriver>.size > 0)
        #expect(MemoryLayout<GoLikeBucket>.size > 0)
        #expect(MemoryLayout<EdgeBug>.size > 0)
    }

    @Test(
        "CONF-3 The reference passes every vector and random trace at level exact, admitting 100% of the Spec's permits"
    )
    func referencePasses() async throws { try await offThePool { try referencePassesOnThread() } }

    private func referencePassesOnThread() throws {
        let report = try run(ReferenceSubject(), ConformanceOptions(randomTraces: 5, seed: 3))
        #expect(report.passes(at: .exact))
        #expect(report.strategies.count == AnyRateLimitStrategy.identifiers.count)
        for strategy in report.strategies {
            #expect(strategy.level == .exact, "\(strategy.strategy): \(strategy.level)")
            #expect(strategy.validation == .exact)
            #expect(strategy.steps > 200)
            #expect(strategy.utilization == 1)
            #expect(strategy.randomTraces.count == 5)
            let prefix = AnyRateLimitStrategy.clausePrefixes[strategy.strategy] ?? ""
            #expect(
                Set((1...12).map { "\(prefix)-\($0)" }).isSubset(of: strategy.clausesChecked),
                "\(strategy.clausesChecked)")
        }
    }

    @Test("CONF-2 Random traces alone are a run: no vector selected, every trace passing, is a pass")
    func randomTracesAloneRun() async throws { try await offThePool { try randomTracesAloneRunOnThread() } }

    private func randomTracesAloneRunOnThread() throws {
        let report = try run(ReferenceSubject(), ConformanceOptions(cases: [], randomTraces: 4, seed: 8))
        #expect(report.passes(at: .exact))
        #expect(report.strategies.allSatisfy { $0.level == .exact && $0.stories.isEmpty && $0.randomTraces.count == 4 })
    }

    @Test("CONF-4 A retry-after one nanosecond short fails both levels and names the step")
    func shortRetryAfterFails() async throws { try await offThePool { try shortRetryAfterFailsOnThread() } }

    private func shortRetryAfterFailsOnThread() throws {
        let bug = PlantedBug { _, result in
            if case .rejected(let wait) = result, wait > 1 { return .rejected(retryAfterNanoseconds: wait - 1) }
            return result
        }
        let report = try run(bug, ConformanceOptions(strategies: [TokenBucket.identifier]))
        let strategy = try #require(report.strategies.first)
        #expect(strategy.level == .failed)
        let outcome = try #require(strategy.outcomes.first { $0.id == "token-bucket/starts-full" })
        #expect(outcome.failure?.step == 2)
        #expect(outcome.failure?.kind == .earlyRetry)
        #expect(outcome.failure?.explanation == "retry-after 9 ns is 1 ns shorter than the Spec's (rejected(10ns))")
        #expect(outcome.failure?.severity.nanosecondsEarly == 1)
    }

    @Test("CONF-3 A retry-after one nanosecond long is safe but not exact")
    func longRetryAfterIsSafe() async throws { try await offThePool { try longRetryAfterIsSafeOnThread() } }

    private func longRetryAfterIsSafeOnThread() throws {
        let bug = PlantedBug(mutate: { _, result, now in
            if case .rejected(let wait) = result, wait < Int64.max - now {
                return .rejected(retryAfterNanoseconds: wait + 1)
            }
            return result
        })
        let report = try run(bug, ConformanceOptions(strategies: [GCRA.identifier, FixedWindow.identifier]))
        for strategy in report.strategies {
            #expect(
                strategy.level == .safety,
                "\(strategy.strategy): \(strategy.groups.map { "\($0.cause) \($0.kind) \($0.example.id) \(ConformanceReport.describe($0.exampleFinding))" })"
            )
        }
        #expect(report.passes(at: .safety))
        #expect(!report.passes(at: .exact))
    }

    @Test("CONF-4 Admitting what the Spec refuses fails safety; promising more remaining fails safety")
    func overAdmissionFails() async throws { try await offThePool { try overAdmissionFailsOnThread() } }

    private func overAdmissionFailsOnThread() throws {
        let admitsAll = PlantedBug { event, result in
            if case .acquire = event, case .rejected = result { return .allowed(remaining: 0) }
            return result
        }
        let overPromises = PlantedBug { _, result in
            if case .allowed(let remaining) = result, remaining < Int64.max {
                return .allowed(remaining: remaining + 1)
            }
            return result
        }
        for (bug, kind) in [(admitsAll, FindingKind.overAdmission), (overPromises, .overPromise)] {
            let report = try run(bug, ConformanceOptions(strategies: [SlidingWindowLog.identifier]))
            #expect(report.strategies.first?.level == .failed)
            #expect(report.strategies.first?.groups.first?.kind == kind)
        }
    }

    @Test("CONF-4 CL-8 A release the Spec refuses, applied anyway, fails safety")
    func overReleaseFails() async throws { try await offThePool { try overReleaseFailsOnThread() } }

    private func overReleaseFailsOnThread() throws {
        let bug = PlantedBug { event, result in
            if case .release = event, case .invalid = result { return .allowed(remaining: 3) }
            return result
        }
        let report = try run(bug, ConformanceOptions(strategies: [ConcurrencyLimiter.identifier]))
        #expect(report.strategies.first?.level == .failed)
        #expect(report.strategies.first?.groups.first?.cause.clause == "CORE-11")
    }

    @Test(
        "CONF-1 An answer outside CORE-5 fails every level, whatever else it says",
        arguments: ["retry 0", "retry -5", "remaining -3", "past the end", "wait 0", "shortfall 0", "reset rejected"])
    func malformedAnswersFail(_ mutation: String) throws {
        let bug = PlantedBug(mutate: { event, result, now in
            switch (mutation, event, result) {
            case ("retry 0", _, .rejected): .rejected(retryAfterNanoseconds: 0)
            case ("retry -5", _, .rejected): .rejected(retryAfterNanoseconds: -5)
            case ("remaining -3", _, .allowed): .allowed(remaining: -3)
            case ("past the end", _, .rejected) where now > 0: .rejected(retryAfterNanoseconds: Int64.max - now + 1)
            case ("wait 0", _, .delayed(_, let remaining)): .delayed(waitNanoseconds: 0, remaining: remaining)
            case ("shortfall 0", _, .rejectedUntilRelease): .rejectedUntilRelease(shortfall: 0)
            case ("reset rejected", .reset, _): .rejected(retryAfterNanoseconds: 5)
            default: result
            }
        })
        let report = try run(bug)
        #expect(!report.passes(at: .safety))
        let kinds = report.strategies.flatMap(\.groups).map(\.kind)
        #expect(kinds.contains(.malformed), "\(kinds)")
    }

    @Test(
        "CONF-4 CORE-9 An acquire(-n) answered allowed admits nothing: a difference, not an over-admission, unless its remaining promises more than a query shows"
    )
    func admittedInvalidEventFails() async throws { try await offThePool { try admittedInvalidEventFailsOnThread() } }

    private func admittedInvalidEventFailsOnThread() throws {
        // The answer is wrong, the state unchanged (the planted bug's state is the reference's).
        func outcome(answering remaining: Int64) throws -> CaseOutcome {
            let bug = PlantedBug { event, result in
                if case .acquire(let permits) = event, permits < 0 { return .allowed(remaining: remaining) }
                return result
            }
            let report = try run(bug, ConformanceOptions(strategies: [TokenBucket.identifier]))
            return try #require(
                report.strategies.first?.outcomes.first { $0.id == "token-bucket/zero-release-invalid" })
        }
        let nothing = try outcome(answering: 0)
        #expect(nothing.level == .safety && nothing.failure == nil)
        #expect(nothing.primary?.kind == .difference && nothing.primary?.event == "acquire(-1)")
        #expect(nothing.primary?.cause == FindingCause("CORE-9", "negative permits"))
        #expect(nothing.primary?.explanation?.contains("a negative acquire admits nothing") == true)
        // Permits it added fail safety at the acquire that takes them: the Python example's
        // negative-permits-add-tokens is caught at level safety (CommandTests.mutationScore).
        let promising = try outcome(answering: 1_000)
        #expect(promising.level == .failed && promising.failure?.kind == .overPromise)
        #expect(promising.failure?.cause == FindingCause("CORE-9", "negative permits"))
        #expect(promising.steps == promising.failure?.step, "the case stops at its failure")
    }

    @Test("CONF-4 CORE-7 Rejected where the Spec says neverAllowed fails safety: a caller would retry forever")
    func rejectedForNeverFails() async throws { try await offThePool { try rejectedForNeverFailsOnThread() } }

    private func rejectedForNeverFailsOnThread() throws {
        let bug = PlantedBug(mutate: { _, result, now in
            result == .neverAllowed && now < Int64.max ? .rejected(retryAfterNanoseconds: 1) : result
        })
        let report = try run(bug)
        #expect(!report.passes(at: .safety))
        #expect(report.strategies.allSatisfy { $0.groups.contains { $0.kind == .retryForever } })
    }

    @Test("CONF-5 CORE-7 neverAllowed where time admits the acquire fails liveness at every level")
    func neverForRejectedFails() async throws { try await offThePool { try neverForRejectedFailsOnThread() } }

    private func neverForRejectedFailsOnThread() throws {
        let bug = PlantedBug { _, result in
            if case .rejected = result { return .neverAllowed }
            return result
        }
        let report = try run(bug, ConformanceOptions(strategies: timed))
        for strategy in report.strategies {
            #expect(strategy.level == .failed, "\(strategy.strategy)")
            #expect(strategy.groups.contains { $0.kind == .liveness })
        }
    }

    @Test(
        "CONF-5 CONF-9 A limiter that never admits fails at every level, and admits 0% of the Spec's permits",
        arguments: [Int64.max, 1])
    func neverAdmittingFails(_ retryAfter: Int64) throws {
        let bug = PlantedBug(mutate: { event, result, now in
            guard case .acquire(let permits) = event, permits > 0, result.isAdmitted || result.retryAfter != nil else {
                return result
            }
            return now == Int64.max ? .neverAllowed : .rejected(retryAfterNanoseconds: min(retryAfter, Int64.max - now))
        })
        let report = try run(bug, ConformanceOptions(randomTraces: 5, seed: 4))
        #expect(!report.passes(at: .safety))
        for strategy in report.strategies {
            #expect(strategy.level == .failed, "\(strategy.strategy)")
            #expect(strategy.utilization == 0, "\(strategy.strategy): \(strategy.utilization ?? -1)")
            #expect(
                strategy.groups.contains { $0.kind == .liveness },
                "\(strategy.strategy): \(strategy.groups.map(\.kind))")
        }
    }

    @Test(
        "CONF-2 A conservative refusal is not held against later steps: they are judged on the implementation's own history"
    )
    func continuationAfterConservativeStep() async throws {
        try await offThePool { try continuationAfterConservativeStepOnThread() }
    }

    private func continuationAfterConservativeStepOnThread() throws {
        // Refuses the first admission of each case for 1 ns without taking it, then answers
        // exactly from its own state (which kept the permits the Spec's reference took).
        // Refuses a case's first event for 1 ns when it is an acquire the Spec admits, without
        // taking it; then answers exactly from its own state (which kept those permits).
        let subject = OwnHistory(strategies: timed) { event, state, now, seen in
            let spec = state.probe(event, at: .generated(now))
            defer { seen = 1 }
            guard case .acquire(let permits) = event, permits > 0, spec.isAdmitted, seen == 0, now < Int64.max else {
                return (spec, now)
            }
            return (.rejected(retryAfterNanoseconds: 1), nil)
        }
        let report = try run(subject, ConformanceOptions(strategies: timed))
        for strategy in report.strategies {
            #expect(
                strategy.level == .safety,
                "\(strategy.strategy): \(strategy.groups.map { "\($0.cause) \($0.kind) \($0.example.id) \(ConformanceReport.describe($0.exampleFinding))" })"
            )
            // (A story that needs a reconfigure to raw fields is skipped: this subject builds its own.)
            for outcome in strategy.stories where outcome.level != .exact && outcome.skippedBecause == nil {
                #expect(
                    outcome.findings.count == 1,
                    "\(outcome.id): \(outcome.findings.map(ConformanceReport.describe).joined(separator: "\n"))")
            }
        }
    }

    @Test("CONF-6 Admissions up to T ns early are exact within a tolerance of T, and fail without it")
    func tolerance() async throws { try await offThePool { try toleranceOnThread() } }

    private func toleranceOnThread() throws {
        // Admits an acquire the Spec admits within 3 ns, taking it when the Spec would.
        let early = OwnHistory(strategies: timed) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            if case .acquire(let permits) = event, permits > 0, case .rejected(let wait) = spec, wait <= 3 {
                switch state.probe(event, at: .generated(now + wait)) {
                case .delayed(let start, let remaining):
                    return (.delayed(waitNanoseconds: start + wait, remaining: remaining), now + wait)
                case let later: return (later, now + wait)
                }
            }
            return (spec, now)
        }
        let strict = try run(early, ConformanceOptions(strategies: timed))
        #expect(
            strict.strategies.allSatisfy { $0.level == .failed },
            "\(strict.strategies.map { "\($0.strategy) \($0.level)" })")
        let within = try run(early, ConformanceOptions(strategies: timed, toleranceNanoseconds: 3))
        for strategy in within.strategies {
            #expect(
                strategy.level >= .safety,
                "\(strategy.strategy): \(strategy.groups.map { "\($0.cause) \($0.kind) \(ConformanceReport.describe($0.exampleFinding))" })"
            )
            #expect(strategy.levelText.hasSuffix("±3ns"))
        }
        let tooSmall = try run(early, ConformanceOptions(strategies: timed, toleranceNanoseconds: 2))
        #expect(
            tooSmall.strategies.contains { $0.level == .failed },
            "an over-admission 3 ns early is not within a tolerance of 2 ns")
    }

    @Test(
        "CONF-7 Cases are generated within the declared profile (unit, largest instant, largest permits, monotonic clock, events), the rest skipped, and what was not checked is named"
    )
    func profileIsRespected() async throws { try await offThePool { try profileIsRespectedOnThread() } }

    private func profileIsRespectedOnThread() throws {
        let profile = ImplementationProfile(
            timeUnitNanoseconds: 1_000, largestInstantNanoseconds: 1_000_000_000_000_000, monotonic: true,
            events: [.weighted, .query], largestPermits: 2_147_483_647)
        final class Seen: @unchecked Sendable {
            // Written only by the subject's `decide`, which the suite calls on this test's thread.
            var outside: [String] = []
            var latest: Int64 = 0
            var largestAsked = false
        }
        let seen = Seen()
        var subject = OwnHistory(strategies: timed) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            if now % 1_000 != 0 { seen.outside.append("instant \(now) off the unit") }
            if now > 1_000_000_000_000_000 { seen.outside.append("instant \(now) past the largest") }
            if case .acquire(let permits) = event, permits > 2_147_483_647 {
                seen.outside.append("acquire(\(permits)) past the largest permits")
            }
            if case .acquire(2_147_483_647) = event { seen.largestAsked = true }
            if isInvalid(spec) { seen.outside.append("invalid event \(event)") }
            switch event {
            case .reset, .reconfigure, .release: seen.outside.append("event \(event)")
            case .acquire: break
            }
            return (spec, now)
        }
        subject.declared = profile
        let report = try run(subject, ConformanceOptions(strategies: timed, randomTraces: 10, seed: 6))
        #expect(seen.outside.isEmpty, "\(seen.outside.prefix(5))")
        #expect(seen.largestAsked, "a draw past the largest permits asks for the largest")
        #expect(report.passes(at: .exact), "\(report.strategies.map { "\($0.strategy) \($0.level)" })")
        for strategy in report.strategies {
            let notChecked = strategy.profile.notChecked(strategy: strategy.strategy)
            #expect(notChecked.contains("CORE-10 time going backwards (monotonic clock)"))
            #expect(notChecked.contains("CORE-12 reset"))
            #expect(
                notChecked.contains(
                    "CORE-4 acquires and releases of more than 2147483647 permits, the profile's largest; a remaining above it is judged as 2147483647"
                ))
            // A story whose time goes backwards is judged up to that step (or skipped when it is the first).
            let backwards = "time goes backwards (the profile's clock is monotonic)"
            #expect(
                strategy.skipped.contains { $0.outsideProfile && $0.skippedBecause == backwards }
                    || strategy.partial.contains { $0.partialBecause?.hasPrefix(backwards + " (from step ") == true })
            #expect(strategy.randomTraces.count == 10)
        }
        // Vector stories that ask for more permits than the profile's largest are run up to that step.
        let tooMany = "uses more than 2147483647 permits (the profile's largest)"
        #expect(
            report.strategies.contains { strategy in
                strategy.skipped.contains { $0.outsideProfile && $0.skippedBecause == tooMany }
                    || strategy.partial.contains { $0.partialBecause?.hasPrefix(tooMany) == true }
            })
    }

    @Test(
        "CONF-7 A story is judged up to its first step outside the profile: a defect before an event the implementation lacks is found, and the report says how many stories ran only in part"
    )
    func partialStories() async throws { try await offThePool { try partialStoriesOnThread() } }

    private func partialStoriesOnThread() throws {
        // A token bucket without reset that admits every acquire it should refuse (and takes it).
        var subject = OwnHistory(strategies: [TokenBucket.identifier]) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            if case .acquire(let permits) = event, case .rejected = spec, permits > 0 {
                return (.allowed(remaining: 0), nil)
            }
            return (spec, now)
        }
        subject.declared = ImplementationProfile(events: [.weighted, .query, .reconfigure, .invalid])
        let report = try run(subject, ConformanceOptions(strategies: [TokenBucket.identifier]))
        let strategy = try #require(report.strategies.first)
        let resetAt = "uses a reset (the profile has none)"
        let partial = strategy.partial.filter { $0.partialBecause?.hasPrefix(resetAt + " (from step ") == true }
        #expect(!partial.isEmpty, "the token bucket's stories with a reset after their first step run in part")
        for outcome in partial {
            #expect(outcome.skippedBecause == nil && outcome.clauses.isEmpty, "\(outcome.id)")
            #expect(outcome.trace?.steps.contains { $0.event == .reset } == false, "\(outcome.id) sent its reset")
        }
        // Skipped whole, as before, these stories' over-admissions went unseen.
        #expect(partial.contains { $0.findings.contains { $0.kind == .overAdmission } }, "\(partial.map(\.id))")
        #expect(
            report.skippedLines.contains {
                $0.hasPrefix("PARTIAL token-bucket: \(partial.count) stor")
                    && $0.hasSuffix("judged up to their first step outside the profile, which \(resetAt)")
            }, "\(report.skippedLines)")
        #expect(report.json["strategies"]?.array?.first?["partial"]?.array?.count == strategy.partial.count)
    }

    @Test(
        "CONF-7 An implementation whose API takes at most 2^31 − 1 permits and says so reports remaining up to that and conforms; without the profile member it does not"
    )
    func largestPermitsBoundsRemaining() async throws {
        try await offThePool { try largestPermitsBoundsRemainingOnThread() }
    }

    private func largestPermitsBoundsRemainingOnThread() throws {
        let largest: Int64 = 2_147_483_647
        // Pay later admits any size: its remaining is Int64.max when not in debt (PL-5), which
        // an API of 32-bit counts reports as the most it can be asked.
        var subject = OwnHistory(strategies: [PayLater.identifier]) { event, state, now, _ in
            let spec = state.probe(event, at: .generated(now))
            switch spec {
            case .allowed(let remaining): return (.allowed(remaining: min(remaining, largest)), now)
            case .delayed, .rejected, .rejectedUntilRelease, .neverAllowed, .invalid: return (spec, now)
            }
        }
        subject.declared = ImplementationProfile(largestPermits: largest)
        let declared = try run(subject, ConformanceOptions(randomTraces: 20, seed: 3))
        #expect(declared.passes(at: .exact), "\(declared.strategies.map { "\($0.strategy) \($0.level)" })")
        subject.declared = .full
        let undeclared = try run(subject, ConformanceOptions(randomTraces: 20, seed: 3))
        #expect(undeclared.strategies.allSatisfy { $0.level != .exact }, "remaining 2^31 − 1 is not Int64.max")
    }

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
