// The key table's storage (KeyTable.swift): rows on cache lines of their own, Performance.md
// "Registry lookup".

/// A key table's rows and their control bytes, each row on a cache line of its own when rows are
/// 64 bytes. An array's header put its elements 32 bytes into an allocation, so a row straddled
/// two lines and reading it cost a second miss at a million keys (Performance.md, "Registry
/// lookup"). A row is initialized exactly where its control byte is not 0: an empty row is bytes,
/// not a `Row?` (an optional row was copied out, and through unspecialized value witnesses, to
/// read one field; Performance.md, "Registry memory"). Shared between copies of a table until one
/// changes (`KeyTable.uniqueRows()`).
// @unchecked: the rows and control bytes are written only through `KeyTable.uniqueRows()`, which
// copies them first unless this instance is uniquely referenced, so an instance two tables (or
// threads) share is only ever read, as `Array`'s storage is.
@usableFromInline
final class KeyTableRows<Row: Sendable>: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<Row>
    /// By row: 0 when empty, otherwise the tag of its key's hash (`KeyTable.tag(_:)`); then the
    /// first 7 again, so that the 8 bytes from any row read in one load, wrapping around (8 more
    /// bytes are allocated, all 0 without rows).
    @usableFromInline let controls: UnsafeMutablePointer<UInt8>
    @usableFromInline let count: Int
    /// Set when the table moved the rows out (growing): they are not destroyed here then.
    @usableFromInline var movedOut = false

    /// `count` empty rows, their bytes zeroed: a lookup reads the home row's first byte ahead of
    /// its control byte (`firstByte(_:)`), held or not, so no byte is read before it is written.
    @inlinable init(count: Int) {
        let byteCount = max(1, count) * MemoryLayout<Row>.stride
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: byteCount, alignment: max(64, MemoryLayout<Row>.alignment))
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        base = raw.bindMemory(to: Row.self, capacity: max(1, count))
        controls = .allocate(capacity: count + 8)
        controls.initialize(repeating: 0, count: count + 8)
        self.count = count
    }

    /// The row at `index`, `nil` when empty.
    @inlinable subscript(index: Int) -> Row? { controls[index] == 0 ? nil : base[index] }

    /// The first byte of the row at `index`, held or not: a byte the row holds, held a row before
    /// (moved or removed rows keep their bytes), or 0.
    @inlinable func firstByte(_ index: Int) -> UInt8 {
        UnsafeRawPointer(base + index).load(as: UInt8.self)
    }

    /// A copy of these rows.
    @inlinable func copy() -> KeyTableRows {
        let copy = KeyTableRows(count: count)
        copy.controls.update(from: controls, count: count + 8)
        for index in 0..<count where controls[index] != 0 { (copy.base + index).initialize(to: base[index]) }
        return copy
    }

    deinit {
        if !movedOut {
            for index in 0..<count where controls[index] != 0 { (base + index).deinitialize(count: 1) }
        }
        UnsafeMutableRawPointer(base).deallocate()
        controls.deallocate()
    }
}
