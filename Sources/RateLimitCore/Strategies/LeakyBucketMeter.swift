// Leaky bucket as a meter: policing (Spec/LeakyBucketMeter.md, clauses LBM-1 ... LBM-12).
//
// Each admitted permit pours one unit of water into a bucket of `capacity` permits, which leaks
// `leakPermitsPerPeriod` per `periodNanoseconds`, continuously. An acquire of n is admitted when
// the water after pouring would not overflow: level + n ≤ capacity; otherwise it is rejected
// (policing: nothing is queued or delayed) with the exact instant enough will have leaked.
//
// Implementation. The level is kept exactly in units, one permit being `periodNanoseconds` units
// and each nanosecond leaking `leakPermitsPerPeriod` units, as a 128-bit value: the meter is the
// textbook formulation ("how full is the bucket"), written independently of the token bucket's
// tokens-plus-fraction form. The two are the same limiter seen from opposite sides (water =
// capacity − tokens), and a property test checks that they answer every trace identically,
// including reset and reconfigure; the meter is kept as its own strategy because it is how many
// users think about the limit and because the differential test catches arithmetic slips in both.

/// A leaky bucket meter: `capacity` permits of water, leaking `leakPermitsPerPeriod` per
/// `periodNanoseconds`; an acquire that would overflow it is rejected.
public struct LeakyBucketMeter: RateLimitStrategy {
    public static let identifier = "leaky-bucket-meter"

    /// The bucket's size in permits.
    public let capacity: Int64
    /// Permits that leak out per period.
    public let leakPermitsPerPeriod: Int64
    /// The leak period in nanoseconds.
    public let periodNanoseconds: Int64
    /// Water in a new (or reset) bucket, in permits (empty unless told otherwise).
    public let initialLevel: Int64

    /// A validated meter configuration (LBM-1).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field: a non-positive capacity, leak
    ///   rate or period; an initial level outside `0...capacity`; or a period so long that a full
    ///   bucket would take more than `Int64.max` nanoseconds to drain.
    public init(
        capacity: Int64, leakPermitsPerPeriod: Int64, periodNanoseconds: Int64, initialLevel: Int64 = 0
    ) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(capacity, "capacity")
        try RateLimitInputError.checkPositive(leakPermitsPerPeriod, "leakPermitsPerPeriod")
        try RateLimitInputError.checkPositive(periodNanoseconds, "periodNanoseconds")
        try RateLimitInputError.checkNotNegative(initialLevel, "initialLevel")
        try RateLimitInputError.checkAtMost(
            initialLevel, capacity, "initialLevel", "the bucket holds at most capacity permits")
        try RateLimitInputError.checkContinuousRefillFits(
            capacity: capacity, permits: leakPermitsPerPeriod, periodNanoseconds: periodNanoseconds,
            "draining a full bucket must take at most Int64.max nanoseconds")
        self.capacity = capacity
        self.leakPermitsPerPeriod = leakPermitsPerPeriod
        self.periodNanoseconds = periodNanoseconds
        self.initialLevel = initialLevel
    }

    /// A validated meter configuration with the period as a `Duration` (whole nanoseconds).
    public init(
        capacity: Int64, leakPermitsPerPeriod: Int64, period: Duration, initialLevel: Int64 = 0
    ) throws(RateLimitInputError) {
        try self.init(
            capacity: capacity, leakPermitsPerPeriod: leakPermitsPerPeriod,
            periodNanoseconds: period.wholeNanoseconds(field: "periodNanoseconds"), initialLevel: initialLevel)
    }

    /// The water level in units (1/`periodNanoseconds` of a permit) and the last instant (24 bytes).
    public struct State: Hashable, Sendable {
        @usableFromInline var level: Wide
        /// The latest instant the state was updated at (LBM-3).
        public internal(set) var lastNanoseconds: Int64
    }

    public var maximumPermits: Int64 { capacity }

    /// The bucket's size in units.
    var capacityUnits: Wide { .product(capacity, periodNanoseconds) }

    public func initialState(at now: RateLimitInstant) -> State {
        State(level: .product(initialLevel, periodNanoseconds), lastNanoseconds: now.nanoseconds)
    }

    public func step(
        _ state: inout State, _ event: RateLimitEvent<LeakyBucketMeter>, at now: RateLimitInstant
    ) -> RateLimitResult {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // LBM-3
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > capacity { return .neverAllowed }  // LBM-7
            var next = drained(state, to: instant)
            let poured = next.level.adding(.product(permits, periodNanoseconds))  // < 2^127, never nil
            if let poured, poured <= capacityUnits {  // LBM-4
                if permits > 0 {
                    next.level = poured
                    state = next
                }
                return .allowed(remaining: remaining(poured))
            }
            // LBM-6: overflow units, leaked at leakPermitsPerPeriod units per nanosecond, rounded up.
            let overflow = (poured ?? .zero).subtracting(capacityUnits)
            let wait = overflow.dividedRoundingUp(by: UInt64(leakPermitsPerPeriod))
            return rejection(admittedAt: wait.adding(instant), now: now)
        case .release:  // LBM-8
            return .invalid(.releaseNotSupported)
        case .reset:  // LBM-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: remaining(state.level))
        case .reconfigure(let replacement):  // LBM-10
            let current = drained(state, to: instant)
            state = State(level: replacement.carryOver(level: current.level, from: self), lastNanoseconds: instant)
            return .allowed(remaining: replacement.remaining(state.level))
        }
    }

    // CORE-15: drained, and new meters start empty
    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {
        initialLevel == 0 && drained(state, to: max(now.nanoseconds, state.lastNanoseconds)).level == .zero
    }

    /// LBM-3: the state with the leak from its last instant to `instant` (≥ last) applied.
    func drained(_ state: State, to instant: Int64) -> State {
        let leaked = Wide.product(leakPermitsPerPeriod, instant - state.lastNanoseconds)
        return State(level: state.level.subtractingSaturated(leaked), lastNanoseconds: instant)
    }

    /// LBM-5: whole permits of room left, `⌊(capacity units − level) / period⌋`.
    func remaining(_ level: Wide) -> Int64 {
        Int64(capacityUnits.subtractingSaturated(level).dividedRoundingDown(by: UInt64(periodNanoseconds)).low)
    }

    /// LBM-10: the room left (capacity − level) is kept in permits, rounded down to the new units and
    /// capped at the new capacity; the new level is what that leaves.
    func carryOver(level: Wide, from previous: LeakyBucketMeter) -> Wide {
        let room = previous.capacityUnits.subtractingSaturated(level)
        let (whole, fraction) = room.quotientAndRemainder(dividingBy: UInt64(previous.periodNanoseconds))
        guard let wholePermits = whole.int64, wholePermits < capacity else { return .zero }
        // fraction < old period, so fraction × new period / old period < new period.
        let scaledFraction = Wide.product(fraction, UInt64(periodNanoseconds))
            .dividedRoundingDown(by: UInt64(previous.periodNanoseconds))
        let keptRoom = Wide.product(wholePermits, periodNanoseconds).adding(Int64(scaledFraction.low))
        return capacityUnits.subtracting(keptRoom)
    }
}
