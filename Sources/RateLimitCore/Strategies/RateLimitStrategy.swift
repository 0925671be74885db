/// A rate-limiting strategy: a validated configuration that knows how to step its state.
///
/// The decision is a pure function of the configuration, the state, the event and the instant:
/// no clock reads, no locks, no shared memory. Adapters and the conformance suite are generic over
/// this protocol; a strategy's Spec file (`Spec/<Name>.md`) defines its `step` clause by clause.
public protocol RateLimitStrategy: Hashable, Sendable {
    /// Everything the strategy remembers between events; a few integers for all but the log.
    associatedtype State: Hashable, Sendable

    /// The identifier used by the Spec, the vectors and the JSON protocol (e.g. `token-bucket`).
    static var identifier: String { get }

    /// The largest number of permits that a single acquire can ever be granted under this
    /// configuration; a larger acquire is ``RateLimitResult/neverAllowed``.
    var maximumPermits: Int64 { get }

    /// The state of a new limiter created at `now`.
    func initialState(at now: RateLimitInstant) -> State

    /// Applies `event` at `now`, updating `state`, and returns the answer.
    ///
    /// On ``RateLimitEvent/reconfigure(_:)`` the updated state belongs to the new configuration,
    /// which the caller holds from then on (``RateLimiter`` does this).
    func step(_ state: inout State, _ event: RateLimitEvent<Self>, at now: RateLimitInstant) -> RateLimitResult

    /// True when `state`, at `now`, is as good as new: it answers every event at every instant
    /// from `e = max(now, last)` on exactly as `initialState(at: e)` would (a full bucket, an
    /// empty window).
    /// A registry may then forget it without changing any decision (Spec `CORE-15`).
    func isIdle(_ state: State, at now: RateLimitInstant) -> Bool
}

extension RateLimitStrategy {
    /// The pure form of ``step(_:_:at:)-(State,_,_)``: the state after the event and the answer.
    @inlinable
    public func step(
        _ state: State, _ event: RateLimitEvent<Self>, at now: RateLimitInstant
    ) -> (state: State, result: RateLimitResult) {
        var next = state
        let result = step(&next, event, at: now)
        return (next, result)
    }
}

/// A configuration and its state: the value a single-threaded caller or an adapter holds.
public struct RateLimiter<Strategy: RateLimitStrategy>: Hashable, Sendable {
    /// The configuration in force.
    public var strategy: Strategy { storedStrategy }
    /// The state under that configuration.
    public var state: Strategy.State { storedState }

    // The state first: with the wait queue's `servedUpTo` before it, what a request writes lies in
    // the first bytes of the machine, on the lock word's cache line (Performance.md, "Contention").
    @usableFromInline var storedState: Strategy.State
    @usableFromInline var storedStrategy: Strategy

    /// A new limiter created at `now`.
    @inlinable
    public init(_ strategy: Strategy, at now: RateLimitInstant) {
        self.storedStrategy = strategy
        self.storedState = strategy.initialState(at: now)
    }

    /// A limiter in a given state (a registry's key, restored from its compact storage).
    @inlinable
    init(_ strategy: Strategy, state: Strategy.State) {
        self.storedStrategy = strategy
        self.storedState = state
    }

    /// Applies `event` at `now`; on a reconfigure, the new configuration takes over.
    @inlinable
    public mutating func step(_ event: RateLimitEvent<Strategy>, at now: RateLimitInstant) -> RateLimitResult {
        let result = storedStrategy.step(&storedState, event, at: now)
        if case .reconfigure(let replacement) = event, case .allowed = result {
            storedStrategy = replacement
        }
        return result
    }

    /// Changes the state outside the strategy's events (a registry's throttle, REG-4).
    @usableFromInline
    mutating func updateState(_ change: (inout Strategy.State) -> Void) {
        change(&storedState)
    }

    /// Takes `permits` at `now` if the strategy allows it.
    // Always inlined: the hot path of every adapter (see `TokenBucket.step`).
    @inlinable @inline(__always)
    public mutating func acquire(_ permits: Int64 = 1, at now: RateLimitInstant) -> RateLimitResult {
        storedStrategy.step(&storedState, .acquire(permits), at: now)
    }

    /// The answer an acquire of `permits` would get at `now`, without taking anything: whether
    /// they are available and, when the strategy refuses, the exact wait until they are (CORE-6).
    @inlinable
    public func availability(of permits: Int64 = 1, at now: RateLimitInstant) -> RateLimitResult {
        var copy = storedState
        return storedStrategy.step(&copy, .acquire(permits), at: now)
    }

    /// The quota an acquire could take at `now`, without taking anything (an acquire of 0).
    @inlinable
    public func remaining(at now: RateLimitInstant) -> Int64 {
        var copy = storedState
        return storedStrategy.step(&copy, .acquire(0), at: now).remaining ?? 0
    }

    /// Gives back `permits` at `now`: `step(.release(permits), at: now)`. Only a concurrency
    /// limiter holds permits; every other strategy answers `invalid` (CORE-11).
    @inlinable
    public mutating func release(_ permits: Int64, at now: RateLimitInstant) -> RateLimitResult {
        step(.release(permits), at: now)
    }

    /// Returns to the state of a limiter created at `now` (CORE-12): `step(.reset, at: now)`.
    @inlinable
    public mutating func reset(at now: RateLimitInstant) -> RateLimitResult { step(.reset, at: now) }

    /// Replaces the configuration at `now`, carrying the state over as the strategy's clause 10
    /// says (CORE-13): `step(.reconfigure(strategy), at: now)`. A configuration the Spec refuses
    /// is answered `invalid` and changes nothing.
    @inlinable
    public mutating func reconfigure(to strategy: Strategy, at now: RateLimitInstant) -> RateLimitResult {
        step(.reconfigure(strategy), at: now)
    }
}
