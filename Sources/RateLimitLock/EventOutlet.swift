// Where a lock shell publishes its events (Spec/Registry.md REG-10): the streams handed out and
// the handler. A sharded registry's shards share one (REG-13), so that one stream has them all.

import Foundation
import RateLimitCore
import RateLimitShell

/// The streams and the handler a lock shell's events go to. A shell publishes under its own lock,
/// so each shell's events come in its order.
// @unchecked: `subscribers` and `handler` are read and written only while `lock` is held. (An
// `NSLock`, not Synchronization's `Mutex`, whose futex ThreadSanitizer does not see on Linux: it
// reported the accesses under it as racing.)
@usableFromInline
package final class EventOutlet: @unchecked Sendable {
    private let lock = NSLock()
    private var subscribers = EventSubscribers()
    private var handler: (@Sendable (RegistryEvent) -> Void)?
    private let handlerQueue = DispatchQueue(label: "RateLimitLock.events")

    package init() {}

    /// A new stream of the events published from now on; it ends at ``finishAll()``.
    package func subscribe() -> AsyncStream<RegistryEvent> {
        lock.withLock { subscribers.subscribe { [weak self] id in self?.unsubscribe(id) } }
    }

    /// Calls `handler` with every event, in order, on a serial queue (`nil` removes it).
    package func setHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) {
        lock.withLock { self.handler = handler }
    }

    /// Yields `events` to every stream and hands them to the handler.
    package func publish(_ events: [RegistryEvent]) {
        lock.withLock {
            subscribers.publish(events)
            if let handler { handlerQueue.async { for event in events { handler(event) } } }
        }
    }

    /// Ends every stream (the shell closed or was released).
    package func finishAll() { lock.withLock { subscribers.finishAll() } }

    /// Called when a stream ends, possibly from `finishAll()` with the lock held: so it does its
    /// work later, on the handler queue.
    private func unsubscribe(_ id: Int) {
        handlerQueue.async { [weak self] in
            guard let self else { return }
            lock.withLock { subscribers.remove(id) }
        }
    }
}
