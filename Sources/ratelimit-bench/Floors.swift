// The floors: the bare primitives each measurement is compared with, measured in the same run.
// The bare arithmetic answers what the model answers on the admitted path (the decision and the
// remaining quota) with the same integer operations, but with no validation, no overflow
// handling, no time-going-back rule and no result enum: what a hand-written limiter would do.

import CPrefetch
import CReaderSlots
import Foundation
import RateLimitClock
import RateLimitLock
import Synchronization

/// A token bucket in the fewest operations: refill (one division when a whole token is due),
/// take one, answer the tokens left or -1.
struct BareTokenBucket {
    let capacity: Int64
    let permitsPerPeriod: Int64
    let periodNanoseconds: Int64
    var tokens: Int64
    var fraction: Int64 = 0
    var last: Int64 = 0

    init(capacity: Int64, permitsPerPeriod: Int64, periodNanoseconds: Int64) {
        self.capacity = capacity
        self.permitsPerPeriod = permitsPerPeriod
        self.periodNanoseconds = periodNanoseconds
        tokens = capacity
    }

    @inline(__always)
    mutating func acquire(at now: Int64) -> Int64 {
        let elapsed = now - last
        last = now
        if elapsed > 0, tokens < capacity {
            let units = permitsPerPeriod &* elapsed &+ fraction
            if units < periodNanoseconds {
                fraction = units
            } else {
                let added = units / periodNanoseconds
                if added < capacity - tokens {
                    tokens += added
                    fraction = units % periodNanoseconds
                } else {
                    tokens = capacity
                    fraction = 0
                }
            }
        }
        guard tokens >= 1 else { return -1 }
        tokens -= 1
        return tokens
    }
}

/// GCRA in the fewest operations: admit when the theoretical arrival time is within the
/// tolerance, answer the requests left (one division) or -1.
struct BareGCRA {
    let interval: Int64
    let tolerance: Int64
    var tat: Int64 = 0

    init(burst: Int64, interval: Int64) {
        self.interval = interval
        tolerance = (burst - 1) * interval
    }

    @inline(__always)
    mutating func acquire(at now: Int64) -> Int64 {
        let current = max(tat, now)
        guard current - now <= tolerance else { return -1 }
        tat = current + interval
        return (tolerance - (tat - now)) / interval + 1
    }

    /// The same decision on a state held elsewhere (the atomic floor).
    @inline(__always)
    func decide(tat: Int64, at now: Int64) -> (tat: Int64, remaining: Int64)? {
        let current = max(tat, now)
        guard current - now <= tolerance else { return nil }
        let next = current + interval
        return (next, (tolerance - (next - now)) / interval + 1)
    }
}

/// One read of the continuous clock as nanoseconds since `origin`, converted as the adapters do
/// (one 128-by-64-bit division of the attoseconds; see `ClockTimeline`), with no range checks.
@inline(__always)
func clockNanoseconds(since origin: ContinuousClock.Instant) -> Int64 {
    let offset = origin.duration(to: ContinuousClock.now)
    return Int64(
        bitPattern: UInt64(1_000_000_000).dividingFullWidth((UInt64(bitPattern: offset._high), offset._low)).quotient)
}

/// One read of the coarse clock as nanoseconds since `origin` (a subtraction, as the adapters do).
@inline(__always)
func coarseNanoseconds(since origin: Int64) -> Int64 { CoarseMonotonicClock.readNanoseconds() &- origin }

/// An actor that only counts its calls: the cost of a call that hops onto an actor and back.
actor EmptyActor {
    private var calls = 0
    func call() -> Int {
        calls &+= 1
        return calls
    }
}

/// The least an actor adapter can do: one call on an actor that reads the clock and runs the bare
/// token bucket (the bound that shows how far an empty call is from any clock-reading adapter).
actor ClockReadingActor {
    private var bucket: BareTokenBucket
    private let origin = ContinuousClock.now

    init(_ bucket: BareTokenBucket) { self.bucket = bucket }

    func acquire() -> Int64 { bucket.acquire(at: clockNanoseconds(since: origin)) }
}

/// The least a Dispatch adapter can do: one `sync` on a serial queue that reads the clock and runs
/// the bare token bucket.
// @unchecked: `bucket` is private and read and written only inside `acquire`'s `queue.sync`;
// blocks on a serial queue never overlap, so the access is exclusive.
final class BareQueueBucket: @unchecked Sendable {
    private let queue = DispatchQueue(label: "bench.bound")
    private var bucket: BareTokenBucket
    private let origin = ContinuousClock.now

    init(_ bucket: BareTokenBucket) { self.bucket = bucket }

    func acquire() -> Int64 {
        var answer: Int64 = 0
        queue.sync { answer = bucket.acquire(at: clockNanoseconds(since: origin)) }
        return answer
    }
}

