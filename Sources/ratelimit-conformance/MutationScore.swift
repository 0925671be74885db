import Foundation
import RateLimitConformance
import RateLimitCore

// --mutation-score: the suite against each bug an implementation can inject (`COMMAND --list-bugs`,
// `COMMAND --bug NAME`), reporting which pass catches each one.

/// Runs the mutation score against `command` and ends the run.
func runMutationScore(command: String) -> Never {
    // The unmutated implementation must pass, and every injected bug must fail the level it
    // declares (`NAME LEVEL` per line; a bare NAME must fail the --level asked for).
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
    // Without --exhaustive: the run each bug gets is the one a user gets (exploringRun, within
    // --budget per bug), or the vectors alone with --quick; each pass is judged alone.
    let explores = !options.quick && options.random == 0
    let budget = options.budget ?? defaultBudget
    func judged(_ command: String, level: ConformanceLevel) -> (ConformanceReport, [CaseRunReport], [String]) {
        guard explores else {
            let (report, _, scenarios) = runSuite(command: command, scenarios: selectedScenarios)
            let caught = !report.passes(at: level) || !scenarios.allSatisfy(\.passed)
            return (report, scenarios, caught ? ["vectors"] : [])
        }
        let (report, _, scenarios, exploration) = exploringRun(
            command: command, budget: budget, http: [], scenarios: selectedScenarios)
        return (report, scenarios, exploration.caughtBy(at: level, extras: scenarios))
    }
    let (clean, _, cleanCaughtBy) = judged(command, level: options.level)
    let passes = explores ? ["vectors", "exhaustive", "extensions", "random"] : ["vectors"]
    var alone = Dictionary(uniqueKeysWithValues: passes.map { ($0, 0) })
    var didNotStart: [(bug: String, reason: String)] = []
    for bug in bugs {
        progress("mutation score: \(bug.name)")
        // A bug whose implementation does not start (or whose hello is too slow on a loaded
        // machine) is recorded as such, and the run goes on to the next bug.
        switch started("\(command) --bug \(bug.name)") {
        case .success(let probe): probe.close()
        case .failure(let error):
            let reason = String(error.message.dropFirst(notStartedPrefix.count))
            didNotStart.append((bug.name, reason))
            rows.append([bug.name, bug.level.rawValue, "NO START", "-", "(below)"])
            results.append(
                .object([
                    ("bug", .string(bug.name)), ("level", .string(bug.level.rawValue)), ("caught", .bool(false)),
                    ("didNotStart", .string(reason)),
                ]))
            continue
        }
        let (report, scenarios, caughtBy) = judged("\(command) --bug \(bug.name)", level: bug.level)
        let differing = scenarios.filter { !$0.passed }
        let failing =
            report.strategies.filter { $0.level < bug.level && $0.level != .skipped }.map(\.strategy)
            + differing.map(\.label)
        let isCaught = !caughtBy.isEmpty
        if isCaught { caught += 1 }
        for pass in caughtBy { alone[pass, default: 0] += 1 }
        let first =
            report.strategies.lazy.compactMap { strategy in
                strategy.groups.first.map { "\(strategy.strategy) \($0.cause.clause) \($0.kind.name)" }
            }.first ?? differing.first.flatMap { $0.failures.first.map { "\($0.id) differs" } } ?? "-"
        // The passes abbreviated, so that the table fits 100 columns (--json has them whole, and
        // the strategies failing).
        let abbreviations = ["vectors": "vec", "exhaustive": "exh", "extensions": "ext", "random": "rnd"]
        rows.append([
            bug.name, bug.level.rawValue, isCaught ? "caught" : "MISSED",
            caughtBy.map { abbreviations[$0] ?? $0 }.joined(separator: ","), first,
        ])
        results.append(
            .object([
                ("bug", .string(bug.name)), ("level", .string(bug.level.rawValue)), ("caught", .bool(isCaught)),
                ("caughtBy", .array(caughtBy.map(JSONValue.string))),
                ("failingStrategies", .array(failing.map(JSONValue.string))), ("worstFinding", .string(first)),
            ]))
    }
    endProgress()
    let cleanPasses = cleanCaughtBy.isEmpty
    let run = explores ? "the run that explores, \(Int(budget)) s per bug (--budget)" : "the vectors alone (--quick)"
    if options.json {
        print(
            JSONValue.object([
                ("implementation", .string(clean.implementation)), ("run", .string(run)),
                ("cleanPasses", .bool(cleanPasses)), ("caught", .integer(Int64(caught))),
                ("bugs", .integer(Int64(bugs.count))), ("didNotStart", .integer(Int64(didNotStart.count))),
                ("caughtAlone", .object(passes.map { ($0, .integer(Int64(alone[$0] ?? 0))) })),
                ("seed", .string(String(seed))), ("results", .array(results)),
            ]).prettyText, terminator: "")
    } else {
        print("ratelimit-conformance: mutation score for \(clean.implementation)")
        print("each bug gets \(run), seed \(seed)")
        print(
            "the implementation without bugs: \(cleanPasses ? "passes" : "FAILS (\(cleanCaughtBy.joined(separator: ", ")))") at level \(options.level.rawValue)"
        )
        print("")
        // The last column clipped to what is left of 100 columns.
        let header = ["bug", "level", "result", "caught by", "most severe finding"]
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let left = max(20, 100 - zip(widths, header).map { max($0, $1.count) }.reduce(0, +) - 2 * 4)
        let clippedRows = rows.map { Array($0.prefix(4)) + [TextTable.clipped($0[4], to: left)] }
        for line in TextTable.render(header: header, rows: clippedRows) { print(line) }
        print("caught by: vec vectors, exh the exhaustive pass, ext the extensions' scenarios, rnd random traces")
        for (bug, reason) in didNotStart { print("DID NOT START \(bug): \(reason)") }
        print("")
        print(
            "each pass alone: "
                + passes.map { "\($0) \(alone[$0] ?? 0)/\(bugs.count)" }.joined(separator: ", "))
        print(
            "mutation score: \(caught)/\(bugs.count) injected bugs caught at the level each declares"
                + (didNotStart.isEmpty ? "" : "; \(didNotStart.count) did not start"))
    }
    ChildProcess.endHarness(status: cleanPasses && caught == bugs.count ? 0 : 1)
}
