import RateLimitCore

// The exhaustive pass against an implementation (`ratelimit-conformance --exhaustive DEPTH`):
// the reference model's walk of a strategy's standard space (ExhaustiveSpaces.swift) within the
// implementation's profile, to DEPTH events, and every transition it found replayed against the
// implementation from creation (an implementation offers no snapshot of its state). The
// transitions are grouped into paths: each path starts from creation, goes the shortest way to a
// state with a transition not yet taken, then takes untried transitions for as long as the state
// it reaches has one, so that every transition is replayed once and few steps are spent getting
// somewhere. Each path is judged as a trace is (the Judge, on the implementation's own history);
// the first failing path is shrunk.

/// What an exhaustive pass asks.
public struct ExhaustiveOptions: Sendable {
    /// The most events on a path: every transition of a state reachable in fewer is replayed.
    public var depth: Int
    /// Only these strategies (all when `nil`).
    public var strategies: Set<String>?
    /// The level a path must reach to pass: `exact` (every answer the Spec's) or `safety`.
    public var level: ConformanceLevel
    /// The tolerance T in nanoseconds, instead of the one each profile declares (CONF-6).
    public var toleranceNanoseconds: Int64?
    /// Only this path (an index of the strategy's paths at `depth`), to replay one failure.
    public var onlyPath: Int?
    /// Stop at the first strategy that fails (a mutation score only needs to know that one does).
    public var stopAtFirstFailure = false
    /// Seconds each strategy's paths may take (a budgeted run's share); the paths come shallow
    /// transitions first, so a strategy stopped early has replayed the ones nearest creation.
    public var secondsPerStrategy: Double?

    /// The depth `--exhaustive default` runs: every transition of every state within 2 events,
    /// which finds every mutant of the model and every bug the Python example injects
    /// (Spec/Conformance.md, "Exhaustive checking"), and replays against that example in under 2 minutes.
    public static let defaultDepth = 3

    public init(
        depth: Int = ExhaustiveOptions.defaultDepth, strategies: Set<String>? = nil, level: ConformanceLevel = .exact,
        toleranceNanoseconds: Int64? = nil, onlyPath: Int? = nil
    ) {
        self.depth = depth
        self.strategies = strategies
        self.level = level
        self.toleranceNanoseconds = toleranceNanoseconds
        self.onlyPath = onlyPath
    }
}

/// A cause of failure the exhaustive pass found: its first path, shrunk, and how many paths failed
/// with it.
public struct ExhaustiveFinding: Sendable {
    /// `TB-6 early retry`: the clause and the kind of the primary finding, or the misbehaviour.
    public var cause: String
    /// The kind of the first path's primary finding (``FindingKind/misbehaved`` for a protocol failure).
    public var kind: FindingKind
    public var firstPath: Int
    public var paths: Int
    public var shrunk: ShrunkFailure?
}

/// One strategy's exhaustive pass.
public struct ExhaustiveStrategyReport: Sendable {
    public var strategy: String
    public var profile: ImplementationProfile = .full
    /// Why the strategy did not run (not implemented, or its configuration unsupported).
    public var skippedBecause: String?
    /// The walk of the reference model: states found, transitions, the depth reached, and whether
    /// that depth is the fixpoint (no state is further away).
    public var states = 0
    public var transitions = 0
    public var depth = 0
    public var complete = false
    /// Why the pass stopped before the strategy's last path (an implementation that misbehaved on
    /// 20 paths in a row), if it did.
    public var stoppedBecause: String?
    /// Paths in the cover, paths run (fewer when stopped or out of time), and the steps sent.
    public var paths = 0
    public var pathsRun = 0
    public var steps = 0
    /// The first path below the level asked, its index, and the depth of its first failing
    /// transition in the walk (the fewest events that reach it).
    public var failure: CaseOutcome?
    public var failingPath: Int?
    public var failingDepth: Int?
    /// That path shrunk (as a random trace is).
    public var shrunk: ShrunkFailure?
    public var seconds: Double = 0
    /// Every cause the pass found (the first path's included), in the order found, at most
    /// ``ExhaustiveStrategyReport/findingsKept``: the pass goes on past a failing path.
    public var findings: [ExhaustiveFinding] = []
    /// Distinct causes kept (and shrunk) per strategy; more paths of a kept cause are counted.
    public static let findingsKept = 5

    public init(strategy: String) { self.strategy = strategy }

    /// `skipped`, `failed`, or the level every path reached.
    public var level: ConformanceLevel {
        if skippedBecause != nil { return .skipped }
        return failure?.level ?? worstPassing
    }

    /// The lowest level among the paths that passed (`safety` when one differed within it).
    public var worstPassing: ConformanceLevel = .exact
}

