import RateLimitHTTP

// The HTTP vectors of Spec/vectors/http/: responses, and what parsing their server feedback reads
// from them (Spec/HTTP.md HTTP-1 to HTTP-6 and HTTP-10, and the rate they state, HTTP-13) in a form
// any language can compare. Each
// case's answer is written by hand from HTTP.md, next to a comment, in
// Stories/HTTPFeedbackStories.swift; generation runs the Swift `ServerFeedback` over every case
// and fails, naming the case and the member, where it reads otherwise. Spec/vectors/http/README.md
// describes the format; Spec/vectors/http/schema.json validates it.

// MARK: - Cases and the file

/// One response and what its server feedback reads, written by hand from Spec/HTTP.md.
package struct FeedbackCase: Hashable, Sendable {
    /// A header field as received.
    package struct Field: Hashable, Sendable {
        package var name: String
        package var value: String

        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Stable: `server-feedback/<name>`.
    package var id: String
    /// What the case checks.
    package var comment: String
    /// The HTTP clauses it was written for.
    package var clauses: [String]
    package var status: Int64
    /// In the order received.
    package var fields: [Field]
    /// The wall clock at receipt, in seconds since the epoch.
    package var receivedAt: Int64
    package var expected: FeedbackResult
    /// Members of the result HTTP.md leaves open for this response: not compared.
    package var unspecified: [String]

    package init(
        id: String, comment: String, clauses: [String], status: Int64, fields: [Field], receivedAt: Int64,
        expected: FeedbackResult, unspecified: [String] = []
    ) {
        self.id = id
        self.comment = comment
        self.clauses = clauses
        self.status = status
        self.fields = fields
        self.receivedAt = receivedAt
        self.expected = expected
        self.unspecified = unspecified
    }

    /// The response as the files and the protocol write it.
    package var responseJSON: JSONValue {
        .object([
            ("status", .integer(status)),
            ("fields", .array(fields.map { .array([.string($0.name), .string($0.value)]) })),
            ("receivedAt", .integer(receivedAt)),
        ])
    }

    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(id)), ("comment", .string(comment)), ("clauses", .array(clauses.map(JSONValue.string))),
            ("response", responseJSON), ("expect", expected.json),
        ]
        if !unspecified.isEmpty { members.append(("unspecified", .array(unspecified.map(JSONValue.string)))) }
        return .object(members)
    }

    package init(json: JSONValue) throws(ConformanceFormatError) {
        guard let id = json["id"]?.string else { throw ConformanceFormatError("a case has no string id") }
        do {
            self = try Self.read(json, id: id)
        } catch {
            throw ConformanceFormatError("\(id): \(error.message)")
        }
    }

    private static func read(_ json: JSONValue, id: String) throws(ConformanceFormatError) -> FeedbackCase {
        let allowed = ["id", "comment", "clauses", "response", "expect", "unspecified"]
        if let unknown = json.keys.first(where: { !allowed.contains($0) }) {
            throw ConformanceFormatError("unknown member \"\(unknown)\"")
        }
        guard let comment = json["comment"]?.string, !comment.isEmpty else {
            throw ConformanceFormatError("no comment")
        }
        guard let clauses = json["clauses"]?.array?.compactMap(\.string), !clauses.isEmpty else {
            throw ConformanceFormatError("clauses must be a non-empty array of strings")
        }
        let response = json["response"] ?? .null
        try FeedbackResult.exactly(["status", "fields", "receivedAt"], in: response, "response")
        var fields: [Field] = []
        for (index, pair) in try FeedbackResult.array(response["fields"], "response.fields").enumerated() {
            guard let items = pair.array, items.count == 2, let name = items[0].string, let text = items[1].string
            else {
                throw ConformanceFormatError("response.fields[\(index)] must be [name, value], two strings")
            }
            fields.append(Field(name, text))
        }
        var unspecified: [String] = []
        if let listed = json["unspecified"] {
            guard let names = listed.array?.compactMap(\.string), names.count == listed.array?.count,
                names.allSatisfy(FeedbackResult.members.contains)
            else {
                throw ConformanceFormatError("unspecified must list members of a result")
            }
            unspecified = names
        }
        let expected: FeedbackResult
        do {
            expected = try FeedbackResult(json: json["expect"] ?? .null)
        } catch {
            throw ConformanceFormatError("expect: \(error.message)")
        }
        return FeedbackCase(
            id: id, comment: comment, clauses: clauses,
            status: try FeedbackResult.integer(response["status"], "response.status"), fields: fields,
            receivedAt: try FeedbackResult.integer(response["receivedAt"], "response.receivedAt"),
            expected: expected, unspecified: unspecified)
    }

    /// What the Swift reference reads from this response.
    package func referenceResult() throws(ConformanceFormatError) -> FeedbackResult {
        let feedback = ServerFeedback(
            status: Int(clamping: status), fields: HTTPFields(fields.map { (name: $0.name, value: $0.value) }),
            receivedAt: HTTPDate(secondsSinceEpoch: receivedAt))
        do {
            return try FeedbackResult(feedback)
        } catch {
            throw ConformanceFormatError("\(id): \(error.message)")
        }
    }

    /// Where the Swift reference reads this response otherwise than the case expects, one line per
    /// member: `<id>: <member>: expected X, got Y`.
    package func disagreementsWithReference() throws(ConformanceFormatError) -> [String] {
        expected.differences(from: try referenceResult(), unspecified: Set(unspecified)).map { "\(id): \($0)" }
    }
}

