// Spec/HTTP.md, HTTP-1 to HTTP-4 (HTTP-5, HTTP-6, HTTP-10 and HTTP-13 in HTTPRateLimitFieldStories.swift): what a
// one response and its answer, worked out by hand from HTTP.md; the epoch seconds of the dates come
// from the proleptic Gregorian calendar (1970-01-01 is day 0), never from the parser under test.
// Most responses arrive at t0 = Sat, 21 Nov 2026 00:00:00 GMT = 1,795,219,200 s.

/// The hand-written HTTP cases (Spec/vectors/http/server-feedback.json).
///
/// This is the one place their answers are written: ``HTTPVectorGenerator`` runs the Swift
/// `ServerFeedback` over every case and fails, naming the case and the member, where it reads
/// otherwise.
package enum HTTPFeedbackCatalogue {
    /// Sat, 21 Nov 2026 00:00:00 GMT.
    static let t0: Int64 = 1_795_219_200
    static let imfT0 = "Sat, 21 Nov 2026 00:00:00 GMT"

    /// The answer a case expects. `reference` is `receivedAt` unless given: with no trusted
    /// `Date`, absolute times are read against the wall clock at receipt (HTTP-6).
    struct Expect {
        var retryAfter: FeedbackResult.RetryAfterValue?
        var wait: Int64?
        var date: Int64?
        var reference: Int64?
        var limits: [FeedbackResult.Limit] = []
        var policies: [FeedbackResult.Policy] = []
        var x = FeedbackResult.XRateLimit()
        var quota: FeedbackResult.Quota?
        /// The rate the response states (HTTP-13).
        var rate: FeedbackResult.Rate?
        var diagnostics: [FeedbackResult.Diagnostic] = []
    }

    /// A case: `fields` received at `receivedAt` with `status`, and what they read.
    static func response(
        _ name: String, _ comment: String, clauses: [String], status: Int64 = 429, receivedAt: Int64 = t0,
        _ fields: [(String, String)], _ expect: Expect, unspecified: [String] = []
    ) -> FeedbackCase {
        FeedbackCase(
            id: "server-feedback/\(name)", comment: comment, clauses: clauses.sorted(by: VectorGenerator.clauseOrder),
            status: status,
            fields: fields.map { FeedbackCase.Field($0.0, $0.1) }, receivedAt: receivedAt,
            expected: FeedbackResult(
                retryAfter: expect.retryAfter, requestedWaitNanoseconds: expect.wait, date: expect.date,
                reference: expect.reference ?? receivedAt, limits: expect.limits, policies: expect.policies,
                xRateLimit: expect.x, remainingQuota: expect.quota, statedRate: expect.rate,
                diagnostics: expect.diagnostics),
            unspecified: unspecified)
    }

    /// `n` seconds in nanoseconds.
    static func seconds(_ n: Int64) -> Int64 { n * 1_000_000_000 }
    static func delay(_ n: Int64) -> FeedbackResult.RetryAfterValue { .delay(seconds: n) }
    static func date(_ n: Int64) -> FeedbackResult.RetryAfterValue { .date(secondsSinceEpoch: n) }
    static func limit(_ name: String, _ remaining: Int64, _ reset: Int64? = nil, pk: String? = nil)
        -> FeedbackResult.Limit
    {
        FeedbackResult.Limit(name, remaining: remaining, resetSeconds: reset, partitionKey: pk)
    }
    static func quota(_ remaining: Int64, _ resetNanoseconds: Int64) -> FeedbackResult.Quota {
        FeedbackResult.Quota(remaining, resetNanoseconds: resetNanoseconds)
    }
    /// `permits` per `windowNanoseconds`.
    static func rate(_ permits: Int64, per windowNanoseconds: Int64) -> FeedbackResult.Rate {
        FeedbackResult.Rate(permits, perNanoseconds: windowNanoseconds)
    }
    static func ignored(_ field: String, _ problem: FeedbackResult.Problem) -> FeedbackResult.Diagnostic {
        FeedbackResult.Diagnostic(field, problem)
    }

    /// Every case, in the file's order: by clause, HTTP-1 first.
    package static func cases() -> [FeedbackCase] {
        fields() + dates() + retryAfter() + structuredFields() + rateLimitFields() + precedence() + hostile()
            + statedRates()
    }

    // MARK: HTTP-1 Fields

    static func fields() -> [FeedbackCase] {
        [
            response(
                "field-names-any-case",
                "names compare without regard to ASCII case: rEtRy-AfTeR, DATE, ratelimit and x-ratelimit-remaining are read; a 200 asks for the wait its Retry-After names too",
                clauses: ["HTTP-1"], status: 200,
                [
                    ("rEtRy-AfTeR", "30"), ("DATE", imfT0), ("ratelimit", #""a";r=7;t=30"#),
                    ("x-ratelimit-remaining", "7"),
                ],
                Expect(
                    retryAfter: delay(30), wait: seconds(30), date: t0, limits: [limit("a", 7, 30)],
                    x: .init(remaining: 7), quota: quota(7, seconds(30)))),
            response(
                "list-fields-on-several-lines",
                "RateLimit and RateLimit-Policy sent on two lines each are one list each, joined with \", \": members a then b; b (20 per 60 s) states the rate, a has no window",
                clauses: ["HTTP-1", "HTTP-5", "HTTP-13"], status: 200,
                [
                    ("RateLimit", #""a";r=5;t=9"#), ("RateLimit-Policy", #""a";q=10"#),
                    ("RATELIMIT", #""b";r=1;t=30"#), ("ratelimit-policy", #""b";q=20;w=60"#),
                ],
                Expect(
                    limits: [limit("a", 5, 9), limit("b", 1, 30)],
                    policies: [.init("a", quota: 10), .init("b", quota: 20, windowSeconds: 60)],
                    quota: quota(1, seconds(30)), rate: rate(20, per: seconds(60)))),
            response(
                "singleton-repeated-same-value",
                "a singleton sent twice with the same value is read: Retry-After 5 twice, X-RateLimit-Limit 60 twice",
                clauses: ["HTTP-1"],
                [("Retry-After", "5"), ("retry-after", "5"), ("X-RateLimit-Limit", "60"), ("X-RateLimit-Limit", "60")],
                Expect(retryAfter: delay(5), wait: seconds(5), x: .init(limit: 60))),
            response(
                "singleton-repeated-different-values",
                "Retry-After 5 and 7 on two lines: a singleton with different values is ignored, with a diagnostic; nothing asks for a wait",
                clauses: ["HTTP-1"], [("Retry-After", "5"), ("Retry-After", "7")],
                Expect(diagnostics: [ignored("Retry-After", .repeated)])),
            response(
                "singleton-repeated-differing-only-in-whitespace",
                "\"5\" and \" 5<TAB>\" are the same value once trimmed of spaces and tabs: read, no diagnostic",
                clauses: ["HTTP-1"], [("Retry-After", "5"), ("Retry-After", " 5\t")],
                Expect(retryAfter: delay(5), wait: seconds(5))),
            response(
                "date-repeated-different-values",
                "two different Dates: Date is ignored, so the date-form Retry-After (t0 + 30) counts from receipt at t0 + 10: 20 s",
                clauses: ["HTTP-1", "HTTP-6"], receivedAt: t0 + 10,
                [
                    ("Date", imfT0), ("Date", "Sat, 21 Nov 2026 00:00:05 GMT"),
                    ("Retry-After", "Sat, 21 Nov 2026 00:00:30 GMT"),
                ],
                Expect(
                    retryAfter: date(t0 + 30), wait: seconds(20), diagnostics: [ignored("Date", .repeated)])),
            response(
                "x-ratelimit-repeated-different-values",
                "X-RateLimit-Remaining 0 and 1: ignored with a diagnostic; Limit and Reset are still read; without a remaining, no wait and no quota",
                clauses: ["HTTP-1", "HTTP-5"], status: 200,
                [
                    ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Remaining", "1"), ("X-RateLimit-Reset", "1795219260"),
                    ("X-RateLimit-Limit", "60"),
                ],
                Expect(
                    x: .init(limit: 60, reset: t0 + 60),
                    diagnostics: [ignored("X-RateLimit-Remaining", .repeated)])),
            response(
                "age-repeated-different-values",
                "Age 0 and 30: Age is ignored, so no positive Age says the response is cached: RateLimit r=0;t=10 asks for 10 s",
                clauses: ["HTTP-1", "HTTP-6"], [("Age", "0"), ("Age", "30"), ("RateLimit", #""a";r=0;t=10"#)],
                Expect(
                    wait: seconds(10), limits: [limit("a", 0, 10)], quota: quota(0, seconds(10)),
                    diagnostics: [ignored("Age", .repeated)])),
            response(
                "values-trimmed-of-spaces-and-tabs",
                "spaces and tabs around every value are trimmed before parsing: Retry-After 120, Date t0, RateLimit a (its leading tab too), X-RateLimit-Limit 60, Resource core",
                clauses: ["HTTP-1"],
                [
                    ("Retry-After", " \t120 \t"), ("Date", "\t\(imfT0) "), ("RateLimit", "\t\"a\";r=3;t=60 "),
                    ("X-RateLimit-Limit", "  60\t"), ("X-RateLimit-Resource", " core "),
                ],
                Expect(
                    retryAfter: delay(120), wait: seconds(120), date: t0, limits: [limit("a", 3, 60)],
                    x: .init(limit: 60, resource: "core"), quota: quota(3, seconds(60)))),
        ]
    }

    // MARK: HTTP-2 HTTP-date

    static func dates() -> [FeedbackCase] {
        [
            response(
                "imf-fixdate",
                "IMF-fixdate: Sat, 21 Nov 2026 00:02:00 GMT is t0 + 120; against Date t0, a wait of 120 s",
                clauses: ["HTTP-2", "HTTP-3"],
                [("Date", imfT0), ("Retry-After", "Sat, 21 Nov 2026 00:02:00 GMT")],
                Expect(retryAfter: date(t0 + 120), wait: seconds(120), date: t0)),
            response(
                "rfc850-date",
                "RFC 850: Saturday, 21-Nov-26 00:02:00 GMT is t0 + 120 (26 read as 2026 against the reference year 2026)",
                clauses: ["HTTP-2", "HTTP-3"],
                [("Date", imfT0), ("Retry-After", "Saturday, 21-Nov-26 00:02:00 GMT")],
                Expect(retryAfter: date(t0 + 120), wait: seconds(120), date: t0)),
            response(
                "asctime-date",
                "asctime: Sat Nov 21 00:02:00 2026 is t0 + 120",
                clauses: ["HTTP-2", "HTTP-3"], [("Date", imfT0), ("Retry-After", "Sat Nov 21 00:02:00 2026")],
                Expect(retryAfter: date(t0 + 120), wait: seconds(120), date: t0)),
            response(
                "asctime-one-digit-day",
                "asctime with a one-digit day after two spaces: Sun Nov  6 08:49:37 1994 = 784,111,777 s; in the past, so no wait (0)",
                clauses: ["HTTP-2", "HTTP-3"], [("Retry-After", "Sun Nov  6 08:49:37 1994")],
                Expect(retryAfter: date(784_111_777), wait: 0)),
            response(
                "dates-are-case-sensitive",
                "SAT, 21 NOV 2026 ... and sat, ... gmt are not HTTP-dates (names are case-sensitive): both ignored",
                clauses: ["HTTP-2"],
                [("Date", "sat, 21 Nov 2026 00:00:00 gmt"), ("Retry-After", "SAT, 21 NOV 2026 00:02:00 GMT")],
                Expect(diagnostics: [ignored("Date", .malformed), ignored("Retry-After", .malformed)])),
            response(
                "day-must-exist-in-its-month",
                "30 February and 29 February 2026 (not a leap year) do not exist: both ignored",
                clauses: ["HTTP-2"],
                [("Date", "Sun, 29 Feb 2026 00:00:00 GMT"), ("Retry-After", "Mon, 30 Feb 2026 00:00:00 GMT")],
                Expect(diagnostics: [ignored("Date", .malformed), ignored("Retry-After", .malformed)])),
            response(
                "29-february-of-a-leap-year",
                "Tue, 29 Feb 2028 00:00:00 GMT exists: 1,835,395,200 s, 40,176,000 s after t0",
                clauses: ["HTTP-2"], [("Retry-After", "Tue, 29 Feb 2028 00:00:00 GMT")],
                Expect(retryAfter: date(1_835_395_200), wait: seconds(40_176_000))),
            response(
                "leap-second",
                "second 60 is accepted and counts as the next second: 00:01:60 is 00:02:00, t0 + 120",
                clauses: ["HTTP-2"], [("Date", imfT0), ("Retry-After", "Sat, 21 Nov 2026 00:01:60 GMT")],
                Expect(retryAfter: date(t0 + 120), wait: seconds(120), date: t0)),
            response(
                "hour-and-minute-out-of-range",
                "hour 24 and minute 60 are out of range (00-23, 00-59): both ignored",
                clauses: ["HTTP-2"],
                [("Date", "Sat, 21 Nov 2026 00:60:00 GMT"), ("Retry-After", "Sat, 21 Nov 2026 24:00:00 GMT")],
                Expect(diagnostics: [ignored("Date", .malformed), ignored("Retry-After", .malformed)])),
            response(
                "day-name-checked-as-a-name-only",
                "Mon, 21 Nov 2026 (a Saturday) reads as 21 November: the day name is not checked against the date; Xyz is no day name, so that Date is ignored",
                clauses: ["HTTP-2"],
                [("Date", "Xyz, 21 Nov 2026 00:00:00 GMT"), ("Retry-After", "Mon, 21 Nov 2026 00:02:00 GMT")],
                Expect(retryAfter: date(t0 + 120), wait: seconds(120), diagnostics: [ignored("Date", .malformed)])),
            response(
                "two-digit-year-50-after-the-reference",
                "76 against the reference year 2026 is 2076 (50 years after, the latest allowed): 21 Nov 2076 = 3,373,142,400 s, 1,577,923,200 s ahead",
                clauses: ["HTTP-2"], [("Retry-After", "Saturday, 21-Nov-76 00:00:00 GMT")],
                Expect(retryAfter: date(3_373_142_400), wait: seconds(1_577_923_200))),
            response(
                "two-digit-year-51-after-the-reference",
                "77 against 2026 would be 2077, more than 50 years ahead: it is 1977 (21 Nov 1977 = 248,918,400 s), in the past: no wait",
                clauses: ["HTTP-2"], [("Retry-After", "Monday, 21-Nov-77 00:00:00 GMT")],
                Expect(retryAfter: date(248_918_400), wait: 0)),
            response(
                "two-digit-year-against-the-trusted-date",
                "received 2026-12-31 23:30, Date 2027-01-01 00:10 (40 min ahead, trusted): the reference year is 2027, so 01-Jan-77 is 2077 (3,376,684,800 s), 1,577,922,600 s after the Date",
                clauses: ["HTTP-2", "HTTP-6"], receivedAt: 1_798_759_800,
                [("Date", "Fri, 01 Jan 2027 00:10:00 GMT"), ("Retry-After", "Friday, 01-Jan-77 00:00:00 GMT")],
                Expect(
                    retryAfter: date(3_376_684_800), wait: seconds(1_577_922_600), date: 1_798_762_200,
                    reference: 1_798_762_200)),
            response(
                "two-digit-year-against-the-receipt",
                "the same Retry-After received 2026-12-31 23:30 with no Date: the reference year is 2026, 2077 is 51 years ahead, so 1977 (220,924,800 s): no wait",
                clauses: ["HTTP-2"], receivedAt: 1_798_759_800, [("Retry-After", "Friday, 01-Jan-77 00:00:00 GMT")],
                Expect(retryAfter: date(220_924_800), wait: 0)),
            response(
                "two-digit-year-reference-before-year-0",
                "received at the earliest signed 64-bit second (year about -292 billion), Date t0 is skew (the difference does not even fit); the reference year counts as 0000, so 99 is year -1: 31 Dec -1 23:59:59 = -62,167,219,201 s; from the receipt that wait saturates at Int64.max ns",
                clauses: ["HTTP-2", "HTTP-10"], receivedAt: .min,
                [("Date", imfT0), ("Retry-After", "Friday, 31-Dec-99 23:59:59 GMT")],
                Expect(
                    retryAfter: date(-62_167_219_201), wait: .max, date: t0,
                    diagnostics: [ignored("Date", .clockSkew)])),
            response(
                "two-digit-year-reference-after-year-9999",
                "received at the latest signed 64-bit second: Date t0 is skew; the reference year counts as 9999, so 99 is 9999: 253,402,300,799 s, long past: no wait; X-RateLimit-Reset t0 is past too: quota 0 resetting in 0, and no rate",
                clauses: ["HTTP-2", "HTTP-10", "HTTP-13"], receivedAt: .max,
                [
                    ("Date", imfT0), ("Retry-After", "Friday, 31-Dec-99 23:59:59 GMT"), ("X-RateLimit-Remaining", "0"),
                    ("X-RateLimit-Reset", "1795219200"),
                ],
                Expect(
                    retryAfter: date(253_402_300_799), wait: 0, date: t0, x: .init(remaining: 0, reset: t0),
                    quota: quota(0, 0), diagnostics: [ignored("Date", .clockSkew)])),
        ]
    }

    // MARK: HTTP-3 Retry-After

    static func retryAfter() -> [FeedbackCase] {
        [
            response(
                "delay-seconds", "Retry-After 120: 120 s from the response", clauses: ["HTTP-3"],
                [("Retry-After", "120")], Expect(retryAfter: delay(120), wait: seconds(120))),
            response(
                "delay-zero", "Retry-After 0: read, a wait of 0", clauses: ["HTTP-3"], [("Retry-After", "0")],
                Expect(retryAfter: delay(0), wait: 0)),
            response(
                "delay-leading-zeros", "Retry-After 007: one or more digits, 7 s", clauses: ["HTTP-3"],
                [("Retry-After", "007")], Expect(retryAfter: delay(7), wait: seconds(7))),
            response(
                "signs-refused",
                "no sign: Retry-After -5 and X-RateLimit-Remaining -5 are ignored; a RateLimit-Policy q of -5 breaks the field's rules",
                clauses: ["HTTP-3", "HTTP-5"],
                [("Retry-After", "-5"), ("X-RateLimit-Remaining", "-5"), ("RateLimit-Policy", #""p";q=-5"#)],
                Expect(
                    diagnostics: [
                        ignored("Retry-After", .malformed), ignored("RateLimit-Policy", .invalidMember),
                        ignored("X-RateLimit-Remaining", .malformed),
                    ])),
            response(
                "fractions-refused",
                "no fraction: Retry-After 1.5 and X-RateLimit-Limit 1.5 are ignored; RateLimit r=1.5 parses (a decimal) but r must be an integer",
                clauses: ["HTTP-3", "HTTP-4", "HTTP-5"],
                [("Retry-After", "1.5"), ("X-RateLimit-Limit", "1.5"), ("RateLimit", #""a";r=1.5"#)],
                Expect(
                    diagnostics: [
                        ignored("Retry-After", .malformed), ignored("RateLimit", .invalidMember),
                        ignored("X-RateLimit-Limit", .malformed),
                    ])),
            response(
                "empty-values-refused",
                "values empty once trimmed (\"\", spaces only) are ignored: Date, Retry-After, X-RateLimit-Reset, X-RateLimit-Resource",
                clauses: ["HTTP-3", "HTTP-5"],
                [("Date", ""), ("Retry-After", "   "), ("X-RateLimit-Reset", ""), ("X-RateLimit-Resource", "\t")],
                Expect(
                    diagnostics: [
                        ignored("Date", .malformed), ignored("Retry-After", .malformed),
                        ignored("X-RateLimit-Reset", .malformed), ignored("X-RateLimit-Resource", .malformed),
                    ])),
            response(
                "delay-largest-exact-wait",
                "Retry-After 9223372036: 9,223,372,036,000,000,000 ns, just below Int64.max (9,223,372,036,854,775,807): exact",
                clauses: ["HTTP-3", "HTTP-10"], [("Retry-After", "9223372036")],
                Expect(retryAfter: delay(9_223_372_036), wait: 9_223_372_036_000_000_000)),
            response(
                "delay-wait-saturates",
                "Retry-After 9223372037: 9,223,372,037,000,000,000 ns exceeds Int64.max: the wait saturates at Int64.max",
                clauses: ["HTTP-3", "HTTP-10"], [("Retry-After", "9223372037")],
                Expect(retryAfter: delay(9_223_372_037), wait: .max)),
            response(
                "date-from-the-server-date",
                "the client's clock runs 5 s ahead (received t0 + 5, Date t0): Retry-After t0 + 20 counts from the Date: 20 s",
                clauses: ["HTTP-3", "HTTP-6"], receivedAt: t0 + 5,
                [("Date", imfT0), ("Retry-After", "Sat, 21 Nov 2026 00:00:20 GMT")],
                Expect(retryAfter: date(t0 + 20), wait: seconds(20), date: t0, reference: t0)),
            response(
                "date-from-the-receipt-without-date",
                "the same Retry-After with no Date counts from receipt at t0 + 5: 15 s",
                clauses: ["HTTP-3", "HTTP-6"], receivedAt: t0 + 5, [("Retry-After", "Sat, 21 Nov 2026 00:00:20 GMT")],
                Expect(retryAfter: date(t0 + 20), wait: seconds(15))),
            response(
                "date-year-9999",
                "Fri, 31 Dec 9999 23:59:59 GMT = 253,402,300,799 s: 251,607,081,599 s ahead, more nanoseconds than Int64 holds: the wait saturates",
                clauses: ["HTTP-3", "HTTP-10"], [("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT")],
                Expect(retryAfter: date(253_402_300_799), wait: .max)),
            response(
                "received-before-1970",
                "received at -1 (1969-12-31 23:59:59): Retry-After Thu, 01 Jan 1970 00:00:09 GMT = 9 s is 10 s ahead",
                clauses: ["HTTP-3", "HTTP-10"], receivedAt: -1, [("Retry-After", "Thu, 01 Jan 1970 00:00:09 GMT")],
                Expect(retryAfter: date(9), wait: seconds(10))),
        ]
    }

    // MARK: HTTP-4 Structured field lists

    static func structuredFields() -> [FeedbackCase] {
        [
            response(
                "space-before-parameter-and-trailing-comma",
                "RFC 9651 allows no space before ';' (\"a\" ;r=0) and no trailing ','; each field is ignored whole",
                clauses: ["HTTP-4"], [("RateLimit", #""a" ;r=0;t=5"#), ("RateLimit-Policy", #""a";q=1,"#)],
                Expect(diagnostics: [ignored("RateLimit-Policy", .malformed), ignored("RateLimit", .malformed)])),
            response(
                "integer-of-15-digits",
                "r=999999999999999 has 15 digits, the most an integer may have: read; t=1 makes it the quota left",
                clauses: ["HTTP-4", "HTTP-10"], status: 200, [("RateLimit", #""a";r=999999999999999;t=1"#)],
                Expect(
                    limits: [limit("a", 999_999_999_999_999, 1)], quota: quota(999_999_999_999_999, seconds(1)))),
            response(
                "integer-of-16-digits",
                "r=1000000000000000 has 16 digits: not an RFC 9651 integer, the field is ignored",
                clauses: ["HTTP-4", "HTTP-10"], [("RateLimit", #""a";r=1000000000000000;t=1"#)],
                Expect(diagnostics: [ignored("RateLimit", .malformed)])),
            response(
                "repeated-parameter-keeps-the-last",
                "r=5 then r=0: the last value wins, so the member is exhausted and asks for its t, 10 s",
                clauses: ["HTTP-4", "HTTP-6"], [("RateLimit", #""a";r=5;t=10;r=0"#)],
                Expect(wait: seconds(10), limits: [limit("a", 0, 10)], quota: quota(0, seconds(10)))),
            response(
                "spaces-and-tabs-around-commas",
                "OWS around the ',' between members is allowed (\" ,<TAB>\"): a then b; the quota left is b's (r=2 < 4)",
                clauses: ["HTTP-4"], status: 200, [("RateLimit", "\"a\";r=4;t=60 ,\t\"b\";r=2;t=30")],
                Expect(limits: [limit("a", 4, 60), limit("b", 2, 30)], quota: quota(2, seconds(30)))),
            response(
                "string-escapes",
                "in a String only \\\" and \\\\ are escapes: \"a\\\"b\\\\c\" is the name a\"b\\c; \\n is not an escape, so that RateLimit-Policy is ignored",
                clauses: ["HTTP-4"], status: 200,
                [("RateLimit", #""a\"b\\c";r=1"#), ("RateLimit-Policy", #""x\ny";q=1"#)],
                Expect(limits: [limit(#"a"b\c"#, 1)], diagnostics: [ignored("RateLimit-Policy", .malformed)])),
            response(
                "unknown-parameters-are-comments",
                "note=\"x\", flag and future=?1 are unknown parameters: comments, the members are read (the policy states 10 per 60 s)",
                clauses: ["HTTP-4", "HTTP-5", "HTTP-13"], status: 200,
                [("RateLimit", #""a";r=2;t=3;note="x";flag"#), ("RateLimit-Policy", #""a";q=10;w=60;future=?1"#)],
                Expect(
                    limits: [limit("a", 2, 3)], policies: [.init("a", quota: 10, windowSeconds: 60)],
                    quota: quota(2, seconds(3)), rate: rate(10, per: seconds(60)))),
            response(
                "inner-list",
                "(\"a\" \"b\");r=1 is a valid List whose member is an inner list: not a limit, the field is ignored",
                clauses: ["HTTP-4", "HTTP-5"], [("RateLimit", #"("a" "b");r=1"#)],
                Expect(diagnostics: [ignored("RateLimit", .invalidMember)])),
        ]
    }
}
