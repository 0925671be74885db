// How a benchmark is timed: warm-up, repetitions, the median and the spread of nanoseconds per
// operation; and what a result is (its floor, its ratio to it, its target).

import Foundation
import Synchronization

/// Where results go so that the optimizer cannot drop the work that produced them.
/// `nonisolated(unsafe)`: written only by the main thread, after worker threads were joined.
nonisolated(unsafe) var sink = 0

/// One measured quantity: nanoseconds per operation over the repetitions (or bytes, for memory).
struct Measurement: Sendable {
    let section: String
    let name: String
    let unit: String
    /// One value per repetition.
    let samples: [Double]
    /// The name of the floor this is compared with, if any.
    var floor: String?
    var floorMedian: Double?
    /// The floor's samples when it was measured interleaved with this (repetition by repetition):
    /// then the ratio is the median of the per-repetition ratios, which a drifting machine moves
    /// far less than the ratio of two medians taken minutes apart.
    var pairedFloorSamples: [Double]?
    /// The largest ratio to the floor allowed, or the largest value (`absoluteTarget`).
    var ratioTarget: Double?
    var absoluteTarget: Double?
    var note: String?
    /// A bound measured in the same run (the compared primitive plus the clock read and the
    /// arithmetic that any adapter must add) already exceeds the ratio target: no adapter that
    /// reads the clock can meet it. Printed as "out of reach", not counted by `--check`.
    var outOfReach = false

    var median: Double { Self.median(samples) }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    var minimum: Double { samples.min() ?? 0 }
    var maximum: Double { samples.max() ?? 0 }
    var ratio: Double? {
        if let paired = pairedFloorSamples, paired.count == samples.count, !paired.isEmpty {
            return Self.median(zip(samples, paired).map { $1 > 0 ? $0 / $1 : .infinity })
        }
        return floorMedian.map { $0 > 0 ? median / $0 : .infinity }
    }

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
        withoutActuallyEscaping(body) { timeInterleaved(operations: full, [$0])[0] }
    }

    /// Times several bodies interleaved: after a warm-up of each, every repetition runs each body
    /// once, in turn. A machine that drifts (frequency, a neighbour on the host) then moves them
    /// alike, and their ratio is taken repetition by repetition (`Measurement.pairedFloorSamples`).
    func timeInterleaved(operations full: Int, _ bodies: [(Int) -> Int]) -> [[Double]] {
        let count = operations(full)
        for body in bodies { sink &+= body(max(1, count / 10)) }
        var samples = Array(repeating: [Double](), count: bodies.count)
        for _ in 0..<repetitions {
            for (index, body) in bodies.enumerated() {
                let start = ContinuousClock.now
                sink &+= body(count)
                samples[index].append(nanoseconds(start.duration(to: .now)) / Double(count))
            }
        }
        return samples
    }

    /// ``timeInterleaved(operations:_:)`` for async bodies, run from a task of its own (not the
    /// main actor).
    func timeInterleavedAsync(operations full: Int, _ bodies: [@Sendable (Int) async -> Int]) async -> [[Double]] {
        let count = operations(full)
        let repetitions = repetitions
        let (samples, checksum) = await Task.detached {
            var checksum = 0
            for body in bodies { checksum &+= await body(max(1, count / 10)) }
            var samples = Array(repeating: [Double](), count: bodies.count)
            for _ in 0..<repetitions {
                for (index, body) in bodies.enumerated() {
                    let start = ContinuousClock.now
                    checksum &+= await body(count)
                    samples[index].append(nanoseconds(start.duration(to: .now)) / Double(count))
                }
            }
            return (samples, checksum)
        }.value
        sink &+= checksum
        return samples
    }

    /// Times bodies interleaved, each run by `threads` threads at once doing `n` operations apiece:
    /// nanoseconds per operation of all of them together (the throughput cost under contention).
    func timeContended(threads: Int, operations full: Int, _ bodies: [@Sendable (Int) -> Int]) -> [[Double]] {
        timeContended(threads: threads, operations: full, indexed: bodies.map { body in { _, count in body(count) } })
    }

    /// ``timeContended(threads:operations:_:)`` for bodies that take the thread's index (0 to
    /// `threads - 1`) before the count.
    func timeContended(threads: Int, operations full: Int, indexed bodies: [@Sendable (Int, Int) -> Int]) -> [[Double]]
    {
        let count = operations(full)
        for body in bodies { sink &+= runThreads(threads, count: max(1, count / 10), body).1 }
        var samples = Array(repeating: [Double](), count: bodies.count)
        for _ in 0..<repetitions {
            for (index, body) in bodies.enumerated() {
                let (elapsed, checksum) = runThreads(threads, count: count, body)
                sink &+= checksum
                samples[index].append(nanoseconds(elapsed) / Double(count * threads))
            }
        }
        return samples
    }

    /// Times async bodies interleaved, each run by `tasks` tasks at once.
    func timeContended(tasks: Int, operations full: Int, _ bodies: [@Sendable (Int) async -> Int]) async -> [[Double]] {
        let count = operations(full)
        var samples = Array(repeating: [Double](), count: bodies.count)
        for repetition in 0...repetitions {
            for (index, body) in bodies.enumerated() {
                let start = ContinuousClock.now
                let checksum = await withTaskGroup(of: Int.self) { group in
                    for _ in 0..<tasks { group.addTask { await body(repetition == 0 ? max(1, count / 10) : count) } }
                    return await group.reduce(0, &+)
                }
                sink &+= checksum
                if repetition > 0 {
                    samples[index].append(nanoseconds(start.duration(to: .now)) / Double(count * tasks))
                }
            }
        }
        return samples
    }
}

/// Runs `body(index, count)` on `threads` threads released together; the wall time and the checksums.
private func runThreads(_ threads: Int, count: Int, _ body: @escaping @Sendable (Int, Int) -> Int) -> (Duration, Int) {
    let ready = DispatchGroup()
    let done = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    let results = Sum()
    for index in 0..<threads {
        ready.enter()
        done.enter()
        let thread = Thread {
            ready.leave()
            start.wait()
            results.value.wrappingAdd(body(index, count), ordering: .relaxed)
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
