import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// The Python example (Examples/python), an implementation written from the Spec alone, through
// the command: it passes, and each bug planted in it is caught.

@Suite("The ratelimit-conformance command on the Python example")
struct PythonExampleCommandTests {
    @Test("The Python example passes every vector and 30 random traces per strategy at level exact")
    func pythonExampleIsExact() async throws {
        let run = try await runCommand(["--exec", Repository.python, "--random", "30", "--seed", "5"])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("PASS: \(allStrategies) strategies conform at level exact"), "\(run.output)")
        #expect(!run.output.contains("DIFF") && !run.output.contains("FAIL "), "\(run.output)")
    }

    @Test(
        "The vectors alone (--mutation-score --quick) catch every bug the Python example can inject except those only exploration finds, each at the level it declares"
    )
    func mutationScore() async throws {
        let run = try await runCommand(
            ["--exec", Repository.python, "--mutation-score", "--quick", "--json"], limit: .seconds(300))
        let json = try JSONValue(parsing: run.output)
        #expect(json["cleanPasses"] == .bool(true), "\(run.output)")
        let results = try #require(json["results"]?.array)
        #expect(results.count >= 70)
        // Bugs of mid-range sizes, long histories and the extensions' serving order: no vector sets
        // them up; the run that explores finds them (the closing note of issue 31 has the numbers).
        let explorationOnly: Set<String> = [
            "log-capped-at-64", "segments-ring-of-16", "window-counter-32-bit", "interval-refill-capped",
            "log-compaction-drops-newest", "gcra-renormalise-every-1000", "fraction-lost-every-500",
            "window-history-crash", "concurrency-crash-at-150th-event", "segments-reconfigure-drops-current",
            "tokens-as-double-above-2-53", "counter-remaining-capped", "queue-edf-within-priority",
            "composite-first-remaining", "queue-holds-at-most-16",
        ]
        let missed = Set(results.filter { $0["caught"] == .bool(false) }.compactMap { $0["bug"]?.string })
        #expect(missed.isSubset(of: explorationOnly), "\(missed.subtracting(explorationOnly))")
        #expect(results.count - missed.count >= 55 && run.status == (missed.isEmpty ? 0 : 1))
        #expect(results.allSatisfy { $0["caught"] == .bool(false) || $0["caughtBy"] == .array([.string("vectors")]) })
    }

    @Test(
        "CONF-7 scenario vectors keep to the profile: one with an event or instant outside it is never sent, and is listed as NOT CHECKED"
    )
    func scenariosKeepToTheProfile() async throws {
        let logFolder = try Repository.temporaryDirectory()
        defer { Repository.remove(logFolder) }
        let log = (logFolder as NSString).appendingPathComponent("transcript.jsonl")
        let profile = #"{"monotonic":true,"events":["weighted","query"]}"#
        let run = try await runCommand(
            ["--exec", "python3 \(fixtures)/recorder.py \(Repository.python) --profile '\(profile)'", "--quick"],
            environment: ["RECORD_FILE": log])
        #expect(run.status == 0, "\(run.output.suffix(3_000))")
        #expect(
            run.output.contains(
                "NOT CHECKED wait-queue/reconfigure: outside the profile: step 3 at 2 ns: reconfigure, an event the profile does not declare"
            ), "\(run.output.suffix(3_000))")
        // Nothing sent to a scenario over strategies (a composite, a wait queue) goes back in time or
        // is an event the profile lacks. (The adaptive machines are over no strategy: no profile.)
        var latest: [String: Int64] = [:]
        var overStrategies: Set<String> = []
        var steps = 0
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let message = try JSONValue(parsing: String(line))
            // Ids start again with each process the run starts: each scenario message says whose.
            if message["type"]?.string == "scenario", let id = message["id"]?.string {
                if ["composite", "wait-queue"].contains(message["machine"]?.string) {
                    overStrategies.insert(id)
                } else {
                    overStrategies.remove(id)
                }
                latest[id] = message["now"]?.int64 ?? 0
            }
            guard message["type"]?.string == "step", let id = message["id"]?.string, overStrategies.contains(id),
                let now = message["now"]?.int64, let event = message["event"]
            else { continue }
            steps += 1
            #expect(now >= latest[id, default: 0], "\(line)")
            latest[id] = max(latest[id, default: 0], now)
            let kind = event["kind"]?.string ?? ""
            #expect(!["reset", "resetAll", "reconfigure", "reconfigureRule", "restoreRule"].contains(kind), "\(line)")
            #expect((event["permits"]?.int64 ?? 1) >= 0, "\(line)")
        }
        #expect(steps > 20, "\(steps) scenario steps sent")
    }

    @Test(
        "CONF-7 a profile that leaves almost nothing checked does not pass: each strategy with no case, no admission or no clause of its own is THIN, and the exit status is 1"
    )
    func thinProfileFails() async throws {
        let thin = #"{"events":[],"largestPermits":1,"toleranceNanoseconds":1000000000,"validation":false}"#
        let run = try await runCommand(["--exec", "\(Repository.python) --profile '\(thin)'", "--quick"])
        #expect(run.status == 1, "\(run.output)")
        #expect(
            // Its stories run up to their first weighted acquire (CONF-7), which checks no GCRA clause.
            run.output.contains(
                "THIN gcra: too little checked to judge it (no vector of a clause of its own (GCRA-…) ran within its profile, only CORE ones)"
            ),
            "\(run.output)")
        #expect(run.output.contains("FAIL: too little of "), "\(run.output)")
        #expect(
            run.output.contains(
                "NOT CHECKED token-bucket: CORE-4 acquires and releases of more than 1 permits, the profile's largest; a remaining above it is judged as 1"
            ))
        #expect(run.output.contains("NOT CHECKED token-bucket: CONF-6 instants to the nanosecond"))
    }

    @Test("--exhaustive replays every transition of the walk against the Python example, which conforms on every path")
    func exhaustivePython() async throws {
        let run = try await runCommand(["--exec", Repository.python, "--exhaustive", "2"])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("exhaustive pass to depth 2"), "\(run.output)")
        #expect(run.output.contains("strategy                 level  states  transitions  depth  paths  steps"))
        #expect(
            run.output.contains("PASS: \(allStrategies) strategies conform on every path at level exact"),
            "\(run.output)")
        let json = try JSONValue(parsing: try await runCommand(["--exhaustive", "1", "--json"]).output)
        let strategies = try #require(json["strategies"]?.array)
        #expect(
            strategies.count == AnyRateLimitStrategy.identifiers.count
                && strategies.allSatisfy { ($0["transitions"]?.int64 ?? 0) > 10 })
    }

    @Test("--budget bounds an exhaustive pass, and the report says how many paths it left unrun")
    func exhaustiveBudget() async throws {
        // Depth 3 of a GCRA is over 80,000 steps over the protocol: more than a second anywhere.
        let run = try await runCommand([
            "--exec", Repository.python, "--exhaustive", "default", "--strategy", "gcra", "--budget", "1",
        ])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("NOT RUN gcra: "), "\(run.output)")
        #expect(run.output.contains("its share of the budget (1.000s) ran out"), "\(run.output)")
        #expect(run.output.contains("PASS: 1 of 1 strategies conform on every path run (NOT RUN: the rest)"))
        let usage = try await runCommand([
            "--exec", Repository.python, "--exhaustive", "2", "--path", "3", "--budget", "5",
        ])
        #expect(usage.status == 2 && usage.errors.contains("--path replays one path: it takes no --budget"))
    }

    @Test(
        "CORE-8 --exhaustive finds an injected bug, shrinks the first failing path, and --path replays it against the bug and the reference"
    )
    func exhaustiveFindsABug() async throws {
        let buggy = Repository.python + " --bug refill-on-rejection"
        // Paths come shortest first and the first failing one is path 19: a budget bounds the rest,
        // which under ThreadSanitizer beside a busy core took longer than the test's limit.
        let run = try await runCommand([
            "--exec", buggy, "--exhaustive", "default", "--strategy", "token-bucket", "--budget", "20",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("exhaustive pass to depth \(ExhaustiveOptions.defaultDepth)"), "\(run.output)")
        #expect(run.output.contains("FAIL token-bucket: path "), "\(run.output)")
        #expect(run.output.contains("shrunk from "), "\(run.output)")
        #expect(run.output.contains("<- here"))
        let replay = try #require(
            run.output.split(separator: "\n").first { $0.hasPrefix("replay: ") }.map { String($0.dropFirst(8)) })
        #expect(replay.contains("--exhaustive \(ExhaustiveOptions.defaultDepth) --strategy token-bucket --path "))
        let path = try #require(
            replay.components(separatedBy: "--path ").last?.split(separator: " ").first.map(String.init))
        let again = try await runCommand([
            "--exec", buggy, "--exhaustive", "\(ExhaustiveOptions.defaultDepth)", "--strategy", "token-bucket",
            "--path", path,
        ])
        #expect(again.status == 1 && again.output.contains("FAIL token-bucket: path \(path) "), "\(again.output)")
        let reference = try await runCommand([
            "--exhaustive", "\(ExhaustiveOptions.defaultDepth)", "--strategy", "token-bucket", "--path", path,
        ])
        #expect(reference.status == 0, "\(reference.output)")
        #expect(try await runCommand(["--exhaustive", "0"]).status == 2)
        #expect(try await runCommand(["--path", "1"]).status == 2)
    }

    /// `json` without the members that measure time, which differ between any two runs.
    private func untimed(_ json: JSONValue) -> JSONValue {
        switch json {
        case .object(let members): .object(members.filter { $0.0 != "milliseconds" }.map { ($0.0, untimed($0.1)) })
        case .array(let items): .array(items.map(untimed))
        case .null, .bool, .integer, .otherNumber, .string: json
        }
    }

    @Test(
        "Pipelined (a window of requests sent ahead) and one request at a time give the same report on the same traces, from a correct implementation and from buggy ones"
    )
    func pipelinedVerdicts() async throws {
        let runs: [(bug: String, arguments: [String])] = [
            ("", ["--random", "5", "--seed", "9"]),
            ("float-accumulation", ["--strategy", "token-bucket", "--no-vectors", "--random", "30", "--seed", "9"]),
            ("count-rejected", ["--strategy", "fixed-window", "--random", "10", "--seed", "9"]),
            ("refill-on-rejection", ["--strategy", "token-bucket", "--exhaustive", "3"]),
        ]
        for (bug, arguments) in runs {
            let command = Repository.python + (bug.isEmpty ? "" : " --bug \(bug)")
            let run = ["--exec", command, "--json"] + arguments
            let strict = try await runCommand(run + ["--window", "1"])
            let pipelined = try await runCommand(run)
            #expect(strict.status == pipelined.status && strict.status == (bug.isEmpty ? 0 : 1), "\(bug) \(arguments)")
            #expect(
                untimed(try JSONValue(parsing: strict.output)) == untimed(try JSONValue(parsing: pipelined.output)),
                "\(bug) \(arguments): the reports differ")
        }
    }

    @Test(
        "A bug found by a random trace is shrunk, printed as a table and a vector, and replays from a regression folder"
    )
    func shrunkRegression() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let buggy = Repository.python + " --bug float-accumulation"
        let run = try await runCommand([
            "--exec", buggy, "--strategy", "token-bucket", "--no-vectors",
            "--random", "200", "--seed", "3", "--save-regression", folder,
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("shrunk from"), "\(run.output)")
        #expect(run.output.contains("step  now (ns)  event"), "\(run.output)")
        #expect(run.output.contains("<- here"))
        #expect(run.output.contains("in the original trace: step "))
        #expect(
            run.output.contains(
                "replay: ratelimit-conformance --exec \"\(buggy)\" --strategy token-bucket --seed 3 --random-steps \(ConformanceOptions.defaultRandomSteps) --trace "
            ))
        #expect(run.output.contains("\"format\": \"ratelimit-conformance-vectors\""))
        let saved = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(saved.count == 1)
        let replayBuggy = try await runCommand(["--exec", buggy, "--vectors", folder])
        #expect(replayBuggy.status == 1)
        let replayReference = try await runCommand(["--vectors", folder])
        #expect(replayReference.status == 0, "\(replayReference.output)")
    }

    @Test("Every message of a session validates against Spec/protocol.schema.json", .heavy)
    func protocolTranscript() async throws {
        let logFolder = try Repository.temporaryDirectory()
        defer { Repository.remove(logFolder) }
        let log = (logFolder as NSString).appendingPathComponent("transcript.jsonl")
        let run = try await runCommand(
            ["--exec", "python3 \(fixtures)/recorder.py " + Repository.python, "--random", "2", "--seed", "1"],
            environment: ["RECORD_FILE": log])
        #expect(run.status == 0, "\(run.output)")
        let validator = try protocolValidator()
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count > 5_000)
        var types: Set<String> = []
        for line in lines {
            let message = try JSONValue(parsing: String(line))
            types.insert(message["type"]?.string ?? "?")
            let violations = validator.violations(of: message)
            #expect(violations.isEmpty, "\(line): \(violations)")
            if !violations.isEmpty { break }
        }
        #expect(
            types == [
                "hello", "create", "created", "refused", "event", "result", "drop", "dropped", "scenario", "step",
                "answer", "bye",
            ])
        #expect(lines.contains { $0.contains("\"profiles\"") }, "the Python example declares its profile")
        #expect(lines.contains { $0.contains("\"window\"") }, "and accepts a window (pipelining)")
    }

    @Test(
        "--protocol 1 offers version 1: an implementation of protocol 1 keeps working, judged with the Spec's profile")
    func protocolOne() async throws {
        let run = try await runCommand([
            "--quick", "--exec", Repository.python, "--protocol", "1", "--strategy", "gcra",
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("python-example 1 (protocol 1)"))
        let old = try await runCommand([
            "--exec", misbehaving("none"), "--strategy", "fixed-window", "--case", "fixed-window/window-edges",
        ])
        #expect(
            old.output.contains("(protocol 1)"),
            "a hello answered with protocol 1 to an offer of 2 is accepted: \(old.output)\(old.errors)")
    }
}
