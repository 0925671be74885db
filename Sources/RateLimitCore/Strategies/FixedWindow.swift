// Fixed window counter (Spec/FixedWindow.md, clauses FW-1 ... FW-12).
//
// The timeline is cut into windows [k·W, (k+1)·W) aligned to its origin: instant k·W belongs to
// window k, instant k·W − 1 to window k − 1. At most `limit` permits are admitted per window; the
// count starts from zero in each new window. The window boundary is the classic weakness: up to
// 2 × limit permits can pass within one window length straddling a boundary (FW-11).
//
// Implementation. Three integers: the permits used, the last instant recorded, whose window is
// the one the count belongs to, and the anchor the windows are counted from. The Spec's design
// aligns windows to the timeline origin (anchor 0: every window edge an exact multiple of W in the
// vectors); two declared variants (FW-13) cover the libraries that align to the limiter's creation
// (.NET, Bucket4j: anchor = creation) or open a window at the first admission after the last one
// ended (Python limits' fixed window: anchor = that admission).

/// At most `limit` permits per window of `windowNanoseconds`; windows aligned to the timeline
/// origin, or to one of the variants of ``WindowAlignment`` (FW-13).
public struct FixedWindow: RateLimitStrategy {
    public static let identifier = "fixed-window"

    /// Permits admitted per window.
    public let limit: Int64
    /// The window length in nanoseconds.
    public let windowNanoseconds: Int64
    /// Where windows start: the origin unless a variant is asked for (FW-13).
    public let alignment: WindowAlignment

    /// A validated fixed-window configuration (FW-1); both values must be positive.
    public init(limit: Int64, windowNanoseconds: Int64, alignment: WindowAlignment = .origin)
        throws(RateLimitInputError)
    {
        try RateLimitInputError.checkPositive(limit, "limit")
        try RateLimitInputError.checkPositive(windowNanoseconds, "windowNanoseconds")
        self.limit = limit
        self.windowNanoseconds = windowNanoseconds
        self.alignment = alignment
    }

    /// A validated fixed-window configuration with the window as a `Duration` (whole nanoseconds).
    public init(limit: Int64, window: Duration, alignment: WindowAlignment = .origin) throws(RateLimitInputError) {
        try self.init(
            limit: limit, windowNanoseconds: window.wholeNanoseconds(field: "windowNanoseconds"), alignment: alignment)
    }

    /// This configuration with windows aligned as `alignment` says.
    public func aligned(_ alignment: WindowAlignment) -> FixedWindow {
        // The values were validated already: only the alignment changes.
        (try? FixedWindow(limit: limit, windowNanoseconds: windowNanoseconds, alignment: alignment)) ?? self
    }

    /// Permits used in the window of the last instant recorded, and where windows start (24 bytes).
    public struct State: Hashable, Sendable {
        /// Permits admitted in the window containing `lastNanoseconds`.
        public internal(set) var used: Int64
        /// The latest instant the state was updated at (FW-3).
        public internal(set) var lastNanoseconds: Int64
        /// The instant windows are counted from (FW-13): 0 on the origin grid, the creation or
        /// reset instant, or the admission that opened the current window.
        public internal(set) var anchorNanoseconds: Int64 = 0
    }

    public var maximumPermits: Int64 { limit }

    public func initialState(at now: RateLimitInstant) -> State {
        State(used: 0, lastNanoseconds: now.nanoseconds, anchorNanoseconds: anchor(createdAt: now.nanoseconds))
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
                // FW-13: a first admission with no window open opens one.
                let anchor = alignment == .firstEvent && used == 0 ? instant : state.anchorNanoseconds
                state = State(used: used + permits, lastNanoseconds: instant, anchorNanoseconds: anchor)
                return .allowed(remaining: limit - used - permits)
            }
            // FW-6: the start of the next window, anchor + (⌊(e − anchor)/W⌋ + 1)·W.
            let anchor = state.anchorNanoseconds
            let nextWindow = UInt64(bitPattern: instant &- anchor) / UInt64(windowNanoseconds) + 1
            return rejection(admittedAt: .product(nextWindow, UInt64(windowNanoseconds)).adding(anchor), now: now)
        case .release:  // FW-8
            return .invalid(.releaseNotSupported)
        case .reset:  // FW-9
            state = State(used: 0, lastNanoseconds: instant, anchorNanoseconds: anchor(createdAt: instant))
            return .allowed(remaining: limit)
        case .reconfigure(let replacement):  // FW-10: the count of the current window is kept
            guard replacement.alignment == alignment else {  // FW-13: the alignment is the limiter's own
                return .invalid(
                    RateLimitInputError(
                        field: "alignment", value: nil, problem: .notSupported,
                        reason: "a reconfigure keeps the windows' alignment (\(alignment.rawValue))"))
            }
            let used = usedInWindow(state, at: instant)
            var anchor = state.anchorNanoseconds
            // FW-13: a first-event window that the new length has already closed opens again at e.
            if alignment == .firstEvent,
                used == 0 || UInt64(bitPattern: instant &- anchor) >= replacement.windowNanoseconds
            {
                anchor = instant
            }
            state = State(used: used, lastNanoseconds: instant, anchorNanoseconds: anchor)
            return .allowed(remaining: max(0, replacement.limit - state.used))
        }
    }

    // CORE-15: nothing counted in the current window
    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {
        usedInWindow(state, at: max(now.nanoseconds, state.lastNanoseconds)) == 0
    }

    /// The anchor of a limiter created or reset at `instant` (FW-13).
    private func anchor(createdAt instant: Int64) -> Int64 { alignment == .origin ? 0 : instant }

    /// FW-3: permits used in the window containing `instant` (≥ last ≥ anchor): zero in a later
    /// window. The differences from the anchor fit in 64 unsigned bits.
    func usedInWindow(_ state: State, at instant: Int64) -> Int64 {
        let window = UInt64(windowNanoseconds)
        let anchor = state.anchorNanoseconds
        return UInt64(bitPattern: instant &- anchor) / window == UInt64(bitPattern: state.lastNanoseconds &- anchor)
            / window
            ? state.used : 0
    }
}
