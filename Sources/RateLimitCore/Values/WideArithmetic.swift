// Full-width unsigned arithmetic for the few products that can exceed 64 bits (Spec `CORE-2`):
// capacity × period, rate × elapsed, count × window. The standard library's `UInt128` needs
// macOS 15 / iOS 18 on Apple platforms, so the core carries its own 128-bit value built on
// `multipliedFullWidth` and `dividingFullWidth`, which every platform has.

/// An unsigned 128-bit integer, just wide enough for the products the strategies form.
@usableFromInline
struct Wide: Hashable, Comparable, Sendable {
    @usableFromInline var high: UInt64
    @usableFromInline var low: UInt64

    @inlinable init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    @inlinable init(_ value: UInt64) {
        self.high = 0
        self.low = value
    }

    /// A non-negative `Int64` widened.
    @inlinable init(_ value: Int64) {
        self.high = 0
        self.low = UInt64(bitPattern: value)
    }

    @usableFromInline static let zero = Wide(0 as UInt64)

    /// `a × b` exactly.
    @inlinable static func product(_ a: UInt64, _ b: UInt64) -> Wide {
        let (high, low) = a.multipliedFullWidth(by: b)
        return Wide(high: high, low: low)
    }

    /// `a × b` exactly, for non-negative `Int64` factors.
    @inlinable static func product(_ a: Int64, _ b: Int64) -> Wide {
        product(UInt64(bitPattern: a), UInt64(bitPattern: b))
    }

    /// `self + other`, or `nil` when the sum needs more than 128 bits.
    @inlinable func adding(_ other: Wide) -> Wide? {
        let (low, carry) = low.addingReportingOverflow(other.low)
        let (high1, overflow1) = high.addingReportingOverflow(other.high)
        let (high2, overflow2) = high1.addingReportingOverflow(carry ? 1 : 0)
        if overflow1 || overflow2 { return nil }
        return Wide(high: high2, low: low)
    }

    /// `self + value` for a non-negative `value`; callers guarantee the sum fits in 128 bits
    /// (every use adds to a value below 2^127).
    @inlinable func adding(_ value: Int64) -> Wide {
        let (low, carry) = low.addingReportingOverflow(UInt64(bitPattern: value))
        return Wide(high: high &+ (carry ? 1 : 0), low: low)
    }

    /// `self - other`; callers guarantee `other <= self`.
    @inlinable func subtracting(_ other: Wide) -> Wide {
        let (low, borrow) = low.subtractingReportingOverflow(other.low)
        let high = high &- other.high &- (borrow ? 1 : 0)
        return Wide(high: high, low: low)
    }

    /// `self - other`, or zero when `other > self`.
    @inlinable func subtractingSaturated(_ other: Wide) -> Wide {
        other >= self ? .zero : subtracting(other)
    }

    /// Quotient and remainder of `self / divisor` (`divisor > 0`); the quotient is full width.
    @inlinable @inline(__always) func quotientAndRemainder(dividingBy divisor: UInt64) -> (
        quotient: Wide, remainder: UInt64
    ) {
        // The common case, one 64-bit division.
        if high == 0 { return (Wide(low / divisor), low % divisor) }
        let quotientHigh = high / divisor
        let partial = high % divisor
        // partial < divisor, so the second quotient fits in 64 bits and cannot trap.
        let (quotientLow, remainder) = divisor.dividingFullWidth((partial, low))
        return (Wide(high: quotientHigh, low: quotientLow), remainder)
    }

    /// `⌊self / divisor⌋` (`divisor > 0`).
    @inlinable func dividedRoundingDown(by divisor: UInt64) -> Wide {
        quotientAndRemainder(dividingBy: divisor).quotient
    }

    /// `⌈self / divisor⌉` (`divisor > 0`).
    @inlinable func dividedRoundingUp(by divisor: UInt64) -> Wide {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder == 0 ? quotient : (quotient.adding(Wide(1 as UInt64)) ?? quotient)
    }

    /// The value as an `Int64` when it is at most `Int64.max`, `nil` otherwise.
    @inlinable var int64: Int64? {
        high == 0 && low <= UInt64(Int64.max) ? Int64(low) : nil
    }

    /// The value as a `UInt64` when it fits, `nil` otherwise.
    @inlinable var uint64: UInt64? {
        high == 0 ? low : nil
    }

    @inlinable static func < (lhs: Wide, rhs: Wide) -> Bool {
        lhs.high != rhs.high ? lhs.high < rhs.high : lhs.low < rhs.low
    }
}

/// The answer for an acquire first admitted at `admission` (an instant that may lie past the end
/// of the timeline): rejected with an exact retry-after, or never allowed (Spec `CORE-7`).
@inlinable
func rejection(admittedAt admission: Wide, now: RateLimitInstant) -> RateLimitResult {
    guard let instant = admission.int64 else { return .neverAllowed }
    return .rejected(retryAfterNanoseconds: instant - now.nanoseconds)
}

/// `a + b` for two non-negative `Int64`s, full width (the sum fits in a `UInt64`).
@inlinable
func wideSum(_ a: Int64, _ b: Int64) -> Wide {
    Wide(UInt64(bitPattern: a) + UInt64(bitPattern: b))
}
