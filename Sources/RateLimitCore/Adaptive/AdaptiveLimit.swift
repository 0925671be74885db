// Adaptive limits (Spec/AdaptiveLimits.md, clauses ADAPT-1 ... ADAPT-16): what the two machines
// share. A machine learns a limit from the server's responses and answers the limit in force; a
// fixed strategy then enforces it (ADAPT-15). Like the strategies, a machine is a pure value:
// `step(state, feedback, now)` reads no clock and traps on no input.

/// A machine that learns a limit from the server's responses (Spec `ADAPT-1`): the
/// ``AdaptiveRate`` and the ``AdaptiveConcurrency``.
public protocol AdaptiveLimit: Hashable, Sendable {
    /// Everything the machine remembers between events.
    associatedtype State: Hashable, Sendable
    /// The limit the machine answers: a rate and a burst, or a concurrency.
    associatedtype Limit: Hashable, Sendable

    /// The identifier used by the Spec, the vectors and the JSON protocol (`adaptive-rate`).
    static var identifier: String { get }

    /// The state of a new machine created at `now`.
    func initialState(at now: RateLimitInstant) -> State

    /// Applies `feedback` at `now`, updating `state`, and returns the limit in force.
    func step(_ state: inout State, _ feedback: AdaptiveFeedback, at now: RateLimitInstant) -> AdaptiveAnswer<Limit>

    /// The limit in force in `state`.
    func limit(of state: State) -> Limit
}

extension AdaptiveLimit {
    /// The pure form of ``step(_:_:at:)``: the state after the feedback and the answer.
    public func step(
        _ state: State, _ feedback: AdaptiveFeedback, at now: RateLimitInstant
    ) -> (state: State, answer: AdaptiveAnswer<Limit>) {
        var next = state
        let answer = step(&next, feedback, at: now)
        return (next, answer)
    }
}

/// What the server said about one request, or a reset (Spec `ADAPT-1`).
public enum AdaptiveFeedback: Hashable, Sendable {
    /// A response came back: its status, the nanoseconds from sending to receiving it, the
    /// requests in flight to the endpoint when it was sent (itself included), and the rate the
    /// server states in its fields, if it states one.
    case response(status: Int64, latencyNanoseconds: Int64, inFlight: Int64, stated: StatedRate? = nil)
    /// No response came: a network failure or a timeout.
    case failure
    /// Forget everything learned.
    case reset
}

/// A rate a server states: `permits` per `windowNanoseconds` (Spec `ADAPT-7`, HTTP-13).
public struct StatedRate: Hashable, Sendable {
    /// Permits the server allows per window.
    public var permits: Int64
    /// The window, in nanoseconds.
    public var windowNanoseconds: Int64

    /// A stated rate as read; ``AdaptiveLimit/step(_:_:at:)`` checks it (`ADAPT-1`).
    public init(permits: Int64, windowNanoseconds: Int64) {
        self.permits = permits
        self.windowNanoseconds = windowNanoseconds
    }
}

/// The answer to feedback: the limit in force after it, and what changed (Spec `ADAPT-1`).
public enum AdaptiveAnswer<Limit: Hashable & Sendable>: Hashable, Sendable {
    /// The limit in force, and what the feedback did to it.
    case limit(Limit, AdaptiveChange)
    /// The feedback is malformed; the state is unchanged.
    indirect case invalid(RateLimitInputError)

    /// The limit of a ``limit(_:_:)`` answer, `nil` for an invalid one.
    public var limit: Limit? {
        switch self {
        case .limit(let limit, _): limit
        case .invalid: nil
        }
    }
}

/// What one feedback did to the learned limit (Spec `ADAPT-1`).
public enum AdaptiveChange: String, Hashable, Sendable {
    /// Nothing the limit shows changed.
    case unchanged
    /// The limit went up (a round served, or a short queue).
    case increased
    /// The limit went down (a rejection, a drop, or a growing queue).
    case decreased
    /// A rate the server states was taken.
    case adopted
    /// Everything learned was forgotten.
    case reset
}

/// The class of a valid response (Spec `ADAPT-1`).
@usableFromInline
enum ResponseClass {
    case rejection, served, serverError, none

    @usableFromInline
    init(status: Int64) {
        switch status {
        case 429, 503: self = .rejection
        case 100...499: self = .served
        case 500...599: self = .serverError
        default: self = .none
        }
    }
}

extension AdaptiveFeedback {
    /// The first thing wrong with a response, in the order of `ADAPT-1`, or `nil`.
    @usableFromInline
    static func check(status: Int64, latency: Int64, inFlight: Int64, stated: StatedRate?) -> RateLimitInputError? {
        if status < 0 { return RateLimitInputError(field: "status", value: status, problem: .mustNotBeNegative) }
        if status > 999 {
            return RateLimitInputError(
                field: "status", value: status, problem: .exceedsMaximum(999), reason: "a status has three digits")
        }
        if latency < 0 {
            return RateLimitInputError(field: "latencyNanoseconds", value: latency, problem: .mustNotBeNegative)
        }
        if inFlight < 0 { return RateLimitInputError(field: "inFlight", value: inFlight, problem: .mustNotBeNegative) }
        if let stated {
            if stated.permits < 0 {
                return RateLimitInputError(field: "stated.permits", value: stated.permits, problem: .mustNotBeNegative)
            }
            if stated.windowNanoseconds < 1 {
                return RateLimitInputError(
                    field: "stated.windowNanoseconds", value: stated.windowNanoseconds, problem: .mustBePositive)
            }
        }
        return nil
    }
}

extension Int64 {
    /// `self + other`, saturated at `Int64.max` (both non-negative).
    @usableFromInline
    func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }

    /// `⌊self·numerator / denominator⌋` at full width, saturated at `Int64.max` (all non-negative,
    /// `denominator ≥ 1`).
    @usableFromInline
    func multipliedDividedRoundingDown(_ numerator: Int64, _ denominator: Int64) -> Int64 {
        Wide.product(self, numerator).dividedRoundingDown(by: UInt64(denominator)).int64 ?? .max
    }

    /// `⌈self·numerator / denominator⌉` at full width, saturated at `Int64.max` (all non-negative,
    /// `denominator ≥ 1`).
    @usableFromInline
    func multipliedDividedRoundingUp(_ numerator: Int64, _ denominator: Int64) -> Int64 {
        Wide.product(self, numerator).dividedRoundingUp(by: UInt64(denominator)).int64 ?? .max
    }
}

extension RateLimitInputError {
    /// CORE-3 for the bounds of `ADAPT-2` and `ADAPT-10`, in their order: `maximum<name>` at least 1,
    /// `initial<name>` within 1 … maximum, `minimum<name>` within 1 … initial.
    static func checkBounds(_ maximum: Int64, _ initial: Int64, _ minimum: Int64, of name: String)
        throws(RateLimitInputError)
    {
        try checkPositive(maximum, "maximum\(name)")
        try checkPositive(initial, "initial\(name)")
        try checkAtMost(initial, maximum, "initial\(name)", "at most maximum\(name)")
        try checkPositive(minimum, "minimum\(name)")
        try checkAtMost(minimum, initial, "minimum\(name)", "at most initial\(name)")
    }

    /// CORE-3 for a percentage of `ADAPT-2` and `ADAPT-10`: 1 … 99.
    static func checkPercent(_ value: Int64, _ field: String) throws(RateLimitInputError) {
        try checkPositive(value, field)
        try checkAtMost(value, 99, field, "a decrease keeps at least 1% and takes at least 1%")
    }
}
