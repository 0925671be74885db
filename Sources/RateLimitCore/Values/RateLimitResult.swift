/// The answer to one event: what the caller (or the adapter executing the step) must do next.
///
/// Every span is whole nanoseconds, measured from the `now` the event carried (Spec `CORE-6`).
public enum RateLimitResult: Hashable, Sendable {
    /// Go ahead now. `remaining` is the largest acquire that would also be allowed at this instant
    /// (after this event). Also the answer to an applied release, reset or reconfigure.
    case allowed(remaining: Int64)
    /// Admitted into a schedule (leaky bucket queue): go ahead after `waitNanoseconds`; `remaining`
    /// permits could still be admitted (at once or scheduled) at this instant.
    case delayed(waitNanoseconds: Int64, remaining: Int64)
    /// Not admitted, nothing consumed. With no other event the same acquire is admitted at
    /// `now + retryAfterNanoseconds` and still rejected one nanosecond earlier.
    case rejected(retryAfterNanoseconds: Int64)
    /// Not admitted, nothing consumed; time alone does not help (concurrency limiter). It can be
    /// admitted once `shortfall` more permits have been released.
    case rejectedUntilRelease(shortfall: Int64)
    /// Not admitted and no instant on the timeline admits it: more permits than the strategy's
    /// ``RateLimitStrategy/maximumPermits``, or an admission instant past ``RateLimitInstant/end``.
    /// Do not retry the same acquire.
    case neverAllowed
    /// The event is malformed; the state is unchanged.
    // `indirect`: the error (two strings) lives in a box, so the result is 17 bytes instead of 57
    // and travels in registers. Returned through memory it cost the lock adapter a store-forwarding
    // stall per decision (perf: half the samples of the wait queue's admission).
    indirect case invalid(RateLimitInputError)

    /// True for ``allowed(remaining:)`` and ``delayed(waitNanoseconds:remaining:)``: the permits were taken.
    @inlinable
    public var isAdmitted: Bool {
        switch self {
        case .allowed, .delayed: true
        case .rejected, .rejectedUntilRelease, .neverAllowed, .invalid: false
        }
    }

    /// The remaining quota carried by an admitted result, `nil` otherwise.
    @inlinable
    public var remaining: Int64? {
        switch self {
        case .allowed(let remaining), .delayed(_, let remaining): remaining
        case .rejected, .rejectedUntilRelease, .neverAllowed, .invalid: nil
        }
    }

    /// The retry-after of a ``rejected(retryAfterNanoseconds:)`` result as a `Duration`, `nil` otherwise.
    public var retryAfter: Duration? {
        if case .rejected(let nanoseconds) = self { return .nanoseconds(nanoseconds) }
        return nil
    }
}

/// Something that happens to a limiter at an instant.
public enum RateLimitEvent<Strategy: RateLimitStrategy>: Hashable, Sendable {
    /// Take `permits` (weighted). Zero asks for the remaining quota without taking anything.
    case acquire(Int64)
    /// Give back `permits` held (concurrency limiter only).
    case release(Int64)
    /// Forget all history: the state becomes that of a new limiter created at this instant.
    case reset
    /// Replace the configuration; the Spec of each strategy says how its state carries over.
    case reconfigure(Strategy)
}
