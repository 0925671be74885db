import CHeapStatistics
import Foundation
import RateLimitActor
import RateLimitAtomic
import RateLimitClock
import RateLimitCore
import RateLimitDispatch
import RateLimitLock

// Grant latency and memory (Cases.swift has the shared helpers).

// MARK: Grant latency

/// How late a waiting `acquire` is granted once its permit is available: GCRA with one permit per
/// 2 ms and no burst; each round takes the permit at once, then waits for the next one. The
/// lateness is the return of the waiting call minus (the start of the first call + 2 ms): an upper
/// bound, by the first call's own duration (well under a microsecond).
func grantLatency(plan: Plan) async throws -> [Measurement] {
    let rounds = plan.smoke ? 2 : 60
    let interval = Duration.milliseconds(2)
    let gcra = try GCRA(burst: 1, emissionInterval: interval)
    var results: [Measurement] = []
    /// Rounds of: wait for a whole interval, then `acquire` twice (at once, then waiting).
    func measure(_ name: String, _ acquire: () async throws -> Void) async throws {
        var samples: [Double] = []
        for _ in 0..<rounds {
            try await ContinuousClock().sleep(for: interval * 2)
            let start = ContinuousClock.now
            try await acquire()
            try await acquire()
            samples.append(nanoseconds(start.duration(to: .now) - interval) / 1_000)
        }
        results.append(Measurement(section: "grant latency", name: name, unit: "µs", samples: samples))
    }
    let actor = try ActorRateLimiter(gcra, queueLimit: 1, clock: ContinuousClock())
    try await measure("actor: acquire, waiting") { _ = try await actor.acquire() }
    let locked = try LockedRateLimiter(gcra, queueLimit: 1, clock: ContinuousClock())
    try await measure("lock: acquire, waiting") { _ = try await locked.acquire() }
    let dispatch = try DispatchRateLimiter(gcra, queueLimit: 1, clock: ContinuousClock())
    try await measure("Dispatch: acquire, waiting") {
        _ = await withCheckedContinuation { done in dispatch.acquire { done.resume(returning: $0) } }
    }
    let atomic = AtomicGCRA(gcra, clock: ContinuousClock())
    try await measure("atomic GCRA: acquire, waiting") { _ = try await atomic.acquire() }
    return results
}

// MARK: Memory

func memory(plan: Plan) throws -> [Measurement] {
    var results: [Measurement] = []
    func layout<S: RateLimitStrategy>(_ name: String, _: S.Type) {
        results.append(
            Measurement(
                section: "memory", name: "\(name) state (MemoryLayout size)", unit: "B",
                samples: [Double(MemoryLayout<S.State>.size)],
                note: "stride \(MemoryLayout<S.State>.stride), with configuration \(MemoryLayout<RateLimiter<S>>.size)")
        )
    }
    layout("token-bucket", TokenBucket.self)
    layout("token-bucket-interval", IntervalTokenBucket.self)
    layout("gcra", GCRA.self)
    layout("pay-later", PayLater.self)
    layout("warm-up", WarmUp.self)
    layout("fixed-window", FixedWindow.self)
    layout("sliding-window-log", SlidingWindowLog.self)
    layout("sliding-window-counter", SlidingWindowCounter.self)
    layout("sliding-window-segments", SlidingWindowSegments.self)
    layout("leaky-bucket-meter", LeakyBucketMeter.self)
    layout("leaky-bucket-queue", LeakyBucketQueue.self)
    layout("concurrency", ConcurrencyLimiter.self)

    // Measured on the heap: a registry holding 10,000 keys (REG-8: under 1 MB), and one at its
    // maximum of 1,000,000 keys whose keys go idle and are forgotten as new ones arrive. Keys of
    // at most 15 UTF-8 bytes live inline in their `String` (16 bytes in the entry): the key's own
    // bytes; everything else the registry allocates is counted against the 64 B per key target.
    let keyCount = plan.smoke ? 100 : 10_000
    let keys = smallKeys(keyCount)
    let bucket = try TokenBucket(capacity: 10, permitsPerPeriod: 10, period: .seconds(1))
    let before = ratelimit_heap_bytes_in_use()
    var registry = try RateLimitRegistry(
        rules: [try RateLimitRule(.anyKey, bucket)], maximumKeys: keyCount, at: .origin)
    for key in keys { _ = registry.tryAcquire(key, permits: 1, priority: .normal, at: .origin) }
    let after = ratelimit_heap_bytes_in_use()
    let registryBytes = Double(Int(after) - Int(before))
    withExtendedLifetime((registry, keys)) {}  // freed before the reading, they would count against it
    var total = Measurement(
        section: "memory", name: "registry with \(keyCount) keys (heap)", unit: "B", samples: [registryBytes],
        note: String(format: "%.1f B per key", registryBytes / Double(keyCount)))
    if !plan.smoke { total.absoluteTarget = 1_000_000 }
    results.append(total)

    let manyCount = plan.smoke ? 1_000 : 1_000_000
    let many = smallKeys(manyCount * 2)
    let beforeMany = ratelimit_heap_bytes_in_use()
    var evicting = try RateLimitRegistry(
        rules: [try RateLimitRule(.anyKey, bucket)], maximumKeys: manyCount, at: .origin)
    for key in many[..<manyCount] { _ = evicting.tryAcquire(key, permits: 1, priority: .normal, at: .origin) }
    // A second later every bucket is full again, so every key is idle: the next key forgets them
    // all, and the new keys take their slots.
    let later = instant(1_000_000_000)
    for key in many[manyCount...] { _ = evicting.tryAcquire(key, permits: 1, priority: .normal, at: later) }
    let afterMany = ratelimit_heap_bytes_in_use()
    let perKey = Double(Int(afterMany) - Int(beforeMany)) / Double(manyCount)
    let held = evicting.keyCount
    withExtendedLifetime((evicting, many)) {}
    var idle = Measurement(
        section: "memory", name: "registry at \(manyCount) idle-evicting keys, per key beyond the key's 16", unit: "B",
        samples: [perKey - Double(MemoryLayout<String>.size)],
        note: String(format: "%.1f B per key in all; %d keys held after the second %d", perKey, held, manyCount))
    if !plan.smoke { idle.absoluteTarget = 64 }
    results.append(idle)

    let limit: Int64 = 1_000
    let beforeLog = ratelimit_heap_bytes_in_use()
    var log = RateLimiter(try SlidingWindowLog(limit: limit, window: .seconds(60)), at: .origin)
    for step in 0..<limit { _ = log.acquire(1, at: instant(step)) }
    let afterLog = ratelimit_heap_bytes_in_use()
    withExtendedLifetime(log) {}
    let logBytes = Double(Int(afterLog) - Int(beforeLog))
    results.append(
        Measurement(
            section: "memory", name: "sliding-window-log at its limit of \(limit) (heap)", unit: "B",
            samples: [logBytes],
            note: String(format: "%.1f B per logged admission", logBytes / Double(limit))))
    results += try waiterMemory(plan: plan)
    return results
}

