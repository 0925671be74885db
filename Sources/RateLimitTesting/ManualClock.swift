import Foundation

/// A clock that moves only when told to: forwards, backwards (to test clock drift), or to any
/// instant. Tasks sleeping on it wake when it reaches their deadline, or throw
/// `CancellationError` when cancelled. Use it to drive an adapter's time by hand in tests.
// @unchecked: every stored property below is mutable state read and written only while
// `lock` is held (each method takes it), so concurrent use is data-race free.
public final class ManualClock: Clock, @unchecked Sendable {
    /// An instant of a manual clock: a signed offset from its start.
    public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
        /// The offset from the clock's start (may be negative after moving back).
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "\(offset)" }
    }

    private struct Sleeper {
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var current: Instant
    private var sleepers: [UInt64: Sleeper] = [:]
    private var cancelledEarly: Set<UInt64> = []
    private var nextSleeper: UInt64 = 0

    /// A clock whose `now` starts at `offset`.
    public init(startingAt offset: Duration = .zero) {
        current = Instant(offset: offset)
    }

    public var now: Instant { lock.withLock { current } }

    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are sleeping on the clock (an adapter's armed timer is one).
    public var sleeperCount: Int { lock.withLock { sleepers.count } }

    /// The earliest deadline a task sleeps until, if any.
    public var nextDeadline: Instant? { lock.withLock { sleepers.values.map(\.deadline).min() } }

    /// Moves the clock forwards by `duration` (backwards when negative) and wakes the sleepers
    /// whose deadline it reached.
    public func advance(by duration: Duration) {
        move { $0.advanced(by: duration) }
    }

    /// Moves the clock to `instant`, forwards or backwards, and wakes the sleepers whose deadline
    /// it reached.
    public func set(to instant: Instant) {
        move { _ in instant }
    }

    /// Moves the clock in one critical section (so concurrent moves are never lost) and wakes the
    /// sleepers whose deadline it reached, earliest deadline first, then in the order they slept.
    private func move(_ destination: (Instant) -> Instant) {
        let woken: [CheckedContinuation<Void, any Error>] = lock.withLock {
            current = destination(current)
            let reached = current
            let due = sleepers.filter { $0.value.deadline <= reached }
            for key in due.keys { sleepers.removeValue(forKey: key) }
            return due.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }.map(\.value.continuation)
        }
        for continuation in woken { continuation.resume() }  // outside the lock: resuming may run code
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id: UInt64 = lock.withLock {
            nextSleeper += 1
            return nextSleeper
        }
        // The cancellation handler can run before the sleeper is registered, while it sleeps, or
        // after it woke; `cancelledEarly` covers the first case and is cleared when we return.
        defer { lock.withLock { _ = cancelledEarly.remove(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = lock.withLock {
                    if cancelledEarly.contains(id) { return .failure(CancellationError()) }
                    if deadline <= current { return .success(()) }
                    sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper: Sleeper? = lock.withLock {
                if let sleeper = sleepers.removeValue(forKey: id) { return sleeper }
                cancelledEarly.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
