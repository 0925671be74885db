import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

private let fixtures = "Tests/RateLimitConformanceTests/Fixtures"

/// The command for the misbehaving fixture in `mode`, accepting a window (pipelining) when `pipelined`.
private func misbehaving(_ mode: String, at event: Int = 1, pipelined: Bool = false) -> String {
    "python3 \(fixtures)/misbehave.py --mode \(mode) --at \(event)\(pipelined ? " --window" : "")"
}

@Suite("The ratelimit-conformance command")
struct CommandTests {
    @Test("With no arguments it checks the reference against every vector and prints a per-strategy table")
    func noArguments() async throws {
        let run = try await runCommand([])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(
            run.output.contains(
                "strategy                 level  cases  steps  exact  safe  failed  skipped  random e/s/f  admitted  validation    time"
            ))
        for strategy in AnyRateLimitStrategy.identifiers {
            #expect(run.output.contains("\(strategy) "), "\(strategy) missing")
        }
        #expect(run.output.contains("PASS: \(allStrategies) strategies conform at level exact"))
        #expect(run.output.contains("\nhttp: \(HTTPFeedbackCatalogue.cases().count) cases, all as HTTP.md says\n"))
    }

    @Test("--json prints a report machines can read; --strategy and --case filter it")
    func jsonAndFilters() async throws {
        let run = try await runCommand([
            "--json", "--strategy", "gcra,fixed-window", "--case", "gcra/boundary-conforms", "--case", "fixed-window",
        ])
        #expect(run.status == 0, "\(run.errors)")
        let report = try JSONValue(parsing: run.output)
        #expect(report["passed"] == .bool(true))
        let strategies = try #require(report["strategies"]?.array)
        #expect(strategies.compactMap { $0["strategy"]?.string } == ["gcra", "fixed-window"])
        #expect(strategies.first?["cases"] == .integer(1))
        #expect((strategies.last?["cases"]?.int64 ?? 0) > 10)
    }

