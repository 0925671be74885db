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

@Suite("Admissions in parallel (REG-13 item 5)")
struct ParallelAdmissionTests {
    /// `threads` threads on `keys` keys, `requests` random requests each (seeded): every key
    /// admits exactly its capacity, the totals and each key's count agree with the outcomes.
    func exactAdmissions(threads: Int, keys keyCount: Int, requests: Int, shards: Int, trace: Int) throws {
        let capacity: Int64 = 40
        let bucket = try TokenBucket(capacity: capacity, permitsPerPeriod: 1, periodNanoseconds: 1_000)
        let registry = try LockedRateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, bucket)], maximumKeys: keyCount, shards: shards, clock: ManualClock())
        let keys = (0..<keyCount).map { "key-\($0)" }
        for key in keys { _ = registry.tryAcquire(key, permits: 0) }  // held: later requests may go in parallel
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
        // Twice: the first batch's slots are given back when its threads end.
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
                // Creates keys (the table grows from tens of rows to thousands), removing most again.
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
        "REG-13 an operation that changes the registry waits for admissions in parallel: none is granted after a throttle or close returns"
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
        // Keys are throttled in order: those below `throttled` had their throttle return.
        let throttled = Atomic<Int>(0)
        let closed = Atomic<Bool>(false)
        let late = Atomic<Int>(0)
        let replay = TestSeed.replay("ParallelAdmissionTests", trace: 4)
        let stop = Atomic<Bool>(false)
        together(3) { thread in
            if thread == 0 {
                // Throttles every key, one by one, each flagged once its call returned; then closes.
                for (index, key) in keys.enumerated() {
                    registry.throttle(key, for: .seconds(3_600))
                    throttled.store(index + 1, ordering: .sequentiallyConsistent)
                }
                registry.close()
                closed.store(true, ordering: .sequentiallyConsistent)
                stop.store(true, ordering: .sequentiallyConsistent)
                return
            }
            var index = thread
            while !stop.load(ordering: .sequentiallyConsistent) {
                index = (index &* 31 &+ 7) & 63
                // Read before the request starts: a call made after the throttle returned.
                let after = index < throttled.load(ordering: .sequentiallyConsistent)
                let afterClose = closed.load(ordering: .sequentiallyConsistent)
                let outcome = registry.tryAcquire(keys[index])
                if case .granted = outcome, after || afterClose { late.add(1, ordering: .relaxed) }
                if afterClose, outcome != .closed { late.add(1, ordering: .relaxed) }
            }
        }
        holds(
            late.load(ordering: .relaxed) == 0,
            "\(late.load(ordering: .relaxed)) answers ignored a change that had returned", replay: replay)
    }
}
