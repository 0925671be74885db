import RateLimitHTTP

// Random server responses for the server-feedback extension (Spec/HTTP.md), answered by the Swift
// reference (`ServerFeedback`): what a run explores of a parser beside the HTTP vectors. Each
// response is drawn from one of two families. The first holds `Retry-After` and `Date` only: delays
// at every edge (0, 2^31, 2^53, Int64 and past it, leading zeros) and malformed ones, HTTP-dates in
// all three formats over every weekday and month, leap days, two-digit years on both sides of a
// century, dates off by a second or skewed by an hour. The second adds `RateLimit`,
// `RateLimit-Policy` and the `X-RateLimit-*` fields with numbers at every edge. In both, field
// names in any case, fields repeated (alike or not) and unrelated fields.

/// Random server responses; see `FeedbackGenerator.swift`.
package enum FeedbackGenerator {
    /// The label of a run's report of generated responses (`http-generated` in `--json`).
    package static let label = "http-generated"

    /// The families of generated responses.
    package enum Family: String, CaseIterable, Sendable {
        case retryAfter = "retry-after"
        case rateLimit = "ratelimit"
    }

    /// Response `index` under `seed`, its answer the reference's; `nil` when the reference cannot
    /// answer it (never expected: every response has an answer).
    package static func feedbackCase(seed: UInt64, index: Int) -> FeedbackCase? {
        var rng = SeededGenerator(seed: seed, stream: "server feedback", index: index)
        let family: Family = rng.chance(60) ? .retryAfter : .rateLimit
        let receivedAt = rng.chance(70) ? rng.pick(receivedEdges) : rng.int(in: 0...4_102_444_800)
        var fields: [FeedbackCase.Field] = []
        var reference = receivedAt
        if rng.chance(40) {
            // A Date near the receipt (the reference of absolute times), or skewed past an hour.
            let skew = rng.chance(70) ? rng.int(in: -120...120) : rng.pick([-3_601, -3_600, 3_600, 3_601, 86_400])
            let date = receivedAt + skew
            if abs(skew) <= 3_600 { reference = date }
            fields.append(FeedbackCase.Field(name("Date", &rng), httpDate(date, &rng)))
        }
        if rng.chance(85) {
            fields.append(FeedbackCase.Field(name("Retry-After", &rng), retryAfter(reference: reference, &rng)))
        }
        if family == .rateLimit {
            for field in rateLimitFields(&rng) { fields.append(FeedbackCase.Field(name(field.0, &rng), field.1)) }
        }
        if rng.chance(15), let repeated = fields.randomElement(using: &rng) {
            // A field again: the same value (one value) or another (HTTP-1: repeated).
            let value = rng.chance(50) ? repeated.value : rng.pick(["0", "1", "junk", repeated.value + " "])
            fields.insert(
                FeedbackCase.Field(name(repeated.name, &rng), value), at: Int(rng.int(in: 0...Int64(fields.count))))
        }
        if rng.chance(20) { fields.append(FeedbackCase.Field(rng.pick(["X-Junk", "Retry", "RateLimits"]), "5")) }
        let status = rng.pick([429, 429, 503, 503, 200, 500, 301, 204])
        var feedbackCase = FeedbackCase(
            id: "server-feedback/generated-seed-\(seed)-\(index)-\(family.rawValue)", comment: "generated",
            clauses: [], status: Int64(status), fields: fields, receivedAt: receivedAt,
            expected: FeedbackResult(reference: receivedAt))
        guard let expected = try? feedbackCase.referenceResult() else { return nil }
        feedbackCase.expected = expected
        return feedbackCase
    }

    /// The family of generated case `id`.
    package static func family(of id: String) -> Family? {
        Family.allCases.first { id.hasSuffix("-" + $0.rawValue) }
    }

    /// The case in one line, for a report: status, fields and instant of receipt.
    package static func summary(_ feedbackCase: FeedbackCase) -> String {
        let fields = feedbackCase.fields.map { "\($0.name): \($0.value)" }.joined(separator: " | ")
        return "\(feedbackCase.status), [\(fields)], received at \(feedbackCase.receivedAt)"
    }

    // MARK: Values

    /// Receipts at the edges: the epoch, RFC 9110's example, 2^31 − 1 and 2^31, the century,
    /// the last second IMF-fixdate writes.
    private static let receivedEdges: [Int64] = [
        0, 1, 784_111_777, 946_684_799, 946_684_800, 1_700_000_000, 2_147_483_647, 2_147_483_648, 4_102_444_800,
        253_402_300_799,
    ]

    /// `field` with its letters' case changed now and then (names are case-insensitive, HTTP-1).
    private static func name(_ field: String, _ rng: inout SeededGenerator) -> String {
        switch rng.int(in: 0...9) {
        case 0: field.lowercased()
        case 1: field.uppercased()
        case 2: String(field.map { rng.chance(50) ? Character($0.uppercased()) : Character($0.lowercased()) })
        default: field
        }
    }

    private static func retryAfter(reference: Int64, _ rng: inout SeededGenerator) -> String {
        switch rng.int(in: 0...9) {
        case 0...3:
            // delay-seconds: at the edges, or log-uniform over the whole range.
            let edges = [
                "0", "1", "59", "60", "3600", "86400", "2147483647", "2147483648", "4294967296", "9007199254740993",
                "9223372036854775807", "9223372036854775808", "99999999999999999999999", "007",
                "0000000000000000000001",
            ]
            return rng.chance(50) ? rng.pick(edges) : String(rng.logUniform(in: 0...Int64.max))
        case 4:
            return rng.pick(["-1", "+5", "1.5", "1e3", "", "five", "0x10", "5 5", "5,", " ", "\t7", "8 "])
        default:
            let offset =
                rng.chance(50)
                ? rng.pick([0, -1, 1, 59, 3_600, 86_400, -86_400, 31_536_000]) : rng.int(in: -100_000...10_000_000)
            return httpDate(reference + offset, &rng)
        }
    }

    /// An HTTP-date for `seconds` in one of the three formats, now and then spoiled (a wrong
    /// weekday, a day or an hour out of range, lower-case names, a missing GMT).
    private static func httpDate(_ seconds: Int64, _ rng: inout SeededGenerator) -> String {
        let days = floorDivide(seconds, 86_400)
        let time = seconds - days * 86_400
        var (year, month, day) = HTTPDate.civil(fromDays: days)
        var weekday = Int((days % 7 + 7 + 3) % 7)  // 0 = Monday (1970-01-01 was a Thursday)
        var (hour, minute, second) = (time / 3_600, time / 60 % 60, time % 60)
        var lower = false
        var zone = "GMT"
        if rng.chance(15) {
            switch rng.int(in: 0...6) {
            case 0: weekday = (weekday + Int(rng.int(in: 1...6))) % 7
            case 1: day = rng.pick([0, 32, 31, 30, 29])
            case 2: (month, day) = (2, 29)  // a leap day, whatever the year
            case 3: hour = rng.pick([24, 23])
            case 4: (minute, second) = (rng.pick([59, 60]), rng.pick([60, 61, 59]))
            case 5: lower = true
            default: zone = rng.pick(["UTC", "gmt", ""])
            }
        }
        func two(_ n: Int64) -> String { n < 10 && n >= 0 ? "0\(n)" : "\(n)" }
        let clock = "\(two(hour)):\(two(minute)):\(two(second))"
        let shortDay = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][weekday]
        let longDay = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][weekday]
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][
            Int(min(max(month, 1), 12)) - 1]
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        let text: String
        switch rng.int(in: 0...4) {
        case 0:
            text = "\(longDay), \(two(day))-\(monthName)-\(two(((year % 100) + 100) % 100)) \(clock) \(zone)"
        case 1:
            let padded = day < 10 && day >= 0 ? " \(day)" : "\(day)"
            text = "\(shortDay) \(monthName) \(padded) \(clock) \(yearText)"
        default:
            text = "\(shortDay), \(two(day)) \(monthName) \(yearText) \(clock) \(zone)"
        }
        return lower ? text.lowercased() : text.trimmingSuffixSpace
    }

    /// `RateLimit`, `RateLimit-Policy` and `X-RateLimit-*` fields with numbers at the edges.
    private static func rateLimitFields(_ rng: inout SeededGenerator) -> [(String, String)] {
        func number() -> String {
            rng.chance(60)
                ? rng.pick([
                    "0", "1", "10", "100", "1000", "2147483648", "9007199254740993", "999999999999999",
                    "1000000000000000",
                    "9223372036854775807", "9223372036854775808", "-1", "1.5", "abc",
                ]) : String(rng.logUniform(in: 0...999_999_999_999_999))
        }
        var fields: [(String, String)] = []
        let policy = rng.pick(["\"default\"", "\"burst\"", "default", "\"day\""])
        if rng.chance(70) {
            var members = "\(policy);r=\(number())"
            if rng.chance(80) { members += ";t=\(number())" }
            if rng.chance(15) { members += ";pk=:cHJvamVjdA==:" }
            if rng.chance(15) { members += ", \"other\";r=\(number());t=\(number())" }
            fields.append(("RateLimit", members))
        }
        if rng.chance(50) {
            var members = "\(policy);q=\(number())"
            if rng.chance(80) { members += ";w=\(number())" }
            if rng.chance(15) { members += ";qu=\"\(rng.pick(["requests", "content-bytes", "concurrent-requests"]))\"" }
            fields.append(("RateLimit-Policy", members))
        }
        if rng.chance(40) {
            for name in ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset"]
            where rng.chance(70) {
                fields.append((name, number()))
            }
            if rng.chance(20) { fields.append(("X-RateLimit-Resource", rng.pick(["core", "search", ""]))) }
        }
        return fields
    }
}

extension String {
    /// Without a trailing space (an HTTP-date whose zone was dropped).
    fileprivate var trimmingSuffixSpace: String { hasSuffix(" ") ? String(dropLast()) : self }
}
