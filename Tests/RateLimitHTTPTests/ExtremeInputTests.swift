import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import RateLimitTestSupport
import Testing

// HTTP-10: every public entry point of RateLimitHTTP that takes an integer, a date or a string,
// over the whole Int64 range (both ends, zero, ±1, and seeded random values) and hostile strings.
// A trap kills the test process; each test also checks the stated typed error or clamp.

/// Both ends, zero, ±1, values around the writable dates and seconds-to-nanoseconds overflow.
private let extremes: [Int64] = [
    .min, .min + 1, -1, 0, 1, .max - 1, .max, -62_167_219_201, -62_167_219_200, 253_402_300_799, 253_402_300_800,
    9_223_372_036, 9_223_372_037, -9_223_372_037,
]

/// `extremes` and `count` seeded random values (half of them small).
private func values(_ name: String, count: Int = 300) -> (values: [Int64], replay: String) {
    var rng = TestSeed.generator(name, trace: 0)
    let random = (0..<count).map { index in
        index % 2 == 0 ? rng.int(in: -1_000_000...1_000_000) : Int64(bitPattern: rng.next())
    }
    return (extremes + random, TestSeed.replay(name, trace: 0))
}

/// Values a server or a caller might send where a date, a number or a field is expected.
private let hostileStrings: [String] = [
    "", " ", "\t", "0", "-0", "-1", "+5", "1.5", "1e9", "9223372036854775807", "9223372036854775808",
    String(repeating: "9", count: 400),
    "Sunday, 06-Nov-99 08:49:37 GMT", "Saturday, 01-Jan-00 00:00:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
    "Sun, 06 Nov 1994 08:49:37 GMT", "Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
    "Sat, 01 Jan 0000 00:00:00 GMT",
    "Sun Nov  6 08:49:37 1994", "Mon, 30 Feb 2026 00:00:00 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
    "Sun, 06 Nov 1994 08:49:60 GMT",
    "\"default\";r=0;t=999999999999999", "\"a\";r=-1", "\"a\";q=9999999999999999", "\"a\";r=0;t=-5", "é\u{0}\u{FFFF}",
    String(repeating: "\"x\";r=1, ", count: 2_000),
]

@Suite("HTTP-10 Extreme and hostile inputs to every public entry point")
struct ExtremeInputTests {
    @Test("HTTP-2 HTTPDate is written for every Int64, clamped to the years IMF-fixdate writes, and reads back")
    func datesWrite() async { await offThePool { datesWriteOnThread() } }

    private func datesWriteOnThread() {
        let (all, replay) = values("datesWrite")
        for seconds in all {
            let date = HTTPDate(secondsSinceEpoch: seconds)
            let clamped = min(
                max(seconds, HTTPDate.earliestWritable.secondsSinceEpoch), HTTPDate.latestWritable.secondsSinceEpoch)
            let read = HTTPDate(date.description, reference: date)
            guard
                holds(
                    read?.secondsSinceEpoch == clamped,
                    "\(seconds) wrote \(date.description), read \(String(describing: read))", replay: replay)
            else { return }
        }
    }

    @Test("HTTP-2 HTTP-3 Dates and Retry-After parse against any reference; two-digit years land within 50 years of it")
    func datesParseAgainstAnyReference() async { await offThePool { datesParseAgainstAnyReferenceOnThread() } }

    private func datesParseAgainstAnyReferenceOnThread() {
        let (all, replay) = values("datesParseAgainstAnyReference", count: 60)
        for reference in all.map(HTTPDate.init(secondsSinceEpoch:)) {
            for text in hostileStrings {
                let date = HTTPDate(text, reference: reference)
                _ = RetryAfter(text, reference: reference)?.nanoseconds(after: reference)
                guard text.contains("-"), text.hasSuffix("GMT"), let date else { continue }
                // RFC 850: within 49 years before and 50 after the reference year, taken in 0000–9999.
                let year =
                    Int64(
                        String(HTTPDate(secondsSinceEpoch: date.secondsSinceEpoch).description.split(separator: " ")[3])
                    ) ?? -1
                let referenceYear = min(
                    max(Int64(String(reference.description.split(separator: " ")[3])) ?? 0, 0), 9_999)
                guard
                    holds(
                        (referenceYear - 49)...(referenceYear + 50) ~= year,
                        "\(text) against \(reference): year \(year)", replay: replay)
                else { return }
            }
        }
    }

