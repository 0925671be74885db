import RateLimitConformance
import Testing

@testable import RateLimitHTTP

@Suite("Structured fields, RateLimit and X-RateLimit fields, what a response asks for (Spec/HTTP.md)")
struct FieldTests {
    @Test("HTTP-4 structured lists parse as RFC 9651's algorithms say")
    func structuredLists() throws {
        let list = try #require(parseStructuredList(#" "burst";q=100;w=60,"daily";q=1000;w=86400 "#))
        #expect(list.count == 2)
        guard case .item(let first) = list[0] else {
            Issue.record("not an item")
            return
        }
        #expect(first.value == .string("burst") && first["q"] == .integer(100) && first["w"] == .integer(60))
        #expect(
            parseStructuredList("a;x=1;x=2").map { members -> StructuredItemValue? in
                if case .item(let item) = members[0] { item["x"] } else { nil }
            } == .integer(2))  // the last repeated parameter wins
        #expect(parseStructuredList("") == [])
        let inner = try #require(
            parseStructuredList(#"(1 "two" ?1);p, tok:en/x, :aGk=:, -1.5, @1659578233, %"caf%c3%a9""#))
        #expect(inner.count == 6)
        if case .innerList(let items, let parameters) = inner[0] {
            #expect(items.map(\.value) == [.integer(1), .string("two"), .boolean(true)])
            #expect(parameters["p"] == .boolean(true))
        } else {
            Issue.record("not an inner list")
        }
        #expect(inner[1] == .item(StructuredItem(value: .token("tok:en/x"), parameters: [])))
        #expect(inner[2] == .item(StructuredItem(value: .byteSequence("aGk="), parameters: [])))
        #expect(inner[3] == .item(StructuredItem(value: .decimal(thousandths: -1_500), parameters: [])))
        #expect(inner[4] == .item(StructuredItem(value: .date(1_659_578_233), parameters: [])))
        #expect(inner[5] == .item(StructuredItem(value: .displayString("café"), parameters: [])))
    }

    @Test(
        "HTTP-4 anything §4.2 refuses fails the whole field",
        arguments: [
            #""a" ;q=1"#, #""a";q =1"#, "a,", ",a", "a,,b", "1234567890123456", "1.2345", "1234567890123.1", "1.",
            #""bad \n escape""#, "\"é\"", ":not base64!:", "?2", "(1 2", "Aa;Q=1", "a;q=", "%\"x%ZZ\"",
            "\"unterminated",
        ])
    func refused(_ text: String) {
        #expect(parseStructuredList(text) == nil, "\(text)")
    }

