import RateLimitCore

// Running vectors and random traces against an implementation, and judging it (Spec/vectors/
// Spec/Conformance.md, CONF-1 to CONF-12):
//
// - every answer is judged by `Judge` against the Spec given the implementation's own history;
// - `exact` (within the tolerance T) when every answer is the Spec's, `safety` when some differ
//   but none is looser than the Spec, refuses past the liveness bound, or breaks CORE-5;
// - configurations the Spec refuses are a verdict of their own (validation, CONF-8);
// - cases and random traces are generated within the profile the implementation declares.

/// What to run.
public struct ConformanceOptions: Sendable {
    /// Only these strategies (all when `nil`).
    public var strategies: Set<String>?
    /// Only vector cases whose id is listed or starts with a listed prefix followed by `/` (all
    /// when `nil`, none when empty).
    public var cases: Set<String>?
    /// Random traces per strategy, and steps per trace.
    public var randomTraces: Int
    public var randomSteps: Int
    /// The seed of the random traces.
    public var seed: UInt64
    /// Seconds the random traces may take in all, the strategies taking turns, instead of
    /// `randomTraces` each (`nil`: exactly `randomTraces` each).
    public var randomSeconds: Double?
    /// Only this random trace (an index below `randomTraces`), to replay one failure.
    public var onlyTrace: Int?
    /// The tolerance T in nanoseconds, instead of the one each profile declares (CONF-6).
    public var toleranceNanoseconds: Int64?
    /// Seconds each strategy's shrinking may take (`nil`: until its run budget is spent): a long
    /// failing trace costs a whole replay per candidate.
    public var shrinkSeconds: Double?

    public init(
        strategies: Set<String>? = nil, cases: Set<String>? = nil, randomTraces: Int = 0,
        randomSteps: Int = ConformanceOptions.defaultRandomSteps, seed: UInt64 = 1, onlyTrace: Int? = nil,
        toleranceNanoseconds: Int64? = nil, randomSeconds: Double? = nil
    ) {
        self.strategies = strategies
        self.cases = cases
        self.randomTraces = randomTraces
        self.randomSteps = randomSteps
        self.seed = seed
        self.onlyTrace = onlyTrace
        self.toleranceNanoseconds = toleranceNanoseconds
        self.randomSeconds = randomSeconds
    }

    /// The most steps a random trace has unless asked otherwise: most have far fewer
    /// (`TraceGenerator.length(of:maximum:times:using:)`).
    public static let defaultRandomSteps = 10_000

    func includes(strategy: String) -> Bool { strategies?.contains(strategy) ?? true }

    /// Whether vector case `id` runs.
    public func includes(case id: String) -> Bool {
        guard let cases else { return true }
        return cases.contains(id) || cases.contains { id.hasPrefix($0 + "/") }
    }

    /// The indexes of the random traces to run.
    var traceIndexes: [Int] {
        if let onlyTrace { return onlyTrace < randomTraces ? [onlyTrace] : [] }
        return Array(0..<randomTraces)
    }
}

/// Runs vectors and random traces against a subject.
public enum ConformanceSuite {
    /// A strategy stops after this many consecutive cases in which the implementation misbehaved
    /// the same way (crashed, hung, broke the protocol): the rest is reported as not run (CONF-11).
    package static let consecutiveFailureLimit = 3
    /// Random traces are exploration: a crash ends its trace, not the strategy; the implementation
    /// is restarted for the next one. Only this many misbehaving traces in a row (an
    /// implementation that cannot run the strategy at all) stop it.
    package static let consecutiveRandomFailureLimit = 20