/// What a waiting request costs, at the adapters' default queue limit (`WaitQueue.defaultQueueLimit`,
/// 1,000 one-permit waiters): in the pure queue, and in the Dispatch adapter with its callbacks
/// (no task: the callback is all a caller leaves with it).
func waiterMemory(plan: Plan) throws -> [Measurement] {
    let count = plan.smoke ? 100 : WaitQueue<GCRA>.defaultQueueLimit
    // Nothing is ever admitted again within the test: every request waits.
    let never = try GCRA(burst: 1, emissionIntervalNanoseconds: Int64.max / 4)
    let beforeQueue = ratelimit_heap_bytes_in_use()
    var queue = try WaitQueue(never, queueLimit: count, at: .origin)
    _ = queue.tryAcquire(1, priority: .normal, at: .origin)
    for _ in 0..<count { _ = queue.acquire(1, at: .origin) }
    let afterQueue = ratelimit_heap_bytes_in_use()
    let waiting = queue.waitingCount
    withExtendedLifetime(queue) {}
    let queueBytes = Double(Int(afterQueue) - Int(beforeQueue))

    let clock = StoppedClock(now: ContinuousClock.now)
    let beforeDispatch = ratelimit_heap_bytes_in_use()
    let limiter = try DispatchRateLimiter(never, queueLimit: count, clock: clock)
    _ = limiter.tryAcquire()
    for _ in 0..<count { limiter.acquire { _ in } }
    let afterDispatch = ratelimit_heap_bytes_in_use()
    withExtendedLifetime(limiter) {}
    let dispatchBytes = Double(Int(afterDispatch) - Int(beforeDispatch))
    limiter.close()
    return [
        Measurement(
            section: "memory", name: "wait queue with \(count) waiters (heap)", unit: "B", samples: [queueBytes],
            note: String(format: "%.1f B per waiter; %d waiting", queueBytes / Double(count), waiting)),
        Measurement(
            section: "memory", name: "Dispatch limiter with \(count) waiting callbacks (heap)", unit: "B",
            samples: [dispatchBytes], note: String(format: "%.1f B per waiter", dispatchBytes / Double(count))),
    ]
}

extension Measurement {
    /// This result compared with `floor`, with the largest ratio allowed (`nil`: none); `paired`
    /// when the two were measured interleaved, repetition by repetition.
    func compared(with floor: Measurement, atMost ratio: Double?, paired: Bool = false) -> Measurement {
        var result = self
        result.floor = floor.name
        result.floorMedian = floor.median
        result.pairedFloorSamples = paired ? floor.samples : nil
        result.ratioTarget = ratio
        return result
    }
}
