import RateLimitHTTP

// What a response's server feedback reads (Spec/HTTP.md HTTP-1 to HTTP-6, HTTP-10, HTTP-13), in
// the HTTP vectors' language-neutral form: read from the Swift reference, to and from JSON, and
// compared member by member. The cases and the file are in HTTPVectors.swift.

/// What a response's server feedback reads, in the vectors' language-neutral form: the `expect` of
/// a case, and the `result` an implementation answers over the protocol.
package struct FeedbackResult: Hashable, Sendable {
    /// A `Retry-After` read (HTTP-3): delay-seconds, or an HTTP-date as seconds since the epoch.
    package enum RetryAfterValue: Hashable, Sendable {
        case delay(seconds: Int64)
        case date(secondsSinceEpoch: Int64)
    }

    /// A `RateLimit` member (HTTP-5).
    package struct Limit: Hashable, Sendable {
        package var name: String
        package var remaining: Int64
        package var resetSeconds: Int64?
        package var partitionKey: String?

        package init(_ name: String, remaining: Int64, resetSeconds: Int64? = nil, partitionKey: String? = nil) {
            self.name = name
            self.remaining = remaining
            self.resetSeconds = resetSeconds
            self.partitionKey = partitionKey
        }
    }

    /// A `RateLimit-Policy` member (HTTP-5).
    package struct Policy: Hashable, Sendable {
        package var name: String
        package var quota: Int64
        package var unit: String
        package var windowSeconds: Int64?
        package var partitionKey: String?

        package init(
            _ name: String, quota: Int64, unit: String = "requests", windowSeconds: Int64? = nil,
            partitionKey: String? = nil
        ) {
            self.name = name
            self.quota = quota
            self.unit = unit
            self.windowSeconds = windowSeconds
            self.partitionKey = partitionKey
        }
    }

    /// The `X-RateLimit-*` fields as GitHub sends them (HTTP-5), each `nil` when absent or ignored.
    package struct XRateLimit: Hashable, Sendable {
        package var limit: Int64?
        package var remaining: Int64?
        package var used: Int64?
        /// Seconds since the epoch.
        package var reset: Int64?
        package var resource: String?

        package init(
            limit: Int64? = nil, remaining: Int64? = nil, used: Int64? = nil, reset: Int64? = nil,
            resource: String? = nil
        ) {
            self.limit = limit
            self.remaining = remaining
            self.used = used
            self.reset = reset
            self.resource = resource
        }
    }

    /// The quota left a response reports, with the nanoseconds until it resets (HTTP-6).
    package struct Quota: Hashable, Sendable {
        package var remaining: Int64
        package var resetNanoseconds: Int64

        package init(_ remaining: Int64, resetNanoseconds: Int64) {
            self.remaining = remaining
            self.resetNanoseconds = resetNanoseconds
        }
    }

    /// The rate a response states, for an adaptive rate to adopt (HTTP-13): `permits` per
    /// `windowNanoseconds`.
    package struct Rate: Hashable, Sendable {
        package var permits: Int64
        package var windowNanoseconds: Int64

        package init(_ permits: Int64, perNanoseconds windowNanoseconds: Int64) {
            self.permits = permits
            self.windowNanoseconds = windowNanoseconds
        }
    }

    /// Why a field was ignored, by name: Spec/vectors/http/README.md defines each.
    package enum Problem: String, CaseIterable, Hashable, Sendable {
        /// A singleton field on several lines with different values (HTTP-1).
        case repeated
        /// A value that is not of its field's syntax (HTTP-2, HTTP-3, HTTP-4, HTTP-5).
        case malformed
        /// A `RateLimit` or `RateLimit-Policy` member that breaks its field's rules (HTTP-5).
        case invalidMember
        /// A `Date` farther than an hour from the wall clock at receipt (HTTP-6).
        case clockSkew
        /// `RateLimit` fields of a response served from a cache (HTTP-6).
        case cached
    }

    /// A field ignored, and why.
    package struct Diagnostic: Hashable, Sendable, Comparable {
        /// The field's name as HTTP.md writes it (`Retry-After`, `X-RateLimit-Reset`).
        package var field: String
        package var problem: Problem

        package init(_ field: String, _ problem: Problem) {
            self.field = field
            self.problem = problem
        }

        package static func < (lhs: Diagnostic, rhs: Diagnostic) -> Bool {
            (lhs.field, lhs.problem.rawValue) < (rhs.field, rhs.problem.rawValue)
        }
    }

    package var retryAfter: RetryAfterValue?
    package var requestedWaitNanoseconds: Int64?
    /// The `Date` field read, in seconds since the epoch.
    package var date: Int64?
    /// What absolute times are read against: the `Date`, unless absent or skewed; else `receivedAt`.
    package var reference: Int64
    package var limits: [Limit]
    package var policies: [Policy]
    package var xRateLimit: XRateLimit
    package var remainingQuota: Quota?
    package var statedRate: Rate?
    /// In any order: HTTP.md does not order them.
    package var diagnostics: [Diagnostic]

    package init(
        retryAfter: RetryAfterValue? = nil, requestedWaitNanoseconds: Int64? = nil, date: Int64? = nil,
        reference: Int64, limits: [Limit] = [], policies: [Policy] = [], xRateLimit: XRateLimit = XRateLimit(),
        remainingQuota: Quota? = nil, statedRate: Rate? = nil, diagnostics: [Diagnostic] = []
    ) {
        self.retryAfter = retryAfter
        self.requestedWaitNanoseconds = requestedWaitNanoseconds
        self.date = date
        self.reference = reference
        self.limits = limits
        self.policies = policies
        self.xRateLimit = xRateLimit
        self.remainingQuota = remainingQuota
        self.statedRate = statedRate
        self.diagnostics = diagnostics
    }

    /// The members of a result, in the order the files write them.
    package static let members = [
        "retryAfter", "requestedWaitNanoseconds", "date", "reference", "limits", "policies", "xRateLimit",
        "remainingQuota", "statedRate", "diagnostics",
    ]
}