/// The HTTP vector file: every server-feedback case.
package struct HTTPVectorFile: Hashable, Sendable {
    package static let format = "ratelimit-http-vectors"
    /// 2 since results carry `statedRate` (HTTP-13), which a runner must read and compare.
    package static let formatVersion: Int64 = 2
    /// Where the file lies under `Spec/vectors/`.
    package static let path = "http/server-feedback.json"

    package var generator: String
    package var cases: [FeedbackCase]

    package init(generator: String, cases: [FeedbackCase]) {
        self.generator = generator
        self.cases = cases
    }

    package static func declaresFormat(_ json: JSONValue) -> Bool { json["format"]?.string == format }

    package var json: JSONValue {
        .object([
            ("format", .string(Self.format)), ("formatVersion", .integer(Self.formatVersion)),
            ("generator", .string(generator)), ("caseCount", .integer(Int64(cases.count))),
            ("cases", .array(cases.map(\.json))),
        ])
    }

    /// Reads an HTTP vector file and checks its header: format, version, and the case count.
    package init(json: JSONValue) throws(ConformanceFormatError) {
        guard Self.declaresFormat(json) else {
            throw ConformanceFormatError("not an HTTP vector file: format must be \"\(Self.format)\"")
        }
        guard json["formatVersion"]?.int64 == Self.formatVersion else {
            throw ConformanceFormatError(
                "unsupported formatVersion \(json["formatVersion"]?.compactText ?? "missing") (this harness reads \(Self.formatVersion))"
            )
        }
        let allowed = ["format", "formatVersion", "generator", "caseCount", "cases"]
        if let unknown = json.keys.first(where: { !allowed.contains($0) }) {
            throw ConformanceFormatError("unknown member \"\(unknown)\" in an HTTP vector file")
        }
        guard let generator = json["generator"]?.string else { throw ConformanceFormatError("missing generator") }
        guard let values = json["cases"]?.array else { throw ConformanceFormatError("cases must be an array") }
        var cases: [FeedbackCase] = []
        var seen: Set<String> = []
        for value in values {
            let read = try FeedbackCase(json: value)
            guard seen.insert(read.id).inserted else { throw ConformanceFormatError("duplicate case id \(read.id)") }
            cases.append(read)
        }
        guard !cases.isEmpty else { throw ConformanceFormatError("an HTTP vector file with no case") }
        guard json["caseCount"]?.int64 == Int64(cases.count) else {
            throw ConformanceFormatError(
                "caseCount \(json["caseCount"]?.compactText ?? "missing") but the file holds \(cases.count) cases")
        }
        self.init(generator: generator, cases: cases)
    }
}

