/// Bad input, named: which field or argument was wrong, the value given, and what was expected.
///
/// Configurations refuse bad values in their throwing initializers; an event that cannot be applied
/// (negative permits, a release the strategy does not support or that exceeds what is held) is
/// answered with ``RateLimitResult/invalid(_:)`` and leaves the state unchanged. Nothing is clamped
/// silently and nothing traps (Spec `CORE-11`).
public struct RateLimitInputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the value.
    public enum Problem: Hashable, Sendable {
        /// The value must be at least 1.
        case mustBePositive
        /// The value must be at least 0.
        case mustNotBeNegative
        /// The value is above the largest value this field accepts here.
        case exceedsMaximum(Int64)
        /// A `Duration` with a part finer than one nanosecond, or beyond `Int64.max` nanoseconds.
        case notWholeNanoseconds
        /// The strategy does not accept this kind of event.
        case notSupported
    }

    /// The configuration field or event argument, spelled as in the Spec (e.g. `periodNanoseconds`).
    public var field: String
    /// The value given, when it is an integer.
    public var value: Int64?
    /// What is wrong with it.
    public var problem: Problem
    /// Why the maximum applies, for ``Problem/exceedsMaximum(_:)``; empty otherwise.
    public var reason: String

    /// Creates an error naming `field`.
    public init(field: String, value: Int64?, problem: Problem, reason: String = "") {
        self.field = field
        self.value = value
        self.problem = problem
        self.reason = reason
    }

    public var description: String {
        let given = value.map { " = \($0)" } ?? ""
        let what: String
        switch problem {
        case .mustBePositive: what = "must be at least 1"
        case .mustNotBeNegative: what = "must not be negative"
        case .exceedsMaximum(let maximum): what = "exceeds the maximum \(maximum)"
        case .notWholeNanoseconds: what = "must be a whole number of nanoseconds within Int64"
        case .notSupported: what = "is not supported by this strategy"
        }
        return "\(field)\(given) \(what)" + (reason.isEmpty ? "" : ": \(reason)")
    }
}

extension RateLimitInputError {
    @usableFromInline
    static func checkPositive(_ value: Int64, _ field: String) throws(RateLimitInputError) {
        if value < 1 { throw RateLimitInputError(field: field, value: value, problem: .mustBePositive) }
    }

    @usableFromInline
    static func checkNotNegative(_ value: Int64, _ field: String) throws(RateLimitInputError) {
        if value < 0 { throw RateLimitInputError(field: field, value: value, problem: .mustNotBeNegative) }
    }

    @usableFromInline
    static func checkAtMost(
        _ value: Int64, _ maximum: Int64, _ field: String, _ reason: String
    ) throws(RateLimitInputError) {
        if value > maximum {
            throw RateLimitInputError(field: field, value: value, problem: .exceedsMaximum(maximum), reason: reason)
        }
    }

    /// CORE-3 for a continuous refill (or leak) of `permits` per `periodNanoseconds`: going from empty
    /// to `capacity` (or back) must take at most `Int64.max` ns, so every retry-after fits:
    /// `⌈capacity × period / permits⌉ ≤ Int64.max  ⟺  period ≤ ⌊Int64.max × permits / capacity⌋`.
    @usableFromInline
    static func checkContinuousRefillFits(
        capacity: Int64, permits: Int64, periodNanoseconds: Int64, _ reason: String
    ) throws(RateLimitInputError) {
        let longestPeriod = Wide.product(Int64.max, permits).dividedRoundingDown(by: UInt64(capacity)).int64 ?? .max
        try checkAtMost(periodNanoseconds, longestPeriod, "periodNanoseconds", reason)
    }

    /// The answer to an acquire or release of a negative number of permits.
    @usableFromInline
    static func negativePermits(_ permits: Int64) -> RateLimitInputError {
        RateLimitInputError(field: "permits", value: permits, problem: .mustNotBeNegative)
    }

    /// The answer to a release sent to a strategy that holds no permits to give back.
    @usableFromInline
    static let releaseNotSupported = RateLimitInputError(
        field: "release", value: nil, problem: .notSupported,
        reason: "only the concurrency limiter holds permits that can be released")
}

extension Duration {
    /// This duration as whole nanoseconds, or a ``RateLimitInputError`` naming `field` when it is
    /// negative, exceeds `Int64.max` nanoseconds, or has a part finer than a nanosecond.
    package func wholeNanoseconds(field: String) throws(RateLimitInputError) -> Int64 {
        // Compare before reading `components`: durations of 2^63 seconds or more trap there.
        guard self >= .zero else {
            let value = self >= .nanoseconds(-Int64.max) ? Self.exactNanoseconds(self) : nil
            throw RateLimitInputError(field: field, value: value, problem: .mustNotBeNegative)
        }
        guard self <= .nanoseconds(Int64.max) else {
            throw RateLimitInputError(field: field, value: nil, problem: .exceedsMaximum(.max))
        }
        guard components.attoseconds % 1_000_000_000 == 0, let nanoseconds = Self.exactNanoseconds(self) else {
            throw RateLimitInputError(field: field, value: nil, problem: .notWholeNanoseconds)
        }
        return nanoseconds
    }

    /// Nanoseconds, rounded towards zero, of a duration within ±Int64.max nanoseconds.
    private static func exactNanoseconds(_ duration: Duration) -> Int64? {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow1 || overflow2 ? nil : total
    }
}
