import Dispatch
import Foundation
import RateLimitConformance
import RateLimitCore

// ratelimit-conformance: the conformance suite as a command. With no arguments it checks the
// reference model against the vectors; with --exec it checks another implementation speaking the
// JSON-lines protocol of Spec/protocol.md. Exit status 0 only when everything requested passes
// (with --expect: nothing new or worse than expected), 1 when something fails, 2 for bad usage,
// 3 for an implementation that could not be run.

let options = parse(Array(CommandLine.arguments.dropFirst()))

// SIGINT, SIGTERM and SIGHUP end the implementation's whole process group, then the harness: no
// child (nor anything it started) outlives it.
let signalSources = ChildProcess.endEveryGroupOnSignal()

if let directory = options.writeVectors {
    do {
        for path in try VectorFiles.write(try VectorGenerator.files(), to: directory) { print("wrote \(path)") }
        print("wrote \(try VectorFiles.write(try HTTPVectorGenerator.file(), to: directory))")
        for file in try ScenarioVectorGenerator.files() { print("wrote \(try VectorFiles.write(file, to: directory))") }
        ChildProcess.endHarness(status: 0)
    } catch {
        fail("cannot write vectors: \(error)")
    }
}

let loaded = Result {
    () throws(ConformanceFormatError) -> (
        files: [VectorFile], http: [(path: String, file: HTTPVectorFile)],
        scenarios: [(path: String, file: ScenarioVectorFile)], ignored: [String]
    ) in
    if let directory = options.vectors { return try VectorFiles.scan(directory: directory) }
    return (
        try VectorGenerator.files(), [(HTTPVectorFile.path, try HTTPVectorGenerator.file())],
        try ScenarioVectorGenerator.files().map { ($0.path, $0) }, []
    )
}
let vectors: [VectorFile]
/// The server-feedback cases of the HTTP vector files (Spec/vectors/http/README.md).
let feedbackCases: [FeedbackCase]
/// The scenarios of the machines beyond the strategies (Spec/vectors/scenarios/README.md).
let scenarioFiles: [ScenarioVectorFile]
/// The JSON files under --vectors that declare no vector format (a schema, a saved report).
let ignoredFiles: [String]
switch loaded {
case .success(let scanned):
    (vectors, feedbackCases, ignoredFiles) = (scanned.files, scanned.http.flatMap(\.file.cases), scanned.ignored)
    scenarioFiles = scanned.scenarios.map(\.file)
case .failure(let error): fail(error.message)
}
if options.vectors != nil {
    // The harness judges by the reference model: a file that expects something else was written
    // for another version of the Spec, and is refused rather than silently judged otherwise.
    for file in vectors {
        for story in file.stories {
            if let disagreement = story.disagreementsWithReference.first {
                fail("\(disagreement): the file was written for another version of the Spec")
            }
        }
    }
    for feedbackCase in feedbackCases {
        do {
            if let disagreement = try feedbackCase.disagreementsWithReference().first {
                fail("\(disagreement): the file was written for another version of the Spec")
            }
        } catch {
            fail(error.message)
        }
    }
    for file in scenarioFiles {
        for scenario in file.cases {
            do {
                if let disagreement = try scenario.disagreementsWithReference(file.machine).first {
                    fail("\(disagreement): the file was written for another version of the Spec")
                }
            } catch {
                fail("\(scenario.id): \(error.message)")
            }
        }
    }
}
/// The server-feedback cases this run asks: all of them, unless --strategy, --no-vectors or
/// --trace leave the HTTP vectors out, or --case names some.
let selectedFeedbackCases: [FeedbackCase] = {
    guard options.strategies == nil, !options.noVectors else { return [] }
    guard let patterns = options.cases else { return feedbackCases }
    return feedbackCases.filter { feedbackCase in
        patterns.contains { feedbackCase.id == $0 || feedbackCase.id.hasPrefix($0 + "/") }
    }
}()
/// The scenarios this run asks, machine by machine: all of them, unless --strategy, --no-vectors or
/// --trace leave them out, or --case names some.
let selectedScenarios: [(machine: ScenarioMachine, cases: [ScenarioCase])] = {
    guard options.strategies == nil, !options.noVectors else { return [] }
    return ScenarioMachine.allCases.compactMap { machine in
        let cases = scenarioFiles.filter { $0.machine == machine }.flatMap(\.cases).filter { scenario in
            options.cases.map { $0.contains { scenario.id == $0 || scenario.id.hasPrefix($0 + "/") } } ?? true
        }
        return cases.isEmpty ? nil : (machine, cases)
    }
}()
if let cases = options.cases {
    let selected = vectors.filter { options.strategies?.contains($0.strategy) ?? true }
    let ids =
        selected.flatMap { $0.stories.map(\.id) + $0.refusals.map(\.id) }
        + (options.strategies == nil ? feedbackCases.map(\.id) + scenarioFiles.flatMap { $0.cases.map(\.id) } : [])
    for pattern in cases.sorted() where !ids.contains(where: { $0 == pattern || $0.hasPrefix(pattern + "/") }) {
        // --draw sets --case to the one case it draws: name the flag the user gave.
        let flag = options.draw != nil ? "--draw" : "--case"
        fail(
            "\(flag) \(pattern) matches no vector case\(options.strategies == nil ? "" : " of the selected strategies")"
        )
    }
}

