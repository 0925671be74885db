import Foundation
import RateLimitLock
import RateLimitTestSupport
import Testing

/// A shell lock guarding a plain counter, shared by threads.
// @unchecked: `value` (`lock.guarded`) is read and written only between `lock()` and `unlock()`, which is
// what these tests check; `lock` itself is made for use from any thread.
private final class Counter: @unchecked Sendable {
    let lock = ShellLock<Int>(0)
    /// `lock.guarded`: changed through a copy, since changing it through `lock` is a modifying
    /// access to `lock`, which ThreadSanitizer reports as racing with `lock()`.
    let value: UnsafeMutablePointer<Int>
    init() { value = lock.guarded }
}

/// Runs `body(index)` on `threads` new threads at once and waits for them all (at most a minute).
private func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<threads {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    return group.wait(timeout: .now() + 60) == .success
}

@Suite("The lock adapter's lock (WQ-13)")
struct ShellLockTests {
    @Test(
        "WQ-13 the lock shell's lock excludes: 8 threads on 2 cores, each adding 20,000 to a plain counter, lose none",
        .heavy, .patience(.seconds(120)))
    func excludes() {
        let counter = Counter()
        // More threads than cores: holders are preempted, so waiters exhaust their spins and park.
        let finished = onThreads(8) { _ in
            for _ in 0..<20_000 {
                counter.lock.lock()
                counter.value.pointee += 1
                counter.lock.unlock()
            }
        }
        #expect(finished)
        counter.lock.lock()
        #expect(counter.value.pointee == 160_000)
        counter.lock.unlock()
    }

    @Test(
        "WQ-13 a thread waiting on the lock shell's condition wakes at a broadcast and sees what was written under the lock",
        .heavy, .patience(.seconds(120)))
    func waitsForBroadcast() {
        // Four waiters, each waiting for its own value; the main thread publishes 1 to 4 in turn,
        // broadcasting each time, while other threads take and release the lock.
        let counter = Counter()
        let seen = Counter()
        let finished = onThreads(7) { index in
            if index < 4 {
                counter.lock.lock()
                while counter.value.pointee <= index { counter.lock.wait() }
                counter.lock.unlock()
                seen.lock.lock()
                seen.value.pointee += 1
                seen.lock.unlock()
            } else if index < 6 {
                for _ in 0..<10_000 {
                    counter.lock.lock()
                    counter.lock.unlock()
                }
            } else {
                for _ in 0..<4 {
                    counter.lock.lock()
                    counter.value.pointee += 1
                    counter.lock.broadcast()
                    counter.lock.unlock()
                }
            }
        }
        #expect(finished)
        seen.lock.lock()
        #expect(seen.value.pointee == 4)
        seen.lock.unlock()
    }
}
