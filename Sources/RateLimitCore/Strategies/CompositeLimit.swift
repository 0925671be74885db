// Several limits on one key (Spec/CompositeLimit.md, clauses COMP-2 ... COMP-8).
//
// "10 per second and 1,000 per hour": a request passes only if every limit admits it, and then
// every limit records it; when one refuses, none records anything, and the answer is the one that
// keeps the caller waiting longest. Each limit is asked on a copy of its state first, so a refusal
// leaves every state as it was (CORE-8).

/// Limits that must all admit a request: it is taken from all of them or from none.
public struct CompositeLimit: RateLimitStrategy {
    public static let identifier = "composite"

    /// The limits, in the order given; answers do not depend on the order.
    public let limits: [AnyRateLimitStrategy]

    /// A validated composite (COMP-2).
    ///
    /// - Throws: ``RateLimitInputError`` naming `limits` when there are none, or `limits[i]` when
    ///   limit `i` is a leaky bucket queue (its scheduled starts cannot be shared with other limits).
    public init(_ limits: [AnyRateLimitStrategy]) throws(RateLimitInputError) {
        guard !limits.isEmpty else {
            throw RateLimitInputError(
                field: "limits", value: 0, problem: .mustBePositive, reason: "a composite needs at least one limit")
        }
        for (index, limit) in limits.enumerated() {
            if case .leakyBucketQueue = limit {
                throw RateLimitInputError(
                    field: "limits[\(index)]", value: nil, problem: .notSupported,
                    reason:
                        "a leaky bucket queue schedules starts later; other limits would count the request before it starts"
                )
            }
        }
        self.limits = limits
    }

    /// A validated composite of the given limits (COMP-2).
    public init(_ limits: AnyRateLimitStrategy...) throws(RateLimitInputError) {
        try self.init(limits)
    }

    /// Each limit's state, in the order of ``limits``.
    public struct State: Hashable, Sendable {
        public internal(set) var limits: [AnyRateLimitStrategy.State]
    }

    /// The smallest of the limits' maximums: a larger acquire is refused by one of them forever.
    public var maximumPermits: Int64 { limits.map(\.maximumPermits).min() ?? 0 }

    public func initialState(at now: RateLimitInstant) -> State {
        State(limits: limits.map { $0.initialState(at: now) })
    }

    public func step(_ state: inout State, _ event: RateLimitEvent<CompositeLimit>, at now: RateLimitInstant)
        -> RateLimitResult
    {
        guard state.limits.count == limits.count else {
            return .invalid(
                RateLimitInputError(
                    field: "state", value: Int64(state.limits.count), problem: .notSupported,
                    reason: "the state has a different number of limits than the composite"))
        }
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > maximumPermits { return .neverAllowed }  // COMP-6
            return applyToAll(&state, at: now) { _, _ in .acquire(permits) }  // COMP-3, COMP-4
        case .release(let permits):  // COMP-7: to the limits that hold permits
            guard limits.contains(where: { if case .concurrency = $0 { true } else { false } }) else {
                return .invalid(.releaseNotSupported)
            }
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            return applyToAll(&state, at: now) { limit, _ in
                if case .concurrency = limit { .release(permits) } else { .acquire(0) }
            }
        case .reset:  // COMP-7
            return applyToAll(&state, at: now) { _, _ in .reset }
        case .reconfigure(let replacement):  // COMP-8: limit by limit
            guard replacement.limits.count == limits.count else {
                return .invalid(
                    RateLimitInputError(
                        field: "limits", value: Int64(replacement.limits.count), problem: .notSupported,
                        reason:
                            "a composite is reconfigured limit by limit: give \(limits.count) limits of the same strategies, in the same order"
                    ))
            }
            if let index = limits.indices.first(where: { limits[$0].kind != replacement.limits[$0].kind }) {
                return .invalid(
                    RateLimitInputError(
                        field: "limits[\(index)]", value: nil, problem: .notSupported,
                        reason:
                            "a reconfigure keeps the strategy: \(limits[index].kind) cannot become \(replacement.limits[index].kind)"
                    ))
            }
            return applyToAll(&state, at: now) { _, index in .reconfigure(replacement.limits[index]) }
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {
        state.limits.count == limits.count && zip(limits, state.limits).allSatisfy { $0.isIdle($1, at: now) }
    }

    /// Asks every limit on a copy of its state; keeps all the copies only when every limit
    /// admitted (or applied) its event, and answers as COMP-4 and COMP-5 say.
    private func applyToAll(
        _ state: inout State, at now: RateLimitInstant,
        _ event: (AnyRateLimitStrategy, Int) -> RateLimitEvent<AnyRateLimitStrategy>
    ) -> RateLimitResult {
        var next = state.limits
        var remaining = Int64.max
        var invalid: RateLimitInputError?
        var never = false
        var shortfall: Int64 = 0
        var retryAfter: Int64 = 0
        for (index, limit) in limits.enumerated() {
            switch limit.step(&next[index], event(limit, index), at: now) {
            case .allowed(let left), .delayed(_, let left): remaining = min(remaining, left)
            case .invalid(let error): invalid = invalid ?? error
            case .neverAllowed: never = true
            case .rejectedUntilRelease(let missing): shortfall = max(shortfall, missing)
            case .rejected(let wait): retryAfter = max(retryAfter, wait)
            }
        }
        // COMP-5: the refusal that keeps the caller waiting longest decides the answer.
        if let invalid { return .invalid(invalid) }
        if never { return .neverAllowed }
        if shortfall > 0 { return .rejectedUntilRelease(shortfall: shortfall) }
        if retryAfter > 0 { return .rejected(retryAfterNanoseconds: retryAfter) }
        state.limits = next  // acquire(0) changed no copy (CORE-9)
        return .allowed(remaining: remaining)
    }
}
