// The lock adapter: a thin shell around the pure wait queue (Spec/WaitQueue.md), for code that is
// not async as well as code that is.
//
// One NSCondition guards the queue (NSLock and NSCondition are understood by ThreadSanitizer on
// Linux, where Synchronization.Mutex is reported as racing). Every call takes the lock, reads the
// injected clock, asks the queue, records what must happen, and releases the lock before doing
// it: continuations are resumed outside the lock (resuming can run code that calls back in),
// while threads blocked in `acquireBlocking` are handed their outcome under the lock and woken
// with a broadcast. One timer task sleeps on the clock until the queue's next wake-up.
//
// `acquireBlocking` parks the calling thread: call it from threads you own, never from a Swift
// concurrency task (the timer that wakes it runs on the cooperative pool).

import Foundation
import RateLimitCore

/// A rate limiter of any strategy guarded by a lock: synchronous `tryAcquire`, a blocking
/// `acquireBlocking` with a timeout, and an async `acquire`.
public final class LockedRateLimiter<Strategy: RateLimitStrategy, C: Clock>: @unchecked Sendable where C.Duration == Duration {
    // @unchecked: every `var` below is read and written only while `condition` is locked; the
    // `let`s are immutable and Sendable. That makes all access to shared mutable state exclusive.
    private let condition = NSCondition()
    private let timeline: ClockTimeline<C>
    private var waits: WaitQueue<Strategy>
    /// Suspended callers, resumed with their outcome and the instant it was decided at.
    private var continuations: [WaitTicket: CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>] = [:]
    /// Outcomes (and their instants) that arrived before their waiter was ready to receive them.
    private var early: [WaitTicket: (WaitOutcome, RateLimitInstant)] = [:]
    /// Tickets of threads parked in `acquireBlocking`, and the outcomes handed to them.
    private var parked: Set<WaitTicket> = []
    private var parkedOutcomes: [WaitTicket: (WaitOutcome, RateLimitInstant)] = [:]
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
        // Parked threads and suspended callers hold a reference, so only waiters that can no
        // longer be reached are left; they still get their outcome (WQ-9).
        timer?.cancel()
        for completion in waits.close() { continuations[completion.ticket]?.resume(returning: (completion.outcome, .origin)) }
    }

    // MARK: Requests

    /// Takes `permits` now if the limiter and the waiters ahead allow it; never waits (WQ-4).
    public func tryAcquire(_ permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        var outcome = WaitOutcome.closed
        locked { now in
            guard !isClosed else { return [] }
            let answer = waits.tryAcquire(permits, priority: priority, at: now)
            outcome = answer.outcome
            return answer.completions
        }
        return outcome
    }

    /// Parks the calling thread until `permits` are granted, the timeout passes, or the limiter is
    /// closed. A `delayed` grant (leaky bucket queue) also waits for its scheduled start.
    public func acquireBlocking(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) throws(RateLimitAcquireError) -> RateLimitGrant {
        var ticket: WaitTicket?
        var immediate: (WaitOutcome, RateLimitInstant)?
        locked { now in
            guard !isClosed else { immediate = (.closed, now); return [] }
            let request = waits.acquire(permits, priority: priority, deadline: timeout.map { timeline.deadline(after: $0, from: now) }, at: now)
            ticket = request.ticket
            if let mine = request.completions.first(where: { $0.ticket == request.ticket }) {
                immediate = (mine.outcome, now)
                countScheduledStart(mine.outcome)
                return request.completions.filter { $0.ticket != request.ticket }
            }
            parked.insert(request.ticket)
            return request.completions
        }
        var decided = immediate
        if decided == nil, let ticket {
            condition.lock()
            while parkedOutcomes[ticket] == nil { condition.wait() }
            decided = parkedOutcomes.removeValue(forKey: ticket)
            parked.remove(ticket)
            condition.unlock()
        }
        let (outcome, instant) = decided ?? (.closed, .origin)
        let grant = try outcome.grant(permits: permits).get()
        if case .delayed(let wait, _)? = grant.answer {
            defer { endScheduledStart() }
            blockUntil(timeline.reading(afterNanoseconds: wait, from: instant))
        }
        return grant
    }

    /// Waits asynchronously until `permits` are granted; cancelling the task cancels the request.
    public func acquire(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        var ticket: WaitTicket?
        var immediate: (WaitOutcome, RateLimitInstant)?
        locked { now in
            guard !isClosed else { immediate = (.closed, now); return [] }
            let request = waits.acquire(permits, priority: priority, deadline: timeout.map { timeline.deadline(after: $0, from: now) }, at: now)
            ticket = request.ticket
            if let mine = request.completions.first(where: { $0.ticket == request.ticket }) {
                immediate = (mine.outcome, now)
                countScheduledStart(mine.outcome)
                return request.completions.filter { $0.ticket != request.ticket }
            }
            return request.completions
        }
        var (outcome, instant) = immediate ?? (.closed, .origin)
        if immediate == nil, let ticket {
            (outcome, instant) = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>) in
                    condition.lock()
                    if let arrived = early.removeValue(forKey: ticket) {
                        condition.unlock()
                        continuation.resume(returning: arrived)
                    } else {
                        continuations[ticket] = continuation
                        condition.unlock()
                    }
                }
            } onCancel: { [weak self] in
                self?.cancel(ticket)
            }
        }
        let grant = try outcome.grant(permits: permits).get()
        if case .delayed(let wait, _)? = grant.answer {
            // Counted as waiting for its start since the grant, which fixed the start instant.
            defer { endScheduledStart() }
            do {
                try await timeline.clock.sleep(until: timeline.reading(afterNanoseconds: wait, from: instant), tolerance: nil)
            } catch {
                throw .cancelled
            }
        }
        return grant
    }

    /// Gives back permits (concurrency limiter) and serves the waiters (WQ-8).
    @discardableResult
    public func release(_ permits: Int64) -> RateLimitResult {
        var result = RateLimitResult.neverAllowed
        locked { now in
            let answer = waits.release(permits, at: now)
            result = answer.result
            return answer.completions
        }
        return result
    }

    /// Resets the strategy's state; waiters are served from the fresh state (WQ-8).
    @discardableResult
    public func reset() -> RateLimitResult {
        var result = RateLimitResult.neverAllowed
        locked { now in
            let answer = waits.reset(at: now)
            result = answer.result
            return answer.completions
        }
        return result
    }

    /// Replaces the configuration; waiters are served under the new one (WQ-8).
    @discardableResult
    public func reconfigure(_ strategy: Strategy) -> RateLimitResult {
        var result = RateLimitResult.neverAllowed
        locked { now in
            let answer = waits.reconfigure(strategy, at: now)
            result = answer.result
            return answer.completions
        }
        return result
    }

    /// The permits an acquire could take now, without taking any: `tryAcquire(0)`, which serves
    /// the waiters due first (0 once closed).
    public func remaining() -> Int64 {
        if case .granted(let answer) = tryAcquire(0) { answer.remaining ?? 0 } else { 0 }
    }

    /// Requests waiting in the queue for a grant.
    public var waitingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return waits.waitingCount
    }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    public var scheduledCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return scheduledStarts
    }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() {
        locked { _ in
            isClosed = true
            return waits.close()
        }
    }

    // MARK: The shell

    private func cancel(_ ticket: WaitTicket) {
        locked { now in waits.cancel(ticket, at: now) }
    }

    private func wake() {
        locked { now in
            timerTarget = nil
            return waits.advance(to: now)
        }
    }

    /// Runs `body` under the lock with the clock's reading, hands out its completions, re-arms the
    /// timer, and resumes continuations after unlocking.
    private func locked(_ body: (RateLimitInstant) -> [WaitCompletion]) {
        condition.lock()
        let now = timeline.now()
        let completions = body(now)
        var resumptions: [(CheckedContinuation<(WaitOutcome, RateLimitInstant), Never>, WaitOutcome)] = []
        var wokeParked = false
        for completion in completions {
            countScheduledStart(completion.outcome)
            if parked.contains(completion.ticket) {
                parkedOutcomes[completion.ticket] = (completion.outcome, now)
                wokeParked = true
            } else if let continuation = continuations.removeValue(forKey: completion.ticket) {
                resumptions.append((continuation, completion.outcome))
            } else {
                early[completion.ticket] = (completion.outcome, now)
            }
        }
        if wokeParked { condition.broadcast() }
        rearm(at: now)
        condition.unlock()
        for (continuation, outcome) in resumptions { continuation.resume(returning: (outcome, now)) }
    }

    /// Keeps one timer task sleeping on the clock until the queue's next wake-up (lock held).
    private func rearm(at now: RateLimitInstant) {
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
            self?.wake()
        }
    }

    /// A grant with a scheduled start counts as waiting for it from the instant of the grant (lock held).
    private func countScheduledStart(_ outcome: WaitOutcome) {
        if case .granted(.delayed) = outcome { scheduledStarts += 1 }
    }

    private func endScheduledStart() {
        condition.lock()
        scheduledStarts -= 1
        condition.unlock()
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

extension LockedRateLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public convenience init(_ strategy: Strategy, queueLimit: Int64 = 0) throws(RateLimitInputError) {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock())
    }
}
