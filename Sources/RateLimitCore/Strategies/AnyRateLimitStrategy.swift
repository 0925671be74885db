// Any one of the strategies, as a value (Spec/CompositeLimit.md, COMP-1).
//
// Registries and composites hold limits of different strategies side by side; an enum keeps them
// values (no existential box, no allocation) and every switch exhaustive. Each case forwards to
// its strategy unchanged, so its answers are that strategy's to the nanosecond.

/// One of the strategies, chosen at run time.
public enum AnyRateLimitStrategy: RateLimitStrategy, CustomStringConvertible {
    case tokenBucket(TokenBucket)
    case intervalTokenBucket(IntervalTokenBucket)
    case gcra(GCRA)
    case payLater(PayLater)
    case warmUp(WarmUp)
    case fixedWindow(FixedWindow)
    case slidingWindowLog(SlidingWindowLog)
    case slidingWindowCounter(SlidingWindowCounter)
    case slidingWindowSegments(SlidingWindowSegments)
    case leakyBucketMeter(LeakyBucketMeter)
    case leakyBucketQueue(LeakyBucketQueue)
    case concurrency(ConcurrencyLimiter)

    public static let identifier = "any"

    /// The state of the strategy in force, in the case of the same name.
    public enum State: Hashable, Sendable {
        case tokenBucket(TokenBucket.State)
        case intervalTokenBucket(IntervalTokenBucket.State)
        case gcra(GCRA.State)
        case payLater(PayLater.State)
        case warmUp(WarmUp.State)
        case fixedWindow(FixedWindow.State)
        case slidingWindowLog(SlidingWindowLog.State)
        case slidingWindowCounter(SlidingWindowCounter.State)
        case slidingWindowSegments(SlidingWindowSegments.State)
        case leakyBucketMeter(LeakyBucketMeter.State)
        case leakyBucketQueue(LeakyBucketQueue.State)
        case concurrency(ConcurrencyLimiter.State)
    }

    /// The wrapped strategy's identifier (e.g. `gcra`).
    public var kind: String {
        switch self {
        case .tokenBucket: TokenBucket.identifier
        case .intervalTokenBucket: IntervalTokenBucket.identifier
        case .gcra: GCRA.identifier
        case .payLater: PayLater.identifier
        case .warmUp: WarmUp.identifier
        case .fixedWindow: FixedWindow.identifier
        case .slidingWindowLog: SlidingWindowLog.identifier
        case .slidingWindowCounter: SlidingWindowCounter.identifier
        case .slidingWindowSegments: SlidingWindowSegments.identifier
        case .leakyBucketMeter: LeakyBucketMeter.identifier
        case .leakyBucketQueue: LeakyBucketQueue.identifier
        case .concurrency: ConcurrencyLimiter.identifier
        }
    }

    /// The strategy as one of the strategies of this enum, or `nil` for a strategy type outside them.
    public init?<S: RateLimitStrategy>(_ strategy: S) {
        switch strategy {
        case let any as AnyRateLimitStrategy: self = any
        case let s as TokenBucket: self = .tokenBucket(s)
        case let s as IntervalTokenBucket: self = .intervalTokenBucket(s)
        case let s as GCRA: self = .gcra(s)
        case let s as PayLater: self = .payLater(s)
        case let s as WarmUp: self = .warmUp(s)
        case let s as FixedWindow: self = .fixedWindow(s)
        case let s as SlidingWindowLog: self = .slidingWindowLog(s)
        case let s as SlidingWindowCounter: self = .slidingWindowCounter(s)
        case let s as SlidingWindowSegments: self = .slidingWindowSegments(s)
        case let s as LeakyBucketMeter: self = .leakyBucketMeter(s)
        case let s as LeakyBucketQueue: self = .leakyBucketQueue(s)
        case let s as ConcurrencyLimiter: self = .concurrency(s)
        default: return nil
        }
    }

