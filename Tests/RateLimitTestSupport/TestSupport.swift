import Dispatch
import Testing

// What only the tests share: recording a property failure with its seed, and running a long
// synchronous test body without holding one of the cooperative pool's threads.

/// Records a property failure with its seed; returns `condition` so callers can stop a trace.
@discardableResult
public func holds(
    _ condition: Bool, _ message: @autoclosure () -> String, replay: String,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    if !condition { Issue.record("\(message())\n  \(replay)", sourceLocation: sourceLocation) }
    return condition
}

/// Runs `body` in the heavy lane: on the one thread kept for long tests instead of the
/// cooperative pool, one long test at a time, in the calling task (so `#expect` and the test's
/// other task-locals work as usual).
///
/// Swift Testing runs every test on the cooperative pool, which has one thread per core: a long
/// synchronous test (a property test over thousands of traces) holds one of them for as long as
/// it runs, and on a 2-core machine two of them starve every task of the other tests, such as the
/// adapter tests with a real-time watchdog. Moving long tests off the pool is not enough when
/// they run side by side on threads of their own: they then take the cores from the pool. So
/// long tests take turns, on a single thread: at most one core goes to them, whatever else the
/// machine runs.
public func offThePool<T>(_ body: () async throws -> T) async rethrows -> T {
    try await inHeavyLane {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return try await withTaskExecutorPreference(LongTestExecutor.shared) { try await body() }
        } else {
            return try await body()
        }
    }
}

/// Runs `body` when no other long test runs (see ``offThePool(_:)``): for tests that start other
/// processes, which take a core each while the test itself only waits for them. A test already in
/// the lane passes straight through (the lane is held by its task).
public func inHeavyLane<T>(_ body: () async throws -> T) async rethrows -> T {
    guard !HeavyLane.held else { return try await body() }
    await HeavyLane.shared.enter()
    do {
        let value = try await HeavyLane.$held.withValue(true) { try await body() }
        await HeavyLane.shared.leave()
        return value
    } catch {
        await HeavyLane.shared.leave()
        throw error
    }
}

/// One long test at a time, in the order they asked.
actor HeavyLane {
    static let shared = HeavyLane()
    /// Whether the current task holds the lane.
    @TaskLocal static var held = false
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}

/// A task executor whose jobs run on one serial Dispatch queue: its thread comes from Dispatch's
/// overcommitting pool, not from the cooperative one, and long tests share it.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class LongTestExecutor: TaskExecutor {
    static let shared = LongTestExecutor()
    private let queue = DispatchQueue(label: "swift-rate-limit.long-tests")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Whether `condition` holds before 10 s have passed, asking again after each `Task.yield()`:
/// for what another task or a real server does on its own time (a sleeper appears on a manual
/// clock, a process ends), so that a test that would hang fails instead. Time itself is never
/// waited for this way: tests drive an injected clock.
public func eventually(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { return false }
        await Task.yield()
    }
    return true
}
