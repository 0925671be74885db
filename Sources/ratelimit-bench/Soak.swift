import CHeapStatistics
import Foundation
import RateLimitCore

// ratelimit-bench --soak SECONDS: the registry (Spec/Registry.md) under sustained mixed traffic for
// SECONDS of wall time, in simulated time: keys appearing and going idle past the key limit,
// throttles, queued requests that time out or are cancelled, reconfigures and resets. Memory is
// sampled after every round. It fails (exit 1) when the heap grows after warm-up, a file
// descriptor leaks, a key admits more than GCRA-11 allows, or a queued request does not get
// exactly one outcome (WQ-2). The pure machine is what runs: every adapter's registry executes it.

/// Runs the soak for `seconds` and prints what it saw; `false` when a check failed.
func soak(seconds: Double) -> Bool {
    let seed = soakSeed()
    var generator = SeededGenerator(seed: seed)
    let burst: Int64 = 5
    let interval: Int64 = 1_000_000  // 1 ms
    let slower: Int64 = 3_000_000
    guard let fast = try? GCRA(burst: burst, emissionIntervalNanoseconds: interval),
        let slow = try? GCRA(burst: burst, emissionIntervalNanoseconds: slower),
        let queued = try? RateLimitRule(.prefix("q/"), fast, overflow: .queue(limit: 4, timeout: .milliseconds(2))),
        let rejecting = try? RateLimitRule(.prefix("r/"), fast),
        var registry = try? RateLimitRegistry(rules: [queued, rejecting], maximumKeys: 2_000, at: .origin)
    else {
        print("soak: the configuration is refused")
        return false
    }
    /// Per key, since its last reset or reconfigure: the virtual time its admissions have used up
    /// (one interval each, from the later of its previous value and the admission), and the
    /// interval in force. GCRA-11 bounds every window of admissions, not only those from the first:
    /// at most B + ⌊(e_j − e_i) / T⌋ between admissions i and j, which holds for every i and j
    /// exactly when no admission finds the used-up time more than B intervals ahead of it.
    struct Admissions {
        var usedUntil: Int64
        var interval: Int64
    }
    var admissions: [String: Admissions] = [:]
    var ruleIntervals = ["q/": interval, "r/": interval]
    var ticketKeys: [WaitTicket: String] = [:]
    var issued = 0
    var completed = 0
    var (refused, timedOut, cancelled) = (0, 0, 0)
    var failures: [String] = []
    var now: Int64 = 0
    func instant(_ nanoseconds: Int64) -> RateLimitInstant {
        (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin
    }
    /// Counts an admission on `key` at `at` (a waiter's grant is at its completion's instant).
    func admit(_ key: String, at: Int64) {
        var entry =
            admissions[key] ?? Admissions(usedUntil: at, interval: ruleIntervals[String(key.prefix(2))] ?? interval)
        entry.usedUntil = max(entry.usedUntil, at) + entry.interval
        if entry.usedUntil - at > burst * entry.interval, failures.count < 5 {
            failures.append(
                "\(key) admitted at \(at) ns with \(entry.usedUntil - at) ns of intervals used up ahead, more than \(burst) (GCRA-11)"
            )
        }
        admissions[key] = entry
    }
    func execute(_ effects: RateLimitEffects) {
        for completion in effects.completions {
            guard let key = ticketKeys.removeValue(forKey: completion.ticket) else {
                if failures.count < 5 { failures.append("a second outcome for \(completion.ticket) (WQ-2)") }
                continue
            }
            completed += 1
            switch completion.outcome {
            case .granted: admit(key, at: completion.at.nanoseconds)
            case .timedOut: timedOut += 1
            case .cancelled: cancelled += 1
            case .rejected, .bypassed, .closed: break
            }
        }
    }

    let started = ContinuousClock.now
    let wall = Duration.milliseconds(Int64(seconds * 1_000))
    var samples: [(heap: Int, resident: Int, descriptors: Int)] = []
    var operations = 0
    var round = 0
    while ContinuousClock.now - started < wall {
        // Keys drift: each round draws from a window of 3,000 ids that moves on by 300, so keys go
        // idle and new ones come, more of them than the registry holds (2,000).
        let base = round * 300
        for _ in 0..<20_000 {
            now += Int64.random(in: 0...40_000, using: &generator)
            // A third of the traffic goes to ten hot keys, several times what their limit admits:
            // refusals, queues that fill, waits that time out.
            let hot = Int.random(in: 0..<3, using: &generator) == 0
            let id =
                hot ? Int.random(in: 0..<10, using: &generator) : base + Int.random(in: 0..<3_000, using: &generator)
            let key = (id % 2 == 0 ? "q/" : "r/") + (hot ? "hot-" : "") + String(id)
            let roll = Int.random(in: 0..<100, using: &generator)
            switch roll {
            case 0..<60:
                let (outcome, effects) = registry.tryAcquire(key, at: instant(now))
                // Waiters that fell due before now were granted first (at their instants).
                execute(effects)
                if case .granted = outcome { admit(key, at: now) } else { refused += 1 }
            case 60..<80:
                let (ticket, effects) = registry.acquire(key, at: instant(now))
                ticketKeys[ticket] = key
                issued += 1
                execute(effects)
            case 80..<85:
                // Sorted: a dictionary's order changes from process to process, and a seed replays.
                if let ticket = ticketKeys.keys.sorted().randomElement(using: &generator) {
                    execute(registry.cancel(ticket, at: instant(now)))
                }
            case 85..<90:
                execute(registry.throttle(key, until: instant(now + 5 * interval), at: instant(now)))
            case 90..<93:
                // Now and then a rule's limit changes, for every key it governs (a key with a
                // configuration of its own is never forgotten, REG-8, so keys keep their rule's).
                guard Int.random(in: 0..<30, using: &generator) == 0 else { break }
                // What fell due before now (a waiter granted when a throttle ended) was granted
                // under the old limit: counted before the bounds start again.
                execute(registry.advance(to: instant(now)))
                let prefix = String(key.prefix(2))
                let next = ruleIntervals[prefix] == interval ? slow : fast
                guard let effects = try? registry.reconfigure(rule: .prefix(prefix), to: next, at: instant(now)) else {
                    failures.append("the rule \(prefix) refused a reconfigure")
                    break
                }
                ruleIntervals[prefix] = next.emissionIntervalNanoseconds
                // A reconfigure keeps at most the new burst (GCRA-10): each bound counts from here.
                for held in admissions.keys where held.hasPrefix(prefix) {
                    admissions[held] = Admissions(usedUntil: now, interval: next.emissionIntervalNanoseconds)
                }
                execute(effects)
            case 93..<95:
                execute(registry.advance(to: instant(now)))  // granted before the reset, as above
                let (_, effects) = registry.reset(key, at: instant(now))
                admissions[key] = nil
                execute(effects)
            default:
                execute(registry.advance(to: instant(now)))
            }
            operations += 1
        }
        execute(registry.advance(to: instant(now)))
        // Forget what the registry forgot: a key it no longer holds starts again full.
        if round % 10 == 9 { admissions = admissions.filter { registry.hasKey($0.key) } }
        samples.append((ratelimit_heap_bytes_in_use(), residentBytes(), openDescriptors()))
        round += 1
    }
    execute(registry.close(at: instant(now)))
    if !ticketKeys.isEmpty { failures.append("\(ticketKeys.count) queued requests got no outcome (WQ-2)") }
    // A soak that never limited checked nothing.
    if refused == 0 || timedOut == 0 || cancelled == 0 {
        failures.append(
            "the traffic never hit a limit: \(refused) refused, \(timedOut) timed out, \(cancelled) cancelled")
    }

    // After warm-up (the first fifth of the rounds, at least one), the heap stays within a quarter
    // (and 1 MB) of the most it reached then, and no descriptor is left open.
    let warmUp = max(1, samples.count / 5)
    let settled = samples.prefix(warmUp).map(\.heap).max() ?? 0
    let later = samples.dropFirst(warmUp).map(\.heap).max() ?? settled
    if later > settled + settled / 4 + (1 << 20) {
        failures.append("the heap grew from \(megabytes(settled)) after warm-up to \(megabytes(later))")
    }
    if let first = samples.first, let last = samples.last, last.descriptors > first.descriptors {
        failures.append("open file descriptors went from \(first.descriptors) to \(last.descriptors)")
    }
    let first = samples.first ?? (0, 0, 0)
    let last = samples.last ?? first
    print(
        "soak: registry, seed \(seed) (RATELIMIT_SEED=\(seed) replays it), \(String(format: "%.0f", seconds)) s, \(operations) operations in \(samples.count) rounds over \(now / 1_000_000) simulated ms"
    )
    print("  keys held at the end: \(registry.keyCount) of at most \(registry.maximumKeys)")
    print(
        "  heap: \(megabytes(first.heap)) after round 1, \(megabytes(settled)) at most during warm-up, \(megabytes(last.heap)) at the end (\(megabytes(later)) at most after warm-up)"
    )
    print(
        "  resident: \(megabytes(first.resident)) -> \(megabytes(last.resident)); file descriptors: \(first.descriptors) -> \(last.descriptors)"
    )
    print(
        "  queued requests: \(issued), each with one outcome (\(completed)): \(timedOut) timed out, \(cancelled) cancelled; \(refused) try-acquires refused"
    )
    for failure in failures { print("  FAIL \(failure)") }
    print(failures.isEmpty ? "soak: PASS" : "soak: FAIL")
    return failures.isEmpty
}

/// The soak's seed: `RATELIMIT_SEED` when set (to replay a run), a new one otherwise.
func soakSeed() -> UInt64 {
    ProcessInfo.processInfo.environment["RATELIMIT_SEED"].flatMap { UInt64($0) } ?? .random(in: 0...UInt64(UInt32.max))
}

func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

/// Resident memory (Linux: /proc/self/statm); 0 elsewhere.
private func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Open file descriptors (Linux: /proc/self/fd); 0 elsewhere.
func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
}
