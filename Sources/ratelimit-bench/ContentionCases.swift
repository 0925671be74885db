import Foundation
import RateLimitActor
import RateLimitAtomic
import RateLimitClock
import RateLimitCore
import RateLimitDispatch
import RateLimitLock

// Threads that compete for one limiter or one registry (issue 37; Performance.md, "Contention"):
// throughput cost per operation of all threads together, each adapter against its floor run by as
// many threads, 2 threads (this machine's cores) and 4 (more threads than cores). The lock
// candidates are the locks the lock adapter could use, each around the bare bucket, at 1, 2 and 4
// threads: what the adapter's lock was chosen by.

func contention(plan: Plan) async throws -> [Measurement] {
    let operations = 1_000_000
    var results: [Measurement] = []
    @discardableResult
    func group(_ floorName: String, _ samples: [[Double]], _ adapters: [(name: String, ratio: Double?)]) -> Measurement
    {
        let floor = Measurement(section: "floor", name: floorName, unit: "ns", samples: samples[0])
        results.append(floor)
        for (index, adapter) in adapters.enumerated() {
            results.append(
                Measurement(section: "contention", name: adapter.name, unit: "ns", samples: samples[index + 1])
                    .compared(with: floor, atMost: adapter.ratio, paired: true))
        }
        return floor
    }
    func bucket() -> BareTokenBucket { BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1) }
    // Every body is a loop of its own around the call it times: a loop calling a closure per
    // operation retained and released what the closure captured each time, on one shared object,
    // which doubled the lock adapter's contended cost (`ClockedFloor.readingLoop`).

    // The candidates, first alone, then contended.
    let shell = BareShellLockBucket(bucket())
    let condition = BareConditionBucket(bucket())
    let mutex = BareMutexBucket(bucket())
    let shellFloor = shell.readingLoop()
    let candidates: [(String, @Sendable (Int) -> Int)] = [
        ("clock read + the adapter's lock (spin, then park) + bucket arithmetic", shellFloor),
        (
            "NSCondition lock + clock read + bucket arithmetic (the former lock)",
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= condition.acquire(readingClock: true) }
                return Int(truncatingIfNeeded: checksum)
            }
        ),
        (
            "clock read + NSCondition lock + bucket arithmetic",
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= condition.acquireReadingFirst() }
                return Int(truncatingIfNeeded: checksum)
            }
        ),
        (
            "clock read + Mutex + bucket arithmetic",
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= mutex.acquire() }
                return Int(truncatingIfNeeded: checksum)
            }
        ),
    ]
    for threads in [1, 2, 4] {
        let samples = plan.timeContended(
            threads: threads, operations: operations / threads, candidates.map(\.1))
        for (index, (name, _)) in candidates.enumerated() {
            results.append(
                Measurement(
                    section: "candidate", name: "\(threads) thread\(threads == 1 ? "" : "s"): \(name)",
                    unit: "ns", samples: samples[index]))
        }
    }

    // The adapters against their floors, as many threads on each.
    let locked = try LockedRateLimiter(try endlessBucket(), clock: ContinuousClock())
    let atomic = AtomicGCRA(try endlessGCRA(), clock: ContinuousClock())
    let atomicGCRA = BareAtomicGCRA(BareGCRA(burst: 1 << 40, interval: 1))
    let dispatch = try DispatchRateLimiter(try endlessBucket(), clock: ContinuousClock())
    let queue = DispatchQueue(label: "bench.contended")
    let actor = try ActorRateLimiter(try endlessBucket(), clock: ContinuousClock())
    let empty = EmptyActor()
    let lockBody: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if case .granted = locked.tryAcquire() { checksum &+= 1 } }
        return checksum
    }
    let atomicFloor = atomicGCRA.readingLoop()
    let atomicBody: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if atomic.tryAcquire().isAdmitted { checksum &+= 1 } }
        return checksum
    }
    let syncFloor: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { queue.sync { checksum &+= 1 } }
        return checksum
    }
    let dispatchBody: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if case .granted = dispatch.tryAcquire() { checksum &+= 1 } }
        return checksum
    }
    for threads in [2, 4] {
        let label = "\(threads) threads"
        group(
            "\(label): clock read + the adapter's lock + bucket arithmetic",
            plan.timeContended(threads: threads, operations: operations / threads, [shellFloor, lockBody]),
            [("\(label): lock tryAcquire", nil)])
        group(
            "\(label): atomic compare-exchange + clock read + GCRA arithmetic",
            plan.timeContended(threads: threads, operations: operations / threads, [atomicFloor, atomicBody]),
            [("\(label): atomic GCRA tryAcquire", nil)])
        group(
            "\(label): empty DispatchQueue.sync",
            plan.timeContended(threads: threads, operations: operations / 20 / threads, [syncFloor, dispatchBody]),
            [("\(label): Dispatch tryAcquire", threads == 2 ? 2 : nil)])
        group(
            "\(threads) tasks: empty actor call",
            await plan.timeContended(
                tasks: threads, operations: operations / 8 / threads,
                [
                    { count in
                        var checksum = 0
                        for _ in 0..<count { checksum &+= await empty.call() }
                        return checksum
                    },
                    { count in
                        var checksum = 0
                        for _ in 0..<count { if case .granted = await actor.tryAcquire() { checksum &+= 1 } }
                        return checksum
                    },
                ]), [("\(threads) tasks: actor tryAcquire", threads == 2 ? 1.5 : nil)])
    }

    // The keyed path: one registry of 10,000 held keys in 16 shards (REG-13), requested in a
    // seeded random order by one thread, then by two threads on keys of their own (each half the
    // keys), then by two threads on all of them; and the same registry in one shard by two
    // threads on keys of their own. Against one thread, two on distinct keys must give 1.6 times
    // the throughput: at most 0.625x the cost per request of both together. Each thread makes a
    // million requests a run (25 to 70 ms): at a quarter of that, a run's first requests, which
    // fetch the thread's 320 KB of rows from the other core's cache, weighed on the result.
    let keyCount = plan.smoke ? 1_000 : 10_000
    let keys = smallKeys(keyCount)
    let rule = try RateLimitRule(.anyKey, try endlessBucket())
    let registry = try LockedRateLimitRegistry(rules: [rule], maximumKeys: keyCount, clock: ContinuousClock())
    let oneShard = try LockedRateLimitRegistry(
        rules: [rule], maximumKeys: keyCount, shards: 1, clock: ContinuousClock())
    for key in keys {
        _ = registry.tryAcquire(key)
        _ = oneShard.tryAcquire(key)
    }
    let all = requestOrder(keys)
    let halves = [requestOrder(Array(keys[..<(keyCount / 2)])), requestOrder(Array(keys[(keyCount / 2)...]))]
    func requests(
        _ registry: LockedRateLimitRegistry<TokenBucket, ContinuousClock>
    ) -> @Sendable ([String], Int, Int) -> Int {
        { order, offset, count in
            let mask = order.count - 1
            var checksum = 0
            for index in 0..<count {
                if case .granted = registry.tryAcquire(order[(index &+ offset) & mask]) { checksum &+= 1 }
            }
            return checksum
        }
    }
    let sharded = requests(registry)
    let unsharded = requests(oneShard)
    // The bound: the same requests on `BareParallelRows` (slot, lock word, clock, a row's arithmetic).
    let rows = BareParallelRows(keys: keyCount, bucket())
    let position = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
    let allIndices = all.map { position[$0]! }
    let halvesIndices = halves.map { $0.map { position[$0]! } }
    let bare: @Sendable ([Int], Int, Int) -> Int = { order, offset, count in
        let mask = order.count - 1
        var checksum: Int64 = 0
        for index in 0..<count { checksum &+= rows.acquire(order[(index &+ offset) & mask]) }
        return Int(truncatingIfNeeded: checksum)
    }
    // Interleaved: one thread is run as two of which the second does nothing and the first does
    // both counts, so that its time per request is the total's over both counts.
    let samples = plan.timeContended(
        threads: 2, operations: operations,
        indexed: [
            { thread, count in thread == 0 ? sharded(all, 0, 2 * count) : 0 },
            { thread, count in sharded(halves[thread], 0, count) },
            { thread, count in sharded(all, thread * all.count / 2, count) },
            { thread, count in unsharded(halves[thread], 0, count) },
            { thread, count in thread == 0 ? bare(allIndices, 0, 2 * count) : 0 },
            { thread, count in bare(halvesIndices[thread], 0, count) },
        ])
    let single = Measurement(
        section: "floor", name: "1 thread: lock registry tryAcquire, \(keyCount) keys", unit: "ns", samples: samples[0])
    results.append(single)
    // The bound, one thread then two on distinct keys. The registry's admission in parallel does
    // at least what it does, on the same lines, so the registry's two threads take at least the
    // bound's time: when even that is over 1/1.6 of the registry's one thread, the target is out
    // of reach (the bound's own gain proves nothing: more work per request dilutes what is shared).
    let bareName = "reader slot + lock word read + clock read + a 64-byte row's bucket arithmetic under its lock"
    let bareSingle = Measurement(
        section: "floor", name: "1 thread: \(bareName), \(keyCount) keys", unit: "ns", samples: samples[4])
    results.append(bareSingle)
    var bareDistinct = Measurement(
        section: "bound", name: "2 threads on distinct keys: \(bareName), \(keyCount) keys",
        unit: "ns", samples: samples[5]
    ).compared(with: single, atMost: nil, paired: true)
    let bareGain = Measurement.median(zip(samples[4], samples[5]).map { $0 / max($1, 1e-9) })
    bareDistinct.note = String(format: "%.2fx its one thread's throughput", bareGain)
    let reachable = (bareDistinct.ratio ?? 0) <= 1 / 1.6
    if !reachable { bareDistinct.note! += "; already over 1/1.6 of the registry's one thread" }
    results.append(bareDistinct)
    var distinct = Measurement(
        section: "contention", name: "2 threads on distinct keys: lock registry tryAcquire, \(keyCount) keys",
        unit: "ns", samples: samples[1]
    ).compared(with: single, atMost: 1 / 1.6, paired: true)
    let gain = Measurement.median(zip(samples[0], samples[1]).map { $0 / max($1, 1e-9) })
    distinct.note = String(format: "%.2fx one thread's throughput", gain)
    distinct.outOfReach = !reachable
    results.append(distinct)
    var shared = Measurement(
        section: "contention", name: "2 threads on the same keys: lock registry tryAcquire, \(keyCount) keys",
        unit: "ns", samples: samples[2]
    ).compared(with: single, atMost: nil, paired: true)
    shared.note = String(format: "%.2fx one thread's throughput", single.median / max(shared.median, 1e-9))
    results.append(shared)
    var oneShardDistinct = Measurement(
        section: "contention", name: "2 threads on distinct keys, one shard, \(keyCount) keys",
        unit: "ns", samples: samples[3]
    ).compared(with: single, atMost: nil, paired: true)
    oneShardDistinct.note = String(
        format: "%.2fx one thread's throughput", single.median / max(oneShardDistinct.median, 1e-9))
    results.append(oneShardDistinct)
    withExtendedLifetime((registry, oneShard)) {}
    return results
}
