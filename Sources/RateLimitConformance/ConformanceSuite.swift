import RateLimitCore

// Running vectors and random traces against an implementation, and judging it at two levels
// (Spec/vectors/README.md, "Conformance levels"):
//
// - exact: every answer equals the reference's, remaining, waits and retry-afters included;
// - safety: the implementation never admits what the Spec refuses given the admissions it made
//   itself, never promises more remaining, never starts a scheduled request earlier, never applies
//   a release the Spec refuses, and its retry-after is never shorter than the Spec's. It is judged
//   against a *shadow* reference that follows the implementation's own decisions, so a
//   conservative implementation (coarser clock, floating point rounded the safe way) is compared
//   with what the Spec allows after *its* history, not the reference's.

/// What to run.
public struct ConformanceOptions: Sendable {
    /// Only these strategies (all when `nil`).
    public var strategies: Set<String>?
    /// Only cases whose id is listed or starts with a listed prefix followed by `/` (all when `nil`).
    public var cases: Set<String>?
    /// Random traces per strategy, and steps per trace.
    public var randomTraces: Int
    public var randomSteps: Int
    /// The seed of the random traces.
    public var seed: UInt64

    public init(strategies: Set<String>? = nil, cases: Set<String>? = nil, randomTraces: Int = 0, randomSteps: Int = 100, seed: UInt64 = 1) {
        self.strategies = strategies
        self.cases = cases
        self.randomTraces = randomTraces
        self.randomSteps = randomSteps
        self.seed = seed
    }

    func includes(strategy: String) -> Bool { strategies?.contains(strategy) ?? true }

    func includes(case id: String) -> Bool {
        guard let cases else { return true }
        return cases.contains(id) || cases.contains { id.hasPrefix($0 + "/") }
    }
}

/// The level an implementation reached for a strategy.
public enum ConformanceLevel: String, Sendable, Comparable {
    /// Nothing ran (strategy not implemented, or every case unsupported).
    case skipped
    /// Some answer admitted what the Spec forbids, or the implementation misbehaved.
    case failed
    /// No over-admission and no retry-after shorter than the Spec's, but not every answer equal.
    case safety
    /// Every answer equal to the reference.
    case exact

    public static func < (lhs: ConformanceLevel, rhs: ConformanceLevel) -> Bool {
        let order: [ConformanceLevel] = [.failed, .skipped, .safety, .exact]
        return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
}

/// A step where the implementation and the Spec disagree.
public struct StepMismatch: Hashable, Sendable {
    /// 1-based step number; 0 for the create of a refusal case.
    public var step: Int
    public var now: Int64
    public var event: String
    public var expected: String
    public var got: String
    /// Set when the disagreement breaks safety (not merely exactness), saying how.
    public var safetyViolation: String?
}

/// The outcome of one case (a story, a refusal, or a random trace).
public struct CaseOutcome: Sendable {
    public var id: String
    /// Why the case did not run (unsupported configuration), if it did not.
    public var skippedBecause: String?
    public var steps: Int
    /// The first answer that differs from the reference, if any.
    public var firstMismatch: StepMismatch?
    /// The first safety violation, if any (may be the same step as `firstMismatch`).
    public var firstViolation: StepMismatch?
    /// The implementation misbehaved (crash, hang, garbage), if it did.
    public var subjectFailure: SubjectFailure?

    public var level: ConformanceLevel {
        if skippedBecause != nil { return .skipped }
        if subjectFailure != nil || firstViolation != nil { return .failed }
        return firstMismatch == nil ? .exact : .safety
    }
}

/// A random trace that failed, shrunk to a minimal one.
public struct ShrunkFailure: Sendable {
    public var strategy: String
    public var seed: UInt64
    public var traceIndex: Int
    public var originalSteps: Int
    public var trace: Trace
    /// The shrunk trace's outcome against the implementation.
    public var outcome: CaseOutcome
    /// The answers of the reference and of the implementation, step by step.
    public var rows: [(now: Int64, event: ConformanceEvent, expected: RateLimitResult, got: RateLimitResult?)]

