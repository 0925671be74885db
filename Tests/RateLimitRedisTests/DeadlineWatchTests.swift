import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitRedis

/// A clock whose every reading is one nanosecond after the one before, as two readings of a real
/// clock differ, and whose sleeps end at once, the time jumping to their deadline. After 1,000
/// sleeps it stops answering them (a watcher that never ends then suspends instead of spinning).
private final class TickingClock: Clock, @unchecked Sendable {
    // @unchecked: `current` and `sleeps` are read and written only while `lock` is held.
    typealias Instant = ManualClock.Instant
    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleeps = 0

    var now: Instant {
        lock.withLock {
            current = current.advanced(by: .nanoseconds(1))
            return current
        }
    }
    var minimumResolution: Duration { .nanoseconds(1) }
    var sleepCount: Int { lock.withLock { sleeps } }

    /// `Clock`'s requirement, which the watcher calls: nothing waits in real time, the clock jumps
    /// to the deadline and the call returns at once.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let stop: Bool = lock.withLock {
            sleeps += 1
            current = max(current, deadline)
            return sleeps > 1_000
        }
        if stop { await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in } }
    }
}

@Suite("SHARED-10 the deadline watcher of a shared limiter's calls")
struct DeadlineWatchTests {
    @Test(
        "SHARED-10 the watcher ends one timeout after the last call, on a clock whose readings all differ (it slept on forever: a limiter made per call leaked 3.5 KB and a wake-up a second)"
    )
    func watcherEnds() async {
        let clock = TickingClock()
        let watch = DeadlineWatch(clock: clock, timeout: .seconds(1))
        let first = Expired()
        let call = watch.start { first.mark() }
        // A watcher runs while the call is in flight, unless it already ran past the call's deadline:
        // this clock jumps there as soon as the watcher sleeps, which a busy pool may let happen first.
        #expect(watch.isWatching || first.value)
        watch.finish(call)
        #expect(await eventually { !watch.isWatching }, "after \(clock.sleepCount) sleeps")
        #expect(clock.sleepCount <= 3, "\(clock.sleepCount) sleeps")
        // The next call starts a watcher again, which expires it on time.
        let expired = Expired()
        _ = watch.start { expired.mark() }
        #expect(await eventually { expired.value && !watch.isWatching }, "after \(clock.sleepCount) sleeps")
    }
}

/// Whether a deadline's expiry ran.
private final class Expired: @unchecked Sendable {
    // @unchecked: `marked` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var marked = false
    func mark() { lock.withLock { marked = true } }
    var value: Bool { lock.withLock { marked } }
}
