import RateLimitHTTP

// Any bytes as a response: lines of `name: value` (the first line's digits the status), read as
// server feedback (HTTP-10: nothing traps); every value also as an HTTP-date, which must read
// back exactly once written (HTTP-2), and as a structured list (HTTP-4).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let status = Int(lines.isEmpty ? "" : lines.removeFirst().prefix(3)) ?? 429
    var fields: [(name: String, value: String)] = []
    for line in lines {
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        fields.append((name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : ""))
    }
    let reference = HTTPDate(secondsSinceEpoch: 1_795_219_200)
    let feedback = ServerFeedback(status: status, fields: HTTPFields(fields), receivedAt: reference)
    _ = (feedback.requestedWaitNanoseconds, feedback.remainingQuota, feedback.statedRate)
    for (_, value) in fields {
        if let date = HTTPDate(value, reference: reference), date >= .earliestWritable, date <= .latestWritable {
            guard HTTPDate(date.description, reference: reference) == date else {
                fatalError("\(value) reads as \(date.secondsSinceEpoch), written \(date), which reads otherwise")
            }
        }
        _ = parseStructuredList(value)
    }
    return 0
}