    /// Runs every vector of `vectors` (the built-in ones when `nil`) against `subject`, then its
    /// random traces: `options.randomTraces` per strategy, or, with `options.randomSeconds`, as many
    /// as that many seconds allow, one strategy after the other in turn. `progress` receives a line
    /// per case.
    public static func run<S: ConformanceSubject>(
        _ subject: inout S, vectors: [VectorFile]? = nil, options: ConformanceOptions = ConformanceOptions(),
        clock: () -> Double = { 0 }, progress: (String) -> Void = { _ in }
    ) throws(ConformanceFormatError) -> ConformanceReport {
        let files: [VectorFile]
        if let vectors { files = vectors } else { files = try VectorGenerator.files() }
        var reports: [StrategyReport] = []
        var runs: [StrategyRun?] = []
        for strategy in AnyRateLimitStrategy.identifiers where options.includes(strategy: strategy) {
            var report = StrategyReport(strategy: strategy)
            report.casesSelected = !(options.cases?.isEmpty ?? true)
            guard subject.strategies.contains(strategy) else {
                report.skippedBecause = "\(subject.name) does not implement \(strategy)"
                reports.append(report)
                runs.append(nil)
                continue
            }
            let profile = subject.profile(for: strategy)
            report.profile = profile
            report.toleranceNanoseconds = options.toleranceNanoseconds ?? profile.toleranceNanoseconds
            report.toleranceOverridden = options.toleranceNanoseconds != nil
            var run = StrategyRun(strategy: strategy, profile: profile, tolerance: report.toleranceNanoseconds)
            let started = clock()
            // A story of a fixed-window variant (FW-13) is for the implementations that declare it.
            let stories = files.filter { $0.strategy == strategy }.flatMap(\.stories).filter {
                options.includes(case: $0.id) && ($0.alignment == .origin || $0.alignment == profile.alignment)
            }
            let refusals = files.filter { $0.strategy == strategy }.flatMap(\.refusals).filter {
                options.includes(case: $0.id)
            }
            let total = stories.count + refusals.count
            func tick(_ id: String) {
                progress("\(strategy) \(report.outcomes.count + report.refusals.count + 1)/\(total) \(id)")
            }
            for story in stories {
                tick(story.id)
                let outcome = run.story(story, on: &subject)
                report.outcomes.append(outcome)
                if let reason = run.stop(after: outcome) {
                    report.stoppedBecause = reason
                    break
                }
            }
            for refusal in refusals where report.stoppedBecause == nil {
                tick(refusal.id)
                let outcome = run.refusal(refusal, on: &subject)
                report.refusals.append(outcome)
                if let reason = run.stop(after: outcome) {
                    report.stoppedBecause = reason
                    break
                }
            }
            if let stopped = report.stoppedBecause {
                let notRun = total - report.outcomes.count - report.refusals.count
                report.stoppedBecause = "\(stopped); \(notRun) case\(notRun == 1 ? "" : "s") not run"
            }
            report.seconds = clock() - started
            reports.append(report)
            runs.append(run)
        }

        // Random traces: each strategy in turn runs its next one, until every strategy has run its
        // count, or the seconds are spent.
        let deadline = options.randomSeconds.map { clock() + $0 }
        let indexes = options.traceIndexes
        var steerings = reports.map { TraceSteering(strategy: $0.strategy) }
        var position = 0
        var more = true
        while more {
            more = false
            for slot in reports.indices {
                guard var run = runs[slot], reports[slot].stoppedBecause == nil else { continue }
                let index: Int
                if deadline != nil {
                    index = reports[slot].randomRequested
                } else {
                    guard position < indexes.count else { continue }
                    index = indexes[position]
                }
                if let deadline, clock() >= deadline { break }
                let strategy = reports[slot].strategy
                let started = clock()
                steerings[slot].skip(to: index, options: options, profile: run.profile)
                guard let (trace, _) = steerings[slot].draw(options: options, profile: run.profile) else { continue }
                let id = "\(strategy)/random-seed-\(options.seed)-trace-\(index)"
                progress(
                    "\(strategy) random \(index + 1)\(deadline == nil ? "/\(indexes.count)" : "") (\(trace.steps.count) steps)"
                )
                var outcome = run.trace(trace, id: id, origin: .random(index: index), on: &subject)
                if let ran = outcome.trace {
                    let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? strategy
                    for (step, answer) in zip(ran.steps, outcome.expected) {
                        for clause in VectorGenerator.clausesReached(by: step.event, answer: answer, prefix: prefix) {
                            reports[slot].clauseHits[clause, default: 0] += 1
                        }
                    }
                }
                if outcome.level == .exact { (outcome.answers, outcome.expected, outcome.trace) = ([], [], nil) }
                reports[slot].outcomes.append(outcome)
                reports[slot].randomRequested += 1
                if let reason = run.stop(after: outcome, limit: Self.consecutiveRandomFailureLimit) {
                    reports[slot].stoppedBecause = "\(reason); the rest of its random traces not run"
                }
                reports[slot].seconds += clock() - started
                runs[slot] = run
                more = true
            }
            position += 1
        }
        for slot in reports.indices { reports[slot].coverageFeatures = steerings[slot].seen.count }

        // Shrink each strategy's first random trace of the most severe kind.
        for slot in reports.indices {
            guard var run = runs[slot] else { continue }
            let report = reports[slot]
            let failing = report.randomTraces.filter { $0.level == .failed || $0.level == .safety }
            guard
                let worst = failing.max(by: { ($0.primary?.kind ?? .difference) < ($1.primary?.kind ?? .difference) }),
                case .random(let index) = worst.origin, report.stoppedBecause == nil
            else { continue }
            let started = clock()
            progress("\(report.strategy) shrinking \(worst.id)")
            reports[slot].shrunk = Shrinker.shrink(
                worst, strategy: report.strategy, seed: options.seed, index: index, randomSteps: options.randomSteps,
                until: options.shrinkSeconds.map { started + $0 } ?? .infinity, clock: clock, run: &run, on: &subject)
            reports[slot].seconds += clock() - started
            runs[slot] = run
        }
        return ConformanceReport(implementation: subject.name, strategies: reports)
    }

