import RateLimitCore

// What a run of the suite reports: the level of each case and strategy, the findings grouped by
// cause, the shrunk failures (Spec/Conformance.md, CONF-3, CONF-9, CONF-10); the suite that
// fills them in is in ConformanceSuite.swift.

/// The level an implementation reached for a strategy (or for its validation).
public enum ConformanceLevel: String, Sendable, Comparable {
    /// Nothing ran (strategy not implemented, or every case unsupported or outside the profile).
    case skipped
    /// Some answer broke safety or liveness, was malformed, or the implementation misbehaved.
    case failed
    /// Not every answer is the Spec's, but every one is safe and within the liveness bound.
    case safety
    /// Every answer is the Spec's (within the tolerance T).
    case exact

    public static func < (lhs: ConformanceLevel, rhs: ConformanceLevel) -> Bool {
        let order: [ConformanceLevel] = [.failed, .skipped, .safety, .exact]
        return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
}

/// The outcome of one case: a vector story, a refusal, or a random trace.
public struct CaseOutcome: Sendable {
    public enum Origin: Hashable, Sendable {
        case story
        case refusal
        case random(index: Int)
        /// A path of an exhaustive pass (``ConformanceSuite/exhaustive(_:options:clock:progress:)``).
        case exhaustive(depth: Int, path: Int)
    }

    public var id: String
    public var origin: Origin
    /// Why the case did not run: the implementation answered `unsupported`, or the case lies
    /// outside its profile.
    public var skippedBecause: String?
    /// True when the harness skipped the case because it lies outside the profile (CONF-7).
    public var outsideProfile = false
    /// Set when only a vector story's first steps ran, up to the first step outside the profile
    /// (CONF-7): why that step is outside, and where it is ("uses a reset (the profile has none)
    /// (from step 4 of 9)").
    public var partialBecause: String?
    /// The trace as run (after the profile's adaptation); `nil` for a refusal.
    public var trace: Trace?
    /// The Spec clauses the case exercises (a vector's `clauses`; none for a random trace).
    public var clauses: [String] = []
    /// Steps answered.
    public var steps = 0
    /// Every step whose answer is not the Spec's, in order. A case stops at the first whose kind
    /// fails `safety`.
    public var findings: [StepFinding] = []
    /// The implementation misbehaved (crash, hang, protocol error), if it did.
    public var subjectFailure: SubjectFailure?
    /// Steps whose answer differs from the Spec's only within the tolerance or past the
    /// profile's largest instant.
    public var withinTolerance = 0
    /// Permits the implementation admitted, and the Spec admits on the same steps given the
    /// implementation's history, leaving out the admissions that failed (CONF-9); as `Double`,
    /// because random traces acquire up to `Int64.max` permits at once.
    public var admittedPermits: Double = 0
    public var specAdmittedPermits: Double = 0
    /// The implementation's answers and the Spec's (given its history), step by step; kept only
    /// for cases that are not exact.
    public var answers: [RateLimitResult] = []
    public var expected: [RateLimitResult] = []

    package init(id: String, origin: Origin) {
        self.id = id
        self.origin = origin
    }

    /// The finding that failed the case at level `safety`, if any (always its last).
    public var failure: StepFinding? { findings.last { $0.kind.failsSafety } }

    /// The finding that characterizes the case: its failure, or else its first difference.
    public var primary: StepFinding? { failure ?? findings.first }

    public var level: ConformanceLevel {
        if skippedBecause != nil { return .skipped }
        if subjectFailure != nil || failure != nil { return .failed }
        return findings.isEmpty ? .exact : .safety
    }
}

/// A random trace that failed, shrunk to a minimal one that fails with the same kind.
public struct ShrunkFailure: Sendable {
    public var strategy: String
    public var seed: UInt64
    public var traceIndex: Int
    public var randomSteps: Int
    /// The original trace's outcome: its failing step is printed with the shrunk trace.
    public var original: CaseOutcome
    /// The shrunk trace's outcome against the implementation (its trace, answers and findings).
    public var outcome: CaseOutcome
    /// Candidate traces run while shrinking.
    public var runs: Int
    /// The depth of the exhaustive pass whose path this was, when it was not a random trace (its
    /// path index is then ``traceIndex``).
    public var exhaustiveDepth: Int?

