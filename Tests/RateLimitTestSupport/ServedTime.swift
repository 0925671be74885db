import Dispatch
import Foundation
import Testing

// Patience measured in what the machine gave the tests, not in wall-clock time.
//
// A test that waits for another task, thread, process or server (a waiter to appear on a manual
// clock, a task to finish, redis-server to start) needs a watchdog, or a bug that loses a wake-up
// hangs the run. A watchdog on wall-clock time fails the test whenever the machine is busy instead:
// on a 2-core machine the cooperative pool has two threads, and Swift Testing starts every test at
// once, so a task that would finish in a millisecond can wait 20 s behind the synchronous parts of
// other tests, and longer beside a compiler or a CPU-bound process. So every watchdog here counts
// served time: real time during which the pool ran a probe it was sent, in 10 ms steps. While the
// pool is starved (or the process is not scheduled), served time stands still, and so does every
// watchdog; a test that is really stuck still fails after its patience, served.

/// Real time counted only while the cooperative pool (the threads that run the tests' tasks) serves
/// a probe it is sent every 10 ms; see the file's header.
public enum ServedTime {
    /// Served time since the meter started (at the first call), a monotonic reading.
    public static var now: Duration { ServiceMeter.shared.served }
}

/// The probe and its tally: a Dispatch timer (off the pool) sends a detached task to the pool every
/// 10 ms; an interval is counted only when the previous probe ran within it, and never for more than
/// 25 ms, so a late timer (a descheduled process) counts little and a starved pool counts nothing.
final class ServiceMeter: @unchecked Sendable {
    // @unchecked: `tally`, `lastTick` and `probing` are read and written only while `lock` is held;
    // `timer` is set once, in init, and only kept alive afterwards.
    static let shared = ServiceMeter()

    private static let interval = Duration.milliseconds(10)
    private static let cap = Duration.milliseconds(25)

    private let lock = NSLock()
    private var tally = Duration.zero
    private var lastTick = ContinuousClock.now
    private var probing = false
    private var timer: DispatchSourceTimer?

    private init() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "swift-rate-limit.served-time"))
        timer.schedule(deadline: .now() + .milliseconds(10), repeating: .milliseconds(10), leeway: .milliseconds(2))
        timer.setEventHandler { [unowned self] in tick() }
        timer.resume()
        self.timer = timer
    }

    var served: Duration { lock.withLock { tally } }

    private func tick() {
        let now = ContinuousClock.now
        let send: Bool = lock.withLock {
            defer { lastTick = now }
            guard !probing else { return false }  // the last probe has not run: this interval was not served
            tally += min(lastTick.duration(to: now), Self.cap)
            probing = true
            return true
        }
        if send { Task.detached { [unowned self] in lock.withLock { probing = false } } }
    }
}

/// Suspends the calling task for about `duration` of real time without holding a thread: for
/// polling what another task, thread or process does on its own time. Never a way of letting time
/// pass for the code under test, which reads an injected clock.
public func pause(_ duration: Duration) async {
    let nanoseconds = max(
        0, duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { continuation.resume() }
    }
}

/// Whether `condition` holds before `patience` of served time has passed (``ServedTime``): for
/// what another task or a real server does on its own time (a sleeper appears on a manual clock, a
/// process ends), so that a test that would hang fails instead. It asks again after each
/// `Task.yield()` at first, then every millisecond, so a long wait holds no thread.
public func eventually(within patience: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    let start = ServedTime.now
    var asked = 0
    while !(await condition()) {
        guard ServedTime.now - start < patience else { return false }
        asked += 1
        if asked < 100 { await Task.yield() } else { await pause(.milliseconds(1)) }
    }
    return true
}

/// Waits for `operation` to finish, or gives up (cancelling it, returning nil) once `patience` of
/// served time has passed: a watchdog for stuck waiters, not a way of letting time pass.
public func finishes<T: Sendable>(
    within patience: Duration = .seconds(10), _ operation: @escaping @Sendable () async -> T
) async -> T? {
    let once = Once()
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let task = Task {
            let value = await operation()
            if once.first() { continuation.resume(returning: value) }
        }
        Task {
            let start = ServedTime.now
            while !once.done, ServedTime.now - start < patience { await pause(.milliseconds(20)) }
            if once.first() {
                task.cancel()
                continuation.resume(returning: nil)
            }
        }
    }
}

/// True for the first caller of ``first()`` only, from any thread.
public final class Once: @unchecked Sendable {
    // @unchecked: `isDone` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var isDone = false

    public init() {}

    /// True for the first caller only.
    public func first() -> Bool {
        lock.withLock {
            defer { isDone = true }
            return !isDone
        }
    }

    /// Whether ``first()`` has been called.
    public var done: Bool { lock.withLock { isDone } }
}