    /// The reference model's answers to every step of `trace`.
    static func referenceAnswers(_ trace: Trace) -> [RateLimitResult] {
        var reference = ReferenceLimiter(trace.configuration, at: .generated(trace.createdAt))
        return trace.steps.map { reference.apply($0.event, at: .generated($0.now)) }
    }
}

/// The running of one strategy's cases: the profile and tolerance they are judged with, and the
/// count of consecutive misbehaviours (CONF-11).
struct StrategyRun {
    let strategy: String
    let profile: ImplementationProfile
    let tolerance: Int64
    private var misbehaviours: (kind: SubjectFailure.Kind, count: Int)?
    /// The profile event each of those misbehaviours happened at (`nil`: a create, or an
    /// `acquire(1)`), to suggest declaring the profile when it was always the same one.
    private var misbehavingEvents: [ImplementationProfile.Event?] = []

    init(strategy: String, profile: ImplementationProfile, tolerance: Int64) {
        self.strategy = strategy
        self.profile = profile
        self.tolerance = tolerance
    }

    /// Why the strategy must stop after `outcome`, if it must: the implementation misbehaved the
    /// same way in the last ``ConformanceSuite/consecutiveFailureLimit`` cases.
    mutating func stop(after outcome: CaseOutcome, limit: Int = ConformanceSuite.consecutiveFailureLimit) -> String? {
        guard outcome.skippedBecause == nil else { return nil }
        guard let failure = outcome.subjectFailure else {
            misbehaviours = nil
            misbehavingEvents = []
            return nil
        }
        let count = misbehaviours?.kind == failure.kind ? (misbehaviours?.count ?? 0) + 1 : 1
        if count == 1 { misbehavingEvents = [] }
        misbehaviours = (failure.kind, count)
        // The step it misbehaved at (0: the create), as the trace ran it.
        let step = outcome.findings.last { $0.kind == .misbehaved }?.step ?? 0
        let steps = outcome.trace?.mergedSteps ?? []
        var event: ImplementationProfile.Event?
        if steps.indices.contains(step - 1) {
            switch steps[step - 1] {
            case .event(let run): event = ImplementationProfile.Event(optional: run.event)
            case .refusedReconfigure: event = .reconfigure
            }
        }
        misbehavingEvents.append(event)
        guard count >= limit else { return nil }
        var reason = "stopped after \(count) consecutive cases in which the implementation \(failure.kind.pastTense)"
        if let event, misbehavingEvents.allSatisfy({ $0 == event }) {
            reason +=
                ", each time at a \(event.rawValue) event: an implementation without it declares the profile's \"events\" without \"\(event.rawValue)\" (Spec/protocol.md, \"Profiles\"), and those cases are skipped, not failed"
        }
        return reason
    }

