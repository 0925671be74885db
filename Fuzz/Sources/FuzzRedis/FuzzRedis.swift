import RateLimitCore
@testable import RateLimitRedis

// Any bytes as a script's reply to the shared limiters (Sources/RateLimitRedis/Scripts/README.md):
// the first byte picks the operation, each following line is one bulk string of the reply. A
// reply is read as a result or refused as `unexpectedReply` (SHARED-10), never a trap; a result
// read from a reply is one the limiter could give (an `allowed` never has negative remaining).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let values = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
        .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let permits = Int64(data[0] >> 2) - 8
    let operation: ScriptOperation<ConcurrencyLimiter> =
        switch data[0] & 3 {
        case 0: .acquire(permits, lease: nil)
        case 1: .release(permits, lease: "lease")
        case 2: .reset
        default: (try? ConcurrencyLimiter(limit: 3)).map { .reconfigure($0) } ?? .reset
        }
    _ = try? RedisLimitEngine<ConcurrencyLimiter, ContinuousClock>.answer(values, to: operation)
    return 0
}
