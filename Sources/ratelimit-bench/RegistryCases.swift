import CHeapStatistics
import Foundation
import RateLimitActor
import RateLimitAtomic
import RateLimitClock
import RateLimitCore
import RateLimitDispatch
import RateLimitLock

// The registries against their floors (Cases.swift has the shared helpers).

// MARK: Registry

/// `count` keys of at most 15 UTF-8 bytes, so each is held inline in its `String`, as an app's
/// short keys are ("endpoint-999999"; a longer key adds one heap object, shared with the caller).
func smallKeys(_ count: Int) -> [String] {
    (0..<count).map { String(decoding: Array("endpoint-\($0)".utf8), as: UTF8.self) }
}

/// The requests' keys in a seeded random order (each key drawn uniformly), at least 65,536 of them
/// and a power of two: read in sequence, so that the loop's own reads stay out of the cache
/// misses measured.
func requestOrder(_ keys: [String]) -> [String] {
    var generator = SeededGenerator(seed: 20)
    let length = max(65_536, (keys.count * 2 - 1).nextPowerOfTwo)
    return (0..<length).map { _ in keys[Int(generator.next() % UInt64(keys.count))] }
}

extension Int {
    /// The least power of two at least `self` (self ≥ 1).
    var nextPowerOfTwo: Int { 1 << (Int.bitWidth - (self - 1).leadingZeroBitCount) }
}

