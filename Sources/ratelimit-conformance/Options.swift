import Foundation
import RateLimitConformance
import RateLimitCore

// The command line: the usage text, the options and their checks.

let maximumRandomTraces = 100_000
let maximumRandomSteps = 10_000
let maximumExhaustiveDepth = 20

let usage = """
    usage: ratelimit-conformance [options]

      (no options)            run every vector against the Swift reference model: the strategies'
                              vectors, the HTTP vectors (Spec/vectors/http) and the scenarios of
                              composite limits, the wait queue, the registry and the adaptive
                              rate and concurrency (Spec/vectors/scenarios)
      --exec "COMMAND"        run against an implementation started as `/bin/sh -c COMMAND`,
                              speaking the JSON-lines protocol of Spec/protocol.md (the HTTP
                              vectors and each machine's scenarios too when its hello declares the
                              server-feedback, composite, wait-queue, registry, adaptive-rate or
                              adaptive-concurrency extension); then explore
                              within the budget: the exhaustive pass to depth \(ConformanceRun.explorationDepth), generated
                              scenarios of the extensions it declares, then random traces
                              (Spec/Conformance.md, "What a run explores")
      --budget SECONDS        the time the run with --exec aims at (default \(Int(ConformanceRun.defaultBudget)); the
                              vectors always run whole); with --exhaustive, the time its strategies
                              share (default: every path of each)
      --quick                 with --exec: the vectors only, no exploration
      --scenario MACHINE/K    with --exec and --seed: replay generated scenario K of an extension
                              (composite, wait-queue, registry, adaptive-rate,
                              adaptive-concurrency) and shrink it if it fails;
                              wait-queue/walk-K replays path K of the wait-queue walk
      --random N              run N random traces per strategy (at most \(maximumRandomTraces)) after
                              the vectors instead of exploring within the budget
      --seed S                seed of the random traces (default: a fresh one, printed)
      --random-steps N        the most steps of a random trace (default \(ConformanceOptions.defaultRandomSteps), at most
                              \(maximumRandomSteps)); most have far fewer
      --trace K               run only random trace K of the seed (no vectors): how a failure replays
      --no-vectors            run no vector case (only random traces)
      --strategy ID[,ID...]   only these strategies (repeatable; no HTTP vectors, no scenarios)
      --case ID[,ID...]       only these vector cases: an id, or a prefix such as token-bucket/refill,
                              server-feedback or wait-queue (repeatable)
      --level exact|safety    the level required for exit status 0 (default exact)
      --tolerance NS          judge with this tolerance in nanoseconds instead of the one each
                              profile declares (Spec/Conformance.md, CONF-6); 0 for strict
      --protocol 1|2          the protocol version offered in the hello (default 2)
      --vectors DIR           run the vector files under DIR (subfolders too) instead of the
                              built-in ones: every *.json declaring "format":
                              "ratelimit-conformance-vectors", "ratelimit-http-vectors" or
                              "ratelimit-scenario-vectors" (others are listed as ignored)
      --save-regression DIR   write a shrunk random failure there as a vector file
      --timeout SECONDS       per answer from the implementation (default 5; the hello, which
                              includes starting it, gets at least \(Int(ExternalSubject.startupTimeout)))
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
                              COMMAND --bug NAME for each (the run that explores, --budget
                              seconds per bug; --quick for the vectors alone; --random N for
                              the vectors and N traces), and report how many it catches and
                              how many each pass (vectors, exhaustive, extensions, random)
                              catches alone;
                              with --exhaustive DEPTH, the exhaustive pass at each depth from 1
                              to DEPTH, reporting the smallest that catches each bug
      --write-expect FILE     write the run's findings to FILE as expectations (each by where,
                              cause and kind; Spec/Conformance.md, CONF-12), to review and commit
      --expect FILE           a regression gate: exit 0 when every finding is one FILE expects at
                              no worse kind, 1 on a new or worse one (named); expectations the
                              run no longer observed are listed, to remove
      --junit FILE            also write the run as JUnit XML: one test case per vector case,
                              HTTP case, scenario and finding of exploration
      --json                  print the report as JSON
      --html FILE             also write the report as one self-contained HTML page, with a
                              picture of the smallest case of every finding group
      --matrix FILE           run every implementation FILE lists (JSON {"implementations":
                              [{"name","version","command"}]}, or `name | version | command`
                              lines) and print the matrix: implementation x strategy -> level
      --markdown FILE         with --matrix: also write the matrix as Markdown (reports/MATRIX.md)
      --jobs N                with --matrix: run up to N implementations at once (default 1; each
                              row is judged as when run alone, its answers are not timed)
      --history FILE          with --matrix: append the run's summary (date, suite, seed, each row's
                              version, cells and expectations) to FILE, a JSON line per run, and
                              end the Markdown with the history (reports/matrix-history.jsonl)
      --draw CASE             print an SVG picture of one vector case (with --exec: as the
                              implementation answered it)
      --write-vectors DIR     regenerate the vector files into DIR, DIR/http/server-feedback.json and
                              DIR/scenarios/<machine>.json too (make vectors), and exit
      --help                  this text

    exit status: 0 conforms (with --expect: nothing new or worse), 1 findings, 2 a usage error or
    an unreadable file, 3 the implementation could not be run (not found, no hello, a crash at
    start)
    """

