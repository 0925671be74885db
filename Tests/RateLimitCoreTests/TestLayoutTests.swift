import Foundation
import Testing

/// The repository root, found from this file's path (`Tests/RateLimitCoreTests/...`).
private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// Every test file's path (under `Tests/`) and text, but the shared support and this file.
private func testFiles() throws -> [(path: String, text: String)] {
    let folder = repositoryRoot.appendingPathComponent("Tests")
    let files = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
    let excluded = ["RateLimitTestSupport/", "RateLimitCoreTests/TestLayoutTests.swift"]
    return try files.filter { file in file.hasSuffix(".swift") && !excluded.contains { file.hasPrefix($0) } }.sorted()
        .map {
            ($0, try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8))
        }
}

/// The name of the first type declared after `index` in `text`.
private func typeDeclared(after index: String.Index, in text: String) -> String? {
    let rest = text[index...]
    guard let match = rest.firstMatch(of: /\n(?:final class|class|struct|enum|actor) (\w+)/) else { return nil }
    return String(match.output.1)
}

@Suite("How the tests are scheduled (RateLimitTestSupport, Lanes.swift)")
struct TestLayoutTests {
    @Test(
        "The real-time tests can be selected by tag and by name: each suite named …RealTimeTests carries .tags(.realTime) and .realTime, and no other suite does"
    )
    func realTimeSuitesAreNamed() throws {
        var named = 0
        for (path, text) in try testFiles() {
            for match in text.matches(of: /\n(?:final class|class|struct|enum|actor) (\w+RealTimeTests)\b/) {
                named += 1
                // The suite's attribute: from its `@Suite(` to the declaration.
                let head = text[..<match.range.lowerBound]
                let attribute = head.range(of: "@Suite(", options: .backwards).map { head[$0.lowerBound...] } ?? ""
                #expect(
                    attribute.contains(".tags(.realTime)") && attribute.contains(".realTime("),
                    "\(path): \(match.output.1) carries .tags(.realTime) and .realTime(...)")
            }
            for marker in [".tags(.realTime)", ".realTime("] {
                var rest = text.startIndex
                while let found = text.range(of: marker, range: rest..<text.endIndex) {
                    rest = found.upperBound
                    let type = typeDeclared(after: found.upperBound, in: text)
                    #expect(
                        type?.hasSuffix("RealTimeTests") == true,
                        "\(path): \(marker) is on \(type ?? "nothing"), whose name does not end in RealTimeTests")
                }
            }
        }
        #expect(named >= 8, "found \(named) real-time suites")
    }
}