    @Test("Bad usage and an empty vector folder exit with status 2 and say why")
    func badUsage() async throws {
        let empty = try Repository.temporaryDirectory()
        defer { Repository.remove(empty) }
        let noVectors = try await runCommand(["--vectors", empty])
        #expect(noVectors.status == 2)
        #expect(noVectors.errors.contains("no vector files"))
        let unknown = try await runCommand(["--strategy", "bucket-of-sand"])
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("unknown strategy bucket-of-sand"))
        #expect(try await runCommand(["--random", "x"]).status == 2)
    }

    @Test("--vectors runs files from a folder; --write-vectors writes the committed files")
    func vectorFolders() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let written = try await runCommand(["--write-vectors", folder])
        #expect(written.status == 0)
        for file in try VectorGenerator.files() {
            let text = try String(
                contentsOfFile: (folder as NSString).appendingPathComponent(file.fileName), encoding: .utf8)
            #expect(
                text == (try String(contentsOfFile: Repository.path("Spec/vectors/\(file.fileName)"), encoding: .utf8)))
        }
        let http = try String(
            contentsOfFile: (folder as NSString).appendingPathComponent(HTTPVectorFile.path), encoding: .utf8)
        #expect(
            http
                == (try String(contentsOfFile: Repository.path("Spec/vectors/\(HTTPVectorFile.path)"), encoding: .utf8))
        )
        let run = try await runCommand(["--vectors", folder, "--strategy", "concurrency"])
        #expect(run.status == 0)
        #expect(run.output.contains("vectors from \(folder)"))
        #expect(!run.output.contains("http:"), "--strategy leaves the HTTP vectors out")
    }

    @Test(
        "HTTP-3 --vectors runs the HTTP vector file it finds; one whose answer ServerFeedback does not give is refused, naming the case and the member"
    )
    func httpVectorFolder() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        #expect(try await runCommand(["--write-vectors", folder]).status == 0)
        let run = try await runCommand(["--vectors", folder, "--case", "server-feedback/delay-seconds"])
        #expect(run.output.contains("http: 1 cases, all as HTTP.md says"), "\(run.output)")
        #expect(!run.output.contains("server-feedback.json"), "the HTTP file is read, not listed as ignored")
        let path = (folder as NSString).appendingPathComponent(HTTPVectorFile.path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let wait = #""retryAfter": {"delay": 7},\#n        "requestedWaitNanoseconds": 7000000000"#
        #expect(text.components(separatedBy: wait).count == 2)
        try text.replacingOccurrences(of: wait, with: wait.replacingOccurrences(of: "7000000000", with: "7"))
            .write(toFile: path, atomically: true, encoding: .utf8)
        let refused = try await runCommand(["--vectors", folder])
        #expect(refused.status == 2)
        #expect(
            refused.errors.contains(
                "server-feedback/delay-leading-zeros: requestedWaitNanoseconds: expected 7, got 7000000000: the file was written for another version of the Spec"
            ), "\(refused.errors)")
    }

    @Test("CONF-2 A vector file whose answer is not the model's is refused, naming the story and the step")
    func foreignAnswerRefused() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        #expect(try await runCommand(["--write-vectors", folder]).status == 0)
        let path = folder + "/gcra.json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let step = #""retryAfterNanoseconds": 1}, "comment": "(30 − 9) + 10 = 31 > 30: one before the boundary""#
        #expect(text.components(separatedBy: step).count == 2)
        try text.replacingOccurrences(of: step, with: step.replacingOccurrences(of: ": 1}", with: ": 2}"))
            .write(toFile: path, atomically: true, encoding: .utf8)
        let run = try await runCommand(["--vectors", folder, "--strategy", "gcra"])
        #expect(run.status == 2)
        #expect(
            run.errors.contains(
                "gcra/boundary-conforms step 2 at 9 ns acquire(1): the story expects rejected(2ns), the reference model answers rejected(1ns): the file was written for another version of the Spec"
            ), "\(run.errors)")
    }

    @Test(
        "CONF-7 --vectors reads only the JSON files that declare the vector format, subfolders too, and names the ones it ignored"
    )
    func vectorFolderIgnoresOtherJSON() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let regressions = (folder as NSString).appendingPathComponent("regressions")
        #expect(try await runCommand(["--write-vectors", regressions]).status == 0)
        // A report saved with --json inside the folder, and the schema, are not vector files.
        let report = try await runCommand(["--json", "--vectors", regressions, "--strategy", "gcra"])
        #expect(report.status == 0)
        try report.output.write(toFile: folder + "/report.json", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            atPath: Repository.path("Spec/vectors/schema.json"), toPath: folder + "/schema.json")
        let run = try await runCommand(["--vectors", folder, "--strategy", "gcra"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(
            run.output.contains(
                "vectors from \(folder) (ignored 2 JSON files not declaring the vector format: report.json, schema.json)"
            ))
        let json = try JSONValue(
            parsing: try await runCommand(["--json", "--vectors", folder, "--strategy", "gcra"]).output)
        #expect(json["ignoredFiles"] == .array([.string("report.json"), .string("schema.json")]))
        #expect(json["passed"] == .bool(true))
        // Only non-vector files: nothing to run, said with what was ignored.
        let onlyReports = try Repository.temporaryDirectory()
        defer { Repository.remove(onlyReports) }
        try report.output.write(toFile: onlyReports + "/report.json", atomically: true, encoding: .utf8)
        let nothing = try await runCommand(["--vectors", onlyReports])
        #expect(nothing.status == 2)
        #expect(
            nothing.errors.contains("no vector files")
                && nothing.errors.contains("ignored, not declaring the vector format: report.json"))
    }

    @Test(
        "A misbehaving implementation is a clear failure naming the case, the step and the line received",
        arguments: [
            ("invalid-json", "invalid JSON", "{this is not json"),
            ("wrong-id", "the answer's id is \"nope\"", "\"id\": \"nope\""),
            ("missing-field", "a result message needs \"result\"", "{\"type\":\"result\""),
            ("bad-result", "malformed result", "\"remaining\":\"many\""),
            ("stderr", "wrote to stderr: debug: thinking hard", "{\"type\": \"result\""),
            ("crash", "closed its output (exit status 3)", nil),
        ] as [(String, String, String?)])
    func misbehaviour(_ mode: String, _ message: String, _ received: String?) async throws {
        // One request at a time, and pipelined (every request of the case sent ahead).
        for pipelined in [false, true] {
            let run = try await runCommand([
                "--exec", misbehaving(mode, at: 2, pipelined: pipelined), "--strategy", "fixed-window", "--case",
                "fixed-window/window-edges",
            ])
            #expect(run.status == 1, "\(run.output)")
            let line = try #require(
                run.output.split(separator: "\n").first { $0.hasPrefix("FAIL fixed-window/window-edges") },
                "\(run.output)")
            #expect(line.contains("step 2 at 9 ns"), "pipelined \(pipelined): \(line)")
            #expect(line.contains(message), "\(line)")
            if let received { #expect(line.contains("received: ") && line.contains(received), "\(line)") }
        }
    }

    @Test("A broken handshake stops the run before any case: exit status 3, the implementation could not be run")
    func badHello() async throws {
        let run = try await runCommand(["--exec", misbehaving("bad-hello")])
        #expect(run.status == 3)
        #expect(run.errors.contains("did not start properly"), "\(run.errors)")
        #expect(!run.errors.contains("--help"), "not a usage error: \(run.errors)")
        let missing = try await runCommand(["--exec", "no-such-command-\(UInt32.random(in: 0...UInt32.max))"])
        #expect(missing.status == 3, "\(missing.errors)")
        #expect(missing.errors.contains("not found"), "the shell's line is shown: \(missing.errors)")
        let window = try await runCommand(["--exec", misbehaving("bad-window")])
        #expect(window.status == 3)
        #expect(window.errors.contains("\"window\" is an integer from 1 to the 64 offered"), "\(window.errors)")
    }

    @Test("After a crash the next case runs in a new process")
    func restartAfterCrash() async throws {
        let run = try await runCommand([
            "--exec", misbehaving("crash", at: 2), "--json", "--strategy", "fixed-window",
            "--case", "fixed-window/window-edges", "--case", "fixed-window/weighted",
        ])
        let report = try JSONValue(parsing: run.output)
        let failures = try #require(report["strategies"]?.array?.first?["failures"]?.array)
        #expect(failures.count == 2, "both cases reach their second step in a fresh process: \(failures)")
    }

    // MARK: The Python example (Examples/python), an implementation written from the Spec alone

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

