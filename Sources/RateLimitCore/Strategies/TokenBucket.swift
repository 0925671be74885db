// Token bucket, continuous refill (Spec/TokenBucket.md, clauses TB-1 ... TB-12).
//
// A bucket holds up to `capacity` tokens and gains `permitsPerPeriod` tokens every
// `periodNanoseconds`, continuously: after half a period, half of them. An acquire of n permits
// takes n tokens if there are that many, and otherwise takes nothing and is told exactly when
// there will be.
//
// Implementation. Fractions of a token are kept exactly, in *units*: one token is
// `periodNanoseconds` units and every nanosecond adds `permitsPerPeriod` units. The state stores
// whole tokens plus the leftover units (`fraction < periodNanoseconds`), so the remaining quota is
// read without a division and a refill divides only when at least one whole token was added.
// Products such as rate × elapsed are formed at 128 bits, so no rate, period or idle time
// overflows; validation only refuses buckets whose refill from empty to full would outlast the
// timeline (Int64.max nanoseconds), which also bounds every retry-after.
//
// Departures from common implementations: no floating point (Go's x/time/rate uses float64
// tokens); a rejected acquire changes nothing (Go's ReserveN and many others still advance state);
// an instant earlier than the last one recorded is evaluated at the last one, so going back in
// time never refills (Go's `advance` re-grants tokens).

/// A token bucket with continuous refill: `capacity` tokens, `permitsPerPeriod` added per
/// `periodNanoseconds`, starting with `initialTokens` (full unless told otherwise).
public struct TokenBucket: RateLimitStrategy {
    public static let identifier = "token-bucket"

    /// The most tokens the bucket holds (TB-1).
    public let capacity: Int64
    /// Tokens added per period.
    public let permitsPerPeriod: Int64
    /// The refill period in nanoseconds.
    public let periodNanoseconds: Int64
    /// Tokens in a new (or reset) bucket.
    public let initialTokens: Int64

