// Fixed window counter (Spec/FixedWindow.md, clauses FW-1 ... FW-12).
//
// The timeline is cut into windows [k·W, (k+1)·W) aligned to its origin: instant k·W belongs to
// window k, instant k·W − 1 to window k − 1. At most `limit` permits are admitted per window; the
// count starts from zero in each new window. The window boundary is the classic weakness: up to
// 2 × limit permits can pass within one window length straddling a boundary (FW-11).
//
// Implementation. Two integers: the permits used and the last instant recorded, whose window is
// the one the count belongs to. Alignment to the timeline origin (Python limits' sliding counter
// also aligns to its epoch; .NET and Bucket4j align to creation) keeps the state free of a
// separate phase and makes every window edge an exact multiple of W in the vectors.

/// At most `limit` permits per window of `windowNanoseconds`, windows aligned to the timeline origin.
public struct FixedWindow: RateLimitStrategy {
    public static let identifier = "fixed-window"

    /// Permits admitted per window.
    public let limit: Int64
    /// The window length in nanoseconds.
    public let windowNanoseconds: Int64

    /// A validated fixed-window configuration (FW-1); both values must be positive.
    public init(limit: Int64, windowNanoseconds: Int64) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(limit, "limit")
        try RateLimitInputError.checkPositive(windowNanoseconds, "windowNanoseconds")
        self.limit = limit
        self.windowNanoseconds = windowNanoseconds
    }

    /// A validated fixed-window configuration with the window as a `Duration` (whole nanoseconds).
    public init(limit: Int64, window: Duration) throws(RateLimitInputError) {
        try self.init(limit: limit, windowNanoseconds: window.wholeNanoseconds(field: "windowNanoseconds"))
    }

    /// Permits used in the window of the last instant recorded (16 bytes).
    public struct State: Hashable, Sendable {
        /// Permits admitted in the window containing `lastNanoseconds`.
        public internal(set) var used: Int64
        /// The latest instant the state was updated at (FW-3).
        public internal(set) var lastNanoseconds: Int64
    }

    public var maximumPermits: Int64 { limit }

    public func initialState(at now: RateLimitInstant) -> State {
        State(used: 0, lastNanoseconds: now.nanoseconds)
    }

    public func step(_ state: inout State, _ event: RateLimitEvent<FixedWindow>, at now: RateLimitInstant)
        -> RateLimitResult
    {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // FW-3
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > limit { return .neverAllowed }  // FW-7
            let used = usedInWindow(state, at: instant)
            if permits == 0 { return .allowed(remaining: max(0, limit - used)) }  // FW-8
            if permits <= limit - used {  // FW-4 (used may exceed limit after a reconfigure)
                state = State(used: used + permits, lastNanoseconds: instant)
                return .allowed(remaining: limit - used - permits)
            }
            // FW-6: the start of the next window.
            let nextWindow = UInt64(instant / windowNanoseconds) + 1
            return rejection(admittedAt: .product(nextWindow, UInt64(windowNanoseconds)), now: now)
        case .release:  // FW-8
            return .invalid(.releaseNotSupported)
        case .reset:  // FW-9
            state = State(used: 0, lastNanoseconds: instant)
            return .allowed(remaining: limit)
        case .reconfigure(let replacement):  // FW-10: the count of the current window is kept
            state = State(used: usedInWindow(state, at: instant), lastNanoseconds: instant)
            return .allowed(remaining: max(0, replacement.limit - state.used))
        }
    }

    // CORE-15: nothing counted in the current window
    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {
        usedInWindow(state, at: max(now.nanoseconds, state.lastNanoseconds)) == 0
    }

    /// FW-3: permits used in the window containing `instant` (≥ last): zero in a later window.
    func usedInWindow(_ state: State, at instant: Int64) -> Int64 {
        instant / windowNanoseconds == state.lastNanoseconds / windowNanoseconds ? state.used : 0
    }
}
