import RateLimitConformance
import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitHTTP

// HTTP-10: every parser gets 100,000 generated values: valid ones (which must read back exactly),
// mutations of valid ones, random bytes (non-ASCII included), extreme numbers and 10 KB values.
// Nothing may trap; a crash fails the whole run. The loops yield now and then: Swift Testing runs
// tests on the cooperative pool, and a long synchronous loop would starve the adapter tests' tasks.

private let values = 100_000

/// Random printable-or-not text: mostly ASCII, sometimes any Unicode scalar.
/// Draws 64 bits at a time and spends them 21 at a time (a scalar each): the generic
/// `random(in:)` path is slow in debug builds, and the 10 KB values need millions of draws.
private func noise(_ rng: inout SeededGenerator, length: Int) -> String {
    var scalars = String.UnicodeScalarView()
    var bits: UInt64 = 0
    for index in 0..<length {
        if index % 3 == 0 { bits = rng.next() }
        let draw = UInt32(truncatingIfNeeded: bits & 0x1F_FFFF)
        bits >>= 21
        // About 85% ASCII (any of 0...127), otherwise any scalar up to U+10FFFF (surrogates read as "x").
        scalars.append(
            draw % 100 < 85 ? Unicode.Scalar(UInt8(draw >> 7 & 0x7F)) : Unicode.Scalar(128 + draw % 0x10_FF80) ?? "x")
    }
    return String(scalars)
}