/// The results of an exhaustive pass.
public struct ExhaustiveReport: Sendable {
    public var implementation: String
    public var depth: Int
    public var strategies: [ExhaustiveStrategyReport]

    /// True when some strategy ran and every one that ran reached `level` on every path.
    public func passes(at level: ConformanceLevel) -> Bool {
        let ran = strategies.filter { $0.skippedBecause == nil }
        return !ran.isEmpty && ran.allSatisfy { $0.failure == nil && $0.worstPassing >= level }
    }

    /// Whether every strategy that ran reached `level` on every path (true when none ran).
    package func passesOrSkipped(at level: ConformanceLevel) -> Bool {
        strategies.allSatisfy { $0.skippedBecause != nil || ($0.failure == nil && $0.worstPassing >= level) }
    }
}

extension ConformanceSuite {
    /// Runs the exhaustive pass against `subject`: for each strategy, every transition the
    /// reference reaches within `options.depth` events of its standard space (within the
    /// subject's profile), replayed from creation and judged; the first failing path is shrunk.
    /// `progress` receives a line now and then.
    public static func exhaustive<S: ConformanceSubject>(
        _ subject: inout S, options: ExhaustiveOptions, clock: () -> Double = { 0 },
        progress: (String) -> Void = { _ in }
    ) -> ExhaustiveReport {
        var reports: [ExhaustiveStrategyReport] = []
        for strategy in AnyRateLimitStrategy.identifiers where options.strategies?.contains(strategy) ?? true {
            if options.stopAtFirstFailure, reports.contains(where: { $0.failure != nil }) { break }
            var report = ExhaustiveStrategyReport(strategy: strategy)
            guard subject.strategies.contains(strategy) else {
                report.skippedBecause = "\(subject.name) does not implement \(strategy)"
                reports.append(report)
                continue
            }
            let started = clock()
            let profile = subject.profile(for: strategy)
            report.profile = profile
            // Walking the reference's states comes first, and to a fixpoint it takes seconds.
            progress("\(strategy) exhaustive depth \(options.depth): walking the reference's states")
            guard let cover = ExhaustiveCover(strategy, profile: profile, depth: options.depth) else {
                report.skippedBecause = "no exhaustive space for \(strategy)"
                reports.append(report)
                continue
            }
            (report.states, report.transitions, report.depth, report.complete) = (
                cover.walk.states, cover.walk.transitions, cover.walk.depth, cover.walk.complete
            )
            report.paths = cover.paths.count
            var run = StrategyRun(
                strategy: strategy, profile: profile,
                tolerance: options.toleranceNanoseconds ?? profile.toleranceNanoseconds)
            let indexes = options.onlyPath.map { $0 < cover.paths.count ? [$0] : [] } ?? Array(cover.paths.indices)
            for index in indexes {
                if let share = options.secondsPerStrategy, clock() - started > share {
                    report.stoppedBecause = "its share of the budget (\(ConformanceReport.seconds(share))) ran out"
                    break
                }
                if index % 200 == 0 {
                    progress(
                        "\(strategy) exhaustive depth \(options.depth): path \(index + 1)/\(cover.paths.count), \(report.steps) steps"
                    )
                }
                let path = cover.paths[index]
                let id = "\(strategy)/exhaustive-depth-\(options.depth)-path-\(index)"
                let outcome = run.trace(
                    path.trace, id: id, origin: .exhaustive(depth: options.depth, path: index), on: &subject)
                report.pathsRun += 1
                report.steps += outcome.steps
                if outcome.skippedBecause != nil, report.pathsRun == 1 {
                    report.skippedBecause = outcome.skippedBecause
                    break
                }
                guard outcome.level < options.level, outcome.skippedBecause == nil else {
                    if outcome.level == .safety { report.worstPassing = .safety }
                    _ = run.stop(after: outcome)
                    continue
                }
                // Every cause is kept, each with its first path shrunk; a misbehaving
                // implementation stops the strategy as random traces do (CONF-11).
                let cause =
                    outcome.subjectFailure.map { "protocol \($0.kind.pastTense)" }
                    ?? outcome.primary.map { "\($0.cause.clause) \($0.kind.name)" } ?? "difference"
                if let known = report.findings.firstIndex(where: { $0.cause == cause }) {
                    report.findings[known].paths += 1
                } else if report.findings.count < ExhaustiveStrategyReport.findingsKept {
                    progress("\(strategy) shrinking \(id)")
                    var shrunk = Shrinker.shrink(
                        outcome, strategy: strategy, seed: 0, index: index, randomSteps: 0, run: &run, on: &subject)
                    shrunk.exhaustiveDepth = options.depth
                    let kind =
                        outcome.subjectFailure != nil ? FindingKind.misbehaved : outcome.primary?.kind ?? .difference
                    report.findings.append(
                        ExhaustiveFinding(cause: cause, kind: kind, firstPath: index, paths: 1, shrunk: shrunk))
                }
                if report.failure == nil {
                    report.failure = outcome
                    report.failingPath = index
                    let step = (outcome.primary?.step ?? 1) - 1
                    report.failingDepth = path.depths.indices.contains(step) ? path.depths[step] : nil
                    report.shrunk = report.findings.first?.shrunk
                }
                if options.stopAtFirstFailure { break }
                if let reason = run.stop(after: outcome, limit: ConformanceSuite.consecutiveRandomFailureLimit) {
                    report.stoppedBecause = "\(reason); the rest of its paths not run"
                    break
                }
            }
            report.seconds = clock() - started
            reports.append(report)
        }
        return ExhaustiveReport(implementation: subject.name, depth: options.depth, strategies: reports)
    }
}