/// A keyed decision against the single-limiter decision of the same adapter, measured interleaved
/// (issue 20: at most 2x at 10 and 10,000 keys, 3x at 1,000,000). Keys come in a random order;
/// every key is created before timing, so what is timed is a request on a held key. At a million
/// keys a request finds its key's state in memory no cache holds: the bound row there is the
/// adapter's single-limiter decision overlapping one random read in a table as large as the
/// registry (64 B per key), prefetched before the decision and read after it, each read's address
/// known only once the read before it is done (as a request follows the last). That is the least
/// any keyed limiter pays: it must fetch the key's state, and at best its whole decision overlaps
/// the fetch. (The registry's overlaps only the clock read: its decision needs the row.)
func registries(plan: Plan) async throws -> [Measurement] {
    var results: [Measurement] = []
    let operations = 1_000_000
    let rule = try RateLimitRule(.anyKey, try endlessBucket())
    for keyCount in plan.smoke ? [10, 1_000] : [10, 10_000, 1_000_000] {
        let target: Double = keyCount >= 1_000_000 ? 3 : 2
        let keys = smallKeys(keyCount)
        let order = requestOrder(keys)
        let mask = order.count - 1
        let table = keyCount >= 1_000_000 ? RandomReadTable(bytes: keyCount * 64) : nil
        let rounds = keyCount >= 1_000_000 ? operations / 8 : operations / 2

        /// Appends the single-limiter floor, the bound (when measured) and the keyed result.
        func report(_ adapter: String, _ samples: [[Double]]) {
            let floor = Measurement(
                section: "floor", name: "\(adapter): tryAcquire (single limiter), beside \(keyCount) keys",
                unit: "ns", samples: samples[0])
            results.append(floor)
            var keyed = Measurement(
                section: "registry", name: "\(adapter) registry: tryAcquire, \(keyCount) keys", unit: "ns",
                samples: samples[1]
            ).compared(with: floor, atMost: target, paired: true)
            if samples.count > 2, let table {
                var bound = Measurement(
                    section: "bound",
                    name: "\(adapter): single limiter overlapping one random read in \(table.mebibytes) MiB",
                    unit: "ns",
                    samples: samples[2]
                ).compared(with: floor, atMost: nil, paired: true)
                let reachable = (bound.ratio ?? 0) <= target
                if !reachable { bound.note = "already over the keyed \(number(target))x target" }
                results.append(bound)
                keyed.note = String(
                    format: "%.2fx the bound", Measurement.median(zip(samples[1], samples[2]).map { $0 / $1 }))
                keyed.outOfReach = !reachable
            }
            results.append(keyed)
        }

        // Lock.
        let lockSingle = try LockedRateLimiter(try endlessBucket(), clock: ContinuousClock())
        let locked = try LockedRateLimitRegistry(rules: [rule], maximumKeys: keyCount, clock: ContinuousClock())
        for key in keys { _ = locked.tryAcquire(key) }
        var lockBodies: [(Int) -> Int] = [
            { count in
                var checksum = 0
                for _ in 0..<count { if case .granted = lockSingle.tryAcquire() { checksum &+= 1 } }
                return checksum
            },
            { count in
                var checksum = 0
                for index in 0..<count { if case .granted = locked.tryAcquire(order[index & mask]) { checksum &+= 1 } }
                return checksum
            },
        ]
        if let table {
            lockBodies.append { count in
                var checksum = 0
                var next = 0  // the index read next: known only once the previous read is done
                for index in 0..<count {
                    table.prefetch(next)
                    if case .granted = lockSingle.tryAcquire() { checksum &+= 1 }
                    next = index &+ 1 &+ Int(truncatingIfNeeded: table.read(next))
                }
                checksum &+= next
                return checksum
            }
        }
        report("lock", plan.timeInterleaved(operations: rounds, lockBodies))
        withExtendedLifetime(locked) {}

        // Actor.
        let actorSingle = try ActorRateLimiter(try endlessBucket(), clock: ContinuousClock())
        let actorKeyed = try ActorRateLimitRegistry(rules: [rule], maximumKeys: keyCount, clock: ContinuousClock())
        for key in keys { _ = await actorKeyed.tryAcquire(key) }
        var actorBodies: [@Sendable (Int) async -> Int] = [
            { count in
                var checksum = 0
                for _ in 0..<count { if case .granted = await actorSingle.tryAcquire() { checksum &+= 1 } }
                return checksum
            },
            { count in
                var checksum = 0
                for index in 0..<count {
                    if case .granted = await actorKeyed.tryAcquire(order[index & mask]) { checksum &+= 1 }
                }
                return checksum
            },
        ]
        if let table {
            actorBodies.append { count in
                var checksum = 0
                var next = 0  // the index read next: known only once the previous read is done
                for index in 0..<count {
                    table.prefetch(next)
                    if case .granted = await actorSingle.tryAcquire() { checksum &+= 1 }
                    next = index &+ 1 &+ Int(truncatingIfNeeded: table.read(next))
                }
                checksum &+= next
                return checksum
            }
        }
        report("actor", await plan.timeInterleavedAsync(operations: rounds / 2, actorBodies))
        withExtendedLifetime(actorKeyed) {}

        // Dispatch.
        let dispatchSingle = try DispatchRateLimiter(try endlessBucket(), clock: ContinuousClock())
        let dispatchKeyed = try DispatchRateLimitRegistry(
            rules: [rule], maximumKeys: keyCount, clock: ContinuousClock())
        for key in keys { _ = dispatchKeyed.tryAcquire(key) }
        var dispatchBodies: [(Int) -> Int] = [
            { count in
                var checksum = 0
                for _ in 0..<count { if case .granted = dispatchSingle.tryAcquire() { checksum &+= 1 } }
                return checksum
            },
            { count in
                var checksum = 0
                for index in 0..<count {
                    if case .granted = dispatchKeyed.tryAcquire(order[index & mask]) { checksum &+= 1 }
                }
                return checksum
            },
        ]
        if let table {
            dispatchBodies.append { count in
                var checksum = 0
                var next = 0  // the index read next: known only once the previous read is done
                for index in 0..<count {
                    table.prefetch(next)
                    if case .granted = dispatchSingle.tryAcquire() { checksum &+= 1 }
                    next = index &+ 1 &+ Int(truncatingIfNeeded: table.read(next))
                }
                checksum &+= next
                return checksum
            }
        }
        report("Dispatch", plan.timeInterleaved(operations: rounds / 2, dispatchBodies))
        withExtendedLifetime(dispatchKeyed) {}

        // The pure registry against the pure wait queue (the single limiter's machine), no target.
        var pure = try RateLimitRegistry(rules: [rule], maximumKeys: keyCount, at: .origin)
        for key in keys { _ = pure.tryAcquire(key, at: .origin) }
        var queue = try WaitQueue(try endlessBucket(), queueLimit: 0, at: .origin)
        var now: Int64 = 0
        let pureRound = plan.timeInterleaved(
            operations: rounds * 2,
            [
                { count in
                    var checksum = 0
                    for _ in 0..<count {
                        now &+= 10
                        if case .granted = queue.tryAcquire(1, at: instant(now)).outcome { checksum &+= 1 }
                    }
                    return checksum
                },
                { count in
                    var checksum = 0
                    for index in 0..<count {
                        now &+= 10
                        if case .granted = pure.tryAcquire(order[index & mask], at: instant(now)).outcome {
                            checksum &+= 1
                        }
                    }
                    return checksum
                },
            ])
        let queueFloor = Measurement(
            section: "floor", name: "pure wait queue: tryAcquire, beside \(keyCount) keys", unit: "ns",
            samples: pureRound[0])
        results += [
            queueFloor,
            Measurement(
                section: "registry", name: "pure registry: tryAcquire, \(keyCount) keys", unit: "ns",
                samples: pureRound[1]
            ).compared(with: queueFloor, atMost: nil, paired: true),
        ]
    }
    return results
}
