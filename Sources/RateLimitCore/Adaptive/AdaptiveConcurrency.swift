// The adaptive concurrency (Spec/AdaptiveLimits.md, clauses ADAPT-1, ADAPT-10 ... ADAPT-16).
//
// A limit of `N` requests in flight, learned from latency as TCP Vegas learns its window (the rule
// Netflix's concurrency-limits applies to requests): a server that answers slower than it does
// without a queue has requests waiting, `q = N·(1 − base/latency)` of them; the limit grows by one
// while that queue is shorter than alpha and the client uses at least half its limit, shrinks by
// one while it is longer than beta, and is cut by a percentage when the server refuses or does not
// answer (a drop), at most once per cool-down. So a client backs off when the server slows down,
// before the server has to refuse.
//
// The baseline. Vegas's "no-load latency" is the lowest latency ever seen; one lucky fast response
// then pins the limit low, and a server that became slower for good is never followed. Here it is
// the lowest latency served in the current or the previous window of `baselineWindowNanoseconds`
// (windows aligned to the origin, like the fixed window's): forgotten within two windows.
//
// Implementation. Six integers; the queue estimate at 128 bits, rounded up (so the limit shrinks
// at the first sign of a queue rather than the last).

/// A concurrency learned from the server's latency and refusals (Spec `ADAPT-10` … `ADAPT-14`).
public struct AdaptiveConcurrency: AdaptiveLimit {
    public static let identifier = "adaptive-concurrency"

    /// The ceiling.
    public let maximumLimit: Int64
    /// The limit of a new machine.
    public let initialLimit: Int64
    /// The floor.
    public let minimumLimit: Int64
    /// The limit grows while the estimated queue is below this.
    public let alpha: Int64
    /// The limit shrinks while the estimated queue is above this.
    public let beta: Int64
    /// The decrease on a drop, in percent.
    public let decreasePercent: Int64
    /// After a drop's decrease, drops change nothing for this long.
    public let coolDownNanoseconds: Int64
    /// How long a low latency stays the baseline: the lowest of the current and previous window.
    public let baselineWindowNanoseconds: Int64

    /// A validated adaptive concurrency (`ADAPT-10`).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field, in the order of the Spec's table.
    public init(
        maximumLimit: Int64, initialLimit: Int64, minimumLimit: Int64 = 1, alpha: Int64 = 2, beta: Int64 = 4,
        decreasePercent: Int64 = 10, coolDownNanoseconds: Int64, baselineWindowNanoseconds: Int64
    ) throws(RateLimitInputError) {
        try RateLimitInputError.checkBounds(maximumLimit, initialLimit, minimumLimit, of: "Limit")
        try RateLimitInputError.checkNotNegative(alpha, "alpha")
        try RateLimitInputError.checkNotNegative(beta, "beta")
        try RateLimitInputError.checkPercent(decreasePercent, "decreasePercent")
        try RateLimitInputError.checkNotNegative(coolDownNanoseconds, "coolDownNanoseconds")
        try RateLimitInputError.checkPositive(baselineWindowNanoseconds, "baselineWindowNanoseconds")
        self.maximumLimit = maximumLimit
        self.initialLimit = initialLimit
        self.minimumLimit = minimumLimit
        self.alpha = alpha
        self.beta = beta
        self.decreasePercent = decreasePercent
        self.coolDownNanoseconds = coolDownNanoseconds
        self.baselineWindowNanoseconds = baselineWindowNanoseconds
    }

    /// A validated adaptive concurrency with the cool-down and the baseline's window as durations.
    public init(
        maximumLimit: Int64, initialLimit: Int64, minimumLimit: Int64 = 1, alpha: Int64 = 2, beta: Int64 = 4,
        decreasePercent: Int64 = 10, coolDown: Duration, baselineWindow: Duration
    ) throws(RateLimitInputError) {
        try self.init(
            maximumLimit: maximumLimit, initialLimit: initialLimit, minimumLimit: minimumLimit, alpha: alpha,
            beta: beta, decreasePercent: decreasePercent,
            coolDownNanoseconds: coolDown.wholeNanoseconds(field: "coolDownNanoseconds"),
            baselineWindowNanoseconds: baselineWindow.wholeNanoseconds(field: "baselineWindowNanoseconds"))
    }

