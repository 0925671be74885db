import Foundation
import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitConformance

/// The matrix of implementations (`--matrix`) and the pictures of traces (`--draw`), run on the
/// project's own Python example so that the code path never rots (the published matrix needs the
/// real libraries: `make matrix`).
@Suite("The conformance matrix and trace pictures")
struct MatrixTests {
    static let example = "python3 Examples/python/ratelimiter.py"

    @Test("CONF-3 --matrix runs every implementation of a file and writes the matrix as text, JSON, Markdown and HTML")
    func matrixOutputs() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let file = "\(folder)/matrix.json"
        try Data(
            """
            {"implementations": [
              {"name": "example", "version": "1", "command": "\(Self.example)"},
              {"name": "example with a float bucket", "version": "1",
               "command": "\(Self.example) --bug float-accumulation"}
            ]}
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let markdown = "\(folder)/MATRIX.md"
        let html = "\(folder)/matrix.html"
        let run = try await runCommand([
            "--matrix", file, "--strategy", "token-bucket,gcra", "--markdown", markdown, "--html", html,
        ])
        // Both ran, so the matrix is complete (exit 0); that one fails is its content.
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("implementation"))
        #expect(run.output.contains("example with a float bucket"))
        #expect(run.output.contains("FAIL token-bucket TB-4"), "\(run.output)")

        let page = try String(contentsOfFile: markdown, encoding: .utf8)
        #expect(page.contains("| implementation | version | expectations | token-bucket | gcra |"))
        #expect(page.contains("| [example](#example) | 1 | 0 | exact | exact |"), "\(page)")
        #expect(page.contains("**fails**"))
        #expect(page.contains("TB-4"))

        let document = try String(contentsOfFile: html, encoding: .utf8)
        #expect(document.hasPrefix("<!DOCTYPE html>"))
        #expect(!document.contains("<script"), "the page runs no script")
        #expect(!document.contains("src=\""), "the page loads no external file")
        #expect(document.components(separatedBy: "<svg").count - 1 >= 1, "a failing case is drawn")
        #expect(document.contains("class=\"divergence\""), "the first difference is marked")

        // Vectors and 3 short random traces: the same run as --exec with the same options.
        let same = ["--strategy", "token-bucket,gcra", "--random", "3", "--random-steps", "50", "--seed", "1"]
        let json = try await runCommand(["--matrix", file, "--json"] + same)
        let matrix = try JSONValue(parsing: json.output)
        #expect(matrix["format"] == .string("ratelimit-conformance-matrix"))
        let rows = try #require(matrix["implementations"]?.array)
        #expect(rows.compactMap { $0["name"]?.string } == ["example", "example with a float bucket"])
        #expect(rows.first?["strategies"]?.array?.first?["cell"] == .string("exact"))
        // A row's expectations are what --write-expect writes for the same run.
        let written = "\(folder)/float.expect"
        _ = try await runCommand(
            ["--exec", "\(Self.example) --bug float-accumulation", "--write-expect", written] + same)
        let expected = try ExpectationFile(parsing: String(contentsOfFile: written, encoding: .utf8))
        #expect(!expected.expectations.isEmpty)
        #expect(rows.first?["expectations"] == .integer(0))
        #expect(rows.last?["expectations"] == .integer(Int64(expected.expectations.count)), "\(expected.expectations)")

        // Rows run at once (--jobs) give the same matrix, in the file's order.
        let together = try await runCommand(["--matrix", file, "--json", "--jobs", "2"] + same)
        #expect(together.status == 0, "\(together.errors)")
        #expect(try JSONValue(parsing: together.output) == matrix)
        let refused = try await runCommand(["--exec", Self.example, "--jobs", "2"])
        #expect(
            refused.status == 2 && refused.errors.contains("--jobs runs a matrix's rows at once"), "\(refused.errors)")
    }

    @Test(
        "CONF-3 the matrix shows each extension an implementation declares, exact or how many of its cases differ, and counts their findings among the row's expectations"
    )
    func matrixExtensions() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let file = "\(folder)/matrix.txt"
        try Data(
            """
            example | 1 | \(Self.example)
            example with a composite bug | 1 | \(Self.example) --bug composite-records-refused
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let same = ["--random", "1", "--random-steps", "10", "--seed", "1"]
        let markdown = "\(folder)/MATRIX.md"
        let run = try await runCommand(["--matrix", file, "--markdown", markdown] + same)
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let page = try String(contentsOfFile: markdown, encoding: .utf8)
        #expect(page.contains(" | concurrency | composite | wait-queue |"), "\(page)")
        let rows = page.split(separator: "\n").filter { $0.hasPrefix("| [example") }
        #expect(rows.count == 2)
        #expect(rows.first?.contains("| exact | exact | exact | exact |") == true, "\(rows)")
        let bugged = try #require(rows.last)
        #expect(bugged.contains(" of 9 differ |"), "\(bugged)")
        #expect(page.contains("composite (CompositeLimit.md): "), "the differing cases are named")

        let json = try JSONValue(parsing: try await runCommand(["--matrix", file, "--json"] + same).output)
        let last = try #require(json["implementations"]?.array?.last)
        let composite = last["extensions"]?.array?.first { $0["extension"] == .string("composite") }
        #expect((composite?["differing"]?.int64 ?? 0) > 0, "\(String(describing: composite))")
        // The row's expectations are what --write-expect writes for the same run, extensions included.
        let written = "\(folder)/composite.expect"
        _ = try await runCommand(
            ["--exec", "\(Self.example) --bug composite-records-refused", "--write-expect", written] + same)
        let expected = try ExpectationFile(parsing: String(contentsOfFile: written, encoding: .utf8))
        #expect(expected.expectations.contains { $0.scope == "composite" }, "\(expected.expectations)")
        #expect(last["expectations"] == .integer(Int64(expected.expectations.count)))
    }