/// Spec/protocol.schema.json, with the schemas it refers to.
private func protocolValidator() throws -> JSONSchemaValidator {
    JSONSchemaValidator(
        root: try Repository.json("Spec/protocol.schema.json"),
        others: [
            "vectors/schema.json": try Repository.json("Spec/vectors/schema.json"),
            "vectors/http/schema.json": try Repository.json("Spec/vectors/http/schema.json"),
            "vectors/scenarios/schema.json": try Repository.json("Spec/vectors/scenarios/schema.json"),
        ])
}

/// The fixture that reads only Retry-After and Date (Fixtures/retry_after_only.py).
private let retryAfterOnly = "python3 \(fixtures)/retry_after_only.py"

@Suite("The ratelimit-conformance command's server-feedback extension (Spec/protocol.md)")
struct FeedbackExtensionTests {
    @Test(
        "HTTP-2 HTTP-3 an implementation declaring server-feedback is asked every HTTP case; one reading only Retry-After agrees on those cases and differs, named, on the rest"
    )
    func retryAfterOnlyImplementation() async throws {
        let logFolder = try Repository.temporaryDirectory()
        defer { Repository.remove(logFolder) }
        let log = (logFolder as NSString).appendingPathComponent("transcript.jsonl")
        let run = try await runCommand(
            ["--quick", "--exec", "python3 \(fixtures)/recorder.py \(retryAfterOnly)"],
            environment: ["RECORD_FILE": log])
        #expect(run.status == 1, "\(run.output)\(run.errors)")
        let cases = HTTPFeedbackCatalogue.cases()
        let differing = run.output.split(separator: "\n").filter { $0.hasPrefix("DIFF server-feedback/") }
            .map { String($0.dropFirst("DIFF ".count).prefix { $0 != ":" }) }
        #expect(
            run.output.contains(
                "http: \(cases.count) cases, \(cases.count - differing.count) as HTTP.md says, \(differing.count) differ:"
            ),
            "\(run.output)")
        // Every case about Retry-After and Date alone agrees; every case that reads another field differs.
        let readsOnlyRetryAfter = cases.filter { feedbackCase in
            let expected = feedbackCase.expected
            return expected.limits.isEmpty && expected.policies.isEmpty && expected.remainingQuota == nil
                && expected.statedRate == nil
                && expected.xRateLimit == FeedbackResult.XRateLimit()
                && expected.diagnostics.allSatisfy { ["Date", "Retry-After"].contains($0.field) }
                && (expected.requestedWaitNanoseconds == nil) == (expected.retryAfter == nil)
        }
        #expect(readsOnlyRetryAfter.count >= 25)
        #expect(Set(differing) == Set(cases.map(\.id)).subtracting(readsOnlyRetryAfter.map(\.id)), "\(run.output)")
        #expect(
            run.output.contains(
                #"DIFF server-feedback/github-fields: requestedWaitNanoseconds: expected 90000000000, got null (and 3 more)"#
            ))
        // Every message both ways validates against the protocol's schema, feedback ones included.
        let validator = try protocolValidator()
        var types: Set<String> = []
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let message = try JSONValue(parsing: String(line))
            types.insert(message["type"]?.string ?? "?")
            let violations = validator.violations(of: message)
            #expect(violations.isEmpty, "\(line.prefix(300)): \(violations.prefix(3))")
            if !violations.isEmpty { break }
        }
        #expect(types == ["hello", "feedback", "bye"])
    }

    @Test(
        "HTTP-1 HTTP-2 HTTP-6 a run that explores sends generated responses: the Retry-After reader agrees on every one of their Retry-After family, and a typo in its month or day table, which no vector sets up, is found there"
    )
    func generatedResponses() async throws {
        /// The DIFF lines of the generated responses of the Retry-After family (no RateLimit field).
        func retryAfterFamily(_ output: String) -> [Substring] {
            output.split(separator: "\n").filter {
                $0.hasPrefix("DIFF server-feedback/generated-") && $0.contains("-retry-after (")
            }
        }
        let clean = try await runCommand(["--exec", retryAfterOnly, "--budget", "10", "--seed", "3", "--json"])
        let report = try JSONValue(parsing: clean.output)
        let generated = try #require(report[FeedbackGenerator.label], "\(clean.output.prefix(2_000))")
        let cases = try #require(generated["cases"]?.int64)
        // It reads no RateLimit field: only those responses differ, each named with its fields.
        #expect(cases >= 100, "\(cases) generated responses")
        let differ = generated["differ"]?.array ?? []
        #expect(!differ.isEmpty && differ.allSatisfy { $0["id"]?.string?.contains("-ratelimit (") == true })
        let vectorsAlone = try await runCommand(["--exec", retryAfterOnly, "--quick"])
        for bug in ["september-as-sept", "thursday-misspelled"] {
            let quick = try await runCommand(["--exec", "\(retryAfterOnly) --bug \(bug)", "--quick"])
            let diffs = { (output: String) in output.split(separator: "\n").filter { $0.hasPrefix("DIFF ") } }
            #expect(diffs(quick.output) == diffs(vectorsAlone.output), "\(bug): the vectors alone see it")
            let explored = try await runCommand([
                "--exec", "\(retryAfterOnly) --bug \(bug)", "--budget", "10", "--seed", "3",
            ])
            #expect(explored.status == 1)
            #expect(!retryAfterFamily(explored.output).isEmpty, "\(bug): \(explored.output.suffix(3_000))")
        }
    }

    @Test("An implementation that does not declare server-feedback is not asked: the report says so and the run passes")
    func notDeclared() async throws {
        let run = try await runCommand([
            "--exec", Repository.python, "--case", "gcra/boundary-conforms,server-feedback/delay-seconds",
        ])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(
            run.output.contains("http: not run (the implementation does not declare the server-feedback extension)"))
        let json = try await runCommand(["--exec", Repository.python, "--case", "server-feedback", "--json"])
        let report = try JSONValue(parsing: json.output)
        #expect(report["http"]?["ran"] == .bool(false), "\(json.output)")
    }

    @Test("--json carries the HTTP cases that differ, each member named; an unknown extension fails the hello")
    func jsonAndUnknownExtension() async throws {
        let run = try await runCommand(["--exec", retryAfterOnly, "--case", "server-feedback/draft-example", "--json"])
        #expect(run.status == 1)
        let report = try JSONValue(parsing: run.output)
        let http = try #require(report["http"])
        #expect(http["cases"] == .integer(1) && http["asSpecified"] == .integer(0))
        let listed = try #require(http["differ"]?.array?.first?["differences"]?.array)
        let differences = listed.compactMap { $0.string }
        #expect(
            differences.map { String($0.prefix { $0 != ":" }) } == [
                "limits", "policies", "remainingQuota", "statedRate",
            ])
        #expect(report["passed"] == .bool(false))
        let unknown = try await runCommand(["--exec", "\(retryAfterOnly) --extensions server-feedback,telepathy"])
        #expect(unknown.status == 3, "an invalid hello: the implementation could not be run")
        #expect(unknown.errors.contains(#"unknown extension "telepathy""#), "\(unknown.errors)")
    }
}

