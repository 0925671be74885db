// Admissions in parallel on a sharded registry (Spec/Registry.md REG-13 item 5; Performance.md
// "Contention"). Two threads on keys of different shards still handed each shard's lock line from
// one core to the other: each thread's keys lie in every shard. So the common admission takes no
// shard lock. It says it is reading on a line of its own (its thread's slot, odd while inside),
// checks that the shard's lock is free, and changes its key's row under the row's own lock byte.
// Whoever takes a shard's lock waits, once it holds it, until no slot is inside: every operation
// that changes a registry still runs alone, and no admission can see a row move or a table grow.

import CPrefetch
import CReaderSlots
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sharded registry's reader slots: per thread (``ratelimit_reader_slot()``), a word that is odd
/// while the thread admits in parallel, and the admissions it counted there, on 128 bytes of
/// their own (a line and the one the processor fetches with it).
///
/// The word and the shards' lock words follow Dekker's pattern, every access sequentially
/// consistent: a reader adds 1 to its word, then reads the shard's lock word; a writer takes the
/// lock word, then reads every slot's word. Either the reader sees the lock taken (it leaves and
/// takes the lock itself), or the writer sees the reader inside (it waits until it leaves).
// @unchecked: `base` is allocated in `init`, freed in `deinit` and never reassigned; every access
// to what it points at is atomic.
@usableFromInline
package final class ReaderSlots: @unchecked Sendable {
    @usableFromInline static let stride = 128
    @usableFromInline package let base: UnsafeMutableRawPointer

    package init() {
        let count = Int(RATELIMIT_READER_SLOTS)
        base = .allocate(byteCount: count * Self.stride, alignment: Self.stride)
        for slot in 0..<count {
            let words = (base + slot * Self.stride).bindMemory(to: Atomic<Int>.self, capacity: 2)
            words.initialize(to: Atomic(0))
            (words + 1).initialize(to: Atomic(0))
        }
    }

    deinit {
        for slot in 0..<Int(RATELIMIT_READER_SLOTS) {
            Self.word(base, slot).deinitialize(count: 1)
            Self.admissions(base, slot).deinitialize(count: 1)
        }
        base.deallocate()
    }

    @inlinable @inline(__always)
    static func word(_ base: UnsafeMutableRawPointer, _ slot: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (base + slot &* stride).assumingMemoryBound(to: Atomic<Int>.self)
    }

    @inlinable @inline(__always)
    static func admissions(_ base: UnsafeMutableRawPointer, _ slot: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (base + (slot &* stride &+ 8)).assumingMemoryBound(to: Atomic<Int>.self)
    }

    // The common path's operations take the slots' address, which a shell keeps beside the
    // object: reaching them through the object retained and released it on every request.

    /// The calling thread, in `slot`, starts reading.
    @inlinable @inline(__always)
    package static func enter(_ base: UnsafeMutableRawPointer, _ slot: Int) {
        word(base, slot).pointee.add(1, ordering: .sequentiallyConsistent)
    }

    /// The calling thread, in `slot`, is done reading: what it wrote happens before a writer's
    /// ``drain(_:)`` that sees it gone.
    @inlinable @inline(__always)
    package static func leave(_ base: UnsafeMutableRawPointer, _ slot: Int) {
        word(base, slot).pointee.add(1, ordering: .releasing)
    }

    /// Counts one admission of the thread in `slot` (it alone writes it).
    @inlinable @inline(__always)
    package static func countAdmission(_ base: UnsafeMutableRawPointer, _ slot: Int) {
        let count = admissions(base, slot)
        count.pointee.store(count.pointee.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// The admissions counted in every slot: read with every shard's lock held, when no thread
    /// admits in parallel.
    package var admitted: UInt64 {
        (0..<Int(RATELIMIT_READER_SLOTS)).reduce(0) {
            $0 &+ UInt64(Self.admissions(base, $1).pointee.load(ordering: .acquiring))
        }
    }

    /// Waits, with a shard's lock just taken, until every thread that was reading when it was
    /// taken has left; those that come later see the lock taken and leave at once.
    @usableFromInline
    static func drain(_ base: UnsafeMutableRawPointer) {
        for slot in 0..<Int(ratelimit_reader_slots_in_use()) {
            let word = Self.word(base, slot)
            let seen = word.pointee.load(ordering: .sequentiallyConsistent)
            guard seen & 1 == 1 else { continue }
            var spins = 0
            while word.pointee.load(ordering: .sequentiallyConsistent) == seen {
                // An admission takes tens of nanoseconds, unless its thread was preempted.
                spins += 1
                if spins < 100 { ratelimit_spin_pause() } else { sched_yield() }
            }
        }
    }
}
