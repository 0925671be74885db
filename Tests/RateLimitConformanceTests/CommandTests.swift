import Foundation
import RateLimitConformance
import Testing

private let fixtures = "Tests/RateLimitConformanceTests/Fixtures"

/// The command for the misbehaving fixture in `mode`.
private func misbehaving(_ mode: String, at event: Int = 1) -> String {
    "python3 \(fixtures)/misbehave.py --mode \(mode) --at \(event)"
}

@Suite("The ratelimit-conformance command", .serialized)
struct CommandTests {
    @Test("With no arguments it checks the reference against every vector and prints a per-strategy table")
    func noArguments() async throws {
        let run = try await runCommand([])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("strategy                level  cases  steps  exact  safety  failed  skipped  random    time"))
        for strategy in StrategyConfiguration.identifiers { #expect(run.output.contains("\(strategy) "), "\(strategy) missing") }
        #expect(run.output.contains("PASS: 9 of 9 strategies conform at level exact"))
    }

    @Test("--json prints a report machines can read; --strategy and --case filter it")
    func jsonAndFilters() async throws {
        let run = try await runCommand(["--json", "--strategy", "gcra,fixed-window", "--case", "gcra/boundary-conforms", "--case", "fixed-window"])
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
        let written = try await runCommand(["--write-vectors", folder])
        #expect(written.status == 0)
        for file in try VectorGenerator.files() {
            let text = try String(contentsOfFile: (folder as NSString).appendingPathComponent(file.fileName), encoding: .utf8)
            #expect(text == (try String(contentsOfFile: Repository.path("Spec/vectors/\(file.fileName)"), encoding: .utf8)))
        }
        let run = try await runCommand(["--vectors", folder, "--strategy", "concurrency"])
        #expect(run.status == 0)
        #expect(run.output.contains("vectors from \(folder)"))
    }

    @Test("A misbehaving implementation is a clear failure naming the case, the step and the line received",
          arguments: [
            ("invalid-json", "invalid JSON", "{this is not json"),
            ("wrong-id", "the answer's id is \"nope\"", "\"id\": \"nope\""),
            ("missing-field", "a result message needs \"result\"", "{\"type\":\"result\""),
            ("bad-result", "malformed result", "\"remaining\":\"many\""),
            ("stderr", "wrote to stderr: debug: thinking hard", "{\"type\": \"result\""),
            ("crash", "closed its output (exit status 3)", nil),
          ] as [(String, String, String?)])
    func misbehaviour(_ mode: String, _ message: String, _ received: String?) async throws {
        let run = try await runCommand(["--exec", misbehaving(mode, at: 2), "--strategy", "fixed-window", "--case", "fixed-window/window-edges"])
        #expect(run.status == 1, "\(run.output)")
        let line = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("FAIL fixed-window/window-edges") }, "\(run.output)")
        #expect(line.contains("step 2 at 9 ns"), "\(line)")
        #expect(line.contains(message), "\(line)")
        if let received { #expect(line.contains("received: ") && line.contains(received), "\(line)") }
    }

    @Test("A hanging implementation times out, is killed and reaped; the harness never hangs")
    func hang() async throws {
        let run = try await runCommand(["--exec", misbehaving("hang"), "--strategy", "fixed-window", "--case", "fixed-window/window-edges",
                                  "--timeout", "1"], limit: 30)
        #expect(run.status == 1)
        #expect(run.output.contains("no answer within 1.0 s"), "\(run.output)")
        #expect(run.seconds < 15)
    }

    @Test("A broken handshake stops the run before any case")
    func badHello() async throws {
        let run = try await runCommand(["--exec", misbehaving("bad-hello")])
        #expect(run.status == 2)
        #expect(run.errors.contains("did not start properly"), "\(run.errors)")
    }

    @Test("After a crash the next case runs in a new process")
    func restartAfterCrash() async throws {
        let run = try await runCommand(["--exec", misbehaving("crash", at: 2), "--json", "--strategy", "fixed-window",
                                  "--case", "fixed-window/window-edges", "--case", "fixed-window/weighted"])
        let report = try JSONValue(parsing: run.output)
        let failures = try #require(report["strategies"]?.array?.first?["failures"]?.array)
        #expect(failures.count == 2, "both cases reach their second step in a fresh process: \(failures)")
    }

    // MARK: The Python example (Examples/python), an implementation written from the Spec alone

    @Test("The Python example passes every vector and 30 random traces per strategy at level exact")
    func pythonExampleIsExact() async throws {
        let run = try await runCommand(["--exec", Repository.python, "--random", "30", "--seed", "5"])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("PASS: 9 of 9 strategies conform at level exact"), "\(run.output)")
        #expect(!run.output.contains("DIFF") && !run.output.contains("FAIL "), "\(run.output)")
    }

    @Test("The suite catches every bug the Python example can inject, and prints the mutation score")
    func mutationScore() async throws {
        let run = try await runCommand(["--exec", Repository.python, "--mutation-score", "--random", "20", "--seed", "9"], limit: 300)
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let bugs = try #require(Int(String(run.output.split(separator: "\n").first { $0.hasPrefix("mutation score: ") }?
            .dropFirst("mutation score: ".count).prefix { $0 != "/" } ?? "")))
        #expect(bugs >= 10)
        #expect(run.output.contains("mutation score: \(bugs)/\(bugs) injected bugs caught"), "\(run.output)")
        #expect(run.output.contains("the implementation without bugs: passes at level exact"))
    }

    @Test("A bug found by a random trace is shrunk, printed as a table and a vector, and replays from a regression folder")
    func shrunkRegression() async throws {
        let folder = try Repository.temporaryDirectory()
        let buggy = Repository.python + " --bug float-accumulation"
        let run = try await runCommand(["--exec", buggy, "--strategy", "token-bucket", "--case", "token-bucket/none",
                                  "--random", "200", "--seed", "3", "--save-regression", folder])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("shrunk from"), "\(run.output)")
        #expect(run.output.contains("step  now (ns)  event"), "\(run.output)")
        #expect(run.output.contains("<- differs"))
        #expect(run.output.contains("replay: ratelimit-conformance --exec \"\(buggy)\" --strategy token-bucket --random"))
        #expect(run.output.contains("\"format\": \"ratelimit-conformance-vectors\""))
        let saved = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(saved.count == 1)
        let replayBuggy = try await runCommand(["--exec", buggy, "--vectors", folder])
        #expect(replayBuggy.status == 1)
        let replayReference = try await runCommand(["--vectors", folder])
        #expect(replayReference.status == 0, "\(replayReference.output)")
    }

    @Test("Every message of a session validates against Spec/protocol.schema.json")
    func protocolTranscript() async throws {
        let log = (try Repository.temporaryDirectory() as NSString).appendingPathComponent("transcript.jsonl")
        let run = try await runCommand(["--exec", "python3 \(fixtures)/recorder.py " + Repository.python, "--random", "2", "--seed", "1"],
                                 environment: ["RECORD_FILE": log])
        #expect(run.status == 0, "\(run.output)")
        let validator = JSONSchemaValidator(
            root: try Repository.json("Spec/protocol.schema.json"),
            others: ["vectors/schema.json": try Repository.json("Spec/vectors/schema.json")])
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
        #expect(types == ["hello", "create", "created", "refused", "event", "result", "drop", "dropped", "bye"])
    }
}