    @Test("CONF-3 --history appends each matrix run as a JSON line and ends the Markdown with every run, newest first")
    func matrixHistory() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let file = "\(folder)/matrix.txt"
        try Data("example | 1 | \(Self.example)\n".utf8).write(to: URL(fileURLWithPath: file))
        let history = "\(folder)/history.jsonl"
        let markdown = "\(folder)/MATRIX.md"
        let arguments = [
            "--matrix", file, "--strategy", "gcra", "--random", "1", "--random-steps", "10", "--history", history,
            "--markdown", markdown,
        ]
        for _ in 1...2 {
            let run = try await runCommand(arguments)
            #expect(run.status == 0, "\(run.output)\(run.errors)")
        }
        let lines = try String(contentsOfFile: history, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let last = try JSONValue(parsing: String(try #require(lines.last)))
        let row = try #require(last["rows"]?.array?.first)
        #expect(row["name"] == .string("example") && row["version"] == .string("1"))
        #expect(row["cells"]?["gcra"] == .string("exact"))
        #expect(row["expectations"] == .integer(0))
        let page = try String(contentsOfFile: markdown, encoding: .utf8)
        #expect(page.contains("## History"))
        #expect(page.components(separatedBy: "| example | 1 | 0 | gcra: exact |").count - 1 == 2, "\(page)")
        try Data("not json\n".utf8).write(to: URL(fileURLWithPath: history))
        let broken = try await runCommand(arguments)
        #expect(broken.status != 0 && broken.errors.contains("is not JSON"), "\(broken.errors)")
        #expect(try String(contentsOfFile: history, encoding: .utf8) == "not json\n", "left as it was")
    }

    @Test("CONF-3 a matrix file is JSON or name | version | command lines; a bad one is refused with the reason")
    func matrixFiles() throws {
        let plain = try ConformanceMatrix.entries(
            from: "# implementations\n\nexample | 1 | python3 Examples/python/ratelimiter.py\n")
        #expect(plain == [.init(name: "example", version: "1", command: "python3 Examples/python/ratelimiter.py")])
        let json = try ConformanceMatrix.entries(from: #"[{"name": "a", "version": "2", "command": "run a"}]"#)
        #expect(json == [.init(name: "a", version: "2", command: "run a")])
        #expect(throws: ConformanceFormatError.self) { try ConformanceMatrix.entries(from: "a | 1\n") }
        #expect(throws: ConformanceFormatError.self) { try ConformanceMatrix.entries(from: "{}") }
        #expect(throws: ConformanceFormatError.self) {
            try ConformanceMatrix.entries(from: "a | 1 | run a\na | 2 | run b\n")
        }
        #expect(throws: ConformanceFormatError.self) { try ConformanceMatrix.entries(from: "{\"implementations\": [") }
    }

    @Test(
        "CONF-2 a case is drawn with the Spec's answers, the implementation's, the Spec's quota and the first difference"
    )
    func drawing() throws {
        let bucket = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 10)
        let trace = Trace(
            configuration: .tokenBucket(bucket), createdAt: 0,
            steps: [
                TraceStep(now: 0, event: .acquire(2)), TraceStep(now: 0, event: .acquire(1)),
                TraceStep(now: 5, event: .acquire(1)),
            ])
        var outcome = CaseOutcome(id: "drawn", origin: .story)
        outcome.trace = trace
        outcome.expected = [
            .allowed(remaining: 0), .rejected(retryAfterNanoseconds: 10), .rejected(retryAfterNanoseconds: 5),
        ]
        outcome.answers = [.allowed(remaining: 0), .rejected(retryAfterNanoseconds: 10), .allowed(remaining: 0)]
        let svg = try #require(TraceDrawing.svg(outcome, profile: .full, tolerance: 0))
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.components(separatedBy: "class=\"admitted\"").count - 1 == 3)
        #expect(svg.components(separatedBy: "class=\"refused\"").count - 1 == 3)
        #expect(svg.components(separatedBy: "class=\"retry\"").count - 1 == 3)
        #expect(svg.contains("first difference (step 3)"))
        #expect(svg.contains("class=\"quota\""))
        // A refusal of a configuration has no trace to draw.
        #expect(TraceDrawing.svg(CaseOutcome(id: "refusal", origin: .refusal), profile: .full, tolerance: 0) == nil)
    }

