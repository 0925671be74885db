import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitConformance

// Mutants of the Swift model, as wrappers around the reference (the core is not edited): each
// is a realistic mistake in one strategy, and the exhaustive pass (`ConformanceSuite.exhaustive`,
// what `ratelimit-conformance --exhaustive` runs) must find every one at the default depth.

/// A mistake made in a wrapper around a strategy of any kind.
enum Mutation: String, CaseIterable, Hashable, Sendable {
    /// The count comparison off by one: `used + n ≤ limit` written `<` (an acquire of exactly what
    /// is left is refused, `remaining` one lower, an acquire of the whole limit never admitted).
    case strictBoundary = "strict-boundary"
    /// The time comparison off by one: every acquire decided as if one nanosecond later (a window
    /// ends, a token arrives, an entry expires one nanosecond early).
    case earlyEdge = "early-edge"
    /// The retry-after rounded down where the Spec rounds up (TB-6, LBM-6, TBI-6, SWC-6); the other
    /// strategies' retry-afters are exact instants with nothing to round.
    case roundingFlip = "rounding-flip"
    /// A refused acquire records the refill (or roll) up to its evaluation instant, as Go's
    /// x/time/rate did before v0.3.0 (CORE-8); the concurrency limiter has nothing to refill.
    case refillOnRejection = "refill-on-rejection"

    /// Whether the mutation changes anything for `strategy`.
    func applies(to strategy: String) -> Bool {
        switch self {
        case .strictBoundary: true
        case .earlyEdge, .refillOnRejection: strategy != ConcurrencyLimiter.identifier
        case .roundingFlip:
            [
                TokenBucket.identifier, LeakyBucketMeter.identifier, IntervalTokenBucket.identifier,
                SlidingWindowCounter.identifier,
            ].contains(strategy)
        }
    }
}

/// A strategy with one mutation.
struct Mutant: RateLimitStrategy {
    static let identifier = "mutant"
    let inner: AnyRateLimitStrategy
    let mutation: Mutation
    typealias State = AnyRateLimitStrategy.State

    var maximumPermits: Int64 { inner.maximumPermits }
    func initialState(at now: RateLimitInstant) -> State { inner.initialState(at: now) }
    func isIdle(_ state: State, at now: RateLimitInstant) -> Bool { inner.isIdle(state, at: now) }

    func step(_ state: inout State, _ event: RateLimitEvent<Mutant>, at now: RateLimitInstant) -> RateLimitResult {
        switch event {
        case .acquire(let permits) where permits >= 0: return acquire(&state, permits, at: now)
        case .acquire(let permits): return inner.step(&state, .acquire(permits), at: now)
        case .release(let permits): return inner.step(&state, .release(permits), at: now)
        case .reset: return inner.step(&state, .reset, at: now)
        case .reconfigure(let other): return inner.step(&state, .reconfigure(other.inner), at: now)
        }
    }

    private func probe(_ state: State, _ permits: Int64, at now: RateLimitInstant) -> RateLimitResult {
        var copy = state
        return inner.step(&copy, .acquire(permits), at: now)
    }

    private func acquire(_ state: inout State, _ permits: Int64, at now: RateLimitInstant) -> RateLimitResult {
        switch mutation {
        case .strictBoundary:
            let lower: (RateLimitResult) -> RateLimitResult = { answer in
                switch answer {
                case .allowed(let remaining): .allowed(remaining: max(0, remaining - 1))
                case .delayed(let wait, let remaining):
                    .delayed(waitNanoseconds: wait, remaining: max(0, remaining - 1))
                case .rejected, .rejectedUntilRelease, .neverAllowed, .invalid: answer
                }
            }
            if permits == 0 { return lower(probe(state, 0, at: now)) }
            let stricter = probe(state, permits == .max ? permits : permits + 1, at: now)
            guard stricter.isAdmitted else { return stricter }
            return lower(inner.step(&state, .acquire(permits), at: now))
        case .earlyEdge:
            guard let later = now.advanced(byNanoseconds: 1) else {
                return inner.step(&state, .acquire(permits), at: now)
            }
            var answer = inner.step(&state, .acquire(permits), at: later)
            if case .delayed(let wait, let remaining) = answer {
                answer = .delayed(waitNanoseconds: wait + 1, remaining: remaining)
            }
            return answer
        case .refillOnRejection:
            let answer = inner.step(&state, .acquire(permits), at: now)
            if !answer.isAdmitted { _ = inner.step(&state, .reconfigure(inner), at: now) }
            return answer
        case .roundingFlip:
            let answer = inner.step(&state, .acquire(permits), at: now)
            guard case .rejected(let wait) = answer, let shorter = roundedDown(state, permits, wait, at: now) else {
                return answer
            }
            return .rejected(retryAfterNanoseconds: shorter)
        }
    }

    /// The bucket's rate and the same bucket refilling one permit per period (token bucket, meter).
    private var onePermitPerPeriod: (Int64, AnyRateLimitStrategy)? {
        switch inner {
        case .tokenBucket(let s):
            (try? TokenBucket(capacity: s.capacity, permitsPerPeriod: 1, periodNanoseconds: s.periodNanoseconds))
                .map { (s.permitsPerPeriod, .tokenBucket($0)) }
        case .leakyBucketMeter(let s):
            (try? LeakyBucketMeter(
                capacity: s.capacity, leakPermitsPerPeriod: 1, periodNanoseconds: s.periodNanoseconds))
                .map { (s.leakPermitsPerPeriod, .leakyBucketMeter($0)) }
        default: nil
        }
    }

