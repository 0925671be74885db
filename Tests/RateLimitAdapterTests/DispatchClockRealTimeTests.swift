import Dispatch
import Foundation
import RateLimitCore
import RateLimitDispatch
import RateLimitTestSupport
import Testing

/// The Dispatch adapter arms a `DispatchSourceTimer` (and `asyncAfter` for scheduled starts) from
/// the clock's durations when the clock is `ContinuousClock`: a code path a manual clock cannot
/// reach. These tests wait for real time, a few milliseconds, because that path is the thing
/// under test; they assert order and "not before", never how late (timing lives in `make bench`).
@Suite("The Dispatch adapter on the continuous clock", .tags(.realTime), .realTime(patience: .seconds(60)))
struct DispatchClockRealTimeTests {
    /// Runs `acquire` and waits for its completion handler, with a watchdog for a lost timer.
    private func acquire<S: RateLimitStrategy>(
        _ limiter: DispatchRateLimiter<S, ContinuousClock>, _ permits: Int64, timeout: Duration? = nil
    ) async -> Result<RateLimitGrant, RateLimitAcquireError>? {
        await finishes(within: .seconds(30)) {
            await withCheckedContinuation { continuation in
                limiter.acquire(permits, timeout: timeout) { continuation.resume(returning: $0) }
            }
        }
    }

    @Test("WQ-11 a waiter is woken by the dispatch timer once the refill has come, not before")
    func timerWakesWaiter() async throws {
        let period = Duration.milliseconds(5)
        let limiter = try DispatchRateLimiter(
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: period), queueLimit: 10)
        let started = ContinuousClock.now
        #expect(limiter.tryAcquire(1) == .granted(.allowed(remaining: 0)))
        let result = await acquire(limiter, 1)
        let elapsed = ContinuousClock.now - started
        #expect(result.map { (try? $0.get())?.permits } == 1, "lost wake-up or refusal: \(String(describing: result))")
        #expect(elapsed >= period, "granted after \(elapsed), before the refill")
        #expect(limiter.waitingCount == 0)
    }

    @Test("WQ-11 a timeout on the continuous clock ends the wait with timedOut")
    func timeoutOnRealClock() async throws {
        let limiter = try DispatchRateLimiter(
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: .seconds(3600)), queueLimit: 10)
        #expect(limiter.tryAcquire(1) == .granted(.allowed(remaining: 0)))
        let result = await acquire(limiter, 1, timeout: .milliseconds(2))
        #expect(result == .failure(.timedOut))
        #expect(limiter.waitingCount == 0)
    }

    @Test("WQ-12 scheduled starts of a leaky bucket queue run in order, each not before its slot")
    func scheduledStartsInOrder() async throws {
        let interval = Duration.milliseconds(2)
        // A serial callback queue keeps the handlers in the order their starts came.
        let callbacks = DispatchQueue(label: "DispatchClockRealTimeTests.callbacks")
        let limiter = try DispatchRateLimiter(
            try LeakyBucketQueue(queueCapacity: 5, interval: interval), callbackQueue: callbacks)
        let started = ContinuousClock.now
        let order = Recorder()
        // The three requests reach the serial queue in call order; the handlers run at their starts.
        let all: Void? = await finishes(within: .seconds(30)) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                for index in 0..<3 {
                    limiter.acquire(1) { _ in
                        if order.append(index, ContinuousClock.now - started) == 3 { continuation.resume() }
                    }
                }
            }
        }
        #expect(all != nil, "a scheduled start never ran")
        let starts = order.entries
        #expect(starts.map(\.0) == [0, 1, 2], "\(starts)")
        for (index, elapsed) in starts { #expect(elapsed >= interval * index, "start \(index) ran at \(elapsed)") }
        #expect(limiter.scheduledCount == 0)
    }
}

/// Completion order, recorded from any thread.
private final class Recorder: @unchecked Sendable {
    // @unchecked: `recorded` is read and written only under `lock`.
    private let lock = NSLock()
    private var recorded: [(Int, Duration)] = []
    /// Records a completion; returns how many there are now.
    func append(_ index: Int, _ elapsed: Duration) -> Int {
        lock.withLock {
            recorded.append((index, elapsed))
            return recorded.count
        }
    }
    var entries: [(Int, Duration)] { lock.withLock { recorded } }
}
