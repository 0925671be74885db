import Foundation
import Testing

/// The repository root, found from this file's path (`Tests/RateLimitCoreTests/...`).
private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// Every `## ID-n` heading of the Spec files.
private func specClauses() throws -> Set<String> {
    let specFolder = repositoryRoot.appendingPathComponent("Spec")
    var clauses: Set<String> = []
    let names =
        try FileManager.default.contentsOfDirectory(atPath: specFolder.path).filter { $0.hasSuffix(".md") }
    for name in names {
        let text = try String(contentsOf: specFolder.appendingPathComponent(name), encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix("## ") {
            let word = line.dropFirst(3).prefix { $0 != " " }
            if word.contains("-"), word.last?.isNumber == true { clauses.insert(String(word)) }
        }
    }
    return clauses
}

/// The names given to `@Test("...")` in every test file, and the clause IDs they cite.
private func testNames() throws -> [String] {
    let testsFolder = repositoryRoot.appendingPathComponent("Tests")
    var names: [String] = []
    let files = FileManager.default.enumerator(atPath: testsFolder.path)?.compactMap { $0 as? String } ?? []
    for file in files where file.hasSuffix(".swift") {
        let text = try String(contentsOf: testsFolder.appendingPathComponent(file), encoding: .utf8)
        var rest = Substring(text)
        // `@Test("name"` or, as swift-format breaks a long one, `@Test(` then the name on the next line.
        while let range = rest.range(of: "@Test(") {
            rest = rest[range.upperBound...].drop { $0 == " " || $0 == "\n" }
            guard rest.first == "\"" else { continue }
            rest = rest.dropFirst()
            names.append(String(rest.prefix { $0 != "\"" }))
        }
    }
    return names
}

/// Clause IDs (`TB-3`, `CORE-10`) appearing in `text`.
private func citedClauses(_ text: String) -> Set<String> {
    var cited: Set<String> = []
    for word in text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ":" }) {
        let parts = word.split(separator: "-")
        if parts.count == 2, parts[0].allSatisfy(\.isUppercase), !parts[1].isEmpty, parts[1].allSatisfy(\.isNumber) {
            cited.insert(String(word))
        }
    }
    return cited
}

@Suite("Spec coverage")
struct SpecCoverageTests {
    @Test("Every clause of Spec/ is cited by the name of at least one test")
    func everyClauseIsTested() throws {
        let clauses = try specClauses()
        #expect(clauses.count >= 120, "found only \(clauses.count) clauses: is the Spec folder where expected?")
        let cited = try testNames().reduce(into: Set<String>()) { $0.formUnion(citedClauses($1)) }
        let untested = clauses.subtracting(cited).sorted()
        #expect(untested.isEmpty, "clauses no test names: \(untested)")
    }

    @Test("Every clause a test names exists in Spec/")
    func noStaleCitations() throws {
        let clauses = try specClauses()
        for name in try testNames() {
            let unknown = citedClauses(name).subtracting(clauses)
            #expect(unknown.isEmpty, "test \"\(name)\" cites \(unknown.sorted()), which Spec/ does not define")
        }
    }
}