// MARK: - Soundness and robustness (CONF-1 to CONF-11), each driven by a small hostile child

/// The Python example with its answers rewritten by `mode` (Fixtures/hostile.py).
private func hostile(_ mode: String, profile: String? = nil, pids: String? = nil) -> String {
    var command = "python3 \(fixtures)/hostile.py --mode \(mode)"
    if let profile { command += " --profile '\(profile)'" }
    if let pids { command += " --pids \(pids)" }
    return command
}

@Suite("The ratelimit-conformance command's verdicts and robustness")
struct VerdictTests {
    @Test("CONF-2 Every random trace runs at level safety: a conservative trace does not hide a later over-admission")
    func conservativeThenUnsafe() async throws {
        let run = try await runCommand([
            "--exec", hostile("conservative-then-unsafe"), "--no-vectors", "--random", "300", "--seed", "1",
            "--level", "safety", "--strategy", "token-bucket",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("over-admission"))
        let row = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("token-bucket ") })
        let counts = try #require(row.split(separator: " ").first { $0.filter { $0 == "/" }.count == 2 })
        let failed = Int(counts.split(separator: "/")[2]) ?? 0
        #expect(failed > 1, "every trace ran and was counted exact/safe/failed: \(row)")
    }

    @Test("CONF-2 A run of random traces alone is a run: it passes, and a --case that matches nothing is a usage error")
    func randomTracesAlone() async throws {
        let run = try await runCommand(["--no-vectors", "--random", "3", "--seed", "2"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("PASS: \(allStrategies) strategies conform"))
        let none = try await runCommand(["--case", "none", "--random", "3"])
        #expect(none.status == 2)
        #expect(none.errors.contains("--case none matches no vector case"))
        #expect(try await runCommand(["--random", "100001"]).status == 2)
        #expect(try await runCommand(["--random-steps", "0"]).status == 2)
        #expect(try await runCommand(["--random-steps", "10001"]).status == 2)
    }

    @Test(
        "CONF-1 Answers outside CORE-5 fail even level safety, named as malformed",
        arguments: ["zero-retry", "negative-retry", "negative-remaining", "past-end"])
    func malformedAnswers(_ mode: String) async throws {
        let run = try await runCommand([
            "--quick", "--exec", hostile(mode), "--level", "safety", "--strategy", "gcra,leaky-bucket-meter",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("malformed answer"), "\(run.output)")
    }

    @Test("CONF-4 CORE-9 An acquire(-n) answered allowed(1000) is an over-promise at level safety")
    func admittedInvalidEvent() async throws {
        let run = try await runCommand([
            "--quick", "--exec", hostile("admit-invalid"), "--level", "safety", "--strategy", "token-bucket",
        ])
        #expect(run.status == 1)
        #expect(run.output.contains("FAIL token-bucket CORE-9 negative permits: over-promise"), "\(run.output)")
    }

    @Test("CONF-4 CORE-7 rejected where the Spec answers neverAllowed fails level safety")
    func neverAllowedAsRejected() async throws {
        let run = try await runCommand([
            "--quick", "--exec", hostile("never-as-rejected"), "--level", "safety", "--strategy", "fixed-window",
        ])
        #expect(run.status == 1)
        #expect(run.output.contains("CORE-7 never allowed: retry forever"), "\(run.output)")
    }

    @Test(
        "CONF-5 CONF-9 A limiter that never admits fails level safety, and the report shows it admitted 0%",
        arguments: ["reject-everything", "reject-retry-1"])
    func neverAdmits(_ mode: String) async throws {
        let run = try await runCommand(["--quick", "--exec", hostile(mode), "--level", "safety", "--strategy", "gcra"])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("liveness"), "\(run.output)")
        let row = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("gcra ") })
        #expect(row.contains(" 0.0% "), "\(row)")
    }

    @Test(
        "CONF-5 A limiter that refuses one quantum at a time, admitting only when its own retry-after forces it, fails level safety"
    )
    func sustainedRefusal() async throws {
        let run = try await runCommand([
            "--exec", hostile("stingy"), "--level", "safety", "--random", "20", "--seed", "2",
        ])
        #expect(run.status == 1)
        #expect(run.output.contains("although the Spec admits it at every step since"), "\(run.output)")
        for strategy in AnyRateLimitStrategy.identifiers where strategy != "concurrency" {
            let row = try #require(run.output.split(separator: "\n").first { $0.hasPrefix(strategy + " ") })
            #expect(row.contains(" failed "), "\(row)")
        }
    }

    @Test(
        "CONF-1 CONF-5 A reset answered invalid is malformed; a release or reconfigure refused as invalid, where the Spec applies it, fails liveness"
    )
    func refusedAdministration() async throws {
        let run = try await runCommand([
            "--quick", "--exec", hostile("refuse-admin"), "--level", "safety", "--strategy", "token-bucket,concurrency",
        ])
        #expect(run.status == 1)
        #expect(run.output.contains("FAIL token-bucket TB-9 reset: malformed answer"), "\(run.output)")
        #expect(run.output.contains("refuses a reconfigure the Spec applies"))
        #expect(run.output.contains("refuses a release the Spec applies"))
    }

    @Test("CONF-11 A garbled answer to the final drop fails the case, naming the drop")
    func garbledDrop() async throws {
        let run = try await runCommand([
            "--exec", hostile("drop-garbage"), "--strategy", "gcra", "--case", "gcra/boundary-conforms",
        ])
        #expect(run.status == 1)
        let line = try #require(
            run.output.split(separator: "\n").first { $0.hasPrefix("FAIL gcra/boundary-conforms") }, "\(run.output)")
        #expect(line.contains(" drop: invalid JSON") && line.contains("received: this is not JSON"), "\(line)")
    }

    @Test("CONF-11 A child that answers twice is a protocol error naming the extra line")
    func answersTwice() async throws {
        let run = try await runCommand([
            "--exec", hostile("answer-twice"), "--strategy", "gcra", "--case", "gcra/boundary-conforms",
        ])
        #expect(run.status == 1)
        let line = try #require(
            run.output.split(separator: "\n").first { $0.hasPrefix("FAIL gcra/boundary-conforms") }, "\(run.output)")
        #expect(line.contains("step 2 at"), "\(line)")
        #expect(line.contains("answered twice") && line.contains("received: {\"type\":\"result\""), "\(line)")
    }

    @Test(
        "CONF-7 the quick start's GCRA of about 50 lines (Spec/QuickStart.md) conforms exactly on the vectors and random traces"
    )
    func quickStart() async throws {
        let file = "Examples/quickstart/gcra.py"
        let lines = try String(contentsOfFile: Repository.path(file), encoding: .utf8).split(separator: "\n").count
        #expect(lines <= 60, "\(file) has \(lines) lines: the quick start promises about 50")
        for arguments in [["--quick"], ["--no-vectors", "--random", "40", "--random-steps", "2000", "--seed", "1"]] {
            let run = try await runCommand(["--exec", "python3 \(file)"] + arguments)
            #expect(run.status == 0, "\(arguments): \(run.output)\(run.errors)")
            #expect(run.output.contains("gcra                     exact "), "\(run.output)")
            #expect(run.output.contains("PASS: 1 of 12 strategies conform at level exact"), "\(run.output)")
        }
    }

    @Test("The printed replay command reproduces the shrunk failure exactly, --random-steps included")
    func replayReproduces() async throws {
        let buggy = Repository.python + " --bug float-accumulation"
        let run = try await runCommand([
            "--exec", buggy, "--strategy", "token-bucket", "--no-vectors", "--random", "100", "--random-steps", "30",
            "--seed", "3", "--level", "safety",
        ])
        #expect(run.status == 1)
        let replay = try #require(
            run.output.split(separator: "\n").first { $0.hasPrefix("replay: ") }?.dropFirst("replay: ".count))
        #expect(replay.contains("--random-steps 30") && replay.contains("--level safety"), "\(replay)")
        let again = try await runShell(
            String(replay).replacingOccurrences(
                of: "ratelimit-conformance", with: Repository.command, options: .anchored))
        #expect(again.status == 1, "\(again.output)")
        // The limiters' protocol ids ("id":"L113") count the limiters made before: not part of the failure.
        func table(_ output: String) -> String? {
            output.components(separatedBy: "fails (").dropFirst().first?.components(separatedBy: "replay:").first?
                .replacing(/"id":"L[0-9]+"/, with: "\"id\":\"L\"")
        }
        #expect(table(again.output) != nil && table(again.output) == table(run.output), "\(again.output)")
    }

    @Test("--json names one step per finding, a crash included, and a failure before any case still prints JSON")
    func jsonRecords() async throws {
        let run = try await runCommand([
            "--exec", "python3 \(fixtures)/misbehave.py --mode crash --at 2", "--json", "--strategy", "fixed-window",
            "--case", "fixed-window/window-edges",
        ])
        let report = try JSONValue(parsing: run.output)
        let failure = try #require(report["strategies"]?.array?.first?["failures"]?.array?.first)
        #expect(failure["misbehaviour"] == .string("crashed"))
        let steps = try #require(failure["steps"]?.array)
        let crash = try #require(steps.first { $0["kind"] == .string("misbehaviour") })
        #expect(crash["step"] == .integer(2))
        #expect(crash["explanation"]?.string?.contains("step") == false, "the message names no other step: \(crash)")
        let early = try await runCommand(["--exec", "python3 \(fixtures)/misbehave.py --mode bad-hello", "--json"])
        #expect(early.status == 3)
        let document = try JSONValue(parsing: early.output)
        #expect(document["passed"] == .bool(false))
        #expect(document["error"]?.string?.contains("did not start properly") == true)
    }

    @Test(
        "CONF-7 The harness keeps to a declared profile: unit, largest instant, monotonic clock, events; and says what it did not check"
    )
    func profileKeptTo() async throws {
        let profile =
            #"{"timeUnitNanoseconds":1000,"largestInstantNanoseconds":1000000000000000000,"monotonic":true,"events":["weighted","query","invalid"]}"#
        let run = try await runCommand([
            "--exec", hostile("none", profile: profile), "--random", "20", "--seed", "4",
            "--strategy", "token-bucket,fixed-window,gcra",
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("(protocol 2)"))
        #expect(run.output.contains("CHECKED token-bucket: "))
        #expect(run.output.contains("NOT CHECKED token-bucket: CORE-10 time going backwards (monotonic clock)"))
        #expect(run.output.contains("NOT CHECKED gcra: CORE-12 reset"))
        #expect(
            run.output.contains(
                "NOT CHECKED fixed-window: CORE-1 instants and spans finer than the profile's unit of 1000 ns"))
        #expect(run.output.contains("outside the profile: time goes backwards (the profile's clock is monotonic)"))
        let columns = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("token-bucket ") }).split(
            separator: " ")
        #expect(
            columns[1] == "exact" && columns[columns.count - 2] == "exact",
            "refusal cases ran, scaled to the unit: \(columns)")
        let bad = try await runCommand(["--quick", "--exec", hostile("none", profile: #"{"timeUnit":1000}"#)])
        #expect(bad.status == 3, "an invalid hello: the implementation could not be run")
        #expect(bad.errors.contains("unknown profile member \"timeUnit\""), "\(bad.errors)")
        let loose = try await runCommand([
            "--quick", "--exec", hostile("none", profile: #"{"toleranceNanoseconds":2000000000}"#),
        ])
        #expect(loose.status == 3)
        #expect(loose.errors.contains("must be at most 1000000000 (one second)"), "\(loose.errors)")
        #expect(try await runCommand(["--tolerance", "1000000001"]).status == 2)
    }

    @Test("CONF-6 A tolerance declared in the profile is stated in the report, and --tolerance 0 judges strictly")
    func toleranceStated() async throws {
        let profile = #"{"toleranceNanoseconds":2}"#
        let run = try await runCommand(["--quick", "--exec", hostile("none", profile: profile), "--strategy", "gcra"])
        #expect(run.status == 0)
        #expect(run.output.contains(" exact ±2ns "), "\(run.output)")
        #expect(run.output.contains("conform at level exact or better (within the tolerance shown by ±)"))
        let strict = try await runCommand([
            "--quick", "--exec", hostile("none", profile: profile), "--strategy", "gcra", "--tolerance", "0",
        ])
        #expect(strict.status == 0)
        #expect(!strict.output.contains("±"), "\(strict.output)")
    }
}

/// The command's own timeouts and signals: what real time (a child that never answers, a signal)
/// does to a run, judged in served time.
@Suite(
    "The ratelimit-conformance command in real time: timeouts, hangs and signals", .serialized, .tags(.realTime),
    .realTime(patience: .seconds(3 * 60)))
struct CommandRealTimeTests {
    @Test("A hanging implementation times out, is killed and reaped; the harness never hangs")
    func hang() async throws {
        let run = try await runCommand(
            [
                "--exec", misbehaving("hang"), "--strategy", "fixed-window", "--case", "fixed-window/window-edges",
                "--timeout", "1",
            ], limit: .seconds(30))
        #expect(run.status == 1)
        #expect(run.output.contains("no answer within 1.0 s"), "\(run.output)")
        #expect(run.served < .seconds(15), "\(run.served)")
    }

    @Test(
        "CONF-11 A child that crashes or hangs at every case costs three cases per strategy, then the strategy stops",
        arguments: [("crash-always", "crashed"), ("hang-always", "did not answer in time")])
    func boundedCost(_ mode: String, _ reason: String) async throws {
        let run = try await runCommand(
            ["--exec", hostile(mode), "--strategy", "gcra,fixed-window", "--random", "50", "--timeout", "1"],
            limit: .seconds(60))
        #expect(run.status == 1)
        #expect(
            run.output.contains("STOP gcra: stopped after 3 consecutive cases in which the implementation \(reason); "),
            "\(run.output)")
        #expect(run.output.contains("STOP fixed-window: stopped after 3"))
        #expect(run.served < .seconds(20), "\(run.served)")
    }

    @Test(
        "CONF-11 SIGTERM and SIGINT end the implementation's whole process group, grandchildren included",
        arguments: [SIGTERM, SIGINT])
    func signalsEndTheGroup(_ signal: Int32) async throws {
        try await inHeavyLane { try await signalsEndTheGroupNow(signal) }
    }

    private func signalsEndTheGroupNow(_ signal: Int32) async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let pids = (folder as NSString).appendingPathComponent("pids")
        guard mkfifo(pids, 0o600) == 0 else {
            Issue.record("mkfifo failed")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Repository.command)
        process.arguments = ["--exec", hostile("grandchild", pids: pids), "--timeout", "600", "--strategy", "gcra"]
        process.currentDirectoryURL = Repository.root
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The child writes its pid and its grandchild's into the FIFO once both run, then hangs;
        // both hold the FIFO open, so its reader sees the end of file when both have ended.
        let reader = await withCheckedContinuation { (opened: CheckedContinuation<Int32, Never>) in
            Thread { opened.resume(returning: open(pids, O_RDONLY)) }.start()  // blocks until the child opens it
        }
        defer { close(reader) }
        // The FIFO is polled off the cooperative pool: a test blocks none of its threads.
        let line = await offThePool {
            var line = ""
            while !line.hasSuffix("\n"), let text = readChunk(reader, waiting: 30_000) { line += text }
            return line
        }
        #expect(line.split(separator: " ").count == 2, "the child wrote its pid and its grandchild's: \(line)")
        kill(process.processIdentifier, signal)
        await withCheckedContinuation { (ended: CheckedContinuation<Void, Never>) in
            Thread {
                process.waitUntilExit()
                ended.resume()
            }.start()
        }
        #expect(process.terminationStatus == 128 + signal)
        let ended = await offThePool {
            while let text = readChunk(reader, waiting: 10_000), !text.isEmpty {}
            return readChunk(reader, waiting: 0) == ""
        }
        #expect(ended, "the child or its grandchild outlived the harness (\(line))")
    }
}

/// Runs `command` with /bin/sh from the repository root.
private func runShell(_ command: String) async throws -> CommandRun {
    try await runCommand(["-c", command], executable: "/bin/sh")
}

/// What the FIFO `descriptor` holds next: text, "" at the end of file (every writer gone), or
/// `nil` when nothing came within `milliseconds`.
private func readChunk(_ descriptor: Int32, waiting milliseconds: Int32) -> String? {
    var ready = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
    guard poll(&ready, 1, milliseconds) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
}

/// `10 of 10`: every strategy of the Spec, as a passing run's last line counts them.
private let allStrategies = "\(AnyRateLimitStrategy.identifiers.count) of \(AnyRateLimitStrategy.identifiers.count)"
