// The registry's index from key to slot (REG-8: 10,000 keys in under 1 MB; REG-2: keys compare by
// Unicode canonical equivalence).
//
// A `[String: UInt32]` dictionary stores each key again beside its 4-byte value (20 bytes per
// bucket, 16,384 buckets for 10,000 keys). The registry already keeps each key in its entry, so
// this index keeps only slot numbers: open addressing with linear probing over 4-byte buckets, at
// most 7/8 full, with backward-shift deletion (no tombstones, so lookups never slow down as keys
// come and go). The bits of a bucket that slot numbers do not need hold a tag, bits of the key's
// hash: a probe that meets another key's bucket compares tags, not strings, and reads no entry.
//
// Keys hash with `KeyHash`, not with the standard library's `Hasher`: SipHash over a String took
// about 300 of the 970 instructions of a registry request (Performance.md, "Key hashing"). A
// probe sequence that grows implausibly long (hash flooding) switches the index to `Hasher` for
// good.

@usableFromInline
struct KeyIndex: Sendable {
    /// An index for slots `0 ..< maximumSlots`; an insertion that probes `floodedProbes` buckets
    /// switches it to `Hasher` (tests lower it).
    @usableFromInline init(maximumSlots: Int, floodedProbes: Int = 4_096) {
        let bits = Int.bitWidth - max(1, maximumSlots).leadingZeroBitCount  // of the largest `slot + 1`
        slotBits = UInt32(min(32, bits))
        self.floodedProbes = floodedProbes
    }

    /// 0 marks an empty bucket; otherwise the tag above `slotBits` and `slot + 1` below. The
    /// count is 0 or a power of two.
    @usableFromInline var buckets: [UInt32] = []
    /// Keys indexed.
    @usableFromInline private(set) var count = 0
    /// The bits of a bucket that hold `slot + 1`; the tag has the rest (none when 32).
    @usableFromInline let slotBits: UInt32
    /// This index's hash seed, random per index so that collisions cannot be prepared offline.
    @usableFromInline let seed = UInt64.random(in: .min ... .max)
    /// Set when an insertion probed more than `floodedProbes` buckets: keys then hash with `Hasher`.
    @usableFromInline private(set) var flooded = false

    /// A probe this long is far beyond what a uniform hash makes at 7/8 load (Performance.md,
    /// "Key hashing"): only chosen keys make it.
    @usableFromInline let floodedProbes: Int

    @inlinable var slotMask: UInt32 { slotBits == 32 ? .max : (1 << slotBits) - 1 }

    /// The key's hash: `KeyHash`, or `Hasher` once flooded.
    @inlinable func hash(_ key: String) -> UInt64 {
        if flooded {
            var hasher = Hasher()
            hasher.combine(key)
            return UInt64(UInt(bitPattern: hasher.finalize()))
        }
        return KeyHash.hash(key, seed: seed)
    }

    /// The tag of a hash: its top bits, as many as the bucket has above the slot.
    @inlinable func tag(_ hash: UInt64) -> UInt32 {
        slotBits == 32 ? 0 : UInt32(truncatingIfNeeded: hash >> (32 + UInt64(slotBits))) << slotBits
    }

    /// The slot of `key`, where `keyOf(slot)` is the key stored in a slot.
    @inlinable
    func slot(of key: String, keyOf: (UInt32) -> String) -> UInt32? {
        guard !buckets.isEmpty else { return nil }
        let hash = hash(key)
        let tag = tag(hash)
        let slotMask = slotMask
        return buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var bucket = Int(truncatingIfNeeded: hash) & mask
            while true {
                let stored = buckets[bucket]
                if stored == 0 { return nil }
                if stored & ~slotMask == tag, keyOf((stored & slotMask) - 1) == key { return (stored & slotMask) - 1 }
                bucket = (bucket + 1) & mask
            }
        }
    }

    /// Indexes `key` (not yet indexed) at `slot`.
    @usableFromInline
    mutating func insert(_ key: String, slot: UInt32, keyOf: (UInt32) -> String) {
        if (count + 1) * 8 > buckets.count * 7 { rebuild(buckets: max(16, buckets.count * 2), keyOf: keyOf) }
        if !place(slot + 1, hash: hash(key)) {
            flooded = true
            rebuild(buckets: buckets.count, keyOf: keyOf)
            _ = place(slot + 1, hash: hash(key))
        }
        count += 1
    }

    /// Stores `slot + 1` with the hash's tag in the first free bucket from the hash's home;
    /// false, storing nothing, when that is `floodedProbes` or more buckets away (and not flooded).
    private mutating func place(_ slotPlusOne: UInt32, hash: UInt64) -> Bool {
        let mask = buckets.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        var probes = 0
        while buckets[bucket] != 0 {
            bucket = (bucket + 1) & mask
            probes += 1
            if probes >= floodedProbes, !flooded { return false }
        }
        buckets[bucket] = tag(hash) | slotPlusOne
        return true
    }

    /// Removes `key`, shifting back the keys that probed past it so every probe chain stays whole.
    @usableFromInline
    mutating func remove(_ key: String, keyOf: (UInt32) -> String) {
        guard !buckets.isEmpty else { return }
        let mask = buckets.count - 1
        let slotMask = slotMask
        let hash = hash(key)
        let tag = tag(hash)
        var hole = Int(truncatingIfNeeded: hash) & mask
        while buckets[hole] != 0,
            buckets[hole] & ~slotMask != tag || keyOf((buckets[hole] & slotMask) - 1) != key
        {
            hole = (hole + 1) & mask
        }
        guard buckets[hole] != 0 else { return }
        buckets[hole] = 0
        count -= 1
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let home = Int(truncatingIfNeeded: self.hash(keyOf((buckets[next] & slotMask) - 1))) & mask
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

    /// Places every key again in `count` buckets, hashed as `flooded` says.
    private mutating func rebuild(buckets count: Int, keyOf: (UInt32) -> String) {
        let old = buckets
        let slotMask = slotMask
        buckets = Array(repeating: 0, count: count)
        for stored in old where stored != 0 {
            let slotPlusOne = stored & slotMask
            if !place(slotPlusOne, hash: hash(keyOf(slotPlusOne - 1))) {
                flooded = true
                return rebuild(buckets: count, keyOf: keyOf)
            }
        }
    }
}

