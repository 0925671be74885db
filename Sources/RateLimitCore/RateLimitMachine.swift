// What an adapter executes (Spec/WaitQueue.md WQ-11 ... WQ-13, Spec/Registry.md REG-11).
//
// The wait queue of one limiter and the registry of limiters by key are both waiting state
// machines: each operation returns the outcomes to deliver and the events to report, and the
// machine says when it next needs a wake-up. An adapter is one shell generic over this protocol:
// it holds the machine in its exclusion, reads its clock, and executes the effects.

/// Outcomes to deliver and events to report, in the order they were decided.
public struct RateLimitEffects: Hashable, Sendable {
    // `nil` for none, never an empty array: effects with nothing in them then hold no array,
    // whose release (even of the shared empty one) the shells paid on every call (callgrind: 18
    // instructions of the lock adapter's `tryAcquire`).
    @usableFromInline var storedCompletions: [WaitCompletion]?
    @usableFromInline var storedEvents: [RegistryEvent]?

    /// Outcomes decided for waiters.
    @inlinable
    public var completions: [WaitCompletion] {
        get { storedCompletions ?? [] }
        _modify {
            var value = storedCompletions ?? []
            storedCompletions = nil  // `value` stays uniquely referenced while it is modified
            defer { storedCompletions = value.isEmpty ? nil : value }
            yield &value
        }
    }

    /// Events to report.
    @inlinable
    public var events: [RegistryEvent] {
        get { storedEvents ?? [] }
        _modify {
            var value = storedEvents ?? []
            storedEvents = nil
            defer { storedEvents = value.isEmpty ? nil : value }
            yield &value
        }
    }

    /// No completion and no event.
    @inlinable
    public var isEmpty: Bool { storedCompletions == nil && storedEvents == nil }

    /// No effect.
    @inlinable
    public init() {
        storedCompletions = nil
        storedEvents = nil
    }

    @inlinable
    public init(completions: [WaitCompletion] = [], events: [RegistryEvent] = []) {
        storedCompletions = completions.isEmpty ? nil : completions
        storedEvents = events.isEmpty ? nil : events
    }
}

/// A waiting state machine an adapter can execute: ``WaitQueue`` or ``RateLimitRegistry``.
public protocol RateLimitMachine: Sendable {
    /// Cancels a waiting request (WQ-6).
    mutating func cancelWaiter(_ ticket: WaitTicket, at now: RateLimitInstant) -> RateLimitEffects
    /// Serves what is due at `now`: what the adapter's timer does when it fires.
    mutating func serveDue(at now: RateLimitInstant) -> RateLimitEffects
    /// Ends every waiter with `closed` (WQ-9).
    mutating func closeAll(at now: RateLimitInstant) -> RateLimitEffects
    /// When the adapter's one timer must next fire, seen at `now` (WQ-7, REG-11).
    func wakeUp(at now: RateLimitInstant) -> RateLimitInstant?
    /// True when ``wakeUp(at:)`` is `nil` at every instant because nothing waits: the cheap test
    /// a shell makes after every operation.
    var hasNothingToWakeUp: Bool { get }
    /// Requests waiting now.
    var waitingCount: Int { get }
}

extension RateLimitMachine {
    /// Whether `effects` certainly leave a shell nothing to execute: no outcome
    /// to hand out, no event, nobody waiting (or the shell `closed`) and no timer armed
    /// (`timerTarget`). The common answer; adapters test it inline and execute `effects` out of
    /// line otherwise, which is always correct (re-arming the timer is a no-op when it is right).
    ///
    /// With requests waiting it answers `false` without asking ``wakeUp(at:)``: that call is out
    /// of line, and Swift copies the machine out of the class or actor that stores it before the
    /// branch that makes it (callgrind: 16 instructions on every lock `tryAcquire`; perf: once a
    /// third of the lock adapter's own time).
    @inlinable
    public func leavesNothingToDo(
        _ effects: RateLimitEffects, timerTarget: RateLimitInstant?, closed: Bool
    ) -> Bool {
        effects.isEmpty && timerTarget == nil && (closed || hasNothingToWakeUp)
    }
}

extension WaitQueue: RateLimitMachine {
    public mutating func cancelWaiter(_ ticket: WaitTicket, at now: RateLimitInstant) -> RateLimitEffects {
        RateLimitEffects(completions: cancel(ticket, at: now))
    }

    public mutating func serveDue(at now: RateLimitInstant) -> RateLimitEffects {
        RateLimitEffects(completions: advance(to: now))
    }

    public mutating func closeAll(at now: RateLimitInstant) -> RateLimitEffects {
        RateLimitEffects(completions: close())
    }

    @inlinable
    public func wakeUp(at now: RateLimitInstant) -> RateLimitInstant? { nextWakeUp(at: now) }

    @inlinable
    public var hasNothingToWakeUp: Bool { isEmpty }
}

extension RateLimitRegistry: RateLimitMachine {
    public mutating func cancelWaiter(_ ticket: WaitTicket, at now: RateLimitInstant) -> RateLimitEffects {
        cancel(ticket, at: now)
    }

    public mutating func serveDue(at now: RateLimitInstant) -> RateLimitEffects { advance(to: now) }

    public mutating func closeAll(at now: RateLimitInstant) -> RateLimitEffects { close(at: now) }

    @inlinable
    public func wakeUp(at now: RateLimitInstant) -> RateLimitInstant? { nextWakeUp }

    @inlinable
    public var hasNothingToWakeUp: Bool { nextWakeUp == nil }
}
