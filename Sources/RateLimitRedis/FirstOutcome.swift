// A call to the store that cannot hang its caller (Spec/SharedLimits.md, SHARED-10): the call runs
// in a task of its own, its deadline is watched by one task per limiter, and the caller resumes
// with whichever comes first, the reply or the deadline, or at once when it is cancelled. The call
// is not awaited after that (a client may not react to cancellation); it is cancelled and its
// reply, if one comes, is dropped.

import Foundation

/// The first of several outcomes, delivered once to one waiter; the tasks that race for it are
/// cancelled as soon as it is known.
// @unchecked: every `var` is read and written only while `lock` is held; the continuation is
// resumed outside the lock, exactly once (it is taken out of `waiter` under the lock first).
final class FirstOutcome<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var outcome: Result<Value, RedisLimitError>?
    private var waiter: CheckedContinuation<Result<Value, RedisLimitError>, Never>?
    private var racers: [Task<Void, Never>] = []

    /// Waits for the outcome (at once, when it is already known).
    func wait(_ continuation: CheckedContinuation<Result<Value, RedisLimitError>, Never>) {
        let known: Result<Value, RedisLimitError>? = lock.withLock {
            if outcome == nil { waiter = continuation }
            return outcome
        }
        if let known { continuation.resume(returning: known) }
    }

    /// Keeps `task` to cancel once the outcome is known (at once, when it is).
    func race(_ task: Task<Void, Never>) {
        let decided: Bool = lock.withLock {
            if outcome == nil { racers.append(task) }
            return outcome != nil
        }
        if decided { task.cancel() }
    }

    /// Offers an outcome; the first one offered wins and the others are dropped.
    func offer(_ result: Result<Value, RedisLimitError>) {
        let (continuation, losers): (CheckedContinuation<Result<Value, RedisLimitError>, Never>?, [Task<Void, Never>]) =
            lock.withLock {
                guard outcome == nil else { return (nil, []) }
                outcome = result
                defer {
                    waiter = nil
                    racers = []
                }
                return (waiter, racers)
            }
        continuation?.resume(returning: result)
        for task in losers { task.cancel() }
    }
}

/// The deadlines of the calls in flight on one limiter, and the one task that expires them: it
/// sleeps on the clock until the oldest pending deadline (or, with none pending, for one timeout,
/// after which it ends until the next call), so a call in time costs no timer of its own.
// @unchecked: `pending`, `nextID` and `watching` are read and written only while `lock` is held;
// the clock and the timeout are immutable.
final class DeadlineWatch<C: Clock>: @unchecked Sendable where C.Duration == Duration {
    private let clock: C
    private let timeout: Duration
    private let lock = NSLock()
    private var pending: [UInt64: (deadline: C.Instant, expire: @Sendable () -> Void)] = [:]
    private var nextID: UInt64 = 0
    private var watching = false

    init(clock: C, timeout: Duration) {
        self.clock = clock
        self.timeout = timeout
    }

    /// Calls `expire` once the timeout has passed from now, unless ``finish(_:)`` comes first.
    func start(_ expire: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, startWatcher): (UInt64, Bool) = lock.withLock {
            nextID += 1
            pending[nextID] = (clock.now.advanced(by: timeout), expire)
            defer { watching = true }
            return (nextID, !watching)
        }
        if startWatcher { Task { await self.watch() } }
        return id
    }

    /// The call `id` ended: its deadline no longer matters.
    func finish(_ id: UInt64) {
        _ = lock.withLock { pending.removeValue(forKey: id) }
    }

    /// Whether a watcher task runs (it ends one to two timeouts after the last call ended).
    var isWatching: Bool { lock.withLock { watching } }

    private func watch() async {
        // Set when the watcher went to sleep with nothing pending: if nothing came meanwhile, it ends.
        var idle = false
        while true {
            let (due, wake): ([@Sendable () -> Void], C.Instant?) = lock.withLock {
                let now = clock.now
                let due = pending.filter { $0.value.deadline <= now }
                for id in due.keys { pending.removeValue(forKey: id) }
                if pending.isEmpty && due.isEmpty && idle {
                    watching = false
                    return ([], nil)
                }
                idle = pending.isEmpty && due.isEmpty
                return (due.map(\.value.expire), pending.values.map(\.deadline).min() ?? now.advanced(by: timeout))
            }
            for expire in due { expire() }
            guard let wake else { return }
            try? await clock.sleep(until: wake, tolerance: nil)
        }
    }
}

/// The value of `operation`, or ``RedisLimitError/timedOut(_:)`` once `timeout` has passed on
/// `watch`'s clock, or ``RedisLimitError/cancelled`` when the calling task is cancelled: whichever
/// comes first. The operation runs in a task of its own, so one that never ends cannot hold the
/// caller.
func firstOutcome<Value: Sendable, C: Clock>(
    within timeout: Duration, watch: DeadlineWatch<C>,
    _ operation: @escaping @Sendable () async throws(RedisLimitError) -> Value
) async throws(RedisLimitError) -> Value where C.Duration == Duration {
    let first = FirstOutcome<Value>()
    let deadline = watch.start { first.offer(.failure(.timedOut(timeout))) }
    defer { watch.finish(deadline) }
    let result = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, RedisLimitError>, Never>) in
            first.wait(continuation)
            let call: @Sendable () async -> Void = {
                do throws(RedisLimitError) {
                    first.offer(.success(try await operation()))
                } catch {
                    first.offer(.failure(error))
                }
            }
            // Started at once on this thread, up to the client's first suspension (its send),
            // where the toolchain and the platform have `Task.immediate`: one hop fewer.
            #if compiler(>=6.2)
                if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
                    first.race(Task.immediate(operation: call))
                } else {
                    first.race(Task(operation: call))
                }
            #else
                first.race(Task(operation: call))
            #endif
        }
    } onCancel: {
        first.offer(.failure(.cancelled))
    }
    return try result.get()
}
