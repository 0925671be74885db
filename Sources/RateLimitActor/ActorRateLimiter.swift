// The actor adapter: a thin shell around the pure wait queue (Spec/WaitQueue.md).
//
// The actor holds the queue, reads its injected clock, asks the queue and executes the answers:
// it resumes the continuations of completed requests and keeps one timer task sleeping on the
// clock until the queue's next wake-up. No decision is made here. Waiting is cancellation-aware:
// cancelling the waiting task cancels its ticket (WQ-6). When the actor is released from memory
// (or `close()` is called), every waiter gets `closed` (WQ-9): the timer and cancellation handlers
// hold it weakly, so waiters do not keep it alive.

import RateLimitCore

/// A rate limiter of any strategy, as an actor: `tryAcquire` answers at once, `acquire` waits
/// in a bounded priority queue until it is granted, times out or is cancelled.
public actor ActorRateLimiter<Strategy: RateLimitStrategy, C: Clock> where C.Duration == Duration {
    private var waits: WaitQueue<Strategy>
    private let timeline: ClockTimeline<C>
    /// Suspended callers, resumed with their outcome and the instant it was decided at.
    private var continuations: [WaitTicket: CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>] = [:]
    private var timer: Task<Void, Never>?
    private var timerTarget: RateLimitInstant?
    private var isClosed = false
    /// Granted requests still waiting for their scheduled start (leaky bucket queue).
    private var scheduledStarts = 0

    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits, on `clock`.
    ///
    /// - Throws: ``RateLimitInputError`` when `queueLimit` is negative.
    public init(_ strategy: Strategy, queueLimit: Int64 = 0, clock: C) throws(RateLimitInputError) {
        timeline = ClockTimeline(clock: clock)
        waits = try WaitQueue(strategy, queueLimit: queueLimit, at: .origin)
    }

    deinit {
        timer?.cancel()
        var queue = waits
        for completion in queue.close() { continuations[completion.ticket]?.resume(returning: (completion.outcome, .origin)) }
    }

    // MARK: Requests

    /// Takes `permits` now if the limiter and the waiters ahead allow it; never waits (WQ-4).
    public func tryAcquire(_ permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        guard !isClosed else { return .closed }
        let now = timeline.now()
        let (outcome, completions) = waits.tryAcquire(permits, priority: priority, at: now)
        deliver(completions, at: now)
        return outcome
    }

    /// Waits until `permits` are granted (WQ-4, WQ-5). A `delayed` grant (leaky bucket queue) also
    /// waits for its scheduled start before returning.
    ///
    /// - Parameter timeout: how long to wait at most; `nil` waits as long as it takes.
    /// - Throws: ``RateLimitAcquireError``: rejected at once, timed out, cancelled, or closed.
    public func acquire(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        guard !isClosed else { throw .closed }
        let now = timeline.now()
        let deadline = timeout.map { timeline.deadline(after: $0, from: now) }
        let (ticket, completions) = waits.acquire(permits, priority: priority, deadline: deadline, at: now)
        let outcome: WaitOutcome
        let decided: RateLimitInstant
        if let immediate = completions.first(where: { $0.ticket == ticket }) {
            deliver(completions.filter { $0.ticket != ticket }, at: now)
            (outcome, decided) = (immediate.outcome, now)
            countScheduledStart(outcome)
        } else {
            deliver(completions, at: now)
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

    /// Gives back permits (concurrency limiter) and serves the waiters (WQ-8).
    @discardableResult
    public func release(_ permits: Int64) -> RateLimitResult {
        let now = timeline.now()
        let (result, completions) = waits.release(permits, at: now)
        deliver(completions, at: now)
        return result
    }

    /// Resets the strategy's state; waiters are served from the fresh state (WQ-8).
    @discardableResult
    public func reset() -> RateLimitResult {
        let now = timeline.now()
        let (result, completions) = waits.reset(at: now)
        deliver(completions, at: now)
        return result
    }

    /// Replaces the configuration; waiters are served under the new one (WQ-8).
    @discardableResult
    public func reconfigure(_ strategy: Strategy) -> RateLimitResult {
        let now = timeline.now()
        let (result, completions) = waits.reconfigure(strategy, at: now)
        deliver(completions, at: now)
        return result
    }

    /// The permits an acquire could take now, without taking any: `tryAcquire(0)`, which serves
    /// the waiters due first (0 once closed).
    public func remaining() -> Int64 {
        if case .granted(let answer) = tryAcquire(0) { answer.remaining ?? 0 } else { 0 }
    }

    /// Requests waiting in the queue for a grant.
    public var waitingCount: Int { waits.waitingCount }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    public var scheduledCount: Int { scheduledStarts }

    /// The strategy in force.
    public var strategy: Strategy { waits.limiter.strategy }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() {
        isClosed = true
        timer?.cancel()
        timer = nil
        deliver(waits.close(), at: timeline.now())
    }

    // MARK: The shell

    private func cancel(_ ticket: WaitTicket) {
        let now = timeline.now()
        deliver(waits.cancel(ticket, at: now), at: now)
    }

    private func wake() {
        // `timer` is kept: if another call re-armed it between this timer's firing and this wake,
        // `deliver` must cancel that newer timer before arming the next one, or it would be orphaned.
        timerTarget = nil
        let now = timeline.now()
        deliver(waits.advance(to: now), at: now)
    }

    /// A grant with a scheduled start counts as waiting for it from the instant of the grant.
    private func countScheduledStart(_ outcome: WaitOutcome) {
        if case .granted(.delayed) = outcome { scheduledStarts += 1 }
    }

    /// Resumes the continuations of tickets completed at `now` and re-arms the timer for the
    /// next wake-up.
    private func deliver(_ completions: [WaitCompletion], at now: RateLimitInstant) {
        for completion in completions {
            guard let continuation = continuations.removeValue(forKey: completion.ticket) else { continue }
            countScheduledStart(completion.outcome)
            continuation.resume(returning: (completion.outcome, now))
        }
        let target = isClosed ? nil : waits.nextWakeUp(at: now)
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
            await self?.wake()
        }
    }
}

extension ActorRateLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public init(_ strategy: Strategy, queueLimit: Int64 = 0) throws(RateLimitInputError) {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock())
    }
}
