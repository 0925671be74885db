// GCRA, the generic cell rate algorithm (Spec/GCRA.md, clauses GCRA-1 ... GCRA-12).
//
// The limiter remembers two integers: the theoretical arrival time `tat`, the instant at which it
// would be back to a full burst if nothing else arrived, and the last instant recorded (`last`,
// so that time going backwards is evaluated at it, GCRA-2). Each permit pushes `tat` forward by one
// emission interval T; an acquire of n permits at t is admitted when, after it, `tat` would be at
// most `τ = burst × T` ahead of t: `max(tat, t) + n·T − t ≤ τ`. The boundary conforms: an
// acquire exactly at `t = tat + n·T − τ` is admitted (ITU-T I.371's "t ≥ TAT − L").
//
// Implementation. The theoretical arrival time as a `UInt64` plus the last instant recorded
// (16 bytes; a lock-free adapter holds both in one double-word atomic). Instants are at most
// Int64.max and `τ` is validated to fit in an Int64, and `tat` is never more than `τ` past the
// last instant, so `tat ≤ Int64.max + τ < 2^64` never overflows. Recording the last instant lets
// GCRA follow the same rule as every other strategy when time goes back (CORE-10): an earlier
// instant is evaluated at the last one, so a reset or reconfigure sent with a stale clock cannot
// restart the schedule in the past and grant permits twice.
//
// Relation: admits exactly what a continuous token bucket with the same burst and one permit
// per T admits, with equal remaining quota and retry-after, on every trace (Spec/README.md,
// "How the strategies relate").

/// The generic cell rate algorithm: bursts of up to `burst` permits, one permit per
/// `emissionIntervalNanoseconds` sustained.
public struct GCRA: RateLimitStrategy {
    public static let identifier = "gcra"

    /// Permits admitted back to back from a rested limiter.
    public let burst: Int64
    /// Nanoseconds per permit at the sustained rate (the emission interval T).
    public let emissionIntervalNanoseconds: Int64

    @usableFromInline let schedule: VirtualSchedule

    /// A validated GCRA configuration (GCRA-1).
    ///
    /// - Throws: ``RateLimitInputError`` for a non-positive burst or interval, or when
    ///   `burst × emissionIntervalNanoseconds` (the tolerance τ) exceeds `Int64.max`.
    public init(burst: Int64, emissionIntervalNanoseconds: Int64) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(burst, "burst")
        try RateLimitInputError.checkPositive(emissionIntervalNanoseconds, "emissionIntervalNanoseconds")
        try RateLimitInputError.checkAtMost(
            emissionIntervalNanoseconds, Int64.max / burst, "emissionIntervalNanoseconds",
            "the tolerance burst × emissionIntervalNanoseconds must be at most Int64.max")
        self.burst = burst
        self.emissionIntervalNanoseconds = emissionIntervalNanoseconds
        self.schedule = VirtualSchedule(burst: burst, intervalNanoseconds: emissionIntervalNanoseconds)
    }

    /// A validated GCRA configuration with the emission interval as a `Duration` (whole nanoseconds).
    public init(burst: Int64, emissionInterval: Duration) throws(RateLimitInputError) {
        try self.init(
            burst: burst,
            emissionIntervalNanoseconds: emissionInterval.wholeNanoseconds(field: "emissionIntervalNanoseconds"))
    }

    /// The theoretical arrival time and the last instant recorded (16 bytes).
    public struct State: Hashable, Sendable {
        /// The instant at which the limiter is back to a full burst; at most `τ` past `lastNanoseconds`.
        public internal(set) var theoreticalArrivalNanoseconds: UInt64
        /// The latest instant the state was updated at (GCRA-3).
        public internal(set) var lastNanoseconds: Int64

        /// For the lock-free adapter, which keeps a state in two atomic words: only states that
        /// `step` produced may be rebuilt this way.
        @usableFromInline
        package init(theoreticalArrivalNanoseconds: UInt64, lastNanoseconds: Int64) {
            self.theoreticalArrivalNanoseconds = theoreticalArrivalNanoseconds
            self.lastNanoseconds = lastNanoseconds
        }
    }

    public var maximumPermits: Int64 { burst }

    public func initialState(at now: RateLimitInstant) -> State {
        State(theoreticalArrivalNanoseconds: UInt64(now.nanoseconds), lastNanoseconds: now.nanoseconds)
    }

    @inlinable
    public func step(_ state: inout State, _ event: RateLimitEvent<GCRA>, at now: RateLimitInstant) -> RateLimitResult {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // GCRA-3
        let tat = state.theoreticalArrivalNanoseconds
        let pending = schedule.pending(tat: tat, at: UInt64(instant))
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > burst { return .neverAllowed }  // GCRA-7
            if permits == 0 { return .allowed(remaining: schedule.remaining(pending: pending)) }  // GCRA-8
            switch schedule.decide(tat: tat, permits: permits, at: UInt64(instant)) {
            case .admit(let newTat, _, let remaining):  // GCRA-4, GCRA-5
                state = State(theoreticalArrivalNanoseconds: newTat, lastNanoseconds: instant)
                return .allowed(remaining: remaining)
            case .reject(let admission):  // GCRA-6
                return rejection(admittedAt: Wide(admission), now: now)
            }
        case .release:  // GCRA-8
            return .invalid(.releaseNotSupported)
        case .reset:  // GCRA-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: burst)
        case .reconfigure(let replacement):  // GCRA-10
            let newTat = replacement.schedule.carryOver(tat: tat, at: UInt64(instant), from: schedule)
            state = State(theoreticalArrivalNanoseconds: newTat, lastNanoseconds: instant)
            return .allowed(remaining: replacement.schedule.remaining(pending: newTat - UInt64(instant)))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: a full burst available
        state.theoreticalArrivalNanoseconds <= UInt64(max(now.nanoseconds, state.lastNanoseconds))
    }
}
