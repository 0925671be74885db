import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

let fixtures = "Tests/RateLimitConformanceTests/Fixtures"

/// The command for the misbehaving fixture in `mode`, accepting a window (pipelining) when `pipelined`.
func misbehaving(_ mode: String, at event: Int = 1, pipelined: Bool = false) -> String {
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
}

/// Runs `command` with /bin/sh from the repository root.
func runShell(_ command: String) async throws -> CommandRun {
    try await runCommand(["-c", command], executable: "/bin/sh")
}

/// What the FIFO `descriptor` holds next: text, "" at the end of file (every writer gone), or
/// `nil` when nothing came within `milliseconds`.
func readChunk(_ descriptor: Int32, waiting milliseconds: Int32) -> String? {
    var ready = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
    guard poll(&ready, 1, milliseconds) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : ""
}

/// `10 of 10`: every strategy of the Spec, as a passing run's last line counts them.
let allStrategies = "\(AnyRateLimitStrategy.identifiers.count) of \(AnyRateLimitStrategy.identifiers.count)"

extension CommandTests {
    @Test("CONF-11 the implementation's process inherits its three pipes and no other descriptor of the harness")
    func noInheritedDescriptors() throws {
        guard FileManager.default.fileExists(atPath: "/proc/self/fd") else { return }  // Linux's /proc only
        // A pipe as a test's redis-server watcher holds one: open in this process, not close-on-exec.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let child = try ChildProcess(
            command: "for d in 0 1 2 \(ends[0]) \(ends[1]); do [ -e /proc/$$/fd/$d ] && printf '%s ' $d; done; echo")
        defer { child.close() }
        // A hang guard only: the answer comes at once.
        #expect(try child.receiveLine(timeout: 120) == "0 1 2 ", "the descriptors open in the child")
    }

    @Test("CONF-11 an implementation that exits before its first line is read keeps what it said on stderr")
    func stderrOfAnEarlyExit() async throws {
        let child = try ChildProcess(command: "echo 'sh: 1: no-such-command: not found' >&2; exit 127")
        defer { child.close() }
        // A hang guard only: the shell exits at once.
        #expect(await eventually(within: .seconds(60)) { !child.isRunning })
        #expect(throws: SubjectFailureReason.self) { try child.send("{}") }
        #expect(child.errorText.contains("not found"), "\(child.errorText)")
    }
}
