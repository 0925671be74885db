import RateLimitConformance

// Any bytes as JSON text (what an implementation under test answers, what a file holds): parsed
// or refused with an error, never a trap; what parses reads back the same once written, compact
// or pretty.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let value = try? JSONValue(parsing: text) else { return 0 }
    for written in [value.compactText, value.prettyText] {
        guard let again = try? JSONValue(parsing: written), again == value else {
            fatalError("\(text) parses, but its written form \(written) reads otherwise")
        }
    }
    return 0
}
