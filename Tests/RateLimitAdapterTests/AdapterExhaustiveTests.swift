import Foundation
import RateLimitCore
import RateLimitTestSupport
import Testing

@testable import RateLimitConformance

/// Every path the exhaustive wait-queue walk explores (WaitQueueChecker), replayed through every
/// queueing adapter on its manual clock and compared, outcome by outcome, with the pure machine.
@Suite("Exhaustive: every explored wait-queue path through every adapter")
struct AdapterExhaustiveTests {
    /// The walk's depth for the adapters: every state within this many operations (3 in `make
    /// verify`, 4 with `RATELIMIT_EXHAUSTIVE=deep`).
    static let depth = ExhaustiveBudget.adapterDepth

    static func replay<S: RateLimitStrategy>(_ space: WaitQueueSpace<S>, name: String) async throws {
        let (report, paths) = try WaitQueueChecker.walk(space, name: name, depthLimit: Self.depth, recordPaths: true)
        var replayed = 0
        let clock = ContinuousClock()
        let elapsed = try await clock.measure {
            for (index, path) in paths.enumerated() {
                let cancels = path.steps.contains { if case .cancel = $0.operation { true } else { false } }
                for (adapter, manual) in try adapters(space.strategy, queueLimit: space.queueLimit)
                where adapter.queues && (adapter.cancellable || !cancels) {
                    var run = try ModelReplay(
                        adapter: adapter, clock: manual, strategy: space.strategy, queueLimit: space.queueLimit,
                        replay: "path \(index): \(path.steps.map { "\($0.operation) at \($0.now)" })")
                    for (step, (now, operation)) in path.steps.map({ ($0.now, $0.operation) }).enumerated()
                    where !run.failed {
                        await run.move(to: now, step: step)
                        switch operation {
                        case .acquire(let permits, let priority, let timeout, let before):
                            await run.acquire(
                                permits, priority: priority, timeout: timeout.map { .nanoseconds($0) },
                                arrival: before.map { now - $0 }, step: step)
                        case .tryAcquire(let permits, let priority):
                            await run.tryAcquire(permits, priority: priority, step: step)
                        case .cancel(let position):
                            // The waiter at that place in the model's service order (WQ-3), which the
                            // walk checked against its own.
                            await run.cancel(run.model.serviceOrder[position].ticket, step: step)
                        case .release(let permits): await run.release(permits, step: step)
                        case .reset: await run.reset(step: step)
                        case .advance: break  // the clock moved: the adapter's timer fired
                        }
                    }
                    await run.finish(step: path.steps.count)
                    replayed += 1
                }
            }
        }
        print(
            "exhaustive: \(report.name): \(paths.count) paths (depth \(Self.depth)), \(replayed) replays through the adapters in \(elapsed)"
        )
        #expect(replayed > paths.count, "every path ran through more than one adapter")
    }

    @Test("WQ-13 every wait-queue path of a token bucket (3 waiters) gives the model's outcomes through every adapter")
    func tokenBucket() async throws {
        try await offThePool {
            try await Self.replay(
                WaitQueueSpace(
                    strategy: try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 2), queueLimit: 3,
                    horizon: 10, offsets: [-1, 0, 1, 2, 3],
                    operations: WaitQueueSpace<TokenBucket>.operations(releases: false, waiters: 3)),
                name: "token bucket")
        }
    }

    @Test(
        "WQ-13 every wait-queue path of a concurrency limit (3 waiters, releases) gives the model's outcomes through every adapter"
    )
    func concurrency() async throws {
        try await offThePool {
            try await Self.replay(
                WaitQueueSpace(
                    strategy: try ConcurrencyLimiter(limit: 2), queueLimit: 3, horizon: 10, offsets: [-1, 0, 1, 2, 3],
                    operations: WaitQueueSpace<ConcurrencyLimiter>.operations(releases: true, waiters: 3)),
                name: "concurrency")
        }
    }
}
