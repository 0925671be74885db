import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A shared GCRA judged from its clients' own records (GCRA-11, SHARED-1): each admission was
// decided at a server instant between its client's send and its reply, so the admissions sent at
// or after s whose replies came by r lie in a server window of at most r − s, which admits at most
// B + ⌊(r − s) / T⌋ permits. A correct store never exceeds that, whatever the round trips were;
// only the check's reach shrinks as they grow. The server decides on its wall clock (SHARED-2,
// CLOCK_REALTIME) and the clients time on CLOCK_MONOTONIC: a step of the wall clock against the
// monotonic one (a virtual machine resumed, a clock set) lengthens a server window by the step,
// so the judge widens every window by the steps a `WallClockWatch` saw during the run.

/// One admission as a client recorded it: when it sent the call and when the reply came, on a
/// clock every process of the machine shares (CLOCK_MONOTONIC, nanoseconds), and its permits.
public struct ClientAdmission: Sendable, Hashable {
    public var sent: Int64
    public var answered: Int64
    public var permits: Int64
    /// The GCRA's theoretical arrival time after this admission, as the store replied it
    /// ("idle", SHARED-4), on the store's clock; nil when not recorded.
    public var tat: Int64?

    public init(sent: Int64, answered: Int64, permits: Int64, tat: Int64? = nil) {
        self.sent = sent
        self.answered = answered
        self.permits = permits
        self.tat = tat
    }
}

/// The most permits any window of client records holds over a GCRA's bound B + ⌊span / T⌋: at
/// most 0 for a correct store. Windows run from each admission's send to the latest reply among
/// the admissions sent from then to a later one, so every admission counted in one was decided
/// inside it. `clockSteps`: how far the store's clock moved against the clients' during the run
/// (`WallClockWatch`), added to every window.
public func excessOverGCRABound(
    _ admissions: [ClientAdmission], burst: Int64, interval: Int64, clockSteps: Int64 = 0
) -> Int64 {
    let sorted = admissions.sorted { $0.sent < $1.sent }
    var excess = Int64.min
    for i in sorted.indices {
        var latest = sorted[i].answered
        var permits: Int64 = 0
        for j in i..<sorted.count {
            latest = max(latest, sorted[j].answered)
            permits += sorted[j].permits
            excess = max(excess, permits - (burst + (latest - sorted[i].sent + clockSteps) / interval))
        }
    }
    return excess
}

/// The first admission whose store state did not follow from the one before it, judged on the
/// store's own clock alone: in the order of their `tat`s (GCRA-4: every admission of n permits
/// moves `tat` to max(tat, e) + n·T, so the order of the `tat`s is the store's order), each `tat`
/// lies at least n·T past the previous one. A state lost (a key restarting on a node that did not
/// have it) or an admission answered twice breaks it; a key that expired once idle (SHARED-4) does
/// not, unless the store's clock stepped back meanwhile (`clockSteps`, as for the windows, is
/// allowed for). Nil when every admission follows; admissions without a `tat` are skipped.
public func gcraChainBreak(_ admissions: [ClientAdmission], interval: Int64, clockSteps: Int64 = 0) -> String? {
    let chain = admissions.compactMap { admission in admission.tat.map { (tat: $0, permits: admission.permits) } }
        .sorted { $0.tat < $1.tat }
    for (previous, next) in zip(chain, chain.dropFirst())
    where next.tat - previous.tat < next.permits * interval - clockSteps {
        return
            "tat \(next.tat) of \(next.permits) permits follows tat \(previous.tat): less than \(next.permits) × \(interval) ns"
    }
    return nil
}

/// Watches CLOCK_REALTIME (a Redis server's `TIME`) against CLOCK_MONOTONIC (the clients' records)
/// on a thread of its own, every millisecond or so, until `stop()`: the span of the offsets it saw
/// is how far the wall clock stepped against the monotonic one meanwhile (0 on a quiet machine,
/// where both clocks run at the same rate, but for the readings' own uncertainty of a few
/// hundred nanoseconds; a sample is two monotonic reads around a wall-clock read, the closest of
/// three).
public final class WallClockWatch: @unchecked Sendable {
    // @unchecked: `low`, `high` and `running` are read and written only under `lock`.
    private let lock = NSLock()
    private var low = Int64.max
    private var high = Int64.min
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    public init() {
        sample()
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                sample()
                usleep(1_000)
            }
            done.signal()
        }
    }

    private func sample() {
        var best = (gap: Int64.max, offset: Int64(0))
        for _ in 0..<3 {
            let before = monotonicNanoseconds()
            var wall = timespec()
            clock_gettime(CLOCK_REALTIME, &wall)
            let after = monotonicNanoseconds()
            let gap = after - before
            if gap < best.gap {
                best = (gap, Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec) - (before + gap / 2))
            }
        }
        // The offset is known to within half the gap either way: the span counts that uncertainty
        // in full (it never reads less than a real step), so a sample whose reads a preemption
        // split apart (over 20 µs) is left out rather than widening every window.
        guard best.gap <= 20_000 else { return }
        lock.withLock {
            low = min(low, best.offset - best.gap / 2 - 1)
            high = max(high, best.offset + best.gap / 2 + 1)
        }
    }

    /// Stops watching (again: at once); returns how far the wall clock moved against the monotonic one, in
    /// nanoseconds (never below 0).
    public func stop() -> Int64 {
        let wasRunning = lock.withLock {
            defer { running = false }
            return running
        }
        if wasRunning { done.wait() }
        sample()
        return lock.withLock { low <= high ? high - low : 0 }
    }
}

/// Nanoseconds on CLOCK_MONOTONIC: one timeline for every process of the machine.
public func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
