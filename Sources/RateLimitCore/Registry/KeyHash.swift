// The key table's hash (KeyTable.swift): why not `Hasher`, Performance.md "Key hashing".

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

    /// `Hasher`'s output spread over 64 bits: on a 32-bit platform it has 32, and a table's home
    /// row, the high half of `hash × rows`, would then always be 0.
    @inlinable static func widened(_ hash: Int) -> UInt64 {
        fold(UInt64(UInt(bitPattern: hash)) ^ 0x5851_F42D_4C95_7F2D)
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
                return widened(hasher.finalize())
            }
        }
        return normal.withUnsafeBufferPointer { asciiHash($0, seed: seed) } ?? 0  // all ASCII by construction
    }
}