/// A bare NSCondition (the lock adapter's lock until issue 37) around the bare token bucket.
// @unchecked: `bucket` is private and read and written only in `acquire`, between its
// `condition.lock()` and the deferred unlock, so the access is exclusive.
final class BareConditionBucket: @unchecked Sendable {
    private let condition = NSCondition()
    private var bucket: BareTokenBucket
    private let origin = ContinuousClock.now
    private let coarseOrigin = CoarseMonotonicClock.readNanoseconds()

    init(_ bucket: BareTokenBucket) { self.bucket = bucket }

    @inline(__always)
    func acquire(readingClock: Bool) -> Int64 {
        condition.lock()
        defer { condition.unlock() }
        return bucket.acquire(at: readingClock ? clockNanoseconds(since: origin) : 1)
    }

    /// The clock read before the lock, as the lock adapter reads it (a candidate, "Contention").
    @inline(__always)
    func acquireReadingFirst() -> Int64 {
        let now = clockNanoseconds(since: origin)
        condition.lock()
        defer { condition.unlock() }
        return bucket.acquire(at: now)
    }

    /// The same with one read of the coarse clock.
    @inline(__always)
    func acquireCoarse() -> Int64 {
        condition.lock()
        defer { condition.unlock() }
        return bucket.acquire(at: coarseNanoseconds(since: coarseOrigin))
    }
}

/// A table larger than the caches, read at a pseudo-random row per request: what a keyed limiter
/// at least pays to fetch a key's state among a million (the keyed bound).
final class RandomReadTable: Sendable {
    private let words: [UInt64]
    private let shift: UInt64
    /// The table's size.
    var mebibytes: Int { words.count * 8 / 1_048_576 }

    /// A table of at least `bytes` (rounded up to a power of two rows of 64 bytes: no smaller than
    /// the table it stands for, whose size decides how often its reads miss the TLB), every page
    /// written.
    init(bytes: Int) {
        let rows = max(1, bytes / 64).nextPowerOfTwo
        words = Array(repeating: 1, count: rows * 8)  // written, so no page is the shared zero page
        shift = UInt64(Int.bitWidth - rows.trailingZeroBitCount)
    }

    /// 0, read from the row request `index` lands on (a multiplicative hash of it).
    @inline(__always)
    func read(_ index: Int) -> Int64 {
        Int64(bitPattern: words[row(index) &* 8]) &- 1
    }

    /// Starts fetching the row `read(index)` reads, as the registry shells prefetch a key's row.
    @inline(__always)
    func prefetch(_ index: Int) {
        words.withUnsafeBufferPointer { ratelimit_prefetch($0.baseAddress! + row(index) &* 8) }
    }

    @inline(__always)
    private func row(_ index: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }
}

/// A bare NSLock around the bare token bucket (for comparison with the condition).
// @unchecked: `bucket` is private and read and written only in `acquire`, inside `lock`'s
// critical section, so the access is exclusive.
final class BareLockBucket: @unchecked Sendable {
    private let lock = NSLock()
    private var bucket: BareTokenBucket
    private let origin = ContinuousClock.now

    init(_ bucket: BareTokenBucket) { self.bucket = bucket }

    @inline(__always)
    func acquire() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        return bucket.acquire(at: clockNanoseconds(since: origin))
    }
}

/// A floor that decides at an instant it is given, read from the continuous or the coarse clock.
protocol ClockedFloor: Sendable {
    var origin: ContinuousClock.Instant { get }
    var coarseOrigin: Int64 { get }
    func acquire(at now: Int64) -> Int64
}

extension ClockedFloor {
    /// Decides at the continuous clock's reading (1 ns when not `readingClock`: a clock that never moves).
    @inline(__always)
    func acquire(readingClock: Bool) -> Int64 { acquire(at: readingClock ? clockNanoseconds(since: origin) : 1) }

    /// The same with one read of the coarse clock.
    @inline(__always)
    func acquireCoarse() -> Int64 { acquire(at: coarseNanoseconds(since: coarseOrigin)) }

    /// A timed body: `count` decisions at the continuous clock's readings, in one loop (a closure
    /// called per decision retained and released its captures each time, on one shared object).
    func readingLoop() -> @Sendable (Int) -> Int {
        { count in
            var checksum: Int64 = 0
            for _ in 0..<count { checksum &+= acquire(readingClock: true) }
            return Int(truncatingIfNeeded: checksum)
        }
    }
}

