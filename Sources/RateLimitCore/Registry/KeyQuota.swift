// What the registry tells an app about a key (Spec/Registry.md, REG-4, REG-6, REG-9).

/// The state of a key (REG-4).
public enum KeyState: Hashable, Sendable {
    /// Requests are decided by the key's limit.
    case accepting
    /// Nothing but critical requests passes before `until` (a server's Retry-After, or the app's
    /// decision); the state returns to accepting at `until`.
    case throttled(until: RateLimitInstant)
    /// The limit is off: every request passes at once, uncounted by the limit.
    case disabled
}

/// How much quota a key has left, as an app shows it (REG-6).
public enum QuotaStatus: UInt8, Hashable, Sendable, Comparable {
    /// More than the rule's warning threshold remains.
    case ok
    /// Some quota remains, at most the threshold.
    case warning
    /// Nothing remains now.
    case limited

    public static func < (lhs: QuotaStatus, rhs: QuotaStatus) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Requests counted per key or in total (REG-9).
public struct KeyStatistics: Hashable, Sendable {
    /// Requests let through: granted, or bypassed (critical, or a disabled key).
    public internal(set) var admitted: UInt64 = 0
    /// Requests refused at once or timed out.
    public internal(set) var rejected: UInt64 = 0
    /// Requests that had to wait in a queue (whatever their outcome).
    public internal(set) var queued: UInt64 = 0
    /// Requests waiting now.
    public internal(set) var waiting: Int = 0

    @usableFromInline
    package init() {}

    /// `admitted` requests let through, nothing else: what a sharded shell counted outside its
    /// shards (REG-13 item 5).
    package init(admitted: UInt64) { self.admitted = admitted }

    /// Counts a request (the setters are internal, so inlined registry code counts through these).
    @usableFromInline mutating func countAdmitted() { admitted += 1 }
    @usableFromInline mutating func countRejected() { rejected += 1 }
    @usableFromInline mutating func countQueued() { queued += 1 }

    /// The counts of two sets of keys together (a sharded registry's shards, REG-13).
    package static func + (lhs: KeyStatistics, rhs: KeyStatistics) -> KeyStatistics {
        var sum = lhs
        sum.admitted &+= rhs.admitted
        sum.rejected &+= rhs.rejected
        sum.queued &+= rhs.queued
        sum.waiting &+= rhs.waiting
        return sum
    }
}

/// A key's state, quota and statistics at an instant (REG-6).
public struct KeyQuota: Hashable, Sendable {
    public let key: String
    public let state: KeyState
    public let status: QuotaStatus
    /// The largest acquire the key would admit now (0 while throttled; the limit's maximum while disabled).
    public let remaining: Int64
    public let statistics: KeyStatistics
}
