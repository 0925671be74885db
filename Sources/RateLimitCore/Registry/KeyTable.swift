// The registry's keys and their entries, in one table (Spec/Registry.md: REG-2 keys compare by
// Unicode canonical equivalence; REG-8 10,000 keys in under 1 MB).
//
// At a million keys a lookup misses the cache whatever the layout. An index of slot numbers in
// front of an array of entries made it miss twice, one miss waiting for the other (the index's
// bucket, then the entry), so the entries are the table's rows: open addressing with linear
// probing from the key's home row. Beside the rows, one control byte per row: 0 for an empty row,
// otherwise a tag of its key's hash. A lookup reads the row whose tag matches, found among the
// control bytes (about 1 MB for a million keys), where probing the rows themselves read 4.5 of
// them on average at 7/8 load; and it reads the home row, where 56% of the keys are, without
// waiting for its control byte. Each 64-byte row is on a cache line of its own (`KeyTableRows`):
// a row across two lines cost a second miss (Performance.md, "Registry lookup").
//
// Rows move (a removal shifts back the rows that probed past it, with no tombstones, so lookups
// never slow down as keys come and go; growing places every row again), so nothing outside the
// table names a row. A key has a slot, a number that is its own from its creation until it is
// forgotten: the registry's side tables (queues, throttles, wake-ups) are keyed by slot, and
// `positions` maps a slot to its row. A free slot's position holds the next free slot instead, so
// the slot forgotten last is reused first, and slots are numbered as densely as keys are held.
//
// The table is at most 7/8 full. It doubles as keys come, but never beyond the rows its most keys
// need at 7/8: a registry holding its maximum of keys is 7/8 full, which keeps a key's memory within
// REG-8's budget.
//
// Keys hash with `KeyHash`, not with the standard library's `Hasher`: SipHash over a String took
// about 300 of the 970 instructions of a registry request (Performance.md, "Key hashing"). A
// probe sequence that grows implausibly long (hash flooding) switches the table to `Hasher` for
// good.

/// What the table needs of a row: its key and its slot.
@usableFromInline
protocol KeyTableRow: Sendable {
    var key: String { get }
    var slot: UInt32 { get }
}

@usableFromInline
struct KeyTable<Row: KeyTableRow>: Sendable {
    /// A table for at most `maximumCount` keys (at most 2^30, whatever is asked: rows and slots
    /// are numbered in 31 bits); an insertion that probes `floodedProbes` rows switches it to
    /// `Hasher`. Tests lower the guard and choose the seed.
    @usableFromInline init(
        maximumCount: Int, floodedProbes: Int = 4_096, seed: UInt64 = .random(in: .min ... .max)
    ) {
        self.maximumCount = min(max(1, maximumCount), 1 << 30)
        self.floodedProbes = floodedProbes
        self.seed = seed
    }

    /// The rows and their control bytes; the count is 0, or larger than `count` by at least an eighth.
    @usableFromInline var rows = KeyTableRows<Row>(count: 0)
    /// By slot: the slot's row; for a free slot, `Self.free` with the next free slot (`Self.none`: none).
    @usableFromInline var positions: ContiguousArray<UInt32> = []
    /// The first free slot, `Self.none` when every slot below `positions.count` is held.
    @usableFromInline var firstFree = Self.none
    /// Keys held.
    @usableFromInline var count = 0
    /// The most keys held at once.
    @usableFromInline let maximumCount: Int
    /// This table's hash seed, random per table so that collisions cannot be prepared offline.
    @usableFromInline let seed: UInt64
    /// Set when an insertion probed `floodedProbes` rows: keys then hash with `Hasher`.
    @usableFromInline var flooded = false
    /// A probe this long is far beyond what a uniform hash makes at 7/8 load (Performance.md,
    /// "Key hashing"): only chosen keys make it.
    @usableFromInline let floodedProbes: Int

