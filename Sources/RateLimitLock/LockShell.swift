// The lock adapter's shell (Spec/WaitQueue.md WQ-11 ... WQ-13), for code that is not async as
// well as code that is: one class generic over the machine it executes, the wait queue of one
// limiter (`LockedRateLimiter`) or a registry of limiters by key (`LockedRateLimitRegistry`).
//
// A `ShellLock` guards the machine (ShellLock.swift: the machine on the lock word's cache line, a
// short spin before parking). Every call reads the injected clock, takes the lock, asks the
// machine, records what must happen, and releases the lock before doing it, all in one function:
// the clock is read before the lock, so that a thread waiting for the lock holds no clock read up
// (a call that waited is decided at its earlier reading, as WQ-13 allows), except a registry's
// `tryAcquire`, which prefetches the key's row under the lock first and then reads it; continuations are
// resumed outside the lock (resuming can run code that calls back in), while threads blocked in
// `acquireBlocking` are handed their outcome under the lock and woken with a broadcast. Events go
// to their streams under the lock (in order) and to the handler on a serial queue. One timer task
// sleeps on the clock until the machine's next wake-up.
//
// `acquireBlocking` parks the calling thread: call it from threads you own, never from a Swift
// concurrency task (the timer that wakes it runs on the cooperative pool).

import Foundation
import RateLimitCore
import RateLimitShell

