import CHeapStatistics
import Foundation
import RateLimitRedis
import RedisTestSupport

// ratelimit-redis-bench --soak SECONDS: the shared limiters against a real redis-server for SECONDS
// of sustained mixed traffic: keys drifting through a window (old ones idle, then expired on the
// server, SHARED-4), rate and concurrency limits, leases taken and given back, and faults every
// round (the script cache and the functions flushed: the library loaded again, SHARED-14; every
// client connection killed: one failed call, then a new connection). Memory is sampled after every round, this process's and the
// server's. It fails when this process's heap grows after warm-up, a descriptor leaks (a
// reconnect that leaves its socket open), a key admits more than GCRA-11 allows on the server's
// clock, or the server keeps more keys than the window's.

/// Runs the soak against the server at `port` for `seconds`; `false` when a check failed.
func soak(port: Int, seconds: Double) async throws -> Bool {
    let burst: Int64 = 5
    let interval: Int64 = 50_000_000  // 50 ms: the hot keys get several times what they admit
    let gcra = try GCRA(burst: burst, emissionIntervalNanoseconds: interval)
    let connections = try ConcurrencyLimiter(limit: 3)
    let redis = RESPConnection(lazilyTo: port)
    let admin = try RESPConnection(port: port)
    var generator = SystemRandomNumberGenerator()
    /// Per GCRA key id: the server's clock at the start of the round of its first admission (no
    /// later than it: GCRA-11's bound, loosened by that much), and the permits admitted since.
    var admitted: [Int: (since: Int64, permits: Int64)] = [:]
    var failures: [String] = []
    var (calls, failedCalls, refused, kills) = (0, 0, 0, 0)
    var samples: [(heap: Int, descriptors: Int, serverMemory: Int64, serverKeys: Int64)] = []
    func checkBound(_ id: Int, at end: Int64) {
        guard let entry = admitted[id], entry.permits > burst + (end - entry.since) / interval, failures.count < 5
        else { return }
        failures.append("key \(id) admitted \(entry.permits) permits in \(end - entry.since) ns (GCRA-11)")
    }
    let started = ContinuousClock.now
    var round = 0
    while ContinuousClock.now - started < .milliseconds(Int64(seconds * 1_000)) {
        let roundStart = try admin.serverNanoseconds()
        // Limiters made per call, as an app that keeps none would: nothing stays in this process.
        for _ in 0..<400 {
            // A third of the calls go to five hot keys; the rest drift through a window of 400 ids.
            let id =
                Int.random(in: 0..<3, using: &generator) == 0
                ? -1 - Int.random(in: 0..<5, using: &generator)
                : round * 40 + Int.random(in: 0..<400, using: &generator)
            calls += 1
            do {
                if id >= 0, id % 4 == 0 {
                    let limiter = RedisConcurrencyLimiter(
                        connections, key: "soak:{c\(id)}", runner: redis, timeout: .milliseconds(250))
                    if let lease = try await limiter.tryAcquire(lease: .milliseconds(50)).lease {
                        if Bool.random(using: &generator) { _ = try await limiter.release(lease) }
                    }
                } else {
                    let limiter = RedisRateLimiter(
                        gcra, key: "soak:{g\(id)}", runner: redis, timeout: .milliseconds(250))
                    if case .allowed = try await limiter.tryAcquire() {
                        var entry = admitted[id] ?? (roundStart, 0)
                        entry.permits += 1
                        admitted[id] = entry
                    } else {
                        refused += 1
                    }
                }
            } catch {
                failedCalls += 1
            }
        }
        // Each key's bound at the end of the round; the keys that left the window are done with.
        let roundEnd = try admin.serverNanoseconds()
        for id in Array(admitted.keys) {
            checkBound(id, at: roundEnd)
            if id >= 0, id < round * 40 { admitted[id] = nil }
        }
        // Faults: the script cache and the library flushed, every client's connection killed (ours too).
        _ = try admin.call("SCRIPT", "FLUSH")
        _ = try admin.call("FUNCTION", "FLUSH")
        if round % 3 == 2 {
            _ = try admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
            kills += 1
        }
        let memory = try admin.call("INFO", "memory").text ?? ""
        let used =
            memory.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
            .flatMap { Int64($0.dropFirst("used_memory:".count)) } ?? 0
        let keys = try admin.call("DBSIZE").integer ?? 0
        samples.append((ratelimit_heap_bytes_in_use(), openDescriptors(), used, keys))
        round += 1
    }
    let warmUp = max(1, samples.count / 5)
    let settled = samples.prefix(warmUp).map(\.heap).max() ?? 0
    let later = samples.dropFirst(warmUp).map(\.heap).max() ?? settled
    // Each limiter's deadline watcher lives one to two timeouts after its call: the heap follows
    // the call rate, hence more room than the registry's soak needs (a leak of 3.5 KB a limiter
    // filled it in seconds).
    if later > settled + settled / 2 + (4 << 20) {
        failures.append("the heap grew from \(megabytes(settled)) after warm-up to \(megabytes(later))")
    }
    let first = samples.first ?? (0, 0, 0, 0)
    let last = samples.last ?? first
    if last.descriptors > first.descriptors + 1 {
        failures.append("open file descriptors went from \(first.descriptors) to \(last.descriptors)")
    }
    // A killed connection fails the call in flight on it, at most; the next one connects again.
    if failedCalls > kills + 1 { failures.append("\(failedCalls) calls failed for \(kills) killed connections") }
    if refused == 0 { failures.append("no call was refused: the traffic never hit a limit") }
    // Keys expire once idle (SHARED-4): the server holds about a window's worth, not every key seen.
    if last.serverKeys > 2_000 { failures.append("the server holds \(last.serverKeys) keys: idle keys do not expire") }
    print(
        "soak: Redis limiters, \(String(format: "%.0f", seconds)) s, \(calls) calls in \(samples.count) rounds, \(refused) refused, \(failedCalls) failed by \(kills) killed connections"
    )
    print(
        "  heap: \(megabytes(first.heap)) after round 1, \(megabytes(later)) at most after warm-up, \(megabytes(last.heap)) at the end"
    )
    print("  file descriptors: \(first.descriptors) -> \(last.descriptors)")
    print(
        "  server: \(first.serverKeys) -> \(last.serverKeys) keys, \(megabytes(Int(first.serverMemory))) -> \(megabytes(Int(last.serverMemory))) used"
    )
    print("  every rate-limited key within GCRA-11's bound on the server's clock, at the end of each round")
    for failure in failures { print("  FAIL \(failure)") }
    print(failures.isEmpty ? "soak: PASS" : "soak: FAIL")
    return failures.isEmpty
}

private func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

/// Open file descriptors (Linux: /proc/self/fd); 0 elsewhere.
private func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
}
