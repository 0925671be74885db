import Testing

@testable import RateLimitHTTP

// The rate a response states, for an adaptive rate to adopt (Spec/HTTP.md HTTP-13, ADAPT-7).

private let now = HTTPDate(secondsSinceEpoch: 1_700_000_000)

private func stated(_ fields: HTTPFields) -> StatedRate? {
    ServerFeedback(status: 200, fields: fields, receivedAt: now).statedRate
}

@Suite("The rate a response states (Spec/HTTP.md HTTP-13)")
struct StatedRateTests {
    @Test("HTTP-13 the RateLimit-Policy member counting requests that allows the fewest per second is the stated rate")
    func policies() {
        #expect(
            stated(["RateLimit-Policy": #""hour";q=3600;w=3600, "second";q=30;w=1"#])
                == StatedRate(permits: 3_600, windowNanoseconds: 3_600_000_000_000))
        // 2 per 2 s and 1 per 1 s are equal (2·1 = 1·2): the first.
        #expect(
            stated(["RateLimit-Policy": #""a";q=2;w=2, "b";q=1;w=1"#])
                == StatedRate(permits: 2, windowNanoseconds: 2_000_000_000))
        // One more permit in the second window, or one second less in the first, decides.
        #expect(
            stated(["RateLimit-Policy": #""a";q=3;w=2, "b";q=1;w=1"#])
                == StatedRate(permits: 1, windowNanoseconds: 1_000_000_000))
        #expect(stated(["RateLimit-Policy": #""bytes";q=1;qu="content-bytes";w=1"#]) == nil, "not requests")
        #expect(stated(["RateLimit-Policy": #""open";q=5"#]) == nil, "no window: a quota, not a rate")
        #expect(
            stated(["RateLimit-Policy": #""zero";q=0;w=60"#])
                == StatedRate(permits: 0, windowNanoseconds: 60_000_000_000))
        // 15 digits of seconds: the window saturates at Int64.max ns.
        #expect(
            stated(["RateLimit-Policy": #""long";q=1;w=999999999999999"#])
                == StatedRate(permits: 1, windowNanoseconds: .max))
        // The products of the comparison need 128 bits: 10^15 − 1 per 10^15 − 1 s is 1 per second.
        #expect(
            stated(["RateLimit-Policy": #""big";q=999999999999999;w=999999999999999, "one";q=1;w=1"#])?.permits
                == 999_999_999_999_999)
    }

    @Test(
        "HTTP-13 without a policy, the pace that spends X-RateLimit-Remaining by its reset; a RateLimit field alone states none"
    )
    func pace() {
        #expect(
            stated(["X-RateLimit-Remaining": "100", "X-RateLimit-Reset": "1700000050"])
                == StatedRate(permits: 100, windowNanoseconds: 50_000_000_000))
        // Read against the response's Date (HTTP-6).
        #expect(
            stated([
                "Date": "Tue, 14 Nov 2023 22:13:10 GMT", "X-RateLimit-Remaining": "0",
                "X-RateLimit-Reset": "1700000000",
            ]) == StatedRate(permits: 0, windowNanoseconds: 10_000_000_000))
        #expect(
            stated(["X-RateLimit-Remaining": "100", "X-RateLimit-Reset": "1700000000"]) == nil, "the reset has come")
        #expect(stated(["X-RateLimit-Remaining": "100"]) == nil)
        #expect(stated(["RateLimit": #""burst";r=5;t=1"#]) == nil)
        // A policy wins over the pace; a cached response's RateLimit fields are ignored (HTTP-6).
        #expect(
            stated([
                "RateLimit-Policy": #""p";q=10;w=1"#, "X-RateLimit-Remaining": "100", "X-RateLimit-Reset": "1700000050",
            ])?.permits == 10)
        #expect(stated(["RateLimit-Policy": #""p";q=10;w=1"#, "Age": "5"]) == nil)
    }
}