    public var trace: Trace { outcome.trace ?? original.trace! }

    /// The shrunk trace as a vector file for a regression folder.
    public var vectorFile: VectorFile {
        let origin =
            exhaustiveDepth.map {
                (
                    "exhaustive-depth-\($0)-path-\(traceIndex)",
                    "path \(traceIndex) of the exhaustive pass at depth \($0)"
                )
            }
            ?? ("seed-\(seed)-trace-\(traceIndex)", "random trace \(traceIndex) of seed \(seed)")
        let draft = StoryDraft(
            random: "regression-\(origin.0)",
            "shrunk from \(origin.1) (\(original.trace?.steps.count ?? 0) steps)",
            clauses: outcome.primary.map { [$0.cause.clause].filter { $0.contains("-") } } ?? [],
            trace.configuration, createdAt: trace.createdAt, trace.steps)
        return VectorFile(
            strategy: strategy, generator: VectorGenerator.version,
            stories: [VectorGenerator.generate(draft, strategy: strategy).story], refusals: [])
    }
}

/// The cases of one strategy whose primary finding has the same cause (CONF-10).
public struct FindingGroup: Sendable {
    public var strategy: String
    public var cause: FindingCause
    /// The most severe kind among the cases' primary findings.
    public var kind: FindingKind
    /// The ids of the cases.
    public var cases: [String]
    /// The kind of each case's primary finding, in the order of ``cases``: a group of one cause
    /// can hold a case that fails safety beside others that only differ.
    public var caseKinds: [FindingKind]
    /// The worst of every finding of those cases.
    public var severity: FindingSeverity
    /// The case of the most severe kind with the fewest steps up to its primary finding, and that finding.
    public var example: CaseOutcome
    public var exampleFinding: StepFinding

    /// How many cases of each kind, the most severe first: `[(retry forever, 1), (difference, 15)]`.
    public var casesByKind: [(kind: FindingKind, count: Int)] {
        Dictionary(grouping: caseKinds, by: { $0 }).map { ($0.key, $0.value.count) }.sorted { $0.kind > $1.kind }
    }

    /// `16 cases: 1 retry forever, 15 difference`, or `3 cases` when all are of the group's kind.
    public var casesText: String {
        let total = cases.count == 1 ? "1 case" : "\(cases.count) cases"
        let kinds = casesByKind
        guard kinds.count > 1 else { return total }
        return total + ": " + kinds.map { "\($0.count) \($0.kind.name)" }.joined(separator: ", ")
    }
}

/// The results for one strategy.
public struct StrategyReport: Sendable {
    public var strategy: String
    public var profile: ImplementationProfile = .full
    /// The tolerance T the strategy was judged with (CONF-6), and whether the command line set it.
    public var toleranceNanoseconds: Int64 = 0
    public var toleranceOverridden = false
    /// Why the whole strategy was skipped (not implemented), if it was.
    public var skippedBecause: String?
    /// Why the strategy stopped before its last case (CONF-11), if it did.
    public var stoppedBecause: String?
    /// Vector stories and random traces (exact random traces are kept without their answers).
    public var outcomes: [CaseOutcome] = []
    /// The refusal cases (CONF-8).
    public var refusals: [CaseOutcome] = []
    public var shrunk: ShrunkFailure?
    /// Random traces requested and run.
    public var randomRequested = 0
    /// Steps of the random traces that reached each clause, by the Spec's answer
    /// (`VectorGenerator.clausesReached`): what exploration covered, beside the vectors'
    /// ``clausesChecked``.
    public var clauseHits: [String: Int] = [:]
    /// Coverage features the random traces reached (`Steering.swift`): outcomes with a quantity
    /// of their step bucketed by bit length, what steered them.
    public var coverageFeatures = 0
    /// Whether only some vector cases were asked for (`--case`): then no floor applies to what
    /// was checked (``belowFloor``), the run being about those cases.
    public var casesSelected = false
    public var seconds: Double = 0