/// The lock adapter's own lock (`ShellLock`: the state on the lock word's cache line, a short spin
/// before parking) around the bare token bucket, the clock read before the lock as the adapter
/// reads it: the lock adapter's floor.
// @unchecked: `bucket` (`lock.guarded`) is read and written only between `lock()` and `unlock()`; `lock` is
// made for use from any thread.
final class BareShellLockBucket: ClockedFloor, @unchecked Sendable {
    private let lock: ShellLock<BareTokenBucket>
    private let bucket: UnsafeMutablePointer<BareTokenBucket>
    let origin = ContinuousClock.now
    let coarseOrigin = CoarseMonotonicClock.readNanoseconds()

    init(_ bucket: BareTokenBucket) {
        lock = ShellLock(bucket)
        self.bucket = lock.guarded
    }

    @inline(__always)
    func acquire(at now: Int64) -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        return bucket.pointee.acquire(at: now)
    }
}

/// Synchronization's Mutex around the bare token bucket (for comparison).
final class BareMutexBucket: Sendable {
    private let bucket: Mutex<BareTokenBucket>
    private let origin = ContinuousClock.now

    init(_ bucket: BareTokenBucket) { self.bucket = Mutex(bucket) }

    @inline(__always)
    func acquire() -> Int64 {
        let now = clockNanoseconds(since: origin)
        return bucket.withLock { $0.acquire(at: now) }
    }
}

/// A bare compare-and-exchange loop over GCRA's theoretical arrival time and last instant, one
/// double word as the atomic adapter keeps them: the atomic floor.
final class BareAtomicGCRA: ClockedFloor, Sendable {
    private let word = Atomic<WordPair>(WordPair(first: 0, second: 0))
    private let gcra: BareGCRA
    let origin = ContinuousClock.now
    let coarseOrigin = CoarseMonotonicClock.readNanoseconds()

    init(_ gcra: BareGCRA) { self.gcra = gcra }

    @inline(__always)
    func acquire(at now: Int64) -> Int64 {
        var current = word.load(ordering: .acquiring)
        while true {
            guard let (next, remaining) = gcra.decide(tat: Int64(Int(bitPattern: current.first)), at: now) else {
                return -1
            }
            let desired = WordPair(first: UInt(bitPattern: Int(next)), second: UInt(bitPattern: Int(now)))
            let (exchanged, original) = word.compareExchange(
                expected: current, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged { return remaining }
            current = original
        }
    }
}

/// The keyed path's floor when admitting in parallel (REG-13 item 5): what the lock registry's
/// common admission does but find its key. The thread enters its reader slot, reads its shard's
/// lock word and latest instant (16 shards, never locked), reads the clock, runs the bucket
/// arithmetic on the key's 64-byte row under the row's lock byte, counts the admission in its
/// slot and leaves: no hash, no probe, no key comparison.
// @unchecked: a row is written only under its lock byte; the slots, lock words and lock bytes
// are read and written atomically; nothing else changes after `init`.
final class BareParallelRows: @unchecked Sendable {
    struct Row {
        var lock: UInt8 = 0
        var bucket: BareTokenBucket
        var padding: Int64 = 0
    }

    final class Shard {
        let lock = ShellLock<Int64>(0)
    }

    static let shardCount = 16
    private let shards: [Shard]
    /// `shards`, borrowed by each request as the registry borrows its shard (no retain, no release).
    private let unmanagedShards: [Unmanaged<Shard>]
    private let readers = ReaderSlots()
    private let rows: UnsafeMutablePointer<Row>
    private let count: Int
    let origin = ContinuousClock.now

    init(keys: Int, _ bucket: BareTokenBucket) {
        shards = (0..<Self.shardCount).map { _ in Shard() }
        unmanagedShards = shards.map { Unmanaged.passUnretained($0) }
        rows = UnsafeMutableRawPointer.allocate(byteCount: keys * MemoryLayout<Row>.stride, alignment: 64)
            .bindMemory(to: Row.self, capacity: keys)
        rows.initialize(repeating: Row(bucket: bucket), count: keys)
        count = keys
    }

    deinit {
        rows.deinitialize(count: count)
        rows.deallocate()
    }

    @inline(__always)
    func acquire(_ index: Int) -> Int64 {
        let slot = Int(ratelimit_reader_slot())
        let base = readers.base
        ReaderSlots.enter(base, slot)
        defer { ReaderSlots.leave(base, slot) }
        return unmanagedShards[index & (Self.shardCount - 1)]._withUnsafeGuaranteedRef { shard in
            guard shard.lock.isFree else { return -1 }
            let now = max(clockNanoseconds(since: origin), shard.lock.guarded.pointee)
            let row = rows + index
            let lock = UnsafeMutableRawPointer(row).assumingMemoryBound(to: UInt8.self)
            ratelimit_byte_lock(lock)
            let answer = row.pointee.bucket.acquire(at: now)
            ratelimit_byte_unlock(lock)
            ReaderSlots.countAdmission(base, slot)
            return answer
        }
    }
}
