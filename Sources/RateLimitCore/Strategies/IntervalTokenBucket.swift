// Token bucket, interval refill (Spec/IntervalTokenBucket.md, clauses TBI-1 ... TBI-12).
//
// The "tokensPerInterval / replenishingInterval" bucket: tokens arrive in lumps of
// `tokensPerInterval`, at every instant that is a whole multiple of `intervalNanoseconds` on the
// timeline (0, I, 2I, ...), never in between. The grid is aligned to the timeline's origin, not to
// the bucket's creation or its first request, so two buckets with the same interval refill at the
// same instants and an adapter's origin fixes the phase.
//
// Implementation. The state is two integers: whole tokens and the last instant recorded. The
// number of boundaries crossed between two instants is the difference of their interval indices
// (`instant / interval`), so no timer and no per-interval bookkeeping is needed; products of
// boundaries × tokensPerInterval are formed at 128 bits and capped at capacity.

/// A token bucket refilled in lumps: `tokensPerInterval` at every multiple of `intervalNanoseconds`,
/// up to `capacity`, starting with `initialTokens` (full unless told otherwise).
public struct IntervalTokenBucket: RateLimitStrategy {
    public static let identifier = "token-bucket-interval"

    /// The most tokens the bucket holds.
    public let capacity: Int64
    /// Tokens added at each interval boundary.
    public let tokensPerInterval: Int64
    /// The distance between boundaries, in nanoseconds; boundaries are its multiples.
    public let intervalNanoseconds: Int64
    /// Tokens in a new (or reset) bucket.
    public let initialTokens: Int64

    /// A validated interval-refill bucket (TBI-1).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field: a non-positive capacity,
    ///   tokens per interval or interval; initial tokens outside `0...capacity`; or an interval so
    ///   long that refilling an empty bucket would take more than `Int64.max` nanoseconds.
    public init(
        capacity: Int64, tokensPerInterval: Int64, intervalNanoseconds: Int64, initialTokens: Int64? = nil
    ) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(capacity, "capacity")
        try RateLimitInputError.checkPositive(tokensPerInterval, "tokensPerInterval")
        try RateLimitInputError.checkPositive(intervalNanoseconds, "intervalNanoseconds")
        let initial = initialTokens ?? capacity
        try RateLimitInputError.checkNotNegative(initial, "initialTokens")
        try RateLimitInputError.checkAtMost(
            initial, capacity, "initialTokens", "the bucket holds at most capacity tokens")
        // ⌈capacity / tokensPerInterval⌉ boundaries, each at most one interval away.
        let boundariesToFill = (capacity - 1) / tokensPerInterval + 1
        try RateLimitInputError.checkAtMost(
            intervalNanoseconds, Int64.max / boundariesToFill, "intervalNanoseconds",
            "refilling an empty bucket must take at most Int64.max nanoseconds")
        self.capacity = capacity
        self.tokensPerInterval = tokensPerInterval
        self.intervalNanoseconds = intervalNanoseconds
        self.initialTokens = initial
    }

    /// A validated interval-refill bucket with the interval as a `Duration` (whole nanoseconds).
    public init(
        capacity: Int64, tokensPerInterval: Int64, interval: Duration, initialTokens: Int64? = nil
    ) throws(RateLimitInputError) {
        try self.init(
            capacity: capacity, tokensPerInterval: tokensPerInterval,
            intervalNanoseconds: interval.wholeNanoseconds(field: "intervalNanoseconds"), initialTokens: initialTokens)
    }

    /// Whole tokens and the last instant recorded (16 bytes).
    public struct State: Hashable, Sendable {
        /// Tokens in the bucket, `0...capacity`.
        public internal(set) var tokens: Int64
        /// The latest instant the state was updated at (TBI-3).
        public internal(set) var lastNanoseconds: Int64
    }

    public var maximumPermits: Int64 { capacity }

    public func initialState(at now: RateLimitInstant) -> State {
        State(tokens: initialTokens, lastNanoseconds: now.nanoseconds)
    }

    public func step(
        _ state: inout State, _ event: RateLimitEvent<IntervalTokenBucket>, at now: RateLimitInstant
    ) -> RateLimitResult {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // TBI-3
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > capacity { return .neverAllowed }  // TBI-7
            var next = refilled(state, to: instant)
            if next.tokens >= permits {  // TBI-4
                if permits > 0 {
                    next.tokens -= permits
                    state = next
                }
                return .allowed(remaining: next.tokens)
            }
            // TBI-6: the m-th boundary after the instant, m = ⌈missing / tokensPerInterval⌉.
            let boundaries = (permits - next.tokens - 1) / tokensPerInterval + 1
            let index = UInt64(instant / intervalNanoseconds) + UInt64(boundaries)
            return rejection(admittedAt: .product(index, UInt64(intervalNanoseconds)), now: now)
        case .release:  // TBI-8
            return .invalid(.releaseNotSupported)
        case .reset:  // TBI-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: state.tokens)
        case .reconfigure(let replacement):  // TBI-10: tokens kept, capped at the new capacity
            let current = refilled(state, to: instant)
            state = State(tokens: min(current.tokens, replacement.capacity), lastNanoseconds: instant)
            return .allowed(remaining: state.tokens)
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: full, and new buckets start full
        initialTokens == capacity && refilled(state, to: max(now.nanoseconds, state.lastNanoseconds)).tokens == capacity
    }

    /// TBI-3: the state with every boundary in `(last, instant]` applied.
    func refilled(_ state: State, to instant: Int64) -> State {
        let boundaries = instant / intervalNanoseconds - state.lastNanoseconds / intervalNanoseconds
        guard boundaries > 0, state.tokens < capacity else {
            return State(tokens: state.tokens, lastNanoseconds: instant)
        }
        let added = Wide.product(boundaries, tokensPerInterval)
        let room = capacity - state.tokens
        let tokens = added < Wide(room) ? state.tokens + Int64(added.low) : capacity
        return State(tokens: tokens, lastNanoseconds: instant)
    }
}