    /// A validated token bucket configuration (TB-1).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field: a non-positive capacity, rate
    ///   or period; initial tokens outside `0...capacity`; or a period so long that refilling an
    ///   empty bucket would take more than `Int64.max` nanoseconds.
    public init(
        capacity: Int64, permitsPerPeriod: Int64, periodNanoseconds: Int64, initialTokens: Int64? = nil
    ) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(capacity, "capacity")
        try RateLimitInputError.checkPositive(permitsPerPeriod, "permitsPerPeriod")
        try RateLimitInputError.checkPositive(periodNanoseconds, "periodNanoseconds")
        let initial = initialTokens ?? capacity
        try RateLimitInputError.checkNotNegative(initial, "initialTokens")
        try RateLimitInputError.checkAtMost(
            initial, capacity, "initialTokens", "the bucket holds at most capacity tokens")
        try RateLimitInputError.checkContinuousRefillFits(
            capacity: capacity, permits: permitsPerPeriod, periodNanoseconds: periodNanoseconds,
            "refilling an empty bucket must take at most Int64.max nanoseconds")
        self.capacity = capacity
        self.permitsPerPeriod = permitsPerPeriod
        self.periodNanoseconds = periodNanoseconds
        self.initialTokens = initial
    }

    /// A validated token bucket configuration with the period as a `Duration` (whole nanoseconds).
    public init(
        capacity: Int64, permitsPerPeriod: Int64, period: Duration, initialTokens: Int64? = nil
    ) throws(RateLimitInputError) {
        try self.init(
            capacity: capacity, permitsPerPeriod: permitsPerPeriod,
            periodNanoseconds: period.wholeNanoseconds(field: "periodNanoseconds"), initialTokens: initialTokens)
    }

    /// Whole tokens, the exact leftover fraction, and the last instant recorded (24 bytes).
    public struct State: Hashable, Sendable {
        /// Whole tokens in the bucket, `0...capacity`.
        public internal(set) var tokens: Int64
        /// Leftover units towards the next token, `0..<periodNanoseconds`; zero when full.
        public internal(set) var fraction: Int64
        /// The latest instant the state was updated at (TB-3).
        public internal(set) var lastNanoseconds: Int64

        @usableFromInline
        init(tokens: Int64, fraction: Int64, lastNanoseconds: Int64) {
            self.tokens = tokens
            self.fraction = fraction
            self.lastNanoseconds = lastNanoseconds
        }
    }

    public var maximumPermits: Int64 { capacity }

    public func initialState(at now: RateLimitInstant) -> State {
        State(tokens: initialTokens, fraction: 0, lastNanoseconds: now.nanoseconds)
    }

    // Always inlined, with `refilled` and `RateLimiter.acquire`: callers pass a constant event, so
    // the switch folds away. Chosen as a set, since each alone moves costs around (Performance.md,
    // "Token bucket inlining").
    @inlinable @inline(__always)
    public func step(_ state: inout State, _ event: RateLimitEvent<TokenBucket>, at now: RateLimitInstant)
        -> RateLimitResult
    {
        // TB-3: an instant before the last recorded one is evaluated at the last one.
        let instant = max(now.nanoseconds, state.lastNanoseconds)
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > capacity { return .neverAllowed }  // TB-7
            let next = refilled(state, to: instant)
            if next.tokens >= permits {  // TB-4
                if permits > 0 {  // TB-8: an acquire of 0 records nothing
                    state = State(
                        tokens: next.tokens - permits, fraction: next.fraction, lastNanoseconds: next.lastNanoseconds)
                }
                return .allowed(remaining: next.tokens - permits)
            }
            // TB-6: units still missing, then the whole nanoseconds the refill needs, rounded up.
            let missing = Wide.product(permits - next.tokens, periodNanoseconds).subtracting(Wide(next.fraction))
            let wait = missing.dividedRoundingUp(by: UInt64(permitsPerPeriod))
            return rejection(admittedAt: wait.adding(instant), now: now)
        case .release:  // TB-8
            return .invalid(.releaseNotSupported)
        case .reset:  // TB-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: state.tokens)
        case .reconfigure(let replacement):  // TB-10
            state = replacement.carryOver(refilled(state, to: instant), from: self)
            return .allowed(remaining: state.tokens)
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: full, and new buckets start full
        initialTokens == capacity && refilled(state, to: max(now.nanoseconds, state.lastNanoseconds)).tokens == capacity
    }

    /// TB-3: the state with the refill from its last instant to `instant` (≥ last) applied.
    @inlinable @inline(__always)
    func refilled(_ state: State, to instant: Int64) -> State {
        let elapsed = instant - state.lastNanoseconds
        guard elapsed > 0, state.tokens < capacity else {
            return State(tokens: state.tokens, fraction: state.fraction, lastNanoseconds: instant)
        }
        let units = Wide.product(permitsPerPeriod, elapsed).adding(state.fraction)
        if units.high == 0, units.low < UInt64(periodNanoseconds) {  // less than one whole token
            return State(tokens: state.tokens, fraction: Int64(units.low), lastNanoseconds: instant)
        }
        let (whole, leftover) = units.quotientAndRemainder(dividingBy: UInt64(periodNanoseconds))
        if let added = whole.int64, added < capacity - state.tokens {
            return State(tokens: state.tokens + added, fraction: Int64(leftover), lastNanoseconds: instant)
        }
        return State(tokens: capacity, fraction: 0, lastNanoseconds: instant)
    }

    /// TB-10: tokens (with their fraction) kept, rounded down to the new units, capped at the new capacity.
    @usableFromInline
    func carryOver(_ old: State, from previous: TokenBucket) -> State {
        if old.tokens >= capacity {
            return State(tokens: capacity, fraction: 0, lastNanoseconds: old.lastNanoseconds)
        }
        // fraction < old period, so fraction × new period / old period < new period fits in 64 bits.
        let fraction = Wide.product(old.fraction, periodNanoseconds)
            .dividedRoundingDown(by: UInt64(previous.periodNanoseconds)).low
        return State(tokens: old.tokens, fraction: Int64(fraction), lastNanoseconds: old.lastNanoseconds)
    }
}
