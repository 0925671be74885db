// The Dispatch adapter's shell (Spec/WaitQueue.md WQ-11 ... WQ-13), for code built on completion
// handlers: one class generic over the machine it executes, the wait queue of one limiter
// (`DispatchRateLimiter`) or a registry of limiters by key (`DispatchRateLimitRegistry`).
//
// All state lives on one serial DispatchQueue. Each synchronous call reads the injected clock,
// then hops onto it (so that a thread waiting for the queue holds no clock read up: WQ-13), asks
// the machine, and hands completed requests' outcomes to their completion handlers on the
// callback queue (never on the limiter's own queue, so a handler that calls back in cannot
// deadlock); events go to their streams in order, and to the event handler on the callback queue.
// One DispatchSourceTimer fires at the machine's next wake-up. Dispatch time is a real clock, so
// the timer is armed from the injected clock's durations when that clock is `ContinuousClock` or
// `SuspendingClock`; for any other clock (a test's manual clock) a task sleeps on the clock itself
// and then fires the same timer at once, so time can be driven by hand.

import Dispatch
import RateLimitCore
import RateLimitShell

/// A serial-queue shell executing a waiting state machine, with completion handlers: what
/// ``DispatchRateLimiter`` and ``DispatchRateLimitRegistry`` hold.
// @unchecked: every `var` below is read and written only by code running on `queue`, a serial
// queue: blocks given to `queue.sync`, `async` or `asyncAfter`, and the timer source made on
// `queue` (the usableFromInline `machine`, `timerTarget`, `isClosed` included: inlined code
// touches them only inside `run`'s and `runIfOpen`'s blocks); `deinit` runs when no other
// reference is left. Blocks on a serial queue never overlap, so the access is exclusive.
@usableFromInline
package final class DispatchShell<Machine: RateLimitMachine, C: Clock>: SynchronousRateLimitShell, @unchecked Sendable
where C.Duration == Duration {
    @usableFromInline let queue: DispatchQueue
    private let callbackQueue: DispatchQueue
    /// Serial, on the callback queue: the event handler sees the events in order (REG-10).
    private let eventQueue: DispatchQueue
    /// The adapter's clock, as the machine's timeline.
    @usableFromInline package let timeline: ClockTimeline<C>
    private let timer: DispatchSourceTimer
    private let dispatchTimeIsClockTime: Bool
    // @exclusivity(unchecked): only code running on the serial `queue` touches these, one block
    // at a time, so every access is already exclusive and the runtime's dynamic check proves
    // nothing more.
    @exclusivity(unchecked) @usableFromInline var machine: Machine
    /// Waiting requests' handlers, called on `queue` with the outcome and the instant it was decided at.
    private var handlers: [WaitTicket: @Sendable (WaitOutcome, RateLimitInstant) -> Void] = [:]
    @exclusivity(unchecked) @usableFromInline var timerTarget: RateLimitInstant?
    private var sleeper: Task<Void, Never>?
    @exclusivity(unchecked) @usableFromInline var isClosed = false
    /// Granted requests still waiting for their scheduled start (leaky bucket queue).
    private let scheduledStarts: ScheduledStarts<C>
    private var subscribers = EventSubscribers()
    private var eventHandler: (@Sendable (RegistryEvent) -> Void)?

    package init(machine: Machine, label: String, clock: C, callbackQueue: DispatchQueue) {
        queue = DispatchQueue(label: label)
        self.callbackQueue = callbackQueue
        eventQueue = DispatchQueue(label: label + ".events", target: callbackQueue)
        timeline = ClockTimeline(clock: clock)
        self.machine = machine
        dispatchTimeIsClockTime = C.self == ContinuousClock.self || C.self == SuspendingClock.self
        scheduledStarts = ScheduledStarts(
            clock: clock, queue: queue, callbacks: callbackQueue, dispatchTimeIsClockTime: dispatchTimeIsClockTime)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .distantFuture)
        timer.setEventHandler { [weak self] in self?.wake(at: self?.timerTarget) }
        timer.activate()
    }

    deinit {
        timer.cancel()
        sleeper?.cancel()
        for completion in machine.close(at: timeline.now()).completions {
            handlers[completion.ticket]?(completion.outcome, .origin)
        }
        subscribers.finishAll()
    }

    /// Requests waiting for a grant.
    package var waitingCount: Int { queue.sync { machine.waitingCount } }

    /// Granted requests waiting for their scheduled start (leaky bucket queue).
    package var scheduledCount: Int { queue.sync { scheduledStarts.count } }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    package func close() {
        run { machine, now in
            isClosed = true
            return ((), machine.close(at: now))
        }
        queue.sync { subscribers.finishAll() }
    }

    // MARK: Events (REG-10)

    package func events<Strategy>() -> AsyncStream<RegistryEvent> where Machine == RateLimitRegistry<Strategy> {
        queue.sync { subscribers.subscribe { [weak self] id in self?.unsubscribe(id) } }
    }

    private func unsubscribe(_ id: Int) {
        queue.async { self.subscribers.remove(id) }
    }

    package func setEventHandler<Strategy>(_ handler: (@Sendable (RegistryEvent) -> Void)?)
    where Machine == RateLimitRegistry<Strategy> {
        queue.sync { eventHandler = handler }
    }

    // MARK: The shell

    /// Runs `operation` on the queue, on the machine at the clock's reading, executes its effects
    /// and returns its value.
    @inlinable @discardableResult
    package func run<T>(_ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)) -> T {
        let now = timeline.now()
        return withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { slot in
            queue.sync { perform(operation, at: now, into: slot) }
            return slot.moveElement(from: 0)  // `sync` ran the block, once, before it returned
        }
    }

    /// ``run(_:)`` unless the limiter is closed (then `closed`, with no Optional to destroy on the
    /// hot path).
    @inlinable
    package func runIfOpen<T>(
        otherwise closed: T, _ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects)
    ) -> T {
        let now = timeline.now()
        return withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { slot in
            queue.sync {
                if isClosed {
                    slot.initializeElement(at: 0, to: closed)
                } else {
                    perform(operation, at: now, into: slot)
                }
            }
            return slot.moveElement(from: 0)  // `sync` ran the block, once, before it returned
        }
    }

    /// A registry's request that never waits (REG-5): the key prefetched, then the clock read, so
    /// that the key's cache miss overlaps the clock's read (Performance.md, "Prefetch").
    @inlinable
    package func tryAcquire<Strategy>(_ key: String, permits: Int64, priority: RateLimitPriority) -> WaitOutcome
    where Machine == RateLimitRegistry<Strategy> {
        withUnsafeTemporaryAllocation(of: WaitOutcome.self, capacity: 1) { slot in
            queue.sync {
                if isClosed {
                    slot.initializeElement(at: 0, to: .closed)
                    return
                }
                let (outcome, effects, now) = machine.tryAcquire(
                    key, permits: permits, priority: priority, on: timeline)
                deliver(effects, at: now)
                slot.initializeElement(at: 0, to: outcome)
            }
            return slot.moveElement(from: 0)  // `sync` ran the block, once, before it returned
        }
    }

    /// On `queue`: `operation` at `now` (the clock's reading, taken before `sync` so that a thread
    /// waiting for the queue holds no clock read up: WQ-13), its effects executed, its value
    /// written into `slot`'s uninitialized element.
    ///
    /// The value crosses `sync` in memory the caller allocated, moved in and out: the generic
    /// `sync<T>` of Foundation-less Dispatch boxes its result through unspecialized code, and a
    /// captured `T?` is destroyed through `Optional`'s value witnesses (Performance.md,
    /// "Dispatch's sync").
    @inlinable
    func perform<T>(
        _ operation: (inout Machine, RateLimitInstant) -> (T, RateLimitEffects), at now: RateLimitInstant,
        into slot: UnsafeMutableBufferPointer<T>
    ) {
        let (result, effects) = operation(&machine, now)
        deliver(effects, at: now)
        slot.initializeElement(at: 0, to: result)
    }

    /// Issues a request with `operation` on the queue; `completion` runs once on the callback queue
    /// with the grant (after the scheduled start of a `delayed` grant) or the error.
    package func submit(
        permits: Int64, completion: @escaping @Sendable (Result<RateLimitGrant, RateLimitAcquireError>) -> Void,
        _ operation: @escaping @Sendable (inout Machine, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
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
                    // A grant that starts now comes after every start already due (WQ-12).
                    if case .success = result { self?.scheduledStarts.startDue() }
                    callbacks.async { completion(result) }
                }
            }
            let now = timeline.now()
            guard !isClosed else { return finish(.closed, now) }
            var (ticket, effects) = operation(&machine, now)
            let immediate = effects.removeCompletion(of: ticket)
            if immediate == nil { handlers[ticket] = finish }
            deliver(effects, at: now)
            if let immediate { finish(immediate.outcome, now) }
        }
    }

    /// The timer fired: the machine serves what was due at `target` (WQ-7), so a late timer
    /// changes nothing but latency. A Dispatch timer fires for the target armed last, which may lie
    /// ahead of the clock when it was re-armed as it fired: then it serves at the clock's reading.
    private func wake(at target: RateLimitInstant?) {
        let now = timeline.now()
        let instant = target.map { min($0, now) } ?? now
        timerTarget = nil
        deliver(machine.advance(to: instant), at: instant)
    }

    /// Hands the outcomes decided at `now` to their handlers, publishes the events and re-arms the
    /// timer (on `queue`). Inlined into callers, so that the common answer (no completion, no
    /// event, nobody waiting, no timer) costs a few comparisons.
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
            handlers.removeValue(forKey: completion.ticket)?(completion.outcome, completion.at)
        }
        if !effects.events.isEmpty {
            subscribers.publish(effects.events)
            if let handler = eventHandler {
                let events = effects.events
                eventQueue.async { for event in events { handler(event) } }
            }
        }
        let target = isClosed ? nil : machine.nextWakeUp(at: now)
        guard target != timerTarget else { return }
        timerTarget = target
        sleeper?.cancel()
        sleeper = nil
        guard let target else {
            timer.schedule(deadline: .distantFuture)
            return
        }
        if dispatchTimeIsClockTime {
            // From a fresh reading: `now` may have been read before the call waited for the queue.
            timer.schedule(deadline: dispatchTime(afterNanoseconds: target.nanoseconds(since: timeline.now())))
        } else {
            timer.schedule(deadline: .distantFuture)
            let reading = timeline.reading(of: target)
            let clock = timeline.clock
            sleeper = Task { [weak self] in
                do { try await clock.sleep(until: reading, tolerance: nil) } catch { return }
                guard let limiter = self else { return }
                limiter.queue.async { limiter.wake(at: target) }
            }
        }
    }

    /// Runs `action` on the callback queue at the scheduled start, `wait` nanoseconds after the
    /// grant instant; the request counts in `scheduledCount` until then (on `queue`).
    private func scheduleStart(
        afterNanoseconds wait: Int64, from granted: RateLimitInstant, _ action: @escaping @Sendable () -> Void
    ) {
        scheduledStarts.add(action, at: timeline.reading(afterNanoseconds: wait, from: granted))
    }
}

