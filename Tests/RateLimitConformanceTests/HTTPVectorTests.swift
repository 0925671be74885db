import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

private let httpFolder = "Spec/vectors/http"

/// The committed HTTP vector file, as text.
private func committedText() throws -> String {
    try String(contentsOfFile: Repository.path("Spec/vectors/\(HTTPVectorFile.path)"), encoding: .utf8)
}

/// A case with `fields` received at t0 whose hand-written answer is `expected`.
private func handWritten(_ name: String, _ fields: [(String, String)], _ expected: FeedbackResult) -> FeedbackCase {
    FeedbackCase(
        id: "server-feedback/\(name)", comment: "a test case", clauses: ["HTTP-3"], status: 429,
        fields: fields.map { FeedbackCase.Field($0.0, $0.1) }, receivedAt: 1_795_219_200, expected: expected)
}

@Suite("HTTP vector files (Spec/vectors/http)")
struct HTTPVectorTests {
    @Test(
        "HTTP-1 HTTP-2 HTTP-3 HTTP-4 HTTP-5 HTTP-6 HTTP-10 regenerating the HTTP vectors reproduces the committed file byte for byte (make vectors)"
    )
    func regenerationIsByteForByte() throws {
        let file = try HTTPVectorGenerator.file()
        #expect(
            try committedText() == file.json.prettyText,
            "\(HTTPVectorFile.path) differs from the cases: run `make vectors` and review the diff")
        #expect(file.generator == HTTPVectorGenerator.version)
    }

    @Test("The HTTP vector file validates against http/schema.json, and reads back as the cases it was written from")
    func schemaValid() throws {
        let validator = JSONSchemaValidator(root: try Repository.json("\(httpFolder)/schema.json"))
        let json = try JSONValue(parsing: try committedText())
        let violations = validator.violations(of: json)
        #expect(violations.isEmpty, "\(violations.prefix(5))")
        let read = try HTTPVectorFile(json: json)
        #expect(read.cases == HTTPFeedbackCatalogue.cases())
        #expect(json["caseCount"]?.int64 == Int64(read.cases.count))
    }

    @Test(
        "The HTTP schema refuses an unknown problem, a negative wait, a field that is not a pair, a missing member and a clause of another file"
    )
    func schemaCatchesDefects() throws {
        let validator = JSONSchemaValidator(root: try Repository.json("\(httpFolder)/schema.json"))
        let good = try JSONValue(parsing: try committedText()).compactText
        for (from, to) in [
            (#""problem":"malformed""#, #""problem":"broken""#),
            (#""requestedWaitNanoseconds":120000000000"#, #""requestedWaitNanoseconds":-1"#),
            (#"["Retry-After","120"]"#, #"["Retry-After","120","x"]"#),
            (#""reference":"#, #""reference2":"#),
            (#""clauses":["HTTP-3"]"#, #""clauses":["TB-3"]"#),
            (#""xRateLimit":{"limit":null,"#, #""xRateLimit":{"limit":"60","#),
        ] {
            #expect(good.contains(from), "the file has no \(from)")
            let broken = try JSONValue(parsing: good.replacingOccurrences(of: from, with: to))
            #expect(!validator.violations(of: broken).isEmpty, "the schema accepted a file with \(to)")
        }
    }

    @Test("A file whose caseCount, format version or ids do not match its cases is refused")
    func headerChecked() throws {
        let text = try committedText()
        let count = HTTPFeedbackCatalogue.cases().count
        for (from, to) in [
            ("\"caseCount\": \(count)", "\"caseCount\": \(count + 1)"),
            ("\"formatVersion\": 2", "\"formatVersion\": 1"),
            ("\"caseCount\"", "\"extra\": 1, \"caseCount\""),
            ("server-feedback/delay-zero\"", "server-feedback/delay-seconds\""),
        ] {
            #expect(text.contains(from))
            let tampered = try JSONValue(parsing: text.replacingOccurrences(of: from, with: to))
            #expect(throws: ConformanceFormatError.self, "accepted with \(to)") { try HTTPVectorFile(json: tampered) }
        }
    }

    @Test(
        "Generation fails naming the case and the member where ServerFeedback reads otherwise than the answer written by hand"
    )
    func generationChecksTheParser() throws {
        let t0: Int64 = 1_795_219_200
        let right = handWritten(
            "right", [("Retry-After", "120")],
            FeedbackResult(retryAfter: .delay(seconds: 120), requestedWaitNanoseconds: 120_000_000_000, reference: t0))
        let wrong = handWritten(
            "wrong", [("Retry-After", "120"), ("X-RateLimit-Limit", "x")],
            FeedbackResult(
                retryAfter: .delay(seconds: 120), requestedWaitNanoseconds: 120_000_000, reference: t0,
                diagnostics: [FeedbackResult.Diagnostic("X-RateLimit-Limit", .invalidMember)]))
        let (file, disagreements) = try HTTPVectorGenerator.checked([right, wrong])
        #expect(file.cases.count == 2)
        #expect(
            disagreements == [
                "server-feedback/wrong: requestedWaitNanoseconds: expected 120000000, got 120000000000",
                #"server-feedback/wrong: diagnostics: expected [{"field":"X-RateLimit-Limit","problem":"invalidMember"}], got [{"field":"X-RateLimit-Limit","problem":"malformed"}]"#,
            ])
        #expect(throws: ConformanceFormatError.self) { try HTTPVectorGenerator.checked([right, right]) }
        // The committed cases all agree with the parser.
        #expect(try HTTPVectorGenerator.checked().1 == [])
    }

    @Test(
        "An unspecified member is not compared, diagnostics compare in any order, and a result reads back from its JSON"
    )
    func comparing() throws {
        let expected = FeedbackResult(
            requestedWaitNanoseconds: 40_000_000_000, reference: 5,
            remainingQuota: FeedbackResult.Quota(0, resetNanoseconds: 10_000_000_000),
            diagnostics: [FeedbackResult.Diagnostic("Date", .malformed), FeedbackResult.Diagnostic("Age", .repeated)])
        var answer = expected
        answer.diagnostics.reverse()
        #expect(expected.differences(from: answer).isEmpty)
        answer.remainingQuota = FeedbackResult.Quota(0, resetNanoseconds: 40_000_000_000)
        #expect(
            expected.differences(from: answer) == [
                #"remainingQuota: expected {"remaining":0,"resetNanoseconds":10000000000}, got {"remaining":0,"resetNanoseconds":40000000000}"#
            ])
        #expect(expected.differences(from: answer, unspecified: ["remainingQuota"]).isEmpty)
        answer.diagnostics.removeLast()
        #expect(expected.differences(from: answer, unspecified: ["remainingQuota"]).count == 1)
        for feedbackCase in HTTPFeedbackCatalogue.cases() {
            #expect(try FeedbackResult(json: feedbackCase.expected.json) == feedbackCase.expected, "\(feedbackCase.id)")
        }
        for bad in [
            #"{"retryAfter": {"delay": 1, "date": 2}}"#, #"{"retryAfter": 5}"#,
        ] {
            var members = expected.json.compactText
            members = members.replacingOccurrences(of: #"{"retryAfter":null"#, with: String(bad.dropLast()))
            #expect(throws: ConformanceFormatError.self, "\(bad)") {
                try FeedbackResult(json: try JSONValue(parsing: members))
            }
        }
        #expect(throws: ConformanceFormatError.self) {
            try FeedbackResult(json: try JSONValue(parsing: #"{"retryAfter": null}"#))
        }
    }

    @Test(
        "Every clause of HTTP.md that concerns parsing (HTTP-1 to HTTP-6, HTTP-10) or the rate a response states (HTTP-13) was written for by at least four cases; each case says what it checks"
    )
    func clauseCoverage() {
        let cases = HTTPFeedbackCatalogue.cases()
        var perClause: [String: Int] = [:]
        for feedbackCase in cases {
            for clause in feedbackCase.clauses { perClause[clause, default: 0] += 1 }
            #expect(feedbackCase.comment.count >= 20, "\(feedbackCase.id) says too little")
            #expect(feedbackCase.id.hasPrefix("server-feedback/"))
        }
        let clauses = ["HTTP-1", "HTTP-2", "HTTP-3", "HTTP-4", "HTTP-5", "HTTP-6", "HTTP-10", "HTTP-13"]
        for clause in clauses {
            #expect(perClause[clause, default: 0] >= 4, "\(clause): \(perClause[clause, default: 0]) cases")
        }
        #expect(Set(perClause.keys).isSubset(of: clauses))
        // Both ways of stating a rate, and none, are some case's answer.
        #expect(cases.contains { $0.expected.statedRate != nil && !$0.expected.policies.isEmpty })
        #expect(cases.contains { $0.expected.statedRate != nil && $0.expected.policies.isEmpty })
        #expect(cases.contains { $0.expected.statedRate == nil && !$0.expected.policies.isEmpty })
        // Every problem name is some case's answer, and every kind of Retry-After.
        let problems = Set(cases.flatMap { $0.expected.diagnostics.map(\.problem) })
        #expect(problems == Set(FeedbackResult.Problem.allCases))
        #expect(cases.contains { if case .delay = $0.expected.retryAfter { true } else { false } })
        #expect(cases.contains { if case .date = $0.expected.retryAfter { true } else { false } })
    }

    @Test(
        "The strategy loader ignores the HTTP files; a scan reads the HTTP vector file apart and lists only the schemas as ignored"
    )
    func loaderKeepsThemApart() throws {
        let loaded = try VectorFiles.load(directory: Repository.path("Spec/vectors"))
        #expect(loaded.count == AnyRateLimitStrategy.identifiers.count)
        let scanned = try VectorFiles.scan(directory: Repository.path("Spec/vectors"))
        #expect(scanned.files.count == loaded.count)
        #expect(scanned.http.map(\.path) == [HTTPVectorFile.path])
        #expect(scanned.http.first?.file.cases.count == HTTPFeedbackCatalogue.cases().count)
        #expect(scanned.ignored == ["http/schema.json", "scenarios/schema.json", "schema.json"])
        // A folder holding only HTTP vectors has no strategy vector file: the loader still fails.
        let folder = try Repository.temporaryDirectory()
        defer { Repository.remove(folder) }
        _ = try VectorFiles.write(try HTTPVectorGenerator.file(), to: folder)
        #expect(throws: ConformanceFormatError.self) { try VectorFiles.load(directory: folder) }
        // A file that declares the HTTP format and breaks it stops the scan, naming the file.
        let broken = (folder as NSString).appendingPathComponent(HTTPVectorFile.path)
        try (try committedText()).replacingOccurrences(of: "\"caseCount\"", with: "\"casecount\"")
            .write(toFile: broken, atomically: true, encoding: .utf8)
        _ = try VectorFiles.write(try VectorGenerator.files(), to: folder)
        do {
            _ = try VectorFiles.scan(directory: folder)
            Issue.record("a broken HTTP vector file was read")
        } catch {
            #expect(error.message.contains("server-feedback.json"), "\(error.message)")
        }
    }

    @Test(
        "A run counts a case only when every member agrees; after three cases without an answer the rest are not asked")
    func runReport() {
        let cases = Array(HTTPFeedbackCatalogue.cases().prefix(6))
        var asked = 0
        let report = FeedbackRunReport.run(cases) { feedbackCase in
            asked += 1
            if feedbackCase.id == cases[0].id {
                var answer = feedbackCase.expected
                answer.reference += 1
                return .success(answer)
            }
            if feedbackCase.id == cases[1].id { return .success(feedbackCase.expected) }
            return .failure(ConformanceFormatError("crashed"))
        }
        #expect(asked == 5)
        #expect(report.failures.map(\.id) == cases.dropFirst(0).map(\.id).filter { $0 != cases[1].id })
        #expect(report.failures.first?.differences.first?.hasPrefix("reference: expected ") == true)
        #expect(report.failures.last?.differences == ["not run: 3 cases in a row had no answer"])
        #expect(!report.passed)
        #expect(report.lines.first == "http: 6 cases, 1 as HTTP.md says, 5 differ:")
        let clean = FeedbackRunReport.run(cases) { .success($0.expected) }
        #expect(clean.passed && clean.lines == ["http: 6 cases, all as HTTP.md says"])
    }
}
