import CHeapStatistics
import Foundation
import RateLimitActor
import RateLimitAtomic
import RateLimitClock
import RateLimitCore
import RateLimitDispatch
import RateLimitLock

// The adapters against their floors (Cases.swift has the shared helpers).

// MARK: Adapters

func adapters(plan: Plan) async throws -> [Measurement] {
    let operations = 1_000_000
    let origin = ContinuousClock.now
    var results: [Measurement] = []
    /// Appends the floor and the adapters measured interleaved with it (`samples[0]` is the floor's).
    @discardableResult
    func group(
        _ floorName: String, _ samples: [[Double]], _ adapters: [(name: String, ratio: Double?)],
        underMicrosecond: Bool = false, section: String = "adapter"
    ) -> Measurement {
        let floor = Measurement(section: "floor", name: floorName, unit: "ns", samples: samples[0])
        results.append(floor)
        for (index, adapter) in adapters.enumerated() {
            var result = Measurement(section: section, name: adapter.name, unit: "ns", samples: samples[index + 1])
                .compared(with: floor, atMost: adapter.ratio, paired: true)
            if underMicrosecond && adapter.ratio != nil { result.absoluteTarget = 1_000 }
            results.append(result)
        }
        return floor
    }

    /// The bound of an adapter whose target compares it with a bare `primitive` that does not read
    /// the clock: the primitive with the clock read and the arithmetic inside, measured in the
    /// same rounds. When the bound alone exceeds the target, the adapter's target is out of reach;
    /// the adapter's note gives its ratio to the bound (what its own code adds).
    func bound(
        _ name: String, _ samples: [Double], of primitive: Measurement, target: Double,
        adapter: String, adapterSamples: [Double]
    ) {
        var measured = Measurement(section: "bound", name: name, unit: "ns", samples: samples)
            .compared(with: primitive, atMost: nil, paired: true)
        let reachable = (measured.ratio ?? 0) <= target
        if !reachable { measured.note = "already over the adapter's \(target)x target" }
        results.append(measured)
        guard let index = results.lastIndex(where: { $0.name == adapter }) else { return }
        let own = Measurement.median(zip(adapterSamples, samples).map { $1 > 0 ? $0 / $1 : .infinity })
        results[index].note = String(format: "%.2fx the bound", own)
        results[index].outOfReach = !reachable
    }

    // The bare primitives.
    let shellBucket = BareShellLockBucket(BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
    let conditionBucket = BareConditionBucket(
        BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
    let nsLockBucket = BareLockBucket(BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
    let mutexBucket = BareMutexBucket(BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
    let atomicGCRA = BareAtomicGCRA(BareGCRA(burst: 1 << 40, interval: 1))
    let empty = EmptyActor()
    let queue = DispatchQueue(label: "bench.empty")
    let shellFloor = shellBucket.readingLoop()
    let atomicFloor = atomicGCRA.readingLoop()
    let dispatchFloor: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { queue.sync { checksum &+= 1 } }
        return checksum
    }
    let actorFloor: @Sendable (Int) async -> Int = { count in
        var checksum = 0
        for _ in 0..<count { checksum &+= await empty.call() }
        return checksum
    }

    // The adapters: with the continuous clock (as users call them) and with a clock that never
    // moves, each interleaved with its floor.
    let stopped = StoppedClock(now: .now)
    let locked = try LockedRateLimiter(try endlessBucket(), clock: ContinuousClock())
    let lockedStopped = try LockedRateLimiter(try endlessBucket(), clock: stopped)
    let lockAdapter: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if case .granted = locked.tryAcquire() { checksum &+= 1 } }
        return checksum
    }
    // The lock adapter, its floor, and the other locks and the clock read alone for comparison.
    let lockRound = plan.timeInterleaved(
        operations: operations,
        [
            shellFloor, lockAdapter,
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= clockNanoseconds(since: origin) }
                return Int(truncatingIfNeeded: checksum)
            },
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= conditionBucket.acquire(readingClock: true) }
                return Int(truncatingIfNeeded: checksum)
            },
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= nsLockBucket.acquire() }
                return Int(truncatingIfNeeded: checksum)
            },
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= mutexBucket.acquire() }
                return Int(truncatingIfNeeded: checksum)
            },
        ])
    group(
        "clock read + the adapter's lock + bucket arithmetic", Array(lockRound[0...1]),
        [("lock: tryAcquire", 1.3)], underMicrosecond: true)
    for (index, name) in [
        "one clock read (ContinuousClock.now)",
        "NSCondition lock + clock read + bucket arithmetic (the lock adapter's lock until issue 37)",
        "NSLock + clock read + bucket arithmetic",
        "Mutex + clock read + bucket arithmetic",
    ].enumerated() {
        results.append(Measurement(section: "floor", name: name, unit: "ns", samples: lockRound[index + 2]))
    }
    group(
        "the adapter's lock + bucket arithmetic",
        plan.timeInterleaved(
            operations: operations,
            [
                { count in
                    var checksum: Int64 = 0
                    for _ in 0..<count { checksum &+= shellBucket.acquire(readingClock: false) }
                    return Int(truncatingIfNeeded: checksum)
                },
                { count in
                    var checksum = 0
                    for _ in 0..<count { if case .granted = lockedStopped.tryAcquire() { checksum &+= 1 } }
                    return checksum
                },
            ]), [("lock: tryAcquire, clock never moves", nil)])

    let atomic = AtomicGCRA(try endlessGCRA(), clock: ContinuousClock())
    let atomicStopped = AtomicGCRA(try endlessGCRA(), clock: stopped)
    let atomicAdapter: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if atomic.tryAcquire().isAdmitted { checksum &+= 1 } }
        return checksum
    }
    group(
        "atomic compare-exchange + clock read + GCRA arithmetic",
        plan.timeInterleaved(
            operations: operations,
            [
                atomicFloor, atomicAdapter,
            ]), [("atomic GCRA: tryAcquire", 1.3)], underMicrosecond: true)
    group(
        "atomic compare-exchange + GCRA arithmetic",
        plan.timeInterleaved(
            operations: operations,
            [
                { count in
                    var checksum: Int64 = 0
                    for _ in 0..<count { checksum &+= atomicGCRA.acquire(readingClock: false) }
                    return Int(truncatingIfNeeded: checksum)
                },
                { count in
                    var checksum = 0
                    for _ in 0..<count { if atomicStopped.tryAcquire().isAdmitted { checksum &+= 1 } }
                    return checksum
                },
            ]), [("atomic GCRA: tryAcquire, clock never moves", nil)])

    // The coarse clock (CORE-17): the lock and atomic adapters on it, against the same floors
    // reading it (ratios printed), and their targets (issue 20: 25 ns and 10 ns), out of reach
    // when the floor measured beside them takes longer alone.
    let coarseOrigin = CoarseMonotonicClock.readNanoseconds()
    let lockedCoarse = try LockedRateLimiter(try endlessBucket(), clock: CoarseMonotonicClock())
    let atomicCoarse = AtomicGCRA(try endlessGCRA(), clock: CoarseMonotonicClock())
    let coarseRound = plan.timeInterleaved(
        operations: operations,
        [
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= shellBucket.acquireCoarse() }
                return Int(truncatingIfNeeded: checksum)
            },
            { count in
                var checksum = 0
                for _ in 0..<count { if case .granted = lockedCoarse.tryAcquire() { checksum &+= 1 } }
                return checksum
            },
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= atomicGCRA.acquireCoarse() }
                return Int(truncatingIfNeeded: checksum)
            },
            { count in
                var checksum = 0
                for _ in 0..<count { if atomicCoarse.tryAcquire().isAdmitted { checksum &+= 1 } }
                return checksum
            },
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= coarseNanoseconds(since: coarseOrigin) }
                return Int(truncatingIfNeeded: checksum)
            },
        ])
    let lockCoarseFloor = group(
        "coarse clock read + the adapter's lock + bucket arithmetic", Array(coarseRound[0...1]),
        [("lock: tryAcquire, coarse clock", nil)])
    let atomicCoarseFloor = group(
        "atomic compare-exchange + coarse clock read + GCRA arithmetic", Array(coarseRound[2...3]),
        [("atomic GCRA: tryAcquire, coarse clock", nil)])
    results.append(
        Measurement(
            section: "floor", name: "one coarse clock read (CoarseMonotonicClock)", unit: "ns", samples: coarseRound[4])
    )
    results.append(
        Measurement(
            section: "clock", name: "coarse clock resolution (clock_getres)", unit: "ns",
            samples: [nanoseconds(CoarseMonotonicClock.resolution)]))
    for (name, samples, floor, target) in [
        ("lock: tryAcquire, coarse clock, at most 25 ns", coarseRound[1], lockCoarseFloor, 25.0),
        ("atomic GCRA: tryAcquire, coarse clock, at most 10 ns", coarseRound[3], atomicCoarseFloor, 10.0),
    ] {
        var result = Measurement(section: "adapter", name: name, unit: "ns", samples: samples, absoluteTarget: target)
        if floor.median > target {
            result.outOfReach = true
            result.note = String(format: "its floor alone takes %.1f ns", floor.median)
        }
        results.append(result)
    }

    let actor = try ActorRateLimiter(try endlessBucket(), clock: ContinuousClock())
    let actorStopped = try ActorRateLimiter(try endlessBucket(), clock: stopped)
    let actorAdapter: @Sendable (Int) async -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if case .granted = await actor.tryAcquire() { checksum &+= 1 } }
        return checksum
    }
    let clockReadingActor = ClockReadingActor(
        BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
    let actorRound = await plan.timeInterleavedAsync(
        operations: operations / 4,
        [
            actorFloor, actorAdapter,
            { count in
                var checksum = 0
                for _ in 0..<count { if case .granted = await actorStopped.tryAcquire() { checksum &+= 1 } }
                return checksum
            },
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= await clockReadingActor.acquire() }
                return Int(truncatingIfNeeded: checksum)
            },
        ])
    let emptyCall = group(
        "empty actor call from another task", Array(actorRound[0...2]),
        [("actor: tryAcquire", 1.5), ("actor: tryAcquire, clock never moves", nil)], underMicrosecond: true)
    bound(
        "actor call + clock read + bucket arithmetic", actorRound[3], of: emptyCall, target: 1.5,
        adapter: "actor: tryAcquire", adapterSamples: actorRound[1])

    let dispatch = try DispatchRateLimiter(try endlessBucket(), clock: ContinuousClock())
    let dispatchStopped = try DispatchRateLimiter(try endlessBucket(), clock: stopped)
    let dispatchAdapter: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if case .granted = dispatch.tryAcquire() { checksum &+= 1 } }
        return checksum
    }
    let queueBucket = BareQueueBucket(BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
    let dispatchRound = plan.timeInterleaved(
        operations: operations / 4,
        [
            dispatchFloor, dispatchAdapter,
            { count in
                var checksum = 0
                for _ in 0..<count { if case .granted = dispatchStopped.tryAcquire() { checksum &+= 1 } }
                return checksum
            },
            { count in
                var checksum: Int64 = 0
                for _ in 0..<count { checksum &+= queueBucket.acquire() }
                return Int(truncatingIfNeeded: checksum)
            },
        ])
    let emptySync = group(
        "empty DispatchQueue.sync", Array(dispatchRound[0...2]),
        [("Dispatch: tryAcquire", 1.3), ("Dispatch: tryAcquire, clock never moves", nil)], underMicrosecond: true)
    bound(
        "DispatchQueue.sync + clock read + bucket arithmetic", dispatchRound[3], of: emptySync, target: 1.3,
        adapter: "Dispatch: tryAcquire", adapterSamples: dispatchRound[1])

    return results
}