    /// The retry-after the Spec rounds up, rounded down instead (`nil` when the exact value is whole).
    private func roundedDown(_ state: State, _ permits: Int64, _ wait: Int64, at now: RateLimitInstant) -> Int64? {
        let instant = now.nanoseconds
        /// The state refilled (or rolled) to `at`: a reconfigure to itself records nothing else.
        func refilled(at nanoseconds: Int64) -> State {
            var copy = state
            _ = inner.step(&copy, .reconfigure(inner), at: .generated(nanoseconds))
            return copy
        }
        switch (inner, state) {
        case (.tokenBucket, _), (.leakyBucketMeter, _):
            // The units missing one nanosecond before the admission, read as the retry-after of
            // the same bucket refilling one permit per period: the exact wait is whole only when
            // they are R (one nanosecond's refill).
            guard wait > 1, let (rate, slow) = onePermitPerPeriod else { return nil }
            let before = RateLimitInstant.generated(instant + wait - 1)
            var copy = state
            _ = inner.step(&copy, .reconfigure(slow), at: before)
            guard case .rejected(let missing) = slow.step(&copy, .acquire(permits), at: before) else { return nil }
            return missing == rate ? nil : wait - 1
        case (.intervalTokenBucket(let s), _):
            guard case .intervalTokenBucket(let bucket) = refilled(at: instant) else { return nil }
            let short = permits - bucket.tokens
            return short % s.tokensPerInterval == 0 ? nil : wait - s.intervalNanoseconds
        case (.slidingWindowCounter(let s), _):
            guard case .slidingWindowCounter(let counts) = refilled(at: instant) else { return nil }
            let (n, w) = (s.limit, s.windowNanoseconds)
            let evaluation = counts.lastNanoseconds
            let window = evaluation / w
            let admission = instant + wait
            if admission < (window + 1) * w {  // SWC-6 case 1: q = ⌊s·W/p⌋ later in this window
                let room = n - counts.current - permits
                return counts.previous > 0 && (room * w) % counts.previous != 0 ? wait - 1 : nil
            }
            if admission > (window + 1) * w, admission < (window + 2) * w {  // case 2, in the next window
                return counts.current > 0 && ((n - permits) * w) % counts.current != 0 ? wait - 1 : nil
            }
            return nil
        default:
            return nil
        }
    }
}

/// The mutants of one strategy as an implementation under test.
struct MutantSubject: ConformanceSubject {
    let mutation: Mutation
    let strategy: String
    var name: String { "\(strategy) with \(mutation.rawValue)" }
    var strategies: Set<String> { [strategy] }

    func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<RateLimiter<Mutant>> {
        guard let configuration = request.configuration else { return .unsupported(reason: "refusals not run") }
        return .created(RateLimiter(Mutant(inner: configuration, mutation: mutation), at: .generated(now)))
    }

    func apply(_ event: ConformanceEvent, to limiter: inout RateLimiter<Mutant>, at now: Int64) -> RateLimitResult {
        switch event {
        case .acquire(let permits): limiter.step(.acquire(permits), at: .generated(now))
        case .release(let permits): limiter.step(.release(permits), at: .generated(now))
        case .reset: limiter.step(.reset, at: .generated(now))
        case .reconfigure(let other):
            limiter.step(.reconfigure(Mutant(inner: other, mutation: mutation)), at: .generated(now))
        }
    }
}

@Suite("Exhaustive: every mutant of the model is found at the default depth")
struct ExhaustiveMutantTests {
    static var mutants: [(Mutation, String)] {
        Mutation.allCases.flatMap { mutation in
            AnyRateLimitStrategy.identifiers.filter(mutation.applies(to:)).map { (mutation, $0) }
        }
    }

    @Test("CONF-2 the exhaustive pass finds each mutant of each strategy", arguments: Self.mutants)
    func mutantIsFound(_ mutation: Mutation, _ strategy: String) async {
        let (found, finding) = await offThePool { () -> (Int?, StepFinding?) in
            for depth in 1...ExhaustiveOptions.defaultDepth {
                var subject = MutantSubject(mutation: mutation, strategy: strategy)
                // Finding the mutant is enough: the pass need not go on to every cause.
                var options = ExhaustiveOptions(depth: depth, strategies: [strategy])
                options.stopAtFirstFailure = true
                let run = ConformanceSuite.exhaustive(&subject, options: options)
                if !run.passes(at: .exact) {
                    let failing = run.strategies.first { $0.strategy == strategy }
                    return (depth, failing?.shrunk?.outcome.primary ?? failing?.failure?.primary)
                }
            }
            return (nil, nil)
        }
        print(
            "mutant \(mutation.rawValue) \(strategy): found at depth \(found.map(String.init) ?? "none"): \(finding.map { "\($0.kind.name), step \($0.step) \($0.event): expected \($0.expected), got \($0.got)" } ?? "-")"
        )
        #expect(found != nil, "\(mutation.rawValue) of \(strategy) survives depth \(ExhaustiveOptions.defaultDepth)")
    }
}
