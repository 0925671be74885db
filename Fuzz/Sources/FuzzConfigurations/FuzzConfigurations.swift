import Foundation
import RateLimitCore

// Any bytes as a Codable configuration of any strategy: decoded or refused with an error
// (CORE-3), never a trap; what decodes encodes and decodes again to the same configuration, and
// takes an event at the start and at the end of the timeline without trapping.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    guard let strategy = try? JSONDecoder().decode(AnyRateLimitStrategy.self, from: bytes) else { return 0 }
    guard let encoded = try? JSONEncoder().encode(strategy),
        let again = try? JSONDecoder().decode(AnyRateLimitStrategy.self, from: encoded), again == strategy
    else { fatalError("\(String(decoding: bytes, as: UTF8.self)) decodes, but not again once encoded") }
    var limiter = RateLimiter(strategy, at: .origin)
    for instant in [RateLimitInstant.origin, (try? RateLimitInstant(nanoseconds: .max)) ?? .origin] {
        _ = limiter.acquire(Int64(size), at: instant)
        _ = limiter.step(.release(1), at: instant)
        _ = limiter.step(.reset, at: instant)
    }
    return 0
}
