// The adapters' clock as a limiter's timeline (Spec/Core.md CORE-1, Spec/WaitQueue.md WQ-11).

import RateLimitClock
import RateLimitCore

/// Maps a `Clock` onto a limiter's timeline (CORE-1): instant 0 is the clock's reading when the
/// timeline was made, and whole nanoseconds count from there.
///
/// A reading before the origin (a clock that went back) maps to the origin: every time-based
/// strategy evaluates an event at `max(now, last)` with `last ≥ 0` (CORE-10), so admissions are
/// exactly those of the earlier reading (retry-afters count from the origin; WQ-11). A reading more than `Int64.max` ns (292
/// years) after the origin maps to the end of the timeline, where every refusal is
/// `neverAllowed` (CORE-7). A fraction of a nanosecond is dropped (an earlier instant never
/// admits more).
@usableFromInline package struct ClockTimeline<C: Clock>: Sendable where C.Duration == Duration {
    // `origin` first, at offset 0 whatever the clock: reading it needs no field offset from the
    // metadata (`ContinuousClock.Instant` is resilient, so the layout after it is computed).
    @usableFromInline package let origin: C.Instant
    @usableFromInline package let clock: C

    /// A timeline whose origin is `clock.now`.
    @inlinable
    package init(clock: C) {
        self.clock = clock
        self.origin = clock.now
    }

    /// The clock's current reading on the timeline.
    @inlinable
    package func now() -> RateLimitInstant {
        // `ContinuousClock`, the adapters' default, and the coarse clock are read directly: the
        // tests fold away once specialized, and through `Clock` the read took three witness thunks
        // and a lazy witness-table lookup (Performance.md, "Clock reads").
        // The casts are identities: `C` is that clock, so `C.Instant` is its `Instant`.
        if C.self == ContinuousClock.self {
            return Self.instant(offset: unsafeBitCast(origin, to: ContinuousClock.Instant.self).duration(to: .now))
        }
        // The coarse clock is whole nanoseconds already: a subtraction, no division.
        if C.self == CoarseMonotonicClock.self {
            let since = unsafeBitCast(origin, to: CoarseMonotonicClock.Instant.self).nanoseconds
            return RateLimitInstant(validated: max(0, CoarseMonotonicClock.readNanoseconds() &- since))
        }
        return instant(of: clock.now)
    }

    /// A clock reading on the timeline.
    @inlinable
    package func instant(of reading: C.Instant) -> RateLimitInstant {
        Self.instant(offset: origin.duration(to: reading))
    }

    /// The timeline instant `offset` after the origin: whole nanoseconds, a fraction dropped; the
    /// origin for a negative offset and the end beyond `Int64.max` ns.
    ///
    /// Read straight from the 128-bit count of attoseconds that is `Duration`'s frozen layout
    /// (`_high`, `_low`): one 128-by-64-bit division, where `components` divides by 10^18 and then
    /// by 10^9, a dearer clock read for every adapter (Performance.md, "Clock reads").
    @inlinable
    static func instant(offset: Duration) -> RateLimitInstant {
        guard offset._high >= 0 else { return .origin }
        let high = UInt64(offset._high)
        // At or beyond 10^9 × 2^64 attoseconds the quotient needs more than 64 bits.
        guard high < 1_000_000_000 else { return .end }
        let nanoseconds = UInt64(1_000_000_000).dividingFullWidth((high, offset._low)).quotient
        return nanoseconds > UInt64(Int64.max) ? .end : RateLimitInstant(validated: Int64(nanoseconds))
    }

    /// The clock reading of a timeline instant.
    @inlinable
    package func reading(of instant: RateLimitInstant) -> C.Instant {
        origin.advanced(by: .nanoseconds(instant.nanoseconds))
    }

    /// The clock reading `nanoseconds` after `instant` (the end of the timeline at most): where a
    /// request granted at `instant` with a scheduled wait starts.
    @inlinable
    package func reading(afterNanoseconds nanoseconds: Int64, from instant: RateLimitInstant) -> C.Instant {
        reading(of: instant.advanced(byNanoseconds: nanoseconds) ?? .end)
    }

    /// `now + timeout` on the timeline, or the end of the timeline when that lies beyond it; a
    /// negative timeout is `now` (the request times out unless admitted at once).
    @inlinable
    package func deadline(after timeout: Duration, from now: RateLimitInstant) -> RateLimitInstant {
        guard timeout > .zero else { return now }
        guard timeout < .nanoseconds(Int64.max - now.nanoseconds) else { return .end }
        let (seconds, attoseconds) = timeout.components
        return RateLimitInstant(validated: now.nanoseconds + seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