    /// The shrunk trace as a vector file for a regression folder.
    public var vectorFile: VectorFile {
        let steps = rows.map { VectorStep(now: $0.now, event: $0.event, expected: $0.expected) }
        let story = VectorStory(
            id: "\(strategy)/regression-seed-\(seed)-trace-\(traceIndex)",
            summary: "shrunk from random trace \(traceIndex) of seed \(seed) (\(originalSteps) steps)",
            clauses: VectorGenerator.generate(
                StoryDraft("x", "", clauses: [], trace.configuration, createdAt: trace.createdAt, trace.steps.map { ($0.now, $0.event) }),
                strategy: strategy).clauses,
            configuration: trace.configuration, createdAt: trace.createdAt, steps: steps)
        return VectorFile(strategy: strategy, generator: VectorGenerator.version, stories: [story], refusals: [])
    }

    /// A readable table: numbered steps, expected vs got, the first difference marked.
    public var table: String {
        var lines = ["configuration \(trace.configuration.json.compactText), created at \(trace.createdAt) ns"]
        let header = ["step", "now (ns)", "event", "expected", "got", ""]
        var body: [[String]] = []
        for (index, row) in rows.enumerated() {
            let got = row.got?.brief ?? (outcome.subjectFailure.map { "failure: \($0.message)" } ?? "—")
            let mark = index + 1 == (outcome.firstViolation ?? outcome.firstMismatch)?.step ? "<- differs" : ""
            body.append(["\(index + 1)", "\(row.now)", row.event.description, row.expected.brief, got, mark])
        }
        lines += TextTable.render(header: header, rows: body, rightAligned: [0, 1])
        if let violation = outcome.firstViolation?.safetyViolation { lines.append("safety: \(violation)") }
        return lines.joined(separator: "\n")
    }
}

/// The results for one strategy.
public struct StrategyReport: Sendable {
    public var strategy: String
    /// Why the whole strategy was skipped, if it was.
    public var skippedBecause: String?
    public var outcomes: [CaseOutcome] = []
    public var shrunk: ShrunkFailure?
    public var randomTraces = 0
    public var seconds: Double = 0

    public var ran: [CaseOutcome] { outcomes.filter { $0.skippedBecause == nil } }
    public var steps: Int { ran.reduce(0) { $0 + $1.steps } }
    public var passed: Int { ran.filter { $0.level == .exact }.count }
    public var failedExactOnly: Int { ran.filter { $0.level == .safety }.count }
    public var failed: Int { ran.filter { $0.level == .failed }.count }
    public var skipped: [CaseOutcome] { outcomes.filter { $0.skippedBecause != nil } }

    public var level: ConformanceLevel {
        if skippedBecause != nil || ran.isEmpty { return .skipped }
        return ran.map(\.level).min() ?? .skipped
    }
}

/// The results of a run.
public struct ConformanceReport: Sendable {
    public var implementation: String
    public var strategies: [StrategyReport]

    /// True when every strategy that ran reached `level` or better and nothing failed.
    public func passes(at level: ConformanceLevel) -> Bool {
        let ran = strategies.filter { $0.level != .skipped }
        return !ran.isEmpty && ran.allSatisfy { $0.level >= level }
    }
}

/// Runs vectors and random traces against a subject.
public enum ConformanceSuite {
    /// Runs every vector of `vectors` (the built-in ones when `nil`) and `options.randomTraces`
    /// random traces per strategy against `subject`. `progress` receives a line per case.
    public static func run<S: ConformanceSubject>(
        _ subject: inout S, vectors: [VectorFile]? = nil, options: ConformanceOptions = ConformanceOptions(),
        clock: () -> Double = { 0 }, progress: (String) -> Void = { _ in }
    ) throws(ConformanceFormatError) -> ConformanceReport {
        let files: [VectorFile]
        if let vectors { files = vectors } else { files = try VectorGenerator.files() }
        var reports: [StrategyReport] = []
        for strategy in StrategyConfiguration.identifiers where options.includes(strategy: strategy) {
            var report = StrategyReport(strategy: strategy)
            guard subject.strategies.contains(strategy) else {
                report.skippedBecause = "\(subject.name) does not implement \(strategy)"
                reports.append(report)
                continue
            }
            let started = clock()
            for file in files where file.strategy == strategy {
                for story in file.stories where options.includes(case: story.id) {
                    progress(story.id)
                    report.outcomes.append(runStory(story, on: &subject))
                }
                for refusal in file.refusals where options.includes(case: refusal.id) {
                    progress(refusal.id)
                    report.outcomes.append(runRefusal(refusal, strategy: strategy, on: &subject))
                }
            }
            if options.randomTraces > 0 {
                (report.randomTraces, report.shrunk) = runRandom(strategy, on: &subject, options: options, progress: progress)
                if let shrunk = report.shrunk { report.outcomes.append(shrunk.outcome) }
            }
            report.seconds = clock() - started
            reports.append(report)
        }
        return ConformanceReport(implementation: subject.name, strategies: reports)
    }