    public init(strategy: String) { self.strategy = strategy }

    public var stories: [CaseOutcome] { outcomes.filter { $0.origin == .story } }
    public var randomTraces: [CaseOutcome] { outcomes.filter { if case .random = $0.origin { true } else { false } } }
    public var ran: [CaseOutcome] { outcomes.filter { $0.skippedBecause == nil } }
    public var skipped: [CaseOutcome] { (outcomes + refusals).filter { $0.skippedBecause != nil } }
    /// The vector stories judged only up to their first step outside the profile (CONF-7).
    public var partial: [CaseOutcome] { outcomes.filter { $0.partialBecause != nil } }
    public var steps: Int { ran.reduce(0) { $0 + $1.steps } }

    /// The Spec clauses exercised by the stories and refusals that ran (CONF-7).
    public var clausesChecked: [String] {
        Set((outcomes + refusals).filter { $0.skippedBecause == nil }.flatMap(\.clauses)).sorted(
            by: VectorGenerator.clauseOrder)
    }

    /// Cases that ran, by level.
    public func count(_ level: ConformanceLevel, of cases: [CaseOutcome]) -> Int {
        cases.filter { $0.level == level }.count
    }

    /// The admission level: the lowest level of every story and random trace that ran.
    public var level: ConformanceLevel {
        if skippedBecause != nil || ran.isEmpty { return .skipped }
        if stoppedBecause != nil { return .failed }
        return ran.map(\.level).min() ?? .skipped
    }

    /// Why too little of the strategy was checked for its verdict to mean anything, if so (CONF-7):
    /// an implemented strategy of which no case ran, or in which no case ran where the Spec
    /// admits a permit, or (when vectors were asked) no vector of a clause of its own beyond CORE
    /// ran. A run with such a strategy does not pass. `nil` for a strategy not implemented.
    public var belowFloor: String? {
        guard skippedBecause == nil, !casesSelected, !(outcomes.isEmpty && refusals.isEmpty) else { return nil }
        if ran.isEmpty {
            return "no case ran within its profile\(skipped.isEmpty ? "" : ": \(skipped.count) skipped")"
        }
        if specAdmittedPermits == 0 { return "no case ran in which the Spec admits a permit" }
        let prefix = (AnyRateLimitStrategy.clausePrefixes[strategy] ?? strategy) + "-"
        if !stories.isEmpty, !clausesChecked.contains(where: { $0.hasPrefix(prefix) }) {
            return "no vector of a clause of its own (\(prefix)…) ran within its profile, only CORE ones"
        }
        return nil
    }

    /// What was not checked (CONF-7): the clauses the profile keeps from being checked, and each
    /// refusal case answered `unsupported`, whose configuration the implementation may accept and
    /// then not limit (CORE-3).
    public var notChecked: [String] {
        // The tolerance the run judged with: `--tolerance` overrides the profile's (CONF-6).
        profile.notChecked(strategy: strategy, toleranceOverride: toleranceOverridden ? toleranceNanoseconds : nil)
            + refusals.filter { $0.skippedBecause != nil && !$0.outsideProfile }.map {
                "CORE-3 the refusal \($0.id), answered unsupported (\($0.skippedBecause ?? "")): validation is judged on the other refusals"
            }
    }

    /// The validation verdict (CONF-8): `exact` when every configuration the Spec refuses is
    /// refused naming the same field and problem, `safety` when refused naming another,
    /// `failed` when one is accepted, `skipped` when none ran.
    public var validation: ConformanceLevel {
        refusals.filter { $0.skippedBecause == nil }.map(\.level).min() ?? .skipped
    }

