import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

// What the report says of its findings (Spec/Conformance.md, CONF-10): headers that do not
// mislead.

@Suite("CONF-10 the report's headers say what the cases are")
struct ReportTextTests {
    @Test(
        "CONF-10 a group's header counts its cases by kind: an over-admission does not hide among malformed answers, nor a failure among differences"
    )
    func groupCountsByKind() async throws {
        let run = try await runCommand([
            "--exec", "\(Repository.python) --bug window-edge-off-by-one", "--quick", "--strategy", "fixed-window",
            "--json",
        ])
        #expect(run.status == 1)
        let report = try JSONValue(parsing: run.output)
        let findings = report["strategies"]?.array?.first?["findings"]?.array ?? []
        // FW-3 has two causes: the edges, and (by experiment) windows aligned to the creation.
        let edges = try #require(
            findings.first { $0["clause"] == .string("FW-3") && $0["cause"] == .string("window edges") }, "\(findings)")
        let cases = edges["cases"]?.array?.count ?? 0
        guard case .object(let byKind)? = edges["casesByKind"] else {
            Issue.record("no casesByKind: \(edges)")
            return
        }
        #expect(byKind.reduce(0) { $0 + Int($1.1.int64 ?? 0) } == cases, "\(byKind) of \(cases)")
        #expect(byKind.contains { $0.0 == "over-admission" }, "\(byKind)")
        #expect(byKind.count > 1, "the group mixes kinds: \(byKind)")

        let text = try await runCommand([
            "--exec", "\(Repository.python) --bug window-edge-off-by-one", "--quick", "--strategy", "fixed-window",
        ])
        let header = try #require(
            text.output.split(separator: "\n").first { $0.hasPrefix("FAIL fixed-window FW-3 window edges") })
        let counts = byKind.map { "\($0.1.int64 ?? 0) \($0.0)" }.joined(separator: ", ")
        #expect(header.contains("\(cases) cases: \(counts)"), "\(header)")
    }

    @Test("CONF-2 --html of one run is titled as that implementation's report, not as the matrix")
    func singleRunTitle() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let page = "\(folder)/report.html"
        let run = try await runCommand([
            "--exec", Repository.python, "--quick", "--strategy", "gcra", "--html", page,
        ])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<title>Conformance report: python-example"), "\(html.prefix(400))")
        #expect(!html.contains("conformance matrix"))
    }

    @Test("Messages name the flag given and the reason, not an error object; --help names every extension")
    func messages() async throws {
        let draw = try await runCommand(["--draw", "nonexistent/case"])
        #expect(draw.status == 2)
        #expect(draw.errors.contains("--draw nonexistent/case matches no vector case"), "\(draw.errors)")
        let html = try await runCommand(["--quick", "--exec", Repository.python, "--html", "/nonexistent/dir/x.html"])
        #expect(html.status == 2)
        #expect(
            html.errors.contains("cannot write /nonexistent/dir/x.html: No such file or directory"), "\(html.errors)")
        #expect(!html.errors.contains("NSCocoaErrorDomain"), "\(html.errors)")
        let help = try await runCommand(["--help"])
        for machine in ScenarioMachine.allCases { #expect(help.output.contains(machine.rawValue), "\(machine)") }
        #expect(help.output.contains("server-feedback"))
    }

    @Test(
        "--mutation-score records a bug whose implementation does not start and goes on to the next; its table fits 100 columns"
    )
    func mutationScoreGoesOn() async throws {
        let command = "python3 Tests/RateLimitConformanceTests/Fixtures/bug-does-not-start.py"
        let run = try await runCommand(
            ["--exec", command, "--mutation-score", "--quick", "--strategy", "fixed-window"], limit: .seconds(300))
        #expect(run.status == 1, "not every bug is in fixed-window: \(run.output)\(run.errors)")
        let lines = run.output.split(separator: "\n")
        let row = try #require(lines.first { $0.hasPrefix("window-edge-off-by-one ") }, "\(run.output)")
        #expect(row.contains("NO START"), "\(row)")
        let reason = try #require(lines.first { $0.hasPrefix("DID NOT START window-edge-off-by-one: ") })
        #expect(reason.contains("exit status 3"), "\(reason)")
        #expect(lines.contains { $0.hasPrefix("window-aligned-to-creation ") && $0.contains(" caught ") }, "went on")
        #expect(run.output.contains("; 1 did not start"), "\(run.output)")
        #expect(
            lines.filter { !$0.hasPrefix("DID NOT START") }.allSatisfy { $0.count <= 100 },
            "\(lines.filter { $0.count > 100 })")
    }
}
