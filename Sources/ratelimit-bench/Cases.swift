// What is measured: each strategy's pure step, each adapter's tryAcquire (uncontended and with
// two threads, with the continuous clock and with a clock that never moves), the registry, the
// grant latency of a waiting acquire, and memory (AdapterCases, RegistryCases, LatencyAndMemoryCases).
// Each is paired with its floor from Floors.swift. Here: what they share, and the pure steps.

import CHeapStatistics
import Foundation
import RateLimitActor
import RateLimitAtomic
import RateLimitClock
import RateLimitCore
import RateLimitDispatch
import RateLimitLock

/// A manual clock that is never moved: reading it costs nothing, so an adapter on it shows the
/// cost of its decision and its synchronization alone.
struct StoppedClock: Clock {
    typealias Duration = Swift.Duration
    let now: ContinuousClock.Instant
    var minimumResolution: Duration { .nanoseconds(1) }
    func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
        try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
    }
}

/// An instant `nanoseconds` after the origin (the benchmarks only make valid ones).
@inline(__always)
func instant(_ nanoseconds: Int64) -> RateLimitInstant { (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin }

/// A bucket that never runs dry in a benchmark: 2⁴⁰ tokens, one more every nanosecond.
func endlessBucket() throws -> TokenBucket {
    try TokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1)
}
func endlessGCRA() throws -> GCRA { try GCRA(burst: 1 << 40, emissionIntervalNanoseconds: 1) }

// MARK: Pure steps

/// The gaps between instants, read from memory at each step so that the optimizer cannot turn a
/// loop over a known stride into a formula: every pure step and its floor read them alike.
func gaps(_ stride: Int64) -> [Int64] {
    (0..<1_024).map { _ in stride * Int64(CommandLine.arguments.count > 99 ? 2 : 1) }
}

/// One strategy's step: `acquire(1)` every `stride` ns from a fresh limiter (the concurrency
/// limiter: an acquire and its release); the body of a timed loop.
func pureStep<S: RateLimitStrategy>(_ strategy: S, stride: Int64) -> (Int) -> Int {
    let gaps = gaps(stride)
    return { count in
        var limiter = RateLimiter(strategy, at: .origin)
        var checksum: Int64 = 0
        var now: Int64 = 0
        for index in 0..<count {
            now &+= gaps[index & 1_023]
            let at = instant(now)
            checksum &+= limiter.acquire(1, at: at).remaining ?? -1
            if S.self == ConcurrencyLimiter.self { checksum &+= limiter.step(.release(1), at: at).remaining ?? -1 }
        }
        return Int(truncatingIfNeeded: checksum)
    }
}

func pureSteps(plan: Plan, stride: Int64) throws -> [Measurement] {
    // Every strategy at 1 permit per `stride` ns (bursts of 100): the admitted path, steadily.
    let window = 100 * stride
    let gaps = gaps(stride)
    let operations = 4_000_000
    let tokenBucketFloor: (Int) -> Int = { count in
        var bucket = BareTokenBucket(capacity: 100, permitsPerPeriod: 1, periodNanoseconds: stride)
        var checksum: Int64 = 0
        var now: Int64 = 0
        for index in 0..<count {
            now &+= gaps[index & 1_023]
            checksum &+= bucket.acquire(at: now)
        }
        return Int(truncatingIfNeeded: checksum)
    }
    let gcraFloor: (Int) -> Int = { count in
        var gcra = BareGCRA(burst: 100, interval: stride)
        var checksum: Int64 = 0
        var now: Int64 = 0
        for index in 0..<count {
            now &+= gaps[index & 1_023]
            checksum &+= gcra.acquire(at: now)
        }
        return Int(truncatingIfNeeded: checksum)
    }
    var results: [Measurement] = []
    let tokenBucket = plan.timeInterleaved(
        operations: operations,
        [
            tokenBucketFloor,
            pureStep(try TokenBucket(capacity: 100, permitsPerPeriod: 1, periodNanoseconds: stride), stride: stride),
        ])
    let tokenBucketArithmetic = Measurement(
        section: "floor", name: "token bucket arithmetic, bare", unit: "ns", samples: tokenBucket[0])
    let gcra = plan.timeInterleaved(
        operations: operations,
        [
            gcraFloor, pureStep(try GCRA(burst: 100, emissionIntervalNanoseconds: stride), stride: stride),
        ])
    let gcraArithmetic = Measurement(section: "floor", name: "GCRA arithmetic, bare", unit: "ns", samples: gcra[0])
    results += [tokenBucketArithmetic, gcraArithmetic]
    results.append(
        Measurement(section: "pure step", name: "token-bucket", unit: "ns", samples: tokenBucket[1])
            .compared(with: tokenBucketArithmetic, atMost: 2, paired: true))
    results.append(
        Measurement(section: "pure step", name: "gcra", unit: "ns", samples: gcra[1])
            .compared(with: gcraArithmetic, atMost: 2, paired: true))
    let others: [(String, (Int) -> Int)] = [
        (
            "token-bucket-interval",
            pureStep(
                try IntervalTokenBucket(capacity: 100, tokensPerInterval: 1, intervalNanoseconds: stride),
                stride: stride)
        ),
        ("pay-later", pureStep(try PayLater(burst: 100, emissionIntervalNanoseconds: stride), stride: stride)),
        (
            "warm-up",
            pureStep(
                try WarmUp(burst: 100, emissionIntervalNanoseconds: stride, warmUpPeriodNanoseconds: window),
                stride: stride)
        ),
        ("fixed-window", pureStep(try FixedWindow(limit: 100, windowNanoseconds: window), stride: stride)),
        ("sliding-window-log", pureStep(try SlidingWindowLog(limit: 100, windowNanoseconds: window), stride: stride)),
        (
            "sliding-window-counter",
            pureStep(try SlidingWindowCounter(limit: 100, windowNanoseconds: window), stride: stride)
        ),
        (
            "sliding-window-segments",
            pureStep(
                try SlidingWindowSegments(limit: 100, segmentsPerWindow: 10, segmentNanoseconds: window / 10),
                stride: stride)
        ),
        (
            "leaky-bucket-meter",
            pureStep(
                try LeakyBucketMeter(capacity: 100, leakPermitsPerPeriod: 1, periodNanoseconds: stride), stride: stride)
        ),
        (
            "leaky-bucket-queue",
            pureStep(try LeakyBucketQueue(queueCapacity: 100, intervalNanoseconds: stride), stride: stride)
        ),
        ("concurrency (acquire + release)", pureStep(try ConcurrencyLimiter(limit: 100), stride: stride)),
    ]
    for (name, body) in others {
        results.append(
            Measurement(section: "pure step", name: name, unit: "ns", samples: plan.time(operations: operations, body))
                .compared(with: tokenBucketArithmetic, atMost: nil))
    }
    return results
}
