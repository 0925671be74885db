import Foundation
import RateLimitConformance
import RateLimitCore

// ratelimit-conformance: the conformance suite as a command. With no arguments it checks the
// reference model against the vectors; with --exec it checks another implementation speaking the
// JSON-lines protocol of Spec/protocol.md. Exit status 0 only when everything requested passes.

let usage = """
    usage: ratelimit-conformance [options]

      (no options)            run every vector against the Swift reference model
      --exec "COMMAND"        run against an implementation started as `/bin/sh -c COMMAND`,
                              speaking the JSON-lines protocol of Spec/protocol.md
      --random N              also run N random traces per strategy, compared step by step
      --seed S                seed of the random traces (default: a fresh one, printed)
      --random-steps N        steps per random trace (default 100)
      --strategy ID[,ID...]   only these strategies (repeatable)
      --case ID[,ID...]       only these cases: an id, or a prefix such as token-bucket/refill (repeatable)
      --level exact|safety    the level required for exit status 0 (default exact)
      --vectors DIR           run the vector files under DIR instead of the built-in ones
      --save-regression DIR   write a shrunk random failure there as a vector file
      --timeout SECONDS       per answer from the implementation (default 5)
      --mutation-score        with --exec: ask COMMAND --list-bugs for injected bugs, run the suite
                              against COMMAND --bug NAME for each, and report how many it catches
      --json                  print the report as JSON
      --write-vectors DIR     regenerate the vector files into DIR (make vectors) and exit
      --help                  this text
    """

struct Options {
    var exec: String?
    var random = 0
    var seed: UInt64?
    var randomSteps = 100
    var strategies: Set<String>?
    var cases: Set<String>?
    var level = ConformanceLevel.exact
    var vectors: String?
    var saveRegression: String?
    var timeout = 5.0
    var mutationScore = false
    var json = false
    var writeVectors: String?
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ratelimit-conformance: \(message)\n\(message.hasPrefix("usage") ? "" : "run with --help for usage\n")".utf8))
    exit(2)
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var iterator = arguments.makeIterator()
    func value(_ flag: String) -> String {
        guard let value = iterator.next() else { fail("\(flag) needs a value") }
        return value
    }
    func count(_ flag: String) -> Int {
        guard let number = Int(value(flag)), number >= 0 else { fail("\(flag) needs a non-negative integer") }
        return number
    }
    func list(_ flag: String) -> [String] { value(flag).split(separator: ",").map(String.init) }
    while let argument = iterator.next() {
        switch argument {
        case "--exec": options.exec = value(argument)
        case "--random": options.random = count(argument)
        case "--seed":
            guard let seed = UInt64(value(argument)) else { fail("--seed needs an unsigned 64-bit integer") }
            options.seed = seed
        case "--random-steps": options.randomSteps = max(1, count(argument))
        case "--strategy":
            let names = list(argument)
            for name in names where !StrategyConfiguration.identifiers.contains(name) {
                fail("unknown strategy \(name); known: \(StrategyConfiguration.identifiers.joined(separator: ", "))")
            }
            options.strategies = (options.strategies ?? []).union(names)
        case "--case": options.cases = (options.cases ?? []).union(list(argument))
        case "--level":
            guard let level = ConformanceLevel(rawValue: value(argument)), level == .exact || level == .safety else {
                fail("--level is exact or safety")
            }
            options.level = level
        case "--vectors": options.vectors = value(argument)
        case "--save-regression": options.saveRegression = value(argument)
        case "--timeout":
            guard let seconds = Double(value(argument)), seconds > 0 else { fail("--timeout needs a positive number of seconds") }
            options.timeout = seconds
        case "--mutation-score": options.mutationScore = true
        case "--json": options.json = true
        case "--write-vectors": options.writeVectors = value(argument)
        case "--help", "-h":
            print(usage)
            exit(0)
        default: fail("unknown argument \(argument)")
        }
    }
    if options.mutationScore && options.exec == nil { fail("--mutation-score needs --exec") }
    return options
}

let options = parse(Array(CommandLine.arguments.dropFirst()))

if let directory = options.writeVectors {
    do {
        for path in try VectorFiles.write(try VectorGenerator.files(), to: directory) { print("wrote \(path)") }
        exit(0)
    } catch {
        fail("cannot write vectors: \(error)")
    }
}

let loaded = Result { () throws(ConformanceFormatError) -> [VectorFile] in
    if let directory = options.vectors { return try VectorFiles.load(directory: directory) }
    return try VectorGenerator.files()
}
let vectors: [VectorFile]
switch loaded {
case .success(let files): vectors = files
case .failure(let error): fail(error.message)
}

let seed = options.seed ?? UInt64.random(in: 1...UInt64.max)
let suiteOptions = ConformanceOptions(
    strategies: options.strategies, cases: options.cases, randomTraces: options.random, randomSteps: options.randomSteps, seed: seed)