    /// Runs one story: exact against the vector's answers, safety against a shadow reference.
    public static func runStory<S: ConformanceSubject>(_ story: VectorStory, on subject: inout S) -> CaseOutcome {
        let trace = Trace(configuration: story.configuration, createdAt: story.createdAt,
                          steps: story.steps.map { TraceStep(now: $0.now, event: $0.event) })
        return runTrace(trace, id: story.id, expected: story.steps.map(\.expected), on: &subject).outcome
    }

    /// Runs a trace; `expected` are the reference's answers for it.
    static func runTrace<S: ConformanceSubject>(
        _ trace: Trace, id: String, expected: [RateLimitResult], on subject: inout S
    ) -> (outcome: CaseOutcome, answers: [RateLimitResult]) {
        var outcome = CaseOutcome(id: id, steps: 0)
        let request = CreateRequest(strategy: trace.configuration.kind, fields: trace.configuration.json, configuration: trace.configuration)
        var limiter: S.Limiter
        do {
            switch try subject.create(request, at: trace.createdAt) {
            case .created(let created): limiter = created
            case .unsupported(let reason): outcome.skippedBecause = reason; return (outcome, [])
            case .refused(let field, let problem):
                outcome.firstViolation = StepMismatch(
                    step: 0, now: trace.createdAt, event: "create", expected: "created",
                    got: "refused \(field) (\(problem))", safetyViolation: "refused a configuration the Spec accepts")
                outcome.firstMismatch = outcome.firstViolation
                return (outcome, [])
            }
        } catch {
            outcome.subjectFailure = error
            return (outcome, [])
        }
        defer { if outcome.subjectFailure == nil { subject.finish(&limiter) } }
        var shadow = ReferenceLimiter(trace.configuration, at: .generated(trace.createdAt))
        var answers: [RateLimitResult] = []
        for (index, step) in trace.steps.enumerated() {
            let got: RateLimitResult
            do {
                got = try subject.apply(step.event, to: &limiter, at: step.now)
            } catch {
                outcome.subjectFailure = SubjectFailure("step \(index + 1) at \(step.now) ns \(step.event): \(error.message)", received: error.received)
                return (outcome, answers)
            }
            answers.append(got)
            outcome.steps += 1
            let wanted = expected[index]
            if outcome.firstMismatch == nil, got.comparable != wanted.comparable {
                outcome.firstMismatch = StepMismatch(
                    step: index + 1, now: step.now, event: step.event.description, expected: wanted.brief, got: got.brief)
            }
            let reference = shadow.probe(step.event, at: .generated(step.now))
            if let violation = safetyViolation(step.event, got: got, reference: reference) {
                outcome.firstViolation = StepMismatch(
                    step: index + 1, now: step.now, event: step.event.description, expected: reference.brief, got: got.brief,
                    safetyViolation: violation)
                return (outcome, answers)
            }
            if applied(step.event, got) { _ = shadow.apply(step.event, at: .generated(step.now)) }
        }
        return (outcome, answers)
    }

