import Dispatch
import Foundation
import RateLimitConformance
import RateLimitCore

// ratelimit-conformance: the conformance suite as a command. With no arguments it checks the
// reference model against the vectors; with --exec it checks another implementation speaking the
// JSON-lines protocol of Spec/protocol.md. Exit status 0 only when everything requested passes,
// 1 when something fails, 2 for bad usage or an implementation that does not start.

let maximumRandomTraces = 100_000
let maximumRandomSteps = 10_000
let maximumExhaustiveDepth = 20

let usage = """
    usage: ratelimit-conformance [options]

      (no options)            run every vector against the Swift reference model: the strategies'
                              vectors, the HTTP vectors (Spec/vectors/http) and the scenarios of
                              composite limits and the wait queue (Spec/vectors/scenarios)
      --exec "COMMAND"        run against an implementation started as `/bin/sh -c COMMAND`,
                              speaking the JSON-lines protocol of Spec/protocol.md (the HTTP
                              vectors and each machine's scenarios too when its hello declares the
                              server-feedback, composite or wait-queue extension)
      --random N              also run N random traces per strategy (at most \(maximumRandomTraces)),
                              each judged step by step
      --seed S                seed of the random traces (default: a fresh one, printed)
      --random-steps N        steps per random trace (default 100, at most \(maximumRandomSteps))
      --trace K               run only random trace K of the seed (no vectors): how a failure replays
      --no-vectors            run no vector case (only random traces)
      --strategy ID[,ID...]   only these strategies (repeatable; no HTTP vectors, no scenarios)
      --case ID[,ID...]       only these vector cases: an id, or a prefix such as token-bucket/refill,
                              server-feedback or wait-queue (repeatable)
      --level exact|safety    the level required for exit status 0 (default exact)
      --tolerance NS          judge with this tolerance in nanoseconds instead of the one each
                              profile declares (Spec/vectors/README.md, CONF-6); 0 for strict
      --protocol 1|2          the protocol version offered in the hello (default 2)
      --vectors DIR           run the vector files under DIR (subfolders too) instead of the
                              built-in ones: every *.json declaring "format":
                              "ratelimit-conformance-vectors", "ratelimit-http-vectors" or
                              "ratelimit-scenario-vectors" (others are listed as ignored)
      --save-regression DIR   write a shrunk random failure there as a vector file
      --timeout SECONDS       per answer from the implementation (default 5)
      --window N              send up to N requests ahead of their answers to an implementation
                              whose hello accepts it (Spec/protocol.md, "Pipelining"; default
                              \(ExternalSubject.defaultWindow), 1 for one request at a time)
      --exhaustive DEPTH      instead of vectors and random traces, replay every transition the
                              reference model reaches within DEPTH events (1 to \(maximumExhaustiveDepth);
                              default \(ExhaustiveOptions.defaultDepth) when DEPTH is "default") of each strategy's small
                              configuration, within the implementation's profile, and shrink the
                              first failing path (Spec/README.md, "Exhaustive checking")
      --path K                with --exhaustive: replay only path K of each strategy
      --mutation-score        with --exec: ask COMMAND --list-bugs for injected bugs (a name and
                              the level that must catch it per line), run the suite against
                              COMMAND --bug NAME for each, and report how many it catches;
                              with --exhaustive DEPTH, the exhaustive pass at each depth from 1
                              to DEPTH, reporting the smallest that catches each bug
      --json                  print the report as JSON
      --html FILE             also write the report as one self-contained HTML page, with a
                              picture of the smallest case of every finding group
      --matrix FILE           run every implementation FILE lists (JSON {"implementations":
                              [{"name","version","command"}]}, or `name | version | command`
                              lines) and print the matrix: implementation x strategy -> level
      --markdown FILE         with --matrix: also write the matrix as Markdown (Spec/MATRIX.md)
      --draw CASE             print an SVG picture of one vector case (with --exec: as the
                              implementation answered it)
      --write-vectors DIR     regenerate the vector files into DIR, DIR/http/server-feedback.json and
                              DIR/scenarios/<machine>.json too (make vectors), and exit
      --help                  this text
    """

