import Dispatch
import Foundation
import RateLimitActor
import RateLimitAtomic
import RateLimitConformance
import RateLimitCore
import RateLimitDispatch
import RateLimitLock
import RateLimitTestSupport
import Testing

/// One operation of a stress history: an event at an instant.
private struct StressInput: Sendable {
    var acquire: Bool
    var permits: Int64
    var instant: RateLimitInstant
}

/// The sequential model of a limiter with nobody waiting: the strategy's answer, as `tryAcquire`
/// reports it (WQ-4) or as `release` does.
private func model<S: RateLimitStrategy>(_ state: RateLimiter<S>, _ input: StressInput) -> (RateLimiter<S>, String) {
    var next = state
    if input.acquire {
        let answer = next.acquire(input.permits, at: input.instant)
        return (next, "\(WaitOutcome(answer))")
    }
    let answer = next.step(.release(input.permits), at: input.instant)  // before `next` is returned
    return (next, "\(answer)")
}

/// Runs `workers` concurrent workers on real threads, each calling `body(worker, index)` `operations` times.
private func onThreads(workers: Int, operations: Int, _ body: @escaping @Sendable (Int, Int) -> Void) async {
    // A thread per worker, not `concurrentPerform`: that runs on Dispatch's global queue, which on
    // Linux is the cooperative pool the tasks these workers wait for need.
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for worker in 0..<workers {
            group.enter()
            Thread {
                for index in 0..<operations { body(worker, index) }
                group.leave()
            }.start()
        }
        group.notify(queue: .global()) { done.resume() }
    }
}

/// Hammers `adapter` from many workers in phases (clock frozen during a phase, stepped between
/// phases), records the history and checks it is linearizable with respect to the pure model.
private func stress<S: RateLimitStrategy>(
    _ strategy: S, adapter: any Adapter<S>, clock: ManualClock, releases: Bool, threads: Bool
) async -> LinearizabilityVerdict {
    let recorder = HistoryRecorder<StressInput, String>()
    let phases = 4
    let workers = 4
    let operations = 40
    for phase in 0..<phases {
        let instant = Int64(phase * 7)
        move(clock, to: instant)
        let at = RateLimitInstant.fromManual(instant)
        @Sendable func operation(_ worker: Int, _ index: Int) async {
            let acquire = !releases || (worker + index) % 3 != 0
            let permits = Int64((worker * 31 + index * 7) % 3 + 1)
            let call = recorder.stamp()
            let output =
                acquire
                ? "\(await adapter.tryAcquire(permits, priority: .normal))" : "\(await adapter.release(permits))"
            recorder.record(
                call: call, input: StressInput(acquire: acquire, permits: permits, instant: at), output: output)
        }
        if threads {
            await onThreads(workers: workers, operations: operations) { worker, index in
                let semaphore = DispatchSemaphore(value: 0)
                Task {
                    await operation(worker, index)
                    semaphore.signal()
                }
                semaphore.wait()
            }
        } else {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask { for index in 0..<operations { await operation(worker, index) } }
                }
            }
        }
    }
    return await offThePool {
        LinearizabilityChecker.check(recorder.history, initial: RateLimiter(strategy, at: .origin), step: model)
    }
}

@Suite("Adapters under concurrency")
struct AdapterConcurrencyTests {
    /// Checks every adapter of `strategy`.
    private func check<S: RateLimitStrategy>(_ strategy: S, releases: Bool = false) async throws {
        for (adapter, clock) in try adapters(strategy, queueLimit: 0) where !(releases && !adapter.queues) {
            // Synchronous adapters are hammered from real threads, the actor from tasks.
            let threads = adapter.name != "actor"
            let verdict = await stress(strategy, adapter: adapter, clock: clock, releases: releases, threads: threads)
            #expect(verdict.isLinearizable, "\(adapter.name) \(S.identifier): \(verdict)")
            await adapter.close()
        }
    }

    @Test("WQ-13 concurrent tryAcquire on every adapter is linearizable with respect to the pure model (token bucket)")
    func tokenBucket() async throws {
        try await check(try TokenBucket(capacity: 5, permitsPerPeriod: 1, periodNanoseconds: 10))
    }

    @Test(
        "WQ-13 concurrent tryAcquire on every adapter is linearizable with respect to the pure model (GCRA, lock-free included)"
    )
    func gcra() async throws { try await check(try GCRA(burst: 4, emissionIntervalNanoseconds: 10)) }

    @Test(
        "WQ-13 concurrent tryAcquire on every adapter is linearizable with respect to the pure model (sliding window log)"
    )
    func slidingLog() async throws { try await check(try SlidingWindowLog(limit: 6, windowNanoseconds: 14)) }

    @Test(
        "WQ-13 concurrent acquire and release on every adapter are linearizable: no permit lost or created (concurrency limiter)"
    )
    func concurrency() async throws { try await check(try ConcurrencyLimiter(limit: 4), releases: true) }

