import Foundation
import RateLimitCore

// --mutation-score: the suite against each bug an implementation can inject (`COMMAND --list-bugs`,
// `COMMAND --bug NAME`), reporting which pass catches each one.

/// The mutation score of an implementation that can inject bugs: which pass catches each one.
package struct MutationScore {
    /// A bug the implementation lists, and the weakest level that must catch it.
    package struct Bug: Hashable, Sendable {
        package var name: String
        package var level: ConformanceLevel
    }

    /// The report's lines, its JSON form, and whether the run passes (the implementation without
    /// bugs passes and every bug is caught at its level).
    package var lines: [String]
    package var json: JSONValue
    package var passes: Bool

    /// The bugs `command --list-bugs` lists, one `NAME` or `NAME LEVEL` per line (a bare `NAME`
    /// must fail `defaultLevel`).
    package static func bugs(of command: String, defaultLevel: ConformanceLevel) throws(ConformanceFormatError)
        -> [Bug]
    {
        let listing = Process()
        listing.executableURL = URL(fileURLWithPath: "/bin/sh")
        listing.arguments = ["-c", "\(command) --list-bugs"]
        let pipe = Pipe()
        listing.standardOutput = pipe
        do { try listing.run() } catch { throw ConformanceFormatError("cannot run \(command) --list-bugs: \(error)") }
        let listed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        listing.waitUntilExit()
        var bugs: [Bug] = []
        for line in listed.split(whereSeparator: \.isNewline) {
            let words = line.split(separator: " ").map(String.init)
            guard let name = words.first else { continue }
            guard words.count <= 2, let level = words.count == 2 ? ConformanceLevel(rawValue: words[1]) : defaultLevel,
                level == .exact || level == .safety
            else {
                throw ConformanceFormatError("\(command) --list-bugs: \"\(line)\" is not NAME or NAME exact|safety")
            }
            bugs.append(Bug(name: name, level: level))
        }
        guard listing.terminationStatus == 0, !bugs.isEmpty else {
            throw ConformanceFormatError("\(command) --list-bugs listed no bugs")
        }
        return bugs
    }

    /// The exhaustive pass at each depth from 1 to `depth` in turn against each bug: the smallest
    /// depth that catches it (a bug of a machine beyond the strategies shows in their scenarios,
    /// judged exactly at every depth, reported as depth 0).
    package static func exhaustive(
        _ run: ConformanceRun, command: String, bugs: [Bug], depth: Int, suiteOptions: ConformanceOptions
    ) throws(ConformanceFormatError) -> MutationScore {
        let cleanRun = try run.exhaustive(command: command, depth: depth)
        var rows: [[String]] = []
        var results: [JSONValue] = []
        var caught = 0
        for bug in bugs {
            var found: (depth: Int, finding: String)?
            for attempt in 1...depth where found == nil {
                run.progress("mutation score: \(bug.name), depth \(attempt)")
                let report = try run.exhaustive(
                    command: "\(command) --bug \(bug.name)", depth: attempt, level: bug.level, stopAtFirstFailure: true)
                guard let failing = report.strategies.first(where: { $0.failure != nil }) else { continue }
                let primary = failing.shrunk?.outcome.primary ?? failing.failure?.primary
                found = (attempt, "\(failing.strategy) \(primary.map { "\($0.cause.clause) \($0.kind.name)" } ?? "")")
            }
            if found == nil, !run.scenarios.isEmpty {
                let scenarios = try run.suite(
                    command: "\(command) --bug \(bug.name)", options: suiteOptions, scenarios: run.scenarios
                ).extras
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
                fields += [
                    found.depth == 0 ? ("caughtBy", .string("scenarios")) : ("depth", .integer(Int64(found.depth))),
                    ("finding", .string(found.finding)),
                ]
            }
            results.append(.object(fields))
        }
        run.endProgress()
        let cleanPasses = cleanRun.passes(at: run.level)
        let json = JSONValue.object([
            ("implementation", .string(cleanRun.implementation)), ("exhaustiveDepth", .integer(Int64(depth))),
            ("cleanPasses", .bool(cleanPasses)), ("caught", .integer(Int64(caught))),
            ("bugs", .integer(Int64(bugs.count))), ("results", .array(results)),
        ])
        let lines =
            [
                "ratelimit-conformance: exhaustive mutation score for \(cleanRun.implementation), depths 1 to \(depth)",
                "the implementation without bugs: \(cleanPasses ? "passes" : "FAILS") the exhaustive pass to depth \(depth) at level \(run.level.rawValue)",
                "",
            ] + TextTable.render(header: ["bug", "must fail", "result", "first finding"], rows: rows) + [
                "",
                "mutation score: \(caught)/\(bugs.count) injected bugs caught by the exhaustive pass to depth \(depth)",
            ]
        return MutationScore(lines: lines, json: json, passes: cleanPasses && caught == bugs.count)
    }

    /// Each bug given the run a user gets (``ConformanceRun/exploring(command:budget:http:scenarios:)``
    /// within the run's budget per bug), or with `explores` false the suite with `suiteOptions`
    /// (the vectors alone with `--quick`); each pass is judged alone.
    package static func exploring(
        _ run: ConformanceRun, command: String, bugs: [Bug], explores: Bool, suiteOptions: ConformanceOptions
    ) throws(ConformanceFormatError) -> MutationScore {
        let budget = run.explorationBudget
        func judged(_ command: String, level: ConformanceLevel) throws(ConformanceFormatError) -> (
            ConformanceReport, [CaseRunReport], [String]
        ) {
            guard explores else {
                let suite = try run.suite(command: command, options: suiteOptions, scenarios: run.scenarios)
                let caught = !suite.report.passes(at: level) || !suite.extras.allSatisfy(\.passed)
                return (suite.report, suite.extras, caught ? ["vectors"] : [])
            }
            let explored = try run.exploring(command: command, budget: budget, scenarios: run.scenarios)
            return (
                explored.report, explored.extras, explored.exploration.caughtBy(at: level, extras: explored.extras)
            )
        }
        let (clean, _, cleanCaughtBy) = try judged(command, level: run.level)
        let passes = explores ? ["vectors", "exhaustive", "extensions", "random"] : ["vectors"]
        var alone = Dictionary(uniqueKeysWithValues: passes.map { ($0, 0) })
        var didNotStart: [(bug: String, reason: String)] = []
        var rows: [[String]] = []
        var results: [JSONValue] = []
        var caught = 0
        for bug in bugs {
            run.progress("mutation score: \(bug.name)")
            // A bug whose implementation does not start (or whose hello is too slow on a loaded
            // machine) is recorded as such, and the run goes on to the next bug.
            switch run.started("\(command) --bug \(bug.name)") {
            case .success(let probe): probe.close()
            case .failure(let error):
                let reason = String(error.message.dropFirst(ConformanceRun.notStartedPrefix.count))
                didNotStart.append((bug.name, reason))
                rows.append([bug.name, bug.level.rawValue, "NO START", "-", "(below)"])
                results.append(
                    .object([
                        ("bug", .string(bug.name)), ("level", .string(bug.level.rawValue)), ("caught", .bool(false)),
                        ("didNotStart", .string(reason)),
                    ]))
                continue
            }
            let (report, scenarios, caughtBy) = try judged("\(command) --bug \(bug.name)", level: bug.level)
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
            // The passes abbreviated, so that the table fits 100 columns (the JSON has them whole,
            // and the strategies failing).
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
        run.endProgress()
        let cleanPasses = cleanCaughtBy.isEmpty
        let description =
            explores ? "the run that explores, \(Int(budget)) s per bug (--budget)" : "the vectors alone (--quick)"
        let json = JSONValue.object([
            ("implementation", .string(clean.implementation)), ("run", .string(description)),
            ("cleanPasses", .bool(cleanPasses)), ("caught", .integer(Int64(caught))),
            ("bugs", .integer(Int64(bugs.count))), ("didNotStart", .integer(Int64(didNotStart.count))),
            ("caughtAlone", .object(passes.map { ($0, .integer(Int64(alone[$0] ?? 0))) })),
            ("seed", .string(String(run.seed))), ("results", .array(results)),
        ])
        // The last column clipped to what is left of 100 columns.
        let header = ["bug", "level", "result", "caught by", "most severe finding"]
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let left = max(20, 100 - zip(widths, header).map { max($0, $1.count) }.reduce(0, +) - 2 * 4)
        let clippedRows = rows.map { Array($0.prefix(4)) + [TextTable.clipped($0[4], to: left)] }
        let lines =
            [
                "ratelimit-conformance: mutation score for \(clean.implementation)",
                "each bug gets \(description), seed \(run.seed)",
                "the implementation without bugs: \(cleanPasses ? "passes" : "FAILS (\(cleanCaughtBy.joined(separator: ", ")))") at level \(run.level.rawValue)",
                "",
            ] + TextTable.render(header: header, rows: clippedRows) + [
                "caught by: vec vectors, exh the exhaustive pass, ext the extensions' scenarios, rnd random traces"
            ] + didNotStart.map { "DID NOT START \($0.bug): \($0.reason)" } + [
                "",
                "each pass alone: " + passes.map { "\($0) \(alone[$0] ?? 0)/\(bugs.count)" }.joined(separator: ", "),
                "mutation score: \(caught)/\(bugs.count) injected bugs caught at the level each declares"
                    + (didNotStart.isEmpty ? "" : "; \(didNotStart.count) did not start"),
            ]
        return MutationScore(lines: lines, json: json, passes: cleanPasses && caught == bugs.count)
    }
}