    /// Runs a vector story, adapted to the profile (CONF-7).
    mutating func story<S: ConformanceSubject>(_ story: VectorStory, on subject: inout S) -> CaseOutcome {
        var trace = Trace(
            configuration: story.configuration, createdAt: story.createdAt,
            steps: story.steps.map { TraceStep(now: $0.now, event: $0.event) })
        trace.refusedReconfigures = story.refusedReconfigures
        let answers = story.steps.map(\.expected)
        switch profile.adapt(trace, answers: answers) {
        case .unchanged:
            var outcome = self.trace(trace, id: story.id, origin: .story, on: &subject)
            outcome.clauses = story.clausesChecked
            return outcome
        case .transformed(let adapted):
            var outcome = self.trace(adapted, id: story.id, origin: .story, on: &subject)
            outcome.clauses = story.clausesChecked
            return outcome
        case .partial(let prefix, let judged, let total, let reason):
            // The steps before the first the profile cannot take are judged as any story's; the
            // story's clauses are checked by the whole of it, so its prefix claims none.
            var outcome = self.trace(prefix, id: story.id, origin: .story, on: &subject)
            // Only a prefix that ran is partial (one skipped whole says so as skipped).
            if outcome.skippedBecause == nil {
                outcome.partialBecause = "\(reason) (from step \(judged + 1) of \(total))"
            }
            return outcome
        case .outside(let reason):
            var outcome = CaseOutcome(id: story.id, origin: .story)
            outcome.skippedBecause = reason
            outcome.outsideProfile = true
            return outcome
        }
    }

    /// Runs a trace: each answer is judged against the Spec given the implementation's own
    /// history (CONF-2), and the case's primary finding is explained by experiment when its
    /// history explains it (CONF-10).
    mutating func trace<S: ConformanceSubject>(
        _ trace: Trace, id: String, origin: CaseOutcome.Origin, explain: Bool = true, on subject: inout S
    ) -> CaseOutcome {
        var outcome = judged(trace, id: id, origin: origin, on: &subject)
        if explain { explainByHistory(&outcome, on: &subject) }
        return outcome
    }

    /// Tries each history feature of the case's primary finding in turn: runs the case up to the
    /// finding without the feature, and makes the feature the cause when the finding disappears.
    mutating func explainByHistory<S: ConformanceSubject>(_ outcome: inout CaseOutcome, on subject: inout S) {
        // A story with a reconfigure to a refused configuration is not taken apart: its step
        // numbers count that reconfigure, which the experiments' traces would lose.
        guard let trace = outcome.trace, trace.refusedReconfigures.isEmpty, let primary = outcome.primary,
            primary.step > 0, !primary.causeIsTheStep, let position = outcome.findings.firstIndex(of: primary)
        else { return }
        for feature in HistoryFeature.allCases {
            guard let experiment = feature.removed(from: trace, upTo: primary.step - 1) else { continue }
            guard profile.contains(experiment, answers: ConformanceSuite.referenceAnswers(experiment)) else { continue }
            let result = judged(experiment, id: outcome.id, origin: outcome.origin, on: &subject)
            guard result.skippedBecause == nil, result.subjectFailure == nil else { continue }
            if primary.kind.failsSafety ? result.failure == nil : result.findings.isEmpty {
                outcome.findings[position].cause = feature.cause(
                    strategy: strategy, alignment: trace.configuration.alignment)
                return
            }
        }
    }

    /// Runs a trace and judges every answer; causes are the ones each step shows by itself. The
    /// subject is told the requests ahead (it may pipeline them), unless `pipelined` is false:
    /// a misbehaviour it cannot place on one step makes the case run again that way.
    mutating func judged<S: ConformanceSubject>(
        _ trace: Trace, id: String, origin: CaseOutcome.Origin, on subject: inout S, pipelined: Bool = true
    ) -> CaseOutcome {
        let trace = profile.aligned(trace)  // FW-13: judged as the variant declared
        let outcome = judgedOnce(trace, id: id, origin: origin, on: &subject, pipelined: pipelined)
        guard pipelined, outcome.subjectFailure?.stepUncertain == true else { return outcome }
        return judgedOnce(trace, id: id, origin: origin, on: &subject, pipelined: false)
    }

