// A registry key's limit: the rule's strategy behind a throttle gate (Spec/Registry.md, REG-4).
//
// While a key is throttled until `u`, nothing is admitted before `u`; the answer is the strategy's
// own when it refuses later than that, so the retry-after stays tight (as in a composite, COMP-5:
// the strategy's admissions only grow with time). Keeping the gate inside the strategy lets the
// key's wait queue (WQ-7) wake its waiters exactly when the throttle ends.

/// The strategy of a registry key, gated by the key's throttle.
@usableFromInline
struct KeyLimit<Inner: RateLimitStrategy>: RateLimitStrategy {
    @usableFromInline static var identifier: String { Inner.identifier }

    @usableFromInline let inner: Inner

    @inlinable init(_ inner: Inner) { self.inner = inner }

    @usableFromInline
    struct State: Hashable, Sendable {
        @usableFromInline var inner: Inner.State
        /// No permit is admitted before this instant; 0 when the key is not throttled.
        @usableFromInline var throttledUntil: Int64

        @inlinable init(inner: Inner.State, throttledUntil: Int64) {
            self.inner = inner
            self.throttledUntil = throttledUntil
        }
    }

    @inlinable var maximumPermits: Int64 { inner.maximumPermits }

    @inlinable func initialState(at now: RateLimitInstant) -> State {
        State(inner: inner.initialState(at: now), throttledUntil: 0)
    }

    @inlinable func step(_ state: inout State, _ event: RateLimitEvent<KeyLimit>, at now: RateLimitInstant)
        -> RateLimitResult
    {
        switch event {
        case .acquire(let permits):
            guard now.nanoseconds < state.throttledUntil, permits >= 0, permits <= maximumPermits else {
                return inner.step(&state.inner, .acquire(permits), at: now)  // not throttled, or bad input
            }
            if permits == 0 { return .allowed(remaining: 0) }  // nothing can be taken before the throttle ends
            // Throttled: the strategy is asked on a copy, so it records nothing.
            let gate = state.throttledUntil - now.nanoseconds
            let answer = inner.step(state.inner, .acquire(permits), at: now).result
            switch answer {
            case .allowed, .delayed: return .rejected(retryAfterNanoseconds: gate)
            case .rejected(let wait): return .rejected(retryAfterNanoseconds: max(wait, gate))
            case .rejectedUntilRelease, .neverAllowed, .invalid: return answer
            }
        case .release(let permits): return inner.step(&state.inner, .release(permits), at: now)
        case .reset: return inner.step(&state.inner, .reset, at: now)  // the throttle is the key's, not the limit's
        case .reconfigure(let replacement): return inner.step(&state.inner, .reconfigure(replacement.inner), at: now)
        }
    }

    @inlinable func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {
        state.throttledUntil <= now.nanoseconds && inner.isIdle(state.inner, at: now)
    }
}
