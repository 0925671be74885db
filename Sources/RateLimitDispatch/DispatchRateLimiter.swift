// The Dispatch adapter: a thin shell around the pure wait queue (Spec/WaitQueue.md) for code
// built on completion handlers.
//
// All state lives on one serial DispatchQueue. Each call hops onto it, reads the injected clock,
// asks the queue, and hands completed requests' outcomes to their completion handlers on the
// callback queue (never on the limiter's own queue, so a handler that calls back in cannot
// deadlock). One DispatchSourceTimer fires at the queue's next wake-up. Dispatch time is a real
// clock, so the timer is armed from the injected clock's durations when that clock is
// `ContinuousClock` or `SuspendingClock`; for any other clock (a test's manual clock) a task
// sleeps on the clock itself and then fires the same timer at once, so time can be driven by hand.

import Dispatch
import RateLimitCore

/// A rate limiter of any strategy on a serial dispatch queue, with completion handlers.
public final class DispatchRateLimiter<Strategy: RateLimitStrategy, C: Clock>: @unchecked Sendable where C.Duration == Duration {
    // @unchecked: every `var` below is read and written only on `queue`, a serial queue (each
    // method hops there with `queue.sync` or `queue.async`), which makes the access exclusive.
    private let queue: DispatchQueue
    private let callbackQueue: DispatchQueue
    private let timeline: ClockTimeline<C>
    private let timer: DispatchSourceTimer
    private let dispatchTimeIsClockTime: Bool
    private var waits: WaitQueue<Strategy>
    /// Waiting requests' handlers, called on `queue` with the outcome and the instant it was decided at.
    private var handlers: [WaitTicket: @Sendable (WaitOutcome, RateLimitInstant) -> Void] = [:]
    private var timerTarget: RateLimitInstant?
    private var sleeper: Task<Void, Never>?
    private var isClosed = false
    /// Granted requests still waiting for their scheduled start (leaky bucket queue).
    private var scheduledStarts = 0

    /// A limiter of `strategy` whose waiters may hold up to `queueLimit` permits, on `clock`;
    /// completion handlers run on `callbackQueue`.
    ///
    /// - Throws: ``RateLimitInputError`` when `queueLimit` is negative.
    public init(
        _ strategy: Strategy, queueLimit: Int64 = 0, clock: C, callbackQueue: DispatchQueue = .global()
    ) throws(RateLimitInputError) {
        queue = DispatchQueue(label: "RateLimitDispatch.\(Strategy.identifier)")
        self.callbackQueue = callbackQueue
        timeline = ClockTimeline(clock: clock)
        waits = try WaitQueue(strategy, queueLimit: queueLimit, at: .origin)
        dispatchTimeIsClockTime = C.self == ContinuousClock.self || C.self == SuspendingClock.self
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .distantFuture)
        timer.setEventHandler { [weak self] in self?.wake() }
        timer.activate()
    }

    deinit {
        timer.cancel()
        sleeper?.cancel()
        for completion in waits.close() { handlers[completion.ticket]?(completion.outcome, .origin) }
    }

    // MARK: Requests

    /// Takes `permits` now if the limiter and the waiters ahead allow it; never waits (WQ-4).
    public func tryAcquire(_ permits: Int64 = 1, priority: RateLimitPriority = .normal) -> WaitOutcome {
        var outcome = WaitOutcome.closed
        queue.sync {
            guard !isClosed else { return }
            let now = timeline.now()
            let answer = waits.tryAcquire(permits, priority: priority, at: now)
            outcome = answer.outcome
            deliver(answer.completions, at: now)
        }
        return outcome
    }

    /// Requests `permits`, waiting in the queue if needed; `completion` runs once on the callback
    /// queue with the grant (after the scheduled start of a `delayed` grant) or the error.
    public func acquire(
        _ permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<RateLimitGrant, RateLimitAcquireError>) -> Void
    ) {
        queue.async { [self] in
            // Runs on `queue` when the outcome is known: a scheduled start is waited for first.
            // The callback queue is captured strongly so that a limiter released from memory
            // still delivers `closed` (WQ-9).
            let callbacks = callbackQueue
            let finish: @Sendable (WaitOutcome, RateLimitInstant) -> Void = { [weak self] outcome, decided in
                let result = outcome.grant(permits: permits)
                if case .success(let grant) = result, case .delayed(let wait, _)? = grant.answer, let self {
                    self.scheduleStart(afterNanoseconds: wait, from: decided) { completion(result) }
                } else {
                    callbacks.async { completion(result) }
                }
            }
            let now = timeline.now()
            guard !isClosed else { return finish(.closed, now) }
            let request = waits.acquire(permits, priority: priority, deadline: timeout.map { timeline.deadline(after: $0, from: now) }, at: now)
            let immediate = request.completions.first { $0.ticket == request.ticket }
            if immediate == nil { handlers[request.ticket] = finish }
            deliver(request.completions.filter { $0.ticket != request.ticket }, at: now)
            if let immediate { finish(immediate.outcome, now) }
        }
    }

    /// Gives back permits (concurrency limiter) and serves the waiters (WQ-8).
    @discardableResult
    public func release(_ permits: Int64) -> RateLimitResult {
        apply { now in waits.release(permits, at: now) }
    }

    /// Resets the strategy's state; waiters are served from the fresh state (WQ-8).
    @discardableResult
    public func reset() -> RateLimitResult {
        apply { now in waits.reset(at: now) }
    }

    /// Replaces the configuration; waiters are served under the new one (WQ-8).
    @discardableResult
    public func reconfigure(_ strategy: Strategy) -> RateLimitResult {
        apply { now in waits.reconfigure(strategy, at: now) }
    }

    /// The permits an acquire could take now, without taking any: `tryAcquire(0)`, which serves
    /// the waiters due first (0 once closed).
    public func remaining() -> Int64 {
        if case .granted(let answer) = tryAcquire(0) { answer.remaining ?? 0 } else { 0 }
    }

    /// Requests waiting in the queue for a grant.
    public var waitingCount: Int {
        var count = 0
        queue.sync { count = waits.waitingCount }
        return count
    }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    public var scheduledCount: Int {
        var count = 0
        queue.sync { count = scheduledStarts }
        return count
    }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    public func close() {
        queue.sync {
            isClosed = true
            deliver(waits.close(), at: timeline.now())
        }
    }

    // MARK: The shell

    private func apply(_ body: (RateLimitInstant) -> (result: RateLimitResult, completions: [WaitCompletion])) -> RateLimitResult {
        var result = RateLimitResult.neverAllowed
        queue.sync {
            let now = timeline.now()
            let answer = body(now)
            result = answer.result
            deliver(answer.completions, at: now)
        }
        return result
    }

    private func wake() {
        timerTarget = nil
        let now = timeline.now()
        deliver(waits.advance(to: now), at: now)
    }

    /// Hands the outcomes decided at `now` to their handlers and re-arms the timer (on `queue`).
    private func deliver(_ completions: [WaitCompletion], at now: RateLimitInstant) {
        for completion in completions {
            handlers.removeValue(forKey: completion.ticket)?(completion.outcome, now)
        }
        let target = isClosed ? nil : waits.nextWakeUp(at: now)
        guard target != timerTarget else { return }
        timerTarget = target
        sleeper?.cancel()
        sleeper = nil
        guard let target else {
            timer.schedule(deadline: .distantFuture)
            return
        }
        if dispatchTimeIsClockTime {
            timer.schedule(deadline: dispatchTime(afterNanoseconds: target.nanoseconds(since: now)))
        } else {
            timer.schedule(deadline: .distantFuture)
            let reading = timeline.reading(of: target)
            let clock = timeline.clock
            let timer = self.timer
            sleeper = Task {
                do { try await clock.sleep(until: reading, tolerance: nil) } catch { return }
                timer.schedule(deadline: .now())
            }
        }
    }

    /// Runs `action` on the callback queue at the scheduled start, `wait` nanoseconds after the
    /// grant instant; the request counts in `scheduledCount` until then (on `queue`).
    private func scheduleStart(afterNanoseconds wait: Int64, from granted: RateLimitInstant, _ action: @escaping @Sendable () -> Void) {
        scheduledStarts += 1
        let callbacks = callbackQueue  // a limiter released meanwhile still runs `action` there
        let started: @Sendable () -> Void = { [weak self] in
            guard let self else { return callbacks.async(execute: action) }
            self.queue.async {
                self.scheduledStarts -= 1
                self.callbackQueue.async(execute: action)
            }
        }
        let start = timeline.reading(afterNanoseconds: wait, from: granted)
        if dispatchTimeIsClockTime {
            Self.run(started, at: start, clock: timeline.clock, on: queue)
        } else {
            let deadline = start
            let clock = timeline.clock
            Task {
                try? await clock.sleep(until: deadline, tolerance: nil)
                started()
            }
        }
    }
}

