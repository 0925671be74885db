import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// Soundness and robustness (CONF-1 to CONF-11), each driven by a small hostile child.

/// The Python example with its answers rewritten by `mode` (Fixtures/hostile.py).
func hostile(_ mode: String, profile: String? = nil, pids: String? = nil) -> String {
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
        arguments: ["zero-retry", "negative-retry", "negative-remaining"])
    func malformedAnswers(_ mode: String) async throws {
        let run = try await runCommand([
            "--quick", "--exec", hostile(mode), "--level", "safety", "--strategy", "gcra,leaky-bucket-meter",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("malformed answer"), "\(run.output)")
    }

    @Test(
        "CONF-1 CONF-5 A wait past the end of the timeline where the Spec admits sooner is well formed, and a liveness failure"
    )
    func waitPastTheEnd() async throws {
        let run = try await runCommand([
            "--quick", "--exec", hostile("past-end"), "--level", "safety", "--strategy", "gcra,leaky-bucket-meter",
        ])
        #expect(run.status == 1, "\(run.output)")
        #expect(!run.output.contains("malformed answer"), "\(run.output)")
        #expect(run.output.contains("passes the end of the timeline, where the Spec admits at"), "\(run.output)")
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
