// Sliding window log (Spec/SlidingWindowLog.md, clauses SWL-1 ... SWL-12).
//
// The exact sliding window: every admission is logged with its instant and permits, and an
// acquire at t is admitted when the permits logged in (t − W, t] plus its own are at most `limit`.
// An admission at a counts for the instants a ... a + W − 1 and no longer: exactly one window
// later it has expired (the same half-open convention as the fixed window's [k·W, (k+1)·W)).
//
// Implementation. The log (`PermitLog`, shared with the segmented window) is a buffer of
// (instant, permits) entries in admission order, which is also instant order because recorded
// instants never decrease. Admissions at the same instant are
// merged into one entry, so the log never holds more entries than `limit` permits in force (plus
// expired entries not yet pruned): memory is O(limit), and a limit in the millions costs megabytes.
// Expired entries are pruned when the state changes; a rejected acquire only reads, so it leaves
// the log exactly as it was, and each refused query walks the expired prefix again. The sum of
// logged permits is cached, so an admission costs O(1) amortised plus the entries it prunes.

/// The exact sliding window: at most `limit` permits in any window (t − windowNanoseconds, t].
public struct SlidingWindowLog: RateLimitStrategy {
    public static let identifier = "sliding-window-log"

    /// Permits admitted in any window.
    public let limit: Int64
    /// The window length in nanoseconds.
    public let windowNanoseconds: Int64

    /// A validated sliding-log configuration (SWL-1); both values must be positive.
    public init(limit: Int64, windowNanoseconds: Int64) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(limit, "limit")
        try RateLimitInputError.checkPositive(windowNanoseconds, "windowNanoseconds")
        self.limit = limit
        self.windowNanoseconds = windowNanoseconds
    }

    /// A validated sliding-log configuration with the window as a `Duration` (whole nanoseconds).
    public init(limit: Int64, window: Duration) throws(RateLimitInputError) {
        try self.init(limit: limit, windowNanoseconds: window.wholeNanoseconds(field: "windowNanoseconds"))
    }

    /// One logged admission.
    public struct Entry: Hashable, Sendable {
        /// The instant of the admission.
        public var instantNanoseconds: Int64
        /// Permits admitted at that instant.
        public var permits: Int64
    }

    /// The log of admissions still possibly in force, and the last instant recorded.
    public struct State: Hashable, Sendable {
        @usableFromInline var log: PermitLog<Entry>
        /// The latest instant the state was updated at (SWL-3).
        public internal(set) var lastNanoseconds: Int64

        /// Sum of the permits of the logged entries.
        public var loggedPermits: Int64 { log.total }
        /// The logged admissions, oldest first.
        public var entries: ArraySlice<Entry> { log.entries }
    }

    public var maximumPermits: Int64 { limit }

    public func initialState(at now: RateLimitInstant) -> State {
        State(log: PermitLog(), lastNanoseconds: now.nanoseconds)
    }

    public func step(
        _ state: inout State, _ event: RateLimitEvent<SlidingWindowLog>, at now: RateLimitInstant
    ) -> RateLimitResult {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // SWL-3
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > limit { return .neverAllowed }  // SWL-7
            switch state.log.acquire(permits, limit: limit, expired: expired(state, at: instant), at: instant) {
            case .admitted(let remaining):  // SWL-4, SWL-5
                if permits > 0 { state.lastNanoseconds = instant }  // SWL-8: a query records nothing
                return .allowed(remaining: remaining)
            case .waitFor(let oldest):  // SWL-6: the oldest entries whose expiry frees enough permits
                return rejection(admittedAt: wideSum(oldest, windowNanoseconds), now: now)
            }
        case .release:  // SWL-8
            return .invalid(.releaseNotSupported)
        case .reset:  // SWL-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: limit)
        case .reconfigure(let replacement):  // SWL-10: entries in force (old window) kept
            let (expiredCount, expiredPermits) = expired(state, at: instant)
            state.log.dropOldest(expiredCount, permits: expiredPermits)
            state.lastNanoseconds = instant
            let (_, stillExpired) = replacement.expired(state, at: instant)
            return .allowed(remaining: max(0, replacement.limit - (state.loggedPermits - stillExpired)))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: every entry has expired
        expired(state, at: max(now.nanoseconds, state.lastNanoseconds)).permits == state.loggedPermits
    }

    /// SWL-3: the leading entries that no longer count at `instant` (those with a + W ≤ instant).
    func expired(_ state: State, at instant: Int64) -> (count: Int, permits: Int64) {
        // a + W ≤ instant ⟺ a ≤ instant − W; instant − W cannot overflow (both non-negative).
        state.log.leading(through: instant - windowNanoseconds)
    }
}

extension SlidingWindowLog.Entry: LoggedPermits {
    @usableFromInline var key: Int64 { instantNanoseconds }
    @usableFromInline init(key: Int64, permits: Int64) { self.init(instantNanoseconds: key, permits: permits) }
}
