// Spec/HTTP.md, HTTP-5, HTTP-6, HTTP-10 and HTTP-13: the rate-limit fields, what a response asks
// for, hostile input and the rate a response states, for the hand-written HTTP cases of
// HTTPFeedbackStories.swift (its helpers and t0, Sat, 21 Nov 2026 00:00:00 GMT).

extension HTTPFeedbackCatalogue {
    // MARK: HTTP-5 RateLimit-Policy, RateLimit, X-RateLimit-*

    static func rateLimitFields() -> [FeedbackCase] {
        let sixtyFour = String(repeating: "a", count: 64)
        return [
            response(
                "draft-example",
                "the draft's policies hour (q=1000, w=3600) and day (q=5000, w=86400), and day r=100;t=36000: no wait, 100 left for 36000 s; day allows fewer per second (5000·3600 = 18,000,000 < 1000·86400 = 86,400,000): the stated rate",
                clauses: ["HTTP-5", "HTTP-13"], status: 200,
                [
                    ("RateLimit-Policy", #""hour";q=1000;w=3600, "day";q=5000;w=86400"#),
                    ("RateLimit", #""day";r=100;t=36000"#),
                ],
                Expect(
                    limits: [limit("day", 100, 36_000)],
                    policies: [
                        .init("hour", quota: 1_000, windowSeconds: 3_600),
                        .init("day", quota: 5_000, windowSeconds: 86_400),
                    ], quota: quota(100, seconds(36_000)), rate: rate(5_000, per: seconds(86_400)))),
            response(
                "policy-unit-and-partition-key",
                "qu=\"content-bytes\" and pk=:sdfjLJUOUH==: (the draft's example): the unit, and the key as its base64 text",
                clauses: ["HTTP-5"], status: 200,
                [("RateLimit-Policy", #""peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:"#)],
                Expect(
                    policies: [
                        .init(
                            "peruser", quota: 65_535, unit: "content-bytes", windowSeconds: 10,
                            partitionKey: "sdfjLJUOUH==")
                    ])),
            response(
                "policy-defaults-and-zero-quota",
                "\"p\";q=0: unit requests, no window, no key; a policy is informative, so even q=0 asks for no wait",
                clauses: ["HTTP-5", "HTTP-6"], [("RateLimit-Policy", #""p";q=0"#)],
                Expect(policies: [.init("p", quota: 0)])),
            response(
                "limit-named-by-a-token",
                "RateLimit quota;r=0;t=1 (the draft's example B.3.1 names the policy with a Token): read, 1 s",
                clauses: ["HTTP-5"], [("RateLimit", "quota;r=0;t=1")],
                Expect(wait: seconds(1), limits: [limit("quota", 0, 1)], quota: quota(0, seconds(1)))),
            response(
                "limit-partition-key",
                "pk=:dXNlcjE=: is kept as its base64 text",
                clauses: ["HTTP-5"], status: 200, [("RateLimit", #""a";r=3;t=7;pk=:dXNlcjE=:"#)],
                Expect(limits: [limit("a", 3, 7, pk: "dXNlcjE=")], quota: quota(3, seconds(7)))),
            response(
                "one-bad-member-ignores-the-field",
                "RateLimit b has no r: the whole field is ignored, a's r=0 too, so no wait; the policy has w=0 (w must be at least 1): ignored",
                clauses: ["HTTP-5"], [("RateLimit", #""a";r=0;t=5, "b";t=2"#), ("RateLimit-Policy", #""p";q=10;w=0"#)],
                Expect(
                    diagnostics: [
                        ignored("RateLimit-Policy", .invalidMember), ignored("RateLimit", .invalidMember),
                    ])),
            response(
                "policy-name-token-and-negative-r",
                "a RateLimit-Policy name must be a String (p is a Token); r=-1 is below 0: both fields ignored",
                clauses: ["HTTP-5"], [("RateLimit-Policy", "p;q=1"), ("RateLimit", #""a";r=-1;t=5"#)],
                Expect(
                    diagnostics: [
                        ignored("RateLimit-Policy", .invalidMember), ignored("RateLimit", .invalidMember),
                    ])),
            response(
                "policy-without-q-and-negative-t",
                "q is required; t=-1 is below 0: both fields ignored",
                clauses: ["HTTP-5"], [("RateLimit-Policy", #""p";w=60"#), ("RateLimit", #""a";r=0;t=-1"#)],
                Expect(
                    diagnostics: [
                        ignored("RateLimit-Policy", .invalidMember), ignored("RateLimit", .invalidMember),
                    ])),
            response(
                "parameters-of-the-wrong-type",
                "qu must be a String (requests is a Token), t an Integer (\"3\" is a String): both fields ignored",
                clauses: ["HTTP-5"],
                [("RateLimit-Policy", #""p";q=1;qu=requests"#), ("RateLimit", #""a";r=1;t="3""#)],
                Expect(
                    diagnostics: [
                        ignored("RateLimit-Policy", .invalidMember), ignored("RateLimit", .invalidMember),
                    ])),
            response(
                "partition-keys-must-be-byte-sequences",
                "pk=abc and pk=x are Tokens, not Byte Sequences: both fields ignored",
                clauses: ["HTTP-5"], [("RateLimit-Policy", #""p";q=1;pk=abc"#), ("RateLimit", #""a";r=1;pk=x"#)],
                Expect(
                    diagnostics: [
                        ignored("RateLimit-Policy", .invalidMember), ignored("RateLimit", .invalidMember),
                    ])),
            response(
                "github-fields",
                "GitHub's five fields, remaining 0 resetting at t0 + 90 (epoch seconds): wait 90 s, quota 0 for 90 s, a pace of 0 per 90 s",
                clauses: ["HTTP-5", "HTTP-6", "HTTP-13"], status: 403,
                [
                    ("X-RateLimit-Limit", "5000"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Used", "5000"),
                    ("X-RateLimit-Reset", "1795219290"), ("X-RateLimit-Resource", "core"),
                ],
                Expect(
                    wait: seconds(90),
                    x: .init(limit: 5_000, remaining: 0, used: 5_000, reset: t0 + 90, resource: "core"),
                    quota: quota(0, seconds(90)), rate: rate(0, per: seconds(90)))),
            response(
                "x-ratelimit-reset-is-epoch-seconds-not-a-delay",
                "X-RateLimit-Reset 60 (as APIs that send a delay do) is read as the instant 60 s after 1970: long past, so remaining 0 asks for no wait (0), resets in 0, and states no rate",
                clauses: ["HTTP-5", "HTTP-6", "HTTP-13"],
                [("X-RateLimit-Limit", "100"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "60")],
                Expect(wait: 0, x: .init(limit: 100, remaining: 0, reset: 60), quota: quota(0, 0))),
            response(
                "x-ratelimit-read-one-by-one",
                "Limit 12x and a Resource of 65 characters are ignored; Remaining 5, Used 7 and Reset t0 + 60 are read: quota 5 for 60 s, a pace of 5 per 60 s",
                clauses: ["HTTP-5", "HTTP-13"], status: 200,
                [
                    ("X-RateLimit-Limit", "12x"), ("X-RateLimit-Remaining", "5"), ("X-RateLimit-Used", "7"),
                    ("X-RateLimit-Reset", "1795219260"), ("X-RateLimit-Resource", sixtyFour + "a"),
                ],
                Expect(
                    x: .init(remaining: 5, used: 7, reset: t0 + 60), quota: quota(5, seconds(60)),
                    rate: rate(5, per: seconds(60)),
                    diagnostics: [
                        ignored("X-RateLimit-Limit", .malformed), ignored("X-RateLimit-Resource", .malformed),
                    ])),
            response(
                "x-ratelimit-18-digits",
                "Limit of 18 digits is read, Used of 19 is not; Remaining 000 is 0; a Resource of 64 characters is read; remaining 0 without a Reset asks for nothing",
                clauses: ["HTTP-5", "HTTP-6"],
                [
                    ("X-RateLimit-Limit", "999999999999999999"), ("X-RateLimit-Used", "1000000000000000000"),
                    ("X-RateLimit-Remaining", "000"), ("X-RateLimit-Resource", sixtyFour),
                ],
                Expect(
                    x: .init(limit: 999_999_999_999_999_999, remaining: 0, resource: sixtyFour),
                    diagnostics: [ignored("X-RateLimit-Used", .malformed)])),
        ]
    }

    // MARK: HTTP-6 What a response asks for

    static func precedence() -> [FeedbackCase] {
        [
            response(
                "retry-after-before-t",
                "a 503 with Retry-After 20 and RateLimit r=0;t=40: Retry-After takes precedence, 20 s; the quota left is d's, 0 for 40 s",
                clauses: ["HTTP-6"], status: 503, [("Retry-After", "20"), ("RateLimit", #""d";r=0;t=40"#)],
                Expect(
                    retryAfter: delay(20), wait: seconds(20), limits: [limit("d", 0, 40)],
                    quota: quota(0, seconds(40)))),
            response(
                "longest-exhausted-t",
                "a and b are exhausted (r=0): the longest of their t, 40 s; c (r=3) asks nothing. Which of the tied a and b is the quota left, HTTP-6 does not say",
                clauses: ["HTTP-6"], [("RateLimit", #""a";r=0;t=10, "b";r=0;t=40, "c";r=3;t=90"#)],
                Expect(
                    wait: seconds(40), limits: [limit("a", 0, 10), limit("b", 0, 40), limit("c", 3, 90)],
                    quota: quota(0, seconds(10))), unspecified: ["remainingQuota"]),
            response(
                "t-before-x-ratelimit",
                "RateLimit r=0;t=30 comes before X-RateLimit-Remaining 0 resetting at t0 + 90: 30 s; the quota left is the RateLimit member's; the rate is the pace of X-RateLimit (0 per 90 s): RateLimit states none",
                clauses: ["HTTP-6", "HTTP-13"],
                [
                    ("RateLimit", #""a";r=0;t=30"#), ("X-RateLimit-Remaining", "0"),
                    ("X-RateLimit-Reset", "1795219290"),
                ],
                Expect(
                    wait: seconds(30), limits: [limit("a", 0, 30)], x: .init(remaining: 0, reset: t0 + 90),
                    quota: quota(0, seconds(30)), rate: rate(0, per: seconds(90)))),
            response(
                "x-ratelimit-reset-from-the-server-date",
                "received t0 + 10 with Date t0: X-RateLimit-Reset t0 + 30 counts from the Date, 30 s (not 20), and so does the pace: 0 per 30 s",
                clauses: ["HTTP-6", "HTTP-13"], receivedAt: t0 + 10,
                [("Date", imfT0), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1795219230")],
                Expect(
                    wait: seconds(30), date: t0, reference: t0, x: .init(remaining: 0, reset: t0 + 30),
                    quota: quota(0, seconds(30)), rate: rate(0, per: seconds(30)))),
            response(
                "date-one-hour-behind-is-trusted",
                "received t0 + 3600, Date t0: exactly one hour off is still trusted; Retry-After t0 + 10 counts from it, 10 s",
                clauses: ["HTTP-6"], receivedAt: t0 + 3_600,
                [("Date", imfT0), ("Retry-After", "Sat, 21 Nov 2026 00:00:10 GMT")],
                Expect(retryAfter: date(t0 + 10), wait: seconds(10), date: t0, reference: t0)),
            response(
                "date-one-hour-and-a-second-behind-is-skew",
                "received t0 + 3601, Date t0: more than an hour off is clock skew, the receipt is the reference; Retry-After t0 + 10 is then past: 0",
                clauses: ["HTTP-6"], receivedAt: t0 + 3_601,
                [("Date", imfT0), ("Retry-After", "Sat, 21 Nov 2026 00:00:10 GMT")],
                Expect(retryAfter: date(t0 + 10), wait: 0, date: t0, diagnostics: [ignored("Date", .clockSkew)])),
            response(
                "date-one-hour-and-a-second-ahead-is-skew",
                "received t0 - 3601, Date t0: skew the other way; Retry-After t0 + 10 counts from the receipt: 3611 s",
                clauses: ["HTTP-6"], receivedAt: t0 - 3_601,
                [("Date", imfT0), ("Retry-After", "Sat, 21 Nov 2026 00:00:10 GMT")],
                Expect(
                    retryAfter: date(t0 + 10), wait: seconds(3_611), date: t0,
                    diagnostics: [ignored("Date", .clockSkew)])),
            response(
                "date-of-1970-is-skew",
                "a Date of 1970 with Retry-After t0 + 5: against that Date it would be 56 years; it is skew, so 5 s from the receipt",
                clauses: ["HTTP-6"],
                [("Date", "Thu, 01 Jan 1970 00:00:00 GMT"), ("Retry-After", "Sat, 21 Nov 2026 00:00:05 GMT")],
                Expect(
                    retryAfter: date(t0 + 5), wait: seconds(5), date: 0, diagnostics: [ignored("Date", .clockSkew)])),
            response(
                "positive-age-ignores-the-quota-fields",
                "Age 12: the response came from a cache, so its quota fields are stale and ignored, RateLimit, RateLimit-Policy and the X-RateLimit fields alike: no quota, no rate; Retry-After (3 s) is read",
                clauses: ["HTTP-6", "HTTP-13"], status: 200,
                [
                    ("Age", "12"), ("RateLimit", #""a";r=0;t=10"#), ("RateLimit-Policy", #""a";q=10"#),
                    ("Retry-After", "3"), ("X-RateLimit-Remaining", "5"), ("X-RateLimit-Reset", "1795219260"),
                ],
                Expect(
                    retryAfter: delay(3), wait: seconds(3),
                    diagnostics: [
                        ignored("RateLimit-Policy", .cached), ignored("RateLimit", .cached),
                        ignored("X-RateLimit-Remaining", .cached), ignored("X-RateLimit-Reset", .cached),
                    ])),
            response(
                "age-zero-reads-the-ratelimit-fields",
                "Age 0 is not positive: RateLimit r=0;t=10 is read and asks for 10 s",
                clauses: ["HTTP-6"], [("Age", "0"), ("RateLimit", #""a";r=0;t=10"#)],
                Expect(wait: seconds(10), limits: [limit("a", 0, 10)], quota: quota(0, seconds(10)))),
            response(
                "quota-left-is-the-smallest-r-with-a-t",
                "a r=50, b r=5, c r=1 without t: the quota left is b's (the smallest r among those with a t), 5 for 3600 s; nothing is exhausted",
                clauses: ["HTTP-6"], status: 200, [("RateLimit", #""a";r=50;t=60, "b";r=5;t=3600, "c";r=1"#)],
                Expect(
                    limits: [limit("a", 50, 60), limit("b", 5, 3_600), limit("c", 1)], quota: quota(5, seconds(3_600)))),
            response(
                "exhausted-member-without-t",
                "RateLimit r=0 without t asks for no wait and is no quota with a reset; X-RateLimit remaining 10 resetting at t0 + 60 is the quota left, and its pace the rate",
                clauses: ["HTTP-6", "HTTP-13"], status: 200,
                [("RateLimit", #""a";r=0"#), ("X-RateLimit-Remaining", "10"), ("X-RateLimit-Reset", "1795219260")],
                Expect(
                    limits: [limit("a", 0)], x: .init(remaining: 10, reset: t0 + 60), quota: quota(10, seconds(60)),
                    rate: rate(10, per: seconds(60)))),
        ]
    }

    // MARK: HTTP-10 Hostile input

    static func hostile() -> [FeedbackCase] {
        let long = 4_096
        return [
            response(
                "long-values",
                "values of 4096 characters: 4096 nines of Retry-After saturate (Int64.max s, wait Int64.max ns); a Limit of 4096 digits, a Resource of 4096 letters and a RateLimit of 2048 \"a;\" are ignored",
                clauses: ["HTTP-10", "HTTP-3"],
                [
                    ("Retry-After", String(repeating: "9", count: long)),
                    ("X-RateLimit-Limit", "1" + String(repeating: "0", count: long - 1)),
                    ("X-RateLimit-Resource", String(repeating: "a", count: long)),
                    ("RateLimit", String(repeating: "a;", count: long / 2)),
                ],
                Expect(
                    retryAfter: delay(.max), wait: .max,
                    diagnostics: [
                        ignored("RateLimit", .malformed), ignored("X-RateLimit-Limit", .malformed),
                        ignored("X-RateLimit-Resource", .malformed),
                    ])),
            response(
                "control-characters",
                "NUL after Retry-After 5, CR LF after a Date, ESC in a Resource, DEL in a RateLimit String: none is trimmed or allowed, all four ignored",
                clauses: ["HTTP-10", "HTTP-1"],
                [
                    ("Retry-After", "5\u{0}"), ("Date", "\(imfT0)\r\n"), ("X-RateLimit-Resource", "co\u{1B}re"),
                    ("RateLimit", "\"a\u{7F}\";r=1"),
                ],
                Expect(
                    diagnostics: [
                        ignored("Date", .malformed), ignored("Retry-After", .malformed),
                        ignored("RateLimit", .malformed), ignored("X-RateLimit-Resource", .malformed),
                    ])),
            response(
                "non-ascii",
                "fullwidth digits, an Arabic-Indic digit, non-ASCII in a Resource and in a String are ignored; Retry-Aftér is another field's name, not read",
                clauses: ["HTTP-10", "HTTP-1"],
                [
                    ("Retry-After", "１２０"), ("X-RateLimit-Limit", "٣"), ("X-RateLimit-Resource", "cœur"),
                    ("RateLimit-Policy", #""café";q=1"#), ("Retry-Aftér", "5"),
                ],
                Expect(
                    diagnostics: [
                        ignored("Retry-After", .malformed), ignored("RateLimit-Policy", .malformed),
                        ignored("X-RateLimit-Limit", .malformed), ignored("X-RateLimit-Resource", .malformed),
                    ])),
            response(
                "largest-t-saturates",
                "t=999999999999999 (15 digits) with r=0: 999,999,999,999,999 s is more nanoseconds than Int64 holds: wait and reset saturate at Int64.max",
                clauses: ["HTTP-10", "HTTP-6"], [("RateLimit", #""a";r=0;t=999999999999999"#)],
                Expect(
                    wait: .max, limits: [limit("a", 0, 999_999_999_999_999)], quota: quota(0, .max))),
            response(
                "largest-x-ratelimit-reset-saturates",
                "Reset 999999999999999999 (18 digits), remaining 0: 999,999,998,204,780,799 s ahead, saturated at Int64.max ns (the wait, the quota's reset and the pace's window); Limit of 18 zeros is 0",
                clauses: ["HTTP-10", "HTTP-6", "HTTP-13"],
                [
                    ("X-RateLimit-Limit", "000000000000000000"), ("X-RateLimit-Remaining", "0"),
                    ("X-RateLimit-Reset", "999999999999999999"),
                ],
                Expect(
                    wait: .max, x: .init(limit: 0, remaining: 0, reset: 999_999_999_999_999_999),
                    quota: quota(0, .max), rate: rate(0, per: .max))),
        ]
    }

    // MARK: HTTP-13 The rate a response states

    static func statedRates() -> [FeedbackCase] {
        [
            response(
                "stated-rate-fewest-per-second",
                "hour q=3600;w=3600 (1 per second) and second q=30;w=1 (30 per second): 3600·1 = 3,600 < 30·3600 = 108,000, hour allows fewer: 3600 per 3600 s",
                clauses: ["HTTP-13"], status: 200, [("RateLimit-Policy", #""hour";q=3600;w=3600, "second";q=30;w=1"#)],
                Expect(
                    policies: [
                        .init("hour", quota: 3_600, windowSeconds: 3_600), .init("second", quota: 30, windowSeconds: 1),
                    ], rate: rate(3_600, per: seconds(3_600)))),
            response(
                "stated-rate-equal-rates-first",
                "a q=2;w=2 and b q=1;w=1 allow the same (2·1 = 1·2): the first, a: 2 per 2 s",
                clauses: ["HTTP-13"], status: 200, [("RateLimit-Policy", #""a";q=2;w=2, "b";q=1;w=1"#)],
                Expect(
                    policies: [.init("a", quota: 2, windowSeconds: 2), .init("b", quota: 1, windowSeconds: 1)],
                    rate: rate(2, per: seconds(2)))),
            response(
                "stated-rate-one-permit-more-decides",
                "a q=3;w=2 and b q=1;w=1: one permit more than the tie (3·1 = 3 > 1·2 = 2): b allows fewer, 1 per 1 s",
                clauses: ["HTTP-13"], status: 200, [("RateLimit-Policy", #""a";q=3;w=2, "b";q=1;w=1"#)],
                Expect(
                    policies: [.init("a", quota: 3, windowSeconds: 2), .init("b", quota: 1, windowSeconds: 1)],
                    rate: rate(1, per: seconds(1)))),
            response(
                "stated-rate-counts-requests-only",
                "bytes (qu=\"content-bytes\", 1 per second) counts no requests; req, 100 per 60 s, is the stated rate",
                clauses: ["HTTP-13"], status: 200,
                [("RateLimit-Policy", #""bytes";q=1;qu="content-bytes";w=1, "req";q=100;w=60"#)],
                Expect(
                    policies: [
                        .init("bytes", quota: 1, unit: "content-bytes", windowSeconds: 1),
                        .init("req", quota: 100, windowSeconds: 60),
                    ], rate: rate(100, per: seconds(60)))),
            response(
                "stated-rate-policy-without-window",
                "open q=5 has no window: a quota, not a rate; so the pace of X-RateLimit-Remaining 30 by its reset t0 + 60 is: 30 per 60 s",
                clauses: ["HTTP-13"], status: 200,
                [
                    ("RateLimit-Policy", #""open";q=5"#), ("X-RateLimit-Remaining", "30"),
                    ("X-RateLimit-Reset", "1795219260"),
                ],
                Expect(
                    policies: [.init("open", quota: 5)], x: .init(remaining: 30, reset: t0 + 60),
                    quota: quota(30, seconds(60)), rate: rate(30, per: seconds(60)))),
            response(
                "stated-rate-zero-quota",
                "zero q=0;w=60 states a rate of 0 per 60 s (an adaptive rate keeps its minimum, ADAPT-7)",
                clauses: ["HTTP-13"], status: 200, [("RateLimit-Policy", #""zero";q=0;w=60"#)],
                Expect(policies: [.init("zero", quota: 0, windowSeconds: 60)], rate: rate(0, per: seconds(60)))),
            response(
                "stated-rate-window-saturates",
                "long q=1;w=999999999999999 (15 digits of seconds): the window, 999,999,999,999,999,000,000,000 ns, saturates at Int64.max",
                clauses: ["HTTP-13", "HTTP-10"], status: 200, [("RateLimit-Policy", #""long";q=1;w=999999999999999"#)],
                Expect(
                    policies: [.init("long", quota: 1, windowSeconds: 999_999_999_999_999)], rate: rate(1, per: .max))),
            response(
                "stated-rate-compared-at-full-width",
                "big q=999999999999999;w=999999999999999 and one q=1;w=1 are both 1 per second: the products (about 10^30) need 128 bits, equal, so the first; its window saturates",
                clauses: ["HTTP-13", "HTTP-10"], status: 200,
                [("RateLimit-Policy", #""big";q=999999999999999;w=999999999999999, "one";q=1;w=1"#)],
                Expect(
                    policies: [
                        .init("big", quota: 999_999_999_999_999, windowSeconds: 999_999_999_999_999),
                        .init("one", quota: 1, windowSeconds: 1),
                    ], rate: rate(999_999_999_999_999, per: .max))),
            response(
                "stated-rate-policy-over-pace",
                "a policy with a window (p, 10 per 1 s) wins over the pace of X-RateLimit (100 by t0 + 50)",
                clauses: ["HTTP-13"], status: 200,
                [
                    ("RateLimit-Policy", #""p";q=10;w=1"#), ("X-RateLimit-Remaining", "100"),
                    ("X-RateLimit-Reset", "1795219250"),
                ],
                Expect(
                    policies: [.init("p", quota: 10, windowSeconds: 1)], x: .init(remaining: 100, reset: t0 + 50),
                    quota: quota(100, seconds(50)), rate: rate(10, per: seconds(1)))),
            response(
                "stated-rate-pace-reset-now",
                "X-RateLimit-Remaining 100 resetting at t0, the reference: the reset does not lie ahead, no rate (the quota resets in 0)",
                clauses: ["HTTP-13"], status: 200,
                [("X-RateLimit-Remaining", "100"), ("X-RateLimit-Reset", "1795219200")],
                Expect(x: .init(remaining: 100, reset: t0), quota: quota(100, 0))),
            response(
                "stated-rate-pace-reset-one-second-ahead",
                "X-RateLimit-Remaining 100 resetting at t0 + 1: one second ahead, 100 per 1 s",
                clauses: ["HTTP-13"], status: 200,
                [("X-RateLimit-Remaining", "100"), ("X-RateLimit-Reset", "1795219201")],
                Expect(
                    x: .init(remaining: 100, reset: t0 + 1), quota: quota(100, seconds(1)),
                    rate: rate(100, per: seconds(1)))),
            response(
                "stated-rate-not-from-ratelimit",
                "RateLimit burst r=5;t=1 alone is a quota left until a reset (a leaky bucket's may mean its burst refilled), not a rate: none",
                clauses: ["HTTP-13"], status: 200, [("RateLimit", #""burst";r=5;t=1"#)],
                Expect(limits: [limit("burst", 5, 1)], quota: quota(5, seconds(1)))),
            response(
                "stated-rate-cached-policy",
                "Age 5: the policy p (10 per 1 s) came from a cache and is ignored (HTTP-6): no rate",
                clauses: ["HTTP-13", "HTTP-6"], status: 200, [("Age", "5"), ("RateLimit-Policy", #""p";q=10;w=1"#)],
                Expect(diagnostics: [ignored("RateLimit-Policy", .cached)])),
        ]
    }
}