extension DispatchRateLimiter {
    /// Runs `action` once `clock` reads `start` or later. Dispatch time and the clock may tick at
    /// slightly different rates (NTP slewing), so a timer that fires early is re-armed for the
    /// rest: a scheduled start never runs before its instant (WQ-12).
    private static func run(_ action: @escaping @Sendable () -> Void, at start: C.Instant, clock: C, on queue: DispatchQueue) {
        let remaining = clock.now.duration(to: start)
        guard remaining > .zero else { return action() }
        queue.asyncAfter(deadline: dispatchTime(afterNanoseconds: nanosecondsRoundedUp(remaining))) {
            run(action, at: start, clock: clock, on: queue)
        }
    }
}

/// A positive duration in whole nanoseconds, rounded up, at most `Int64.max`.
private func nanosecondsRoundedUp(_ duration: Duration) -> Int64 {
    guard duration < .nanoseconds(Int64.max) else { return .max }
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000_000 + (attoseconds + 999_999_999) / 1_000_000_000
}

/// The dispatch time `nanoseconds` from now, exact for any non-negative `Int64` even where `Int`
/// is 32 bits wide (watchOS), where `.nanoseconds` alone holds only about 2 seconds. Beyond
/// `Int.max` seconds (68 years on 32 bits) it is `.distantFuture`, as Dispatch itself saturates.
private func dispatchTime(afterNanoseconds nanoseconds: Int64) -> DispatchTime {
    let nanoseconds = max(0, nanoseconds)
    if let exact = Int(exactly: nanoseconds) { return .now() + .nanoseconds(exact) }
    let perSecond: Int64 = 1_000_000_000
    guard let seconds = Int(exactly: nanoseconds / perSecond) else { return .distantFuture }
    return .now() + .seconds(seconds) + .nanoseconds(Int(nanoseconds % perSecond))
}

extension DispatchRateLimiter where C == ContinuousClock {
    /// A limiter of `strategy` on the continuous clock.
    public convenience init(_ strategy: Strategy, queueLimit: Int64 = 0, callbackQueue: DispatchQueue = .global()) throws(RateLimitInputError) {
        try self.init(strategy, queueLimit: queueLimit, clock: ContinuousClock(), callbackQueue: callbackQueue)
    }
}
