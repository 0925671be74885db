@testable import RateLimitCore
import Testing

/// A strategy the property tests can draw configurations for.
protocol RandomizedStrategy: RateLimitStrategy {
    /// A configuration from `rng`: mostly small values (busy, edge-rich traces), sometimes extreme ones.
    static func random(using rng: inout SeededGenerator) -> Self
    /// The span instants are drawn around: the time per permit, the window or the interval.
    var characteristicNanoseconds: Int64 { get }
    /// CORE-10: the instant an event at `now` is evaluated at, as the Spec defines it per strategy.
    func evaluationInstant(_ state: State, now: Int64) -> Int64
    /// CORE-10: `result`, given to `event` at an instant, as seen from `shift` nanoseconds earlier.
    func measured(_ result: RateLimitResult, of event: RateLimitEvent<Self>, nanosecondsEarlier shift: Int64) -> RateLimitResult
    /// CORE-10: false when the state cannot hold its latest instant (GCRA): answers at an earlier
    /// now then report what the state grants at that now, which is never more than at the later instant.
    var answersAsOfEvaluationInstant: Bool { get }
}

extension RandomizedStrategy {
    func measured(_ result: RateLimitResult, of event: RateLimitEvent<Self>, nanosecondsEarlier shift: Int64) -> RateLimitResult {
        defaultMeasured(result, nanosecondsEarlier: shift)
    }

    var answersAsOfEvaluationInstant: Bool { true }

    /// Spans grow by `shift`; everything else is the same answer.
    func defaultMeasured(_ result: RateLimitResult, nanosecondsEarlier shift: Int64) -> RateLimitResult {
        switch result {
        case .rejected(let wait): .rejected(retryAfterNanoseconds: wait + shift)
        case .delayed(let wait, let remaining): .delayed(waitNanoseconds: wait + shift, remaining: remaining)
        case .allowed, .rejectedUntilRelease, .neverAllowed, .invalid: result
        }
    }
}

/// Draws one of `choices` until the configuration validates.
func draw<S>(_ rng: inout SeededGenerator, _ make: (inout SeededGenerator) throws(RateLimitInputError) -> S) -> S {
    while true {
        if let strategy = try? make(&rng) { return strategy }
    }
}

/// Large values that stress the integer limits.
let extremeValues: [Int64] = [
    1, 2, 7, 1_000, 1_000_000_007, 31_557_600_000_000_000 /* a year in ns */, Int64.max / 3, Int64.max - 1, Int64.max,
]

extension SeededGenerator {
    /// A count: usually small, sometimes extreme.
    mutating func count(small: ClosedRange<Int64> = 1...6) -> Int64 {
        chance(85) ? int(in: small) : pick(extremeValues)
    }

    /// A span in nanoseconds: usually small, sometimes extreme.
    mutating func span(small: ClosedRange<Int64> = 1...40) -> Int64 {
        chance(85) ? int(in: small) : pick(extremeValues)
    }
}

extension TokenBucket: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> TokenBucket {
        draw(&rng) { rng throws(RateLimitInputError) in
            let capacity = rng.count()
            return try TokenBucket(
                capacity: capacity, permitsPerPeriod: rng.count(small: 1...3), periodNanoseconds: rng.span(),
                initialTokens: rng.chance(50) ? nil : rng.int(in: 0...capacity))
        }
    }
    var characteristicNanoseconds: Int64 { max(1, periodNanoseconds / permitsPerPeriod) }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension IntervalTokenBucket: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> IntervalTokenBucket {
        draw(&rng) { rng throws(RateLimitInputError) in
            let capacity = rng.count()
            return try IntervalTokenBucket(
                capacity: capacity, tokensPerInterval: rng.count(small: 1...3), intervalNanoseconds: rng.span(),
                initialTokens: rng.chance(50) ? nil : rng.int(in: 0...capacity))
        }
    }
    var characteristicNanoseconds: Int64 { intervalNanoseconds }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension GCRA: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> GCRA {
        draw(&rng) { rng throws(RateLimitInputError) in
            try GCRA(burst: rng.count(), emissionIntervalNanoseconds: rng.span(small: 1...15))
        }
    }
    var characteristicNanoseconds: Int64 { emissionIntervalNanoseconds }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 {
        let tat = state.theoreticalArrivalNanoseconds
        let tolerance = UInt64(burst * emissionIntervalNanoseconds)
        return tat > tolerance ? max(now, Int64(tat - tolerance)) : now
    }
    var answersAsOfEvaluationInstant: Bool { false }
}

extension LeakyBucketQueue: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> LeakyBucketQueue {
        draw(&rng) { rng throws(RateLimitInputError) in
            try LeakyBucketQueue(queueCapacity: rng.count(small: 0...5) - (rng.chance(10) ? 1 : 0),
                                 intervalNanoseconds: rng.span(small: 1...15))
        }
    }
    var characteristicNanoseconds: Int64 { intervalNanoseconds }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
    func measured(_ result: RateLimitResult, of event: RateLimitEvent<Self>, nanosecondsEarlier shift: Int64) -> RateLimitResult {
        // LBQ-3: a request admitted at the state's instant starts there, so seen from an earlier now it waits.
        if case .acquire(let permits) = event, permits > 0, case .allowed(let remaining) = result, shift > 0 {
            return .delayed(waitNanoseconds: shift, remaining: remaining)
        }
        return defaultMeasured(result, nanosecondsEarlier: shift)
    }
}

