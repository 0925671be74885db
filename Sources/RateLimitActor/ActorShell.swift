// The actor adapter's shell (Spec/WaitQueue.md WQ-11 ... WQ-13), what `ActorRateLimiter` and
// `ActorRateLimitRegistry` share: the state of a machine's execution (`ActorShell`) and what the
// actor does with it (`ActorShellHost`), both generic over the machine.
//
// The actor holds the machine, reads its injected clock, asks the machine and executes the
// answers: it resumes the continuations of completed requests, publishes events, and keeps one
// timer task sleeping on the clock until the machine's next wake-up. No decision is made here.
// Waiting is cancellation-aware: cancelling the waiting task cancels its ticket (WQ-6). When the
// actor is released from memory (or `close()` is called), every waiter gets `closed` (WQ-9): the
// timer and cancellation handlers hold it weakly, so waiters do not keep it alive.

import RateLimitCore
import RateLimitShell

/// The state of an actor adapter: the machine and what executing it needs. Only its actor
/// touches it (it is not `Sendable`, and the actor holds the one reference).
@usableFromInline
package final class ActorShell<Machine: RateLimitMachine, C: Clock> where C.Duration == Duration {
    // @exclusivity(unchecked): only the actor that owns this shell touches it, one synchronous
    // stretch of code at a time, and an `inout` access cannot span a suspension point; so every
    // access is already exclusive and the runtime's dynamic check proves nothing more.
    @exclusivity(unchecked) @usableFromInline var machine: Machine
    /// The limiter's timeline on its clock: its instants are the ones the machine decides at.
    @usableFromInline package let timeline: ClockTimeline<C>
    /// Suspended callers, resumed with their outcome and the instant it was decided at.
    var continuations: [WaitTicket: CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>] = [:]
    var timer: Task<Void, Never>?
    @exclusivity(unchecked) @usableFromInline var timerTarget: RateLimitInstant?
    @exclusivity(unchecked) @usableFromInline var isClosed = false
    /// Granted requests still waiting for their scheduled start (leaky bucket queue).
    var scheduledStarts = 0
    var subscribers = EventSubscribers()
    var eventHandler: (@Sendable (RegistryEvent) -> Void)?

    package init(machine: Machine, clock: C) {
        self.machine = machine
        timeline = ClockTimeline(clock: clock)
    }

    /// Prefetches what a request on `key` reads first and returns the key's hash for it
    /// (`RateLimitRegistry.prefetch(_:)`): the registry's `tryAcquire` calls it before ``run(_:)``
    /// reads the clock (Performance.md, "Prefetch").
    @inlinable @inline(__always)
    package func prefetch<Strategy>(_ key: String) -> UInt64 where Machine == RateLimitRegistry<Strategy> {
        machine.prefetch(key)
    }

    /// The actor was released from memory: its remaining waiters end `closed` (WQ-9).
    deinit {
        timer?.cancel()
        for completion in machine.close(at: timeline.now()).completions {
            continuations[completion.ticket]?.resume(returning: (completion.outcome, .origin))
        }
        subscribers.finishAll()
    }
}

/// An actor that executes a machine held in its ``ActorShell``.
@usableFromInline
package protocol ActorShellHost<Machine, C>: Actor {
    associatedtype Machine: RateLimitMachine
    associatedtype C: Clock where C.Duration == Duration
    var shell: ActorShell<Machine, C> { get }
}

extension ActorShellHost {
    /// Runs `operation` on the machine at the clock's reading and executes its effects. The common
    /// answer (no completion, no event, nobody waiting, no timer) costs a few comparisons; anything
    /// else is executed out of line.
    @inlinable
    package func run<T>(_ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T {
        let shell = shell
        let now = shell.timeline.now()
        let (value, effects) = operation(&shell.machine, now)
        if !shell.machine.leavesNothingToDo(effects, timerTarget: shell.timerTarget, closed: shell.isClosed) {
            execute(effects, at: now)
        }
        return value
    }

    /// ``run(_:)`` unless the actor is closed (then `closed`).
    @inlinable
    package func runIfOpen<T>(
        otherwise closed: T, _ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)
    ) -> T {
        shell.isClosed ? closed : run(operation)
    }

