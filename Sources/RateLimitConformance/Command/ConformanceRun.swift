import Foundation
import RateLimitCore

// What the `ratelimit-conformance` command runs, as a library: the suite against an implementation
// in another process (or the reference), the exhaustive pass, generated scenarios and the run that
// explores within a budget. The command parses its arguments into a `ConformanceRun` and prints
// what it answers; nothing here prints or ends the process.

/// One run of the command: the vectors it judges by, the settings every pass shares, its clock and
/// where it reports progress.
package struct ConformanceRun: Sendable {
    /// How a message of ``started(_:)`` begins: the implementation could not be run (the command's
    /// exit status 3).
    package static let notStartedPrefix = "the implementation did not start properly: "
    /// The time a run with `--exec` aims at, unless `--budget` says otherwise.
    package static let defaultBudget = 60.0
    /// The depth of the exhaustive pass of a run that explores: every path of every strategy's
    /// cover at depth 2 fits in about a third of the default budget against the Python example;
    /// depth 3 (`--exhaustive default`) has ten times as many.
    package static let explorationDepth = 2

    /// The strategy vectors, the server-feedback cases and the scenario cases the run asks.
    package var vectors: [VectorFile]
    package var feedbackCases: [FeedbackCase] = []
    package var scenarios: [(machine: ScenarioMachine, cases: [ScenarioCase])] = []
    /// The run's seed: every random choice of every pass derives from it.
    package var seed: UInt64
    /// The strategies asked (`nil`: all), the tolerance, the random traces' length and the level.
    package var strategies: Set<String>?
    package var toleranceNanoseconds: Int64?
    package var randomSteps = ConformanceOptions.defaultRandomSteps
    package var level = ConformanceLevel.exact
    /// The exhaustive path asked alone (`--path`).
    package var onlyPath: Int?
    /// The budget of a run that explores, in seconds (`nil`: ``defaultBudget``).
    package var budget: Double?
    /// How an implementation is started: its answer's timeout, the protocol version and the
    /// pipelining window offered.
    package var timeout = 5.0
    package var protocolVersion = ExternalSubject.protocolVersion
    package var window = ExternalSubject.defaultWindow
    /// Seconds since the run began, and where progress lines go (a terminal's status line).
    package var clock: @Sendable () -> Double
    package var progress: @Sendable (String) -> Void = { _ in }
    package var endProgress: @Sendable () -> Void = {}

    package init(vectors: [VectorFile], seed: UInt64, clock: @escaping @Sendable () -> Double) {
        self.vectors = vectors
        self.seed = seed
        self.clock = clock
    }

    /// The budget this run explores within.
    package var explorationBudget: Double { budget ?? Self.defaultBudget }

    /// The implementation `command` started, or why it did not start properly.
    package func started(_ command: String) -> Result<ExternalSubject, ConformanceFormatError> {
        Result { () throws(SubjectFailure) in
            try ExternalSubject(command: command, timeout: timeout, protocolVersion: protocolVersion, window: window)
        }.mapError { ConformanceFormatError("\(Self.notStartedPrefix)\($0)") }
    }

    /// What a run of the suite answers: the report, the protocol version spoken (an
    /// implementation's) and the reports of the cases judged exactly (the HTTP cases, the
    /// scenarios: how they were answered, or why they were not asked).
    package struct SuiteRun {
        package var report: ConformanceReport
        package var version: Int64?
        package var extras: [CaseRunReport]
    }

    /// Runs the suite with `options` against `command` (the reference when `nil`), with the HTTP
    /// cases `http` and the scenarios `scenarios`.
    package func suite(
        command: String?, options: ConformanceOptions, http: [FeedbackCase] = [],
        scenarios: [(machine: ScenarioMachine, cases: [ScenarioCase])] = []
    ) throws(ConformanceFormatError) -> SuiteRun {
        defer { endProgress() }
        guard let command else {
            var subject = ReferenceSubject()
            let report = try ConformanceSuite.run(
                &subject, vectors: vectors, options: options, clock: clock, progress: progress)
            var extras: [CaseRunReport] = []
            if !http.isEmpty {
                extras.append(
                    FeedbackRunReport.run(http) { feedbackCase in
                        Result { () throws(ConformanceFormatError) in try feedbackCase.referenceResult() }
                    })
            }
            for (machine, cases) in scenarios {
                var driver = ReferenceScenarioDriver()
                extras.append(.run(machine, cases, driver: &driver))
            }
            return SuiteRun(report: report, version: nil, extras: extras)
        }
        var subject = try started(command).get()
        defer { subject.close() }
        let report = try ConformanceSuite.run(
            &subject, vectors: vectors, options: options, clock: clock, progress: progress)
        var extras: [CaseRunReport] = []
        if !http.isEmpty {
            if subject.extensions.contains("server-feedback") {
                progress("http: server feedback")
                extras.append(
                    FeedbackRunReport.run(http, declared: subject.feedbackMembers) { feedbackCase in
                        Result { () throws(SubjectFailure) in try subject.feedback(feedbackCase) }
                            .mapError { ConformanceFormatError($0.description) }
                    })
            } else {
                extras.append(.notRun("the implementation does not declare the server-feedback extension"))
            }
        }
        for (machine, cases) in scenarios {
            guard subject.extensions.contains(machine.rawValue) else {
                extras.append(
                    .notRun(
                        label: machine.rawValue, specFile: machine.specFile,
                        "the implementation does not declare the \(machine.rawValue) extension"))
                continue
            }
            progress("\(machine.rawValue): scenarios")
            var driver = ExternalScenarioDriver(subject: subject)
            // Only the scenarios within the profiles of the strategies they involve (CONF-7).
            extras.append(
                .within(
                    cases, outside: { $0.outsideProfile(subject.profile(for:), declares: subject.strategies.contains) }
                ) { inside in
                    .run(machine, inside, driver: &driver)
                })
        }
        return SuiteRun(report: report, version: subject.version, extras: extras)
    }

    /// The rows of a matrix: the suite against each entry's command, in the entries' order, up to
    /// `jobs` of them at once. Each row runs in a process of its own with its own answers, so a
    /// row's report is the one it would have alone (no answer is timed but against the timeout);
    /// with more than one job, the progress line names the row started last.
    package func matrixRows(
        _ entries: [ConformanceMatrix.Entry], options: ConformanceOptions, http: [FeedbackCase],
        scenarios: [(machine: ScenarioMachine, cases: [ScenarioCase])], jobs: Int
    ) -> [ConformanceMatrix.Row] {
        @Sendable func row(_ entry: ConformanceMatrix.Entry, _ run: ConformanceRun) -> ConformanceMatrix.Row {
            do {
                let suite = try run.suite(command: entry.command, options: options, http: http, scenarios: scenarios)
                return .init(entry: entry, report: suite.report, failure: nil, extras: suite.extras)
            } catch {
                return .init(entry: entry, report: nil, failure: error.message)
            }
        }
        guard jobs > 1, entries.count > 1 else {
            return entries.map { entry in
                progress("matrix: \(entry.name)")
                return row(entry, self)
            }
        }
        // Concurrent rows share no progress line: each says when it starts, and nothing else.
        var silent = self
        silent.progress = { _ in }
        silent.endProgress = {}
        let quiet = silent
        let lanes = MatrixLanes(count: entries.count)
        // Threads of their own, not Dispatch's pool: a row mostly waits on its processes, and the
        // pool would run no more lanes than cores.
        let done = DispatchGroup()
        for _ in 0..<min(jobs, entries.count) {
            done.enter()
            Thread {
                while let index = lanes.next() {
                    progress("matrix: \(entries[index].name)")
                    lanes.store(row(entries[index], quiet), at: index)
                }
                done.leave()
            }.start()
        }
        done.wait()
        endProgress()
        return lanes.rows
    }

    /// Runs the exhaustive pass to `depth` against `command` (the reference when `nil`), at
    /// `level` (the run's when `nil`).
    package func exhaustive(
        command: String?, depth: Int, level: ConformanceLevel? = nil, stopAtFirstFailure: Bool = false,
        secondsPerStrategy: Double? = nil
    ) throws(ConformanceFormatError) -> ExhaustiveReport {
        var options = ExhaustiveOptions(
            depth: depth, strategies: strategies, level: level ?? self.level,
            toleranceNanoseconds: toleranceNanoseconds,
            onlyPath: onlyPath)
        options.stopAtFirstFailure = stopAtFirstFailure
        options.secondsPerStrategy = secondsPerStrategy
        defer { endProgress() }
        guard let command else {
            var subject = ReferenceSubject()
            return ConformanceSuite.exhaustive(&subject, options: options, clock: clock, progress: progress)
        }
        var subject = try started(command).get()
        defer { subject.close() }
        return ConformanceSuite.exhaustive(&subject, options: options, clock: clock, progress: progress)
    }

    /// Explores the extensions `command` declares with generated scenarios until `deadline` (or
    /// only scenario `only` of `machines`); `nil` when it declares none of them. With `walkUntil`,
    /// the wait-queue walk first (WaitQueueWalk.swift), until then; with `walkOnly`, only that
    /// path of it.
    package func exploreScenarios(
        command: String, until deadline: Double, machines: [ScenarioMachine] = ScenarioGenerator.machines,
        only: Int? = nil, walkUntil: Double? = nil, walkOnly: Int? = nil
    ) throws(ConformanceFormatError) -> ScenarioExplorationReport? {
        let subject = try started(command).get()
        defer { subject.close() }
        let declared = machines.filter { subject.extensions.contains($0.rawValue) }
        guard !declared.isEmpty else { return nil }
        var driver = ExternalScenarioDriver(subject: subject)
        defer { endProgress() }
        let walked =
            declared.contains(.waitQueue) && (walkUntil != nil || walkOnly != nil)
            ? ScenarioExploration.walk(
                depth: WaitQueueWalk.defaultDepth, driver: &driver, only: walkOnly, until: walkUntil ?? 0,
                clock: clock,
                outside: { $0.outsideProfile(subject.profile(for:), declares: subject.strategies.contains) },
                progress: progress) : nil
        if let walked, walkOnly != nil { return ScenarioExplorationReport(seed: seed, machines: [walked]) }
        var report = ScenarioExploration.run(
            declared, driver: &driver, seed: seed, maximumSteps: randomSteps, only: only, until: deadline,
            shrinkSeconds: max(2, 0.05 * explorationBudget), clock: clock,
            outside: { $0.outsideProfile(subject.profile(for:), declares: subject.strategies.contains) },
            events: subject.strategies.reduce(Set(ImplementationProfile.Event.allCases)) {
                $0.intersection(subject.profile(for: $1).events)
            }, strategies: subject.strategies, progress: progress)
        if let walked { report.machines.insert(walked, at: 0) }
        return report
    }

    /// What the run that explores answers: the vectors' and random traces' report, the protocol
    /// version, the exact cases' reports and what exploration found.
    package struct ExploringRun {
        package var report: ConformanceReport
        package var version: Int64?
        package var extras: [CaseRunReport]
        package var exploration: Exploration
    }

    /// The run that explores `command` within `budget` seconds from now: the vectors (always whole),
    /// then the exhaustive pass (until a quarter of the budget, shared by the strategies), generated
    /// scenarios of the extensions it declares (an eighth), generated server responses when it
    /// declares server-feedback (a twentieth, reported in `extras`), then random traces until the
    /// budget is spent (at least a tenth of it): long histories and mid-range sizes are found there.
    package func exploring(
        command: String, budget: Double, http: [FeedbackCase] = [],
        scenarios: [(machine: ScenarioMachine, cases: [ScenarioCase])] = []
    ) throws(ConformanceFormatError) -> ExploringRun {
        let start = clock()
        let vectorRun = try suite(
            command: command,
            options: ConformanceOptions(
                strategies: strategies, cases: nil, randomTraces: 0, randomSteps: randomSteps, seed: seed,
                toleranceNanoseconds: toleranceNanoseconds),
            http: http, scenarios: scenarios)
        let ran = max(1, vectorRun.report.strategies.filter { $0.skippedBecause == nil }.count)
        let share = max(0, start + 0.25 * budget - clock()) / Double(ran)
        let exhaustive = try exhaustive(
            command: command, depth: Self.explorationDepth, secondsPerStrategy: max(share, 0.05))
        // The wait-queue walk takes the first 40% of the scenarios' eighth of the budget.
        let scenariosStart = clock()
        let generated = try exploreScenarios(
            command: command, until: scenariosStart + max(0.05, 0.125 * budget),
            walkUntil: scenariosStart + max(0.02, 0.05 * budget))
        let headers = try exploreFeedback(command: command, until: clock() + max(0.02, 0.05 * budget))
        var randomOptions = ConformanceOptions(
            strategies: strategies, cases: [], randomSteps: randomSteps, seed: seed,
            toleranceNanoseconds: toleranceNanoseconds, randomSeconds: max(0.1 * budget, start + budget - clock()))
        randomOptions.shrinkSeconds = max(2, 0.05 * budget)
        let random = try suite(command: command, options: randomOptions).report
        let exploration = Exploration(
            budget: budget, vectors: vectorRun.report, exhaustive: exhaustive, scenarios: generated, random: random,
            seconds: clock() - start, randomSteps: randomSteps, seed: seed)
        return ExploringRun(
            report: vectorRun.report.adding(random: random), version: vectorRun.version,
            extras: vectorRun.extras + (headers.map { [$0] } ?? []), exploration: exploration)
    }

    /// Sends generated responses (FeedbackGenerator.swift) to `command` until `deadline`, each
    /// compared member by member with the reference's reading; `nil` when it does not declare the
    /// server-feedback extension. Each differing response is named with its status, fields and
    /// instant of receipt, so that it can be tried by hand.
    package func exploreFeedback(command: String, until deadline: Double) throws(ConformanceFormatError)
        -> CaseRunReport?
    {
        let subject = try started(command).get()
        defer { subject.close() }
        guard subject.extensions.contains("server-feedback") else { return nil }
        progress("http: generated responses")
        defer { endProgress() }
        var index = 0
        var failures: [CaseRunReport.Failure] = []
        var failed: [FeedbackGenerator.Family?: Int] = [:]
        var unlisted = 0
        repeat {
            let batch = (index..<index + 50).compactMap { FeedbackGenerator.feedbackCase(seed: seed, index: $0) }
            index += 50
            let report = FeedbackRunReport.run(batch, declared: subject.feedbackMembers) { feedbackCase in
                Result { () throws(SubjectFailure) in try subject.feedback(feedbackCase) }
                    .mapError { ConformanceFormatError($0.description) }
            }
            let cases = Dictionary(batch.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for failure in report.failures {
                // Each family keeps its own count, so that a parser that reads only Retry-After is
                // still explored there after its RateLimit responses have differed.
                let family = FeedbackGenerator.family(of: failure.id)
                failed[family, default: 0] += 1
                guard failed[family, default: 0] <= Self.generatedFailuresShown else {
                    unlisted += 1  // counted, not listed
                    continue
                }
                let summary = cases[failure.id].map { " (\(FeedbackGenerator.summary($0)))" } ?? ""
                failures.append(CaseRunReport.Failure(id: failure.id + summary, differences: failure.differences))
            }
            // An implementation that stopped answering is not asked on.
            if report.failures.count == batch.count,
                report.failures.allSatisfy({
                    $0.differences.first?.hasPrefix("no answer") == true
                        || $0.differences.first?.hasPrefix("not run") == true
                })
            {
                break
            }
        } while index < Self.generatedResponsesAtLeast
            || (clock() < deadline
                && failures.count < Self.generatedFailuresShown * FeedbackGenerator.Family.allCases.count)
        var generated = CaseRunReport(
            label: FeedbackGenerator.label, specFile: "HTTP.md", cases: index, failures: failures, notRun: nil,
            unlisted: unlisted)
        // The members the implementation does not fill, as the HTTP vectors list them.
        generated.notChecked = FeedbackRunReport.notChecked(declared: subject.feedbackMembers)
        return generated
    }

    /// Generated responses sent whatever the budget (a few tenths of a second): what every run
    /// covers, however busy the machine.
    static let generatedResponsesAtLeast = 500

    /// Generated responses that differ listed, at most, of each family (the others are counted):
    /// exploring stops when every family has shown this many.
    static let generatedFailuresShown = 10
}

/// What a run with `--exec` explored beyond the vectors, within its budget.
package struct Exploration {
    package var budget: Double
    /// The vectors' report, before the random traces were added.
    package var vectors: ConformanceReport
    package var exhaustive: ExhaustiveReport
    /// The generated scenarios of the extensions the implementation declares (none: `nil`).
    package var scenarios: ScenarioExplorationReport?
    /// The random traces' report.
    package var random: ConformanceReport
    /// How long exploring took, on the run's clock.
    package var seconds: Double
    /// The random traces' longest length asked, and the run's seed (for the replay lines).
    package var randomSteps: Int
    package var seed: UInt64

    /// Random traces run, and the longest, over every strategy.
    package static func randomCounts(_ report: ConformanceReport) -> (traces: Int, steps: Int, longest: Int) {
        let traces = report.strategies.flatMap(\.randomTraces)
        return (traces.count, traces.reduce(0) { $0 + $1.steps }, traces.map(\.steps).max() ?? 0)
    }

    /// The lines that say what the run explored.
    package func lines(_ report: ConformanceReport) -> [String] {
        let random = Self.randomCounts(report)
        let paths = exhaustive.strategies.reduce((run: 0, all: 0)) { ($0.run + $1.pathsRun, $0.all + $1.paths) }
        let complete = exhaustive.strategies.filter { $0.skippedBecause == nil && $0.pathsRun == $0.paths }.count
        let ran = exhaustive.strategies.filter { $0.skippedBecause == nil }.count
        return [
            "explored for \(String(format: "%.1f", seconds)) s of a \(Int(budget)) s budget (--budget; --quick for the vectors alone):",
            "  the exhaustive pass to depth \(exhaustive.depth): \(paths.run) of \(paths.all) paths, every path for \(complete) of \(ran) strategies",
            "  \(random.traces) random traces of up to \(randomSteps) steps (\(random.steps) steps, the longest \(random.longest)), seed \(seed); each trace draws its own sizes, instants and events (--trace K --seed \(seed) replays trace K)",
        ]
            + (scenarios.map { scenarios in
                [
                    "  generated scenarios of the extensions declared (--scenario MACHINE/K --seed \(seed) replays scenario K):"
                ]
                    + scenarios.lines.map { "    " + $0 }
            } ?? [
                "  no generated scenarios: the implementation declares no composite, wait-queue or adaptive extension"
            ])
    }

    /// The passes that found something at `level`, each judged alone: `vectors` (with the HTTP and
    /// scenario vectors in `extras`), `exhaustive`, `extensions` (generated scenarios, and the
    /// generated responses in `extras`), `random`.
    package func caughtBy(at level: ConformanceLevel, extras: [CaseRunReport]) -> [String] {
        let generated = extras.filter { $0.label == FeedbackGenerator.label }
        let vectorExtras = extras.filter { $0.label != FeedbackGenerator.label }
        return [
            ("vectors", !vectors.passes(at: level) || !vectorExtras.allSatisfy(\.passed)),
            ("exhaustive", !exhaustive.passesOrSkipped(at: level)),
            ("extensions", scenarios?.passed == false || !generated.allSatisfy(\.passed)),
            ("random", !random.passes(at: level)),
        ].filter(\.1).map(\.0)
    }

    /// Whether the exhaustive pass and the generated scenarios found nothing at `level`.
    package func passes(at level: ConformanceLevel) -> Bool {
        exhaustive.passesOrSkipped(at: level) && (scenarios?.passed ?? true)
    }
}

/// The rows of a matrix being filled by concurrent lanes: which entry is next, and each row as it
/// ends. Every access holds `lock`.
private final class MatrixLanes: @unchecked Sendable {
    // @unchecked: `nextIndex` and `filled` are only read or written inside `lock.withLock`.
    private let lock = NSLock()
    private var nextIndex = 0
    private var filled: [ConformanceMatrix.Row?]

    init(count: Int) { filled = Array(repeating: nil, count: count) }

    func next() -> Int? {
        lock.withLock {
            guard nextIndex < filled.count else { return nil }
            defer { nextIndex += 1 }
            return nextIndex
        }
    }

    func store(_ row: ConformanceMatrix.Row, at index: Int) { lock.withLock { filled[index] = row } }

    /// Every row, once each lane has ended (each entry's row is stored before its lane ends).
    var rows: [ConformanceMatrix.Row] { lock.withLock { filled.compactMap { $0 } } }
}
