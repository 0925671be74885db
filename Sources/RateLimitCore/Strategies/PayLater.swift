// Pay later (Spec/PayLater.md, clauses PL-1 ... PL-12).
//
// A request of any size is admitted at once when the limiter is not in debt, and its cost pushes
// back the next request: the scheme of Guava's `SmoothBursty`, which lets a large request start
// now rather than wait idly for permits it could have been using, and charges the wait to whoever
// comes next. The limiter is a GCRA whose check comes before the request's cost instead of after
// it: one theoretical arrival time `tat` (the instant it is back to a full burst), each permit
// pushing it by the emission interval T, and an acquire of any size admitted at e when
// `tat − e ≤ τ − T` (τ = burst × T): at least one whole permit is available, so the debt of the
// requests before has been paid. On requests of one permit that is GCRA-4's test exactly.
//
// Implementation. Two 64-bit integers, `tat` (unsigned) and the last instant recorded, like
// GCRA. A request's cost `n × T` is formed at 128 bits; a debt that would be paid only after the
// end of the timeline is recorded as paid one nanosecond past it (`tat = Int64.max + 1 + τ`), the
// largest value the state holds: such a limiter admits nothing more on the timeline whatever the
// exact debt, and a reconfigure keeps it there, so no answer changes (PL-2). Refusals record
// nothing (CORE-8), and an earlier instant is evaluated at the last one (CORE-10).
//
// Departures from the libraries: Guava's `acquire` always reserves and sleeps, and its
// `tryAcquire(n, 0, unit)` is this strategy's decision; its stored permits are doubles and its
// clock whole microseconds. Go's `ReserveN` is not pay-later: it makes a request wait for its own
// cost (Spec/PayLater.md, PL-12).

/// Pay later: a request of any size is admitted when the limiter is not in debt (at least one
/// permit available), and its cost, one `emissionIntervalNanoseconds` per permit, delays the next.
public struct PayLater: RateLimitStrategy {
    public static let identifier = "pay-later"

    /// Permits a rested limiter admits back to back, one at a time (PL-1).
    public var burst: Int64 { schedule.burst }
    /// Nanoseconds per permit at the sustained rate (the emission interval T).
    public var emissionIntervalNanoseconds: Int64 { schedule.intervalNanoseconds }
    /// Tokens of a new (or reset) limiter, `0...burst`.
    public let initialTokens: Int64

    // The burst and interval live in the schedule only: the configuration is 32 bytes, and the
    // warm-up limiter that holds one 40, so neither enlarges `AnyRateLimitStrategy` (whose largest
    // case, GCRA, is 40), which every step through it copies.
    @usableFromInline let schedule: VirtualSchedule

    /// A validated pay-later configuration (PL-1).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field: a non-positive burst or
    ///   interval, initial tokens outside `0...burst`, or a tolerance `burst × emissionIntervalNanoseconds`
    ///   above `Int64.max`.
    public init(burst: Int64, emissionIntervalNanoseconds: Int64, initialTokens: Int64? = nil)
        throws(RateLimitInputError)
    {
        try RateLimitInputError.checkPositive(burst, "burst")
        try RateLimitInputError.checkPositive(emissionIntervalNanoseconds, "emissionIntervalNanoseconds")
        let initial = initialTokens ?? burst
        try RateLimitInputError.checkNotNegative(initial, "initialTokens")
        try RateLimitInputError.checkAtMost(initial, burst, "initialTokens", "the limiter holds at most burst tokens")
        try RateLimitInputError.checkAtMost(
            emissionIntervalNanoseconds, Int64.max / burst, "emissionIntervalNanoseconds",
            "the tolerance burst × emissionIntervalNanoseconds must be at most Int64.max")
        self.initialTokens = initial
        self.schedule = VirtualSchedule(burst: burst, intervalNanoseconds: emissionIntervalNanoseconds)
    }

    /// A validated pay-later configuration with the emission interval as a `Duration` (whole nanoseconds).
    public init(burst: Int64, emissionInterval: Duration, initialTokens: Int64? = nil) throws(RateLimitInputError) {
        try self.init(
            burst: burst,
            emissionIntervalNanoseconds: emissionInterval.wholeNanoseconds(field: "emissionIntervalNanoseconds"),
            initialTokens: initialTokens)
    }

    /// The theoretical arrival time and the last instant recorded (16 bytes).
    public struct State: Hashable, Sendable {
        /// The instant at which the limiter is back to a full burst; past the last instant by more
        /// than the tolerance while in debt, and at most `Int64.max + 1 + τ`.
        public internal(set) var theoreticalArrivalNanoseconds: UInt64
        /// The latest instant the state was updated at (PL-3).
        public internal(set) var lastNanoseconds: Int64

