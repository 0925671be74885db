import Dispatch
import Foundation
import Testing

// Where a test runs, declared as traits so that the body says only what it checks:
//
// - `.heavy`: a long synchronous body (a property test over thousands of traces, an exhaustive
//   walk) runs in the heavy lane, on a thread kept for long tests instead of the cooperative pool,
//   beside at most as many other long tests as the machine has cores. Swift Testing runs every test
//   on the cooperative pool, which has one thread per core: long bodies there would hold every
//   thread and stall the tasks of every other test. The lane bounds how many run at once; the
//   watchdogs of the other tests count served time (ServedTime.swift), so sharing the cores with
//   the lane slows them down but never fails them.
// - `.realTime`: the test waits on, or judges, what real time gives it: a real redis-server, HTTP
//   server or browser, the harness's timeouts, a real clock. It takes a place in the lane (every
//   place when `exclusive`, for a test that measures rates: no long test of this process runs
//   beside it), and it fails once it has run for its patience in served time, counted from when it
//   got its place, so time spent queueing for the lane or starved by the machine never counts
//   against it. Such a test carries the `realTime` tag, and its suite's type name ends in
//   `RealTimeTests`, because SwiftPM selects tests by name only: `swift test --skip RealTimeTests`
//   runs everything else and `--filter RealTimeTests` only them.
// - `.patience(_:)`: a hang guard in served time for a test that drives an injected clock, in place
//   of Swift Testing's `.timeLimit`, which counts wall-clock time from the test's start.

extension Tag {
    /// The test waits on or judges real time: a real server, browser or clock, or the harness's timeouts.
    @Tag public static var realTime: Self
}

extension Trait where Self == LaneTrait {
    /// Runs the test in the heavy lane, off the cooperative pool (see `Lanes.swift`).
    public static var heavy: Self { LaneTrait(lane: .heavy, patience: nil) }

    /// Holds a place in the heavy lane (every place when `exclusive`) while the test runs and fails
    /// it once it has run for `patience` of served time (see `Lanes.swift`); with `.tags(.realTime)`,
    /// in a suite named `…RealTimeTests`.
    public static func realTime(exclusive: Bool = false, patience: Duration = .seconds(120)) -> Self {
        LaneTrait(lane: .realTime(exclusive: exclusive), patience: patience)
    }

    /// Fails the test, and cancels it, once it has run for `patience` of served time.
    public static func patience(_ patience: Duration) -> Self { LaneTrait(lane: nil, patience: patience) }
}

/// Where a test runs and how long it may run; see `Lanes.swift`.
public struct LaneTrait: TestTrait, SuiteTrait, TestScoping {
    enum Lane: Sendable {
        case heavy
        case realTime(exclusive: Bool)
    }

    let lane: Lane?
    let patience: Duration?

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        switch lane {
        case .heavy: try await offThePool { try await withPatience(test, function) }
        case .realTime(let exclusive):
            if !test.tags.contains(.realTime) || !"\(test.id)".contains("RealTimeTests") {
                Issue.record(
                    "a .realTime test carries .tags(.realTime) and lies in a suite named …RealTimeTests, so that it can be selected by tag and by name: \(test.id)"
                )
            }
            try await inLane(exclusive: exclusive) { _ in try await withPatience(test, function) }
        case nil: try await withPatience(test, function)
        }
    }

    /// Runs `body`, recording an issue and cancelling it once it has run for `patience` of served time.
    private func withPatience(_ test: Test, _ body: @Sendable () async throws -> Void) async throws {
        guard let patience else { return try await body() }
        let finished = Once()
        try await withoutActuallyEscaping(body) { body in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    defer { _ = finished.first() }
                    try await body()
                    return true
                }
                group.addTask {
                    let start = ServedTime.now
                    while !finished.done, ServedTime.now - start < patience { await pause(.milliseconds(50)) }
                    return !finished.first()  // false: the patience ran out first
                }
                while let completed = try await group.next() {
                    guard !completed else { continue }
                    Issue.record("did not finish within \(patience) of served time: \(test.name)")
                    group.cancelAll()
                }
            }
        }
    }
}

/// Runs `body` in the heavy lane: on a thread kept for long tests instead of the cooperative pool,
/// beside at most `HeavyLane.width - 1` other long tests, in the calling task (so `#expect` and the
/// test's other task-locals work as usual). Prefer the `.heavy` trait; this is for a long part of
/// a test.
public func offThePool<T>(_ body: () async throws -> T) async rethrows -> T {
    try await inLane(exclusive: false) { slot in
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            return try await withTaskExecutorPreference(LongTestExecutor.slots[slot]) { try await body() }
        } else {
            return try await body()
        }
    }
}

/// Runs `body` holding a place in the heavy lane (see `Lanes.swift`), on the pool: for tests that
/// start other processes, which take a core each while the test itself only waits for them.
public func inHeavyLane<T>(_ body: () async throws -> T) async rethrows -> T {
    try await inLane(exclusive: false) { _ in try await body() }
}

/// Runs `body` holding one place of the lane, or every place when `exclusive`. A test that holds a
/// place already passes straight through (the place is held by its task).
func inLane<T>(exclusive: Bool, _ body: (Int) async throws -> T) async rethrows -> T {
    if let slot = HeavyLane.slot { return try await body(slot) }
    let slot = await HeavyLane.shared.enter(exclusive: exclusive)
    do {
        let value = try await HeavyLane.$slot.withValue(slot) { try await body(slot) }
        await HeavyLane.shared.leave(slot, exclusive: exclusive)
        return value
    } catch {
        await HeavyLane.shared.leave(slot, exclusive: exclusive)
        throw error
    }
}

/// As many long tests at a time as the machine has cores (`RATELIMIT_TEST_LANES` to change it), in
/// the order they asked; a real-time test takes every place.
actor HeavyLane {
    static let shared = HeavyLane()

    /// How many long tests run at once.
    static let width: Int = {
        if let text = ProcessInfo.processInfo.environment["RATELIMIT_TEST_LANES"], let count = Int(text), count > 0 {
            return count
        }
        return max(1, ProcessInfo.processInfo.activeProcessorCount)
    }()

    /// The place the current task holds, if any.
    @TaskLocal static var slot: Int?

    private var free = Array(0..<HeavyLane.width)
    private var waiting: [(exclusive: Bool, continuation: CheckedContinuation<Int, Never>)] = []

    func enter(exclusive: Bool) async -> Int {
        if waiting.isEmpty, let slot = take(exclusive: exclusive) { return slot }
        return await withCheckedContinuation { waiting.append((exclusive, $0)) }
    }

    func leave(_ slot: Int, exclusive: Bool) {
        if exclusive { free = Array(0..<Self.width) } else { free.append(slot) }
        // In the order they asked: a waiter for every place holds back the ones behind it.
        while let head = waiting.first, let slot = take(exclusive: head.exclusive) {
            waiting.removeFirst()
            head.continuation.resume(returning: slot)
        }
    }

    private func take(exclusive: Bool) -> Int? {
        if exclusive {
            guard free.count == Self.width else { return nil }
            free.removeAll()
            return 0
        }
        return free.popLast()
    }
}

/// Task executors whose jobs run on serial Dispatch queues, one per place of the lane: their threads
/// come from Dispatch's overcommitting pool, not from the cooperative one.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class LongTestExecutor: TaskExecutor {
    static let slots = (0..<HeavyLane.width).map { LongTestExecutor(label: "swift-rate-limit.long-tests.\($0)") }
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
