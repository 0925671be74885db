/// A point on a limiter's timeline: whole nanoseconds since the timeline's origin.
///
/// The timeline is `0 ... Int64.max` nanoseconds (about 292 years). Instants are never negative,
/// so the difference of two instants always fits in an `Int64` and a theoretical arrival time up to
/// one full burst past the end of the timeline still fits in a `UInt64` (Spec `CORE-1`). An adapter
/// maps its clock onto this timeline by measuring from an origin it chose (usually its creation).
public struct RateLimitInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the origin; never negative.
    public let nanoseconds: Int64

    /// The origin of the timeline.
    public static let origin = RateLimitInstant(validated: 0)
    /// The last instant of the timeline. A request that could only be admitted later is never admitted.
    public static let end = RateLimitInstant(validated: .max)

    /// The instant `nanoseconds` after the origin; a negative value is refused, naming `now`.
    public init(nanoseconds: Int64) throws(RateLimitInputError) {
        guard nanoseconds >= 0 else {
            throw RateLimitInputError(field: "now", value: nanoseconds, problem: .mustNotBeNegative)
        }
        self.nanoseconds = nanoseconds
    }

    @usableFromInline
    package init(validated nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The instant `span` nanoseconds later, or `nil` when that lies before the origin or after ``end``.
    @inlinable
    public func advanced(byNanoseconds span: Int64) -> RateLimitInstant? {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(span)
        guard !overflow, sum >= 0 else { return nil }
        return RateLimitInstant(validated: sum)
    }

    /// The signed number of nanoseconds from `earlier` to `self` (always representable).
    public func nanoseconds(since earlier: RateLimitInstant) -> Int64 {
        nanoseconds - earlier.nanoseconds
    }

    public static func < (lhs: RateLimitInstant, rhs: RateLimitInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    public var description: String { "\(nanoseconds)ns" }
}
