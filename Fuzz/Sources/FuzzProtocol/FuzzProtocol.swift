import RateLimitCore
@testable import RateLimitConformance

// Any bytes as what an implementation under test answers: the first byte picks the limiter (one
// of the exhaustive spaces' configurations), each following line is an answer. Every line goes
// through each reader of an answer (hello, result, feedback, refusal) and each result is judged
// as the answer to an acquire (CONF-1 to CONF-6): the harness refuses or judges any answer,
// never traps.
let configurations = AnyRateLimitStrategy.identifiers.compactMap {
    ExhaustiveSpace<AnyRateLimitStrategy>.standardConfigurations($0)?.0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let configuration = configurations[Int(data[0]) % configurations.count]
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    var judge = Judge(configuration: configuration, createdAt: 0, profile: .full, tolerance: Int64(data[0] % 3))
    var now: Int64 = 0
    for (index, line) in text.split(separator: "\n").enumerated() {
        guard let answer = try? JSONValue(parsing: String(line)) else { continue }
        _ = try? ImplementationProfile(json: answer)
        _ = try? FeedbackResult(json: answer["result"] ?? answer)
        _ = try? ScenarioRefusal(json: answer)
        guard let result = try? RateLimitResult(json: answer["result"] ?? answer) else { continue }
        let verdict = judge.judge(step: index + 1, .acquire(Int64(index % 4)), at: now, got: result)
        _ = verdict.explanation
        now += Int64(index % 3)
    }
    return 0
}
