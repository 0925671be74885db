// Retry-After (RFC 9110 §10.2.3, Spec/HTTP.md HTTP-3): delay-seconds or an HTTP-date.

/// A server's Retry-After: a number of seconds, or a date.
public enum RetryAfter: Hashable, Sendable {
    /// Seconds to wait from the response (saturated at `Int64.max` when longer; see HTTP-3).
    case delay(seconds: Int64)
    /// Wait until this date (taken relative to the response's `Date` field, HTTP-3).
    case date(HTTPDate)

    /// Parses a field value: digits only (after trimming spaces and tabs), or an HTTP-date (a
    /// two-digit RFC 850 year read against `reference`); `nil` for anything else.
    public init?(_ value: some StringProtocol, reference: HTTPDate) {
        let trimmed = trimmingWhitespace(value)
        if !trimmed.isEmpty, trimmed.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            self = .delay(seconds: saturatingDecimal(trimmed))
        } else if let date = HTTPDate(String(decoding: trimmed, as: UTF8.self), reference: reference) {
            self = .date(date)
        } else {
            return nil
        }
    }

    /// The wait it asks for, in nanoseconds from the response, given the response's date: 0 for
    /// a date already past (or a negative delay, which a parsed field never holds); saturated at
    /// `Int64.max` (292 years).
    public func nanoseconds(after responseDate: HTTPDate) -> Int64 {
        switch self {
        case .delay(let seconds): return max(0, saturatingNanoseconds(seconds: seconds))
        case .date(let date):
            let (seconds, overflow) = date.secondsSinceEpoch.subtractingReportingOverflow(
                responseDate.secondsSinceEpoch)
            if overflow { return date.secondsSinceEpoch > responseDate.secondsSinceEpoch ? .max : 0 }
            return max(0, saturatingNanoseconds(seconds: seconds))
        }
    }
}

/// The bytes of `value` without leading and trailing spaces and tabs (HTTP's OWS).
func trimmingWhitespace(_ value: some StringProtocol) -> ArraySlice<UInt8> {
    let bytes = Array(value.utf8)
    var start = 0
    var end = bytes.count
    while start < end, bytes[start] == 32 || bytes[start] == 9 { start += 1 }
    while end > start, bytes[end - 1] == 32 || bytes[end - 1] == 9 { end -= 1 }
    return bytes[start..<end]
}

/// A run of ASCII digits as an integer, saturated at `Int64.max`.
func saturatingDecimal(_ digits: ArraySlice<UInt8>) -> Int64 {
    var value: Int64 = 0
    for digit in digits {
        let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times.addingReportingOverflow(Int64(digit - 48))
        if overflow1 || overflow2 { return .max }
        value = sum
    }
    return value
}

/// `seconds × 10⁹`, saturated at `Int64.min ... Int64.max`.
func saturatingNanoseconds(seconds: Int64) -> Int64 {
    let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? (seconds < 0 ? .min : .max) : product
}