/// The walk of a strategy's standard space and the paths that replay each of its transitions.
package struct ExhaustiveCover: Sendable {
    /// One path from creation: the trace to send and, for each step, the depth of its transition
    /// in the walk (the fewest events that reach it).
    package struct Path: Sendable {
        package var trace: Trace
        package var depths: [Int]
    }

    package var walk: ExhaustiveChecker.Report
    package var paths: [Path]

    /// The cover of `strategy`'s standard space within `profile`, to `depth` events; `nil` for
    /// a strategy without one.
    package init?(_ strategy: String, profile: ImplementationProfile, depth: Int) {
        guard let space = ExhaustiveSpace.standard(strategy, profile: profile) else { return nil }
        let (walk, recorded) = ExhaustiveChecker.walk(
            space, name: strategy, depthLimit: depth,
            allows: { event, result in !result.isInvalid || profile.events.contains(.invalid) }, recordGraph: true)
        guard let graph = recorded else { return nil }
        self.walk = walk
        var paths: [Path] = []
        var next = graph.edges.map { _ in 0 }  // per state, its first transition not yet taken
        // A path follows untaken transitions as far as they go. A state's transitions were found
        // at the instant of its first discovery, and states equal up to a shift of time are one
        // state, so a transition taken after arriving by another way may lie before the instant
        // arrived at: on a monotonic clock the path ends there, and that transition starts a path
        // of its own (from the creation, by the way the state was first found) in a later round.
        var untaken = true
        while untaken {
            untaken = false
            for state in graph.edges.indices {
                while next[state] < graph.edges[state].count {
                    var edges = graph.path(to: state)
                    var depths = edges.indices.map { $0 + 1 }
                    var current = state
                    while current < graph.edges.count, next[current] < graph.edges[current].count {
                        let edge = graph.edges[current][next[current]]
                        let latest = edges.last?.now ?? graph.createdAt[state]
                        if profile.monotonic, edge.now < latest, current != state {
                            untaken = true
                            break
                        }
                        next[current] += 1
                        edges.append(edge)
                        depths.append(graph.depths[current] + 1)
                        current = edge.target
                    }
                    let instants = [graph.createdAt[state]] + edges.map(\.now)
                    if profile.monotonic, zip(instants, instants.dropFirst()).contains(where: { $0 > $1 }) { continue }
                    let steps = edges.map { TraceStep(now: $0.now, event: ConformanceEvent(space.events[$0.event])) }
                    var trace = Trace(configuration: space.strategy, createdAt: graph.createdAt[state], steps: steps)
                    // Instants and spans keep their proportions: scaled to the configuration unit.
                    if profile.configurationUnitNanoseconds > 1 {
                        guard let scaled = trace.scaled(by: profile.configurationUnitNanoseconds) else { continue }
                        trace = scaled
                    }
                    if profile.createdAtFirstEvent, let first = trace.steps.first { trace.createdAt = first.now }
                    paths.append(Path(trace: trace, depths: depths))
                }
            }
        }
        self.paths = paths
    }
}

extension ConformanceEvent {
    /// The event of a limiter of any strategy.
    init(_ event: RateLimitEvent<AnyRateLimitStrategy>) {
        switch event {
        case .acquire(let permits): self = .acquire(permits)
        case .release(let permits): self = .release(permits)
        case .reset: self = .reset
        case .reconfigure(let configuration): self = .reconfigure(configuration)
        }
    }
}

extension ExhaustiveReport {
    /// The per-strategy table: the walk's size and what was replayed.
    package var table: [String] {
        let header = ["strategy", "level", "states", "transitions", "depth", "paths", "steps", "time"]
        let rows = strategies.map { report -> [String] in
            guard report.skippedBecause == nil else { return [report.strategy, "skipped", "", "", "", "", "", ""] }
            return [
                report.strategy, report.level.rawValue, "\(report.states)", "\(report.transitions)",
                "\(report.depth)\(report.complete ? " (all)" : "")",
                report.pathsRun == report.paths ? "\(report.paths)" : "\(report.pathsRun)/\(report.paths)",
                "\(report.steps)", ConformanceReport.seconds(report.seconds),
            ]
        }
        return TextTable.render(header: header, rows: rows, rightAligned: [2, 3, 5, 6, 7])
    }

