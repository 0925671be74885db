// The lock shell's lock (Performance.md, "Contention"). Two threads on one limiter pay for the cache
// lines the lock hands from one core to the other, and for parking: NSCondition's plain mutex parked
// a thread that found it held (a futex call each way), and the guarded state lay on three lines of
// the shell's object. So the lock word and the state every request writes share one 64-byte line
// of their own, and a thread that finds the lock held spins briefly (the holder is out within tens
// of nanoseconds) before it parks. Parking uses a pthread mutex and conditions, so that the lock is
// the same on every platform; ThreadSanitizer sees the lock's acquire and release through the
// word's atomic operations and the parking through its pthread calls.

import CPrefetch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutex with a condition, and the value it guards on the same cache line as its word.
///
/// The word is 0 when the lock is free, 1 when held, 2 when held and a thread may be parked on it
/// (the holder then wakes one as it unlocks). `guarded` may be read and written only between
/// ``lock()`` and ``unlock()``.
@usableFromInline
package struct ShellLock<Guarded>: ~Copyable {
    @usableFromInline let word: UnsafeMutablePointer<Atomic<Int>>
    /// The guarded value, right after the word on the line the allocation starts.
    @usableFromInline package let guarded: UnsafeMutablePointer<Guarded>
    @usableFromInline let parking: Parking
    /// A sharded registry's reader slots, for a shard's lock: taking it waits until no thread
    /// admits in parallel (``ReaderSlots``, REG-13 item 5).
    @usableFromInline let readers: UnsafeMutableRawPointer?

    package init(_ value: Guarded, readers: UnsafeMutableRawPointer? = nil) {
        let offset = max(MemoryLayout<Atomic<Int>>.stride, MemoryLayout<Guarded>.alignment)
        let block = UnsafeMutableRawPointer.allocate(
            byteCount: offset + MemoryLayout<Guarded>.stride, alignment: max(64, MemoryLayout<Guarded>.alignment))
        word = block.bindMemory(to: Atomic<Int>.self, capacity: 1)
        word.initialize(to: Atomic(0))
        guarded = (block + offset).bindMemory(to: Guarded.self, capacity: 1)
        guarded.initialize(to: value)
        parking = Parking()
        self.readers = readers
    }

    deinit {
        guarded.deinitialize(count: 1)
        word.deinitialize(count: 1)
        UnsafeMutableRawPointer(word).deallocate()
    }

    // Taking the word is sequentially consistent (the same instruction as acquiring on x86): a
    // shard's lock and the reader slots follow Dekker's pattern (ReaderSlots).
    @inlinable @inline(__always)
    package func lock() {
        lockWithoutReaders()
        if let readers { ReaderSlots.drain(readers) }
    }

    /// ``lock()`` for a lock made without reader slots (a single limiter's), skipping their check:
    /// on the coarse clock's request of a few nanoseconds, the check took 3.5 ns.
    @inlinable @inline(__always)
    package func lockWithoutReaders() {
        if !word.pointee.compareExchange(expected: 0, desired: 1, ordering: .sequentiallyConsistent).exchanged {
            parking.lockContended(word)
        }
    }

    /// Whether nobody holds the lock, read sequentially consistent (ReaderSlots).
    @inlinable @inline(__always)
    package var isFree: Bool { word.pointee.load(ordering: .sequentiallyConsistent) == 0 }

    @inlinable @inline(__always)
    package func unlock() {
        if word.pointee.exchange(0, ordering: .releasing) == 2 { parking.wakeOne() }
    }

    /// Unlocks, parks until the next ``broadcast()``, and locks again: called with the lock held, in
    /// a loop that checks what it waits for.
    package func wait() {
        let seen = parking.broadcasts.load(ordering: .relaxed)
        unlock()
        parking.waitForBroadcast(after: seen)
        lock()
    }

    /// Wakes every thread in ``wait()``: called with the lock held.
    package func broadcast() { parking.broadcast() }
}

/// Where threads wait: for the lock after spinning, or for a broadcast. Its pthread mutex is only
/// ever taken last (no thread holding it takes the shell's lock), so it cannot deadlock.
// @unchecked: the pointers are immutable and point at a pthread mutex and conditions, made for use
// from any thread; `broadcasts` is atomic; `deinit` runs when no other reference is left.
@usableFromInline
final class Parking: @unchecked Sendable {
    /// How many times a thread that finds the lock held checks it again before it parks: a few
    /// microseconds (a `pause` takes tens to over a hundred cycles by processor), many times what a
    /// holder takes (Performance.md, "Contention").
    static let spins = 100
    private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
    private let lockFreed: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)
    private let broadcasted: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)
    /// How many broadcasts there have been (changed with the shell's lock held).
    let broadcasts = Atomic<Int>(0)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(lockFreed, nil)
        pthread_cond_init(broadcasted, nil)
    }

    deinit {
        pthread_cond_destroy(broadcasted)
        pthread_cond_destroy(lockFreed)
        pthread_mutex_destroy(mutex)
        broadcasted.deallocate()
        lockFreed.deallocate()
        mutex.deallocate()
    }

    /// Takes the lock whose word is `word` after a first attempt failed: spins, then parks.
    @usableFromInline @inline(never)
    func lockContended(_ word: UnsafeMutablePointer<Atomic<Int>>) {
        for _ in 0..<Self.spins {
            ratelimit_spin_pause()
            if word.pointee.load(ordering: .relaxed) == 0,
                word.pointee.compareExchange(expected: 0, desired: 1, ordering: .sequentiallyConsistent).exchanged
            {
                return
            }
        }
        // Marked 2 before parking, so that whoever holds it wakes a thread as it unlocks. The word
        // is read under `mutex`, and the unlocking thread takes `mutex` to signal: a thread that
        // saw 2 is waiting by then, so no wake-up is lost.
        while word.pointee.exchange(2, ordering: .sequentiallyConsistent) != 0 {
            pthread_mutex_lock(mutex)
            while word.pointee.load(ordering: .relaxed) == 2 { pthread_cond_wait(lockFreed, mutex) }
            pthread_mutex_unlock(mutex)
        }
    }

    /// Wakes one thread parked in ``lockContended(_:)`` (the word was 2 at the unlock).
    @usableFromInline @inline(never)
    func wakeOne() {
        pthread_mutex_lock(mutex)
        pthread_cond_signal(lockFreed)
        pthread_mutex_unlock(mutex)
    }

    /// Parks until the count of broadcasts has moved past `seen`.
    func waitForBroadcast(after seen: Int) {
        pthread_mutex_lock(mutex)
        while broadcasts.load(ordering: .relaxed) == seen { pthread_cond_wait(broadcasted, mutex) }
        pthread_mutex_unlock(mutex)
    }

    func broadcast() {
        broadcasts.add(1, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        pthread_cond_broadcast(broadcasted)
        pthread_mutex_unlock(mutex)
    }
}
