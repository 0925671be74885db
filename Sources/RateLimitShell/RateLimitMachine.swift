// What an adapter executes (Spec/WaitQueue.md WQ-11 ... WQ-13, Spec/Registry.md REG-11).
//
// The wait queue of one limiter and the registry of limiters by key are both waiting state
// machines: each operation returns the outcomes to deliver and the events to report, and the
// machine says when it next needs a wake-up. Each adapter has one shell generic over this
// protocol: it holds the machine in its exclusion, reads its clock, and executes the effects.

import CPrefetch
import RateLimitCore

/// A waiting state machine an adapter's shell can execute: ``WaitQueue`` or ``RateLimitRegistry``.
/// The requirements are the machines' own methods, under their own names.
@usableFromInline package protocol RateLimitMachine: Sendable {
    /// Cancels a waiting request (WQ-6).
    mutating func cancel(_ ticket: WaitTicket, at now: RateLimitInstant) -> RateLimitEffects
    /// Serves what is due at `now`: what the shell's timer does when it fires.
    mutating func advance(to now: RateLimitInstant) -> RateLimitEffects
    /// Ends every waiter with `closed` (WQ-9).
    mutating func close(at now: RateLimitInstant) -> RateLimitEffects
    /// When the shell's one timer must next fire, seen at `now` (WQ-7, REG-11).
    func nextWakeUp(at now: RateLimitInstant) -> RateLimitInstant?
    /// True when ``nextWakeUp(at:)`` is `nil` at every instant because nothing waits: the cheap
    /// test a shell makes after every operation.
    var hasNothingToWakeUp: Bool { get }
    /// Requests waiting now.
    var waitingCount: Int { get }
}

extension RateLimitMachine {
    /// Whether `effects` certainly leave a shell nothing to execute: no outcome to hand out, no
    /// event, nobody waiting (or the shell `closed`) and no timer armed (`timerTarget`). The
    /// common answer; shells test it inline and execute `effects` out of line otherwise, which is
    /// always correct (re-arming the timer is a no-op when it is right).
    ///
    /// With requests waiting it answers `false` without asking ``nextWakeUp(at:)``: that call is
    /// out of line, and Swift copies the machine out of its class or actor before the branch that
    /// makes it (Performance.md, "Nothing to do").
    @inlinable @inline(__always)
    package func leavesNothingToDo(_ effects: RateLimitEffects, timerTarget: RateLimitInstant?, closed: Bool) -> Bool {
        effects.isEmpty && timerTarget == nil && (closed || hasNothingToWakeUp)
    }
}

extension RateLimitRegistry {
    /// Prefetches the row and control byte a request on `key` reads first (``lookUp(_:)``) and
    /// returns the key's hash for it: the registry shells call it before they read the clock,
    /// whose read waits for earlier loads but not for prefetches, so that at a million keys the
    /// key's cache miss overlaps it (Performance.md, "Prefetch"). `mutating` only so that a shell
    /// reaches its machine in place (a read copied it out of its class); it changes nothing.
    @inlinable @inline(__always)
    package mutating func prefetch(_ key: String) -> UInt64 {
        let (hash, row, control) = lookUp(key)
        // A prefetch never faults, whatever the address.
        ratelimit_prefetch(UnsafeRawPointer(bitPattern: row))
        ratelimit_prefetch(UnsafeRawPointer(bitPattern: control))
        return hash
    }

    /// ``prefetch(_:)`` for a shard, with the key's hash from ``shardHash(_:seed:)`` (REG-13).
    @inlinable @inline(__always)
    package mutating func prefetch(_ key: String, hash: UInt64) {
        let (row, control) = homeAddresses(key, hash: hash)
        ratelimit_prefetch(UnsafeRawPointer(bitPattern: row))
        ratelimit_prefetch(UnsafeRawPointer(bitPattern: control))
    }

    /// A request that never waits (``tryAcquire(_:permits:priority:at:)``) at `timeline`'s reading,
    /// taken after the key is prefetched; with the instant read. The lock and Dispatch shells call
    /// it directly: through a closure it was not inlined, and copied the timeline on every request.
    @inlinable @inline(__always)
    package mutating func tryAcquire<C>(
        _ key: String, permits: Int64, priority: RateLimitPriority, on timeline: borrowing ClockTimeline<C>
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects, now: RateLimitInstant) {
        let hash = prefetch(key)
        let now = timeline.now()
        let (outcome, effects) = tryAcquire(key, looked: hash, permits: permits, priority: priority, at: now)
        return (outcome, effects, now)
    }
}

extension WaitQueue: RateLimitMachine {
    @inlinable
    package var hasNothingToWakeUp: Bool { isEmpty }
}

extension RateLimitRegistry: RateLimitMachine {
    @inlinable
    package func nextWakeUp(at now: RateLimitInstant) -> RateLimitInstant? { nextWakeUp }

    @inlinable
    package var hasNothingToWakeUp: Bool { nextWakeUp == nil }
}
