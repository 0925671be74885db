// What one response says about the server's limits (Spec/HTTP.md HTTP-6): every rate-limit field
// read, malformed ones ignored and reported, and the wait the server asks for.

/// The rate-limit information of one response.
public struct ServerFeedback: Hashable, Sendable {
    /// The status code.
    public let status: Int
    /// The `Date` field, if present and valid.
    public let date: HTTPDate?
    /// The wall-clock time the response was received at.
    public let receivedAt: HTTPDate
    /// What absolute times of the response (a date-form `Retry-After`, `X-RateLimit-Reset`) are
    /// read against: its `Date`, unless absent or farther than ``trustedClockSkewSeconds`` from
    /// `receivedAt` (a server clock that far off is taken as skew, not trusted), else `receivedAt`.
    public let reference: HTTPDate

    /// How far a response's `Date` may lie from the local clock and still be trusted: one hour.
    public static let trustedClockSkewSeconds: Int64 = 3_600
    public let retryAfter: RetryAfter?
    /// `RateLimit-Policy` members (informative, §7 of the draft).
    public let policies: [QuotaPolicy]
    /// `RateLimit` members.
    public let limits: [ServiceLimit]
    public let github: GitHubRateLimit
    /// Fields ignored, and why.
    public let diagnostics: [FieldDiagnostic]