    /// The wrapped strategy as a value of type `S`, if it is one (or `self`, for `S` = `AnyRateLimitStrategy`).
    public func typed<S: RateLimitStrategy>(as type: S.Type) -> S? {
        if let same = self as? S { return same }
        switch self {
        case .tokenBucket(let s): return s as? S
        case .intervalTokenBucket(let s): return s as? S
        case .gcra(let s): return s as? S
        case .payLater(let s): return s as? S
        case .warmUp(let s): return s as? S
        case .fixedWindow(let s): return s as? S
        case .slidingWindowLog(let s): return s as? S
        case .slidingWindowCounter(let s): return s as? S
        case .slidingWindowSegments(let s): return s as? S
        case .leakyBucketMeter(let s): return s as? S
        case .leakyBucketQueue(let s): return s as? S
        case .concurrency(let s): return s as? S
        }
    }

    /// The configuration's fields, named and ordered as in the strategy's Spec table, every one written out.
    package var fields: [(name: String, value: Int64)] {
        switch self {
        case .tokenBucket(let s):
            [
                ("capacity", s.capacity), ("permitsPerPeriod", s.permitsPerPeriod),
                ("periodNanoseconds", s.periodNanoseconds),
                ("initialTokens", s.initialTokens),
            ]
        case .intervalTokenBucket(let s):
            [
                ("capacity", s.capacity), ("tokensPerInterval", s.tokensPerInterval),
                ("intervalNanoseconds", s.intervalNanoseconds),
                ("initialTokens", s.initialTokens),
            ]
        case .gcra(let s): [("burst", s.burst), ("emissionIntervalNanoseconds", s.emissionIntervalNanoseconds)]
        case .payLater(let s):
            [
                ("burst", s.burst), ("emissionIntervalNanoseconds", s.emissionIntervalNanoseconds),
                ("initialTokens", s.initialTokens),
            ]
        case .warmUp(let s):
            [
                ("burst", s.burst), ("emissionIntervalNanoseconds", s.emissionIntervalNanoseconds),
                ("warmUpPeriodNanoseconds", s.warmUpPeriodNanoseconds),
            ]
        case .fixedWindow(let s): [("limit", s.limit), ("windowNanoseconds", s.windowNanoseconds)]
        case .slidingWindowLog(let s): [("limit", s.limit), ("windowNanoseconds", s.windowNanoseconds)]
        case .slidingWindowCounter(let s): [("limit", s.limit), ("windowNanoseconds", s.windowNanoseconds)]
        case .slidingWindowSegments(let s):
            [
                ("limit", s.limit), ("segmentsPerWindow", s.segmentsPerWindow),
                ("segmentNanoseconds", s.segmentNanoseconds),
            ]
        case .leakyBucketMeter(let s):
            [
                ("capacity", s.capacity), ("leakPermitsPerPeriod", s.leakPermitsPerPeriod),
                ("periodNanoseconds", s.periodNanoseconds),
                ("initialLevel", s.initialLevel),
            ]
        case .leakyBucketQueue(let s):
            [("queueCapacity", s.queueCapacity), ("intervalNanoseconds", s.intervalNanoseconds)]
        case .concurrency(let s): [("limit", s.limit)]
        }
    }