struct Options {
    var exec: String?
    var random = 0
    var seed: UInt64?
    var randomSteps = ConformanceOptions.defaultRandomSteps
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
    var history: String?
    var jobs = 1
    var html: String?
    var draw: String?
    var exhaustive: Int?
    var path: Int?
    var window = ExternalSubject.defaultWindow
    var budget: Double?
    var quick = false
    /// --scenario MACHINE/INDEX: one generated scenario of an extension, replayed; `walk` for
    /// --scenario wait-queue/walk-INDEX, a path of the exhaustive wait-queue walk.
    var scenario: (machine: ScenarioMachine, index: Int, walk: Bool)?
    /// --write-expect, --expect, --junit: the regression gate's files (CONF-12).
    var writeExpect: String?
    var expect: String?
    var junit: String?
}

/// With --json, even a failure before any case prints a JSON document.
let jsonRequested = CommandLine.arguments.contains("--json")

/// Ends the run with `message`: exit status 3 when the implementation could not be run (the
/// message of `started`), 2 for a usage error or a file that cannot be read.
func fail(_ message: String) -> Never {
    let cannotRun = message.hasPrefix(ConformanceRun.notStartedPrefix)
    let hint = message.hasPrefix("usage") || cannotRun ? "" : "run with --help for usage\n"
    FileHandle.standardError.write(Data("ratelimit-conformance: \(message)\n\(hint)".utf8))
    if jsonRequested {
        print(JSONValue.object([("passed", .bool(false)), ("error", .string(message))]).prettyText, terminator: "")
    }
    ChildProcess.endHarness(status: cannotRun ? 3 : 2)
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
        case "--write-expect": options.writeExpect = value(argument)
        case "--expect": options.expect = value(argument)
        case "--junit": options.junit = value(argument)
        case "--write-vectors": options.writeVectors = value(argument)
        case "--matrix": options.matrix = value(argument)
        case "--markdown": options.markdown = value(argument)
        case "--history": options.history = value(argument)
        case "--jobs": options.jobs = count(argument, 1...64)
        case "--html": options.html = value(argument)
        case "--draw": options.draw = value(argument)
        case "--exhaustive":
            let depth = value(argument)
            guard depth == "default" || Int(depth).map({ (1...maximumExhaustiveDepth).contains($0) }) == true else {
                fail("--exhaustive needs a depth from 1 to \(maximumExhaustiveDepth), or default")
            }
            options.exhaustive = Int(depth) ?? ExhaustiveOptions.defaultDepth
        case "--path": options.path = count(argument, 0...Int(Int32.max))
        case "--budget":
            guard let seconds = Double(value(argument)), seconds >= 1, seconds <= 86_400 else {
                fail("--budget needs seconds, from 1 to 86400")
            }
            options.budget = seconds
        case "--quick": options.quick = true
        case "--scenario":
            let text = value(argument)
            let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
            let walk = parts.count == 2 && parts[0] == ScenarioMachine.waitQueue.rawValue && parts[1].hasPrefix("walk-")
            guard parts.count == 2, let machine = ScenarioMachine(rawValue: parts[0]),
                ScenarioGenerator.machines.contains(machine),
                let index = Int(walk ? String(parts[1].dropFirst("walk-".count)) : parts[1]), index >= 0
            else {
                fail(
                    "--scenario needs MACHINE/INDEX (or wait-queue/walk-INDEX, a path of the wait-queue walk), MACHINE one of \(ScenarioGenerator.machines.map(\.rawValue).joined(separator: ", "))"
                )
            }
            options.scenario = (machine, index, walk)
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
    if options.history != nil, options.matrix == nil { fail("--history keeps a matrix's history: give --matrix FILE") }
    if options.jobs != 1, options.matrix == nil { fail("--jobs runs a matrix's rows at once: give --matrix FILE") }
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
    if options.quick, options.exec == nil { fail("--quick runs the vectors of an implementation: give --exec") }
    if options.budget != nil || options.quick {
        // --budget also bounds an exhaustive pass of an implementation: its strategies share it.
        let explicit = [
            ("--random", options.random > 0), ("--trace", options.trace != nil),
            ("--exhaustive", options.exhaustive != nil && (options.quick || options.mutationScore)),
            ("--case", options.cases != nil), ("--no-vectors", options.noVectors),
            ("--matrix", options.matrix != nil), ("--draw", options.draw != nil),
        ].filter(\.1).map(\.0)
        if let flag = explicit.first {
            fail("\(options.quick ? "--quick" : "--budget") is for the run that explores: it takes no \(flag)")
        }
        if options.budget != nil, options.quick { fail("--quick explores nothing: it takes no --budget") }
        if options.budget != nil, options.exec == nil { fail("--budget explores an implementation: give --exec") }
        if options.mutationScore, options.exhaustive != nil {
            fail("--mutation-score with --exhaustive walks each depth in turn: it takes no --budget or --quick")
        }
        if options.budget != nil, options.path != nil { fail("--path replays one path: it takes no --budget") }
    }
    if options.scenario != nil {
        guard options.exec != nil, options.seed != nil || options.scenario?.walk == true else {
            fail("--scenario replays a generated scenario of an implementation: give --exec and --seed")
        }
        if options.random > 0 || options.trace != nil || options.exhaustive != nil || options.cases != nil
            || options.noVectors || options.quick || options.budget != nil || options.mutationScore
            || options.vectors != nil || options.html != nil
        {
            fail(
                "--scenario replays one generated scenario: it takes only --exec, --seed, --random-steps, --json and the protocol's options"
            )
        }
    }
    if options.noVectors, options.random == 0 { fail("--no-vectors runs random traces only: give --random N") }
    if options.writeExpect != nil || options.expect != nil || options.junit != nil,
        options.matrix != nil || options.mutationScore || options.draw != nil || options.scenario != nil
            || options.exhaustive != nil
    {
        fail(
            "--write-expect, --expect and --junit are for a run of the suite: they take no --matrix, --mutation-score, --draw, --scenario or --exhaustive"
        )
    }
    return options
}