    private mutating func judgedOnce<S: ConformanceSubject>(
        _ trace: Trace, id: String, origin: CaseOutcome.Origin, on subject: inout S, pipelined: Bool
    ) -> CaseOutcome {
        var outcome = CaseOutcome(id: id, origin: origin)
        outcome.trace = trace
        let request = CreateRequest(
            strategy: trace.configuration.kind, fields: trace.configuration.json, configuration: trace.configuration)
        let create = "create \(trace.configuration.json.compactText)"
        var limiter: S.Limiter
        do {
            switch try subject.create(request, at: trace.createdAt) {
            case .created(let created): limiter = created
            case .unsupported(let reason):
                outcome.skippedBecause = reason
                return outcome
            case .refused(let field, let problem):
                outcome.findings.append(
                    StepFinding(
                        step: 0, now: trace.createdAt, event: create, expected: "created",
                        got: "refused \(field) (\(RateLimitResult.problemText(problem)))", kind: .liveness,
                        explanation:
                            "refused a configuration the Spec accepts (an implementation that cannot represent it answers unsupported)",
                        severity: FindingSeverity(), cause: .validation, causeIsTheStep: true))
                return outcome
            }
        } catch {
            outcome.subjectFailure = error
            outcome.findings.append(misbehaviour(error, step: 0, now: trace.createdAt, event: create))
            return outcome
        }
        if pipelined {
            subject.plan(
                trace.mergedSteps.map { step in
                    switch step {
                    case .event(let event): .event(event.event, at: event.now)
                    case .refusedReconfigure(let refused): .refusedReconfigure(refused.configuration, at: refused.now)
                    }
                } + [.finish], for: &limiter)
        }
        var judge = Judge(
            configuration: trace.configuration, createdAt: trace.createdAt, profile: profile, tolerance: tolerance)
        var admitted: [Int64] = []
        var index = -1  // the step's index in `trace.steps`; `number` counts the refused reconfigures too
        for (number, runStep) in trace.mergedSteps.enumerated() {
            guard case .event(let step) = runStep else {
                guard case .refusedReconfigure(let refused) = runStep else { continue }
                // A reconfigure to a configuration the Spec refuses (CORE-13): only an
                // implementation that receives raw values can be asked.
                let answer: RateLimitResult?
                do {
                    answer = try subject.reconfigure(&limiter, toRefusedFields: refused.configuration, at: refused.now)
                } catch {
                    outcome.subjectFailure = error
                    outcome.findings.append(
                        misbehaviour(error, step: number + 1, now: refused.now, event: runStep.description))
                    return outcome
                }
                guard let got = answer else {
                    try? subject.finish(&limiter)
                    var skipped = CaseOutcome(id: id, origin: origin)
                    skipped.skippedBecause =
                        "uses a reconfigure to a configuration the Spec refuses, which \(subject.name) cannot receive (it builds its configurations itself)"
                    skipped.outsideProfile = true
                    return skipped
                }
                let verdict = judge.judgeRefusedReconfigure(refused.configuration, at: refused.now, got: got)
                outcome.steps += 1
                outcome.answers.append(got)
                outcome.expected.append(verdict.expected)
                guard let kind = verdict.kind else { continue }
                outcome.findings.append(
                    StepFinding(
                        step: number + 1, now: refused.now, event: runStep.description,
                        expected: verdict.expected.brief, got: got.brief, kind: kind, explanation: verdict.explanation,
                        severity: verdict.severity, cause: .refusedReconfigure, causeIsTheStep: true))
                if kind.failsSafety { break }
                continue
            }
            index += 1
            let got: RateLimitResult
            do {
                got = try subject.apply(step.event, to: &limiter, at: step.now)
            } catch {
                outcome.subjectFailure = error
                outcome.findings.append(
                    misbehaviour(error, step: number + 1, now: step.now, event: step.event.description))
                return outcome
            }
            let configuration = judge.configuration
            let verdict = judge.judge(step: number + 1, step.event, at: step.now, got: got)
            outcome.steps += 1
            outcome.answers.append(got)
            outcome.expected.append(verdict.expected)
            // The share of what the Spec admits on this history (CONF-9); a failing admission is
            // reported as a failure, not folded into the share.
            if case .acquire(let permits) = step.event, permits > 0,
                !(got.isAdmitted && verdict.kind?.failsSafety == true)
            {
                if got.isAdmitted { outcome.admittedPermits += Double(permits) }
                if got.isAdmitted || verdict.expected.isAdmitted { outcome.specAdmittedPermits += Double(permits) }
            }
            if case .acquire(let permits) = step.event, permits > 0, got.isAdmitted { admitted.append(step.now) }
            if verdict.withinTolerance { outcome.withinTolerance += 1 }
            guard let kind = verdict.kind else { continue }
            var (cause, definitive) = FindingCause.ofStep(
                kind, strategy: strategy, trace: trace, index: index, expected: verdict.expected, got: got,
                specAdmission: verdict.specAdmission, admitted: admitted.dropLast(got.isAdmitted ? 1 : 0),
                configuration: configuration)
            if verdict.brokenPromise {
                let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? strategy
                cause = FindingCause("\(prefix)-6", "retry-after not honoured")
            }
            outcome.findings.append(
                StepFinding(
                    step: number + 1, now: step.now, event: step.event.description, expected: verdict.expected.brief,
                    got: got.brief,
                    kind: kind, explanation: verdict.explanation, severity: verdict.severity, cause: cause,
                    causeIsTheStep: definitive))
            if kind.failsSafety { break }
        }
        do {
            try subject.finish(&limiter)
        } catch {
            outcome.subjectFailure = error
            outcome.findings.append(
                misbehaviour(
                    error, step: outcome.steps + 1, now: trace.mergedSteps.last?.now ?? trace.createdAt, event: "drop"))
        }
        return outcome
    }

