// Concurrency limiter (Spec/ConcurrencyLimiter.md, clauses CL-1 ... CL-12).
//
// At most `limit` permits are held at once. An acquire takes permits if they are free; a release
// gives them back. Time plays no part: a rejected acquire is told how many permits must be
// released first (`rejectedUntilRelease`), never a retry-after. Releasing more than is held is bad
// input (a double release, or a release after a reset) and is answered `invalid`, leaving the
// count untouched, so a buggy caller can never raise the limit by releasing what it never took.
//
// Implementation. One integer: permits in flight.

/// At most `limit` permits held at once; acquire takes them, release gives them back.
public struct ConcurrencyLimiter: RateLimitStrategy {
    public static let identifier = "concurrency"

    /// Permits that may be held at once.
    public let limit: Int64

    /// A validated concurrency limit (CL-1); it must be positive.
    public init(limit: Int64) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(limit, "limit")
        self.limit = limit
    }

    /// Permits held (8 bytes).
    public struct State: Hashable, Sendable {
        /// Permits acquired and not yet released; may exceed `limit` after a reconfigure down.
        public internal(set) var inFlight: Int64
    }

    public var maximumPermits: Int64 { limit }

    public func initialState(at now: RateLimitInstant) -> State {
        State(inFlight: 0)
    }

    public func step(
        _ state: inout State, _ event: RateLimitEvent<ConcurrencyLimiter>, at now: RateLimitInstant
    ) -> RateLimitResult {
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > limit { return .neverAllowed }  // CL-7
            let free = limit - state.inFlight  // negative after a reconfigure below inFlight
            if permits == 0 { return .allowed(remaining: max(0, free)) }  // CL-8
            if permits <= free {  // CL-4
                state.inFlight += permits
                return .allowed(remaining: free - permits)
            }
            return .rejectedUntilRelease(shortfall: permits - free)  // CL-6
        case .release(let permits):  // CL-8
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > state.inFlight {
                return .invalid(
                    RateLimitInputError(
                        field: "permits", value: permits, problem: .exceedsMaximum(state.inFlight),
                        reason: "a release must not exceed the permits in flight"))
            }
            state.inFlight -= permits
            return .allowed(remaining: max(0, limit - state.inFlight))
        case .reset:  // CL-9
            state.inFlight = 0
            return .allowed(remaining: limit)
        case .reconfigure(let replacement):  // CL-10: permits in flight stay in flight
            return .allowed(remaining: max(0, replacement.limit - state.inFlight))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool { state.inFlight == 0 }  // CORE-15
}