let showProgress = !options.json && isatty(STDERR_FILENO) == 1
let started = ContinuousClock.now
func elapsed() -> Double {
    let duration = ContinuousClock.now - started
    return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
func progress(_ caseID: String) {
    guard showProgress else { return }
    FileHandle.standardError.write(Data("\r\u{1B}[K\(caseID)".utf8))
}
func endProgress() {
    if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
}

/// Runs the suite against `command` (or the reference) and returns the report.
func runSuite(command: String?) -> ConformanceReport {
    let result: Result<ConformanceReport, ConformanceFormatError>
    if let command {
        var subject: ExternalSubject
        do {
            subject = try ExternalSubject(command: command, timeout: options.timeout)
        } catch {
            fail("the implementation did not start properly: \(error)")
        }
        defer { subject.close() }
        result = Result { () throws(ConformanceFormatError) in
            try ConformanceSuite.run(&subject, vectors: vectors, options: suiteOptions, clock: elapsed, progress: progress)
        }
    } else {
        var subject = ReferenceSubject()
        result = Result { () throws(ConformanceFormatError) in
            try ConformanceSuite.run(&subject, vectors: vectors, options: suiteOptions, clock: elapsed, progress: progress)
        }
    }
    switch result {
    case .success(let report): return report
    case .failure(let error): fail(error.message)
    }
}

func printReport(_ report: ConformanceReport) {
    print("ratelimit-conformance: \(report.implementation)")
    let source = options.vectors.map { "vectors from \($0)" } ?? "built-in vectors (\(VectorGenerator.version))"
    print("\(source); \(options.random) random traces per strategy" + (options.random > 0 ? " (seed \(seed))" : ""))
    print("")
    for line in report.table { print(line) }
    let details = report.details
    if !details.isEmpty {
        print("")
        for line in details { print(line) }
    }
    for strategy in report.strategies {
        guard let shrunk = strategy.shrunk else { continue }
        print("")
        print("\(strategy.strategy): random trace \(shrunk.traceIndex) (seed \(shrunk.seed)) fails; shrunk from \(shrunk.originalSteps) to \(shrunk.trace.steps.count) steps:")
        print(shrunk.table)
        print("replay: ratelimit-conformance\(options.exec.map { " --exec \"\($0)\"" } ?? "") --strategy \(strategy.strategy) --random \(shrunk.traceIndex + 1) --seed \(shrunk.seed)")
        print("as a regression vector:")
        print(shrunk.vectorFile.json.prettyText, terminator: "")
        if let directory = options.saveRegression {
            do {
                let file = shrunk.vectorFile
                let path = (directory as NSString).appendingPathComponent("\(strategy.strategy)-seed-\(shrunk.seed)-trace-\(shrunk.traceIndex).json")
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try Data(file.json.prettyText.utf8).write(to: URL(fileURLWithPath: path))
                print("saved \(path)")
            } catch {
                print("could not save the regression vector: \(error)")
            }
        }
    }
    print("")
    let ran = report.strategies.filter { $0.level != .skipped }.count
    if report.passes(at: options.level) {
        print("PASS: \(ran) of \(report.strategies.count) strategies conform at level \(options.level.rawValue) or better")
    } else {
        print("FAIL: not every strategy that ran conforms at level \(options.level.rawValue)" + (ran == 0 ? " (nothing ran)" : ""))
    }
}

if options.mutationScore, let command = options.exec {
    // The unmutated implementation must pass, and every injected bug must make the suite fail.
    let clean = runSuite(command: command)
    endProgress()
    let listing = Process()
    listing.executableURL = URL(fileURLWithPath: "/bin/sh")
    listing.arguments = ["-c", "\(command) --list-bugs"]
    let pipe = Pipe()
    listing.standardOutput = pipe
    do { try listing.run() } catch { fail("cannot run \(command) --list-bugs: \(error)") }
    let listed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    listing.waitUntilExit()
    let bugs = listed.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    guard listing.terminationStatus == 0, !bugs.isEmpty else { fail("\(command) --list-bugs listed no bugs") }
    var rows: [[String]] = []
    var caught = 0
    var results: [JSONValue] = []
    for bug in bugs {
        let report = runSuite(command: "\(command) --bug \(bug)")
        endProgress()
        let failing = report.strategies.filter { $0.level < options.level && $0.level != .skipped }.map(\.strategy)
        let isCaught = !report.passes(at: options.level)
        if isCaught { caught += 1 }
        let firstCase = report.strategies.flatMap(\.outcomes).first { $0.level == .failed || $0.level == .safety }?.id ?? "-"
        rows.append([bug, isCaught ? "caught" : "MISSED", failing.joined(separator: ","), firstCase])
        results.append(.object([("bug", .string(bug)), ("caught", .bool(isCaught)), ("failingStrategies", .array(failing.map(JSONValue.string))),
                                ("firstFailingCase", .string(firstCase))]))
    }
    let cleanPasses = clean.passes(at: options.level)
    if options.json {
        print(JSONValue.object([
            ("implementation", .string(clean.implementation)), ("cleanPasses", .bool(cleanPasses)),
            ("caught", .integer(Int64(caught))), ("bugs", .integer(Int64(bugs.count))), ("results", .array(results)),
        ]).prettyText, terminator: "")
    } else {
        print("ratelimit-conformance: mutation score for \(clean.implementation)")
        print("the implementation without bugs: \(cleanPasses ? "passes" : "FAILS") at level \(options.level.rawValue)")
        print("")
        for line in TextTable.render(header: ["bug", "result", "strategies failing", "first failing case"], rows: rows) { print(line) }
        print("")
        print("mutation score: \(caught)/\(bugs.count) injected bugs caught")
    }
    exit(cleanPasses && caught == bugs.count ? 0 : 1)
}

let report = runSuite(command: options.exec)
endProgress()
if options.json {
    var json = report.json
    if case .object(var members) = json {
        members.insert(("level", .string(options.level.rawValue)), at: 1)
        members.insert(("passed", .bool(report.passes(at: options.level))), at: 2)
        members.append(("seed", .string(String(seed))))
        json = .object(members)
    }
    print(json.prettyText, terminator: "")
} else {
    printReport(report)
}
exit(report.passes(at: options.level) ? 0 : 1)
