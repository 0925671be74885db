import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

// The regression gate (Spec/Conformance.md, CONF-12): expectations written from a run, a later
// run judged against them, and the run as JUnit XML.

@Suite("CONF-12 expectations: a regression gate")
struct ExpectationTests {
    private let over = Expectation(scope: "token-bucket", cause: "TB-4 acquire", kind: "over-admission")
    private let early = Expectation(scope: "gcra", cause: "GCRA-6 retry-after", kind: "early retry")

    @Test("CONF-12 a file round-trips through its text, sorted, one expectation per line")
    func roundTrip() throws {
        let file = ExpectationFile(implementation: "x \"quoted\"", expectations: [over, early, over])
        #expect(file.expectations == [early, over])
        let text = file.text
        #expect(text.split(separator: "\n").filter { $0.contains("\"scope\"") }.count == 2, "\(text)")
        #expect(try ExpectationFile(parsing: text) == file)
    }

    @Test("CONF-12 a finding not expected, or worse than expected, is new; one expected and not seen is listed")
    func verdicts() {
        let file = ExpectationFile(implementation: "x", expectations: [over, early])
        let same = file.verdict([over, early])
        #expect(same.passes && same.expected.count == 2 && same.noLongerObserved.isEmpty)
        // Milder than expected passes; the expectation stays observed.
        let milder = file.verdict([Expectation(scope: "gcra", cause: "GCRA-6 retry-after", kind: "difference")])
        #expect(milder.passes && milder.noLongerObserved == [over])
        // Worse than expected fails, naming the expectation it exceeds.
        let worse = file.verdict([Expectation(scope: "gcra", cause: "GCRA-6 retry-after", kind: "over-admission")])
        #expect(!worse.passes)
        #expect(worse.unexpected.first?.expected == early)
        #expect(worse.lines.first == "NEW (worse than expected, early retry) gcra: GCRA-6 retry-after (over-admission)")
        // Another scope is another finding, whatever its cause.
        let moved = file.verdict([
            Expectation(scope: "exhaustive token-bucket", cause: "TB-4 acquire", kind: "difference")
        ])
        #expect(!moved.passes && moved.unexpected.first?.expected == nil)
    }

    @Test(
        "CONF-12 a malformed file is refused naming what is wrong",
        arguments: [
            ("{}", "declares \"format\""),
            (#"{"format": "ratelimit-conformance-expectations", "formatVersion": 1}"#, "\"expected\" array"),
            (
                #"{"format": "ratelimit-conformance-expectations", "formatVersion": 1, "expected": [{"scope": "a", "cause": "b"}]}"#,
                "expected[0] is"
            ),
            (
                #"{"format": "ratelimit-conformance-expectations", "formatVersion": 1, "expected": [{"scope": "a", "cause": "b", "kind": "bad"}]}"#,
                "\"bad\" is not a kind"
            ),
            ("not json", "is JSON"),
        ])
    func malformed(text: String, message: String) {
        #expect {
            _ = try ExpectationFile(parsing: text)
        } throws: { error in
            (error as? ConformanceFormatError)?.message.contains(message) == true
        }
    }

    @Test(
        "CONF-12 --write-expect then --expect: the same bug exits 0, a second bug exits 1 naming only its findings; --junit is XML with a failure per finding"
    )
    func gateOnThePythonExample() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let file = "\(folder)/expectations.json"
        let one = "\(Repository.python) --bug window-edge-off-by-one"
        let written = try await runCommand(["--exec", one, "--quick", "--write-expect", file])
        #expect(written.status == 1, "the bug is found: \(written.output)")
        let expectations = try ExpectationFile(parsing: try String(contentsOfFile: file, encoding: .utf8))
        #expect(!expectations.expectations.isEmpty && expectations.expectations.allSatisfy { $0.kind != "thin" })
        #expect(expectations.expectations.contains { $0.scope == "fixed-window" && $0.cause.hasPrefix("FW-3") })

        let junit = "\(folder)/run.xml"
        let same = try await runCommand(["--exec", one, "--quick", "--expect", file, "--junit", junit])
        #expect(same.status == 0, "\(same.output)\(same.errors)")
        #expect(same.output.contains("GATE PASS: every finding is expected"), "\(same.output)")
        #expect(same.output.contains("\(expectations.expectations.count) findings expected, 0 new or worse"))

        let two = try await runCommand([
            "--exec", "\(one) --bug retry-after-rounded-down", "--quick", "--expect", file, "--json",
        ])
        #expect(two.status == 1, "\(two.output)")
        let report = try JSONValue(parsing: two.output)
        let items = report["expectations"]?["unexpected"]?.array ?? []
        let unexpected = items.compactMap { $0.string }
        #expect(!unexpected.isEmpty)
        #expect(report["expectations"]?["passed"] == .bool(false))
        // Only the second bug's findings are new: none of the first's, none of another strategy's.
        for line in unexpected {
            #expect(!expectations.expectations.map(\.description).contains(line), "\(line)")
            #expect(line.hasPrefix("token-bucket:") || line.hasPrefix("leaky-bucket-meter:"), "\(line)")
        }

        let xml = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(xml.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))
        #if canImport(FoundationXML)
            let document = try XMLDocument(xmlString: xml)
            let failures = try document.nodes(forXPath: "//failure")
            let cases = try document.nodes(forXPath: "//testcase")
            #expect(cases.count > 200, "one per vector case")
            // Each failure is a failing vector case of a finding the file expects.
            #expect(failures.count >= expectations.expectations.count, "\(failures.count) failures")
            let messages = failures.compactMap { ($0 as? XMLElement)?.attribute(forName: "message")?.stringValue }
            #expect(messages.contains { $0.hasPrefix("FW-3") }, "\(messages)")
        #endif
    }

    @Test(
        "CONF-12 The CI recipe (Examples/ci/conformance-gate.sh): its first run writes the expectations and passes, a later run fails on a new bug only, and an implementation that cannot run fails it"
    )
    func ciRecipe() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let file = "\(folder)/expectations.json"
        let environment = [
            "RATELIMIT_CONFORMANCE": Repository.command, "RATELIMIT_ARGS": "--quick --timeout 300",
            "RATELIMIT_JUNIT": "\(folder)/run.xml",
        ]
        func gate(_ implementation: String) async throws -> CommandRun {
            try await runCommand(
                [Repository.path("Examples/ci/conformance-gate.sh"), implementation, file], environment: environment,
                executable: "/bin/bash")
        }
        let one = "\(Repository.python) --bug window-edge-off-by-one"
        let first = try await gate(one)
        #expect(first.status == 0, "\(first.output)\(first.errors)")
        #expect(first.output.contains("conformance-gate: wrote \(file); review it and commit it"))
        #expect(FileManager.default.fileExists(atPath: "\(folder)/run.xml"))
        #expect(try await gate(one).status == 0)
        let two = try await gate("\(one) --bug retry-after-rounded-down")
        #expect(two.status == 1 && two.output.contains("GATE FAIL"), "\(two.output)")
        #expect(!two.output.contains("NEW fixed-window"), "the first bug's findings are expected")
        let missing = try await gate("no-such-limiter-here")
        #expect(missing.status == 3, "\(missing.output)\(missing.errors)")
    }
}
