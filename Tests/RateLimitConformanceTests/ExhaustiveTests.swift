import RateLimitCore
import Testing

@testable import RateLimitConformance

/// Every reachable state of small limiters (ExhaustiveChecker), not a sample.
///
/// Bounds: capacities and limits of 2–3, periods, intervals and windows of 2–4 ns, a timeline of
/// 4 windows (16 ns), events at offsets −3, −1, 0, 1, 2, 3, 4, 5 and a jump to the end from the
/// latest instant, every acquire from −1 (invalid) to one more than the limit can ever admit, and
/// resets. That covers every window and period edge (±1 around each), time going backwards, an
/// idle stretch longer than any refill (the jump), and each fraction a period can leave, while each
/// walk stays within a few thousand states (printed), so the whole suite runs in about a second.
@Suite("Exhaustive: every reachable state of small limiters")
struct ExhaustiveTests {
    static let horizon: Int64 = 16
    static let offsets: [Int64] = [-3, -1, 0, 1, 2, 3, 4, 5, 16]

    static func events<S: RateLimitStrategy>(_ strategy: S, releases: Bool = false) -> [RateLimitEvent<S>] {
        var events = (-1...(strategy.maximumPermits + 1)).map { RateLimitEvent<S>.acquire($0) } + [.reset]
        if releases { events += [.release(1), .release(2), .release(-1)] }
        return events
    }

    static func expectComplete(_ report: ExhaustiveChecker.Report) {
        print("exhaustive: \(report)")
        #expect(report.complete, "\(report)")
        #expect(report.states > 10, "the walk reached more than the start: \(report)")
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
    }

    static func walk<S: RateLimitStrategy>(_ strategy: S, releases: Bool = false) -> ExhaustiveChecker.Report {
        ExhaustiveChecker.walk(
            strategy, name: "\(S.identifier) \(strategy)", horizon: horizon, offsets: offsets,
            events: events(strategy, releases: releases))
    }

    @Test("CORE-5 CORE-6 CORE-7 CORE-8 CORE-10 every reachable state of each strategy keeps the Spec's relations")
    func everyStrategy() throws {
        let reports = [
            Self.walk(try TokenBucket(capacity: 3, permitsPerPeriod: 2, periodNanoseconds: 4)),
            Self.walk(try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 3, initialTokens: 0)),
            Self.walk(
                try IntervalTokenBucket(capacity: 3, tokensPerInterval: 2, intervalNanoseconds: 4, initialTokens: 0)),
            Self.walk(try GCRA(burst: 3, emissionIntervalNanoseconds: 2)),
            Self.walk(try FixedWindow(limit: 3, windowNanoseconds: 4)),
            Self.walk(try SlidingWindowLog(limit: 3, windowNanoseconds: 4)),
            Self.walk(try SlidingWindowCounter(limit: 3, windowNanoseconds: 4)),
            Self.walk(try LeakyBucketMeter(capacity: 3, leakPermitsPerPeriod: 2, periodNanoseconds: 4)),
            Self.walk(try LeakyBucketQueue(queueCapacity: 2, intervalNanoseconds: 3)),
            Self.walk(try ConcurrencyLimiter(limit: 3), releases: true),
        ]
        for report in reports { Self.expectComplete(report) }
    }

    @Test("TB-1 LBM-1 GCRA-1 TBI-1 FW-1 the equivalences between strategies hold on every reachable pair of states")
    func equivalences() throws {
        let pairs = [
            ExhaustiveChecker.walkPair(
                try TokenBucket(capacity: 3, permitsPerPeriod: 2, periodNanoseconds: 4, initialTokens: 1),
                try LeakyBucketMeter(capacity: 3, leakPermitsPerPeriod: 2, periodNanoseconds: 4, initialLevel: 2),
                name: "token bucket (3, 2, 4, 1) ≡ leaky bucket meter (3, 2, 4, 2)", horizon: Self.horizon,
                offsets: Self.offsets, permits: -1...4),
            ExhaustiveChecker.walkPair(
                try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 2),
                try GCRA(burst: 3, emissionIntervalNanoseconds: 2),
                name: "token bucket (3, 1, 2, 3) ≡ GCRA (3, 2)", horizon: Self.horizon, offsets: Self.offsets,
                permits: -1...4),
            ExhaustiveChecker.walkPair(
                try IntervalTokenBucket(capacity: 3, tokensPerInterval: 3, intervalNanoseconds: 4),
                try FixedWindow(limit: 3, windowNanoseconds: 4),
                name: "interval token bucket (3, 3, 4, 3) ≡ fixed window (3, 4)", horizon: Self.horizon,
                offsets: Self.offsets, permits: -1...4),
        ]
        for report in pairs { Self.expectComplete(report) }
    }

    @Test("CORE-7 the checker finds a retry-after one nanosecond short (a model of it, not the Spec)")
    func findsAShortRetryAfter() throws {
        // A token bucket whose refusals claim one nanosecond less than the Spec's wait.
        struct ShortRetry: RateLimitStrategy {
            static let identifier = "short-retry"
            let inner: TokenBucket
            var maximumPermits: Int64 { inner.maximumPermits }
            func initialState(at now: RateLimitInstant) -> TokenBucket.State { inner.initialState(at: now) }
            func step(_ state: inout TokenBucket.State, _ event: RateLimitEvent<ShortRetry>, at now: RateLimitInstant)
                -> RateLimitResult
            {
                let mapped: RateLimitEvent<TokenBucket>
                switch event {
                case .acquire(let permits): mapped = .acquire(permits)
                case .release(let permits): mapped = .release(permits)
                case .reset: mapped = .reset
                case .reconfigure(let other): mapped = .reconfigure(other.inner)
                }
                let result = inner.step(&state, mapped, at: now)
                if case .rejected(let wait) = result, wait > 1 { return .rejected(retryAfterNanoseconds: wait - 1) }
                return result
            }
            func isIdle(_ state: TokenBucket.State, at now: RateLimitInstant) -> Bool { inner.isIdle(state, at: now) }
        }
        let report = Self.walk(
            ShortRetry(inner: try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 3)))
        #expect(report.violations.contains { $0.contains("CORE-7 retry-after") && $0.contains("not honoured") })
    }
}