    @Test(
        "WQ-10 thousands of queued waiters with random cancellations and timeouts: every one gets one outcome, no lost wake-up"
    )
    func thousandsOfWaiters() async throws {
        // The capacity holds every permit the run can refill, so a timer that fires once for
        // several clock steps loses nothing: a waiter left at the end is a lost wake-up.
        let bucket = try TokenBucket(capacity: 100_000, permitsPerPeriod: 1, periodNanoseconds: 10, initialTokens: 0)
        var rng = TestSeed.generator("thousandsOfWaiters", trace: 0)
        for (adapter, clock) in try adapters(bucket, queueLimit: 1_000_000) where adapter.queues {
            let count = adapter.name.hasPrefix("lock (blocking") ? 150 : 2_000  // a parked thread each
            var tasks: [Task<Result<RateLimitGrant, RateLimitAcquireError>, Never>] = []
            let finished = Counter()
            var demand: Int64 = 0
            for _ in 0..<count {
                let permits = rng.int(in: 1...3)
                demand += permits
                let priority = rng.pick([RateLimitPriority.low, .normal, .high])
                let timeout: Duration? = rng.chance(30) ? .nanoseconds(rng.int(in: 0...5_000)) : nil
                tasks.append(
                    Task {
                        let result = await adapter.acquire(permits, priority: priority, timeout: timeout)
                        finished.increment()
                        return result
                    })
            }
            // Every request is queued or answered before time moves (they all arrive at instant 0).
            _ = await eventually(within: .seconds(30)) { await adapter.waitingCount() + finished.value >= count }
            #expect(await adapter.waitingCount() + finished.value == count, "\(adapter.name): requests were not queued")
            // Step the clock past every deadline and far enough to serve every waiter, cancelling
            // some waiters between steps (where the adapter supports it).
            let steps = Int64(20)
            let stepLength = max(1_000, (demand * 10 + 19) / 20)
            for step in 1...steps {
                if adapter.cancellable { for task in tasks where rng.chance(1) { task.cancel() } }
                move(clock, to: step * stepLength)
                for _ in 0..<20 { await Task.yield() }
            }
            var outcomes: [String: Int] = [:]
            var granted: Int64 = 0
            for task in tasks {
                guard let result = await finishes(within: .seconds(30), { await task.value }) else {
                    Issue.record("\(adapter.name): a waiter never got an outcome (lost wake-up)")
                    break
                }
                switch result {
                case .success(let grant):
                    granted += grant.permits
                    outcomes["granted", default: 0] += 1
                case .failure(.timedOut): outcomes["timedOut", default: 0] += 1
                case .failure(.cancelled): outcomes["cancelled", default: 0] += 1
                case .failure(let error): outcomes[error.description, default: 0] += 1
                }
            }
            #expect(outcomes.values.reduce(0, +) == count, "\(adapter.name): \(outcomes)")
            #expect(
                granted <= steps * stepLength / 10,
                "\(adapter.name) granted \(granted) permits in \(steps * stepLength) ns")
            // The run exercised every path: grants, timeouts and (where supported) cancellations.
            #expect(outcomes["granted", default: 0] > count / 2, "\(adapter.name): \(outcomes)")
            #expect(outcomes["timedOut", default: 0] > 0, "\(adapter.name): \(outcomes)")
            #expect(!adapter.cancellable || outcomes["cancelled", default: 0] > 0, "\(adapter.name): \(outcomes)")
            #expect(await adapter.waitingCount() == 0, "\(adapter.name) still has waiters")
            await adapter.close()
        }
    }

    @Test(
        "REG-8 REG-9 REG-13 threads on 200 keys of a sharded lock registry holding 24: never more keys than that, every request counted once, no lock taken out of order"
    )
    func shardedRegistry() async throws {
        let clock = ManualClock()
        let bucket = try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 40)
        let registry = try LockedRateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, bucket)], maximumKeys: 24, shards: 8, clock: clock)
        let keys = (0..<200).map { "key-\($0)" }
        var seeding = TestSeed.generator("shardedRegistry", trace: 0)
        let seed = seeding.next()
        let replay = TestSeed.replay("AdapterConcurrencyTests", trace: 0)
        let granted = Counter()
        let requests = Counter()
        let overfull = Counter()
        // Throttles arm timers that serve every shard (REG-13, item 3) while the workers request;
        // removals, resets and listings take every shard's lock or change the count of keys.
        await onThreads(workers: 4, operations: 3_000) { worker, index in
            var rng = SeededGenerator(seed: seed, stream: "worker", index: worker * 10_000 + index)
            let key = rng.pick(keys)
            switch rng.int(in: 0...99) {
            case 0..<80:
                requests.increment()
                if case .granted = registry.tryAcquire(key) { granted.increment() }
            case 80..<85: registry.throttle(key, for: .nanoseconds(rng.int(in: 1...60)))
            case 85..<90: registry.remove(key)
            case 90..<92: registry.resetAll()
            case 92..<95: if registry.keys.count > 24 { overfull.increment() }
            case 95..<98: _ = registry.availability(key)
            default: if worker == 0 { clock.advance(by: .nanoseconds(rng.int(in: 1...30))) }
            }
        }
        let totals = registry.totals
        holds(overfull.value == 0, "held more than 24 keys \(overfull.value) times", replay: replay)
        holds(registry.keys.count <= 24, "\(registry.keys.count) keys held at the end", replay: replay)
        holds(
            totals.admitted == UInt64(granted.value) && totals.admitted + totals.rejected == UInt64(requests.value),
            "totals \(totals) for \(requests.value) requests, \(granted.value) granted", replay: replay)
        // The run made new keys forget idle ones: more were created than can be held at once.
        holds(granted.value > 24 * 3, "only \(granted.value) granted", replay: replay)
        registry.close()
    }
}

/// A counter shared between tasks.
private final class Counter: @unchecked Sendable {
    // @unchecked: `count` is read and written only under `lock`.
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
