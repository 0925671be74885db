import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitConformance

/// Every reachable state of small wait queues (WaitQueueChecker), not a sample: queues of up to
/// three waiters (a limit of 3 permits), acquires of 1 and 2 permits at three priorities with and
/// without deadlines, retries naming an arrival 1 or 2 ns before their own or 1 ns after it,
/// tryAcquires, cancellations, resets, releases and clock moves of −1 to 3 ns on a 10 ns timeline;
/// to depth 4 in `make verify`, 7 with `RATELIMIT_EXHAUSTIVE=deep`.
@Suite("Exhaustive: every reachable state of small wait queues")
struct WaitQueueExhaustiveTests {
    static func space<S: RateLimitStrategy>(_ strategy: S, releases: Bool) -> WaitQueueSpace<S> {
        WaitQueueSpace(
            strategy: strategy, queueLimit: 3, horizon: 10, offsets: [-1, 0, 1, 2, 3],
            operations: WaitQueueSpace<S>.operations(releases: releases, waiters: 3))
    }

    static func walk<S: RateLimitStrategy>(
        _ space: WaitQueueSpace<S>, name: String, depth: Int = ExhaustiveBudget.waitQueueDepth
    ) async throws -> ExhaustiveChecker.Report {
        try await offThePool {
            var report: ExhaustiveChecker.Report!
            let elapsed = try ContinuousClock().measure {
                report = try WaitQueueChecker.walk(space, name: name, depthLimit: depth).report
            }
            print("exhaustive: \(report!) in \(elapsed)")
            return report
        }
    }

    @Test(
        "WQ-2 WQ-3 WQ-4 WQ-5 WQ-6 WQ-7 WQ-8 WQ-9 WQ-10 WQ-14 hold on every reachable state of a token bucket's queue, retries naming an earlier arrival included"
    )
    func tokenBucket() async throws {
        let report = try await Self.walk(
            Self.space(try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 2), releases: false),
            name: "wait queue, token bucket (2, 1, 2)")
        #expect(report.states > 100 && report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
    }

    @Test(
        "WQ-2 WQ-3 WQ-4 WQ-5 WQ-6 WQ-7 WQ-8 WQ-9 WQ-10 WQ-14 hold on every reachable state of a concurrency limit's queue, with releases and retries naming an earlier arrival"
    )
    func concurrency() async throws {
        let report = try await Self.walk(
            Self.space(try ConcurrencyLimiter(limit: 2), releases: true), name: "wait queue, concurrency (2)")
        #expect(report.states > 100 && report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
    }

    /// A token bucket whose refusals claim two nanoseconds more than the Spec's wait.
    struct LateRetry: RateLimitStrategy {
        static let identifier = "late-retry"
        let inner: TokenBucket
        var maximumPermits: Int64 { inner.maximumPermits }
        func initialState(at now: RateLimitInstant) -> TokenBucket.State { inner.initialState(at: now) }
        func isIdle(_ state: TokenBucket.State, at now: RateLimitInstant) -> Bool { inner.isIdle(state, at: now) }
        func step(_ state: inout TokenBucket.State, _ event: RateLimitEvent<LateRetry>, at now: RateLimitInstant)
            -> RateLimitResult
        {
            guard case .acquire(let permits) = event else { return inner.step(&state, .reset, at: now) }
            let answer = inner.step(&state, .acquire(permits), at: now)
            if case .rejected(let wait) = answer { return .rejected(retryAfterNanoseconds: wait + 2) }
            return answer
        }
    }

    @Test("WQ-7 the walk finds a queue woken late (its strategy's retry-after is too long, its admissions are not)")
    func lateWakeUpsAreFound() async throws {
        let report = try await Self.walk(
            Self.space(
                LateRetry(inner: try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 2)),
                releases: false),
            name: "wait queue, late retry", depth: 3)
        #expect(report.violations.contains { $0.contains("WQ-5 WQ-7 outcomes") }, "\(report)")
    }
}
