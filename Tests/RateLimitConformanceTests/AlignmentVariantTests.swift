import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

// A fixed window aligned otherwise than to the origin (Spec/FixedWindow.md FW-13), declared in the
// implementation's profile (Spec/protocol.md, "Profiles"): judged exactly as the variant it
// declares, and failed when it declares a variant it does not implement.

@Suite("Window alignment variants declared in a profile (FW-13, CONF-7)")
struct AlignmentVariantTests {
    @Test("CONF-7 FW-13 a profile's alignment is read, written back, and refused by name when unknown")
    func profileMember() throws {
        let declared = try ImplementationProfile(json: JSONValue(parsing: #"{"alignment": "first-event"}"#))
        #expect(declared.alignment == .firstEvent)
        #expect(try ImplementationProfile(json: declared.json) == declared)
        #expect(try ImplementationProfile(json: JSONValue(parsing: "{}")).alignment == .origin)
        #expect(throws: ConformanceFormatError.self) {
            try ImplementationProfile(json: JSONValue(parsing: #"{"alignment": "epoch"}"#))
        }
        // Only a fixed window changes; a trace's reconfigures are aligned too.
        let window = try FixedWindow(limit: 2, windowNanoseconds: 10)
        let trace = Trace(
            configuration: .fixedWindow(window), createdAt: 3,
            steps: [TraceStep(now: 4, event: .reconfigure(.fixedWindow(window)))])
        let aligned = declared.aligned(trace)
        #expect(aligned.configuration == .fixedWindow(window.aligned(.firstEvent)))
        #expect(aligned.steps[0].event == .reconfigure(.fixedWindow(window.aligned(.firstEvent))))
        let bucket = AnyRateLimitStrategy.gcra(try GCRA(burst: 2, emissionIntervalNanoseconds: 5))
        #expect(declared.aligned(bucket) == bucket)
        #expect(declared.notChecked(strategy: "fixed-window").contains { $0.contains("FW-13 first-event") })
        #expect(!declared.notChecked(strategy: "gcra").contains { $0.contains("FW-13") })
    }

    /// Each variant the Python example implements: the strategy, its flag, the alignment.
    static let variants = [
        Variant(strategy: "fixed-window", flag: "--fixed-window-alignment", alignment: "creation", clause: "FW-13"),
        Variant(strategy: "fixed-window", flag: "--fixed-window-alignment", alignment: "first-event", clause: "FW-13"),
        Variant(
            strategy: "sliding-window-segments", flag: "--segments-alignment", alignment: "creation", clause: "SWS-13"),
    ]

    struct Variant: Sendable, CustomTestStringConvertible {
        var strategy: String
        var flag: String
        var alignment: String
        var clause: String
        var testDescription: String { "\(strategy) \(alignment)" }
    }

    @Test(
        "FW-13 SWS-13 the Python example, run as each variant, passes its vectors, random traces and exhaustive paths to depth 2 at level exact",
        arguments: variants)
    func pythonExampleVariants(_ variant: Variant) async throws {
        let python = "\(Repository.python) \(variant.flag) \(variant.alignment)"
        let random = try await runCommand(
            [
                "--exec", python, "--strategy", variant.strategy, "--random", "10", "--random-steps", "1000", "--seed",
                "13",
            ])
        #expect(random.status == 0, "\(random.output)\(random.errors)")
        #expect(random.output.contains("PASS: 1 of 1 strategies conform at level exact"), "\(random.output)")
        #expect(
            random.output.contains(
                "judged as the variant the implementation declares, \(variant.clause) \(variant.alignment)"))
        let exhaustive = try await runCommand(["--exec", python, "--strategy", variant.strategy, "--exhaustive", "2"])
        #expect(exhaustive.status == 0, "\(exhaustive.output)\(exhaustive.errors)")
        #expect(exhaustive.output.contains("conform on every path at level exact"), "\(exhaustive.output)")
    }

    @Test(
        "FW-13 SWS-13 declaring a variant the implementation does not have fails it: origin windows declared as each variant",
        arguments: variants)
    func wrongDeclarationFails(_ variant: Variant) async throws {
        let python = "\(Repository.python) --profile '{\"alignment\": \"\(variant.alignment)\"}'"
        let run = try await runCommand(["--exec", python, "--strategy", variant.strategy, "--quick"])
        #expect(run.status == 1, "\(run.output)\(run.errors)")
        // The cases created off the grid are filed under the variant's clause (CONF-10).
        #expect(
            run.output.contains(
                "FAIL \(variant.strategy) \(variant.clause) window alignment, the declared \(variant.alignment):"),
            "\(run.output)")
    }

    @Test(
        "FW-13 SWS-13 a variant's stories run only for an implementation that declares it, beside the stories of the origin",
        arguments: [
            Variant(strategy: "fixed-window", flag: "--fixed-window-alignment", alignment: "origin", clause: "FW-13")
        ]
            + variants)
    func variantStoriesByDeclaration(_ variant: Variant) async throws {
        let declared = try #require(WindowAlignment(rawValue: variant.alignment))
        let stories = try VectorGenerator.files().filter { $0.strategy == variant.strategy }.flatMap(\.stories)
        let expected = stories.filter { $0.alignment == .origin || $0.alignment == declared }.count
        if declared == .origin { #expect(expected < stories.count, "the variants' stories are left out") }
        let run = try await runCommand(
            [
                "--exec", "\(Repository.python) \(variant.flag) \(variant.alignment)", "--strategy", variant.strategy,
                "--quick",
            ])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let row = run.output.split(separator: "\n").first { $0.hasPrefix("\(variant.strategy) ") }?.split(
            separator: " ")
        #expect(row?.count ?? 0 > 3 && row?[2] == "\(expected)" && row?[4] == "\(expected)", "\(run.output)")
    }

    @Test("CONF-3 FW-13 the matrix names the variant a row's fixed window was judged as")
    func matrixNamesTheVariant() async throws {
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        let file = "\(folder)/matrix.json"
        try Data(
            #"""
            {"implementations": [
              {"name": "first", "version": "1", "command": "\#(Repository.python) --fixed-window-alignment first-event"},
              {"name": "wrong", "version": "1", "command": "\#(Repository.python) --profile '{\"alignment\": \"creation\"}'"}
            ]}
            """#.utf8
        ).write(to: URL(fileURLWithPath: file))
        let markdown = "\(folder)/MATRIX.md"
        let run = try await runCommand([
            "--matrix", file, "--strategy", "gcra,fixed-window", "--random", "2", "--random-steps", "200", "--seed",
            "1",
            "--markdown", markdown,
        ])
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let page = try String(contentsOfFile: markdown, encoding: .utf8)
        // Each row: name, version, its expectations, then the cells.
        let rows = page.split(separator: "\n").filter { $0.hasPrefix("| [") }
        #expect(rows.contains { $0 == "| [first](#first) | 1 | 0 | exact | exact (first-event) |" }, "\(page)")
        #expect(
            rows.contains {
                $0.hasPrefix("| [wrong](#wrong) | 1 | ") && $0.hasSuffix(" | exact | **fails** (creation) |")
            },
            "\(page)")
    }
}