// MARK: - Reading the Swift reference

extension FeedbackResult {
    /// What the Swift reference (`ServerFeedback`) reads.
    ///
    /// - Throws: ``ConformanceFormatError`` when a diagnostic's problem is one this file does not
    ///   know how to name (the words of `ServerFeedback` changed): the vectors cannot say it.
    package init(_ feedback: ServerFeedback) throws(ConformanceFormatError) {
        let retryAfter: RetryAfterValue? =
            switch feedback.retryAfter {
            case .delay(let seconds)?: .delay(seconds: seconds)
            case .date(let date)?: .date(secondsSinceEpoch: date.secondsSinceEpoch)
            case nil: nil
            }
        var diagnostics: [Diagnostic] = []
        for diagnostic in feedback.diagnostics {
            diagnostics.append(Diagnostic(diagnostic.field, try Self.problem(of: diagnostic)))
        }
        let github = feedback.github
        self.init(
            retryAfter: retryAfter, requestedWaitNanoseconds: feedback.requestedWaitNanoseconds,
            date: feedback.date?.secondsSinceEpoch, reference: feedback.reference.secondsSinceEpoch,
            limits: feedback.limits.map {
                Limit($0.name, remaining: $0.remaining, resetSeconds: $0.resetSeconds, partitionKey: $0.partitionKey)
            },
            policies: feedback.policies.map {
                Policy(
                    $0.name, quota: $0.quota, unit: $0.unit, windowSeconds: $0.windowSeconds,
                    partitionKey: $0.partitionKey)
            },
            xRateLimit: XRateLimit(
                limit: github.limit, remaining: github.remaining, used: github.used,
                reset: github.reset?.secondsSinceEpoch, resource: github.resource),
            remainingQuota: feedback.remainingQuota.map { Quota($0.remaining, resetNanoseconds: $0.resetNanoseconds) },
            statedRate: feedback.statedRate.map { Rate($0.permits, perNanoseconds: $0.windowNanoseconds) },
            diagnostics: diagnostics)
    }