struct Options {
    var exec: String?
    var random = 0
    var seed: UInt64?
    var randomSteps = 100
    var trace: Int?
    var noVectors = false
    var strategies: Set<String>?
    var cases: Set<String>?
    var level = ConformanceLevel.exact
    var tolerance: Int64?
    var protocolVersion: Int64 = 2
    var vectors: String?
    var saveRegression: String?
    var timeout = 5.0
    var mutationScore = false
    var json = false
    var writeVectors: String?
    var matrix: String?
    var markdown: String?
    var html: String?
    var draw: String?
    var exhaustive: Int?
    var path: Int?
    var window = ExternalSubject.defaultWindow
}

/// With --json, even a failure before any case prints a JSON document.
let jsonRequested = CommandLine.arguments.contains("--json")

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(
        Data(
            "ratelimit-conformance: \(message)\n\(message.hasPrefix("usage") ? "" : "run with --help for usage\n")".utf8
        ))
    if jsonRequested {
        print(JSONValue.object([("passed", .bool(false)), ("error", .string(message))]).prettyText, terminator: "")
    }
    ChildProcess.endHarness(status: 2)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var iterator = arguments.makeIterator()
    func value(_ flag: String) -> String {
        guard let value = iterator.next() else { fail("\(flag) needs a value") }
        return value
    }
    func count(_ flag: String, _ range: ClosedRange<Int>) -> Int {
        guard let number = Int(value(flag)), range.contains(number) else {
            fail("\(flag) needs an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
    func list(_ flag: String) -> [String] { value(flag).split(separator: ",").map(String.init) }
    while let argument = iterator.next() {
        switch argument {
        case "--exec": options.exec = value(argument)
        case "--random": options.random = count(argument, 0...maximumRandomTraces)
        case "--seed":
            guard let seed = UInt64(value(argument)) else { fail("--seed needs an unsigned 64-bit integer") }
            options.seed = seed
        case "--random-steps": options.randomSteps = count(argument, 1...maximumRandomSteps)
        case "--trace": options.trace = count(argument, 0...maximumRandomTraces - 1)
        case "--no-vectors": options.noVectors = true
        case "--strategy":
            let names = list(argument)
            for name in names where !AnyRateLimitStrategy.identifiers.contains(name) {
                fail("unknown strategy \(name); known: \(AnyRateLimitStrategy.identifiers.joined(separator: ", "))")
            }
            options.strategies = (options.strategies ?? []).union(names)
        case "--case": options.cases = (options.cases ?? []).union(list(argument))
        case "--level":
            guard let level = ConformanceLevel(rawValue: value(argument)), level == .exact || level == .safety else {
                fail("--level is exact or safety")
            }
            options.level = level
        case "--tolerance":
            guard let nanoseconds = Int64(value(argument)),
                (0...ImplementationProfile.maximumTolerance).contains(nanoseconds)
            else {
                fail(
                    "--tolerance needs an integer of nanoseconds from 0 to \(ImplementationProfile.maximumTolerance) (one second)"
                )
            }
            options.tolerance = nanoseconds
        case "--protocol":
            guard let version = Int64(value(argument)), version == 1 || version == 2 else {
                fail("--protocol is 1 or 2")
            }
            options.protocolVersion = version
        case "--vectors": options.vectors = value(argument)
        case "--save-regression": options.saveRegression = value(argument)
        case "--timeout":
            guard let seconds = Double(value(argument)), seconds > 0, seconds <= 3_600 else {
                fail("--timeout needs seconds, more than 0 and at most 3600")
            }
            options.timeout = seconds
        case "--mutation-score": options.mutationScore = true
        case "--json": options.json = true
        case "--write-vectors": options.writeVectors = value(argument)
        case "--matrix": options.matrix = value(argument)
        case "--markdown": options.markdown = value(argument)
        case "--html": options.html = value(argument)
        case "--draw": options.draw = value(argument)
        case "--exhaustive":
            let depth = value(argument)
            guard depth == "default" || Int(depth).map({ (1...maximumExhaustiveDepth).contains($0) }) == true else {
                fail("--exhaustive needs a depth from 1 to \(maximumExhaustiveDepth), or default")
            }
            options.exhaustive = Int(depth) ?? ExhaustiveOptions.defaultDepth
        case "--path": options.path = count(argument, 0...Int(Int32.max))
        case "--window": options.window = Int64(count(argument, 1...1_024))
        case "--help", "-h":
            print(usage)
            ChildProcess.endHarness(status: 0)
        default: fail("unknown argument \(argument)")
        }
    }
    if options.mutationScore && options.exec == nil { fail("--mutation-score needs --exec") }
    if options.matrix != nil, options.exec != nil || options.mutationScore || options.draw != nil {
        fail("--matrix runs the implementations its file lists: it takes no --exec, --mutation-score or --draw")
    }
    if options.markdown != nil, options.matrix == nil { fail("--markdown writes a matrix: give --matrix FILE") }
    if let draw = options.draw {
        if options.cases != nil || options.trace != nil || options.noVectors {
            fail("--draw draws one vector case: it takes no --case, --trace or --no-vectors")
        }
        options.cases = [draw]
    }
    if let trace = options.trace {
        if options.cases != nil { fail("--trace runs one random trace and no vector case: it takes no --case") }
        options.noVectors = true
        options.random = max(options.random, trace + 1)
    }
    if options.path != nil, options.exhaustive == nil {
        fail("--path replays a path of --exhaustive: give --exhaustive DEPTH")
    }
    if options.exhaustive != nil,
        options.random > 0 || options.cases != nil || options.noVectors || options.draw != nil || options.matrix != nil
            || options.vectors != nil || options.saveRegression != nil || options.html != nil
    {
        fail(
            "--exhaustive runs no vectors or random traces: it takes no --random, --trace, --case, --no-vectors, --vectors, --draw, --matrix, --html or --save-regression"
        )
    }
    if options.noVectors, options.cases != nil { fail("--no-vectors and --case do not go together") }
    if options.noVectors, options.random == 0 { fail("--no-vectors runs random traces only: give --random N") }
    return options
}

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
        fail(
            "--case \(pattern) matches no vector case\(options.strategies == nil ? "" : " of the selected strategies")")
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

/// The implementation `command` started, or why it did not start properly.
func started(_ command: String) -> Result<ExternalSubject, ConformanceFormatError> {
    Result { () throws(SubjectFailure) in
        try ExternalSubject(
            command: command, timeout: options.timeout, protocolVersion: options.protocolVersion,
            window: options.window)
    }.mapError { ConformanceFormatError("the implementation did not start properly: \($0)") }
}

/// Runs the suite against `command` (or the reference): the report, the protocol version
/// spoken and the reports of the cases judged exactly (the HTTP cases in `http`, the scenarios in
/// `scenarios`: how it answered them, or why it was not asked), or why the implementation could
/// not be run.
func suiteResult(
    command: String?, http: [FeedbackCase] = [], scenarios: [(machine: ScenarioMachine, cases: [ScenarioCase])] = []
) -> Result<(ConformanceReport, Int64?, [CaseRunReport]), ConformanceFormatError> {
    let result: Result<ConformanceReport, ConformanceFormatError>
    var version: Int64?
    var extras: [CaseRunReport] = []
    if let command {
        var subject: ExternalSubject
        switch started(command) {
        case .success(let running): subject = running
        case .failure(let error): return .failure(error)
        }
        defer { subject.close() }
        version = subject.version
        result = Result { () throws(ConformanceFormatError) in
            try ConformanceSuite.run(
                &subject, vectors: vectors, options: suiteOptions, clock: elapsed, progress: progress)
        }
        if !http.isEmpty {
            if subject.extensions.contains("server-feedback") {
                progress("http: server feedback")
                extras.append(
                    FeedbackRunReport.run(http) { feedbackCase in
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
            extras.append(.run(machine, cases, driver: &driver))
        }
    } else {
        var subject = ReferenceSubject()
        result = Result { () throws(ConformanceFormatError) in
            try ConformanceSuite.run(
                &subject, vectors: vectors, options: suiteOptions, clock: elapsed, progress: progress)
        }
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
    }
    endProgress()
    return result.map { ($0, version, extras) }
}

/// ``suiteResult(command:http:scenarios:)``, or the end of the run when the implementation could
/// not be run.
func runSuite(
    command: String?, http: [FeedbackCase] = [], scenarios: [(machine: ScenarioMachine, cases: [ScenarioCase])] = []
) -> (ConformanceReport, Int64?, [CaseRunReport]) {
    switch suiteResult(command: command, http: http, scenarios: scenarios) {
    case .success(let run): return run
    case .failure(let error): fail(error.message)
    }
}

/// Runs the exhaustive pass to `depth` against `command` (or the reference), or says why the
/// implementation could not be run.
func exhaustiveResult(
    command: String?, depth: Int, level: ConformanceLevel = options.level, stopAtFirstFailure: Bool = false
) -> Result<ExhaustiveReport, ConformanceFormatError> {
    var exhaustiveOptions = ExhaustiveOptions(
        depth: depth, strategies: options.strategies, level: level, toleranceNanoseconds: options.tolerance,
        onlyPath: options.path)
    exhaustiveOptions.stopAtFirstFailure = stopAtFirstFailure
    defer { endProgress() }
    guard let command else {
        var subject = ReferenceSubject()
        return .success(
            ConformanceSuite.exhaustive(&subject, options: exhaustiveOptions, clock: elapsed, progress: progress))
    }
    var subject: ExternalSubject
    switch started(command) {
    case .success(let running): subject = running
    case .failure(let error): return .failure(error)
    }
    defer { subject.close() }
    return .success(
        ConformanceSuite.exhaustive(&subject, options: exhaustiveOptions, clock: elapsed, progress: progress))
}

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
    do { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) } catch { fail("cannot write \(path): \(error)") }
}

/// `"COMMAND"` for the shell, single-quoted when double quotes would not keep it as it is.
func quoted(_ command: String) -> String {
    if !command.contains(where: { "\"$`\\".contains($0) }) { return "\"\(command)\"" }
    return "'" + command.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// The command that runs exactly the shrunk trace (or exhaustive path) again, with everything
/// that decides its verdict.
func replay(_ shrunk: ShrunkFailure) -> String {
    var parts = ["ratelimit-conformance"]
    if let exec = options.exec { parts += ["--exec", quoted(exec)] }
    if let depth = shrunk.exhaustiveDepth {
        parts += ["--exhaustive", String(depth), "--strategy", shrunk.strategy, "--path", String(shrunk.traceIndex)]
    } else {
        parts += [
            "--strategy", shrunk.strategy, "--seed", String(shrunk.seed), "--random-steps",
            String(shrunk.randomSteps), "--trace", String(shrunk.traceIndex),
        ]
    }
    if options.level != .exact { parts += ["--level", options.level.rawValue] }
    if let tolerance = options.tolerance { parts += ["--tolerance", String(tolerance)] }
    if options.protocolVersion != ExternalSubject.protocolVersion {
        parts += ["--protocol", String(options.protocolVersion)]
    }
    if options.timeout != 5 { parts += ["--timeout", String(options.timeout)] }
    if options.window != ExternalSubject.defaultWindow { parts += ["--window", String(options.window)] }
    return parts.joined(separator: " ")
}

/// Whether a run passes: something ran (a strategy, HTTP cases or scenarios), every strategy that
/// ran reached the level asked, and every HTTP case and scenario asked was answered as the Spec says.
func runPasses(_ report: ConformanceReport, _ extras: [CaseRunReport]) -> Bool {
    let strategiesRan = report.strategies.contains { $0.level != .skipped || $0.validation != .skipped }
    let extrasRan = extras.contains { $0.notRun == nil && $0.cases > 0 }
    return (strategiesRan || extrasRan) && (!strategiesRan || report.passes(at: options.level))
        && extras.allSatisfy(\.passed)
}

func printReport(_ report: ConformanceReport, version: Int64?, extras: [CaseRunReport]) {
    print("ratelimit-conformance: \(report.implementation)" + (version.map { " (protocol \($0))" } ?? ""))
    let ignored =
        ignoredFiles.isEmpty
        ? ""
        : " (ignored \(ignoredFiles.count) JSON file\(ignoredFiles.count == 1 ? "" : "s") not declaring the vector format: \(ignoredFiles.joined(separator: ", ")))"
    let source =
        options.vectors.map { "vectors from \($0)\(ignored)" } ?? "built-in vectors (\(VectorGenerator.version))"
    let vectorsRun = options.noVectors ? "no vectors" : source
    let random =
        options.trace.map { "random trace \($0) of seed \(seed), \(options.randomSteps) steps" }
        ?? "\(options.random) random traces per strategy"
        + (options.random > 0 ? " of \(options.randomSteps) steps (seed \(seed))" : "")
    print("\(vectorsRun); \(random); level \(options.level.rawValue)")
    print("")
    for line in report.table { print(line) }
    let sections: [(String?, [String])] = [
        (nil, report.skippedLines), ("Findings by cause, the most severe first:", report.findingLines),
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
    print("")
    let ran = report.strategies.filter { $0.level != .skipped }.count
    let tolerance =
        report.strategies.contains { $0.toleranceNanoseconds > 0 && $0.level != .skipped }
        ? " (within the tolerance shown by ±)" : ""
    let differing = extras.filter { !$0.passed }.map {
        "\($0.failures.count) of \($0.cases) \($0.label) cases differ from \($0.specFile)"
    }
    let feedbackFailure = differing.isEmpty ? nil : differing.joined(separator: "; ")
    if ran > 0, !report.passes(at: options.level) {
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

if let file = options.matrix {
    // Every implementation the file lists, one after the other, through the same suite.
    let text: String
    do { text = try String(contentsOfFile: file, encoding: .utf8) } catch { fail("cannot read \(file): \(error)") }
    let entries: [ConformanceMatrix.Entry]
    do { entries = try ConformanceMatrix.entries(from: text) } catch { fail(error.message) }
    var rows: [ConformanceMatrix.Row] = []
    for entry in entries {
        progress("matrix: \(entry.name)")
        switch suiteResult(command: entry.command) {
        case .success(let (report, _, _)): rows.append(.init(entry: entry, report: report, failure: nil))
        case .failure(let error): rows.append(.init(entry: entry, report: nil, failure: error.message))
        }
    }
    let matrix = ConformanceMatrix(rows: rows, runDescription: runDescription())
    if options.json {
        print(matrix.json.prettyText, terminator: "")
    } else {
        for line in matrix.text { print(line) }
    }
    if let path = options.markdown { write(matrix.markdown, to: path) }
    if let path = options.html { write(matrix.html, to: path) }
    // The matrix is complete when every implementation ran; the levels are its content.
    ChildProcess.endHarness(status: rows.allSatisfy { $0.failure == nil } ? 0 : 1)
}

if let id = options.draw {
    let (report, _, _) = runSuite(command: options.exec)
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
    let report: ExhaustiveReport
    switch exhaustiveResult(command: options.exec, depth: depth) {
    case .success(let run): report = run
    case .failure(let error): fail(error.message)
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
        for line in report.table { print(line) }
        for line in report.lines { print(line) }
        for strategy in report.strategies {
            guard let shrunk = strategy.shrunk else { continue }
            print("replay: \(replay(shrunk))")
            print("as a regression vector:")
            print(shrunk.vectorFile.json.prettyText, terminator: "")
        }
        print("")
        let ran = report.strategies.filter { $0.skippedBecause == nil }.count
        print(
            passed
                ? "PASS: \(ran) of \(report.strategies.count) strategies conform on every path at level \(options.level.rawValue)"
                : "FAIL: not every strategy that ran conforms on every path at level \(options.level.rawValue)")
    }
    ChildProcess.endHarness(status: passed ? 0 : 1)
}

if options.mutationScore, let command = options.exec {
    // The unmutated implementation must pass, and every injected bug must fail the level it
    // declares (`NAME LEVEL` per line; a bare NAME must fail the --level asked for).
    let (clean, _, cleanScenarios) =
        options.exhaustive == nil ? runSuite(command: command, scenarios: selectedScenarios) : (nil, nil, [])
    let listing = Process()
    listing.executableURL = URL(fileURLWithPath: "/bin/sh")
    listing.arguments = ["-c", "\(command) --list-bugs"]
    let pipe = Pipe()
    listing.standardOutput = pipe
    do { try listing.run() } catch { fail("cannot run \(command) --list-bugs: \(error)") }
    let listed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    listing.waitUntilExit()
    var bugs: [(name: String, level: ConformanceLevel)] = []
    for line in listed.split(whereSeparator: \.isNewline) {
        let words = line.split(separator: " ").map(String.init)
        guard let name = words.first else { continue }
        guard words.count <= 2, let level = words.count == 2 ? ConformanceLevel(rawValue: words[1]) : options.level,
            level == .exact || level == .safety
        else {
            fail("\(command) --list-bugs: \"\(line)\" is not NAME or NAME exact|safety")
        }
        bugs.append((name, level))
    }
    guard listing.terminationStatus == 0, !bugs.isEmpty else { fail("\(command) --list-bugs listed no bugs") }
    var rows: [[String]] = []
    var caught = 0
    var results: [JSONValue] = []
    if let depth = options.exhaustive {
        // The exhaustive pass at each depth in turn: the smallest that catches each bug.
        let cleanRun: ExhaustiveReport
        switch exhaustiveResult(command: command, depth: depth) {
        case .success(let run): cleanRun = run
        case .failure(let error): fail(error.message)
        }
        for bug in bugs {
            var found: (depth: Int, finding: String)?
            for attempt in 1...depth where found == nil {
                progress("mutation score: \(bug.name), depth \(attempt)")
                let report: ExhaustiveReport
                switch exhaustiveResult(
                    command: "\(command) --bug \(bug.name)", depth: attempt, level: bug.level, stopAtFirstFailure: true)
                {
                case .success(let run): report = run
                case .failure(let error): fail(error.message)
                }
                guard let failing = report.strategies.first(where: { $0.failure != nil }) else { continue }
                let primary = failing.shrunk?.outcome.primary ?? failing.failure?.primary
                found = (attempt, "\(failing.strategy) \(primary.map { "\($0.cause.clause) \($0.kind.name)" } ?? "")")
            }
            if found == nil, !selectedScenarios.isEmpty {
                // A bug of a machine beyond the strategies (composite, wait queue) shows in their
                // scenarios, which are judged exactly at every depth: depth 0 stands for them.
                let (_, _, scenarios) = runSuite(
                    command: "\(command) --bug \(bug.name)", scenarios: selectedScenarios)
                if let differing = scenarios.first(where: { !$0.passed }), let first = differing.failures.first {
                    found = (0, "\(first.id) differs")
                }
            }
            if found != nil { caught += 1 }
            rows.append([
                bug.name, bug.level.rawValue,
                found.map { $0.depth == 0 ? "caught by the scenarios" : "caught at depth \($0.depth)" } ?? "MISSED",
                found?.finding ?? "-",
            ])
            var fields: [(String, JSONValue)] = [
                ("bug", .string(bug.name)), ("level", .string(bug.level.rawValue)), ("caught", .bool(found != nil)),
            ]
            if let found {
                // Depth 0: caught by the scenarios, which the exhaustive pass does not walk.
                fields += [
                    found.depth == 0 ? ("caughtBy", .string("scenarios")) : ("depth", .integer(Int64(found.depth))),
                    ("finding", .string(found.finding)),
                ]
            }
            results.append(.object(fields))
        }
        endProgress()
        let cleanPasses = cleanRun.passes(at: options.level)
        if options.json {
            print(
                JSONValue.object([
                    ("implementation", .string(cleanRun.implementation)), ("exhaustiveDepth", .integer(Int64(depth))),
                    ("cleanPasses", .bool(cleanPasses)), ("caught", .integer(Int64(caught))),
                    ("bugs", .integer(Int64(bugs.count))), ("results", .array(results)),
                ]).prettyText, terminator: "")
        } else {
            print(
                "ratelimit-conformance: exhaustive mutation score for \(cleanRun.implementation), depths 1 to \(depth)")
            print(
                "the implementation without bugs: \(cleanPasses ? "passes" : "FAILS") the exhaustive pass to depth \(depth) at level \(options.level.rawValue)"
            )
            print("")
            for line in TextTable.render(header: ["bug", "must fail", "result", "first finding"], rows: rows) {
                print(line)
            }
            print("")
            print(
                "mutation score: \(caught)/\(bugs.count) injected bugs caught by the exhaustive pass to depth \(depth)")
        }
        ChildProcess.endHarness(status: cleanPasses && caught == bugs.count ? 0 : 1)
    }
    guard let clean else { fail("the suite did not run") }
    for bug in bugs {
        // A scenario answered otherwise than its vectors catches a bug at every level (they are
        // judged exactly).
        let (report, _, scenarios) = runSuite(
            command: "\(command) --bug \(bug.name)", scenarios: selectedScenarios)
        let differing = scenarios.filter { !$0.passed }
        let failing =
            report.strategies.filter { $0.level < bug.level && $0.level != .skipped }.map(\.strategy)
            + differing.map(\.label)
        let isCaught = !report.passes(at: bug.level) || !differing.isEmpty
        if isCaught { caught += 1 }
        let first =
            report.strategies.lazy.compactMap { strategy in
                strategy.groups.first.map { "\(strategy.strategy) \($0.cause.clause) \($0.kind.name)" }
            }.first ?? differing.first.flatMap { $0.failures.first.map { "\($0.id) differs" } } ?? "-"
        rows.append([
            bug.name, bug.level.rawValue, isCaught ? "caught" : "MISSED", failing.joined(separator: ","), first,
        ])
        results.append(
            .object([
                ("bug", .string(bug.name)), ("level", .string(bug.level.rawValue)), ("caught", .bool(isCaught)),
                ("failingStrategies", .array(failing.map(JSONValue.string))), ("worstFinding", .string(first)),
            ]))
    }
    let cleanPasses = clean.passes(at: options.level) && cleanScenarios.allSatisfy(\.passed)
    if options.json {
        print(
            JSONValue.object([
                ("implementation", .string(clean.implementation)), ("cleanPasses", .bool(cleanPasses)),
                ("caught", .integer(Int64(caught))), ("bugs", .integer(Int64(bugs.count))),
                ("results", .array(results)),
            ]).prettyText, terminator: "")
    } else {
        print("ratelimit-conformance: mutation score for \(clean.implementation)")
        print("the implementation without bugs: \(cleanPasses ? "passes" : "FAILS") at level \(options.level.rawValue)")
        print("")
        for line in TextTable.render(
            header: ["bug", "must fail", "result", "strategies failing", "most severe finding"], rows: rows)
        { print(line) }
        print("")
        print("mutation score: \(caught)/\(bugs.count) injected bugs caught, each at the level it declares")
    }
    ChildProcess.endHarness(status: cleanPasses && caught == bugs.count ? 0 : 1)
}

let (report, version, extras) = runSuite(
    command: options.exec, http: selectedFeedbackCases, scenarios: selectedScenarios)
/// Whether the run passes: every strategy at the level asked, every HTTP case and scenario asked as
/// the Spec says.
let passed = runPasses(report, extras)
if let path = options.html {
    let entry = ConformanceMatrix.Entry(
        name: report.implementation, version: version.map { "protocol \($0)" } ?? "", command: options.exec ?? "")
    write(
        ConformanceMatrix(rows: [.init(entry: entry, report: report, failure: nil)], runDescription: runDescription())
            .html,
        to: path)
}
if options.json {
    var json = report.json
    if case .object(var members) = json {
        members.insert(("level", .string(options.level.rawValue)), at: 1)
        members.insert(("passed", .bool(passed)), at: 2)
        members += extras.map { ($0.label, $0.json) }
        if let version { members.insert(("protocol", .integer(version)), at: 1) }
        if options.vectors != nil { members.append(("ignoredFiles", .array(ignoredFiles.map(JSONValue.string)))) }
        members.append(("seed", .string(String(seed))))
        members.append(("randomSteps", .integer(Int64(options.randomSteps))))
        json = .object(members)
    }
    print(json.prettyText, terminator: "")
} else {
    printReport(report, version: version, extras: extras)
}
withExtendedLifetime(signalSources) {}
ChildProcess.endHarness(status: passed ? 0 : 1)
