// What a waiting state machine (`WaitQueue`, `RateLimitRegistry`) asks its shell to do
// (Spec/WaitQueue.md WQ-2, WQ-13; Spec/Registry.md REG-10): deliver outcomes, report events.

/// The outcomes to deliver and the events to report that one operation of a ``WaitQueue`` or a
/// ``RateLimitRegistry`` decided, in the order it decided them.
///
/// An adapter executes them: it resumes the waiter of each completion's ticket and publishes each
/// event. Code that drives the pure machines itself (sans-IO) reads them the same way.
public struct RateLimitEffects: Hashable, Sendable {
    // `nil` for none, never an empty array: the common answer then holds no array whose release
    // the shells would pay on every call (Performance.md, "Effects").
    @usableFromInline var storedCompletions: [WaitCompletion]?
    @usableFromInline var storedEvents: [RegistryEvent]?

    /// Outcomes decided for requests, each with the instant it was decided at.
    @inlinable
    public var completions: [WaitCompletion] { storedCompletions ?? [] }

    /// Events to report (registries only).
    @inlinable
    public var events: [RegistryEvent] { storedEvents ?? [] }

    /// No completion and no event.
    @inlinable
    public var isEmpty: Bool { storedCompletions == nil && storedEvents == nil }

    /// No effect.
    @inlinable
    package init() {
        storedCompletions = nil
        storedEvents = nil
    }

    @inlinable
    package init(completions: [WaitCompletion], events: [RegistryEvent] = []) {
        storedCompletions = completions.isEmpty ? nil : completions
        storedEvents = events.isEmpty ? nil : events
    }

    /// Adds an outcome.
    @inlinable
    mutating func append(_ completion: WaitCompletion) {
        if storedCompletions == nil { storedCompletions = [completion] } else { storedCompletions!.append(completion) }
    }

    /// Adds outcomes.
    @inlinable
    mutating func append(contentsOf completions: [WaitCompletion]) {
        guard !completions.isEmpty else { return }
        if storedCompletions == nil {
            storedCompletions = completions
        } else {
            storedCompletions!.append(contentsOf: completions)
        }
    }

    /// Adds an event.
    @inlinable
    mutating func append(_ event: RegistryEvent) {
        if storedEvents == nil { storedEvents = [event] } else { storedEvents!.append(event) }
    }

    /// Takes out the outcome of `ticket`, if decided: what a shell hands to the caller that made
    /// the request rather than to a waiter.
    @inlinable
    package mutating func removeCompletion(of ticket: WaitTicket) -> WaitCompletion? {
        guard let index = storedCompletions?.firstIndex(where: { $0.ticket == ticket }) else { return nil }
        let completion = storedCompletions!.remove(at: index)
        if storedCompletions!.isEmpty { storedCompletions = nil }
        return completion
    }

    /// The effects with every completion and event rewritten by `transform` (REG-3's shift).
    @inlinable
    func mapped(completion: (WaitCompletion) -> WaitCompletion, event: (RegistryEvent) -> RegistryEvent)
        -> RateLimitEffects
    {
        var copy = self
        copy.storedCompletions = storedCompletions?.map(completion)
        copy.storedEvents = storedEvents?.map(event)
        return copy
    }
}