    /// The problem name of a diagnostic of `ServerFeedback`, from its words.
    static func problem(of diagnostic: FieldDiagnostic) throws(ConformanceFormatError) -> Problem {
        let text = diagnostic.problem
        switch text {
        case "repeated with different values": return .repeated
        case "not an HTTP-date", "neither delay-seconds nor an HTTP-date",
            "not a non-negative integer of at most 18 digits", "not a short printable token",
            "ignored: not a structured list":
            return .malformed
        case "ignored on a response served from a cache (Age)": return .cached
        case _ where text.hasPrefix("more than ") && text.hasSuffix(" taken as clock skew"): return .clockSkew
        case _ where text.hasPrefix("ignored: "): return .invalidMember
        default:
            throw ConformanceFormatError(
                "ServerFeedback reports \(diagnostic.field): \"\(text)\", which the HTTP vectors have no problem name for"
            )
        }
    }
}

// MARK: - JSON

extension FeedbackResult {
    package var json: JSONValue {
        func optional(_ value: Int64?) -> JSONValue { value.map(JSONValue.integer) ?? .null }
        func optional(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        let retryAfterJSON: JSONValue =
            switch retryAfter {
            case .delay(let seconds)?: .object([("delay", .integer(seconds))])
            case .date(let seconds)?: .object([("date", .integer(seconds))])
            case nil: .null
            }
        return .object([
            ("retryAfter", retryAfterJSON),
            ("requestedWaitNanoseconds", optional(requestedWaitNanoseconds)),
            ("date", optional(date)),
            ("reference", .integer(reference)),
            (
                "limits",
                .array(
                    limits.map {
                        .object([
                            ("name", .string($0.name)), ("remaining", .integer($0.remaining)),
                            ("resetSeconds", optional($0.resetSeconds)), ("partitionKey", optional($0.partitionKey)),
                        ])
                    })
            ),
            (
                "policies",
                .array(
                    policies.map {
                        .object([
                            ("name", .string($0.name)), ("quota", .integer($0.quota)), ("unit", .string($0.unit)),
                            ("windowSeconds", optional($0.windowSeconds)), ("partitionKey", optional($0.partitionKey)),
                        ])
                    })
            ),
            (
                "xRateLimit",
                .object([
                    ("limit", optional(xRateLimit.limit)), ("remaining", optional(xRateLimit.remaining)),
                    ("used", optional(xRateLimit.used)), ("reset", optional(xRateLimit.reset)),
                    ("resource", optional(xRateLimit.resource)),
                ])
            ),
            (
                "remainingQuota",
                remainingQuota.map {
                    .object([
                        ("remaining", .integer($0.remaining)), ("resetNanoseconds", .integer($0.resetNanoseconds)),
                    ])
                } ?? .null
            ),
            (
                "statedRate",
                statedRate.map {
                    .object([
                        ("permits", .integer($0.permits)), ("windowNanoseconds", .integer($0.windowNanoseconds)),
                    ])
                } ?? .null
            ),
            (
                "diagnostics",
                .array(
                    diagnostics.map {
                        .object([("field", .string($0.field)), ("problem", .string($0.problem.rawValue))])
                    }
                )
            ),
        ])
    }

    /// Reads a result: every member present, nothing else (`null` where a value is absent).
    package init(json: JSONValue) throws(ConformanceFormatError) {
        try Self.exactly(Self.members, in: json, "a result")
        let retryAfter: RetryAfterValue?
        switch json["retryAfter"] ?? .null {
        case .null: retryAfter = nil
        case let value where value.keys == ["delay"]:
            retryAfter = .delay(seconds: try Self.integer(value["delay"], "retryAfter.delay"))
        case let value where value.keys == ["date"]:
            retryAfter = .date(secondsSinceEpoch: try Self.integer(value["date"], "retryAfter.date"))
        default:
            throw ConformanceFormatError("retryAfter must be null, {\"delay\": seconds} or {\"date\": seconds}")
        }
        var limits: [Limit] = []
        for (index, value) in try Self.array(json["limits"], "limits").enumerated() {
            let what = "limits[\(index)]"
            try Self.exactly(["name", "remaining", "resetSeconds", "partitionKey"], in: value, what)
            limits.append(
                Limit(
                    try Self.string(value["name"], "\(what).name"),
                    remaining: try Self.integer(value["remaining"], "\(what).remaining"),
                    resetSeconds: try Self.optionalInteger(value["resetSeconds"], "\(what).resetSeconds"),
                    partitionKey: try Self.optionalString(value["partitionKey"], "\(what).partitionKey")))
        }
        var policies: [Policy] = []
        for (index, value) in try Self.array(json["policies"], "policies").enumerated() {
            let what = "policies[\(index)]"
            try Self.exactly(["name", "quota", "unit", "windowSeconds", "partitionKey"], in: value, what)
            policies.append(
                Policy(
                    try Self.string(value["name"], "\(what).name"),
                    quota: try Self.integer(value["quota"], "\(what).quota"),
                    unit: try Self.string(value["unit"], "\(what).unit"),
                    windowSeconds: try Self.optionalInteger(value["windowSeconds"], "\(what).windowSeconds"),
                    partitionKey: try Self.optionalString(value["partitionKey"], "\(what).partitionKey")))
        }
        let x = json["xRateLimit"] ?? .null
        try Self.exactly(["limit", "remaining", "used", "reset", "resource"], in: x, "xRateLimit")
        let xRateLimit = XRateLimit(
            limit: try Self.optionalInteger(x["limit"], "xRateLimit.limit"),
            remaining: try Self.optionalInteger(x["remaining"], "xRateLimit.remaining"),
            used: try Self.optionalInteger(x["used"], "xRateLimit.used"),
            reset: try Self.optionalInteger(x["reset"], "xRateLimit.reset"),
            resource: try Self.optionalString(x["resource"], "xRateLimit.resource"))
        let quota: Quota?
        switch json["remainingQuota"] ?? .null {
        case .null: quota = nil
        case let value:
            try Self.exactly(["remaining", "resetNanoseconds"], in: value, "remainingQuota")
            quota = Quota(
                try Self.integer(value["remaining"], "remainingQuota.remaining"),
                resetNanoseconds: try Self.integer(value["resetNanoseconds"], "remainingQuota.resetNanoseconds"))
        }
        let rate: Rate?
        switch json["statedRate"] ?? .null {
        case .null: rate = nil
        case let value:
            try Self.exactly(["permits", "windowNanoseconds"], in: value, "statedRate")
            rate = Rate(
                try Self.integer(value["permits"], "statedRate.permits"),
                perNanoseconds: try Self.integer(value["windowNanoseconds"], "statedRate.windowNanoseconds"))
        }
        var diagnostics: [Diagnostic] = []
        for (index, value) in try Self.array(json["diagnostics"], "diagnostics").enumerated() {
            let what = "diagnostics[\(index)]"
            try Self.exactly(["field", "problem"], in: value, what)
            let name = try Self.string(value["problem"], "\(what).problem")
            guard let problem = Problem(rawValue: name) else {
                throw ConformanceFormatError(
                    "\(what).problem \"\(name)\" is none of \(Problem.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            diagnostics.append(Diagnostic(try Self.string(value["field"], "\(what).field"), problem))
        }
        self.init(
            retryAfter: retryAfter,
            requestedWaitNanoseconds: try Self.optionalInteger(
                json["requestedWaitNanoseconds"], "requestedWaitNanoseconds"),
            date: try Self.optionalInteger(json["date"], "date"),
            reference: try Self.integer(json["reference"], "reference"),
            limits: limits, policies: policies, xRateLimit: xRateLimit, remainingQuota: quota, statedRate: rate,
            diagnostics: diagnostics)
    }

    /// `json` is an object with exactly the members `names`, in any order.
    static func exactly(_ names: [String], in json: JSONValue, _ what: String) throws(ConformanceFormatError) {
        guard case .object = json else { throw ConformanceFormatError("\(what) must be an object") }
        if let missing = names.first(where: { json[$0] == nil }) {
            throw ConformanceFormatError("\(what) has no \"\(missing)\"")
        }
        if let unknown = json.keys.first(where: { !names.contains($0) }) {
            throw ConformanceFormatError("\(what) has an unknown member \"\(unknown)\"")
        }
    }

    static func integer(_ value: JSONValue?, _ what: String) throws(ConformanceFormatError) -> Int64 {
        guard let number = value?.int64 else { throw ConformanceFormatError("\(what) must be a 64-bit integer") }
        return number
    }

    static func optionalInteger(_ value: JSONValue?, _ what: String) throws(ConformanceFormatError) -> Int64? {
        if value == .null { return nil }
        return try integer(value, "\(what) (or null)")
    }

    static func string(_ value: JSONValue?, _ what: String) throws(ConformanceFormatError) -> String {
        guard let text = value?.string else { throw ConformanceFormatError("\(what) must be a string") }
        return text
    }

    static func optionalString(_ value: JSONValue?, _ what: String) throws(ConformanceFormatError) -> String? {
        if value == .null { return nil }
        return try string(value, "\(what) (or null)")
    }

    static func array(_ value: JSONValue?, _ what: String) throws(ConformanceFormatError) -> [JSONValue] {
        guard let items = value?.array else { throw ConformanceFormatError("\(what) must be an array") }
        return items
    }
}

// MARK: - Comparing

extension FeedbackResult {
    /// Every member in which `answer` differs from this expected result, as
    /// `member: expected X, got Y` lines; members named in `unspecified` are not compared, and
    /// diagnostics are compared without regard to order.
    package func differences(
        from answer: FeedbackResult, unspecified: Set<String> = [], only declared: Set<String>? = nil
    ) -> [String] {
        let expected = comparable.json
        let got = answer.comparable.json
        return Self.members.flatMap { member -> [String] in
            guard !unspecified.contains(member), let want = expected[member], let have = got[member] else { return [] }
            guard let declared, !declared.contains(member) else {
                return want == have ? [] : ["\(member): expected \(want.compactText), got \(have.compactText)"]
            }
            // Only the fields of the member the implementation declares it fills (`xRateLimit.limit`).
            return Self.fields(of: member).filter { declared.contains("\(member).\($0)") }.compactMap { field in
                let (wanted, had) = (want[field] ?? .null, have[field] ?? .null)
                return wanted == had
                    ? nil : "\(member).\(field): expected \(wanted.compactText), got \(had.compactText)"
            }
        }
    }

    /// The fields a member's part may be declared by (`xRateLimit.remaining`): those of an object member.
    package static func fields(of member: String) -> [String] {
        member == "xRateLimit" ? ["limit", "remaining", "used", "reset", "resource"] : []
    }

    /// Every name a `feedbackMembers` declaration may hold: the members of a result and the fields
    /// of ``fields(of:)`` (protocol.md, "Extension server-feedback").
    package static var declarableMembers: [String] {
        members.flatMap { member in [member] + fields(of: member).map { "\(member).\($0)" } }
    }

    /// The result with its diagnostics in a fixed order, for comparing.
    private var comparable: FeedbackResult {
        var copy = self
        copy.diagnostics.sort()
        return copy
    }
}
