import Dispatch
import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitLock
import RateLimitTestSupport
import Synchronization
import Testing

// REG-13 item 5: the lock registry admits the common request on a held key without its shard's
// lock. These tests drive threads against it on a clock that never moves, where the exact answer
// is known: a bucket of `capacity` that never refills admits exactly `capacity` per key, whoever
// asks, whether a request took the lock or not.

/// Starts `threads` threads together (each waits for all to exist, so that they hold their
/// reader slots at once) and returns when every one has run `body(thread)`.
private func together(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let started = DispatchGroup()
    let done = DispatchGroup()
    let go = DispatchSemaphore(value: 0)
    for thread in 0..<threads {
        started.enter()
        done.enter()
        Thread {
            started.leave()
            go.wait()
            body(thread)
            done.leave()
        }.start()
    }
    started.wait()
    for _ in 0..<threads { go.signal() }
    done.wait()
}

/// Grants by key, from any thread.
private final class Tally: @unchecked Sendable {
    // @unchecked: `counts` is read and written only under `lock`. An NSLock, not Synchronization's
    // Mutex: ThreadSanitizer sees a pthread mutex's ordering, not the futex under Mutex on Linux.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func count(_ key: String) { lock.withLock { counts[key, default: 0] += 1 } }
    var granted: [String: Int] { lock.withLock { counts } }
}

/// A manual clock whose timers never fire: they sleep on a second manual clock nobody advances
/// (an injected clock's `sleep`, as `LaggingClock`'s: nothing waits in real time). What falls due
/// is then served only by the operations that REG-13 item 3 has serve it.
// @unchecked: both manual clocks are Sendable; nothing else is stored.
private final class TimerlessClock: Clock, @unchecked Sendable {
    typealias Instant = ManualClock.Instant
    let manual = ManualClock()
    private let never = ManualClock()
    var now: Instant { manual.now }
    var minimumResolution: Duration { .nanoseconds(1) }
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await never.sleep(until: deadline, tolerance: tolerance)
    }
}