/// A lock-guarded shell executing a waiting state machine: what ``LockedRateLimiter`` and
/// ``LockedRateLimitRegistry`` hold.
// @unchecked: what `guarded` points at (the machine, the timer's target, whether the shell is
// closed) and every `var` below are read and written only while `mutex` is locked (inlined code
// touches the guarded state only in `run`, `runIfOpen`, `tryAcquire` and `unlock`, between the
// lock and the unlock; `ShardedRegistryShell` only after locking the shard's `mutex`, or every
// shard's); `deinit` runs when no other reference is left. The other `let`s are
// immutable and Sendable, or (`mutex`) made for use from any thread. So access is exclusive.
@usableFromInline
package final class LockShell<Machine: RateLimitMachine, C: Clock>: SynchronousRateLimitShell, @unchecked Sendable
where C.Duration == Duration {
    /// What the lock guards, right after its word: the machine's first bytes, which every request
    /// writes, share the word's cache line (Performance.md, "Contention").
    @usableFromInline struct Guarded {
        @usableFromInline var machine: Machine
        @usableFromInline var timerTarget: RateLimitInstant?
        @usableFromInline var isClosed = false
    }

    @usableFromInline let mutex: ShellLock<Guarded>
    /// `mutex.guarded`, kept apart: changing the value through it must not be a modifying access
    /// to `mutex`, which ThreadSanitizer reports as racing with the lock's own reads of it.
    @usableFromInline let guarded: UnsafeMutablePointer<Guarded>
    /// The adapter's clock, as the machine's timeline.
    @usableFromInline package let timeline: ClockTimeline<C>
    /// Suspended callers, resumed with their outcome and the instant it was decided at.
    private var continuations: [WaitTicket: CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>] = [:]
    /// Outcomes (and their instants) that arrived before their waiter was ready to receive them.
    private var early: [WaitTicket: (WaitOutcome, RateLimitInstant)] = [:]
    /// Tickets of threads parked in `acquireBlocking`, and the outcomes handed to them.
    private var parked: Set<WaitTicket> = []
    private var parkedOutcomes: [WaitTicket: (WaitOutcome, RateLimitInstant)] = [:]
    private var timer: Task<Void, Never>?
    /// Granted requests still waiting for their scheduled start (leaky bucket queue).
    private var scheduledStarts = 0
    /// Where its events go: its own, or its sharded registry's (REG-13).
    @usableFromInline let outlet: EventOutlet
    /// For a shard: its registry's board of wake-ups (which names who serves its timer) and its
    /// index there.
    @usableFromInline let shard: (board: WakeUpBoard, index: Int)?
    /// Its sharded registry's reader slots, kept as long as its lock may read them.
    private let readers: ReaderSlots?

    package convenience init(machine: Machine, clock: C) {
        self.init(machine: machine, timeline: ClockTimeline(clock: clock), outlet: EventOutlet(), shard: nil)
    }

    /// A shell of `machine` on `timeline` publishing to `outlet`; a shard of a sharded registry
    /// names its board and its index, and the registry's reader slots, which its lock waits for
    /// (REG-13).
    package init(
        machine: Machine, timeline: ClockTimeline<C>, outlet: EventOutlet, shard: (board: WakeUpBoard, index: Int)?,
        readers: ReaderSlots? = nil
    ) {
        mutex = ShellLock(Guarded(machine: machine), readers: readers?.base)
        self.readers = readers
        guarded = mutex.guarded
        self.timeline = timeline
        self.outlet = outlet
        self.shard = shard
    }

    deinit {
        // Parked threads and suspended callers hold a reference, so only waiters that can no
        // longer be reached are left; they still get their outcome (WQ-9).
        timer?.cancel()
        for completion in machine.close(at: timeline.now()).completions {
            continuations[completion.ticket]?.resume(returning: (completion.outcome, .origin))
        }
        if shard == nil { outlet.finishAll() }
    }

    @usableFromInline var machine: Machine {
        @inline(__always) _read { yield guarded.pointee.machine }
        @inline(__always) _modify { yield &guarded.pointee.machine }
    }
    @usableFromInline var timerTarget: RateLimitInstant? {
        @inline(__always) get { guarded.pointee.timerTarget }
        @inline(__always) set { guarded.pointee.timerTarget = newValue }
    }
    @usableFromInline var isClosed: Bool {
        @inline(__always) get { guarded.pointee.isClosed }
        @inline(__always) set { guarded.pointee.isClosed = newValue }
    }

    /// Requests waiting for a grant.
    package var waitingCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return machine.waitingCount
    }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    package var scheduledCount: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return scheduledStarts
    }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    package func close() {
        run { machine, now in
            isClosed = true
            return ((), machine.close(at: now))
        }
        outlet.finishAll()
    }

    // MARK: Events (REG-10)

    package func events<Strategy>() -> AsyncStream<RegistryEvent> where Machine == RateLimitRegistry<Strategy> {
        outlet.subscribe()
    }

    package func setEventHandler<Strategy>(_ handler: (@Sendable (RegistryEvent) -> Void)?)
    where Machine == RateLimitRegistry<Strategy> {
        outlet.setHandler(handler)
    }

    // MARK: The shell

    /// Runs `operation` under the lock on the machine at the clock's reading, executes its
    /// effects and returns its value (the primitive every operation is built on). The common
    /// answer (no completion, no event, nobody waiting, no timer) costs a few comparisons and the
    /// unlock; anything else is executed out of line.
    @inlinable @discardableResult
    package func run<T>(_ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T {
        let now = timeline.now()
        mutex.lock()
        let (value, effects) = operation(&machine, now)
        return unlock(returning: value, after: effects, at: now)
    }

    /// Executes `effects` (a no-op answer costs a few comparisons), unlocks, then resumes whom
    /// they concluded: called with the lock held. It consumes `value`, which it returns: borrowed,
    /// an outcome was copied out and the caller's destroyed (Performance.md, "Effects").
    @inlinable
    func unlock<T>(returning value: consuming T, after effects: consuming RateLimitEffects, at now: RateLimitInstant)
        -> T
    {
        if machine.leavesNothingToDo(effects, timerTarget: timerTarget, closed: isClosed) {
            mutex.unlock()
            return value
        }
        let resumptions = execute(effects, at: now)
        mutex.unlock()
        resume(resumptions)
        return value
    }

    /// ``unlock(returning:after:at:)`` for a request's outcome, always inlined: the requests that
    /// never wait call it on their common path.
    @inlinable @inline(__always)
    func unlock(outcome: consuming WaitOutcome, after effects: consuming RateLimitEffects, at now: RateLimitInstant)
        -> WaitOutcome
    {
        // `leavesNothingToDo` written out, its one property of the machine read through the
        // pointer: calling it here, inlined, Swift copied the whole registry (1,678 instructions
        // per request against 707; Performance.md, "Effects").
        if effects.isEmpty, timerTarget == nil, isClosed || guarded.pointee.machine.hasNothingToWakeUp {
            mutex.unlock()
            return outcome
        }
        return unlock(returning: outcome, after: effects, at: now)
    }

    /// ``run(_:)`` unless the limiter is closed (then `closed`, with no Optional to destroy on the
    /// hot path).
    @inlinable
    package func runIfOpen<T>(
        otherwise closed: T, _ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)
    ) -> T {
        let now = timeline.now()
        mutex.lock()
        if isClosed {
            mutex.unlock()
            return closed
        }
        let (value, effects) = operation(&machine, now)
        return unlock(returning: value, after: effects, at: now)
    }

    /// A limiter's request that never waits (WQ-4): ``runIfOpen(otherwise:_:)`` written out, so
    /// that no `closed` outcome is made, copied and destroyed on every call (with `unlock`
    /// consuming the outcome, 56 instructions of 216 on the coarse clock; Performance.md, "Effects").
    @inlinable @inline(__always)
    package func tryAcquire<Strategy>(_ permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    where Machine == WaitQueue<Strategy> {
        let now = timeline.now()
        mutex.lockWithoutReaders()  // a single limiter is never a registry's shard
        if isClosed {
            mutex.unlock()
            return .closed
        }
        let (outcome, effects) = machine.tryAcquire(permits, priority: priority, at: now)
        return unlock(outcome: outcome, after: effects, at: now)
    }

    /// A registry's request that never waits (REG-5): the key prefetched, then the clock read, so
    /// that the key's cache miss overlaps the clock's read (Performance.md, "Prefetch").
    @inlinable @inline(__always)
    package func tryAcquire<Strategy>(_ key: String, permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    where Machine == RateLimitRegistry<Strategy> {
        mutex.lock()
        if isClosed {
            mutex.unlock()
            return .closed
        }
        let (outcome, effects, now) = machine.tryAcquire(key, permits: permits, priority: priority, on: timeline)
        return unlock(outcome: outcome, after: effects, at: now)
    }

    /// Issues a request with `operation` and parks the calling thread until its outcome; a
    /// `delayed` grant also waits for its scheduled start.
    package func blockingOutcome(
        permits: Int64, prepare: () -> Void = {},
        _ operation: (inout Machine, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) throws(RateLimitAcquireError) -> RateLimitGrant {
        var (decided, waiting) = issue(parking: true, prepare: prepare, operation)
        if let ticket = waiting {
            mutex.lock()
            while parkedOutcomes[ticket] == nil { mutex.wait() }
            decided = parkedOutcomes.removeValue(forKey: ticket)
            parked.remove(ticket)
            mutex.unlock()
        }
        let (outcome, instant) = decided ?? (.closed, .origin)
        let grant = try outcome.grant(permits: permits).get()
        if case .delayed(let wait, _)? = grant.answer {
            defer { endScheduledStart() }
            blockUntil(timeline.reading(afterNanoseconds: wait, from: instant))
        }
        return grant
    }

    /// Issues a request with `operation` and suspends until its outcome; cancelling the task
    /// cancels the request. A `delayed` grant also waits for its scheduled start.
    package func asyncOutcome(
        permits: Int64, prepare: () -> Void = {},
        _ operation: (inout Machine, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        var (decided, waiting) = issue(parking: false, prepare: prepare, operation)
        if let ticket = waiting {
            decided = await withTaskCancellationHandler {
                await withCheckedContinuation {
                    (continuation: CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>) in
                    mutex.lock()
                    if let arrived = early.removeValue(forKey: ticket) {
                        mutex.unlock()
                        continuation.resume(returning: arrived)
                    } else {
                        continuations[ticket] = continuation
                        mutex.unlock()
                    }
                }
            } onCancel: { [weak self] in
                guard let self else { return }
                // A shard's registry serves what other shards have due first (REG-13).
                if let shard, let server = shard.board.server {
                    server.cancel(ticket, onShard: shard.index)
                } else {
                    run { machine, now in ((), machine.cancel(ticket, at: now)) }
                }
            }
        }
        let (outcome, instant) = decided ?? (.closed, .origin)
        let grant = try outcome.grant(permits: permits).get()
        if case .delayed(let wait, _)? = grant.answer {
            // Counted as waiting for its start since the grant, which fixed the start instant.
            defer { endScheduledStart() }
            do {
                try await timeline.clock.sleep(
                    until: timeline.reading(afterNanoseconds: wait, from: instant), tolerance: nil)
            } catch {
                throw .cancelled
            }
        }
        return grant
    }

    /// Issues a request under the lock: its outcome when decided at once (`closed` when the
    /// limiter is), otherwise the ticket to wait for (registered as parked when `parking`). An
    /// operation that answers ``WaitTicket/unissued`` is issued again after `prepare` (REG-13).
    private func issue(
        parking: Bool, prepare: () -> Void,
        _ operation: (inout Machine, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) -> (decided: (WaitOutcome, RateLimitInstant)?, waiting: WaitTicket?) {
        while true {
            let issued = issueOnce(parking: parking, operation)
            guard issued.decided == nil, issued.waiting == .unissued else { return issued }
            prepare()
        }
    }

    private func issueOnce(
        parking: Bool, _ operation: (inout Machine, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) -> (decided: (WaitOutcome, RateLimitInstant)?, waiting: WaitTicket?) {
        runIfOpen(otherwise: ((.closed, .origin), nil)) { machine, now in
            var (ticket, effects) = operation(&machine, now)
            if ticket == .unissued { return ((nil, ticket), effects) }
            guard let mine = effects.removeCompletion(of: ticket) else {
                if parking { parked.insert(ticket) }
                return ((nil, ticket), effects)
            }
            countScheduledStart(mine.outcome)
            return (((mine.outcome, now), nil), effects)
        }
    }

    /// The timer fired: the clock reached `target`, so the machine serves what was due then, at
    /// that instant (WQ-7); a late timer changes nothing but latency.
    private func wake(at target: RateLimitInstant) {
        // A shard's timer serves every shard due by then, in time order (REG-13).
        if let shard, let server = shard.board.server {
            server.serve(shard.index, firedAt: target)
            return
        }
        mutex.lock()
        timerTarget = nil
        let resumptions = execute(machine.advance(to: target), at: target)
        mutex.unlock()
        resume(resumptions)
    }

    /// A suspended caller and the outcome to resume it with, once the lock is released.
    @usableFromInline
    typealias Resumption = (CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>, WaitCompletion)

    /// With the lock held: hands out the completions (parked threads are woken, suspended callers
    /// returned for ``resume(_:)``), publishes the events and re-arms the timer.
    @usableFromInline
    func execute(_ effects: RateLimitEffects, at now: RateLimitInstant) -> [Resumption] {
        var resumptions: [Resumption] = []
        var wokeParked = false
        for completion in effects.completions {
            countScheduledStart(completion.outcome)
            if parked.contains(completion.ticket) {
                parkedOutcomes[completion.ticket] = (completion.outcome, completion.at)
                wokeParked = true
            } else if let continuation = continuations.removeValue(forKey: completion.ticket) {
                resumptions.append((continuation, completion))
            } else {
                early[completion.ticket] = (completion.outcome, completion.at)
            }
        }
        if wokeParked { mutex.broadcast() }
        if !effects.events.isEmpty { outlet.publish(effects.events) }
        rearm(at: now)
        return resumptions
    }

    /// Without the lock: resumes the suspended callers ``execute(_:at:)`` returned.
    @usableFromInline
    func resume(_ resumptions: [Resumption]) {
        for (continuation, completion) in resumptions {
            continuation.resume(returning: (completion.outcome, completion.at))
        }
    }

    /// Keeps one timer task sleeping on the clock until the machine's next wake-up (lock held).
    private func rearm(at now: RateLimitInstant) {
        let target = isClosed ? nil : machine.nextWakeUp(at: now)
        guard target != timerTarget else { return }
        timer?.cancel()
        timerTarget = target
        if let shard { shard.board.post(target, for: shard.index) }
        guard let target else {
            timer = nil
            return
        }
        let reading = timeline.reading(of: target)
        let clock = timeline.clock
        timer = Task { [weak self] in
            do { try await clock.sleep(until: reading, tolerance: nil) } catch { return }
            self?.wake(at: target)
        }
    }

    /// A grant with a scheduled start counts as waiting for it from the instant of the grant (lock held).
    private func countScheduledStart(_ outcome: WaitOutcome) {
        if case .granted(.delayed) = outcome { scheduledStarts += 1 }
    }

    private func endScheduledStart() {
        mutex.lock()
        scheduledStarts -= 1
        mutex.unlock()
    }

    /// Parks the thread until the clock reaches `start` (a scheduled start).
    private func blockUntil(_ start: C.Instant) {
        let started = DispatchSemaphore(value: 0)
        let clock = timeline.clock
        Task {
            try? await clock.sleep(until: start, tolerance: nil)
            started.signal()
        }
        started.wait()
    }
}
