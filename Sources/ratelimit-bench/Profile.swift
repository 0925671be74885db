// `ratelimit-bench --profile <case>`: one loop and nothing else, to run under valgrind's callgrind
// (`valgrind --tool=callgrind .build/release/ratelimit-bench --profile registry`).

import Dispatch
import RateLimitActor
import RateLimitAtomic
import RateLimitClock
import RateLimitCore
import RateLimitDispatch
import RateLimitLock
import Synchronization

/// The cases by name; each loop is a function of its own, so that what the optimizer inlines into
/// one case does not depend on the others (in one large function, adding a case changed another's
/// count by 90 instructions per operation).
let profiles: KeyValuePairs<String, @Sendable (Int) throws -> Int> = [
    "wait-queue": profileWaitQueue,
    "lock": profileLock,
    "lock-floor": profileLockFloor,
    "actor": profileActor,
    "dispatch": profileDispatch,
    "dispatch-floor": profileDispatchFloor,
    "registry": profileRegistry,
    "lock-registry": profileLockRegistry,
    "lock-registry-2": profileLockRegistryTwoThreads,
    "registry-1m": profileRegistryMillion,
    "actor-registry-1m": profileActorRegistryMillion,
    "random-read": profileRandomRead,
    "atomic": profileAtomic,
    "atomic-stopped": profileAtomicStopped,
    "lock-stopped": profileLockStopped,
    "atomic-floor": profileAtomicFloor,
    "lock-coarse": profileLockCoarse,
    "lock-coarse-floor": profileLockCoarseFloor,
    "atomic-coarse": profileAtomicCoarse,
    "atomic-coarse-floor": profileAtomicCoarseFloor,
    "token-bucket": profileTokenBucket,
]
let profileCases = profiles.map(\.key)

func profile(_ name: String, count: Int) throws {
    guard let loop = profiles.first(where: { $0.key == name })?.value else {
        print("unknown profile case \(name); one of \(profileCases.joined(separator: ", "))")
        return
    }
    sink &+= try loop(count)
}

@inline(never)
func profileWaitQueue(count: Int) throws -> Int {
    var checksum = 0
    var queue = try WaitQueue(try endlessBucket(), queueLimit: 0, at: .origin)
    for index in 0..<count {
        if case .granted = queue.tryAcquire(1, priority: .normal, at: instant(Int64(index))).0 { checksum &+= 1 }
    }
    return checksum
}

@inline(never)
func profileLock(count: Int) throws -> Int { try lockLoop(ContinuousClock(), count: count) }

@inline(never)
func profileLockFloor(count: Int) throws -> Int { lockFloorLoop(count: count) { $0.acquire(readingClock: true) } }

@inline(never)
func profileActor(count: Int) throws -> Int {
    var checksum = 0
    let limiter = try ActorRateLimiter(try endlessBucket(), clock: ContinuousClock())
    // Valgrind cannot follow the cooperative pool's threads: profile this one with `perf`.
    let done = DispatchSemaphore(value: 0)
    let granted = Atomic(0)
    Task.detached {
        for _ in 0..<count { if case .granted = await limiter.tryAcquire() { granted.add(1, ordering: .relaxed) } }
        done.signal()
    }
    done.wait()
    checksum = granted.load(ordering: .relaxed)
    return checksum
}

@inline(never)
func profileDispatch(count: Int) throws -> Int {
    var checksum = 0
    let limiter = try DispatchRateLimiter(try endlessBucket(), clock: ContinuousClock())
    for _ in 0..<count { if case .granted = limiter.tryAcquire() { checksum &+= 1 } }
    return checksum
}

@inline(never)
func profileDispatchFloor(count: Int) throws -> Int {
    var checksum = 0
    let queue = DispatchQueue(label: "ratelimit-bench.profile")
    for _ in 0..<count { queue.sync { checksum &+= 1 } }
    return checksum
}

@inline(never)
func profileRegistry(count: Int) throws -> Int {
    var checksum = 0
    let keys = (0..<10_000).map { "endpoint-\($0)" }
    var registry = try RateLimitRegistry(
        rules: [try RateLimitRule(.anyKey, try endlessBucket())], maximumKeys: 10_000, at: .origin)
    for index in 0..<count {
        if case .granted = registry.tryAcquire(
            keys[index % 10_000], permits: 1, priority: .normal, at: instant(Int64(index))
        ).outcome {
            checksum &+= 1
        }
    }
    return checksum
}

@inline(never)
func profileRegistryMillion(count: Int) throws -> Int {
    var checksum = 0
    var registry = try RateLimitRegistry(
        rules: [try RateLimitRule(.anyKey, try endlessBucket())], maximumKeys: 1_000_000, at: .origin)
    try heldKeys(1_000_000, count: count) { key, index in
        if case .granted = registry.tryAcquire(key, at: instant(Int64(index))).outcome { checksum &+= 1 }
    }
    return checksum
}

@inline(never)
func profileActorRegistryMillion(count: Int) throws -> Int {
    let registry = try ActorRateLimitRegistry(
        rules: [try RateLimitRule(.anyKey, try endlessBucket())], maximumKeys: 1_000_000, clock: ContinuousClock())
    let keys = smallKeys(1_000_000)
    let order = requestOrder(keys)
    // Under `perf`, as the actor case: the cooperative pool's threads.
    let done = DispatchSemaphore(value: 0)
    let granted = Atomic(0)
    Task.detached {
        for key in keys { _ = await registry.tryAcquire(key) }
        for index in 0..<count {
            if case .granted = await registry.tryAcquire(order[index & (order.count - 1)]) {
                granted.add(1, ordering: .relaxed)
            }
        }
        done.signal()
    }
    done.wait()
    return granted.load(ordering: .relaxed)
}

