// Sliding window counter (Spec/SlidingWindowCounter.md, clauses SWC-1 ... SWC-12).
//
// An O(1) approximation of the sliding log. Windows are aligned to the timeline origin as in the
// fixed window; the limiter counts the permits of the current window (`current`) and of the one
// before (`previous`). At offset `o = t − k·W` into window k, the previous window is assumed to be
// spread evenly and is weighted by the part of it the sliding window (t − W, t] still overlaps:
//
//     estimate(t) = previous × (W − o) / W + current
//
// An acquire of n is admitted when estimate(t) + n ≤ limit. The comparison is made exactly,
// multiplied through by W at 128 bits: previous·(W − o) + (current + n)·W ≤ limit·W. There is no
// rounding in the decision (Python limits floors the estimate first and so admits slightly more;
// Cloudflare's description uses floating point).
//
// The price of O(1) memory: when the previous window's permits all arrived at its very end, the
// estimate forgets them too early, and up to limit + ⌊limit·(W − 2)/W⌋ permits can be admitted in
// one sliding window (SWC-11, checked against the exact log by a property test).

/// The weighted two-window approximation of a sliding window: at most `limit` estimated permits
/// in any window of `windowNanoseconds`.
public struct SlidingWindowCounter: RateLimitStrategy {
    public static let identifier = "sliding-window-counter"

    /// Estimated permits admitted in any window.
    public let limit: Int64
    /// The window length in nanoseconds; windows are aligned to the timeline origin.
    public let windowNanoseconds: Int64

    /// A validated sliding-counter configuration (SWC-1); both values must be positive.
    public init(limit: Int64, windowNanoseconds: Int64) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(limit, "limit")
        try RateLimitInputError.checkPositive(windowNanoseconds, "windowNanoseconds")
        self.limit = limit
        self.windowNanoseconds = windowNanoseconds
    }

    /// A validated sliding-counter configuration with the window as a `Duration` (whole nanoseconds).
    public init(limit: Int64, window: Duration) throws(RateLimitInputError) {
        try self.init(limit: limit, windowNanoseconds: window.wholeNanoseconds(field: "windowNanoseconds"))
    }

    /// The counts of the current and previous windows and the last instant recorded (24 bytes).
    public struct State: Hashable, Sendable {
        /// Permits admitted in the window containing `lastNanoseconds`.
        public internal(set) var current: Int64
        /// Permits admitted in the window before it.
        public internal(set) var previous: Int64
        /// The latest instant the state was updated at (SWC-3).
        public internal(set) var lastNanoseconds: Int64
    }

    public var maximumPermits: Int64 { limit }

    public func initialState(at now: RateLimitInstant) -> State {
        State(current: 0, previous: 0, lastNanoseconds: now.nanoseconds)
    }

    public func step(
        _ state: inout State, _ event: RateLimitEvent<SlidingWindowCounter>, at now: RateLimitInstant
    ) -> RateLimitResult {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // SWC-3
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > limit { return .neverAllowed }  // SWC-7
            var next = rolled(state, to: instant)
            let weighted = weightedPrevious(next.previous, at: instant)
            if permits == 0 { return .allowed(remaining: remaining(next, weighted: weighted)) }  // SWC-8
            let total = weighted.adding(.product(UInt64(next.current) + UInt64(permits), UInt64(windowNanoseconds)))
            if let total, total <= .product(limit, windowNanoseconds) {  // SWC-4
                next.current += permits
                state = next
                return .allowed(remaining: remaining(next, weighted: weighted))
            }
            return rejection(admittedAt: firstAdmission(next, permits: permits, at: instant), now: now)  // SWC-6
        case .release:  // SWC-8
            return .invalid(.releaseNotSupported)
        case .reset:  // SWC-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: limit)
        case .reconfigure(let replacement):  // SWC-10: both counts kept, windows re-aligned
            state = rolled(state, to: instant)
            return .allowed(
                remaining: replacement.remaining(
                    state, weighted: replacement.weightedPrevious(state.previous, at: instant)))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: both windows empty
        let counts = rolled(state, to: max(now.nanoseconds, state.lastNanoseconds))
        return counts.current == 0 && counts.previous == 0
    }

    /// SWC-3: the counts as of the window containing `instant` (≥ last).
    func rolled(_ state: State, to instant: Int64) -> State {
        switch instant / windowNanoseconds - state.lastNanoseconds / windowNanoseconds {
        case 0: State(current: state.current, previous: state.previous, lastNanoseconds: instant)
        case 1: State(current: 0, previous: state.current, lastNanoseconds: instant)
        default: State(current: 0, previous: 0, lastNanoseconds: instant)
        }
    }

    /// `previous × (W − o)`: the previous window's count times the overlap, in units of 1/W permit.
    func weightedPrevious(_ previous: Int64, at instant: Int64) -> Wide {
        .product(previous, windowNanoseconds - instant % windowNanoseconds)
    }

    /// SWC-5: `⌊(limit·W − previous·(W − o)) / W⌋ − current`, at least 0.
    func remaining(_ state: State, weighted: Wide) -> Int64 {
        let room = Wide.product(limit, windowNanoseconds).subtractingSaturated(weighted)
        let whole = room.dividedRoundingDown(by: UInt64(windowNanoseconds)).low  // ≤ limit
        return max(0, Int64(whole) - state.current)
    }

    /// SWC-6: the first instant at which `permits` (≤ limit) fit, given a rejection at `instant`.
    func firstAdmission(_ state: State, permits: Int64, at instant: Int64) -> Wide {
        let window = UInt64(windowNanoseconds)
        let windowStart = UInt64(instant - instant % windowNanoseconds)
        // Later in this window, as the previous window's weight shrinks: need
        // previous·(W − o') ≤ slack·W. Rejected at o means slack < previous, so q < W.
        let slack = limit - permits - state.current
        if slack >= 0, state.previous > 0 {
            let q = Wide.product(slack, windowNanoseconds).dividedRoundingDown(by: UInt64(state.previous)).low
            if q > 0 { return Wide(windowStart).adding(Int64(window - q)) }
        }
        // In the next window the current count becomes the previous one: need
        // current·(W − o) ≤ (limit − permits)·W.
        let nextStart = Wide(windowStart).adding(windowNanoseconds)
        if state.current <= limit - permits { return nextStart }
        let q = Wide.product(limit - permits, windowNanoseconds).dividedRoundingDown(by: UInt64(state.current)).low
        if q > 0 { return nextStart.adding(Int64(window - q)) }
        // Two windows on, both counts are zero and permits ≤ limit fit.
        return nextStart.adding(windowNanoseconds)
    }
}
