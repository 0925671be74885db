/// Maps a `Clock` onto a limiter's timeline (CORE-1): instant 0 is the clock's reading when the
/// timeline was made, and whole nanoseconds count from there.
///
/// A reading before the origin (a clock that went back) maps to the origin: every time-based
/// strategy evaluates an event at `max(now, last)` with `last ≥ 0` (CORE-10), so admissions are
/// exactly those of the earlier reading (retry-afters count from the origin; WQ-11). A reading more than `Int64.max` ns (292
/// years) after the origin maps to the end of the timeline, where every refusal is
/// `neverAllowed` (CORE-7). A fraction of a nanosecond is dropped (an earlier instant never
/// admits more).
public struct ClockTimeline<C: Clock>: Sendable where C.Duration == Duration {
    public let clock: C
    public let origin: C.Instant

    /// A timeline whose origin is `clock.now`.
    @inlinable
    public init(clock: C) {
        self.clock = clock
        self.origin = clock.now
    }

    /// The clock's current reading on the timeline.
    @inlinable
    public func now() -> RateLimitInstant { instant(of: clock.now) }

    /// A clock reading on the timeline.
    @inlinable
    public func instant(of reading: C.Instant) -> RateLimitInstant {
        // The end of the timeline is found by overflow-checked integers rather than by comparing
        // with `.nanoseconds(Int64.max)`, which would build a 128-bit value on every read.
        let offset = origin.duration(to: reading)
        guard offset > .zero else { return .origin }
        let (seconds, attoseconds) = offset.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carry) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow || carry ? .end : RateLimitInstant(validated: total)
    }

    /// The clock reading of a timeline instant.
    @inlinable
    public func reading(of instant: RateLimitInstant) -> C.Instant {
        origin.advanced(by: .nanoseconds(instant.nanoseconds))
    }

    /// The clock reading `nanoseconds` after `instant` (the end of the timeline at most): where a
    /// request granted at `instant` with a scheduled wait starts.
    @inlinable
    public func reading(afterNanoseconds nanoseconds: Int64, from instant: RateLimitInstant) -> C.Instant {
        reading(of: instant.advanced(byNanoseconds: nanoseconds) ?? .end)
    }

    /// `now + timeout` on the timeline, or the end of the timeline when that lies beyond it; a
    /// negative timeout is `now` (the request times out unless admitted at once).
    @inlinable
    public func deadline(after timeout: Duration, from now: RateLimitInstant) -> RateLimitInstant {
        guard timeout > .zero else { return now }
        guard timeout < .nanoseconds(Int64.max - now.nanoseconds) else { return .end }
        let (seconds, attoseconds) = timeout.components
        return RateLimitInstant(validated: now.nanoseconds + seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
