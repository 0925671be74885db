// How a benchmark is timed: warm-up, repetitions, the median and the spread of nanoseconds per
// operation; and what a result is (its floor, its ratio to it, its target).

import Foundation
import Synchronization

/// Where results go so that the optimizer cannot drop the work that produced them.
/// `nonisolated(unsafe)`: written only by the main thread, after worker threads were joined.
nonisolated(unsafe) var sink = 0

/// One measured quantity: nanoseconds per operation over the repetitions (or bytes, for memory).
struct Result: Sendable {
    let section: String
    let name: String
    let unit: String
    /// One value per repetition.
    let samples: [Double]
    /// The name of the floor this is compared with, if any.
    var floor: String?
    var floorMedian: Double?
    /// The largest ratio to the floor allowed, or the largest value (`absoluteTarget`).
    var ratioTarget: Double?
    var absoluteTarget: Double?
    var note: String?

    var median: Double {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    var minimum: Double { samples.min() ?? 0 }
    var maximum: Double { samples.max() ?? 0 }
    var ratio: Double? { floorMedian.map { $0 > 0 ? median / $0 : .infinity } }

    /// Whether the result meets its targets (`nil`: it has none).
    var meetsTarget: Bool? {
        var verdict: Bool?
        if let ratioTarget, let ratio { verdict = ratio <= ratioTarget }
        if let absoluteTarget { verdict = (verdict ?? true) && median <= absoluteTarget }
        return verdict
    }
}

/// The timing plan: full runs for `make bench`, a few operations once for the smoke run.
struct Plan: Sendable {
    let smoke: Bool
    var repetitions: Int { smoke ? 1 : 11 }

    /// Operations per repetition: `full` in a full run, a thousandth of it (at least 10) in smoke.
    func operations(_ full: Int) -> Int { smoke ? max(10, full / 1_000) : full }

    /// Times `body(n)` (which performs `n` operations and returns a checksum): one warm-up run,
    /// then `repetitions` timed runs; nanoseconds per operation for each.
    func time(operations full: Int, _ body: (Int) -> Int) -> [Double] {
        let count = operations(full)
        sink &+= body(max(1, count / 10))
        return (0..<repetitions).map { _ in
            let start = ContinuousClock.now
            sink &+= body(count)
            return nanoseconds(start.duration(to: .now)) / Double(count)
        }
    }

    /// Times an async `body(n)` the same way, run from a task of its own (not the main actor).
    func timeAsync(operations full: Int, _ body: @escaping @Sendable (Int) async -> Int) async -> [Double] {
        let count = operations(full)
        let repetitions = repetitions
        let (samples, checksum) = await Task.detached {
            var checksum = await body(max(1, count / 10))
            var samples: [Double] = []
            for _ in 0..<repetitions {
                let start = ContinuousClock.now
                checksum &+= await body(count)
                samples.append(nanoseconds(start.duration(to: .now)) / Double(count))
            }
            return (samples, checksum)
        }.value
        sink &+= checksum
        return samples
    }

    /// Times `body(n)` run by `threads` threads at once, each doing `n` operations: nanoseconds
    /// per operation of all of them together (the throughput cost under contention).
    func timeContended(threads: Int, operations full: Int, _ body: @escaping @Sendable (Int) -> Int) -> [Double] {
        let count = operations(full)
        _ = runThreads(threads, count: max(1, count / 10), body)
        return (0..<repetitions).map { _ in
            let (elapsed, checksum) = runThreads(threads, count: count, body)
            sink &+= checksum
            return nanoseconds(elapsed) / Double(count * threads)
        }
    }

    /// Times an async `body(n)` run by `tasks` tasks at once.
    func timeContended(tasks: Int, operations full: Int, _ body: @escaping @Sendable (Int) async -> Int) async -> [Double] {
        let count = operations(full)
        var samples: [Double] = []
        for repetition in 0...repetitions {
            let start = ContinuousClock.now
            let checksum = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<tasks { group.addTask { await body(repetition == 0 ? max(1, count / 10) : count) } }
                return await group.reduce(0, &+)
            }
            sink &+= checksum
            if repetition > 0 { samples.append(nanoseconds(start.duration(to: .now)) / Double(count * tasks)) }
        }
        return samples
    }
}

/// Runs `body(count)` on `threads` threads released together; the wall time and the checksums.
private func runThreads(_ threads: Int, count: Int, _ body: @escaping @Sendable (Int) -> Int) -> (Duration, Int) {
    let ready = DispatchGroup()
    let done = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    let results = Sum()
    for _ in 0..<threads {
        ready.enter()
        done.enter()
        let thread = Thread {
            ready.leave()
            start.wait()
            results.value.wrappingAdd(body(count), ordering: .relaxed)
            done.leave()
        }
        thread.start()
    }
    ready.wait()
    let begin = ContinuousClock.now
    for _ in 0..<threads { start.signal() }
    done.wait()
    return (begin.duration(to: .now), results.value.load(ordering: .relaxed))
}

/// The sum of the checksums of worker threads.
private final class Sum: Sendable {
    let value = Atomic<Int>(0)
}

func nanoseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
}