let seed = options.seed ?? UInt64.random(in: 1...UInt64.max)
let suiteOptions = ConformanceOptions(
    strategies: options.strategies, cases: options.noVectors ? [] : options.cases, randomTraces: options.random,
    randomSteps: options.randomSteps, seed: seed, onlyTrace: options.trace, toleranceNanoseconds: options.tolerance)
let showProgress = !options.json && isatty(STDERR_FILENO) == 1
let started = ContinuousClock.now
func elapsed() -> Double {
    let duration = ContinuousClock.now - started
    return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
func progress(_ line: String) {
    guard showProgress else { return }
    FileHandle.standardError.write(Data("\r\u{1B}[K\(line.prefix(100))".utf8))
}
func endProgress() {
    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
}

/// The run the arguments ask for: every pass is the library's (ConformanceRun.swift); this file
/// parses, prints and sets the exit status.
let run: ConformanceRun = {
    var run = ConformanceRun(vectors: vectors, seed: seed, clock: elapsed)
    run.feedbackCases = selectedFeedbackCases
    run.scenarios = selectedScenarios
    run.strategies = options.strategies
    run.toleranceNanoseconds = options.tolerance
    run.randomSteps = options.randomSteps
    run.level = options.level
    run.onlyPath = options.path
    run.budget = options.budget
    run.timeout = options.timeout
    run.protocolVersion = options.protocolVersion
    run.window = options.window
    run.progress = progress
    run.endProgress = endProgress
    return run
}()

/// What `body` answers, or the end of the run with its error (exit status 3 when the
/// implementation could not be run, 2 otherwise).
func orFail<T>(_ body: () throws(ConformanceFormatError) -> T) -> T {
    do { return try body() } catch { fail(error.message) }
}

if let file = options.matrix {
    // The history is checked before the rows run, so that a file that is not one is said at once.
    let earlierHistory: [String] =
        options.history.map { path in
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").map(String.init)
            guard lines.allSatisfy({ (try? JSONValue(parsing: $0)) != nil }) else {
                fail("\(path): a line is not JSON; the history is one JSON object per line")
            }
            return lines
        } ?? []
    // Every implementation the file lists, one after the other, through the same suite.
    let text: String
    do { text = try String(contentsOfFile: file, encoding: .utf8) } catch { fail("cannot read \(file): \(error)") }
    let entries: [ConformanceMatrix.Entry]
    do { entries = try ConformanceMatrix.entries(from: text) } catch { fail(error.message) }
    let rows = run.matrixRows(
        entries, options: suiteOptions, http: selectedFeedbackCases, scenarios: selectedScenarios, jobs: options.jobs)
    var matrix = ConformanceMatrix(rows: rows, runDescription: runDescription())
    matrix.level = options.level
    if options.json {
        print(matrix.json.prettyText, terminator: "")
    } else {
        for line in matrix.text { print(line) }
    }
    var history = ""
    if let path = options.history {
        // One JSON line per run, appended: the file is the history, read back whole.
        let today = Date().formatted(.iso8601.year().month().day())
        let line = matrix.historyLine(date: today)
        write((earlierHistory + [line.compactText]).joined(separator: "\n") + "\n", to: path)
        history = ConformanceMatrix.historyMarkdown(earlierHistory.compactMap { try? JSONValue(parsing: $0) } + [line])
    }
    if let path = options.markdown { write(matrix.markdown + history, to: path) }
    if let path = options.html { write(matrix.html, to: path) }
    // The matrix is complete when every implementation ran; the levels are its content.
    ChildProcess.endHarness(status: rows.allSatisfy { $0.failure == nil } ? 0 : 1)
}

if let id = options.draw {
    let report = orFail { () throws(ConformanceFormatError) in
        try run.suite(command: options.exec, options: suiteOptions).report
    }
    let found = report.strategies.lazy.flatMap { strategy in strategy.outcomes.map { (strategy, $0) } }
        .first { $0.1.id == id }
    guard let (strategy, outcome) = found,
        let picture = TraceDrawing.svg(outcome, profile: strategy.profile, tolerance: strategy.toleranceNanoseconds)
    else {
        fail("--draw \(id): no vector case with steps has that id (a refusal has nothing to draw)")
    }
    print(picture, terminator: "")
    ChildProcess.endHarness(status: 0)
}

if let depth = options.exhaustive, !options.mutationScore {
    // With --budget, the strategies share it equally (a strategy's paths are walked shortest first).
    let strategies = Double(options.strategies?.count ?? AnyRateLimitStrategy.identifiers.count)
    let report = orFail { () throws(ConformanceFormatError) in
        try run.exhaustive(
            command: options.exec, depth: depth, secondsPerStrategy: options.budget.map { $0 / strategies })
    }
    let passed = report.passes(at: options.level)
    if options.json {
        var json = report.json
        if case .object(var members) = json {
            members.insert(("level", .string(options.level.rawValue)), at: 1)
            members.insert(("passed", .bool(passed)), at: 2)
            json = .object(members)
        }
        print(json.prettyText, terminator: "")
    } else {
        print("ratelimit-conformance: \(report.implementation)")
        print(
            "exhaustive pass to depth \(depth): every transition of every state the reference reaches in fewer than \(depth) events, replayed from creation\(options.path.map { " (path \($0) only)" } ?? ""); level \(options.level.rawValue)"
        )
        print("")
        printExhaustive(report)
        print("")
        let ran = report.strategies.filter { $0.skippedBecause == nil }
        let every = ran.contains { $0.pathsRun < $0.paths } ? "every path run (NOT RUN: the rest)" : "every path"
        print(
            passed
                ? "PASS: \(ran.count) of \(report.strategies.count) strategies conform on \(every) at level \(options.level.rawValue)"
                : "FAIL: not every strategy that ran conforms on every path at level \(options.level.rawValue)")
    }
    ChildProcess.endHarness(status: passed ? 0 : 1)
}

if options.mutationScore, let command = options.exec {
    let score = orFail { () throws(ConformanceFormatError) in
        let bugs = try MutationScore.bugs(of: command, defaultLevel: options.level)
        if let depth = options.exhaustive {
            return try MutationScore.exhaustive(
                run, command: command, bugs: bugs, depth: depth, suiteOptions: suiteOptions)
        }
        return try MutationScore.exploring(
            run, command: command, bugs: bugs, explores: !options.quick && options.random == 0,
            suiteOptions: suiteOptions)
    }
    if options.json {
        print(score.json.prettyText, terminator: "")
    } else {
        for line in score.lines { print(line) }
    }
    ChildProcess.endHarness(status: score.passes ? 0 : 1)
}

if let (machine, index, walk) = options.scenario, let command = options.exec {
    let replayed = orFail { () throws(ConformanceFormatError) in
        try run.exploreScenarios(
            command: command, until: 0, machines: [machine], only: walk ? nil : index, walkOnly: walk ? index : nil)
    }
    guard let report = replayed else { fail("the implementation does not declare the \(machine.rawValue) extension") }
    if options.json {
        print(
            JSONValue.object([("passed", .bool(report.passed)), ("scenarios", report.json)]).prettyText, terminator: "")
    } else {
        for line in report.lines { print(line) }
        printScenarioFindings(report)
        print("")
        print(
            report.passed ? "PASS: the scenario is answered as \(machine.specFile) says" : "FAIL: the scenario differs")
    }
    ChildProcess.endHarness(status: report.passed ? 0 : 1)
}

/// With --exec and nothing that asks for one thing only, the run explores within its budget.
let explores =
    options.exec != nil && !options.quick && options.random == 0 && options.trace == nil && options.exhaustive == nil
    && options.cases == nil && !options.noVectors && options.vectors == nil
var report: ConformanceReport
var version: Int64?
var extras: [CaseRunReport]
var exploration: Exploration?
if explores, let command = options.exec {
    let explored = orFail { () throws(ConformanceFormatError) in
        try run.exploring(
            command: command, budget: run.explorationBudget, http: selectedFeedbackCases, scenarios: selectedScenarios)
    }
    (report, version, extras, exploration) = (explored.report, explored.version, explored.extras, explored.exploration)
} else {
    let suite = orFail { () throws(ConformanceFormatError) in
        try run.suite(
            command: options.exec, options: suiteOptions, http: selectedFeedbackCases, scenarios: selectedScenarios)
    }
    (report, version, extras) = (suite.report, suite.version, suite.extras)
}
/// Every finding of the run as the regression gate sees it (CONF-12), with how to replay those
/// of exploration.
let explorationFindings: [(Expectation, replay: String)] =
    (exploration?.exhaustive.strategies ?? []).flatMap { strategy in
        zip(ExhaustiveReport.findings(of: strategy), strategy.findings).map {
            ($0, $1.shrunk.map(replay) ?? replayCommand(["--exhaustive", String(ConformanceRun.explorationDepth)]))
        }
    }
    + (exploration?.scenarios?.machines ?? []).flatMap { machine in
        zip(ScenarioExplorationReport.findings(of: machine), machine.findings).map {
            ($0, replayScenario((machine.machine, $1.index), walked: $1.walked))
        }
    }
let findings = report.findings(at: options.level) + extras.flatMap(\.findings) + explorationFindings.map(\.0)
if let path = options.writeExpect {
    write(ExpectationFile(implementation: report.implementation, expectations: findings).text, to: path)
}
/// The run against --expect's file, if one was given.
let gate: ExpectationVerdict? = options.expect.map { path in
    let text: String
    do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { fail("cannot read \(path): \(error)") }
    switch Result(catching: { () throws(ConformanceFormatError) in try ExpectationFile(parsing: text) }) {
    case .success(let file): return file.verdict(findings)
    case .failure(let error): fail("\(path): \(error.message)")
    }
}
/// Whether the run passes: every strategy at the level asked, every HTTP case and scenario asked as
/// the Spec says, every exhaustive path explored; with --expect, something ran and every finding
/// was expected.
let passed =
    gate.map { $0.passes && somethingRan(report, extras) } ?? runPasses(report, extras, exploration: exploration)
if let path = options.junit {
    var junit = JUnitReport(name: "ratelimit-conformance: \(report.implementation)")
    junit.add(report, at: options.level, replay: replayCase)
    junit.add(extras)
    if exploration != nil { junit.addExploration(explorationFindings) }
    write(junit.xml, to: path)
}
if let path = options.html {
    let entry = ConformanceMatrix.Entry(
        name: report.implementation, version: version.map { "protocol \($0)" } ?? "", command: options.exec ?? "")
    var page = ConformanceMatrix(
        report: .init(entry: entry, report: report, failure: nil, extras: extras), runDescription: runDescription())
    page.level = options.level
    write(page.html, to: path)
}
if options.json {
    var json = report.json
    if case .object(var members) = json {
        members.insert(("level", .string(options.level.rawValue)), at: 1)
        members.insert(("passed", .bool(passed)), at: 2)
        members += extras.map { ($0.label, $0.json) }
        if let version { members.insert(("protocol", .integer(version)), at: 1) }
        if options.vectors != nil { members.append(("ignoredFiles", .array(ignoredFiles.map(JSONValue.string)))) }
        if let gate {
            members.append(
                (
                    "expectations",
                    .object([
                        ("passed", .bool(gate.passes)),
                        ("unexpected", .array(gate.unexpected.map { .string($0.finding.description) })),
                        ("expected", .integer(Int64(gate.expected.count))),
                        ("noLongerObserved", .array(gate.noLongerObserved.map { .string($0.description) })),
                    ])
                ))
        }
        members.append(("seed", .string(String(seed))))
        members.append(("randomSteps", .integer(Int64(options.randomSteps))))
        if let exploration {
            let random = Exploration.randomCounts(report)
            members.append(
                (
                    "exploration",
                    .object([
                        ("budgetSeconds", .integer(Int64(exploration.budget))),
                        ("seconds", .string(ConformanceReport.seconds(exploration.seconds))),
                        ("randomTraces", .integer(Int64(random.traces))),
                        ("randomSteps", .integer(Int64(random.steps))),
                        ("longestTrace", .integer(Int64(random.longest))), ("exhaustive", exploration.exhaustive.json),
                        ("scenarios", exploration.scenarios?.json ?? .null),
                    ])
                ))
        }
        json = .object(members)
    }
    print(json.prettyText, terminator: "")
} else {
    printReport(report, version: version, extras: extras, exploration: exploration)
    if let gate {
        print("")
        for line in gate.lines { print(line) }
        print(
            passed
                ? "GATE PASS: every finding is expected (--expect \(options.expect ?? ""))"
                : "GATE FAIL: \(gate.unexpected.count) finding\(gate.unexpected.count == 1 ? "" : "s") new or worse than --expect \(options.expect ?? "") expects"
        )
    }
}
withExtendedLifetime(signalSources) {}
ChildProcess.endHarness(status: passed ? 0 : 1)
