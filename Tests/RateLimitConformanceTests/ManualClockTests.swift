import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

// These tests check the injected clock itself: every `sleep` below sleeps on a ManualClock, which
// wakes only when the test moves it (no real time passes). The one real-time read is the watchdog
// of `sleepers`, in served time (RateLimitTestSupport's ServedTime).

/// Waits (with a watchdog) until `clock` has `count` sleepers.
private func sleepers(_ clock: ManualClock, _ count: Int) async -> Bool {
    await eventually { clock.sleeperCount == count }
}

@Suite("The manual clock that drives adapters in tests")
struct ManualClockTests {
    @Test("A sleeper wakes when the clock reaches its deadline, not before, and not when the clock goes back")
    func wakesAtDeadline() async throws {
        let clock = ManualClock()
        let woke = Task { try await clock.sleep(until: ManualClock.Instant(offset: .seconds(5)), tolerance: nil) }
        #expect(await sleepers(clock, 1))
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(5)))
        clock.advance(by: .seconds(4))
        clock.set(to: ManualClock.Instant(offset: .seconds(-10)))
        #expect(clock.sleeperCount == 1)
        clock.set(to: ManualClock.Instant(offset: .seconds(5)))
        #expect(clock.sleeperCount == 0)
        try await woke.value
        #expect(clock.now == ManualClock.Instant(offset: .seconds(5)))
    }

    @Test("A deadline already reached returns at once")
    func pastDeadline() async throws {
        let clock = ManualClock(startingAt: .seconds(3))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(3)), tolerance: nil)
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
    }

    @Test("A sleeper cancelled while sleeping, or before it sleeps, throws CancellationError and is removed")
    func cancellation() async throws {
        let clock = ManualClock()
        let sleeping = Task { try await clock.sleep(until: ManualClock.Instant(offset: .seconds(1)), tolerance: nil) }
        #expect(await sleepers(clock, 1))
        sleeping.cancel()
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(clock.sleeperCount == 0)

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: ManualClock.Instant(offset: .seconds(1)), tolerance: nil)
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("One step past several deadlines wakes every one of those sleepers")
    func wakesAll() async throws {
        let clock = ManualClock()
        let order = OrderLog()
        let tasks = [3, 1, 2].map { second in
            Task {
                try await clock.sleep(until: ManualClock.Instant(offset: .seconds(second)), tolerance: nil)
                order.append(second)
            }
        }
        #expect(await sleepers(clock, 3))
        clock.advance(by: .seconds(10))
        for task in tasks { try await task.value }
        #expect(order.values.sorted() == [1, 2, 3])
        #expect(clock.sleeperCount == 0)
    }
}

/// Values appended from any task.
private final class OrderLog: @unchecked Sendable {
    // @unchecked: `stored` is read and written only under `lock`.
    private let lock = NSLock()
    private var stored: [Int] = []
    func append(_ value: Int) { lock.withLock { stored.append(value) } }
    var values: [Int] { lock.withLock { stored } }
}