/// The scheduled starts of one Dispatch shell (WQ-12), in the order of their instants. Each start
/// has its own timer, but a timer that fires runs every start that is due, first to last: two
/// starts never swap, even when Dispatch fires their timers out of order (timers are coalesced
/// within their leeway, and one that fired early by the clock is re-armed behind the next).
/// Timers hold this object, not the shell, so a limiter released meanwhile still starts them.
// @unchecked: `entries` is read and written only on `queue`, a serial queue: `add` and `count`
// are called there (by the shell's blocks), and the timers' blocks are given to `queue`.
private final class ScheduledStarts<C: Clock>: @unchecked Sendable where C.Duration == Duration {
    private struct Entry {
        let start: C.Instant
        let action: @Sendable () -> Void
    }
    private let clock: C
    private let queue: DispatchQueue
    private let callbacks: DispatchQueue
    private let dispatchTimeIsClockTime: Bool
    /// Sorted by instant; equal instants in the order they were added. The first `head` have run
    /// (dropped in bulk, so that a long queue costs no more per start than a short one).
    private var entries: [Entry] = []
    private var head = 0

    init(clock: C, queue: DispatchQueue, callbacks: DispatchQueue, dispatchTimeIsClockTime: Bool) {
        self.clock = clock
        self.queue = queue
        self.callbacks = callbacks
        self.dispatchTimeIsClockTime = dispatchTimeIsClockTime
    }