    /// Permits the implementation admitted and the Spec admits on the same steps (CONF-9).
    public var admittedPermits: Double { ran.reduce(0) { $0 + $1.admittedPermits } }
    public var specAdmittedPermits: Double { ran.reduce(0) { $0 + $1.specAdmittedPermits } }

    /// The implementation's admitted permits as a share of the Spec's (CONF-9), `nil` when the
    /// Spec admitted none.
    public var utilization: Double? { specAdmittedPermits > 0 ? admittedPermits / specAdmittedPermits : nil }

    /// The cases that are not exact, grouped by the cause of their primary finding (their
    /// failure, or else their first difference), the most severe group first (CONF-10).
    public var groups: [FindingGroup] {
        var groups: [FindingCause: FindingGroup] = [:]
        var order: [FindingCause] = []
        // A shrunk random trace stands for the trace it was shrunk from: its cause is found on
        // the minimal trace, where nothing irrelevant is left.
        let cases = (outcomes + refusals).map { outcome in
            shrunk.map { outcome.origin == $0.original.origin ? $0.outcome : outcome } ?? outcome
        }
        for outcome in cases {
            guard let primary = outcome.primary else { continue }
            let severity = outcome.findings.reduce(FindingSeverity()) { $0.worst($1.severity) }
            guard var group = groups[primary.cause] else {
                groups[primary.cause] = FindingGroup(
                    strategy: strategy, cause: primary.cause, kind: primary.kind, cases: [outcome.id],
                    caseKinds: [primary.kind], severity: severity, example: outcome, exampleFinding: primary)
                order.append(primary.cause)
                continue
            }
            group.kind = max(group.kind, primary.kind)
            group.severity = group.severity.worst(severity)
            group.cases.append(outcome.id)
            group.caseKinds.append(primary.kind)
            let example = group.exampleFinding
            if primary.kind > example.kind || (primary.kind == example.kind && primary.step < example.step) {
                (group.example, group.exampleFinding) = (outcome, primary)
            }
            groups[primary.cause] = group
        }
        return order.compactMap { groups[$0] }.sorted { $0.kind != $1.kind ? $0.kind > $1.kind : $0.cause < $1.cause }
    }
}

/// The results of a run.
public struct ConformanceReport: Sendable {
    public var implementation: String
    public var strategies: [StrategyReport]

    /// True when something ran and every strategy reached `level` or better in what ran of it:
    /// its admissions, and its validation (CONF-3).
    public func passes(at level: ConformanceLevel) -> Bool {
        let ran = strategies.filter { $0.level != .skipped || $0.validation != .skipped }
        return !ran.isEmpty && strategies.allSatisfy { $0.belowFloor == nil }
            && ran.allSatisfy {
                ($0.level == .skipped || $0.level >= level) && ($0.validation == .skipped || $0.validation >= level)
            }
    }
}

extension ConformanceReport {
    /// This report with the random traces of `random` (a run of the same implementation with no
    /// vectors) added to each strategy: a run that explores runs its vectors and its random traces
    /// in two processes, with the exhaustive pass between them.
    public func adding(random: ConformanceReport) -> ConformanceReport {
        var merged = self
        for index in merged.strategies.indices {
            guard let other = random.strategies.first(where: { $0.strategy == merged.strategies[index].strategy })
            else { continue }
            merged.strategies[index].outcomes += other.randomTraces
            merged.strategies[index].randomRequested += other.randomRequested
            merged.strategies[index].seconds += other.seconds
            merged.strategies[index].clauseHits.merge(other.clauseHits, uniquingKeysWith: +)
            merged.strategies[index].coverageFeatures = max(
                merged.strategies[index].coverageFeatures, other.coverageFeatures)
            merged.strategies[index].shrunk = merged.strategies[index].shrunk ?? other.shrunk
            merged.strategies[index].stoppedBecause = merged.strategies[index].stoppedBecause ?? other.stoppedBecause
        }
        return merged
    }
}
