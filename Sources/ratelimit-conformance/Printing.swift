import Foundation
import RateLimitConformance
import RateLimitCore

// How the command prints a run: the report, what a run that explores covered, the replay lines of
// each shrunk failure. These read the run's options and seed (main.swift).

/// How the suite ran, for the matrix and the HTML page: the date, vectors, random traces, level.
func runDescription() -> String {
    let today = Date().formatted(.iso8601.year().month().day())
    let source = options.vectors.map { "vectors from \($0)" } ?? "built-in vectors (\(VectorGenerator.version))"
    let random =
        options.random > 0
        ? "\(options.random) random traces per strategy of \(options.randomSteps) steps (seed \(seed))"
        : "no random traces"
    return "\(today); \(options.noVectors ? "no vectors" : source); \(random); level \(options.level.rawValue)"
}

/// Writes `text` to `path`, or ends the run saying why it could not.
func write(_ text: String, to path: String) {
    // With the C library, so that a failure reads as its POSIX reason ("No such file or
    // directory"), not as Foundation's error object.
    guard let file = fopen(path, "w") else { fail("cannot write \(path): \(String(cString: strerror(errno)))") }
    let bytes = Array(text.utf8)
    let written = fwrite(bytes, 1, bytes.count, file)
    let closed = fclose(file)
    if written != bytes.count || closed != 0 { fail("cannot write \(path): \(String(cString: strerror(errno)))") }
}