    /// Starts not run yet.
    var count: Int { entries.count - head }

    /// Runs `action` on the callback queue once the clock reads `start`, after every start added
    /// before it whose instant is not later.
    func add(_ action: @escaping @Sendable () -> Void, at start: C.Instant) {
        var index = entries.endIndex  // starts mostly come in order: search from the end
        while index > head, entries[index - 1].start > start { index -= 1 }
        entries.insert(Entry(start: start, action: action), at: index)
        arm(for: start)
    }

    /// Runs what is due once the clock reads `start`. Dispatch time and the clock may tick at
    /// slightly different rates (NTP slewing), so a timer that fires early is re-armed for the
    /// rest: a scheduled start never runs before its instant.
    private func arm(for start: C.Instant) {
        let remaining = clock.now.duration(to: start)
        guard remaining > .zero else { return runDue(through: clock.now) }
        if dispatchTimeIsClockTime {
            queue.asyncAfter(deadline: dispatchTime(afterNanoseconds: nanosecondsRoundedUp(remaining))) {
                self.arm(for: start)
            }
        } else {
            // Any other clock (a test's manual clock) is slept on; a sleep that ends by throwing
            // still starts the request, so that none is lost.
            let clock = self.clock
            Task {
                let slept: Void? = try? await clock.sleep(until: start, tolerance: nil)
                self.queue.async { slept == nil ? self.runDue(through: max(start, clock.now)) : self.arm(for: start) }
            }
        }
    }

    /// Hands every start due at the clock's reading to the callback queue, in order.
    func startDue() {
        guard count > 0 else { return }
        runDue(through: clock.now)
    }

    /// Hands every start at `instant` or before to the callback queue, in order.
    private func runDue(through instant: C.Instant) {
        var next = head
        while next < entries.count, entries[next].start <= instant {
            callbacks.async(execute: entries[next].action)
            next += 1
        }
        head = next
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
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