    /// What the machine remembers (`ADAPT-11`).
    public struct State: Hashable, Sendable {
        /// The limit in force.
        public internal(set) var limit: Int64
        /// The index of the baseline's window of the latest event.
        public internal(set) var window: Int64
        /// The lowest latency served in that window.
        public internal(set) var currentMinimum: Int64?
        /// The lowest latency served in the window before it.
        public internal(set) var previousMinimum: Int64?
        /// Drops before this instant change nothing.
        public internal(set) var coolDownUntil: Int64
        /// When the limit last changed: a response to a request sent before saw the old limit.
        public internal(set) var changedAt: Int64
        /// The latest instant of an applied event.
        public internal(set) var last: Int64

        /// The baseline: the lowest latency of the current and the previous window.
        public var baselineNanoseconds: Int64? {
            switch (currentMinimum, previousMinimum) {
            case (let current?, let previous?): min(current, previous)
            case (let current?, nil): current
            case (nil, let previous?): previous
            case (nil, nil): nil
            }
        }
    }

    public func initialState(at now: RateLimitInstant) -> State {
        State(
            limit: initialLimit, window: now.nanoseconds / baselineWindowNanoseconds, currentMinimum: nil,
            previousMinimum: nil, coolDownUntil: now.nanoseconds, changedAt: now.nanoseconds,
            last: now.nanoseconds)
    }

    public func limit(of state: State) -> Int64 { state.limit }

    public func step(_ state: inout State, _ feedback: AdaptiveFeedback, at now: RateLimitInstant) -> AdaptiveAnswer<
        Int64
    > {
        let instant = max(now.nanoseconds, state.last)  // ADAPT-1
        let before = state.limit
        switch feedback {
        case .reset:  // ADAPT-13
            state = initialState(at: RateLimitInstant(validated: instant))
            return .limit(state.limit, .reset)
        case .failure:  // ADAPT-13: no answer is a drop
            roll(&state, to: instant)
            drop(&state, at: instant)
        case .response(let status, let latency, let inFlight, let stated):
            if let error = AdaptiveFeedback.check(status: status, latency: latency, inFlight: inFlight, stated: stated)
            {
                return .invalid(error)
            }
            roll(&state, to: instant)
            switch ResponseClass(status: status) {
            case .served: serve(&state, latency: latency, inFlight: inFlight, at: instant)
            case .rejection: drop(&state, at: instant)
            case .serverError, .none: break  // ADAPT-13
            }
        }
        if state.limit != before { state.changedAt = instant }
        let change: AdaptiveChange =
            state.limit < before ? .decreased : state.limit > before ? .increased : .unchanged
        return .limit(state.limit, change)
    }

    /// ADAPT-11: rolls the baseline's windows to the window of `instant` and records it as the last.
    private func roll(_ state: inout State, to instant: Int64) {
        let window = instant / baselineWindowNanoseconds
        // Instants are never negative and never go back here, so the difference cannot overflow,
        // where `state.window + 1` did in the last window of the timeline (a 1 ns window at .max).
        let windowsPassed = window - state.window
        if windowsPassed == 1 {
            state.previousMinimum = state.currentMinimum
            state.currentMinimum = nil
        } else if windowsPassed > 1 {
            state.previousMinimum = nil
            state.currentMinimum = nil
        }
        state.window = window
        state.last = instant
    }

    /// ADAPT-12: a served response's latency is a sample; the estimated queue moves the limit by
    /// one, once per round trip: only a request sent after the limit last changed saw it.
    private func serve(_ state: inout State, latency: Int64, inFlight: Int64, at instant: Int64) {
        state.currentMinimum = min(state.currentMinimum ?? latency, latency)
        guard instant - latency >= state.changedAt else { return }
        let base = state.baselineNanoseconds ?? latency
        let queue = latency == 0 ? 0 : state.limit.multipliedDividedRoundingUp(latency - base, latency)
        if queue > beta {
            state.limit = max(minimumLimit, state.limit - 1)
        } else if queue < alpha, inFlight.saturatingAdd(inFlight) >= state.limit {
            state.limit = min(maximumLimit, state.limit + 1)
        }
    }

    /// ADAPT-13: a drop cuts the limit, once per cool-down.
    private func drop(_ state: inout State, at instant: Int64) {
        guard instant >= state.coolDownUntil else { return }
        state.limit = max(minimumLimit, state.limit.multipliedDividedRoundingDown(100 - decreasePercent, 100))
        state.coolDownUntil = instant.saturatingAdd(coolDownNanoseconds)
    }
}
