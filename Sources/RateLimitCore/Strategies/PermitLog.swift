// The log behind the two sliding windows that remember where their permits were admitted: the
// sliding window log (one entry per admission instant, SWL-2) and the segmented sliding window
// (one entry per segment, SWS-2). Entries are (key, permits) in increasing key order, merged when
// an admission has the key of the last entry; they leave from the front when they expire.
//
// Implementation. A buffer whose pruned prefix (`storage[..<head]`) is reused: an admission
// appends at the back, expiry moves `head`, and the buffer is compacted only when the dead prefix
// dominates, so each entry costs O(1) amortised. The sum of the logged permits is cached. The
// operations are inlined into each strategy's step: the two specializations have the same layout,
// and, left as functions, the optimizer merges them behind thunks (18 instructions more per step
// of the log, measured with callgrind).

/// An entry of a ``PermitLog``: a key (an instant, a segment index) and the permits logged at it.
@usableFromInline
protocol LoggedPermits: Hashable, Sendable {
    /// The instant or segment of the entry; keys increase along the log.
    var key: Int64 { get }
    /// Permits admitted at that key.
    var permits: Int64 { get set }
    init(key: Int64, permits: Int64)
}

/// Entries in increasing key order, oldest first, and the sum of their permits.
@usableFromInline
struct PermitLog<Entry: LoggedPermits>: Sendable {
    // storage[head...] is the log, oldest first; storage[..<head] are pruned slots reused later.
    @usableFromInline var storage: ContiguousArray<Entry> = []
    @usableFromInline var head = 0
    /// Sum of the permits of the logged entries.
    @usableFromInline var total: Int64 = 0

    @usableFromInline init() {}

    /// The logged entries, oldest first.
    @usableFromInline var entries: ArraySlice<Entry> { storage[head...] }

    /// Drops the first `count` entries, which hold `permits`, compacting when the dead prefix dominates.
    @usableFromInline @inline(__always) mutating func dropOldest(_ count: Int, permits: Int64) {
        head += count
        total -= permits
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// Logs `permits` at `key` (at least the last key), merged into the last entry when it has that key.
    @usableFromInline @inline(__always) mutating func append(permits: Int64, at key: Int64) {
        total += permits
        if head < storage.count, storage[storage.count - 1].key == key {
            storage[storage.count - 1].permits += permits
        } else {
            storage.append(Entry(key: key, permits: permits))
        }
    }

    /// What an acquire against the log is told: admitted, or to wait for an entry to expire.
    @usableFromInline enum Decision {
        /// Admitted (or a query answered): this many permits could still be taken.
        case admitted(remaining: Int64)
        /// Refused until the entry with this key has expired.
        case waitFor(key: Int64)
    }

    /// An acquire of `permits` (`0` for a query, else `1...limit`) against `limit`, the leading
    /// `expired` entries no longer counting (SWL-4 … SWL-6, SWS-4 … SWS-6): admitted, it drops
    /// them and logs the permits at `key`; refused, it changes nothing and names the entry whose
    /// expiry, with those before it, frees enough permits.
    @usableFromInline @inline(__always) mutating func acquire(
        _ permits: Int64, limit: Int64, expired: (count: Int, permits: Int64), at key: Int64
    ) -> Decision {
        let inForce = total - expired.permits
        if permits == 0 { return .admitted(remaining: max(0, limit - inForce)) }
        if permits <= limit - inForce {  // in force may exceed the limit after a reconfigure
            dropOldest(expired.count, permits: expired.permits)
            append(permits: permits, at: key)
            return .admitted(remaining: limit - inForce - permits)
        }
        // Refused means inForce > limit − permits ≥ 0, so this neither overflows nor exceeds inForce.
        return .waitFor(key: self.key(reaching: inForce - (limit - permits), skipping: expired.count))
    }

    /// The leading entries whose key is at most `bound`: how many, and their permits.
    @usableFromInline @inline(__always) func leading(through bound: Int64) -> (count: Int, permits: Int64) {
        var count = 0
        var permits: Int64 = 0
        for entry in entries {
            guard entry.key <= bound else { break }
            count += 1
            permits += entry.permits
        }
        return (count, permits)
    }

    /// The key of the entry at which the permits of the entries after the first `skipped`, summed
    /// oldest first, reach `needed` (`1 ≤ needed`, at most what those entries hold).
    @usableFromInline @inline(__always) func key(reaching needed: Int64, skipping skipped: Int) -> Int64 {
        var toFree = needed
        var index = head + skipped
        while storage[index].permits < toFree {
            toFree -= storage[index].permits
            index += 1
        }
        return storage[index].key
    }
}

extension PermitLog: Hashable {
    @usableFromInline static func == (lhs: PermitLog, rhs: PermitLog) -> Bool {
        lhs.total == rhs.total && lhs.entries.elementsEqual(rhs.entries)
    }

    @usableFromInline func hash(into hasher: inout Hasher) {
        hasher.combine(total)
        for entry in entries { hasher.combine(entry) }
    }
}
