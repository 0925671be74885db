import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

private let vectorFolder = "Spec/vectors"

/// The committed vector files, by strategy.
private func committedFiles() throws -> [(name: String, json: JSONValue)] {
    let names = try FileManager.default.contentsOfDirectory(atPath: Repository.path(vectorFolder))
        .filter { $0.hasSuffix(".json") && $0 != "schema.json" }.sorted()
    return try names.map { ($0, try Repository.json("\(vectorFolder)/\($0)")) }
}

@Suite("Vector files (Spec/vectors)")
struct VectorFileTests {
    @Test("There is one vector file per strategy")
    func onePerStrategy() async throws { try await offThePool { try onePerStrategyOnThread() } }

    private func onePerStrategyOnThread() throws {
        let names = try committedFiles().map(\.name)
        #expect(names == AnyRateLimitStrategy.identifiers.map { "\($0).json" }.sorted())
    }

    @Test("Every vector file validates against schema.json")
    func schemaValid() async throws { try await offThePool { try schemaValidOnThread() } }

    private func schemaValidOnThread() throws {
        let validator = JSONSchemaValidator(root: try Repository.json("\(vectorFolder)/schema.json"))
        for (name, json) in try committedFiles() {
            let violations = validator.violations(of: json)
            #expect(violations.isEmpty, "\(name): \(violations.prefix(5))")
        }
    }

    @Test("The schema refuses a file with a wrong kind, a negative instant or a missing field")
    func schemaCatchesDefects() async throws { try await offThePool { try schemaCatchesDefectsOnThread() } }

    private func schemaCatchesDefectsOnThread() throws {
        let validator = JSONSchemaValidator(root: try Repository.json("\(vectorFolder)/schema.json"))
        let good = try Repository.json("\(vectorFolder)/gcra.json").compactText
        for (from, to) in [
            ("\"kind\": \"allowed\"", "\"kind\": \"permitted\""), ("\"now\":", "\"now\": -1, \"x\":"),
            ("\"caseCount\"", "\"casecount\""), ("\"retryAfterNanoseconds\":", "\"retryAfterNanoseconds\": 0, \"y\":"),
        ] {
            let broken = try JSONValue(
                parsing: good.replacingOccurrences(
                    of: from.replacingOccurrences(of: " ", with: ""), with: to.replacingOccurrences(of: " ", with: "")))
            #expect(!validator.violations(of: broken).isEmpty, "the schema accepted a file with \(to)")
        }
    }

    @Test("Each file's header holds its case count, step count and generator version")
    func headerCounts() async throws { try await offThePool { try headerCountsOnThread() } }

    private func headerCountsOnThread() throws {
        for (name, json) in try committedFiles() {
            let file = try VectorFile(json: json)  // refuses mismatched counts
            #expect(json["caseCount"]?.int64 == Int64(file.stories.count + file.refusals.count), "\(name)")
            #expect(json["stepCount"]?.int64 == Int64(file.stories.reduce(0) { $0 + $1.steps.count }), "\(name)")
            #expect(json["generator"]?.string == VectorGenerator.version, "\(name)")
            #expect(file.caseCount >= 15, "\(name) holds only \(file.caseCount) cases")
        }
    }

    @Test("A file whose counts do not match its cases is refused")
    func wrongCountRefused() async throws { try await offThePool { try wrongCountRefusedOnThread() } }

    private func wrongCountRefusedOnThread() throws {
        let text = try String(contentsOfFile: Repository.path("\(vectorFolder)/fixed-window.json"), encoding: .utf8)
        guard let caseCount = try JSONValue(parsing: text)["caseCount"]?.int64 else {
            Issue.record("no caseCount")
            return
        }
        let tampered = try JSONValue(
            parsing: text.replacingOccurrences(
                of: "\"caseCount\": \(caseCount)", with: "\"caseCount\": \(caseCount + 1)"))
        #expect(throws: ConformanceFormatError.self) { try VectorFile(json: tampered) }
    }

