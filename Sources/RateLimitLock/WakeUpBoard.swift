// The wake-ups of a sharded registry's shards, where every shard can read them without a lock
// (Spec/Registry.md REG-11, REG-13): before an operation, a shard checks whether another shard
// has something due, so that time events are served in time order across shards.

import RateLimitCore
import Synchronization

/// What a shard hands to its sharded registry, which first serves what every shard has due.
package protocol ShardServer: AnyObject, Sendable {
    /// The shard's timer fired at `target`.
    func serve(_ shard: Int, firedAt target: RateLimitInstant)
    /// A task waiting on the shard was cancelled (WQ-6).
    func cancel(_ ticket: WaitTicket, onShard shard: Int)
}

/// Each shard's next wake-up (`Int64.max`: none), posted under the shard's lock, and how many
/// shards have one. The common request reads `pending`, finds 0, and reads nothing else.
// @unchecked: `slots` is allocated in `init`, freed in `deinit` and never reassigned, and every
// access to what it points at is atomic; `server` is written once, by the sharded shell's `init`
// before the shell (and so the board) is reachable from any other thread, and only read after.
@usableFromInline
package final class WakeUpBoard: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<Atomic<Int64>>
    private let count: Int
    /// Shards with a wake-up posted.
    private let pending = Atomic<Int>(0)
    package private(set) weak var server: (any ShardServer)?

    package init(shards count: Int) {
        self.count = count
        slots = .allocate(capacity: count)
        for index in 0..<count { (slots + index).initialize(to: Atomic(.max)) }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// Names who serves the shards' timers; called once, before the board is shared.
    package func setServer(_ server: any ShardServer) { self.server = server }

    /// Posts shard `index`'s next wake-up (`nil`: none); called under that shard's lock.
    package func post(_ wakeUp: RateLimitInstant?, for index: Int) {
        let new = wakeUp?.nanoseconds ?? .max
        let old = slots[index].exchange(new, ordering: .relaxed)
        if (old == .max) != (new == .max) { pending.add(new == .max ? -1 : 1, ordering: .relaxed) }
    }

    /// Whether a shard other than `index` has a wake-up at or before `instant`.
    @inlinable @inline(__always)
    package func hasDue(otherThan index: Int, by instant: RateLimitInstant) -> Bool {
        pendingCount != 0 && scan(otherThan: index, by: instant)
    }

    @usableFromInline var pendingCount: Int { pending.load(ordering: .relaxed) }

    @usableFromInline func scan(otherThan index: Int, by instant: RateLimitInstant) -> Bool {
        for shard in 0..<count where shard != index && slots[shard].load(ordering: .relaxed) <= instant.nanoseconds {
            return true
        }
        return false
    }
}