    /// `token-bucket {"capacity":5,...}`: the kind and the fields, as the vectors write them.
    public var description: String {
        "\(kind) {" + fields.map { "\"\($0.name)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    public var maximumPermits: Int64 {
        switch self {
        case .tokenBucket(let strategy): strategy.maximumPermits
        case .intervalTokenBucket(let strategy): strategy.maximumPermits
        case .gcra(let strategy): strategy.maximumPermits
        case .payLater(let strategy): strategy.maximumPermits
        case .warmUp(let strategy): strategy.maximumPermits
        case .fixedWindow(let strategy): strategy.maximumPermits
        case .slidingWindowLog(let strategy): strategy.maximumPermits
        case .slidingWindowCounter(let strategy): strategy.maximumPermits
        case .slidingWindowSegments(let strategy): strategy.maximumPermits
        case .leakyBucketMeter(let strategy): strategy.maximumPermits
        case .leakyBucketQueue(let strategy): strategy.maximumPermits
        case .concurrency(let strategy): strategy.maximumPermits
        }
    }

    public func initialState(at now: RateLimitInstant) -> State {
        switch self {
        case .tokenBucket(let strategy): .tokenBucket(strategy.initialState(at: now))
        case .intervalTokenBucket(let strategy): .intervalTokenBucket(strategy.initialState(at: now))
        case .gcra(let strategy): .gcra(strategy.initialState(at: now))
        case .payLater(let strategy): .payLater(strategy.initialState(at: now))
        case .warmUp(let strategy): .warmUp(strategy.initialState(at: now))
        case .fixedWindow(let strategy): .fixedWindow(strategy.initialState(at: now))
        case .slidingWindowLog(let strategy): .slidingWindowLog(strategy.initialState(at: now))
        case .slidingWindowCounter(let strategy): .slidingWindowCounter(strategy.initialState(at: now))
        case .slidingWindowSegments(let strategy): .slidingWindowSegments(strategy.initialState(at: now))
        case .leakyBucketMeter(let strategy): .leakyBucketMeter(strategy.initialState(at: now))
        case .leakyBucketQueue(let strategy): .leakyBucketQueue(strategy.initialState(at: now))
        case .concurrency(let strategy): .concurrency(strategy.initialState(at: now))
        }
    }

    /// Forwards to the wrapped strategy (COMP-1). A state of another strategy, or a reconfigure to
    /// another strategy, is answered `invalid` and changes nothing.
    public func step(_ state: inout State, _ event: RateLimitEvent<Self>, at now: RateLimitInstant) -> RateLimitResult {
        switch self {
        case .tokenBucket(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .tokenBucket(let inner) = $0 { inner } else { nil } },
                State.tokenBucket,
                { if case .tokenBucket(let same) = $0 { same } else { nil } })
        case .intervalTokenBucket(let strategy):
            Self.forward(
                strategy, &state, event, at: now,
                { if case .intervalTokenBucket(let inner) = $0 { inner } else { nil } }, State.intervalTokenBucket,
                { if case .intervalTokenBucket(let same) = $0 { same } else { nil } })
        case .gcra(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .gcra(let inner) = $0 { inner } else { nil } }, State.gcra,
                { if case .gcra(let same) = $0 { same } else { nil } })
        case .payLater(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .payLater(let inner) = $0 { inner } else { nil } },
                State.payLater,
                { if case .payLater(let same) = $0 { same } else { nil } })
        case .warmUp(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .warmUp(let inner) = $0 { inner } else { nil } },
                State.warmUp,
                { if case .warmUp(let same) = $0 { same } else { nil } })
        case .fixedWindow(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .fixedWindow(let inner) = $0 { inner } else { nil } },
                State.fixedWindow,
                { if case .fixedWindow(let same) = $0 { same } else { nil } })
        case .slidingWindowLog(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .slidingWindowLog(let inner) = $0 { inner } else { nil } },
                State.slidingWindowLog,
                { if case .slidingWindowLog(let same) = $0 { same } else { nil } })
        case .slidingWindowCounter(let strategy):
            Self.forward(
                strategy, &state, event, at: now,
                { if case .slidingWindowCounter(let inner) = $0 { inner } else { nil } }, State.slidingWindowCounter,
                { if case .slidingWindowCounter(let same) = $0 { same } else { nil } })
        case .slidingWindowSegments(let strategy):
            Self.forward(
                strategy, &state, event, at: now,
                { if case .slidingWindowSegments(let inner) = $0 { inner } else { nil } }, State.slidingWindowSegments,
                { if case .slidingWindowSegments(let same) = $0 { same } else { nil } })
        case .leakyBucketMeter(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .leakyBucketMeter(let inner) = $0 { inner } else { nil } },
                State.leakyBucketMeter,
                { if case .leakyBucketMeter(let same) = $0 { same } else { nil } })
        case .leakyBucketQueue(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .leakyBucketQueue(let inner) = $0 { inner } else { nil } },
                State.leakyBucketQueue,
                { if case .leakyBucketQueue(let same) = $0 { same } else { nil } })
        case .concurrency(let strategy):
            Self.forward(
                strategy, &state, event, at: now, { if case .concurrency(let inner) = $0 { inner } else { nil } },
                State.concurrency,
                { if case .concurrency(let same) = $0 { same } else { nil } })
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {
        switch (self, state) {
        case (.tokenBucket(let strategy), .tokenBucket(let inner)): strategy.isIdle(inner, at: now)
        case (.intervalTokenBucket(let strategy), .intervalTokenBucket(let inner)): strategy.isIdle(inner, at: now)
        case (.gcra(let strategy), .gcra(let inner)): strategy.isIdle(inner, at: now)
        case (.payLater(let strategy), .payLater(let inner)): strategy.isIdle(inner, at: now)
        case (.warmUp(let strategy), .warmUp(let inner)): strategy.isIdle(inner, at: now)
        case (.fixedWindow(let strategy), .fixedWindow(let inner)): strategy.isIdle(inner, at: now)
        case (.slidingWindowLog(let strategy), .slidingWindowLog(let inner)): strategy.isIdle(inner, at: now)
        case (.slidingWindowCounter(let strategy), .slidingWindowCounter(let inner)): strategy.isIdle(inner, at: now)
        case (.slidingWindowSegments(let strategy), .slidingWindowSegments(let inner)): strategy.isIdle(inner, at: now)
        case (.leakyBucketMeter(let strategy), .leakyBucketMeter(let inner)): strategy.isIdle(inner, at: now)
        case (.leakyBucketQueue(let strategy), .leakyBucketQueue(let inner)): strategy.isIdle(inner, at: now)
        case (.concurrency(let strategy), .concurrency(let inner)): strategy.isIdle(inner, at: now)
        // A foreign state is never forgotten.
        case (.tokenBucket, _), (.intervalTokenBucket, _), (.gcra, _), (.payLater, _), (.warmUp, _), (.fixedWindow, _),
            (.slidingWindowLog, _),
            (.slidingWindowCounter, _), (.slidingWindowSegments, _), (.leakyBucketMeter, _), (.leakyBucketQueue, _),
            (.concurrency, _):
            false
        }
    }

    /// Applies `event` to the wrapped strategy's state, taken out of `state` and put back; a
    /// reconfigure must name the same strategy.
    private static func forward<S: RateLimitStrategy>(
        _ strategy: S, _ state: inout State, _ event: RateLimitEvent<Self>, at now: RateLimitInstant,
        _ extract: (State) -> S.State?, _ wrap: (S.State) -> State, _ unwrap: (AnyRateLimitStrategy) -> S?
    ) -> RateLimitResult {
        guard var inner = extract(state) else { return foreignState }
        state = vacated  // `inner` now holds the only reference to a log's storage: appending does not copy it
        defer { state = wrap(inner) }
        switch event {
        case .acquire(let permits): return strategy.step(&inner, .acquire(permits), at: now)
        case .release(let permits): return strategy.step(&inner, .release(permits), at: now)
        case .reset: return strategy.step(&inner, .reset, at: now)
        case .reconfigure(let replacement):
            guard let same = unwrap(replacement) else {
                return .invalid(
                    RateLimitInputError(
                        field: "configuration", value: nil, problem: .notSupported,
                        reason: "a reconfigure keeps the strategy: \(S.identifier) cannot become \(replacement.kind)"))
            }
            return strategy.step(&inner, .reconfigure(same), at: now)
        }
    }

    /// A placeholder held while the real state is mutated, so that the state is not shared.
    private static let vacated = State.concurrency(ConcurrencyLimiter.State(inFlight: 0))

    private static let foreignState = RateLimitResult.invalid(
        RateLimitInputError(
            field: "state", value: nil, problem: .notSupported, reason: "the state belongs to another strategy"))
}
