import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

/// Spec/protocol.schema.json, with the schemas it refers to.
func protocolValidator() throws -> JSONSchemaValidator {
    JSONSchemaValidator(
        root: try Repository.json("Spec/protocol.schema.json"),
        others: [
            "vectors/schema.json": try Repository.json("Spec/vectors/schema.json"),
            "vectors/http/schema.json": try Repository.json("Spec/vectors/http/schema.json"),
            "vectors/scenarios/schema.json": try Repository.json("Spec/vectors/scenarios/schema.json"),
        ])
}

/// The fixture that reads only Retry-After and Date (Fixtures/retry_after_only.py).
let retryAfterOnly = "python3 \(fixtures)/retry_after_only.py"

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

    @Test(
        "HTTP-2 CONF-7 an implementation that names the feedback members it fills is judged on those alone, the rest listed NOT CHECKED; an unknown name fails its hello"
    )
    func declaredFeedbackMembers() async throws {
        let all = try await runCommand(["--quick", "--exec", retryAfterOnly])
        let members = "retryAfter,requestedWaitNanoseconds,date,reference"
        let declared = try await runCommand(["--quick", "--exec", "\(retryAfterOnly) --feedback-members \(members)"])
        func differing(_ output: String) -> [Substring] {
            output.split(separator: "\n").filter { $0.hasPrefix("DIFF server-feedback/") }
        }
        let named = Set(members.split(separator: ","))
        #expect(!differing(declared.output).isEmpty, "X-RateLimit-Reset's wait is still the Spec's: \(declared.output)")
        #expect(differing(declared.output).count < differing(all.output).count)
        for line in differing(declared.output) {
            let member = line.split(separator: ": ").dropFirst().first?.prefix { $0 != "." && $0 != ":" } ?? ""
            #expect(named.contains(member), "\(line)")
        }
        #expect(
            declared.output.contains(
                "NOT CHECKED http: members the implementation does not declare it fills (feedbackMembers): limits, policies, xRateLimit, remainingQuota, statedRate, diagnostics"
            ), "\(declared.output)")
        let part = try await runCommand(
            ["--quick", "--exec", "\(retryAfterOnly) --feedback-members requestedWaitNanoseconds,xRateLimit.limit"])
        #expect(part.output.contains("xRateLimit.remaining, xRateLimit.used"), "\(part.output)")
        #expect(!part.output.contains(": xRateLimit.remaining:"), "an undeclared field is not compared")
        let typo = try await runCommand(["--quick", "--exec", "\(retryAfterOnly) --feedback-members retryAfterr"])
        #expect(typo.status == 3, "\(typo.output)\(typo.errors)")
        #expect((typo.output + typo.errors).contains("unknown feedback member \"retryAfterr\""))
    }
}