    @Test("HTTP-3 A wait is never negative: past dates and negative delays are no wait, long ones saturate")
    func waitsAreNeverNegative() async { await offThePool { waitsAreNeverNegativeOnThread() } }

    private func waitsAreNeverNegativeOnThread() {
        let (all, replay) = values("waitsAreNeverNegative", count: 100)
        for a in all {
            for b in all.prefix(30) {
                for retryAfter in [RetryAfter.delay(seconds: a), .date(HTTPDate(secondsSinceEpoch: a))] {
                    let wait = retryAfter.nanoseconds(after: HTTPDate(secondsSinceEpoch: b))
                    guard holds(wait >= 0, "\(retryAfter) after \(b): \(wait)", replay: replay) else { return }
                }
            }
        }
    }

    @Test("HTTP-6 Feedback from any status, any receipt time and hostile fields asks for a wait of at least 0")
    func feedbackFromAnything() async { await offThePool { feedbackFromAnythingOnThread() } }

    private func feedbackFromAnythingOnThread() {
        let (all, replay) = values("feedbackFromAnything", count: 40)
        let names = [
            "Retry-After", "Date", "RateLimit", "RateLimit-Policy", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Age",
        ]
        for seconds in all {
            for (index, text) in hostileStrings.enumerated() {
                let fields = HTTPFields([
                    (names[index % names.count], text), ("X-RateLimit-Remaining", "0"),
                    (names[(index + 3) % names.count], text),
                ])
                let feedback = ServerFeedback(
                    status: Int(truncatingIfNeeded: seconds), fields: fields,
                    receivedAt: HTTPDate(secondsSinceEpoch: seconds))
                let wait = feedback.requestedWaitNanoseconds ?? 0
                let reset = feedback.remainingQuota?.resetNanoseconds ?? 0
                guard
                    holds(
                        wait >= 0 && reset >= 0, "\(fields) at \(seconds): wait \(wait), reset \(reset)", replay: replay
                    )
                else { return }
            }
        }
    }

    @Test(
        "HTTP-7 A backoff wait lies within 0 … cap for any retry and any previous wait; decorrelated within base … cap")
    func backoffWithinBounds() async throws { try await offThePool { try backoffWithinBoundsOnThread() } }

    private func backoffWithinBoundsOnThread() throws {
        let (all, replay) = values("backoffWithinBounds", count: 100)
        var rng = TestSeed.generator("backoffWithinBounds", trace: 1)
        for jitter in Jitter.allCases {
            let backoff = try Backoff(maximumRetries: 3, base: .seconds(1), cap: .seconds(30), jitter: jitter)
            for retry in all {
                for previous in [nil] + all.prefix(20).map(Optional.some) {
                    let wait = backoff.delay(retry: Int(truncatingIfNeeded: retry), previous: previous, using: &rng)
                    let lower = jitter == .decorrelated ? backoff.baseNanoseconds : 0
                    guard
                        holds(
                            (lower...backoff.capNanoseconds).contains(wait),
                            "\(jitter) retry \(retry) previous \(String(describing: previous)): \(wait)", replay: replay
                        )
                    else { return }
                }
            }
        }
    }

    @Test(
        "HTTP-7 HTTP-8 HTTP-9 Durations at the ends of Duration's range are refused with a typed error naming the field"
    )
    func durationsRefusedOrTaken() async { await offThePool { durationsRefusedOrTakenOnThread() } }