/// The registry's key hash: consistent with `String` equality (Unicode canonical equivalence,
/// REG-2), seeded, and about 20 instructions for a short ASCII key.
///
/// An ASCII key is in normal form already: its UTF-8 bytes are hashed, eight at a time, each word
/// folded in by a 64-by-64-bit multiply (the high and low halves xored). A key whose normal form
/// (NFC) is ASCII while it is not (three characters decompose canonically to one ASCII character:
/// U+037E to `;`, U+1FEF to `` ` ``, U+212A to `K`) hashes as that ASCII form, so it meets the key
/// it equals; every other key hashes with `Hasher`, which hashes the normal form.
@usableFromInline
enum KeyHash {
    // Always inlined, with `asciiHash`: the calls cost 26 of the lock registry's 738 instructions
    // per request (Performance.md, "Key hashing").
    @inlinable @inline(__always) static func hash(_ key: String, seed: UInt64) -> UInt64 {
        let ascii = key.utf8.withContiguousStorageIfAvailable { asciiHash($0, seed: seed) }
        if let ascii { return ascii ?? nonASCIIHash(key, seed: seed) }
        return bridgedHash(key, seed: seed)
    }

    /// A bridged string's hash: made native once (rare).
    @usableFromInline static func bridgedHash(_ key: String, seed: UInt64) -> UInt64 {
        var contiguous = key
        contiguous.makeContiguousUTF8()
        return hash(contiguous, seed: seed)
    }

    /// The hash of ASCII `bytes`; `nil` when one of them is not ASCII.
    @inlinable @inline(__always) static func asciiHash(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64? {
        let count = bytes.count
        let raw = UnsafeRawBufferPointer(bytes)
        var hash = seed ^ UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        var seen: UInt64 = 0  // every byte ored in: its top bits tell whether one was not ASCII
        var offset = 0
        while count - offset >= 8 {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            seen |= word
            hash = fold(hash ^ word)
            offset += 8
        }
        // The last 1 to 7 bytes, read within their own 8-byte word: a load across two words of a
        // string just stored (a small string is copied out of its registers) stalls store forwarding.
        let rest = count - offset
        if rest >= 4 {
            let low = UInt64(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let high = UInt64(raw.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            seen |= low | high
            hash = fold(hash ^ (low | high << 32))
        } else if rest > 0 {
            let word =
                UInt64(bytes[offset]) | UInt64(bytes[offset + rest / 2]) << 8 | UInt64(bytes[count - 1]) << 16
            seen |= word
            hash = fold(hash ^ word)
        }
        guard seen & 0x8080_8080_8080_8080 == 0 else { return nil }
        return fold(hash ^ 0x2D35_8DCC_AA6C_78A5)
    }

    /// `value` times a fixed odd constant, the high and low halves of the 128-bit product xored.
    @inlinable static func fold(_ value: UInt64) -> UInt64 {
        let product = value.multipliedFullWidth(by: 0xA076_1D64_78BD_642F)
        return product.high ^ product.low
    }

    /// A key that is not ASCII: as its ASCII normal form if it has one, otherwise with `Hasher`.
    @usableFromInline static func nonASCIIHash(_ key: String, seed: UInt64) -> UInt64 {
        var normal: [UInt8] = []
        for scalar in key.unicodeScalars {
            switch scalar.value {
            case 0..<0x80: normal.append(UInt8(scalar.value))
            case 0x037E: normal.append(UInt8(ascii: ";"))
            case 0x1FEF: normal.append(UInt8(ascii: "`"))
            case 0x212A: normal.append(UInt8(ascii: "K"))
            default:
                var hasher = Hasher()
                hasher.combine(seed)
                hasher.combine(key)
                return UInt64(UInt(bitPattern: hasher.finalize()))
            }
        }
        return normal.withUnsafeBufferPointer { asciiHash($0, seed: seed) } ?? 0  // all ASCII by construction
    }
}
