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
// so each client reads where the two clocks stand with every call it sends, and the judge widens
// every window by the span of those readings (`wallClockSteps`).

/// One admission as a client recorded it: when it sent the call and when the reply came, on a
/// clock every process of the machine shares (CLOCK_MONOTONIC, nanoseconds), and its permits.
public struct ClientAdmission: Sendable, Hashable {
    public var sent: Int64
    public var answered: Int64
    public var permits: Int64
    /// The GCRA's theoretical arrival time after this admission, as the store replied it
    /// ("idle", SHARED-4), on the store's clock; nil when not recorded.
    public var tat: Int64?
    /// The wall clock against the monotonic one when the call was sent; nil when not recorded.
    public var wallClock: WallClockOffset?

    public init(sent: Int64, answered: Int64, permits: Int64, tat: Int64? = nil, wallClock: WallClockOffset? = nil) {
        self.sent = sent
        self.answered = answered
        self.permits = permits
        self.tat = tat
        self.wallClock = wallClock
    }
}

/// The most permits any window of client records holds over a GCRA's bound B + ⌊span / T⌋: at
/// most 0 for a correct store. Windows run from each admission's send to the latest reply among
/// the admissions sent from then to a later one, so every admission counted in one was decided
/// inside it. `clockSteps`: how far the store's clock moved against the clients' during the run
/// (`wallClockSteps`), added to every window.
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

/// Where CLOCK_REALTIME (a Redis server's `TIME`) stood against CLOCK_MONOTONIC (the clients'
/// records) when a client read it: `low ... high` holds realtime − monotonic. Two clocks that run
/// at the same rate keep it; a step of the wall clock (a machine paused and its clock set) moves
/// it by the step.
public struct WallClockOffset: Sendable, Hashable {
    public var low: Int64
    public var high: Int64

    public init(low: Int64, high: Int64) {
        self.low = low
        self.high = high
    }

    /// Two monotonic reads around a wall-clock read, the closest of three; nil when all three were
    /// split apart by more than 20 µs (a preemption): such a reading would only widen the windows.
    public static func now() -> WallClockOffset? {
        var best: WallClockOffset?
        for _ in 0..<3 {
            let before = monotonicNanoseconds()
            var wall = timespec()
            clock_gettime(CLOCK_REALTIME, &wall)
            let after = monotonicNanoseconds()
            let realtime = Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec)
            guard after - before <= 20_000, after - before < (best.map { $0.high - $0.low } ?? .max) else { continue }
            best = WallClockOffset(low: realtime - after, high: realtime - before)
        }
        return best
    }

    public var text: String { "\(low):\(high)" }

    public init?(text: Substring) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let low = Int64(parts[0]), let high = Int64(parts[1]), low <= high else { return nil }
        self.init(low: low, high: high)
    }
}

/// How far the wall clock can have stepped against the monotonic one while `admissions` were
/// recorded: the span of their offsets (never less than a real step; 0 without offsets). The
/// judges widen every window by it.
public func wallClockSteps(_ admissions: [ClientAdmission]) -> Int64 {
    let offsets = admissions.compactMap(\.wallClock)
    guard let low = offsets.map(\.low).min(), let high = offsets.map(\.high).max() else { return 0 }
    return max(0, high - low)
}

/// Nanoseconds on CLOCK_MONOTONIC: one timeline for every process of the machine.
public func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
