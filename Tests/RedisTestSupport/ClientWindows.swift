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
// only the check's reach shrinks as they grow.

/// One admission as a client recorded it: when it sent the call and when the reply came, on a
/// clock every process of the machine shares (CLOCK_MONOTONIC, nanoseconds), and its permits.
public struct ClientAdmission: Sendable, Hashable {
    public var sent: Int64
    public var answered: Int64
    public var permits: Int64

    public init(sent: Int64, answered: Int64, permits: Int64) {
        self.sent = sent
        self.answered = answered
        self.permits = permits
    }
}

/// The most permits any window of client records holds over a GCRA's bound B + ⌊span / T⌋: at
/// most 0 for a correct store. Windows run from each admission's send to the latest reply among
/// the admissions sent from then to a later one, so every admission counted in one was decided
/// inside it.
public func excessOverGCRABound(_ admissions: [ClientAdmission], burst: Int64, interval: Int64) -> Int64 {
    let sorted = admissions.sorted { $0.sent < $1.sent }
    var excess = Int64.min
    for i in sorted.indices {
        var latest = sorted[i].answered
        var permits: Int64 = 0
        for j in i..<sorted.count {
            latest = max(latest, sorted[j].answered)
            permits += sorted[j].permits
            excess = max(excess, permits - (burst + (latest - sorted[i].sent) / interval))
        }
    }
    return excess
}

/// Nanoseconds on CLOCK_MONOTONIC: one timeline for every process of the machine.
public func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