        @usableFromInline
        init(theoreticalArrivalNanoseconds: UInt64, lastNanoseconds: Int64) {
            self.theoreticalArrivalNanoseconds = theoreticalArrivalNanoseconds
            self.lastNanoseconds = lastNanoseconds
        }
    }

    /// Every size is admitted when the limiter is not in debt (PL-7): `Int64.max`.
    public var maximumPermits: Int64 { .max }

    public func initialState(at now: RateLimitInstant) -> State {
        // (burst − initialTokens) × T ≤ τ ≤ Int64.max.
        let owed = UInt64((burst - initialTokens) * emissionIntervalNanoseconds)
        return State(theoreticalArrivalNanoseconds: UInt64(now.nanoseconds) + owed, lastNanoseconds: now.nanoseconds)
    }

    @inlinable
    public func step(_ state: inout State, _ event: RateLimitEvent<PayLater>, at now: RateLimitInstant)
        -> RateLimitResult
    {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // PL-3
        let tat = state.theoreticalArrivalNanoseconds
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if inDebt(tat: tat, at: instant) {
                if permits == 0 { return .allowed(remaining: 0) }  // PL-8
                return rejection(admittedAt: Wide(admissionInstant(tat: tat)), now: now)  // PL-6
            }
            if permits == 0 { return .allowed(remaining: .max) }  // PL-5, PL-8
            let next = charged(tat: tat, cost: Wide.product(permits, emissionIntervalNanoseconds), at: instant)
            state = State(theoreticalArrivalNanoseconds: next, lastNanoseconds: instant)  // PL-4
            return .allowed(remaining: remaining(tat: next, at: instant))
        case .release:  // PL-8
            return .invalid(.releaseNotSupported)
        case .reset:  // PL-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: remaining(tat: state.theoreticalArrivalNanoseconds, at: instant))
        case .reconfigure(let replacement):  // PL-10
            let next = replacement.carryOver(tat: tat, at: instant, from: self)
            state = State(theoreticalArrivalNanoseconds: next, lastNanoseconds: instant)
            return .allowed(remaining: replacement.remaining(tat: next, at: instant))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: no debt, a full burst
        initialTokens == burst
            && state.theoreticalArrivalNanoseconds <= UInt64(max(now.nanoseconds, state.lastNanoseconds))
    }

    // MARK: The arithmetic, shared with the warm-up limiter

    /// `τ − T`: how far `tat` may lie past the evaluation instant for an acquire to be admitted.
    @inlinable var admissionSlackNanoseconds: UInt64 {
        UInt64(schedule.toleranceNanoseconds - emissionIntervalNanoseconds)
    }

    /// The largest `tat` a state holds: a debt paid one nanosecond past the end of the timeline (PL-2).
    @inlinable var saturatedArrival: UInt64 { UInt64(Int64.max) + 1 + UInt64(schedule.toleranceNanoseconds) }

    /// PL-3: in debt at `instant` when less than one whole permit is available, `tat − e > τ − T`.
    @inlinable func inDebt(tat: UInt64, at instant: Int64) -> Bool {
        tat > UInt64(instant) + admissionSlackNanoseconds
    }

    /// PL-6: the first instant at which a limiter in debt is no longer, `tat − (τ − T)`.
    @inlinable func admissionInstant(tat: UInt64) -> UInt64 { tat - admissionSlackNanoseconds }

    /// PL-5: every size when not in debt after the event, nothing while in debt.
    @inlinable func remaining(tat: UInt64, at instant: Int64) -> Int64 {
        inDebt(tat: tat, at: instant) ? 0 : .max
    }

    /// PL-4: `max(tat, e) + cost`, saturated at ``saturatedArrival`` (PL-2).
    @inlinable func charged(tat: UInt64, cost: Wide, at instant: Int64) -> UInt64 {
        let start = max(tat, UInt64(instant))
        guard let total = cost.adding(Wide(start)), total < Wide(saturatedArrival) else { return saturatedArrival }
        return total.low
    }

    /// PL-10: the tokens kept (as GCRA-10) while there are any; a debt is kept as the instant it is
    /// paid off, `tat − τ`. Returns the new `tat` under this configuration.
    @usableFromInline func carryOver(tat: UInt64, at instant: Int64, from previous: PayLater) -> UInt64 {
        let tolerance = UInt64(previous.schedule.toleranceNanoseconds)
        guard tat > UInt64(instant) + tolerance else {
            return schedule.carryOver(tat: tat, at: UInt64(instant), from: previous.schedule)
        }
        // tat ≤ Int64.max + 1 + τ, so the debt is paid at most one nanosecond past the timeline.
        return (tat - tolerance) + UInt64(schedule.toleranceNanoseconds)
    }
}