// MARK: - Generation

/// Turns the hand-written cases into the HTTP vector file, checking the Swift reference against
/// every answer.
package enum HTTPVectorGenerator {
    /// Bumped whenever the generated bytes change for a reason other than the cases.
    package static let version = "swift-rate-limit http vector generator 2"

    /// The HTTP vector file.
    ///
    /// - Throws: ``ConformanceFormatError`` naming every case and member where the Swift
    ///   `ServerFeedback` reads otherwise than the answer written by hand.
    package static func file() throws(ConformanceFormatError) -> HTTPVectorFile {
        let (file, disagreements) = try checked()
        guard disagreements.isEmpty else {
            throw ConformanceFormatError(
                "ServerFeedback disagrees with \(disagreements.count) hand-written HTTP answer\(disagreements.count == 1 ? "" : "s"):\n"
                    + disagreements.joined(separator: "\n"))
        }
        return file
    }

    /// The file, and every place where `ServerFeedback` reads a case otherwise than its answer
    /// written by hand, one line each.
    package static func checked(_ cases: [FeedbackCase] = HTTPFeedbackCatalogue.cases()) throws(ConformanceFormatError)
        -> (HTTPVectorFile, [String])
    {
        var seen: Set<String> = []
        var disagreements: [String] = []
        for feedbackCase in cases {
            guard seen.insert(feedbackCase.id).inserted else {
                throw ConformanceFormatError("duplicate HTTP case id \(feedbackCase.id)")
            }
            disagreements += try feedbackCase.disagreementsWithReference()
        }
        return (HTTPVectorFile(generator: version, cases: cases), disagreements)
    }
}

// MARK: - Running

/// How an implementation read the HTTP vectors.
package typealias FeedbackRunReport = CaseRunReport

extension CaseRunReport {
    /// Runs the HTTP `cases`, each answered by `answer` (a result, or why there is none), and
    /// compares. After ``consecutiveFailuresAllowed`` cases in a row without an answer, the rest
    /// fail unasked.
    ///
    /// Only the members in `declared` are compared when the implementation names those it fills
    /// (`feedbackMembers`); the others are listed as not checked (CONF-7).
    package static func run(
        _ cases: [FeedbackCase], declared: Set<String>? = nil,
        answer: (FeedbackCase) -> Result<FeedbackResult, ConformanceFormatError>
    ) -> CaseRunReport {
        var report = run(label: "http", specFile: "HTTP.md", cases, id: \.id) {
            feedbackCase throws(ConformanceFormatError) in
            feedbackCase.expected.differences(
                from: try answer(feedbackCase).get(), unspecified: Set(feedbackCase.unspecified), only: declared)
        }
        report.notChecked = notChecked(declared: declared)
        return report
    }

    /// What a run leaves unchecked when the implementation names the members it fills
    /// (`feedbackMembers`): the others, a line for reports; nothing when it names none.
    package static func notChecked(declared: Set<String>?) -> [String] {
        guard let declared else { return [] }
        let unchecked = FeedbackResult.members.flatMap { member -> [String] in
            guard !declared.contains(member) else { return [] }
            let fields = FeedbackResult.fields(of: member)
            let filled = fields.filter { declared.contains("\(member).\($0)") }
            return filled.isEmpty ? [member] : fields.filter { !filled.contains($0) }.map { "\(member).\($0)" }
        }
        guard !unchecked.isEmpty else { return [] }
        return [
            "members the implementation does not declare it fills (feedbackMembers): \(unchecked.joined(separator: ", "))"
        ]
    }

    /// The report of HTTP cases that were not run, and why.
    package static func notRun(_ reason: String) -> CaseRunReport {
        notRun(label: "http", specFile: "HTTP.md", reason)
    }
}
