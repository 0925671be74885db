// Retries and backoff (Spec/HTTP.md HTTP-7, HTTP-8): exponential waits with a cap and jitter, in
// integer nanoseconds, drawn from an injected random source so a sequence can be replayed; and the
// classification of an attempt's outcome (retry, wait for the server, or stop).

/// How random a backoff wait is (HTTP-7).
public enum Jitter: String, Hashable, Sendable, CaseIterable {
    /// Exactly the exponential wait.
    case none
    /// Uniform in `0 ... wait`.
    case full
    /// `wait / 2` plus a uniform draw in `0 ... wait / 2`.
    case equal
    /// Uniform in `base ... previous × 3`, capped (each wait grows from the previous draw).
    case decorrelated
}

/// Exponential backoff with a cap, jitter, a retry count and a total time budget (HTTP-7).
public struct Backoff: Hashable, Sendable {
    /// Retries after the first attempt.
    public let maximumRetries: Int
    /// The first wait, in nanoseconds.
    public let baseNanoseconds: Int64
    /// No wait is longer, in nanoseconds.
    public let capNanoseconds: Int64
    public let jitter: Jitter
    /// No retry starts later than this after the first attempt (`nil`: no budget).
    public let budgetNanoseconds: Int64?

    /// A validated backoff (HTTP-7).
    ///
    /// - Throws: `RateLimitHTTPError` naming `maximumRetries` (negative), `base` (not positive),
    ///   `cap` (below `base`) or `budget` (negative), or a duration finer than a nanosecond.
    public init(maximumRetries: Int, base: Duration, cap: Duration, jitter: Jitter = .full, budget: Duration? = nil)
        throws(RateLimitHTTPError)
    {
        guard maximumRetries >= 0 else { throw .invalid(field: "maximumRetries", reason: "must not be negative") }
        let baseNanoseconds = try nanoseconds(base, "base")
        let capNanoseconds = try nanoseconds(cap, "cap")
        guard baseNanoseconds > 0 else { throw .invalid(field: "base", reason: "must be positive") }
        guard capNanoseconds >= baseNanoseconds else { throw .invalid(field: "cap", reason: "must be at least base") }
        self.maximumRetries = maximumRetries
        self.baseNanoseconds = baseNanoseconds
        self.capNanoseconds = capNanoseconds
        self.jitter = jitter
        if let budget { budgetNanoseconds = try nanoseconds(budget, "budget") } else { budgetNanoseconds = nil }
    }

    // The `try!`s below cannot fail: their arguments are constants the initializer accepts.

    /// 3 retries, 1 s base, 30 s cap, full jitter.
    public static let `default` = try! Backoff(maximumRetries: 3, base: .seconds(1), cap: .seconds(30))
    /// 5 retries, 0.5 s base, 60 s cap, full jitter.
    public static let aggressive = try! Backoff(maximumRetries: 5, base: .milliseconds(500), cap: .seconds(60))
    /// 2 retries, 2 s base, 15 s cap, full jitter.
    public static let conservative = try! Backoff(maximumRetries: 2, base: .seconds(2), cap: .seconds(15))

    /// The wait before retry number `retry` (0 for the first retry; a negative one counts as 0),
    /// in nanoseconds, within `0 ... cap`; `previous` is the wait before the previous retry
    /// (decorrelated jitter grows from it, taken within `base ... cap`; `nil` for the first).
    public func delay(retry: Int, previous: Int64?, using random: inout some RandomNumberGenerator) -> Int64 {
        let retry = max(0, retry)
        let exponential =
            retry >= 63 || baseNanoseconds > capNanoseconds >> retry ? capNanoseconds : baseNanoseconds << retry
        switch jitter {
        case .none:
            return exponential
        case .full:
            return Int64(uniform(through: UInt64(exponential), using: &random))
        case .equal:
            let half = exponential / 2
            return exponential - half + Int64(uniform(through: UInt64(half), using: &random))
        case .decorrelated:
            let last = min(max(previous ?? baseNanoseconds, baseNanoseconds), capNanoseconds)
            let upper = last > capNanoseconds / 3 ? capNanoseconds : max(baseNanoseconds, last * 3)
            return baseNanoseconds + Int64(uniform(through: UInt64(upper - baseNanoseconds), using: &random))
        }
    }
}

/// A uniform draw in `0 ... bound`: `next() mod (bound + 1)`, drawing again while `next()` falls in
/// the biased low range (HTTP-7), so that any implementation given the same 64-bit values draws
/// the same waits.
func uniform(through bound: UInt64, using random: inout some RandomNumberGenerator) -> UInt64 {
    guard bound < .max else { return random.next() }
    let range = bound + 1
    let biased = (0 &- range) % range  // 2⁶⁴ mod range
    while true {
        let value = random.next() as UInt64
        if value >= biased { return value % range }
    }
}

/// A duration in whole nanoseconds, or the error naming `field`.
func nanoseconds(_ duration: Duration, _ field: String) throws(RateLimitHTTPError) -> Int64 {
    guard duration >= .zero else { throw .invalid(field: field, reason: "must not be negative") }
    guard duration <= .nanoseconds(Int64.max) else {
        throw .invalid(field: field, reason: "must be at most Int64.max nanoseconds")
    }
    let (seconds, attoseconds) = duration.components
    guard attoseconds % 1_000_000_000 == 0 else { throw .invalid(field: field, reason: "must be whole nanoseconds") }
    return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
}

/// A configuration of this module refused, naming the field.
public enum RateLimitHTTPError: Error, Hashable, Sendable, CustomStringConvertible {
    case invalid(field: String, reason: String)

    public var description: String {
        switch self {
        case .invalid(let field, let reason): "\(field) \(reason)"
        }
    }
}
