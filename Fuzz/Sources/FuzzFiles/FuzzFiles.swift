@testable import RateLimitConformance

// Any bytes as the files a run reads: a vector file, a scenario or HTTP vector file, an
// expectations file, a profile. Each is read or refused with an error naming what is wrong,
// never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? ExpectationFile(parsing: text)
    guard let json = try? JSONValue(parsing: text) else { return 0 }
    _ = try? VectorFile(json: json)
    _ = try? ScenarioVectorFile(json: json)
    _ = try? HTTPVectorFile(json: json)
    _ = try? ImplementationProfile(json: json)
    return 0
}