/// `"COMMAND"` for the shell, single-quoted when double quotes would not keep it as it is.
func quoted(_ command: String) -> String {
    if !command.contains(where: { "\"$`\\".contains($0) }) { return "\"\(command)\"" }
    return "'" + command.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// `ratelimit-conformance --exec COMMAND ARGUMENTS`, with every other option that decides the
/// verdict where it is not the default: the level and tolerance (`judged`; a scenario is judged
/// exactly and takes neither) and the protocol's options.
func replayCommand(_ arguments: [String], judged: Bool = true) -> String {
    var parts = ["ratelimit-conformance"]
    if let exec = options.exec { parts += ["--exec", quoted(exec)] }
    parts += arguments
    if judged, options.level != .exact { parts += ["--level", options.level.rawValue] }
    if judged, let tolerance = options.tolerance { parts += ["--tolerance", String(tolerance)] }
    if options.protocolVersion != ExternalSubject.protocolVersion {
        parts += ["--protocol", String(options.protocolVersion)]
    }
    if options.timeout != 5 { parts += ["--timeout", String(options.timeout)] }
    if options.window != ExternalSubject.defaultWindow { parts += ["--window", String(options.window)] }
    return parts.joined(separator: " ")
}

/// The command that runs exactly the shrunk trace (or exhaustive path) again.
func replay(_ shrunk: ShrunkFailure) -> String {
    replayCommand(
        shrunk.exhaustiveDepth.map {
            ["--exhaustive", String($0), "--strategy", shrunk.strategy, "--path", String(shrunk.traceIndex)]
        }
            ?? [
                "--strategy", shrunk.strategy, "--seed", String(shrunk.seed), "--random-steps",
                String(shrunk.randomSteps), "--trace", String(shrunk.traceIndex),
            ])
}

/// Whether a run passes: something ran (a strategy, HTTP cases or scenarios), every strategy that
/// ran reached the level asked, and every HTTP case and scenario asked was answered as the Spec says.
func runPasses(_ report: ConformanceReport, _ extras: [CaseRunReport], exploration: Exploration? = nil) -> Bool {
    let strategiesRan = report.strategies.contains { $0.level != .skipped || $0.validation != .skipped }
    return somethingRan(report, extras) && (!strategiesRan || report.passes(at: options.level))
        && report.strategies.allSatisfy({ $0.belowFloor == nil })
        && extras.allSatisfy(\.passed) && (exploration?.passes(at: options.level) ?? true)
}

/// Whether any case ran: a run in which nothing ran never passes.
func somethingRan(_ report: ConformanceReport, _ extras: [CaseRunReport]) -> Bool {
    report.strategies.contains { $0.level != .skipped || $0.validation != .skipped }
        || extras.contains { $0.notRun == nil && $0.cases > 0 }
}

/// The command that runs one case of `report` again: a vector case by its id, a random trace
/// by its seed and index, an exhaustive path by its depth and index.
func replayCase(_ outcome: CaseOutcome) -> String {
    let strategy = String(outcome.id.prefix { $0 != "/" })
    switch outcome.origin {
    case .story, .refusal: return replayCommand(["--case", outcome.id])
    case .random(let index):
        return replayCommand([
            "--strategy", strategy, "--seed", String(seed), "--random-steps", String(options.randomSteps), "--trace",
            String(index),
        ])
    case .exhaustive(let depth, let path):
        return replayCommand(["--exhaustive", String(depth), "--strategy", strategy, "--path", String(path)])
    }
}

/// The command that replays a generated scenario of `seed` (the run's).
func replayScenario(
    _ scenario: (machine: ScenarioMachine, index: Int), walked: Bool = false, seed runSeed: UInt64 = seed
) -> String {
    guard !walked else {
        return replayCommand(["--scenario", "\(scenario.machine.rawValue)/walk-\(scenario.index)"], judged: false)
    }
    var arguments = ["--scenario", "\(scenario.machine.rawValue)/\(scenario.index)", "--seed", String(runSeed)]
    if options.randomSteps != ConformanceOptions.defaultRandomSteps {
        arguments += ["--random-steps", String(options.randomSteps)]
    }
    return replayCommand(arguments, judged: false)
}

/// Each finding's shrunk scenario, as a scenario vector file to keep as a regression case.
func printScenarioFindings(_ report: ScenarioExplorationReport) {
    for machine in report.machines {
        for finding in machine.findings {
            print("")
            print(
                finding.walked
                    ? "\(machine.machine.rawValue): walk path \(finding.index) fails (\(finding.cause)), \(finding.shrunk.stepCount) steps:"
                    : "\(machine.machine.rawValue): generated scenario \(finding.index) (seed \(report.seed)) fails (\(finding.cause)); shrunk from \(finding.originalSteps) to \(finding.shrunk.stepCount) steps:"
            )
            print(finding.difference)
            print(
                "replay: " + replayScenario((machine.machine, finding.index), walked: finding.walked, seed: report.seed)
            )
            print("as a regression scenario (--vectors DIR):")
            let file = ScenarioVectorFile(
                machine: machine.machine, generator: ScenarioVectorGenerator.version, cases: [finding.shrunk])
            print(file.json.prettyText, terminator: "")
        }
    }
}

/// The exhaustive pass's table, what it left unchecked, and each failing path shrunk, with its replay.
func printExhaustive(_ report: ExhaustiveReport) {
    for line in report.table { print(line) }
    for line in report.lines { print(line) }
    for strategy in report.strategies {
        guard let shrunk = strategy.shrunk else { continue }
        print("replay: \(replay(shrunk))")
        for finding in strategy.findings.dropFirst() {
            guard let other = finding.shrunk else { continue }
            print("replay (\(finding.cause)): \(replay(other))")
        }
        print("as a regression vector:")
        print(shrunk.vectorFile.json.prettyText, terminator: "")
    }
}

func printReport(
    _ report: ConformanceReport, version: Int64?, extras: [CaseRunReport], exploration: Exploration? = nil
) {
    print("ratelimit-conformance: \(report.implementation)" + (version.map { " (protocol \($0))" } ?? ""))
    let ignored =
        ignoredFiles.isEmpty
        ? ""
        : " (ignored \(ignoredFiles.count) JSON file\(ignoredFiles.count == 1 ? "" : "s") not declaring the vector format: \(ignoredFiles.joined(separator: ", ")))"
    let source =
        options.vectors.map { "vectors from \($0)\(ignored)" } ?? "built-in vectors (\(VectorGenerator.version))"
    let vectorsRun = options.noVectors ? "no vectors" : source
    let random =
        exploration.map {
            "exploring for \(Int($0.budget)) s: the exhaustive pass to depth \($0.exhaustive.depth), generated scenarios and responses, then random traces (seed \(seed))"
        }
        ?? options.trace.map { "random trace \($0) of seed \(seed), \(options.randomSteps) steps" }
        ?? "\(options.random) random traces per strategy"
        + (options.random > 0 ? " of up to \(options.randomSteps) steps (seed \(seed))" : "")
    print("\(vectorsRun); \(random); level \(options.level.rawValue)")
    print("")
    for line in report.table { print(line) }
    let sections: [(String?, [String])] = [
        (nil, report.skippedLines), ("Findings by cause, the most severe first:", report.findingLines),
        ("Steps of the random traces per clause reached (by the Spec's answer):", report.coverageLines),
        ("Cases that differ:", report.caseLines),
    ]
    for (title, lines) in sections where !lines.isEmpty {
        print("")
        if let title { print(title) }
        for line in lines { print(line) }
    }
    for strategy in report.strategies {
        guard let shrunk = strategy.shrunk else { continue }
        let kind = shrunk.outcome.primary?.kind.name ?? "difference"
        print("")
        print(
            "\(strategy.strategy): random trace \(shrunk.traceIndex) (seed \(shrunk.seed)) fails (\(kind)); shrunk from \(shrunk.original.trace?.steps.count ?? 0) to \(shrunk.trace.steps.count) steps in \(shrunk.runs) runs:"
        )
        for line in shrunk.lines { print(line) }
        print("replay: \(replay(shrunk))")
        print("as a regression vector:")
        print(shrunk.vectorFile.json.prettyText, terminator: "")
        if let directory = options.saveRegression {
            do {
                let path = (directory as NSString).appendingPathComponent(
                    "\(strategy.strategy)-seed-\(shrunk.seed)-trace-\(shrunk.traceIndex).json")
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try Data(shrunk.vectorFile.json.prettyText.utf8).write(to: URL(fileURLWithPath: path))
                print("saved \(path)")
            } catch {
                print("could not save the regression vector: \(error)")
            }
        }
    }
    if !extras.isEmpty { print("") }
    for line in extras.flatMap(\.lines) { print(line) }
    if let exploration {
        print("")
        for line in exploration.lines(report) { print(line) }
        print("")
        print("The exhaustive pass:")
        printExhaustive(exploration.exhaustive)
        if let scenarios = exploration.scenarios { printScenarioFindings(scenarios) }
    }
    print("")
    let exhaustiveFailure =
        exploration.map { $0.exhaustive.passesOrSkipped(at: options.level) } == false
        ? "a path of the exhaustive pass does not conform at level \(options.level.rawValue)" : nil
    let scenarioFailures =
        exploration?.scenarios.map { report in
            report.machines.filter { $0.failed > 0 }.map {
                "\($0.failed) of \($0.scenarios) generated \($0.machine.rawValue) scenarios differ from \($0.machine.specFile)"
            }
        } ?? []
    let ran = report.strategies.filter { $0.level != .skipped }.count
    let tolerance =
        report.strategies.contains { $0.toleranceNanoseconds > 0 && $0.level != .skipped }
        ? " (within the tolerance shown by ±)" : ""
    let differing =
        extras.filter { !$0.passed }.map {
            "\($0.differing) of \($0.cases) \($0.label) cases differ from \($0.specFile)"
        } + scenarioFailures
    let feedbackFailure =
        differing.isEmpty && exhaustiveFailure == nil
        ? nil : (differing + (exhaustiveFailure.map { [$0] } ?? [])).joined(separator: "; ")
    let thin = report.strategies.filter { $0.belowFloor != nil }.map(\.strategy)
    let conforming = report.strategies.allSatisfy { strategy in
        (strategy.level == .skipped || strategy.level >= options.level)
            && (strategy.validation == .skipped || strategy.validation >= options.level)
    }
    if !thin.isEmpty, conforming {
        print(
            "FAIL: too little of \(thin.joined(separator: ", ")) is checked within the profile to judge \(thin.count == 1 ? "it" : "them") (THIN above)"
                + (feedbackFailure.map { "; \($0)" } ?? ""))
    } else if ran > 0, !report.passes(at: options.level) {
        print(
            "FAIL: not every strategy that ran conforms at level \(options.level.rawValue)"
                + (feedbackFailure.map { "; \($0)" } ?? ""))
    } else if let feedbackFailure {
        print("FAIL: \(feedbackFailure)")
    } else if ran > 0 {
        print(
            "PASS: \(ran) of \(report.strategies.count) strategies conform at level \(options.level.rawValue) or better\(tolerance)"
        )
    } else if runPasses(report, extras) {
        print("PASS: every HTTP case and scenario asked is answered as the Spec says (no strategy ran)")
    } else {
        print("FAIL: not every strategy that ran conforms at level \(options.level.rawValue) (nothing ran)")
    }
}
