import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitHTTP

/// 2026-11-21T00:00:00Z, the reference of most tests.
let reference = HTTPDate(secondsSinceEpoch: 1_795_219_200)

@Suite("HTTP-date and Retry-After (Spec/HTTP.md)")
struct HTTPDateTests {
    @Test("HTTP-2 the three formats RFC 9110 requires read the same instant")
    func threeFormats() async { await offThePool { threeFormatsOnThread() } }

    private func threeFormatsOnThread() {
        let expected = HTTPDate(secondsSinceEpoch: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate("Sun, 06 Nov 1994 08:49:37 GMT", reference: reference) == expected)
        #expect(
            HTTPDate("Sunday, 06-Nov-94 08:49:37 GMT", reference: HTTPDate(secondsSinceEpoch: 800_000_000)) == expected)
        #expect(HTTPDate("Sun Nov  6 08:49:37 1994", reference: reference) == expected)
        #expect(
            HTTPDate("Sun Nov 16 08:49:37 1994", reference: reference)
                == HTTPDate(secondsSinceEpoch: 784_111_777 + 10 * 86_400))
        #expect(expected.description == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate(secondsSinceEpoch: 0).description == "Thu, 01 Jan 1970 00:00:00 GMT")
    }

    @Test(
        "HTTP-2 dates that do not exist or break the grammar are refused",
        arguments: [
            "Sun, 30 Feb 2026 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT",
            "sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 gmt",
            "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT ", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
            "Fun, 06 Nov 1994 08:49:37 GMT", "Sun, 29 Feb 2100 00:00:00 GMT", "", "1994-11-06T08:49:37Z",
        ])
    func refused(_ text: String) {
        #expect(HTTPDate(text, reference: reference) == nil)
    }

    @Test("HTTP-2 a leap second and 29 February of leap years are accepted")
    func edges() async { await offThePool { edgesOnThread() } }

    private func edgesOnThread() {
        #expect(
            HTTPDate("Wed, 31 Dec 2008 23:59:60 GMT", reference: reference)
                == HTTPDate("Thu, 01 Jan 2009 00:00:00 GMT", reference: reference))
        #expect(HTTPDate("Tue, 29 Feb 2000 00:00:00 GMT", reference: reference) != nil)
        #expect(
            HTTPDate("Sat, 01 Jan 0000 00:00:00 GMT", reference: reference)
                == HTTPDate(secondsSinceEpoch: -62_167_219_200))
        #expect(
            HTTPDate("Fri, 31 Dec 9999 23:59:59 GMT", reference: reference)
                == HTTPDate(secondsSinceEpoch: 253_402_300_799))
    }

    @Test("HTTP-2 a two-digit year is read within 49 years before and 50 after the reference year")
    func twoDigitYears() async { await offThePool { twoDigitYearsOnThread() } }

    private func twoDigitYearsOnThread() {
        func year(_ digits: String, reference: Int64) -> Int64? {
            let start = HTTPDate(secondsSinceEpoch: HTTPDate.days(fromCivil: reference, 6, 1) * 86_400)
            return HTTPDate("Monday, 01-Jan-\(digits) 00:00:00 GMT", reference: start)
                .map { HTTPDate.civil(fromDays: $0.secondsSinceEpoch / 86_400).year }
        }
        #expect(year("76", reference: 2026) == 2076)
        #expect(year("77", reference: 2026) == 1977)  // 51 years ahead: the past century
        #expect(year("99", reference: 2026) == 1999)
        #expect(year("05", reference: 2090) == 2105)
        #expect(year("41", reference: 2090) == 2041)
    }

    @Test("HTTP-2 every instant from year 0 to 9999 prints as an IMF-fixdate that reads back exactly", arguments: 0..<4)
    func roundTrip(_ batch: Int) async { await offThePool { roundTripOnThread(batch) } }

    private func roundTripOnThread(_ batch: Int) {
        var rng = TestSeed.generator("httpDateRoundTrip", trace: batch)
        for _ in 0..<25_000 {
            let seconds = rng.int(in: -62_167_219_200...253_402_300_799)
            let date = HTTPDate(secondsSinceEpoch: seconds)
            guard
                holds(
                    HTTPDate(date.description, reference: reference) == date,
                    "HTTP-2 \(seconds) printed \(date) reads back differently",
                    replay: TestSeed.replay("httpDateRoundTrip", trace: batch))
            else { return }
        }
    }

    @Test("HTTP-3 Retry-After is delay-seconds or an HTTP-date, counted from the response's Date")
    func retryAfter() async { await offThePool { retryAfterOnThread() } }

    private func retryAfterOnThread() {
        #expect(RetryAfter("120", reference: reference) == .delay(seconds: 120))
        #expect(RetryAfter(" \t7 ", reference: reference) == .delay(seconds: 7))
        #expect(RetryAfter("0", reference: reference) == .delay(seconds: 0))
        for bad in ["-1", "+5", "1.5", "5s", "", " ", "1 2", "٣"] {
            #expect(RetryAfter(bad, reference: reference) == nil, "\(bad)")
        }
        #expect(
            RetryAfter(String(repeating: "9", count: 40), reference: reference)?.nanoseconds(after: reference) == .max)
        #expect(RetryAfter("9223372037", reference: reference)?.nanoseconds(after: reference) == .max)
        #expect(
            RetryAfter("9223372036", reference: reference)?.nanoseconds(after: reference) == 9_223_372_036_000_000_000)
        let date = try! #require(RetryAfter("Sat, 21 Nov 2026 00:00:30 GMT", reference: reference))
        #expect(date.nanoseconds(after: reference) == 30_000_000_000)
        #expect(date.nanoseconds(after: HTTPDate(secondsSinceEpoch: reference.secondsSinceEpoch + 60)) == 0)
        #expect(
            RetryAfter.date(HTTPDate(secondsSinceEpoch: .max)).nanoseconds(after: HTTPDate(secondsSinceEpoch: .min))
                == .max)
        #expect(
            RetryAfter.date(HTTPDate(secondsSinceEpoch: .min)).nanoseconds(after: HTTPDate(secondsSinceEpoch: .max))
                == 0)
    }
}