extension FixedWindow: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> FixedWindow {
        draw(&rng) { rng throws(RateLimitInputError) in try FixedWindow(limit: rng.count(), windowNanoseconds: rng.span()) }
    }
    var characteristicNanoseconds: Int64 { windowNanoseconds }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension SlidingWindowLog: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> SlidingWindowLog {
        // The log's memory grows with its limit: keep extreme limits out of the random traces.
        draw(&rng) { rng throws(RateLimitInputError) in
            try SlidingWindowLog(limit: rng.int(in: 1...8), windowNanoseconds: rng.span())
        }
    }
    var characteristicNanoseconds: Int64 { windowNanoseconds }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension SlidingWindowCounter: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> SlidingWindowCounter {
        draw(&rng) { rng throws(RateLimitInputError) in
            try SlidingWindowCounter(limit: rng.count(), windowNanoseconds: rng.span())
        }
    }
    var characteristicNanoseconds: Int64 { windowNanoseconds }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension LeakyBucketMeter: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> LeakyBucketMeter {
        draw(&rng) { rng throws(RateLimitInputError) in
            let capacity = rng.count()
            return try LeakyBucketMeter(
                capacity: capacity, leakPermitsPerPeriod: rng.count(small: 1...3), periodNanoseconds: rng.span(),
                initialLevel: rng.chance(50) ? 0 : rng.int(in: 0...capacity))
        }
    }
    var characteristicNanoseconds: Int64 { max(1, periodNanoseconds / leakPermitsPerPeriod) }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { max(now, state.lastNanoseconds) }
}

extension ConcurrencyLimiter: RandomizedStrategy {
    static func random(using rng: inout SeededGenerator) -> ConcurrencyLimiter {
        draw(&rng) { rng throws(RateLimitInputError) in try ConcurrencyLimiter(limit: rng.count()) }
    }
    var characteristicNanoseconds: Int64 { 10 }
    func evaluationInstant(_ state: State, now: Int64) -> Int64 { now }
}

// MARK: - Events and instants

extension RandomizedStrategy {
    /// An event: mostly acquires of edge-biased sizes, sometimes releases, resets and reconfigures.
    func randomEvent(using rng: inout SeededGenerator) -> RateLimitEvent<Self> {
        let roll = rng.int(in: 0...99)
        let releases = Self.self == ConcurrencyLimiter.self ? 35 : 2
        if roll < 3 { return .reset }
        if roll < 6 { return .reconfigure(Self.random(using: &rng)) }
        if roll < 6 + releases { return .release(rng.chance(3) ? -1 : rng.int(in: 0...maximumPermits / 2 + 1)) }
        return .acquire(randomPermits(using: &rng))
    }

    /// Permits for an acquire: 0, 1, the maximum, one above it, a random amount, or bad input.
    func randomPermits(using rng: inout SeededGenerator) -> Int64 {
        switch rng.int(in: 0...99) {
        case 0..<5: 0
        case 5..<45: 1
        case 45..<55: maximumPermits
        case 55..<60: maximumPermits == .max ? .max : maximumPermits + 1
        case 60..<62: rng.pick([-1, Int64.min])
        default: rng.int(in: 1...min(maximumPermits, 8))
        }
    }

    /// The next instant: repeats, one-nanosecond steps, window edges (span − 1, span, span + 1),
    /// exact retry-afters, long idles, jumps back, and the end of the timeline.
    func nextInstant(after now: Int64, retryAfter: Int64?, using rng: inout SeededGenerator) -> Int64 {
        let span = characteristicNanoseconds
        func forward(_ delta: Int64) -> Int64 { now > Int64.max - delta ? Int64.max : now + delta }
        func nudge(_ value: Int64, _ by: Int64) -> Int64 { max(0, value.addingReportingOverflow(by).overflow ? value : value + by) }
        switch rng.int(in: 0...99) {
        case 0..<18: return now
        case 18..<28: return forward(1)
        case 28..<46: return forward(nudge(span, rng.int(in: -1...1)))
        case 46..<58: return forward(nudge(retryAfter ?? span, rng.chance(70) ? 0 : -1))
        case 58..<78: return forward(rng.int(in: 0...max(1, span / 3)))
        case 78..<88: return forward(rng.int(in: 0...(span > Int64.max / 3 ? Int64.max : span * 3)))
        case 88..<96: return max(0, now - rng.int(in: 1...(span > Int64.max / 2 ? Int64.max : span * 2)))
        case 96..<98: return forward(rng.pick([1_000_000_000, 86_400_000_000_000, Int64.max / 2]))
        default: return Int64.max - rng.int(in: 0...span)
        }
    }
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
        var now: Int64 = rng.chance(90) ? rng.int(in: 0...100) : Int64.max - rng.int(in: 0...1_000)
        var state = strategy.initialState(at: t(now))
        var retryAfter: Int64?
        for index in 0..<steps {
            let event = strategy.randomEvent(using: &rng)
            now = strategy.nextInstant(after: now, retryAfter: retryAfter, using: &rng)
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
        StrategyKind(FixedWindow.self), StrategyKind(SlidingWindowLog.self), StrategyKind(SlidingWindowCounter.self),
        StrategyKind(LeakyBucketMeter.self), StrategyKind(LeakyBucketQueue.self), StrategyKind(ConcurrencyLimiter.self),
    ]
}

/// A property checked the same way for every strategy.
protocol StrategyProperty {
    func check<S: RandomizedStrategy>(_ type: S.Type)
}