    @Test("CONF-2 --draw prints the SVG of one vector case")
    func drawCommand() async throws {
        let run = try await runCommand(["--draw", "token-bucket/starts-full"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.hasPrefix("<svg"))
        #expect(run.output.contains("token-bucket/starts-full"))
        let unknown = try await runCommand(["--draw", "token-bucket/no-such-case"])
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("no-such-case"))
    }
}

/// The matrix page in a real browser (Debian's chromium, when installed).
@Suite("The matrix page in a real browser", .tags(.realTime), .realTime())
struct MatrixBrowserRealTimeTests {
    @Test(
        "CONF-2 the HTML page renders in a real headless browser: no error, every picture drawn",
        .enabled(if: Browser.path != nil, "chromium is not installed: apt-get install chromium")
    )
    func rendersInBrowser() async throws {
        let browser = try #require(Browser.path)
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let file = "\(folder)/matrix.txt"
        try Data("bug | 1 | \(MatrixTests.example) --bug float-accumulation\n".utf8).write(
            to: URL(fileURLWithPath: file))
        let page = "\(folder)/matrix.html"
        let run = try await runCommand(["--matrix", file, "--strategy", "token-bucket", "--html", page])
        #expect(run.status == 0, "\(run.errors)")
        let source = try String(contentsOfFile: page, encoding: .utf8)
        let pictures = source.components(separatedBy: "<svg").count - 1
        #expect(pictures > 0, "a failing implementation's page has pictures")

        let flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
        let dom = try await runCommand(flags + ["--dump-dom", "file://\(page)"], executable: browser)
        #expect(dom.status == 0, "\(dom.errors)")
        #expect(dom.output.contains("Rate limiter conformance matrix"))
        #expect(dom.output.components(separatedBy: "<svg").count - 1 == pictures, "every picture parsed")
        for marker in ["class=\"quota\"", "class=\"divergence\""] {
            #expect(
                dom.output.components(separatedBy: marker).count == source.components(separatedBy: marker).count,
                "\(marker) kept by the browser")
        }
        // The page loads nothing and runs nothing: no console message, no failed load.
        let problems = dom.errors.split(separator: "\n").filter {
            $0.contains("CONSOLE") || $0.contains("net::ERR") || $0.contains("Uncaught")
        }
        #expect(problems.isEmpty, "\(problems)")

        let shot = "\(folder)/page.png"
        let screenshot = try await runCommand(
            flags + ["--hide-scrollbars", "--window-size=1400,900", "--screenshot=\(shot)", "file://\(page)"],
            executable: browser)
        #expect(screenshot.status == 0, "\(screenshot.errors)")
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        #expect(png.count > 10_000, "the page drew something")
    }
}

/// A headless browser for the rendering test: Debian's `chromium`, when installed.
enum Browser {
    static let path: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}
