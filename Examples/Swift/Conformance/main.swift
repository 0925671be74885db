import RateLimitConformance

/// A Swift implementation under test: here the reference model itself, wrapped. Yours creates its
/// own limiter in `create` and answers each event in `apply`.
struct MyLimiters: ConformanceSubject {
    var reference = ReferenceSubject()
    var name: String { "my limiters" }
    var strategies: Set<String> { ["gcra", "token-bucket"] }

    mutating func create(_ request: CreateRequest, at now: Int64) throws(SubjectFailure) -> CreateOutcome<
        ReferenceLimiter
    > {
        reference.create(request, at: now)
    }

    mutating func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64)
        throws(SubjectFailure) -> RateLimitResult
    {
        reference.apply(event, to: &limiter, at: now)
    }
}

var subject = MyLimiters()
let report = try ConformanceSuite.run(&subject, options: ConformanceOptions(randomTraces: 20, seed: 7))
for strategy in report.strategies { print(strategy.strategy, strategy.level) }
print(report.passes(at: .exact) ? "conforms exactly" : "see the findings")
