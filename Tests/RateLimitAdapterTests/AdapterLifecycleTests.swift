import Dispatch
import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitDispatch
import RateLimitShell
import RateLimitTestSupport
import Testing

/// The instant `nanoseconds` after the origin (`.end` if out of range, which no test here passes).
private func ns(_ nanoseconds: Int64) -> RateLimitInstant { (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .end }

@Suite("Adapters: time, timeouts, close and release from memory")
struct AdapterLifecycleTests {
    @Test(
        "WQ-11 clock readings map to whole nanoseconds from the adapter's start: before it is 0, beyond Int64.max ns is the end"
    )
    func clockMapping() throws {
        let clock = ManualClock(startingAt: .seconds(100))
        let timeline = ClockTimeline(clock: clock)
        func at(_ offset: Duration) -> RateLimitInstant {
            timeline.instant(of: ManualClock.Instant(offset: .seconds(100) + offset))
        }
        #expect(at(.zero) == .origin)
        #expect(at(.nanoseconds(-1)) == .origin)
        #expect(at(.seconds(-86_400)) == .origin)
        // fractions dropped
        #expect(at(.nanoseconds(7) + Duration(secondsComponent: 0, attosecondsComponent: 999_999_999)) == ns(7))
        #expect(at(.nanoseconds(Int64.max - 1)) == ns(Int64.max - 1))
        #expect(at(.nanoseconds(Int64.max)) == .end)
        #expect(at(.seconds(Int64.max)) == .end)
        #expect(timeline.reading(of: ns(5)) == ManualClock.Instant(offset: .seconds(100) + .nanoseconds(5)))
        #expect(timeline.reading(afterNanoseconds: 10, from: ns(Int64.max - 3)) == timeline.reading(of: .end))
        #expect(at(Duration(secondsComponent: 0, attosecondsComponent: -1)) == .origin)
        #expect(at(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999)) == .origin)
        #expect(
            at(.nanoseconds(Int64.max - 1) + Duration(secondsComponent: 0, attosecondsComponent: 999_999_999))
                == ns(Int64.max - 1))
        // Around 10^9 × 2^64 attoseconds, where the quotient stops fitting in 64 bits.
        let wide = Duration(secondsComponent: 18_446_744_073, attosecondsComponent: 709_551_616_000_000_000)
        #expect(at(wide) == .end)
        #expect(at(wide - .nanoseconds(1)) == .end)
    }

    @Test(
        "WQ-11 on the continuous clock, now() (read directly, not through Clock) is the mapping of a reading between two others"
    )
    func continuousClockReading() throws {
        let timeline = ClockTimeline(clock: ContinuousClock())
        for _ in 0..<1_000 {
            let before = timeline.instant(of: ContinuousClock.now)
            let now = timeline.now()
            let after = timeline.instant(of: ContinuousClock.now)
            guard before <= now, now <= after else {
                Issue.record("now() \(now) is not between the readings \(before) and \(after)")
                return
            }
        }
        // The same mapping through a clock that is not the continuous one (the generic path).
        let manual = ManualClock(startingAt: .seconds(3))
        let generic = ClockTimeline(clock: manual)
        manual.advance(by: .nanoseconds(1_234))
        #expect(generic.now() == ns(1_234))
    }

    @Test("WQ-11 the clock mapping equals whole nanoseconds from Duration.components for any offset (seeded)")
    func clockMappingProperty() throws {
        let timeline = ClockTimeline(clock: ManualClock())
        /// The mapping as WQ-11 states it, through `components`.
        func reference(_ offset: Duration) -> RateLimitInstant {
            guard offset > .zero else { return .origin }
            guard offset < .nanoseconds(Int64.max) else { return .end }
            let (seconds, attoseconds) = offset.components
            return ns(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        var rng = TestSeed.generator("clockMappingProperty", trace: 0)
        for index in 0..<20_000 {
            // Offsets of every magnitude, from attoseconds to beyond the timeline, of either sign.
            let magnitude = Int64.random(in: 0...Int64.max, using: &rng) >> Int.random(in: 0...62, using: &rng)
            let seconds = Bool.random(using: &rng) ? magnitude : magnitude / 1_000_000_000
            let offset = Duration(
                secondsComponent: seconds % 400_000_000_000,
                attosecondsComponent: Int64.random(in: 0..<1_000_000_000_000_000_000, using: &rng))
            let signed = Bool.random(using: &rng) ? offset : .zero - offset
            let got = timeline.instant(of: ManualClock.Instant(offset: signed))
            guard got == reference(signed) else {
                Issue.record(
                    "offset \(signed): \(got) but \(reference(signed)); \(TestSeed.replay("clockMappingProperty", trace: index))"
                )
                return
            }
        }
    }

    @Test(
        "WQ-11 a timeout makes the deadline now + timeout, the end of the timeline at most; a timeout of zero or less is now"
    )
    func deadlines() throws {
        let timeline = ClockTimeline(clock: ManualClock())
        let now = ns(1_000)
        #expect(timeline.deadline(after: .nanoseconds(25), from: now) == ns(1_025))
        #expect(
            timeline.deadline(
                after: .nanoseconds(25) + Duration(secondsComponent: 0, attosecondsComponent: 5), from: now)
                == ns(1_025))
        #expect(timeline.deadline(after: .zero, from: now) == now)
        #expect(timeline.deadline(after: .seconds(-3), from: now) == now)
        #expect(timeline.deadline(after: .nanoseconds(Int64.max - 1_000), from: now) == .end)
        #expect(timeline.deadline(after: .seconds(Int64.max), from: now) == .end)
        #expect(timeline.deadline(after: .nanoseconds(Int64.max - 1_001), from: now) == ns(Int64.max - 1))
    }

    @Test(
        "WQ-11 through every adapter, a timeout of zero or less, or under a nanosecond, is granted at once or times out at once, never waits"
    )
    func zeroTimeouts() async throws {
        let bucket = try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 100)
        for (adapter, _) in try adapters(bucket, queueLimit: 10) where adapter.queues {
            let first = await finishes { await adapter.acquire(1, priority: .normal, timeout: .zero) }
            #expect((try? first?.get())?.permits == 1, "\(adapter.name): \(String(describing: first))")
            let halfNanosecond = Duration(secondsComponent: 0, attosecondsComponent: 500_000_000)
            for timeout in [Duration.zero, .nanoseconds(-1), .seconds(-60), halfNanosecond, .seconds(Int64.min)] {
                let refused = await finishes {
                    await adapter.acquire(1, priority: .normal, timeout: timeout)
                }
                #expect(
                    refused == .failure(.timedOut), "\(adapter.name) timeout \(timeout): \(String(describing: refused))"
                )
            }
            #expect(await adapter.waitingCount() == 0, "\(adapter.name)")
            await adapter.close()
        }
    }

    @Test("WQ-9 WQ-13 close gives every waiter closed, and every later request closed, on every adapter")
    func close() async throws {
        let bucket = try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 100, initialTokens: 0)
        for (adapter, _) in try adapters(bucket, queueLimit: 10) where adapter.queues {
            let waiters = (0..<3).map { _ in Task { await adapter.acquire(1, priority: .normal, timeout: nil) } }
            _ = await eventually { await adapter.waitingCount() >= 3 }
            await adapter.close()
            for waiter in waiters {
                let outcome = await finishes { await waiter.value }
                #expect(outcome == .failure(.closed), "\(adapter.name): \(String(describing: outcome))")
            }
            #expect(await adapter.tryAcquire(1, priority: .normal) == .closed, "\(adapter.name)")
            let later = await finishes { await adapter.acquire(1, priority: .normal, timeout: nil) }
            #expect(later == .failure(.closed), "\(adapter.name): \(String(describing: later))")
            #expect(await adapter.waitingCount() == 0, "\(adapter.name)")
        }
    }

    @Test("WQ-13 a Dispatch limiter released from memory gives its waiters closed")
    func dispatchReleasedFromMemory() async throws {
        let clock = ManualClock()
        let bucket = try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 100, initialTokens: 0)
        let (outcomes, delivered) = AsyncStream<Result<RateLimitGrant, RateLimitAcquireError>>.makeStream()
        var limiter: DispatchRateLimiter<TokenBucket, ManualClock>? = try DispatchRateLimiter(
            bucket, queueLimit: 10, clock: clock)
        limiter?.acquire(1) { delivered.yield($0) }
        #expect(limiter?.waitingCount == 1)  // runs on the limiter's queue after the request
        weak let released = limiter
        limiter = nil
        #expect(released == nil, "something still holds the limiter")
        let outcome = await finishes {
            var iterator = outcomes.makeAsyncIterator()
            return await iterator.next()
        }
        #expect(outcome == .some(.some(.failure(.closed))), "\(String(describing: outcome))")
    }

    @Test("WQ-13 a completion handler that calls back into the Dispatch limiter does not deadlock")
    func dispatchReentrantHandler() async throws {
        let clock = ManualClock()
        let limiter = try DispatchRateLimiter(
            try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 100), clock: clock,
            callbackQueue: DispatchQueue(label: "AdapterLifecycleTests.callbacks"))
        let inner: WaitOutcome? = await finishes {
            await withCheckedContinuation { continuation in
                limiter.acquire(1) { _ in continuation.resume(returning: limiter.tryAcquire(1)) }
            }
        }
        #expect(inner == .granted(.allowed(remaining: 0)))
    }

    @Test("WQ-11 every adapter keeps at most one timer, however its wake-ups race with other calls")
    func oneTimer() async throws {
        let bucket = try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 1_000_000, initialTokens: 0)
        for (adapter, clock) in try adapters(bucket, queueLimit: 100) where adapter.queues {
            // Twenty waiters whose deadlines come 10 ns apart: each step wakes the timer once.
            let waiters = (1...20).map { index in
                Task { await adapter.acquire(1, priority: .normal, timeout: .nanoseconds(Int64(10 * index))) }
            }
            _ = await eventually { await adapter.waitingCount() >= 20 }
            for step in 1...19 {
                move(clock, to: Int64(10 * step))  // the timer's sleep returns ...
                _ = await adapter.tryAcquire(0, priority: .normal)  // ... and this call races its wake-up
                // A timer that fired before the call re-armed it may re-arm once more when its wake
                // runs, cancelling the newer one first: none for a moment, never two.
                var most = 0
                let next = ManualClock.Instant(offset: .nanoseconds(Int64(10 * step + 10)))
                let settled = await eventually {
                    let (count, deadline) = (clock.sleeperCount, clock.nextDeadline)
                    most = max(most, count)
                    return count == 1 && deadline == next
                }
                guard settled, most <= 1 else {
                    Issue.record(
                        "\(adapter.name) step \(step): up to \(most) timers slept on the clock, \(clock.sleeperCount) now, next deadline \(String(describing: clock.nextDeadline))"
                    )
                    break
                }
            }
            await adapter.close()
            for waiter in waiters { _ = await finishes { await waiter.value } }
        }
    }

    @Test("WQ-12 WQ-13 a scheduled start that outlives its Dispatch limiter still runs on the callback queue")
    func scheduledStartAfterRelease() async throws {
        let clock = ManualClock()
        let key = DispatchSpecificKey<Int>()
        let callbacks = DispatchQueue(label: "AdapterLifecycleTests.scheduled")
        callbacks.setSpecific(key: key, value: 1)
        let (onCallbackQueue, report) = AsyncStream<Bool>.makeStream()
        var limiter: DispatchRateLimiter<LeakyBucketQueue, ManualClock>? = try DispatchRateLimiter(
            try LeakyBucketQueue(queueCapacity: 5, intervalNanoseconds: 50), clock: clock, callbackQueue: callbacks)
        for _ in 0..<2 { limiter?.acquire(1) { _ in report.yield(DispatchQueue.getSpecific(key: key) == 1) } }
        #expect(limiter?.scheduledCount == 1)  // the second starts 50 ns after the first
        limiter = nil
        move(clock, to: 50)
        let seen = await finishes {
            var iterator = onCallbackQueue.makeAsyncIterator()
            return [await iterator.next(), await iterator.next()]
        }
        #expect(seen == [true, true], "\(String(describing: seen))")
    }

    @Test("WQ-12 scheduled starts reach a serial callback queue in slot order, whatever order their timers resume in")
    func scheduledStartsInSlotOrder() async throws {
        // Every start sleeps on the clock; one move wakes them all at once, so the sleepers resume
        // in whatever order the executor picks: the starts must still come in slot order.
        let clock = ManualClock()
        let callbacks = DispatchQueue(label: "AdapterLifecycleTests.order")
        let count = 32
        let limiter = try DispatchRateLimiter(
            try LeakyBucketQueue(queueCapacity: Int64(count), intervalNanoseconds: 10), clock: clock,
            callbackQueue: callbacks)
        let (started, report) = AsyncStream<Int>.makeStream()
        for index in 0..<count { limiter.acquire(1) { _ in report.yield(index) } }
        #expect(await eventually { limiter.scheduledCount == count - 1 })
        move(clock, to: 10 * Int64(count))
        let order = await finishes {
            var iterator = started.makeAsyncIterator()
            var order: [Int] = []
            while order.count < count, let index = await iterator.next() { order.append(index) }
            return order
        }
        #expect(order == Array(0..<count))
        #expect(limiter.scheduledCount == 0)
    }
}