@Suite("Admissions in parallel (REG-13 item 5)")
struct ParallelAdmissionTests {
    /// `threads` threads on `keys` keys, `requests` random requests each (seeded): every key
    /// admits exactly its capacity, the totals and each key's count agree with the outcomes.
    func exactAdmissions(threads: Int, keys keyCount: Int, requests: Int, shards: Int, trace: Int) throws {
        let capacity: Int64 = 40
        let bucket = try TokenBucket(capacity: capacity, permitsPerPeriod: 1, periodNanoseconds: 1_000)
        let registry = try LockedRateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, bucket)], maximumKeys: keyCount + 1, shards: shards, clock: ManualClock()
        )
        let keys = (0..<keyCount).map { "key-\($0)" }
        for key in keys { _ = registry.tryAcquire(key, permits: 0) }  // held: later requests may go in parallel
        // A wake-up posted for an hour away, in some shard: not due, it leaves admissions parallel.
        registry.throttle("throttled", for: .seconds(3_600))
        var seeding = TestSeed.generator("exactAdmissions", trace: trace)
        let seed = seeding.next()
        let replay = TestSeed.replay("ParallelAdmissionTests", trace: trace)
        let tally = Tally()
        together(threads) { thread in
            var rng = SeededGenerator(seed: seed, stream: "thread", index: thread)
            for _ in 0..<requests {
                // Half the threads keep to keys of their own half; the others ask every key.
                let key =
                    thread.isMultiple(of: 2) ? rng.pick(keys) : keys[Int(rng.int(in: 0...Int64(keyCount / 2 - 1))) * 2]
                if case .granted = registry.tryAcquire(key) { tally.count(key) }
            }
        }
        let granted = tally.granted
        for key in keys where granted[key, default: 0] != Int(capacity) {
            holds(false, "\(key) admitted \(granted[key, default: 0]) of a bucket of \(capacity)", replay: replay)
        }
        let total = granted.values.reduce(0, +)
        // Each key's first request, of 0 permits, is admitted too.
        holds(
            registry.totals.admitted == UInt64(total + keyCount), "totals \(registry.totals), \(total) granted",
            replay: replay)
        for key in keys.prefix(8) {
            holds(
                registry.quota(of: key)?.statistics.admitted == UInt64(granted[key, default: 0] + 1),
                "\(key)'s count \(String(describing: registry.quota(of: key)))", replay: replay)
        }
    }

    @Test(
        "REG-13 REG-9 threads admitting in parallel on shared and distinct keys admit exactly each bucket's capacity, counted once"
    )
    func exactOnSharedKeys() throws {
        for (trace, shards) in [16, 1].enumerated() {
            try exactAdmissions(threads: 4, keys: 64, requests: 4_000, shards: shards, trace: trace)
        }
    }

    @Test("REG-13 threads beyond the 64 reader slots take the shard's lock, and still admit exactly each capacity")
    func moreThreadsThanSlots() throws {
        // Twice: the second batch finds the slots its predecessors give back as they end (some
        // may still be ending), so it mixes threads with and without slots again.
        for trace in 2..<4 { try exactAdmissions(threads: 72, keys: 16, requests: 60, shards: 4, trace: trace) }
    }

    @Test(
        "REG-13 REG-9 keys created and removed while others admit in parallel (rows moving, the table growing) lose no admission"
    )
    func rowsMoveUnderAdmissions() throws {
        // A bucket that never runs out: every request is admitted, in parallel when it can be.
        let bucket = try TokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1_000)
        // One shard, so that every creation and removal moves rows of the table the keys are in.
        let registry = try LockedRateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, bucket)], maximumKeys: 4_096, shards: 1, clock: ManualClock())
        let held = (0..<32).map { "held-\($0)" }
        for key in held { _ = registry.tryAcquire(key, permits: 0) }
        let replay = TestSeed.replay("ParallelAdmissionTests", trace: 5)
        let tally = Tally()
        let stop = Atomic<Bool>(false)
        together(3) { thread in
            if thread == 0 {
                // Creates keys (the table grows from tens of rows to thousands), removing one in four
                // again: both move rows of the held keys.
                for round in 0..<4_000 {
                    _ = registry.tryAcquire("other-\(round)", permits: 0)
                    if round % 4 != 0 { _ = registry.remove("other-\(round - round % 4 + 1)") }
                }
                stop.store(true, ordering: .sequentiallyConsistent)
                return
            }
            var index = thread
            while !stop.load(ordering: .sequentiallyConsistent) {
                index = (index &* 13 &+ 5) & 31
                if case .granted = registry.tryAcquire(held[index]) { tally.count(held[index]) }
            }
        }
        // An admission written to a row as it moved would be missing from the key's count.
        let granted = tally.granted
        for key in held {
            let counted = registry.quota(of: key)?.statistics.admitted
            holds(
                counted == UInt64(granted[key, default: 0] + 1),
                "\(key) counted \(String(describing: counted)) admissions, granted \(granted[key, default: 0]) + 1",
                replay: replay)
        }
    }

    @Test(
        "REG-13 REG-11 a request on a held key first serves what another shard has due by its instant, as the locked path does"
    )
    func servesOtherShardsFirst() async throws {
        // Key "b" grants its waiter at 10 ns (its bucket refills then); at 20 ns a request on "a",
        // held, with quota to spare, in another shard (a fresh registry each round: 8 rounds, so
        // that "a" lies in "b"'s shard in all of them once in 16^8), must serve that grant first,
        // though its own admission needs no lock.
        let replay = TestSeed.replay("ParallelAdmissionTests", trace: 6)
        for _ in 0..<8 {
            let clock = TimerlessClock()
            let registry = try LockedRateLimitRegistry(
                rules: [
                    try RateLimitRule(
                        .exact("a"), try TokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1)),
                    try RateLimitRule(
                        .anyKey, try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 10),
                        overflow: .queue(limit: 1)),
                ],
                maximumKeys: 8, clock: clock)
            _ = registry.tryAcquire("a")
            _ = registry.tryAcquire("b")
            let waiter = Task { try await registry.acquire("b") }
            // Until the waiter has its place (a task on the cooperative pool); the clock stands still.
            var yields = 0
            while registry.waitingCount == 0, yields < 1_000_000 {
                await Task.yield()
                yields += 1
            }
            guard yields < 1_000_000 else {
                let outcome = await waiter.result
                holds(false, "b's acquire never waited: \(outcome)", replay: replay)
                return
            }
            clock.manual.advance(by: .nanoseconds(20))
            _ = registry.tryAcquire("a")
            holds(registry.waitingCount == 0, "b's waiter, due at 10 ns, still waits at 20 ns", replay: replay)
            registry.close()
            _ = await waiter.result
        }
    }

    @Test(
        "REG-13 WQ-9 admissions in parallel see a throttle or a close that returned: none granted after it, closed after close"
    )
    func changesExcludeAdmissions() throws {
        let registry = try LockedRateLimitRegistry(
            rules: [
                try RateLimitRule(
                    .anyKey, try TokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
            ],
            maximumKeys: 64, clock: ManualClock())
        let keys = (0..<64).map { "key-\($0)" }
        for key in keys { _ = registry.tryAcquire(key) }
        // The first 32 keys are throttled in order: those below `throttled` had their throttle
        // return. The other 32 are never throttled: after `close`, nothing but the closed check
        // keeps them from being admitted in parallel (the throttles' wake-ups are gone then).
        let throttled = Atomic<Int>(0)
        let closed = Atomic<Bool>(false)
        let late = Atomic<Int>(0)
        let replay = TestSeed.replay("ParallelAdmissionTests", trace: 4)
        together(3) { thread in
            if thread == 0 {
                for (index, key) in keys.prefix(32).enumerated() {
                    registry.throttle(key, for: .seconds(3_600))
                    throttled.store(index + 1, ordering: .sequentiallyConsistent)
                }
                registry.close()
                closed.store(true, ordering: .sequentiallyConsistent)
                return
            }
            var index = thread
            var afterClose = 0
            while afterClose < 2_000 {
                index = (index &* 31 &+ 7) & 63
                // Read before the request starts: a call made after the change returned.
                let wasThrottled = index < throttled.load(ordering: .sequentiallyConsistent)
                let wasClosed = closed.load(ordering: .sequentiallyConsistent)
                let outcome = registry.tryAcquire(keys[index])
                if case .granted = outcome, wasThrottled || wasClosed { late.add(1, ordering: .relaxed) }
                if wasClosed {
                    afterClose += 1
                    if outcome != .closed { late.add(1, ordering: .relaxed) }
                }
            }
        }
        holds(
            late.load(ordering: .relaxed) == 0,
            "\(late.load(ordering: .relaxed)) answers ignored a change that had returned", replay: replay)
    }
}