/// `valid` with a few bytes inserted, deleted or replaced.
private func mutated(_ valid: String, _ rng: inout SeededGenerator) -> String {
    var scalars = Array(valid.unicodeScalars)
    for _ in 0..<rng.int(in: 1...3) {
        let position = Int(rng.int(in: 0...Int64(scalars.count)))
        switch rng.int(in: 0...2) {
        case 0:
            scalars.insert(
                rng.pick(Array(#" ,;=:"()?@%\*-.0123456789aZ"#.unicodeScalars) + ["é", "\u{0}", "\t"]), at: position)
        case 1 where position < scalars.count: scalars.remove(at: position)
        default: if position < scalars.count { scalars[position] = rng.pick(Array("09 ,;\"".unicodeScalars)) }
        }
    }
    return String(String.UnicodeScalarView(scalars))
}

/// Some value for a parser: valid (with what it must read as), mutated, noise, a number or 10 KB.
private func sample<T>(_ rng: inout SeededGenerator, valid: (inout SeededGenerator) -> (String, T)) -> (String, T?) {
    switch rng.int(in: 0...99) {
    case 0..<40: return valid(&rng)
    case 40..<75: return (mutated(valid(&rng).0, &rng), nil)
    case 75..<92: return (noise(&rng, length: Int(rng.int(in: 0...40))), nil)
    case 92..<97:
        return (
            rng.pick([
                "-1", "0", "9223372036854775807", "9223372036854775808", String(repeating: "9", count: 300),
                "-9223372036854775808", "",
            ]), nil
        )
    default:
        return (
            rng.chance(50)
                ? String(repeating: valid(&rng).0 + ",", count: 10_000 / max(1, valid(&rng).0.utf8.count))
                : noise(&rng, length: 10_000), nil
        )
    }
}

private let weekdays = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]

/// A valid date in one of the three formats, and its instant.
private func validDate(_ rng: inout SeededGenerator) -> (String, HTTPDate) {
    let date = HTTPDate(secondsSinceEpoch: rng.int(in: 0...253_402_300_799))
    let imf = date.description  // "Sun, 06 Nov 1994 08:49:37 GMT"
    let parts = imf.split(separator: " ")
    let (day, month, year, time) = (parts[1], parts[2], parts[3], parts[4])
    switch rng.int(in: 0...2) {
    case 0: return (imf, date)
    case 1:
        // RFC 850 only when the two-digit year reads back (within 50 years of the reference).
        let full = Int(year)!
        guard full >= 1977, full <= 2076 else { return (imf, date) }
        let weekday = weekdays[Int(floorModulo(date.secondsSinceEpoch / 86_400, 7))]
        return ("\(weekday), \(day)-\(month)-\(year.suffix(2)) \(time) GMT", date)
    default:
        let shortDay = day.first == "0" ? " \(day.last!)" : String(day)
        return ("\(parts[0].dropLast()) \(month) \(shortDay) \(time) \(year)", date)
    }
}

/// A valid RateLimit field value and its members.
private func validLimits(_ rng: inout SeededGenerator) -> (String, [ServiceLimit]) {
    let limits = (0..<rng.int(in: 1...4)).map { index in
        ServiceLimit(
            name: "p\(index)", remaining: rng.int(in: 0...999_999_999_999_999),
            resetSeconds: rng.chance(70) ? rng.int(in: 0...86_400) : nil,
            partitionKey: rng.chance(20) ? "abc+/=" : nil)
    }
    let text = limits.map { limit in
        "\"\(limit.name)\";r=\(limit.remaining)" + (limit.resetSeconds.map { ";t=\($0)" } ?? "")
            + (limit.partitionKey.map { ";pk=:\($0):" } ?? "")
            + (rng.chance(10) ? ";acme-x=?1" : "")
    }.joined(separator: rng.chance(50) ? ", " : ",")
    return (text, limits)
}

@Suite("Hostile input never traps (Spec/HTTP.md HTTP-10)")
struct FuzzTests {
    @Test("HTTP-10 100,000 generated HTTP-dates: valid ones read back exactly, the rest never trap")
    func dates() async { await offThePool { await datesOnThread() } }

    private func datesOnThread() async {
        var rng = TestSeed.generator("fuzzDates", trace: 0)
        for index in 0..<values {
            if index % 500 == 0 { await Task.yield() }
            let (text, expected) = sample(&rng, valid: validDate)
            let parsed = HTTPDate(text, reference: reference)
            if let expected,
                !holds(
                    parsed == expected,
                    "HTTP-2 \(text) read \(String(describing: parsed)), want \(expected) (value \(index))",
                    replay: TestSeed.replay("fuzzDates", trace: 0))
            {
                return
            }
        }
    }

    @Test("HTTP-10 100,000 generated Retry-After values never trap; digits read exactly or saturate")
    func retryAfter() async { await offThePool { await retryAfterOnThread() } }

    private func retryAfterOnThread() async {
        var rng = TestSeed.generator("fuzzRetryAfter", trace: 0)
        for index in 0..<values {
            if index % 500 == 0 { await Task.yield() }
            let (text, expected) = sample(&rng) { rng -> (String, Int64) in
                let seconds = rng.int(in: 0...Int64.max)
                return ("\(seconds)", seconds > Int64.max / 1_000_000_000 ? .max : seconds * 1_000_000_000)
            }
            let wait = RetryAfter(text, reference: reference)?.nanoseconds(after: reference)
            if let expected,
                !holds(
                    wait == expected, "HTTP-3 \(text) waits \(String(describing: wait)) (value \(index))",
                    replay: TestSeed.replay("fuzzRetryAfter", trace: 0))
            {
                return
            }
        }
    }

    @Test("HTTP-10 100,000 generated structured lists never trap")
    func structuredLists() async { await offThePool { await structuredListsOnThread() } }

    private func structuredListsOnThread() async {
        var rng = TestSeed.generator("fuzzStructured", trace: 0)
        var parsed = 0
        for index in 0..<values {
            if index % 500 == 0 { await Task.yield() }
            let (text, _) = sample(&rng) { rng in
                (
                    validLimits(&rng).0
                        + (rng.chance(30) ? #", (1 "x" ?0);a=1.5, tok/x:y, :aGk=:, @12, %"a%c3%a9""# : ""), ()
                )
            }
            if parseStructuredList(text) != nil { parsed += 1 }
        }
        #expect(parsed > values / 3, "only \(parsed) lists parsed: the generator lost its valid values")
    }

    @Test("HTTP-10 100,000 generated RateLimit fields: valid ones read back exactly, the rest are ignored, never trap")
    func rateLimitFields() async { await offThePool { await rateLimitFieldsOnThread() } }

    private func rateLimitFieldsOnThread() async {
        var rng = TestSeed.generator("fuzzRateLimit", trace: 0)
        for index in 0..<values {
            if index % 500 == 0 { await Task.yield() }
            let (text, expected) = sample(&rng, valid: validLimits)
            let read = ServerFeedback(status: 200, fields: ["RateLimit": text], receivedAt: reference)
            _ = read.requestedWaitNanoseconds
            _ = read.remainingQuota
            if let expected,
                !holds(
                    read.limits == expected && read.diagnostics.isEmpty,
                    "HTTP-5 \(text) read \(read.limits) (value \(index))",
                    replay: TestSeed.replay("fuzzRateLimit", trace: 0))
            {
                return
            }
        }
    }

    @Test("HTTP-10 100,000 generated X-RateLimit, Date and Retry-After fields together never trap")
    func gitHubFields() async { await offThePool { await gitHubFieldsOnThread() } }

    private func gitHubFieldsOnThread() async {
        var rng = TestSeed.generator("fuzzGitHub", trace: 0)
        for index in 0..<values {
            if index % 500 == 0 { await Task.yield() }
            let (count, expected) = sample(&rng) { rng -> (String, Int64) in
                let value = rng.int(in: 0...999_999_999_999_999_999)
                return ("\(value)", value)
            }
            let (date, _) = sample(&rng, valid: validDate)
            let read = ServerFeedback(
                status: rng.pick([200, 403, 429, 503]),
                fields: HTTPFields([
                    ("X-RateLimit-Remaining", count), ("X-RateLimit-Reset", count), ("Date", date),
                    ("Retry-After", rng.chance(50) ? count : date),
                    ("X-RateLimit-Resource", noise(&rng, length: 8)),
                ]), receivedAt: reference)
            _ = read.requestedWaitNanoseconds
            _ = read.remainingQuota
            if let expected,
                !holds(
                    read.github.remaining == expected,
                    "HTTP-5 \(count) read \(String(describing: read.github.remaining)) (value \(index))",
                    replay: TestSeed.replay("fuzzGitHub", trace: 0))
            {
                return
            }
        }
    }
}