@inline(never)
func profileRandomRead(count: Int) throws -> Int {
    var checksum = 0
    let table = RandomReadTable(bytes: 64_000_000)
    let single = try LockedRateLimiter(try endlessBucket(), clock: ContinuousClock())
    var next = 0
    for index in 0..<count {
        table.prefetch(next)
        if case .granted = single.tryAcquire() { checksum &+= 1 }
        next = index &+ 1 &+ Int(truncatingIfNeeded: table.read(next))
    }
    return checksum &+ next
}

@inline(never)
func profileLockRegistry(count: Int) throws -> Int {
    var checksum = 0
    let registry = try LockedRateLimitRegistry(
        rules: [try RateLimitRule(.anyKey, try endlessBucket())], maximumKeys: 10_000, clock: ContinuousClock())
    try heldKeys(10_000, count: count) { key, _ in if case .granted = registry.tryAcquire(key) { checksum &+= 1 } }
    return checksum
}

/// Two threads on keys of their own, 5,000 each, of one lock registry: `count` requests each.
@inline(never)
func profileLockRegistryTwoThreads(count: Int) throws -> Int {
    let registry = try LockedRateLimitRegistry(
        rules: [try RateLimitRule(.anyKey, try endlessBucket())], maximumKeys: 10_000, clock: ContinuousClock())
    let keys = smallKeys(10_000)
    for key in keys { _ = registry.tryAcquire(key) }
    let halves = [requestOrder(Array(keys[..<5_000])), requestOrder(Array(keys[5_000...]))]
    let granted = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: 2) { thread in
        let order = halves[thread]
        var checksum = 0
        for index in 0..<count { if case .granted = registry.tryAcquire(order[index % order.count]) { checksum &+= 1 } }
        granted.add(checksum, ordering: .relaxed)
    }
    return granted.load(ordering: .relaxed)
}

/// Makes `keyCount` keys, requests each once (creating it), then `count` requests in random order.
func heldKeys(_ keyCount: Int, count: Int, _ request: (String, Int) throws -> Void) throws {
    let keys = smallKeys(keyCount)
    for (index, key) in keys.enumerated() { try request(key, index) }
    let order = requestOrder(keys)
    for index in 0..<count { try request(order[index & (order.count - 1)], index) }
}

@inline(never)
func profileAtomic(count: Int) throws -> Int { try atomicLoop(ContinuousClock(), count: count) }

@inline(never)
func profileAtomicStopped(count: Int) throws -> Int { try atomicLoop(StoppedClock(now: .now), count: count) }

@inline(never)
func profileLockStopped(count: Int) throws -> Int { try lockLoop(StoppedClock(now: .now), count: count) }

@inline(never)
func profileAtomicFloor(count: Int) throws -> Int { atomicFloorLoop(count: count) { $0.acquire(readingClock: true) } }

@inline(never)
func profileTokenBucket(count: Int) throws -> Int {
    var checksum = 0
    var limiter = RateLimiter(
        try TokenBucket(capacity: 100, permitsPerPeriod: 1, periodNanoseconds: 1_000), at: .origin)
    for index in 0..<count { checksum &+= Int(limiter.acquire(1, at: instant(Int64(index) * 1_000)).remaining ?? 0) }
    return checksum
}

@inline(never)
func profileLockCoarse(count: Int) throws -> Int { try lockLoop(CoarseMonotonicClock(), count: count) }

@inline(never)
func profileAtomicCoarse(count: Int) throws -> Int { try atomicLoop(CoarseMonotonicClock(), count: count) }

@inline(never)
func profileLockCoarseFloor(count: Int) throws -> Int { lockFloorLoop(count: count) { $0.acquireCoarse() } }

@inline(never)
func profileAtomicCoarseFloor(count: Int) throws -> Int { atomicFloorLoop(count: count) { $0.acquireCoarse() } }

/// The lock floor's `acquire`, `count` times.
@inline(__always)
func lockFloorLoop(count: Int, _ acquire: (BareConditionBucket) -> Int64) -> Int {
    var checksum = 0
    let bucket = BareConditionBucket(BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
    for _ in 0..<count { checksum &+= Int(truncatingIfNeeded: acquire(bucket)) }
    return checksum
}

/// The atomic floor's `acquire`, `count` times.
@inline(__always)
func atomicFloorLoop(count: Int, _ acquire: (BareAtomicGCRA) -> Int64) -> Int {
    var checksum = 0
    let limiter = BareAtomicGCRA(BareGCRA(burst: 1 << 40, interval: 1))
    for _ in 0..<count { checksum &+= Int(truncatingIfNeeded: acquire(limiter)) }
    return checksum
}

/// The lock adapter's `tryAcquire` on `clock`, `count` times.
func lockLoop<C: Clock>(_ clock: C, count: Int) throws -> Int where C.Duration == Duration {
    var checksum = 0
    let limiter = try LockedRateLimiter(try endlessBucket(), clock: clock)
    for _ in 0..<count { if case .granted = limiter.tryAcquire() { checksum &+= 1 } }
    return checksum
}

/// The atomic GCRA's `tryAcquire` on `clock`, `count` times.
func atomicLoop<C: Clock>(_ clock: C, count: Int) throws -> Int where C.Duration == Duration {
    var checksum = 0
    let limiter = AtomicGCRA(try endlessGCRA(), clock: clock)
    for _ in 0..<count { if limiter.tryAcquire().isAdmitted { checksum &+= 1 } }
    return checksum
}
