// The Swift side of `make bench-peers` (.ci/bench-peers.py): one loop per pair with Go's
// golang.org/x/time/rate (Implementations/go-x-time-rate/bench), each named as its Go loop is.
// Not part of a default run: `ratelimit-bench --only peers`.

import RateLimitAtomic
import RateLimitClock
import RateLimitCore
import RateLimitLock

func peers(plan: Plan) throws -> [Measurement] {
    let operations = 2_000_000
    let lock = try LockedRateLimiter(try endlessBucket(), clock: ContinuousClock())
    let coarse = try LockedRateLimiter(try endlessBucket(), clock: CoarseMonotonicClock())
    let stopped = try LockedRateLimiter(try endlessBucket(), clock: StoppedClock(now: .now))
    let atomic = AtomicGCRA(try endlessGCRA(), clock: ContinuousClock())
    let atomicLoop: @Sendable (Int) -> Int = { count in
        var checksum = 0
        for _ in 0..<count { if atomic.tryAcquire().isAdmitted { checksum &+= 1 } }
        return checksum
    }
    /// `tryAcquire` on `limiter`, `count` times.
    func loop<C: Clock>(_ limiter: LockedRateLimiter<TokenBucket, C>) -> @Sendable (Int) -> Int {
        { count in
            var checksum = 0
            for _ in 0..<count { if case .granted = limiter.tryAcquire() { checksum &+= 1 } }
            return checksum
        }
    }
    let one = plan.timeInterleaved(
        operations: operations,
        [
            // AllowN(t, 1), t += 1 µs, 1 per µs, burst 100: the pure step on the same bucket.
            pureStep(try TokenBucket(capacity: 100, permitsPerPeriod: 1, periodNanoseconds: 1_000), stride: 1_000),
            // Allow(): the lock adapter with its clock read, on either clock.
            loop(lock), loop(coarse),
        ])
    // Two threads on one limiter: Allow() against the adapter reading its clock, AllowN at explicit
    // instants against the adapter on a clock that never moves (no clock read either).
    // The atomic GCRA against the same Allow(); 4 threads against 4 goroutines (GOMAXPROCS 2).
    let two = plan.timeContended(threads: 2, operations: operations / 2, [loop(lock), loop(stopped), atomicLoop])
    let four = plan.timeContended(threads: 4, operations: operations / 4, [loop(lock), atomicLoop])
    return [
        Measurement(
            section: "peers", name: "allowN-explicit-1", unit: "ns", samples: one[0], note: "pure token bucket step"),
        Measurement(section: "peers", name: "allow-clock-1", unit: "ns", samples: one[1], note: "lock: tryAcquire"),
        Measurement(
            section: "peers", name: "allow-clock-1-coarse", unit: "ns", samples: one[2],
            note: "lock: tryAcquire, coarse clock"),
        Measurement(section: "peers", name: "allow-clock-2", unit: "ns", samples: two[0], note: "lock, 2 threads"),
        Measurement(
            section: "peers", name: "allowN-explicit-2", unit: "ns", samples: two[1],
            note: "lock, clock never moves, 2 threads"),
        Measurement(
            section: "peers", name: "atomic-clock-2", unit: "ns", samples: two[2], note: "atomic GCRA, 2 threads"),
        Measurement(section: "peers", name: "allow-clock-4", unit: "ns", samples: four[0], note: "lock, 4 threads"),
        Measurement(
            section: "peers", name: "atomic-clock-4", unit: "ns", samples: four[1], note: "atomic GCRA, 4 threads"),
    ]
}
