import Foundation
import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitConformance

/// The command's passes as a library (Sources/RateLimitConformance/Command): what
/// `ratelimit-conformance` runs, called without the command.
@Suite("The command's run, in-process (ConformanceRun)")
struct ConformanceRunTests {
    /// A run of the vectors of `strategies` on a clock of served time (RateLimitTestSupport's
    /// `ServedTime`) that starts now: a budget is what the machine gave the tests, so a busy machine
    /// makes a run longer, never shallower (on wall-clock time, the exhaustive pass once missed a bug
    /// it finds on an idle machine, beside a CPU hog and `make verify`).
    private func run(_ strategies: Set<String>) throws -> ConformanceRun {
        let started = ServedTime.now
        var run = ConformanceRun(vectors: try VectorGenerator.files(), seed: TestSeed.base) {
            let elapsed = ServedTime.now - started
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        run.strategies = strategies
        // Short traces: what is checked is that each pass runs and is judged, not how far it goes.
        run.randomSteps = 200
        return run
    }

    @Test("CONF-11 an implementation that does not start is said to, in the words the command's exit status 3 keys on")
    func notStarted() throws {
        guard case .failure(let failure) = try run(["gcra"]).started("exit 7") else {
            Issue.record("a command that exits at once started")
            return
        }
        #expect(failure.message.hasPrefix(ConformanceRun.notStartedPrefix), "\(failure.message)")
    }

    @Test(
        "CONF-1 the run that explores judges the vectors, the exhaustive pass and random traces, each alone: the Python example passes them all and a bug is named by the pass that caught it"
    )
    func exploringRun() throws {
        let run = try run(["gcra"])
        let clean = try run.exploring(command: Repository.python, budget: 6)
        #expect(clean.report.passes(at: .exact), "seed \(TestSeed.base)")
        #expect(clean.exploration.caughtBy(at: .exact, extras: clean.extras).isEmpty, "seed \(TestSeed.base)")
        let paths = try #require(clean.exploration.exhaustive.strategies.first)
        #expect(paths.strategy == "gcra" && paths.pathsRun > 0)
        #expect(Exploration.randomCounts(clean.exploration.random).traces > 0, "seed \(TestSeed.base)")
        #expect(clean.exploration.scenarios?.machines.isEmpty == false, "the example declares extensions")
        // The exhaustive pass gets a share of the budget in served time, which counts what the
        // pool served, not what this test's thread got: beside other heavy tests it can run out
        // before its last path. Judged against what it was given: the budget doubles (at most
        // twice) until the pass runs every path of its cover.
        var budget = 6.0
        var buggy = try run.exploring(command: "\(Repository.python) --bug gcra-boundary-exclusive", budget: budget)
        while let pass = buggy.exploration.exhaustive.strategies.first, pass.pathsRun < pass.paths,
            pass.failure == nil, budget < 24
        {
            budget *= 2
            buggy = try run.exploring(command: "\(Repository.python) --bug gcra-boundary-exclusive", budget: budget)
        }
        let caughtBy = buggy.exploration.caughtBy(at: .safety, extras: buggy.extras)
        let pass = try #require(buggy.exploration.exhaustive.strategies.first)
        #expect(caughtBy.contains("vectors"), "seed \(TestSeed.base): \(caughtBy)")
        #expect(
            caughtBy.contains("exhaustive") || (pass.pathsRun < pass.paths && pass.failure == nil),
            "seed \(TestSeed.base): \(caughtBy); exhaustive ran \(pass.pathsRun) of \(pass.paths) paths in \(budget) s")
    }

    @Test("--list-bugs is read as NAME or NAME LEVEL per line; anything else is refused, naming the line")
    func bugListing() throws {
        let bugs = try MutationScore.bugs(of: "printf 'first exact\\nsecond\\n'; true", defaultLevel: .safety)
        #expect(
            bugs == [
                MutationScore.Bug(name: "first", level: .exact), MutationScore.Bug(name: "second", level: .safety),
            ])
        #expect(throws: ConformanceFormatError.self) {
            try MutationScore.bugs(of: "printf 'third lenient\\n'; true", defaultLevel: .exact)
        }
        #expect(throws: ConformanceFormatError.self) { try MutationScore.bugs(of: "true", defaultLevel: .exact) }
    }

    @Test("The mutation score of the vectors alone names each bug caught and the pass that caught it")
    func mutationScoreOfTheVectors() throws {
        let run = try run(["fixed-window"])
        let bugs = [MutationScore.Bug(name: "window-edge-off-by-one", level: .safety)]
        let score = try MutationScore.exploring(
            run, command: Repository.python, bugs: bugs, explores: false,
            suiteOptions: ConformanceOptions(strategies: ["fixed-window"], seed: TestSeed.base))
        #expect(score.passes, "\(score.lines.joined(separator: "\n"))")
        #expect(score.json["caught"] == .integer(1) && score.json["cleanPasses"] == .bool(true))
        #expect(score.lines.contains { $0.contains("window-edge-off-by-one") && $0.contains("caught") })
    }
}
