// Leaky bucket as a queue: shaping (Spec/LeakyBucketQueue.md, clauses LBQ-1 ... LBQ-12).
//
// Requests leave at a steady pace of one permit per `intervalNanoseconds`. The first request on an
// idle limiter goes at once; each later one is scheduled to start exactly when the permits ahead
// of it have drained, so starts are spaced by the permits of the request before. At most
// `queueCapacity` permits may be waiting at any instant; a request that would push the queue
// beyond that is rejected with the exact instant room appears. The answer tells each admitted
// request when its turn comes (`delayed`); the caller (or adapter) sleeps until then.
//
// Implementation. Two integers: the instant at which the schedule becomes idle (`nextStart`) and
// the last instant recorded. Admission uses the same virtual-scheduling arithmetic as GCRA with a
// burst of `queueCapacity + 1` (the request starting now plus `queueCapacity` waiting), so the
// decisions are GCRA's on traces whose instants never decrease. Two things differ: the start
// instant is reported, and reconfigure keeps the schedule (requests already told when to go keep
// their turn, so pending work may exceed the new queue until it drains). Like GCRA, the queue
// records the latest instant seen (`last`) explicitly. An event earlier than it is
// evaluated at it, and a request admitted there starts no earlier than there: going back in time
// never shortens the spacing. A start past the end of the timeline can never be served and is
// answered `neverAllowed`.

/// A leaky bucket used as a queue: admitted requests are scheduled one `intervalNanoseconds` apart
/// per permit, with at most `queueCapacity` permits waiting.
public struct LeakyBucketQueue: RateLimitStrategy {
    public static let identifier = "leaky-bucket-queue"

    /// Permits that may wait for their turn at any instant (0 means: admit only when idle).
    public let queueCapacity: Int64
    /// Nanoseconds between the starts of consecutive permits.
    public let intervalNanoseconds: Int64

    @usableFromInline let schedule: VirtualSchedule

    /// A validated queue configuration (LBQ-1).
    ///
    /// - Throws: ``RateLimitInputError`` for a negative queue capacity, a non-positive interval, or
    ///   when `(queueCapacity + 1) × intervalNanoseconds` exceeds `Int64.max`.
    public init(queueCapacity: Int64, intervalNanoseconds: Int64) throws(RateLimitInputError) {
        try RateLimitInputError.checkNotNegative(queueCapacity, "queueCapacity")
        try RateLimitInputError.checkAtMost(
            queueCapacity, Int64.max - 1, "queueCapacity", "queueCapacity + 1 must be at most Int64.max")
        try RateLimitInputError.checkPositive(intervalNanoseconds, "intervalNanoseconds")
        try RateLimitInputError.checkAtMost(
            intervalNanoseconds, Int64.max / (queueCapacity + 1), "intervalNanoseconds",
            "(queueCapacity + 1) × intervalNanoseconds must be at most Int64.max")
        self.queueCapacity = queueCapacity
        self.intervalNanoseconds = intervalNanoseconds
        self.schedule = VirtualSchedule(burst: queueCapacity + 1, intervalNanoseconds: intervalNanoseconds)
    }

    /// A validated queue configuration with the interval as a `Duration` (whole nanoseconds).
    public init(queueCapacity: Int64, interval: Duration) throws(RateLimitInputError) {
        try self.init(
            queueCapacity: queueCapacity,
            intervalNanoseconds: interval.wholeNanoseconds(field: "intervalNanoseconds"))
    }

    /// The instant the schedule becomes idle and the last instant recorded (16 bytes).
    public struct State: Hashable, Sendable {
        /// When the next admitted permit may start; at most `Int64.max` past the last instant.
        public internal(set) var nextStartNanoseconds: UInt64
        /// The latest instant the state was updated at (LBQ-3).
        public internal(set) var lastNanoseconds: Int64
    }

    /// The request starting now plus the permits that may wait.
    public var maximumPermits: Int64 { queueCapacity + 1 }

    public func initialState(at now: RateLimitInstant) -> State {
        State(nextStartNanoseconds: UInt64(now.nanoseconds), lastNanoseconds: now.nanoseconds)
    }

    public func step(
        _ state: inout State, _ event: RateLimitEvent<LeakyBucketQueue>, at now: RateLimitInstant
    ) -> RateLimitResult {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // LBQ-3
        let nextStart = state.nextStartNanoseconds
        let pending = schedule.pending(tat: nextStart, at: UInt64(instant))
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > maximumPermits { return .neverAllowed }  // LBQ-7
            if permits == 0 { return .allowed(remaining: remaining(nextStart: nextStart, pending: pending)) }  // LBQ-8
            // LBQ-7: a start past the end of the timeline is never served.
            if nextStart > UInt64(Int64.max) { return .neverAllowed }
            switch schedule.decide(tat: nextStart, permits: permits, at: UInt64(instant)) {
            case .admit(let newNextStart, let start, let room):  // LBQ-4
                state = State(nextStartNanoseconds: newNextStart, lastNanoseconds: instant)
                let remaining = newNextStart > UInt64(Int64.max) ? 0 : room  // LBQ-5
                let wait = Int64(start) - now.nanoseconds  // start ≤ Int64.max, checked above
                return wait == 0
                    ? .allowed(remaining: remaining) : .delayed(waitNanoseconds: wait, remaining: remaining)
            case .reject(let admission):  // LBQ-6
                return rejection(admittedAt: Wide(admission), now: now)
            }
        case .release:  // LBQ-8
            return .invalid(.releaseNotSupported)
        case .reset:  // LBQ-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: maximumPermits)
        case .reconfigure(let replacement):  // LBQ-10: the schedule is kept
            state.lastNanoseconds = instant
            return .allowed(remaining: replacement.remaining(nextStart: nextStart, pending: pending))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: nothing scheduled ahead
        state.nextStartNanoseconds <= UInt64(max(now.nanoseconds, state.lastNanoseconds))
    }

    /// LBQ-5: permits one more acquire could take now; none once the next start lies past the timeline.
    func remaining(nextStart: UInt64, pending: UInt64) -> Int64 {
        nextStart > UInt64(Int64.max) ? 0 : schedule.remaining(pending: pending)
    }
}