    @inlinable static var free: UInt32 { 1 << 31 }
    @inlinable static var none: UInt32 { free - 1 }

    /// The rows `maximumCount` keys need at 7/8: ⌈8 × maximumCount / 7⌉, without overflowing a
    /// 32-bit `Int`.
    @inlinable var maximumRows: Int { maximumCount + (maximumCount + 6) / 7 }

    /// The key's hash: `KeyHash`, or `Hasher` once flooded.
    @inlinable @inline(__always) func hash(_ key: String) -> UInt64 {
        if flooded {
            var hasher = Hasher()
            hasher.combine(key)
            return KeyHash.widened(hasher.finalize())
        }
        return KeyHash.hash(key, seed: seed)
    }

    /// The row a hash probes first among `rows` (`rows` need not be a power of two).
    @inlinable static func home(_ hash: UInt64, rows: Int) -> Int {
        Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(rows)).high)
    }

    /// A row's control byte for a key's hash: 1 to 255, its low byte (0 taken as 1).
    @inlinable static func tag(_ hash: UInt64) -> UInt8 { max(1, UInt8(truncatingIfNeeded: hash)) }

    /// The row holding `key`, for a request that will change it: the home row's load leaves
    /// before its control byte is known (its first byte is stored in `touched`, a use that no
    /// branch waits for, as a prefetch would), so a key at home costs one miss even when the
    /// branch on its control byte is mispredicted. `touched` is the registry's, on the line every
    /// request writes anyway (Performance.md, "Contention").
    @inlinable func rowToChange(of key: String, hash: UInt64, touching touched: inout UInt8) -> Int? {
        guard count > 0 else { return nil }
        let home = Self.home(hash, rows: rows.count)
        touched = rows.firstByte(home)
        return row(of: key, hash: hash)
    }

    /// The addresses a lookup of a key with `hash` reads first, its home row's and its control
    /// byte's, as integers: for a shell to prefetch before it reads the clock, never to read.
    @inlinable @inline(__always) func homeAddresses(_ hash: UInt64) -> (row: UInt, control: UInt) {
        Self.homeAddresses(hash, base: rows.base, controls: rows.controls, size: rows.count)
    }

    /// ``homeAddresses(_:)`` of rows at `base` with their control bytes at `controls`, `size` of
    /// them (as ``row(of:hash:base:controls:size:)`` takes them).
    @inlinable @inline(__always) static func homeAddresses(
        _ hash: UInt64, base: UnsafeMutablePointer<Row>, controls: UnsafeMutablePointer<UInt8>, size: Int
    ) -> (row: UInt, control: UInt) {
        let home = Self.home(hash, rows: size)
        return (UInt(bitPattern: base + home), UInt(bitPattern: controls + home))
    }

    /// The row holding `key`.
    @inlinable func row(of key: String) -> Int? {
        guard count > 0 else { return nil }
        return row(of: key, hash: hash(key))
    }

    @inlinable @inline(__always) func row(of key: String, hash: UInt64) -> Int? {
        // `self` holds the rows for the whole lookup.
        Self.row(of: key, hash: hash, base: rows.base, controls: UnsafeRawPointer(rows.controls), size: rows.count)
    }

    /// ``row(of:hash:)`` in rows at `base` with their control bytes at `controls`, `size` of
    /// them: for a caller that reads the table through a pointer, which takes these three first,
    /// so that no copy of the table is held across the key comparisons (REG-13 item 5).
    @inlinable @inline(__always) static func row(
        of key: String, hash: UInt64, base: UnsafeMutablePointer<Row>, controls: UnsafeRawPointer, size: Int
    ) -> Int? {
        let tag = Self.tag(hash)
        let tags = UInt64(tag) &* Self.ones
        let home = Self.home(hash, rows: size)
        // The home row first, byte by byte: its tag's comparison is predicted, so the row's load
        // leaves with the control byte's and a key at home (56% of them at 7/8 load) costs one
        // miss; the word below would make every row's load wait for its bytes.
        let control = controls.load(fromByteOffset: home, as: UInt8.self)
        if control == 0 { return nil }
        if control == tag, base[home].key == key { return home }
        var first = home
        while true {
            // Eight control bytes at once: the rows whose tag matches (the row itself is read
            // only then: 1 in 255 of the others), until an empty one ends the probe.
            let word = UInt64(littleEndian: controls.loadUnaligned(fromByteOffset: first, as: UInt64.self))
            var matches = Self.zeroBytes(word ^ tags)
            while matches != 0 {
                let offset = matches.trailingZeroBitCount / 8
                matches &= matches &- 1
                // `zeroBytes` may mark a byte that does not match (a borrow): only a row whose
                // byte is the tag is held by a key that may be this one, and may be read.
                guard UInt8(truncatingIfNeeded: word >> (offset * 8)) == tag else { continue }
                var row = first + offset
                while row >= size { row -= size }  // at most once unless rows < 8
                if base[row].key == key { return row }
            }
            if Self.zeroBytes(word) != 0 { return nil }
            first += 8
            if first >= size { first -= size }
        }
    }

    @inlinable static var ones: UInt64 { 0x0101_0101_0101_0101 }

    /// The high bit of each byte of `word` that is 0, and maybe of some bytes above one that is
    /// (a borrow): exact as to whether any byte is 0, and a superset of the zero bytes.
    @inlinable static func zeroBytes(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & 0x8080_8080_8080_8080
    }

    /// Sets a row's control byte, and its copy after the rows for the first 7. The rows must be
    /// unique (`uniqueRows()`, or just made): the bytes are written where they lie.
    @inlinable mutating func setControl(_ row: Int, _ value: UInt8) {
        assert(isKnownUniquelyReferenced(&rows), "a control byte written into rows another table shares")
        rows.controls[row] = value
        if row < 7 { rows.controls[rows.count + row] = value }
    }

    /// The control bytes: one per row, then the first 7 again (none without rows); valid until
    /// the table next changes.
    @inlinable var controls: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: rows.controls, count: rows.count == 0 ? 0 : rows.count + 7)
    }

    /// The slot of `key`, if held.
    @inlinable func slot(of key: String) -> UInt32? {
        guard let row = row(of: key) else { return nil }
        return rows.base[row].slot
    }

    /// Whether `slot` is held.
    @inlinable func isHeld(_ slot: UInt32) -> Bool {
        Int(slot) < positions.count && positions[Int(slot)] & Self.free == 0
    }

    /// The held slots, in increasing order.
    @inlinable var slots: [UInt32] {
        positions.indices.compactMap { positions[$0] & Self.free == 0 ? UInt32($0) : nil }
    }

    /// The rows' memory, copied first when another table shares it (with their control bytes).
    @inlinable mutating func uniqueRows() -> UnsafeMutablePointer<Row> {
        if !isKnownUniquelyReferenced(&rows) { rows = rows.copy() }
        return rows.base
    }

    /// The row of a held slot, read and changed where it lies.
    @inlinable subscript(slot: UInt32) -> Row {
        unsafeAddress { UnsafePointer(rows.base + Int(positions[Int(slot)])) }
        unsafeMutableAddress { uniqueRows() + Int(positions[Int(slot)]) }
    }

    /// Adds `key`, not held, in the row `make` builds for the slot it is given; that slot, or
    /// `nil` when the table holds its most keys.
    @inlinable mutating func insert(_ key: String, _ make: (UInt32) -> Row) -> UInt32? {
        guard count < maximumCount else { return nil }
        // In 64 bits, and doubling at most to `maximumRows`: nothing here overflows a 32-bit `Int`.
        if Int64(count + 1) * 8 > Int64(rows.count) * 7 {
            place(rows: rows.count >= maximumRows / 2 ? maximumRows : min(maximumRows, max(16, rows.count * 2)))
        }
        let slot: UInt32
        if firstFree != Self.none {
            slot = firstFree
            firstFree = positions[Int(slot)] & ~Self.free
        } else {
            slot = UInt32(positions.count)
            if positions.count == positions.capacity {
                positions.reserveCapacity(
                    positions.count >= maximumCount / 2
                        ? maximumCount : min(maximumCount, max(16, positions.count * 2)))
            }
            positions.append(0)
        }
        var hash = hash(key)
        var (position, probes) = firstEmptyRow(from: hash)
        if probes >= floodedProbes, !flooded {
            flooded = true
            place(rows: rows.count)
            hash = self.hash(key)
            position = firstEmptyRow(from: hash).row
        }
        _ = uniqueRows()
        store(make(slot), at: position, hash: hash)
        count += 1
        return slot
    }

    /// The first empty row from `hash`'s home, eight control bytes at a time, and how many rows
    /// past home it is (the lowest byte `zeroBytes` marks is always a zero one).
    @inlinable func firstEmptyRow(from hash: UInt64) -> (row: Int, probes: Int) {
        let size = rows.count
        let controls = UnsafeRawPointer(rows.controls)
        var first = Self.home(hash, rows: size)
        var probes = 0
        while true {
            let word = UInt64(littleEndian: controls.loadUnaligned(fromByteOffset: first, as: UInt64.self))
            let empty = Self.zeroBytes(word)
            if empty != 0 {
                let offset = empty.trailingZeroBitCount / 8
                var position = first + offset
                while position >= size { position -= size }
                return (position, probes + offset)
            }
            probes += 8
            first += 8
            while first >= size { first -= size }
        }
    }

    /// Stores `row` in the empty row `position`, tagged with `hash`, and records where (the rows
    /// unique).
    @inlinable mutating func store(_ row: consuming Row, at position: Int, hash: UInt64) {
        setControl(position, Self.tag(hash))
        positions[Int(row.slot)] = UInt32(position)
        (rows.base + position).initialize(to: row)
    }

    /// Forgets a held slot and its key, shifting back the rows that probed past it so that every
    /// probe sequence stays whole.
    @inlinable mutating func remove(_ slot: UInt32) {
        let size = rows.count
        var hole = Int(positions[Int(slot)])
        let base = uniqueRows()
        (base + hole).deinitialize(count: 1)
        setControl(hole, 0)
        count -= 1
        positions[Int(slot)] = Self.free | firstFree
        firstFree = slot
        var next = hole + 1 == size ? 0 : hole + 1
        while rows.controls[next] != 0 {
            let home = Self.home(hash(base[next].key), rows: size)
            // Move the row back into the hole unless its home lies cyclically in (hole, next].
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !stays {
                positions[Int(base[next].slot)] = UInt32(hole)
                (base + hole).moveInitialize(from: base + next, count: 1)
                setControl(hole, rows.controls[next])
                setControl(next, 0)
                hole = next
            }
            next = next + 1 == size ? 0 : next + 1
        }
    }

    /// Places every row again in `count` rows, hashed as `flooded` says: moved when no other table
    /// shares them, copied otherwise. A placement `floodedProbes` rows from home (not flooded)
    /// switches the table to `Hasher` and places them all again.
    @inlinable mutating func place(rows count: Int) {
        var old = rows
        rows = KeyTableRows(count: count)
        let moving = isKnownUniquelyReferenced(&old)
        var tooFar = false
        for index in 0..<old.count where old.controls[index] != 0 {
            let row = moving ? (old.base + index).move() : old.base[index]
            let hash = hash(row.key)
            let (position, probes) = firstEmptyRow(from: hash)
            if probes >= floodedProbes { tooFar = true }
            store(row, at: position, hash: hash)
        }
        if moving { old.movedOut = true }
        if tooFar, !flooded {
            flooded = true
            place(rows: count)  // flooded: once more at most
        }
    }
}
