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
            #expect(json["stepCount"]?.int64 == Int64(file.stories.reduce(0) { $0 + $1.stepCount }), "\(name)")
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
        defer { Repository.remove(empty) }
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
            for clauses in file.stories.map(\.clausesChecked) + file.refusals.map(\.clauses) {
                covered.formUnion(clauses)
            }
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

    @Test(
        "CONF-2 every step of a hand-written story says what it checks; random stories are kept apart in randomStories, with the model's answers and no comments"
    )
    func selfExplaining() async throws { try await offThePool { try selfExplainingOnThread() } }

    private func selfExplainingOnThread() throws {
        for (name, json) in try committedFiles() {
            let stories = try #require(json["stories"]?.array, "\(name)")
            let random = try #require(json["randomStories"]?.array, "\(name)")
            #expect(
                stories.count >= 8 && random.count == 6, "\(name): \(stories.count) stories, \(random.count) random")
            for story in stories {
                let id = story["id"]?.string ?? "?"
                #expect(!id.contains("/random-"), "\(id) is a random story among the hand-written ones")
                for (index, step) in (story["steps"]?.array ?? []).enumerated() {
                    #expect((step["comment"]?.string?.count ?? 0) >= 3, "\(id) step \(index + 1) has no comment")
                }
            }
            for story in random {
                let id = story["id"]?.string ?? "?"
                #expect(id.contains("/random-"), "\(id) is among the random stories")
                #expect(story["clauses"]?.array == [], "\(id) was written for no clause")
                #expect((story["steps"]?.array ?? []).allSatisfy { $0["comment"] == nil }, "\(id) has comments")
            }
        }
    }

    @Test(
        "CONF-7 clauses lists what a story was written for, reaches the other clauses its steps reach, and each clause is in one of them"
    )
    func clausesAndReaches() async throws { try await offThePool { try clausesAndReachesOnThread() } }

    private func clausesAndReachesOnThread() throws {
        for file in try VectorGenerator.files() {
            let prefix = AnyRateLimitStrategy.clausePrefixes[file.strategy] ?? "?"
            for story in file.stories {
                #expect(Set(story.clauses).isDisjoint(with: story.reaches), "\(story.id) lists a clause twice")
                #expect(story.isRandom || !story.clauses.isEmpty, "\(story.id) was written for no clause")
                #expect(story.clausesChecked.contains("\(prefix)-2"), "\(story.id) reaches no \(prefix)-2")
                // An admitted acquire reaches X-4 and X-5; a story written for neither still reaches them.
                if story.steps.contains(where: {
                    if case .acquire(let n) = $0.event { n > 0 && $0.expected.isAdmitted } else { false }
                }) {
                    #expect(
                        story.clausesChecked.contains("\(prefix)-4") && story.clausesChecked.contains("\(prefix)-5"),
                        "\(story.id)")
                }
            }
        }
        let refill = try #require(
            try VectorGenerator.file(TokenBucket.identifier).stories.first { $0.id == "token-bucket/refill-edge" })
        #expect(refill.clauses == ["TB-3"])
        #expect(
            refill.reaches.contains("TB-6") && refill.reaches.contains("CORE-9") && !refill.reaches.contains("TB-3"))
    }

    @Test(
        "CONF-2 generation fails naming the story and the step where the model disagrees with an answer worked out by hand"
    )
    func generationChecksTheModel() throws {
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10))
        let draft = StoryDraft(
            "wrong", "a story with one wrong answer", clauses: ["TB-4"], bucket,
            [
                (0, .acquire(3), .allowed(remaining: 0), "right"),
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 2), "wrong: the Spec says 1"),
                (10, .acquire(1), .allowed(remaining: 0), "right"),
            ])
        let (story, disagreements) = VectorGenerator.generate(draft, strategy: TokenBucket.identifier)
        #expect(
            disagreements == [
                "token-bucket/wrong step 2 at 9 ns acquire(1): the story expects rejected(2ns), the reference model answers rejected(1ns)"
            ])
        #expect(story.steps.map(\.comment) == ["right", "wrong: the Spec says 1", "right"])
        // The files come only from a catalogue the model agrees with.
        for strategy in AnyRateLimitStrategy.identifiers {
            #expect(try VectorGenerator.checked(strategy).1.isEmpty, "\(strategy)")
        }
    }

    @Test("CONF-7 a vector file of format version 1 (a regression vector saved earlier) is still read")
    func readsVersionOne() throws {
        let text = """
            {"format": "ratelimit-conformance-vectors", "formatVersion": 1, "generator": "g", "strategy": "gcra",
             "caseCount": 1, "stepCount": 2, "stories": [{"id": "gcra/regression", "description": "d",
             "clauses": ["CORE-4", "GCRA-4"], "configuration": {"burst": 1, "emissionIntervalNanoseconds": 10},
             "createdAt": 0, "steps": [
               {"now": 0, "event": {"kind": "acquire", "permits": 1}, "expect": {"kind": "allowed", "remaining": 0}},
               {"now": 5, "event": {"kind": "acquire", "permits": 1}, "expect": {"kind": "rejected", "retryAfterNanoseconds": 5}}]}],
             "refusals": []}
            """
        let file = try VectorFile(json: try JSONValue(parsing: text))
        let story = try #require(file.stories.first)
        #expect(story.clausesChecked == ["CORE-4", "GCRA-4"] && story.steps.count == 2)
        #expect(story.steps.allSatisfy { $0.comment == nil })
        #expect(story.disagreementsWithReference.isEmpty)
        let future = text.replacingOccurrences(of: "\"formatVersion\": 1", with: "\"formatVersion\": 3")
        #expect(throws: ConformanceFormatError.self) { try VectorFile(json: try JSONValue(parsing: future)) }
    }

    @Test(
        "CONF-7 a story or a reconfigure that leaves out initialTokens is refused with the field named; a refusal case may leave it out"
    )
    func everyFieldPresent() throws {
        func file(configuration: String, reconfigure: String) -> String {
            """
            {"format": "ratelimit-conformance-vectors", "formatVersion": 2, "generator": "g", "strategy": "token-bucket",
             "caseCount": 2, "stepCount": 1, "stories": [{"id": "token-bucket/s", "description": "d", "clauses": ["TB-10"],
             "reaches": [], "configuration": \(configuration), "createdAt": 0, "steps": [
               {"now": 0, "event": {"kind": "reconfigure", "configuration": \(reconfigure)},
                "expect": {"kind": "allowed", "remaining": 3}, "comment": "c"}]}],
             "randomStories": [],
             "refusals": [{"id": "token-bucket/r", "description": "d", "clauses": ["CORE-3"],
               "configuration": {"capacity": 0, "permitsPerPeriod": 1, "periodNanoseconds": 1},
               "expect": {"field": "capacity", "problem": "mustBePositive"}}]}
            """
        }
        let full = #"{"capacity": 3, "permitsPerPeriod": 1, "periodNanoseconds": 10, "initialTokens": 3}"#
        let short = #"{"capacity": 3, "permitsPerPeriod": 1, "periodNanoseconds": 10}"#
        let loaded = try VectorFile(json: try JSONValue(parsing: file(configuration: full, reconfigure: full)))
        #expect(loaded.caseCount == 2 && loaded.stories.first?.disagreementsWithReference == [])
        for (configuration, reconfigure) in [(short, full), (full, short)] {
            do {
                _ = try VectorFile(
                    json: try JSONValue(parsing: file(configuration: configuration, reconfigure: reconfigure)))
                Issue.record("a configuration without initialTokens was accepted")
            } catch let error as ConformanceFormatError {
                #expect(error.message.contains("missing field \"initialTokens\""), "\(error.message)")
            }
        }
    }
}