    @Test("HTTP-5 RateLimit-Policy and RateLimit read the draft's examples; a member breaking a rule ignores the field")
    func rateLimitFields() {
        let feedback = ServerFeedback(
            status: 200,
            fields: [
                "RateLimit-Policy": #""hour";q=1000;w=3600, "day";q=5000;w=86400"#,
                "ratelimit": #""day";r=100;t=36000"#,
            ], receivedAt: reference)
        #expect(
            feedback.policies == [
                QuotaPolicy(name: "hour", quota: 1_000, unit: "requests", windowSeconds: 3_600, partitionKey: nil),
                QuotaPolicy(name: "day", quota: 5_000, unit: "requests", windowSeconds: 86_400, partitionKey: nil),
            ])
        #expect(feedback.limits == [ServiceLimit(name: "day", remaining: 100, resetSeconds: 36_000, partitionKey: nil)])
        #expect(feedback.diagnostics.isEmpty)
        let keyed = ServerFeedback(
            status: 200, fields: ["RateLimit-Policy": #""peruser";q=65535;qu="content-bytes";w=10;pk=:sdfjLJUOUH==:"#],
            receivedAt: reference)
        #expect(keyed.policies.first?.unit == "content-bytes" && keyed.policies.first?.partitionKey == "sdfjLJUOUH==")
        #expect(
            ServerFeedback(status: 200, fields: ["RateLimit": "quota;r=0;t=1"], receivedAt: reference).limits.first?
                .name == "quota")
        for bad in [
            #""a";t=5"#, #""a";r=-1"#, #""a";r=1.5"#, #""a";r=1, b;t=2"#, #"("a");r=1"#, #""a";r=1;t="3""#,
            #""a";r=1;pk=x"#,
        ] {
            let read = ServerFeedback(status: 200, fields: ["RateLimit": bad], receivedAt: reference)
            #expect(read.limits.isEmpty && read.diagnostics.count == 1, "\(bad)")
        }
        for bad in [#""a";w=60"#, #"a;q=1"#, #""a";q=1;w=0"#, #""a";q=1;qu=requests"#] {
            let read = ServerFeedback(status: 200, fields: ["RateLimit-Policy": bad], receivedAt: reference)
            #expect(read.policies.isEmpty && read.diagnostics.count == 1, "\(bad)")
        }
    }

    @Test(
        "HTTP-1 HTTP-5 repeated RateLimit lines are one list; repeated singletons must agree; X-RateLimit fields read one by one"
    )
    func repeatedAndGitHub() {
        let split = ServerFeedback(
            status: 200, fields: HTTPFields([("RateLimit", #""a";r=5;t=9"#), ("RATELIMIT", #""b";r=1;t=30"#)]),
            receivedAt: reference)
        #expect(split.limits.map(\.name) == ["a", "b"])
        #expect(split.remainingQuota?.remaining == 1 && split.remainingQuota?.resetNanoseconds == 30_000_000_000)
        let conflicting = ServerFeedback(
            status: 429, fields: HTTPFields([("Retry-After", "5"), ("retry-after", "7")]), receivedAt: reference)
        #expect(conflicting.retryAfter == nil && conflicting.diagnostics.count == 1)
        let github = ServerFeedback(
            status: 403,
            fields: [
                "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                "X-RateLimit-Reset": "\(reference.secondsSinceEpoch + 90)", "X-RateLimit-Resource": "core",
            ], receivedAt: reference)
        #expect(
            github.github
                == GitHubRateLimit(
                    limit: 5_000, remaining: 0, reset: HTTPDate(secondsSinceEpoch: reference.secondsSinceEpoch + 90),
                    used: 5_000, resource: "core"))
        #expect(github.requestedWaitNanoseconds == 90_000_000_000)
        let broken = ServerFeedback(
            status: 200,
            fields: ["X-RateLimit-Remaining": "-3", "X-RateLimit-Limit": "12x", "X-RateLimit-Resource": ""],
            receivedAt: reference)
        #expect(broken.github.isEmpty && broken.diagnostics.count == 3)
    }

    @Test(
        "HTTP-1 values are trimmed of spaces and tabs before they are compared or parsed: repeated lines that differ only there agree, a list's first line may start with a tab"
    )
    func trimmedBeforeComparing() {
        let repeated = ServerFeedback(
            status: 429, fields: HTTPFields([("Retry-After", "5"), ("retry-after", " 5\t")]), receivedAt: reference)
        #expect(repeated.retryAfter == .delay(seconds: 5) && repeated.diagnostics.isEmpty, "\(repeated.diagnostics)")
        let differing = ServerFeedback(
            status: 429, fields: HTTPFields([("Retry-After", " 5"), ("Retry-After", "6 ")]), receivedAt: reference)
        #expect(differing.retryAfter == nil && differing.diagnostics.map(\.field) == ["Retry-After"])
        let tabbed = ServerFeedback(
            status: 429, fields: HTTPFields([("RateLimit", "\t\"a\";r=0;t=5\t"), ("RateLimit", "\t\"b\";r=1;t=9 ")]),
            receivedAt: reference)
        #expect(tabbed.limits.map(\.name) == ["a", "b"] && tabbed.diagnostics.isEmpty, "\(tabbed.diagnostics)")
        #expect(tabbed.requestedWaitNanoseconds == 5_000_000_000)
        let policy = ServerFeedback(
            status: 200, fields: HTTPFields([("RateLimit-Policy", "\t\"p\";q=10 \t")]), receivedAt: reference)
        #expect(policy.policies.map(\.quota) == [10] && policy.diagnostics.isEmpty)
    }

    @Test("HTTP-6 Retry-After wins over t, the longest exhausted t over GitHub's reset, each from the server's Date")
    func precedence() {
        let date = "Sat, 21 Nov 2026 00:00:00 GMT"
        let later = HTTPDate(secondsSinceEpoch: reference.secondsSinceEpoch + 5)  // the client's clock runs 5 s ahead
        func wait(_ fields: HTTPFields, status: Int = 429) -> Int64? {
            ServerFeedback(status: status, fields: fields, receivedAt: later).requestedWaitNanoseconds
        }
        #expect(wait(["Retry-After": "20", "RateLimit": #""d";r=0;t=40"#]) == 20_000_000_000)
        #expect(wait(["Retry-After": "Sat, 21 Nov 2026 00:00:20 GMT", "Date": date]) == 20_000_000_000)
        #expect(wait(["Retry-After": "Sat, 21 Nov 2026 00:00:20 GMT"]) == 15_000_000_000)  // no Date: from receipt
        #expect(wait(["RateLimit": #""a";r=0;t=10, "b";r=0;t=40, "c";r=3;t=90"#]) == 40_000_000_000)
        #expect(wait(["RateLimit": #""a";r=1;t=10"#]) == nil)
        #expect(
            wait([
                "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "\(reference.secondsSinceEpoch + 30)", "Date": date,
            ]) == 30_000_000_000)
        #expect(
            wait([
                "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "\(reference.secondsSinceEpoch - 30)", "Date": date,
            ]) == 0)
        let cached = ServerFeedback(
            status: 200, fields: ["Age": "12", "RateLimit": #""a";r=0;t=10"#], receivedAt: later)
        #expect(cached.limits.isEmpty && cached.requestedWaitNanoseconds == nil && cached.diagnostics.count == 1)
        // GitHub's fields from a cache are as stale: X-RateLimit-Remaining 0 asks for no wait.
        let cachedGitHub = ServerFeedback(
            status: 200,
            fields: [
                "Age": "12", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "\(reference.secondsSinceEpoch + 30)",
                "Date": date,
            ], receivedAt: later)
        #expect(cachedGitHub.requestedWaitNanoseconds == nil && cachedGitHub.remainingQuota == nil)
        #expect(cachedGitHub.diagnostics.map(\.field) == ["X-RateLimit-Remaining", "X-RateLimit-Reset"])
        #expect(
            ServerFeedback(status: 200, fields: ["Age": "0", "RateLimit": #""a";r=0;t=10"#], receivedAt: later)
                .requestedWaitNanoseconds == 10_000_000_000)
        #expect(ServerFeedback(status: 200, fields: ["Date": "yesterday"], receivedAt: later).diagnostics.count == 1)
    }
}
