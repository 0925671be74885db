import CHeapStatistics
import Foundation
import RateLimitRedis
import RedisTestSupport

// ratelimit-redis-bench --soak SECONDS: the shared limiters against a real redis-server for SECONDS
// of sustained mixed traffic: keys drifting through a window (old ones idle, then expired on the
// server, SHARED-4), rate and concurrency limits, leases taken and given back, and faults every
// round (the script cache flushed: NOSCRIPT then EVAL; every client connection killed: one failed
// call, then a new connection). Memory is sampled after every round, this process's and the
// server's. It fails when this process's heap grows after warm-up, a descriptor leaks (a
// reconnect that leaves its socket open), a key admits more than GCRA-11 allows on the server's
// clock, or the server keeps more keys than the window's.

/// Runs the soak against the server at `port` for `seconds`; `false` when a check failed.
func soak(port: Int, seconds: Double) async throws -> Bool {
    let burst: Int64 = 5
    let interval: Int64 = 2_000_000  // 2 ms
    let gcra = try GCRA(burst: burst, emissionIntervalNanoseconds: interval)
    let connections = try ConcurrencyLimiter(limit: 3)
    let redis = RESPConnection(lazilyTo: port)
    let admin = try RESPConnection(port: port)
    var generator = SystemRandomNumberGenerator()
    /// Per GCRA key: the server's clock at the start of the round of its first admission (no later
    /// than that admission: the bound checked is GCRA-11's, loosened by that much), and permits.
    var admitted: [String: (since: Int64, permits: Int64)] = [:]
    var failures: [String] = []
    var calls = 0
    var failedCalls = 0
    var samples: [(heap: Int, descriptors: Int, serverMemory: Int64, serverKeys: Int64)] = []
    let started = ContinuousClock.now
    var round = 0
    while ContinuousClock.now - started < .milliseconds(Int64(seconds * 1_000)) {
        let roundStart = try admin.serverNanoseconds()
        // Limiters made per call, as an app that keeps none would: nothing stays in this process.
        for _ in 0..<400 {
            let id = round * 40 + Int.random(in: 0..<400, using: &generator)
            calls += 1
            do {
                if id % 4 == 0 {
                    let limiter = RedisConcurrencyLimiter(connections, key: "soak:{c\(id)}", runner: redis)
                    if let lease = try await limiter.tryAcquire(lease: .milliseconds(50)).lease {
                        if Bool.random(using: &generator) { _ = try await limiter.release(lease) }
                    }
                } else {
                    let key = "soak:{g\(id)}"
                    let limiter = RedisRateLimiter(gcra, key: key, runner: redis)
                    if case .allowed = try await limiter.tryAcquire() {
                        var entry = admitted[key] ?? (roundStart, 0)
                        entry.permits += 1
                        admitted[key] = entry
                    }
                }
            } catch {
                failedCalls += 1
            }
        }
        // Faults: the script cache flushed, every client's connection killed (ours too).
        _ = try admin.call("SCRIPT", "FLUSH")
        if round % 3 == 2 { _ = try admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") }
        let memory = try admin.call("INFO", "memory").text ?? ""
        let used =
            memory.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
            .flatMap { Int64($0.dropFirst("used_memory:".count)) } ?? 0
        let keys = try admin.call("DBSIZE").integer ?? 0
        samples.append((ratelimit_heap_bytes_in_use(), openDescriptors(), used, keys))
        round += 1
    }
    let end = try admin.serverNanoseconds()
    for (key, entry) in admitted where entry.permits > burst + (end - entry.since) / interval {
        failures.append("\(key) admitted \(entry.permits) permits in \(end - entry.since) ns (GCRA-11)")
        if failures.count >= 5 { break }
    }
    let warmUp = max(1, samples.count / 5)
    let settled = samples.prefix(warmUp).map(\.heap).max() ?? 0
    let later = samples.dropFirst(warmUp).map(\.heap).max() ?? settled
    if later > settled + settled / 4 + (1 << 20) {
        failures.append("the heap grew from \(megabytes(settled)) after warm-up to \(megabytes(later))")
    }
    let first = samples.first ?? (0, 0, 0, 0)
    let last = samples.last ?? first
    if last.descriptors > first.descriptors + 1 {
        failures.append("open file descriptors went from \(first.descriptors) to \(last.descriptors)")
    }
    // Keys expire once idle (SHARED-4): the server holds about a window's worth, not every key seen.
    if last.serverKeys > 2_000 { failures.append("the server holds \(last.serverKeys) keys: idle keys do not expire") }
    print(
        "soak: Redis limiters, \(String(format: "%.0f", seconds)) s, \(calls) calls in \(samples.count) rounds (\(failedCalls) failed by the faults)"
    )
    print(
        "  heap: \(megabytes(first.heap)) after round 1, \(megabytes(later)) at most after warm-up, \(megabytes(last.heap)) at the end"
    )
    print("  file descriptors: \(first.descriptors) -> \(last.descriptors) (every connection killed every third round)")
    print(
        "  server: \(first.serverKeys) -> \(last.serverKeys) keys, \(megabytes(Int(first.serverMemory))) -> \(megabytes(Int(last.serverMemory))) used"
    )
    print("  \(admitted.count) rate-limited keys within GCRA-11's bound on the server's clock")
    for failure in failures { print("  FAIL \(failure)") }
    print(failures.isEmpty ? "soak: PASS" : "soak: FAIL")
    return failures.isEmpty
}

private func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

/// Open file descriptors (Linux: /proc/self/fd); 0 elsewhere.
private func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
}
