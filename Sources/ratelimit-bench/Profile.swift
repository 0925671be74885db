// `ratelimit-bench --profile <case>`: one loop and nothing else, to run under valgrind's callgrind
// (`valgrind --tool=callgrind .build/release/ratelimit-bench --profile registry`).

import Dispatch
import RateLimitActor
import RateLimitAtomic
import RateLimitCore
import RateLimitDispatch
import RateLimitLock
import Synchronization

let profileCases = ["wait-queue", "lock", "lock-floor", "actor", "dispatch", "dispatch-floor", "registry", "atomic", "atomic-floor", "token-bucket"]

func profile(_ name: String, count: Int) throws {
    var checksum = 0
    switch name {
    case "wait-queue":
        var queue = try WaitQueue(try endlessBucket(), queueLimit: 0, at: .origin)
        for index in 0..<count {
            if case .granted = queue.tryAcquire(1, priority: .normal, at: instant(Int64(index))).0 { checksum &+= 1 }
        }
    case "lock":
        let limiter = try LockedRateLimiter(try endlessBucket(), clock: ContinuousClock())
        for _ in 0..<count { if case .granted = limiter.tryAcquire() { checksum &+= 1 } }
    case "lock-floor":
        let bucket = BareConditionBucket(BareTokenBucket(capacity: 1 << 40, permitsPerPeriod: 1, periodNanoseconds: 1))
        for _ in 0..<count { checksum &+= Int(truncatingIfNeeded: bucket.acquire(readingClock: true)) }
    case "actor":
        let limiter = try ActorRateLimiter(try endlessBucket(), clock: ContinuousClock())
        // Valgrind cannot follow the cooperative pool's threads: profile this one with `perf`.
        let done = DispatchSemaphore(value: 0)
        let granted = Atomic(0)
        Task.detached {
            for _ in 0..<count { if case .granted = await limiter.tryAcquire() { granted.add(1, ordering: .relaxed) } }
            done.signal()
        }
        done.wait()
        checksum = granted.load(ordering: .relaxed)
    case "dispatch":
        let limiter = try DispatchRateLimiter(try endlessBucket(), clock: ContinuousClock())
        for _ in 0..<count { if case .granted = limiter.tryAcquire() { checksum &+= 1 } }
    case "dispatch-floor":
        let queue = DispatchQueue(label: "ratelimit-bench.profile")
        for _ in 0..<count { queue.sync { checksum &+= 1 } }
    case "registry":
        let keys = (0..<10_000).map { "endpoint-\($0)" }
        var registry = try RateLimitRegistry(rules: [try RateLimitRule(.anyKey, try endlessBucket())], maximumKeys: 10_000, at: .origin)
        for index in 0..<count {
            if case .granted = registry.tryAcquire(keys[index % 10_000], permits: 1, priority: .normal, at: instant(Int64(index))).outcome { checksum &+= 1 }
        }
    case "atomic":
        let limiter = AtomicGCRA(try endlessGCRA(), clock: ContinuousClock())
        for _ in 0..<count { if limiter.tryAcquire().isAdmitted { checksum &+= 1 } }
    case "atomic-floor":
        let limiter = BareAtomicGCRA(BareGCRA(burst: 1 << 40, interval: 1))
        for _ in 0..<count { checksum &+= Int(truncatingIfNeeded: limiter.acquire(readingClock: true)) }
    case "token-bucket":
        var limiter = RateLimiter(try TokenBucket(capacity: 100, permitsPerPeriod: 1, periodNanoseconds: 1_000), at: .origin)
        for index in 0..<count { checksum &+= Int(limiter.acquire(1, at: instant(Int64(index) * 1_000)).remaining ?? 0) }
    default:
        print("unknown profile case \(name); one of \(profileCases.joined(separator: ", "))")
    }
    sink &+= checksum
}