    private func durationsRefusedOrTakenOnThread() {
        let durations: [Duration] = [
            .zero, .nanoseconds(1), .nanoseconds(-1), .nanoseconds(Int64.max), .nanoseconds(Int64.min),
            .seconds(Int64.max), .seconds(Int64.min),
            .seconds(9_223_372_037), .milliseconds(1) / 3,
            Duration(secondsComponent: Int64.max, attosecondsComponent: 999_999_999_999_999_999),
        ]
        for duration in durations {
            let whole =
                duration >= .zero && duration <= .nanoseconds(Int64.max)
                && duration.components.attoseconds % 1_000_000_000 == 0
            for (field, build) in [
                (
                    "base",
                    { () throws(RateLimitHTTPError) in
                        _ = try Backoff(maximumRetries: 1, base: duration, cap: .nanoseconds(Int64.max))
                    }
                ),
                (
                    "budget",
                    { () throws(RateLimitHTTPError) in
                        _ = try Backoff(maximumRetries: 1, base: .nanoseconds(1), cap: .seconds(1), budget: duration)
                    }
                ),
                ("maximumWait", { () throws(RateLimitHTTPError) in _ = try RetryPolicy(maximumWait: duration) }),
                (
                    "longestWait",
                    { () throws(RateLimitHTTPError) in
                        _ = try ServerQuota(
                            defaultWait: .nanoseconds(1), maximumWait: .nanoseconds(1), longestWait: duration)
                    }
                ),
            ] as [(String, () throws(RateLimitHTTPError) -> Void)] {
                do {
                    try build()
                } catch {
                    guard case .invalid(let named, _) = error else { continue }
                    #expect(named == field, "\(duration) for \(field): \(error)")
                    if whole, !((field == "base" || field == "longestWait") && duration == .zero) {
                        Issue.record("\(duration) for \(field) is whole and non-negative, yet refused: \(error)")
                    }
                }
            }
        }
    }

    @Test("HTTP-8 A retry decision for any counts, times and waits waits 0 … maximumWait")
    func decisionsWithinBounds() async { await offThePool { decisionsWithinBoundsOnThread() } }

    private func decisionsWithinBoundsOnThread() {
        let (all, replay) = values("decisionsWithinBounds", count: 60)
        var rng = TestSeed.generator("decisionsWithinBounds", trace: 1)
        let policy = RetryPolicy.standard
        for outcome in [
            AttemptOutcome.response(status: 429), .response(status: 503), .response(status: 500), .networkFailure,
            .response(status: 200),
        ] {
            for a in all {
                for b in all.prefix(25) {
                    let decision = policy.decide(
                        outcome, retries: Int(truncatingIfNeeded: a % 5), elapsedNanoseconds: b,
                        serverWaitNanoseconds: a, previousDelay: b, using: &rng)
                    if case .retry(let wait) = decision {
                        guard
                            holds(
                                (0...policy.maximumWaitNanoseconds).contains(wait), "\(outcome) \(a) \(b): \(decision)",
                                replay: replay)
                        else { return }
                    }
                }
            }
        }
    }

    @Test(
        "HTTP-9 A server quota fed extreme instants, counts and waits never asks for a negative wait or one past its ceiling"
    )
    func quotaWithinBounds() async throws { try await offThePool { try quotaWithinBoundsOnThread() } }

    private func quotaWithinBoundsOnThread() throws {
        let (all, replay) = values("quotaWithinBounds", count: 40)
        let fields: [HTTPFields] = [
            ["Retry-After": "99999999"], ["RateLimit": "\"default\";r=0;t=999999999999999"], [:],
            ["RateLimit": "\"default\";r=5;t=999999999999999"],
            ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "9223372036854775807"],
        ]
        for instant in all where instant >= 0 {
            var quota = ServerQuota.standard
            let now = try RateLimitInstant(nanoseconds: instant)
            for (index, field) in fields.enumerated() {
                let feedback = ServerFeedback(
                    status: index == 2 ? 429 : 200, fields: field, receivedAt: HTTPDate(secondsSinceEpoch: instant))
                quota.record(feedback, at: now, othersInFlight: all[index % all.count])
                let wait = quota.wait(at: now) ?? 0
                guard
                    holds(
                        (0...quota.longestWaitNanoseconds).contains(wait), "\(field) at \(instant): \(wait)",
                        replay: replay)
                else { return }
                _ = quota.permit(at: now)
            }
        }
    }
}