    /// Runs a refusal case (CONF-8): the create must be refused, naming the field and problem.
    mutating func refusal<S: ConformanceSubject>(_ refusal: ConfigurationRefusal, on subject: inout S) -> CaseOutcome {
        var outcome = CaseOutcome(id: refusal.id, origin: .refusal)
        guard profile.validatesConfigurations else {
            outcome.skippedBecause = "the profile does not validate configurations"
            outcome.outsideProfile = true
            return outcome
        }
        // Spans on the profile's configuration unit, and the refusal the Spec gives the scaled
        // fields (CONF-7).
        var fields = refusal.configuration
        var error = refusal.error
        let unit = profile.configurationUnitNanoseconds
        if unit > 1 {
            guard let scaled = Self.scaled(refusal.configuration, by: unit) else {
                outcome.skippedBecause = "does not fit the timeline when scaled to the profile's unit of \(unit) ns"
                outcome.outsideProfile = true
                return outcome
            }
            let parsed = Result { () throws(ConformanceFormatError) in
                try AnyRateLimitStrategy(strategy: strategy, json: scaled)
            }
            guard case .failure(let refused) = parsed, let refusedBySpec = refused.refusedBySpec else {
                outcome.skippedBecause =
                    "the Spec accepts it once scaled to the profile's unit of \(unit) ns"
                outcome.outsideProfile = true
                return outcome
            }
            (fields, error) = (scaled, refusedBySpec)
        }
        let expected = "refused \(error.field) (\(RateLimitResult.problemText(error.problem)))"
        let create = "create \(fields.compactText)"
        func finding(_ got: String, _ kind: FindingKind, _ explanation: String?) -> StepFinding {
            StepFinding(
                step: 0, now: 0, event: create, expected: expected, got: got, kind: kind, explanation: explanation,
                severity: FindingSeverity(), cause: .validation, causeIsTheStep: true)
        }
        do {
            switch try subject.create(CreateRequest(strategy: strategy, fields: fields, configuration: nil), at: 0) {
            case .refused(let field, let problem):
                if field != error.field || problem != error.problem {
                    // Another field, problem or maximum: refused all the same, so a difference (CONF-8).
                    outcome.findings.append(
                        finding("refused \(field) (\(RateLimitResult.problemText(problem)))", .difference, nil))
                }
            case .unsupported(let reason):
                outcome.skippedBecause = reason
            case .created:
                outcome.findings.append(
                    finding("created", .acceptedBadConfiguration, "accepted a configuration the Spec refuses (CORE-3)"))
            }
            if outcome.skippedBecause == nil { outcome.clauses = refusal.clauses }
        } catch {
            outcome.subjectFailure = error
            outcome.findings.append(misbehaviour(error, step: 0, now: 0, event: create))
        }
        return outcome
    }

    /// `fields` with each span (an integer member ending in `Nanoseconds`) multiplied by `unit`,
    /// or `nil` when a product overflows.
    static func scaled(_ fields: JSONValue, by unit: Int64) -> JSONValue? {
        guard case .object(let members) = fields else { return fields }
        var scaled: [(String, JSONValue)] = []
        for (name, value) in members {
            guard name.hasSuffix("Nanoseconds"), let number = value.int64 else {
                scaled.append((name, value))
                continue
            }
            let (product, overflow) = number.multipliedReportingOverflow(by: unit)
            guard !overflow else { return nil }
            scaled.append((name, .integer(product)))
        }
        return .object(scaled)
    }

    private func misbehaviour(_ error: SubjectFailure, step: Int, now: Int64, event: String) -> StepFinding {
        StepFinding(
            step: step, now: now, event: event, expected: "an answer",
            got: error.received.map { "received \($0)" } ?? "no answer",
            kind: .misbehaved, explanation: error.message, severity: FindingSeverity(), cause: .misbehaviour,
            causeIsTheStep: true)
    }
}
