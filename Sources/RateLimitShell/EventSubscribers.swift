// The fan-out of a registry's events to the streams an adapter hands out (Spec/Registry.md REG-10).

import RateLimitCore

/// The streams an adapter publishes its events to, each fed in order.
package struct EventSubscribers: Sendable {
    private var continuations: [Int: AsyncStream<RegistryEvent>.Continuation] = [:]
    private var next = 0
    private var finished = false

    package init() {}

    /// A new stream of the events published from now on; `unsubscribe` is called with its id
    /// when the consumer stops listening. A stream made after ``finishAll()`` is already over.
    package mutating func subscribe(unsubscribe: @escaping @Sendable (Int) -> Void) -> AsyncStream<RegistryEvent> {
        let (stream, continuation) = AsyncStream<RegistryEvent>.makeStream()
        guard !finished else {
            continuation.finish()
            return stream
        }
        let id = next
        next += 1
        continuations[id] = continuation
        continuation.onTermination = { _ in unsubscribe(id) }
        return stream
    }

    package mutating func remove(_ id: Int) { continuations[id] = nil }

    /// Yields `events` to every stream, in order.
    package func publish(_ events: [RegistryEvent]) {
        for event in events { for continuation in continuations.values { continuation.yield(event) } }
    }

    /// Ends every stream (the adapter closed or was released).
    package mutating func finishAll() {
        finished = true
        for continuation in continuations.values { continuation.finish() }
        continuations = [:]
    }
}
