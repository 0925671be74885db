import RateLimitConformance
import Testing

@testable import RateLimitCore

/// A strategy the property tests can draw configurations for (from the conformance library's
/// `TraceGenerator`), with the Spec's evaluation-instant rule for it.
protocol RandomizedStrategy: RateLimitStrategy {
    /// CORE-10: the instant an event at `now` is evaluated at, as the Spec defines it per strategy.
    func evaluationInstant(_ state: State, now: Int64) -> Int64
    /// CORE-10: `result`, given to `event` at an instant, as seen from `shift` nanoseconds earlier.
    func measured(_ result: RateLimitResult, of event: RateLimitEvent<Self>, nanosecondsEarlier shift: Int64)
        -> RateLimitResult
}

extension RandomizedStrategy {
    /// A configuration from `rng`: mostly small values (busy, edge-rich traces), sometimes extreme ones.
    static func random(using rng: inout SeededGenerator) -> Self {
        guard let configuration = TraceGenerator.configuration(identifier, using: &rng)?.typed(as: Self.self) else {
            preconditionFailure("TraceGenerator draws every strategy of the core, including \(identifier)")
        }
        return configuration
    }

    /// The span instants are drawn around: the time per permit, the window or the interval.
    var characteristicNanoseconds: Int64 {
        AnyRateLimitStrategy(self).map(TraceGenerator.characteristicNanoseconds) ?? 1
    }

    func measured(_ result: RateLimitResult, of event: RateLimitEvent<Self>, nanosecondsEarlier shift: Int64)
        -> RateLimitResult
    {
        defaultMeasured(result, nanosecondsEarlier: shift)
    }

    /// Spans grow by `shift`; everything else is the same answer.
    func defaultMeasured(_ result: RateLimitResult, nanosecondsEarlier shift: Int64) -> RateLimitResult {
        switch result {
        case .rejected(let wait): .rejected(retryAfterNanoseconds: wait + shift)
        case .delayed(let wait, let remaining): .delayed(waitNanoseconds: wait + shift, remaining: remaining)
        case .allowed, .rejectedUntilRelease, .neverAllowed, .invalid: result
        }
    }
}

extension TokenBucket: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension IntervalTokenBucket: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension GCRA: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension PayLater: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension WarmUp: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension LeakyBucketQueue: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
    func measured(_ result: RateLimitResult, of event: RateLimitEvent<Self>, nanosecondsEarlier shift: Int64)
        -> RateLimitResult
    {
        // LBQ-3: a request admitted at the state's instant starts there, so seen from an earlier now it waits.
        if case .acquire(let permits) = event, permits > 0, case .allowed(let remaining) = result, shift > 0 {
            return .delayed(waitNanoseconds: shift, remaining: remaining)
        }
        return defaultMeasured(result, nanosecondsEarlier: shift)
    }
}

extension FixedWindow: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension SlidingWindowLog: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension SlidingWindowCounter: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension SlidingWindowSegments: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension LeakyBucketMeter: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension ConcurrencyLimiter: RandomizedStrategy {
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { now }
}

/// One step of a random trace, with everything a property needs to judge it.
struct TraceStep<S: RateLimitStrategy> {
    let strategy: S
    let before: S.State
    let event: RateLimitEvent<S>
    let now: Int64
    let after: S.State
    let result: RateLimitResult
    let replay: String
    let index: Int

    /// The configuration in force after the step.
    var strategyAfter: S {
        if case .reconfigure(let replacement) = event { return replacement }
        return strategy
    }

    /// Applies `event` at `instant` to the state before this step (a "what if" probe).
    func probe(_ event: RateLimitEvent<S>, at instant: Int64) -> (state: S.State, result: RateLimitResult) {
        strategy.step(before, event, at: t(instant))
    }

    /// Describes the step for a failure message.
    var description: String { "step \(index) at \(now)ns: \(event) -> \(result) (config \(strategy))" }
}

/// Runs `traces` random traces of `steps` events for `S` and calls `check` on every step; a check
/// returns false to end its trace after the first failure (later steps would only repeat it).
func forEachRandomStep<S: RandomizedStrategy>(
    _ type: S.Type, _ name: String, traces: Int = 40, steps: Int = 300,
    _ check: (TraceStep<S>) -> Bool
) {
    for trace in 0..<traces {
        var rng = PropertySeed.generator("\(name) \(S.identifier)", trace: trace)
        let replay = PropertySeed.replay(name, trace: trace)
        var strategy = S.random(using: &rng)
        var now = TraceGenerator.firstInstant(using: &rng)
        var state = strategy.initialState(at: t(now))
        var retryAfter: Int64?
        for index in 0..<steps {
            guard let configuration = AnyRateLimitStrategy(strategy),
                let event = TraceGenerator.event(for: configuration, using: &rng).typed(as: S.self)
            else {
                preconditionFailure("\(S.identifier) events convert both ways")
            }
            now = TraceGenerator.nextInstant(
                after: now, span: strategy.characteristicNanoseconds, retryAfter: retryAfter, using: &rng)
            let (after, result) = strategy.step(state, event, at: t(now))
            let step = TraceStep(
                strategy: strategy, before: state, event: event, now: now, after: after, result: result,
                replay: replay, index: index)
            guard check(step) else { break }
            if case .rejected(let wait) = result { retryAfter = wait }
            state = after
            strategy = step.strategyAfter
        }
    }
}

/// Everything the generic property tests run over: one entry per strategy.
struct StrategyKind: Sendable, CustomTestStringConvertible {
    let identifier: String
    let dispatch: @Sendable (any StrategyProperty) -> Void

    init<S: RandomizedStrategy>(_ type: S.Type) {
        identifier = S.identifier
        dispatch = { property in property.check(type) }
    }

    var testDescription: String { identifier }

    static let all: [StrategyKind] = [
        StrategyKind(TokenBucket.self), StrategyKind(IntervalTokenBucket.self), StrategyKind(GCRA.self),
        StrategyKind(PayLater.self), StrategyKind(WarmUp.self), StrategyKind(FixedWindow.self),
        StrategyKind(SlidingWindowLog.self),
        StrategyKind(SlidingWindowCounter.self), StrategyKind(SlidingWindowSegments.self),
        StrategyKind(LeakyBucketMeter.self), StrategyKind(LeakyBucketQueue.self), StrategyKind(ConcurrencyLimiter.self),
    ]
}

/// A property checked the same way for every strategy.
protocol StrategyProperty {
    func check<S: RandomizedStrategy>(_ type: S.Type)
}
