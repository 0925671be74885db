import RateLimitConformance
import RateLimitCore
import Testing

@testable import RateLimitHTTP

private let second: Int64 = 1_000_000_000

@Suite("Backoff, retries and the server quota (Spec/HTTP.md)")
struct BackoffTests {
    @Test("HTTP-7 presets and validation")
    func presets() throws {
        #expect(
            (Backoff.default.maximumRetries, Backoff.default.baseNanoseconds, Backoff.default.capNanoseconds) == (
                3, second, 30 * second
            ))
        #expect(
            (Backoff.aggressive.maximumRetries, Backoff.aggressive.baseNanoseconds, Backoff.aggressive.capNanoseconds)
                == (5, second / 2, 60 * second))
        #expect(
            (
                Backoff.conservative.maximumRetries, Backoff.conservative.baseNanoseconds,
                Backoff.conservative.capNanoseconds
            ) == (2, 2 * second, 15 * second))
        #expect(throws: RateLimitHTTPError.invalid(field: "maximumRetries", reason: "must not be negative")) {
            try Backoff(maximumRetries: -1, base: .seconds(1), cap: .seconds(2))
        }
        #expect(throws: RateLimitHTTPError.invalid(field: "base", reason: "must be positive")) {
            try Backoff(maximumRetries: 1, base: .zero, cap: .seconds(2))
        }
        #expect(throws: RateLimitHTTPError.invalid(field: "cap", reason: "must be at least base")) {
            try Backoff(maximumRetries: 1, base: .seconds(2), cap: .seconds(1))
        }
        #expect(throws: RateLimitHTTPError.invalid(field: "budget", reason: "must not be negative")) {
            try Backoff(maximumRetries: 1, base: .seconds(1), cap: .seconds(2), budget: .seconds(-1))
        }
        #expect(throws: RateLimitHTTPError.invalid(field: "base", reason: "must be whole nanoseconds")) {
            try Backoff(
                maximumRetries: 1, base: Duration(secondsComponent: 0, attosecondsComponent: 1), cap: .seconds(2))
        }
    }

    @Test(
        "HTTP-7 each jitter stays in its range, doubles to the cap, and replays from the same seed",
        arguments: Jitter.allCases)
    func jitterRanges(_ jitter: Jitter) throws {
        let backoff = try Backoff(maximumRetries: 100, base: .milliseconds(100), cap: .seconds(10), jitter: jitter)
        var rng = TestSeed.generator("jitter \(jitter)", trace: 0)
        var replayed = TestSeed.generator("jitter \(jitter)", trace: 0)
        var previous: Int64?
        var again: Int64?
        for retry in 0..<80 {
            let delay = backoff.delay(retry: retry, previous: previous, using: &rng)
            let exponential = min(10 * second, retry >= 7 ? 10 * second : (second / 10) << retry)
            switch jitter {
            case .none: #expect(delay == exponential)
            case .full: #expect(delay >= 0 && delay <= exponential)
            case .equal: #expect(delay >= exponential - exponential / 2 && delay <= exponential)
            case .decorrelated:
                #expect(delay >= second / 10 && delay <= min(10 * second, 3 * (previous ?? second / 10)))
            }
            let repeated = backoff.delay(retry: retry, previous: again, using: &replayed)
            #expect(repeated == delay, "a seeded sequence replays")
            (previous, again) = (delay, repeated)
        }
    }

    @Test("HTTP-7 a uniform draw rejects the biased low values and reduces the rest modulo the range")
    func uniformDraw() {
        var scripted = ScriptedGenerator(values: [0, 5, UInt64.max])
        // Range 3: 2⁶⁴ mod 3 = 1, so 0 is rejected and 5 gives 5 mod 3 = 2.
        #expect(uniform(through: 2, using: &scripted) == 2)
        var all = ScriptedGenerator(values: [42])
        #expect(uniform(through: .max, using: &all) == 42)
        var zero = ScriptedGenerator(values: [7])
        #expect(uniform(through: 0, using: &zero) == 0)
    }

    @Test(
        "HTTP-8 2xx and 3xx are delivered; 429 and 503 wait for the server; 5xx and failures back off; other 4xx are never retried"
    )
    func classification() throws {
        let policy = try RetryPolicy(
            backoff: try Backoff(
                maximumRetries: 2, base: .seconds(1), cap: .seconds(8), jitter: .none, budget: .seconds(10)))
        var rng = SystemRandomNumberGenerator()
        func decide(_ outcome: AttemptOutcome, retries: Int = 0, elapsed: Int64 = 0, server: Int64? = nil)
            -> RetryDecision
        {
            policy.decide(
                outcome, retries: retries, elapsedNanoseconds: elapsed, serverWaitNanoseconds: server,
                previousDelay: nil, using: &rng)
        }
        #expect(decide(.response(status: 200)) == .deliver)
        #expect(decide(.response(status: 304)) == .deliver)
        #expect(decide(.response(status: 404)) == .deliver)
        #expect(decide(.response(status: 403)) == .deliver)
        #expect(decide(.response(status: 429), server: 5 * second) == .retry(afterNanoseconds: 5 * second))
        #expect(decide(.response(status: 503), server: 3 * second) == .retry(afterNanoseconds: 3 * second))
        #expect(decide(.response(status: 429), retries: 1) == .retry(afterNanoseconds: 2 * second))
        #expect(decide(.response(status: 500), retries: 1) == .retry(afterNanoseconds: 2 * second))
        #expect(decide(.response(status: 502), server: 4 * second) == .retry(afterNanoseconds: 4 * second))
        #expect(decide(.networkFailure) == .retry(afterNanoseconds: second))
        #expect(decide(.networkFailure, retries: 2) == .stop, "the retries are spent")
        #expect(
            decide(.response(status: 429), elapsed: 6 * second, server: 5 * second) == .stop,
            "the wait would end after the budget")
        #expect(
            decide(.response(status: 429), elapsed: 5 * second, server: 5 * second)
                == .retry(afterNanoseconds: 5 * second))
        // No budget: the maximum wait (60 s by default) still stops a server asking for more.
        let patient = RetryPolicy.standard
        #expect(
            patient.decide(
                .response(status: 429), retries: 0, elapsedNanoseconds: 0, serverWaitNanoseconds: 60 * second,
                previousDelay: nil, using: &rng)
                == .retry(afterNanoseconds: 60 * second))
        #expect(
            patient.decide(
                .response(status: 503), retries: 0, elapsedNanoseconds: 0, serverWaitNanoseconds: 60 * second + 1,
                previousDelay: nil, using: &rng)
                == .stop, "a wait beyond the maximum stops")
        #expect(throws: RateLimitHTTPError.invalid(field: "maximumWait", reason: "must not be negative")) {
            try RetryPolicy(maximumWait: .seconds(-1))
        }
    }

    @Test(
        "HTTP-9 the server quota waits as the server asks, never less, counts its reported quota down, and backs off silent 429s"
    )
    func serverQuota() throws {
        var quota = try ServerQuota()
        let now = try RateLimitInstant(nanoseconds: 1_000 * second)
        func feedback(_ status: Int, _ fields: HTTPFields = [:]) -> ServerFeedback {
            ServerFeedback(status: status, fields: fields, receivedAt: reference)
        }
        #expect(quota.permit(at: now) == .allowed(remaining: nil))
        #expect(quota.record(feedback(429, ["Retry-After": "5"]), at: now) == now.advanced(byNanoseconds: 5 * second))
        #expect(quota.permit(at: now.advanced(byNanoseconds: 4 * second)!) == .wait(nanoseconds: second))
        #expect(
            quota.record(feedback(429, ["Retry-After": "1"]), at: now.advanced(byNanoseconds: second)!)
                == now.advanced(byNanoseconds: 5 * second),
            "a later response does not shorten the wait")
        let after = now.advanced(byNanoseconds: 5 * second)!
        #expect(quota.permit(at: after) == .allowed(remaining: nil))
        quota.record(feedback(200, ["RateLimit": #""a";r=2;t=10"#]), at: after)
        #expect(quota.permit(at: after) == .allowed(remaining: 1))
        #expect(quota.permit(at: after) == .allowed(remaining: 0))
        #expect(quota.permit(at: after) == .wait(nanoseconds: 10 * second))
        #expect(quota.permit(at: after.advanced(byNanoseconds: 10 * second)!) == .allowed(remaining: nil))
        // Requests still in flight are taken from a report that may not count them, never below 0.
        quota.record(feedback(200, ["RateLimit": #""a";r=3;t=10"#]), at: after, othersInFlight: 2)
        #expect(quota.permit(at: after) == .allowed(remaining: 0))
        #expect(quota.permit(at: after) == .wait(nanoseconds: 10 * second))
        quota.record(feedback(200, ["RateLimit": #""a";r=1;t=10"#]), at: after, othersInFlight: 5)
        #expect(quota.permit(at: after) == .wait(nanoseconds: 10 * second))
        // 429s that name no wait: 1 s, 2 s, 4 s ... capped at 60 s; another response resets the count.
        var silent = try ServerQuota()
        var instant = now
        for expected in [1, 2, 4, 8, 16, 32, 60, 60] as [Int64] {
            let recorded = silent.record(feedback(429), at: instant)
            let until = try #require(recorded)
            #expect(until.nanoseconds(since: instant) == expected * second)
            instant = until
        }
        silent.record(feedback(200), at: instant)
        #expect(silent.record(feedback(429), at: instant)?.nanoseconds(since: instant) == second)
        #expect(throws: RateLimitHTTPError.invalid(field: "maximumWait", reason: "must be at least defaultWait")) {
            try ServerQuota(defaultWait: .seconds(2), maximumWait: .seconds(1))
        }
    }
}
