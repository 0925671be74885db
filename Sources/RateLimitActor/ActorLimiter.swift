// The actor adapter's shell (Spec/WaitQueue.md WQ-11 ... WQ-13): one actor generic over the
// machine it executes, the wait queue of one limiter (`ActorRateLimiter`) or a registry of
// limiters by key (`ActorRateLimitRegistry`).
//
// The actor holds the machine, reads its injected clock, asks the machine and executes the
// answers: it resumes the continuations of completed requests, publishes events, and keeps one
// timer task sleeping on the clock until the machine's next wake-up. No decision is made here.
// Waiting is cancellation-aware: cancelling the waiting task cancels its ticket (WQ-6). When the
// actor is released from memory (or `close()` is called), every waiter gets `closed` (WQ-9): the
// timer and cancellation handlers hold it weakly, so waiters do not keep it alive.

import RateLimitCore

/// An actor executing a waiting state machine; use it as ``ActorRateLimiter`` or
/// ``ActorRateLimitRegistry``.
public final actor ActorLimiter<Machine: RateLimitMachine, C: Clock> where C.Duration == Duration {
    // @exclusivity(unchecked): the actor runs one synchronous stretch of code at a time and an
    // `inout` access cannot span a suspension point, so every access is already exclusive and the
    // runtime's dynamic check (two calls per operation on the hot path) proves nothing more.
    @exclusivity(unchecked) @usableFromInline var machine: Machine
    /// The limiter's timeline on its clock: its instants are the ones the machine decides at.
    public nonisolated let timeline: ClockTimeline<C>
    /// Suspended callers, resumed with their outcome and the instant it was decided at.
    private var continuations: [WaitTicket: CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>] = [:]
    private var timer: Task<Void, Never>?
    @exclusivity(unchecked) @usableFromInline var timerTarget: RateLimitInstant?
    @exclusivity(unchecked) @usableFromInline var isClosed = false
    /// Granted requests still waiting for their scheduled start (leaky bucket queue).
    private var scheduledStarts = 0
    private var subscribers = EventSubscribers()
    private var eventHandler: (@Sendable (RegistryEvent) -> Void)?

    init(machine: Machine, clock: C) {
        self.machine = machine
        timeline = ClockTimeline(clock: clock)
    }

    deinit {
        timer?.cancel()
        var machine = machine
        for completion in machine.closeAll(at: timeline.now()).completions {
            continuations[completion.ticket]?.resume(returning: (completion.outcome, .origin))
        }
        subscribers.finishAll()
    }

    /// Requests waiting for a grant.
    public var waitingCount: Int { machine.waitingCount }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    public var scheduledCount: Int { scheduledStarts }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() {
        isClosed = true
        timer?.cancel()
        timer = nil
        let now = timeline.now()
        deliver(machine.closeAll(at: now), at: now)
        subscribers.finishAll()
    }

    // MARK: Events (REG-10)

    /// A new stream of the events reported from now on, in order; it ends when the limiter closes.
    /// Registries only: a single limiter has no keys to report on.
    public func events<Strategy>() -> AsyncStream<RegistryEvent> where Machine == RateLimitRegistry<Strategy> {
        subscribers.subscribe { [weak self] id in Task { await self?.unsubscribe(id) } }
    }

    /// Calls `handler` with every event, in order, on the actor (keep it short; `nil` removes it).
    public func setEventHandler<Strategy>(_ handler: (@Sendable (RegistryEvent) -> Void)?) where Machine == RateLimitRegistry<Strategy> {
        eventHandler = handler
    }

    private func unsubscribe(_ id: Int) { subscribers.remove(id) }

    // MARK: The shell

    /// Runs `operation` on the machine at the clock's reading and executes its effects.
    @inlinable
    func run<T>(_ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T {
        let now = timeline.now()
        let (value, effects) = operation(&machine, now)
        deliver(effects, at: now)
        return value
    }

    /// Waits for the outcome of `ticket`, issued at `now` with `effects`: at once when the effects
    /// hold it, otherwise until a later operation or wake-up delivers it. A `delayed` grant (leaky
    /// bucket queue) also waits for its scheduled start.
    func outcome(
        of ticket: WaitTicket, permits: Int64, effects: RateLimitEffects, at now: RateLimitInstant
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        let outcome: WaitOutcome
        let decided: RateLimitInstant
        if let immediate = effects.completions.first(where: { $0.ticket == ticket }) {
            var others = effects
            others.completions.removeAll { $0.ticket == ticket }
            deliver(others, at: now)
            (outcome, decided) = (immediate.outcome, now)
            countScheduledStart(outcome)
        } else {
            deliver(effects, at: now)
            (outcome, decided) = await withTaskCancellationHandler {
                await withCheckedContinuation { continuations[ticket] = $0 }
            } onCancel: { [weak self] in
                guard let limiter = self else { return }
                Task { await limiter.cancel(ticket) }
            }
        }
        let grant = try outcome.grant(permits: permits).get()
        if case .delayed(let wait, _)? = grant.answer {
            // The slot is taken; the caller's turn starts `wait` after the grant (counted since then).
            defer { scheduledStarts -= 1 }
            let start = timeline.reading(afterNanoseconds: wait, from: decided)
            do { try await timeline.clock.sleep(until: start, tolerance: nil) } catch { throw .cancelled }
        }
        return grant
    }

    private func cancel(_ ticket: WaitTicket) {
        run { machine, now in ((), machine.cancelWaiter(ticket, at: now)) }
    }

    /// The timer fired: the clock reached `target`, so the machine serves what was due then, at
    /// that instant (WQ-7). Serving at the target rather than at the later reading makes a late
    /// timer change nothing but latency.
    private func wake(at target: RateLimitInstant) {
        // `timer` is kept: if another call re-armed it between this timer's firing and this wake,
        // `deliver` must cancel that newer timer before arming the next one, or it would be orphaned.
        timerTarget = nil
        deliver(machine.serveDue(at: target), at: target)
    }

    /// A grant with a scheduled start counts as waiting for it from the instant of the grant.
    private func countScheduledStart(_ outcome: WaitOutcome) {
        if case .granted(.delayed) = outcome { scheduledStarts += 1 }
    }

    /// Resumes the continuations of tickets completed at `now`, publishes the events, and re-arms
    /// the timer for the next wake-up. Inlined into callers, so that the common answer (no
    /// completion, no event, nobody waiting, no timer) costs a few comparisons.
    @inlinable
    func deliver(_ effects: RateLimitEffects, at now: RateLimitInstant) {
        guard machine.leavesNothingToDo(effects, timerTarget: timerTarget, closed: isClosed) else {
            return deliverExecuting(effects, at: now)
        }
    }

    /// ``deliver(_:at:)`` when there is something to execute.
    @usableFromInline
    func deliverExecuting(_ effects: RateLimitEffects, at now: RateLimitInstant) {
        for completion in effects.completions {
            guard let continuation = continuations.removeValue(forKey: completion.ticket) else { continue }
            countScheduledStart(completion.outcome)
            continuation.resume(returning: (completion.outcome, completion.at))
        }
        if !effects.events.isEmpty {
            subscribers.publish(effects.events)
            if let eventHandler { for event in effects.events { eventHandler(event) } }
        }
        let target = isClosed ? nil : machine.wakeUp(at: now)
        guard target != timerTarget else { return }
        timer?.cancel()
        timerTarget = target
        guard let target else {
            timer = nil
            return
        }
        let reading = timeline.reading(of: target)
        let clock = timeline.clock
        timer = Task { [weak self] in
            do { try await clock.sleep(until: reading, tolerance: nil) } catch { return }
            await self?.wake(at: target)
        }
    }
}