    /// Reads `fields` of a response with `status`, received when the wall clock read `receivedAt`.
    public init(status: Int, fields: HTTPFields, receivedAt: HTTPDate) {
        self.status = status
        self.receivedAt = receivedAt
        var diagnostics: [FieldDiagnostic] = []

        // Every value of `name`, trimmed of spaces and tabs (HTTP-1): lines that differ only there
        // carry the same value, and a list's first line may start with a tab.
        func trimmedValues(_ name: String) -> [String] {
            fields.values(name).map { String(decoding: trimmingWhitespace($0), as: UTF8.self) }
        }
        func single(_ name: String) -> String? {
            let values = trimmedValues(name)
            guard let first = values.first else { return nil }
            guard values.allSatisfy({ $0 == first }) else {
                diagnostics.append(
                    FieldDiagnostic(
                        field: name, value: fields.values(name).joined(separator: ", "),
                        problem: "repeated with different values"))
                return nil
            }
            return first
        }

        var date: HTTPDate?
        if let value = single("Date") {
            date = HTTPDate(String(decoding: trimmingWhitespace(value), as: UTF8.self), reference: receivedAt)
            if date == nil {
                diagnostics.append(FieldDiagnostic(field: "Date", value: value, problem: "not an HTTP-date"))
            }
        }
        self.date = date
        var reference = receivedAt
        if let date, let value = single("Date") {
            let (skew, overflow) = date.secondsSinceEpoch.subtractingReportingOverflow(receivedAt.secondsSinceEpoch)
            if !overflow, skew.magnitude <= UInt64(Self.trustedClockSkewSeconds) {
                reference = date
            } else {
                diagnostics.append(
                    FieldDiagnostic(
                        field: "Date", value: value,
                        problem: "more than \(Self.trustedClockSkewSeconds) s from the local clock: taken as clock skew"
                    ))
            }
        }
        self.reference = reference

        var retryAfter: RetryAfter?
        if let value = single("Retry-After") {
            retryAfter = RetryAfter(value, reference: reference)
            if retryAfter == nil {
                diagnostics.append(
                    FieldDiagnostic(
                        field: "Retry-After", value: value, problem: "neither delay-seconds nor an HTTP-date"))
            }
        }
        self.retryAfter = retryAfter

        // The draft's §7.3: the quota fields of a response served from a cache (a positive Age)
        // are stale; the same holds for GitHub's X-RateLimit fields (HTTP-6).
        let cached = single("Age").map { !trimmingWhitespace($0).allSatisfy { $0 == 48 } } ?? false
        func ignoredAsCached(_ name: String, _ value: String) -> Bool {
            guard cached else { return false }
            diagnostics.append(
                FieldDiagnostic(field: name, value: value, problem: "ignored on a response served from a cache (Age)"))
            return true
        }
        func structured<T>(_ name: String, _ parse: (String) -> Result<[T], FieldProblem>) -> [T] {
            let lines = trimmedValues(name)
            guard !lines.isEmpty else { return [] }
            let value = lines.joined(separator: ", ")
            if ignoredAsCached(name, value) { return [] }
            switch parse(value) {
            case .success(let members): return members
            case .failure(let problem):
                diagnostics.append(FieldDiagnostic(field: name, value: value, problem: "ignored: \(problem.text)"))
                return []
            }
        }
        policies = structured("RateLimit-Policy", QuotaPolicy.parse)
        limits = structured("RateLimit", ServiceLimit.parse)

        var github = GitHubRateLimit()
        func count(_ name: String) -> Int64? {
            guard let value = single(name), !ignoredAsCached(name, value) else { return nil }
            let digits = trimmingWhitespace(value)
            guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                diagnostics.append(
                    FieldDiagnostic(
                        field: name, value: value, problem: "not a non-negative integer of at most 18 digits"))
                return nil
            }
            return saturatingDecimal(digits)
        }
        github.limit = count("X-RateLimit-Limit")
        github.remaining = count("X-RateLimit-Remaining")
        github.used = count("X-RateLimit-Used")
        github.reset = count("X-RateLimit-Reset").map { HTTPDate(secondsSinceEpoch: $0) }
        if let value = single("X-RateLimit-Resource"), !ignoredAsCached("X-RateLimit-Resource", value) {
            let text = trimmingWhitespace(value)
            if !text.isEmpty, text.count <= 64, text.allSatisfy({ $0 > 32 && $0 < 127 }) {
                github.resource = String(decoding: text, as: UTF8.self)
            } else {
                diagnostics.append(
                    FieldDiagnostic(field: "X-RateLimit-Resource", value: value, problem: "not a short printable token")
                )
            }
        }
        self.github = github
        self.diagnostics = diagnostics
    }

    /// The time the server asks the client to wait before its next request, in nanoseconds from
    /// the response, if it asks for one (HTTP-6), in this order of precedence:
    /// 1. `Retry-After` (a date counts from ``reference``);
    /// 2. a `RateLimit` member with `r = 0`: its `t` (the longest, when several are exhausted);
    /// 3. `X-RateLimit-Remaining: 0`: until `X-RateLimit-Reset` (from ``reference``).
    public var requestedWaitNanoseconds: Int64? {
        if let retryAfter { return retryAfter.nanoseconds(after: reference) }
        let exhausted = limits.filter { $0.remaining == 0 }.compactMap(\.resetSeconds)
        if let longest = exhausted.max() { return saturatingNanoseconds(seconds: longest) }
        if github.remaining == 0, let reset = github.reset {
            return RetryAfter.date(reset).nanoseconds(after: reference)
        }
        return nil
    }

    /// The smallest remaining quota the server reports with the seconds until it resets, if any
    /// (HTTP-6): the `RateLimit` member with the least `r` that has a `t`, else GitHub's
    /// remaining and reset.
    public var remainingQuota: (remaining: Int64, resetNanoseconds: Int64)? {
        if let tightest = limits.filter({ $0.resetSeconds != nil }).min(by: { $0.remaining < $1.remaining }),
            let reset = tightest.resetSeconds
        {
            return (tightest.remaining, saturatingNanoseconds(seconds: reset))
        }
        if let remaining = github.remaining, let reset = github.reset {
            return (remaining, RetryAfter.date(reset).nanoseconds(after: reference))
        }
        return nil
    }

    /// The rate the server states, for an adaptive rate to adopt (HTTP-13, ADAPT-7): the
    /// `RateLimit-Policy` member counting requests over a window that allows the fewest per second
    /// (compared exactly, `q₁·w₂` against `q₂·w₁`; the first of equals); else the pace that spends
    /// `X-RateLimit-Remaining` by `X-RateLimit-Reset` (read against ``reference``) when the reset
    /// lies ahead. A `RateLimit` field alone states a quota left, not a rate: none.
    public var statedRate: StatedRate? {
        let rated = policies.compactMap { policy in
            policy.unit == "requests" ? policy.windowSeconds.flatMap { $0 >= 1 ? (policy.quota, $0) : nil } : nil
        }
        if let slowest = rated.min(by: { first, second in
            let left = first.0.multipliedFullWidth(by: second.1)
            let right = second.0.multipliedFullWidth(by: first.1)
            return left.high != right.high ? left.high < right.high : left.low < right.low
        }) {
            return StatedRate(permits: slowest.0, windowNanoseconds: saturatingNanoseconds(seconds: slowest.1))
        }
        if let remaining = github.remaining, let reset = github.reset {
            let window = RetryAfter.date(reset).nanoseconds(after: reference)
            if window > 0 { return StatedRate(permits: remaining, windowNanoseconds: window) }
        }
        return nil
    }
}