    /// What was skipped or left unchecked, and each failing path with its shrunk form.
    package var lines: [String] {
        var lines: [String] = []
        for report in strategies {
            if let reason = report.skippedBecause {
                lines.append("SKIP \(report.strategy): \(reason)")
                continue
            }
            for line in report.profile.notChecked(strategy: report.strategy) {
                lines.append("NOT CHECKED \(report.strategy): \(line)")
            }
            // A stop after a failure is said with the failure (STOP, below).
            if report.failure == nil, let reason = report.stoppedBecause {
                lines.append(
                    "NOT RUN \(report.strategy): \(report.paths - report.pathsRun) of \(report.paths) paths: \(reason)")
            }
        }
        for report in strategies {
            guard let failure = report.failure, let path = report.failingPath, let primary = failure.primary else {
                continue
            }
            lines.append("")
            let depth =
                report.failingDepth.map { ", a transition \($0) event\($0 == 1 ? "" : "s") from creation" } ?? ""
            lines.append(
                "\(primary.kind.failsSafety ? "FAIL" : "DIFF") \(report.strategy): path \(path) \(ConformanceReport.describe(primary))\(depth)"
            )
            guard let shrunk = report.shrunk else { continue }
            lines.append(
                "shrunk from \(shrunk.original.trace?.steps.count ?? 0) to \(shrunk.trace.steps.count) steps in \(shrunk.runs) runs:"
            )
            lines += shrunk.lines
            if report.findings.count > 1 || (report.findings.first?.paths ?? 0) > 1 {
                lines.append(
                    "\(report.strategy): \(report.findings.count) distinct cause\(report.findings.count == 1 ? "" : "s") on \(report.findings.reduce(0) { $0 + $1.paths }) failing paths:"
                )
                for finding in report.findings {
                    lines.append(
                        "  \(finding.cause): \(finding.paths) path\(finding.paths == 1 ? "" : "s"), the first \(finding.firstPath), shrunk to \(finding.shrunk?.trace.steps.count ?? 0) steps"
                    )
                }
            }
            if let reason = report.stoppedBecause { lines.append("STOP \(report.strategy): \(reason)") }
        }
        return lines
    }

    /// The report for machines.
    package var json: JSONValue {
        .object([
            ("implementation", .string(implementation)), ("exhaustiveDepth", .integer(Int64(depth))),
            (
                "strategies",
                .array(
                    strategies.map { report in
                        var fields: [(String, JSONValue)] = [
                            ("strategy", .string(report.strategy)), ("level", .string(report.level.rawValue)),
                        ]
                        if let reason = report.skippedBecause { fields.append(("skipped", .string(reason))) }
                        fields += [
                            ("states", .integer(Int64(report.states))),
                            ("transitions", .integer(Int64(report.transitions))),
                            ("depth", .integer(Int64(report.depth))), ("fixpoint", .bool(report.complete)),
                            ("paths", .integer(Int64(report.paths))), ("pathsRun", .integer(Int64(report.pathsRun))),
                            ("steps", .integer(Int64(report.steps))),
                            ("milliseconds", .integer(Int64(report.seconds * 1_000))),
                        ]
                        if let failure = report.failure, let primary = failure.primary {
                            var failing: [(String, JSONValue)] = [
                                ("path", .integer(Int64(report.failingPath ?? 0))), ("finding", primary.json),
                            ]
                            if let depth = report.failingDepth { failing.append(("depth", .integer(Int64(depth)))) }
                            if let shrunk = report.shrunk {
                                failing.append(("shrunkSteps", .integer(Int64(shrunk.trace.steps.count))))
                                if let finding = shrunk.outcome.primary {
                                    failing.append(("shrunkFinding", finding.json))
                                }
                                failing.append(("vector", shrunk.vectorFile.json))
                            }
                            fields.append(("failure", .object(failing)))
                        }
                        if !report.findings.isEmpty {
                            fields.append(
                                (
                                    "findings",
                                    .array(
                                        report.findings.map { finding in
                                            .object([
                                                ("cause", .string(finding.cause)),
                                                ("firstPath", .integer(Int64(finding.firstPath))),
                                                ("paths", .integer(Int64(finding.paths))),
                                                (
                                                    "shrunkSteps",
                                                    .integer(Int64(finding.shrunk?.trace.steps.count ?? 0))
                                                ),
                                            ])
                                        })
                                ))
                        }
                        if let reason = report.stoppedBecause { fields.append(("stoppedBecause", .string(reason))) }
                        return .object(fields)
                    })
            ),
        ])
    }
}