    /// Runs one refusal case: the create must be refused, naming the field and problem (exact) or
    /// at least refused (safety).
    static func runRefusal<S: ConformanceSubject>(_ refusal: ConfigurationRefusal, strategy: String, on subject: inout S) -> CaseOutcome {
        var outcome = CaseOutcome(id: refusal.id, steps: 0)
        let expected = "refused \(refusal.error.field) (\(refusal.error.problem))"
        do {
            switch try subject.create(CreateRequest(strategy: strategy, fields: refusal.configuration, configuration: nil), at: 0) {
            case .refused(let field, let problem):
                if field != refusal.error.field || problem != refusal.error.problem {
                    outcome.firstMismatch = StepMismatch(step: 0, now: 0, event: "create", expected: expected, got: "refused \(field) (\(problem))")
                }
            case .unsupported(let reason):
                outcome.skippedBecause = reason
            case .created:
                outcome.firstViolation = StepMismatch(
                    step: 0, now: 0, event: "create \(refusal.configuration.compactText)", expected: expected, got: "created",
                    safetyViolation: "accepted a configuration the Spec refuses")
                outcome.firstMismatch = outcome.firstViolation
            }
        } catch {
            outcome.subjectFailure = error
        }
        return outcome
    }

    /// Whether the implementation's answer means the event changed its state.
    static func applied(_ event: ConformanceEvent, _ got: RateLimitResult) -> Bool {
        switch event {
        case .acquire(let permits): permits > 0 && got.isAdmitted
        case .release, .reset, .reconfigure: if case .allowed = got { true } else { false }
        }
    }

    /// How `got` breaks safety, given the Spec's answer `reference` after the same admissions.
    public static func safetyViolation(_ event: ConformanceEvent, got: RateLimitResult, reference: RateLimitResult) -> String? {
        if let remaining = got.remaining, let allowed = reference.remaining, remaining > allowed {
            return "promises \(remaining) remaining where the Spec allows \(allowed)"
        }
        switch event {
        case .acquire(let permits) where permits > 0:
            if got.isAdmitted {
                guard reference.isAdmitted else { return "admitted acquire(\(permits)) where the Spec answers \(reference.brief)" }
                let (gotWait, specWait) = (wait(got), wait(reference))
                if gotWait < specWait { return "starts \(specWait - gotWait) ns earlier than the Spec's schedule" }
                return nil
            }
            if case .rejected(let gotRetry) = got, case .rejected(let specRetry) = reference, gotRetry < specRetry {
                return "retry-after \(gotRetry) ns is shorter than the Spec's \(specRetry) ns"
            }
            return nil
        case .release:
            if case .allowed = got, case .invalid = reference { return "applied a release the Spec refuses" }
            return nil
        case .acquire, .reset, .reconfigure:
            return nil
        }
    }

    private static func wait(_ result: RateLimitResult) -> Int64 {
        if case .delayed(let wait, _) = result { return wait }
        return 0
    }

    // MARK: Random traces

    static func runRandom<S: ConformanceSubject>(
        _ strategy: String, on subject: inout S, options: ConformanceOptions, progress: (String) -> Void
    ) -> (Int, ShrunkFailure?) {
        for index in 0..<options.randomTraces {
            var rng = SeededGenerator(seed: options.seed, stream: strategy, index: index)
            guard let trace = TraceGenerator.trace(strategy, steps: options.randomSteps, using: &rng) else { return (index, nil) }
            let id = "\(strategy)/random-seed-\(options.seed)-trace-\(index)"
            progress(id)
            let (outcome, _) = runTrace(trace, id: id, expected: referenceAnswers(trace), on: &subject)
            guard outcome.level == .exact || outcome.level == .skipped else {
                return (index + 1, Shrinker.shrink(trace, outcome: outcome, strategy: strategy, seed: options.seed, index: index, on: &subject))
            }
        }
        return (options.randomTraces, nil)
    }

    /// The reference model's answers to every step of `trace`.
    static func referenceAnswers(_ trace: Trace) -> [RateLimitResult] {
        var reference = ReferenceLimiter(trace.configuration, at: .generated(trace.createdAt))
        return trace.steps.map { reference.apply($0.event, at: .generated($0.now)) }
    }
}
