// The registry's index from key to slot (REG-8: 10,000 keys in under 1 MB).
//
// A `[String: UInt32]` dictionary stores each key again beside its 4-byte value (20 bytes per
// bucket, 16,384 buckets for 10,000 keys). The registry already keeps each key in its entry, so
// this index keeps only slot numbers: open addressing with linear probing over 4-byte buckets, at
// most 7/8 full, with backward-shift deletion (no tombstones, so lookups never slow down as keys
// come and go). Keys hash with the standard library's `Hasher`, so equality is `String`'s.

@usableFromInline
struct KeyIndex: Sendable {
    @usableFromInline init() {}

    /// `slot + 1` per bucket; 0 marks an empty bucket. The count is 0 or a power of two.
    @usableFromInline var buckets: [UInt32] = []
    /// Keys indexed.
    @usableFromInline private(set) var count = 0

    /// The slot of `key`, where `keyOf(slot)` is the key stored in a slot.
    @inlinable
    func slot(of key: String, keyOf: (UInt32) -> String) -> UInt32? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var bucket = key.hashValue & mask
        while buckets[bucket] != 0 {
            let slot = buckets[bucket] - 1
            if keyOf(slot) == key { return slot }
            bucket = (bucket + 1) & mask
        }
        return nil
    }

    /// Indexes `key` (not yet indexed) at `slot`.
    @usableFromInline
    mutating func insert(_ key: String, slot: UInt32, keyOf: (UInt32) -> String) {
        if (count + 1) * 8 > buckets.count * 7 { grow(keyOf: keyOf) }
        let mask = buckets.count - 1
        var bucket = key.hashValue & mask
        while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = slot + 1
        count += 1
    }

    /// Removes `key`, shifting back the keys that probed past it so every probe chain stays whole.
    @usableFromInline
    mutating func remove(_ key: String, keyOf: (UInt32) -> String) {
        guard !buckets.isEmpty else { return }
        let mask = buckets.count - 1
        var hole = key.hashValue & mask
        while buckets[hole] != 0, keyOf(buckets[hole] - 1) != key { hole = (hole + 1) & mask }
        guard buckets[hole] != 0 else { return }
        buckets[hole] = 0
        count -= 1
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let home = keyOf(buckets[next] - 1).hashValue & mask
            // Move the entry back into the hole unless its home lies cyclically in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !stays {
                buckets[hole] = buckets[next]
                buckets[next] = 0
                hole = next
            }
            next = (next + 1) & mask
        }
    }

    private mutating func grow(keyOf: (UInt32) -> String) {
        let old = buckets
        buckets = Array(repeating: 0, count: max(16, old.count * 2))
        let mask = buckets.count - 1
        for stored in old where stored != 0 {
            var bucket = keyOf(stored - 1).hashValue & mask
            while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
            buckets[bucket] = stored
        }
    }
}