    @Test("Regenerating from the model reproduces the committed files byte for byte (make vectors)")
    func regenerationIsByteForByte() async throws { try await offThePool { try regenerationIsByteForByteOnThread() } }

    private func regenerationIsByteForByteOnThread() throws {
        for file in try VectorGenerator.files() {
            let committed = try String(
                contentsOfFile: Repository.path("\(vectorFolder)/\(file.fileName)"), encoding: .utf8)
            #expect(
                committed == file.json.prettyText,
                "\(file.fileName) differs from the model: run `make vectors` and review the diff")
        }
    }

    @Test("A loader that finds zero vector files fails")
    func emptyFolderFails() async throws { try await offThePool { try emptyFolderFailsOnThread() } }

    private func emptyFolderFailsOnThread() throws {
        let empty = try Repository.temporaryDirectory()
        #expect(throws: ConformanceFormatError.self) { try VectorFiles.load(directory: empty) }
        #expect(throws: ConformanceFormatError.self) { try VectorFiles.load(directory: empty + "/missing") }
        let loaded = try VectorFiles.load(directory: Repository.path(vectorFolder))
        #expect(loaded.count == AnyRateLimitStrategy.identifiers.count)
    }

    @Test("Case ids are unique and start with their strategy")
    func stableIDs() async throws { try await offThePool { try stableIDsOnThread() } }

    private func stableIDsOnThread() throws {
        var seen: Set<String> = []
        for file in try VectorGenerator.files() {
            for id in file.stories.map(\.id) + file.refusals.map(\.id) {
                #expect(seen.insert(id).inserted, "duplicate id \(id)")
                #expect(id.hasPrefix(file.strategy + "/"), "\(id) is not under \(file.strategy)")
            }
        }
    }

    @Test("Every clause of every strategy, and CORE-3 to CORE-13, is exercised by some vector case")
    func clauseCoverage() async throws { try await offThePool { try clauseCoverageOnThread() } }

    private func clauseCoverageOnThread() throws {
        var covered: Set<String> = []
        for file in try VectorGenerator.files() {
            for clauses in file.stories.map(\.clauses) + file.refusals.map(\.clauses) { covered.formUnion(clauses) }
        }
        var missing: [String] = []
        for prefix in AnyRateLimitStrategy.clausePrefixes.values {
            for number in 1...12 where !covered.contains("\(prefix)-\(number)") {
                missing.append("\(prefix)-\(number)")
            }
        }
        for number in 3...13 where !covered.contains("CORE-\(number)") { missing.append("CORE-\(number)") }
        #expect(missing.isEmpty, "no vector exercises \(missing.sorted())")
    }

    @Test("TB-12 the vectors hold the backward-time trace on which Go's x/time/rate re-grants a token")
    func goBackwardTimeStory() async throws { try await offThePool { try goBackwardTimeStoryOnThread() } }

    private func goBackwardTimeStoryOnThread() throws {
        let story = try #require(
            try VectorGenerator.file(TokenBucket.identifier).stories.first { $0.id == "token-bucket/go-backward-time" })
        #expect(story.steps.map(\.now) == [1_100_000_000, 1_000_000_000, 1_000_000_000, 1_000_000_000, 1_100_000_000])
        #expect(story.steps.last?.expected == .rejected(retryAfterNanoseconds: 100_000_000))
    }

    @Test("Every refusal is refused by the reference with the field and problem the file names")
    func refusalsRefused() async throws { try await offThePool { try refusalsRefusedOnThread() } }

    private func refusalsRefusedOnThread() throws {
        for file in try VectorGenerator.files() {
            for refusal in file.refusals {
                #expect(throws: ConformanceFormatError.self, "\(refusal.id) was accepted") {
                    try AnyRateLimitStrategy(strategy: file.strategy, json: refusal.configuration)
                }
            }
        }
    }
}