    /// Issues a request with `operation` and waits for its outcome: at once when the effects hold
    /// it, otherwise until a later operation or wake-up delivers it; cancelling the task cancels
    /// the request. A `delayed` grant (leaky bucket queue) also waits for its scheduled start.
    package func outcome(
        permits: Int64, _ operation: (inout Machine, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        guard !shell.isClosed else { throw .closed }
        let now = shell.timeline.now()
        let (ticket, decidedNow) = operation(&shell.machine, now)
        var effects = decidedNow
        let outcome: WaitOutcome
        let decided: RateLimitInstant
        if let immediate = effects.removeCompletion(of: ticket) {
            execute(effects, at: now)
            (outcome, decided) = (immediate.outcome, now)
            countScheduledStart(outcome)
        } else {
            execute(effects, at: now)
            (outcome, decided) = await withTaskCancellationHandler {
                await withCheckedContinuation { shell.continuations[ticket] = $0 }
            } onCancel: { [weak self] in
                guard let host = self else { return }
                Task { await host.cancel(ticket) }
            }
        }
        let grant = try outcome.grant(permits: permits).get()
        if case .delayed(let wait, _)? = grant.answer {
            // The slot is taken; the caller's turn starts `wait` after the grant (counted since then).
            defer { shell.scheduledStarts -= 1 }
            let start = shell.timeline.reading(afterNanoseconds: wait, from: decided)
            do { try await shell.timeline.clock.sleep(until: start, tolerance: nil) } catch { throw .cancelled }
        }
        return grant
    }

    private func cancel(_ ticket: WaitTicket) {
        run { machine, now in ((), machine.cancel(ticket, at: now)) }
    }

    /// Requests waiting for a grant.
    package var waitingCount: Int { shell.machine.waitingCount }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    package var scheduledCount: Int { shell.scheduledStarts }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    package func closeShell() {
        let shell = shell
        shell.isClosed = true
        shell.timer?.cancel()
        shell.timer = nil
        let now = shell.timeline.now()
        execute(shell.machine.close(at: now), at: now)
        shell.subscribers.finishAll()
    }

    /// A new stream of the events reported from now on, in order; it ends when the actor closes.
    package func subscribe() -> AsyncStream<RegistryEvent> {
        shell.subscribers.subscribe { [weak self] id in Task { await self?.unsubscribe(id) } }
    }

    private func unsubscribe(_ id: Int) { shell.subscribers.remove(id) }

    /// The timer fired: the clock reached `target`, so the machine serves what was due then, at
    /// that instant (WQ-7). Serving at the target rather than at the later reading makes a late
    /// timer change nothing but latency.
    private func wake(at target: RateLimitInstant) {
        // `timer` is kept: if another call re-armed it between this timer's firing and this wake,
        // `execute` must cancel that newer timer before arming the next one, or it would be orphaned.
        shell.timerTarget = nil
        execute(shell.machine.advance(to: target), at: target)
    }

    /// A grant with a scheduled start counts as waiting for it from the instant of the grant.
    private func countScheduledStart(_ outcome: WaitOutcome) {
        if case .granted(.delayed) = outcome { shell.scheduledStarts += 1 }
    }

    /// Resumes the continuations of tickets completed at `now`, publishes the events, and re-arms
    /// the timer for the next wake-up.
    @usableFromInline
    func execute(_ effects: RateLimitEffects, at now: RateLimitInstant) {
        let shell = shell
        for completion in effects.completions {
            guard let continuation = shell.continuations.removeValue(forKey: completion.ticket) else { continue }
            countScheduledStart(completion.outcome)
            continuation.resume(returning: (completion.outcome, completion.at))
        }
        if !effects.events.isEmpty {
            shell.subscribers.publish(effects.events)
            if let eventHandler = shell.eventHandler { for event in effects.events { eventHandler(event) } }
        }
        let target = shell.isClosed ? nil : shell.machine.nextWakeUp(at: now)
        guard target != shell.timerTarget else { return }
        shell.timer?.cancel()
        shell.timerTarget = target
        guard let target else {
            shell.timer = nil
            return
        }
        let reading = shell.timeline.reading(of: target)
        let clock = shell.timeline.clock
        shell.timer = Task { [weak self] in
            do { try await clock.sleep(until: reading, tolerance: nil) } catch { return }
            await self?.wake(at: target)
        }
    }
}
