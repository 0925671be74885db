import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// The registry's key table and key hash (Spec/Registry.md REG-2, REG-8, REG-9).
@Suite("Registry keys: table, hash and counters (Spec/Registry.md)")
struct KeyTableTests {
    @Test("REG-2 every Unicode scalar hashes as its canonical normal form does, so keys equal as strings meet")
    func everyScalarHashesAsItsNormalForm() async {
        await offThePool {
            let seed: UInt64 = 0x5EED
            var asciiForms: [UInt32] = []
            for value in UInt32(0x80)...0x10FFFF {
                guard let scalar = Unicode.Scalar(value) else { continue }
                let key = String(Character(scalar))
                // Strings order by their normal forms' scalars (the standard library's own
                // comparison): only a key whose NFC begins with an ASCII character can be ASCII,
                // and only those few thousand are normalized by ICU (a million calls into
                // Foundation's string lock starved the other tests' threads).
                guard key < "\u{80}" else { continue }
                let normal = key.precomposedStringWithCanonicalMapping
                if normal.utf8.allSatisfy({ $0 < 0x80 }) { asciiForms.append(value) }
                guard KeyHash.hash(key, seed: seed) == KeyHash.hash(normal, seed: seed) else {
                    Issue.record("U+\(String(value, radix: 16, uppercase: true)) hashes apart from its NFC form")
                    return
                }
            }
            // KeyHash maps exactly these to ASCII; every other key's normal form begins with a
            // character that is not ASCII, and the keys equal to it all take the Hasher path.
            #expect(asciiForms == [0x037E, 0x1FEF, 0x212A])
        }
    }

    @Test("REG-2 random strings of composing characters hash alike under NFC and NFD whenever they are equal")
    func composedAndDecomposedHashAlike() async { await offThePool { composedAndDecomposedHashAlikeOnThread() } }

    private func composedAndDecomposedHashAlikeOnThread() {
        let pool: [String] = [
            "a", "e", "K", ";", "`", "A", "\u{212A}", "\u{037E}", "\u{1FEF}", "\u{0301}", "\u{0300}", "\u{0327}",
            "\u{00E9}", "\u{00C5}", "\u{212B}", "\u{1100}", "\u{1161}", "\u{AC00}", "\u{0344}", "\u{1E0B}", "\u{0323}",
            "/", "-", "0", "é",
        ]
        var rng = PropertySeed.generator("composedAndDecomposedHashAlike", trace: 0)
        let seed = rng.next()
        for step in 0..<3_000 {
            let key = (0..<rng.int(in: 0...24)).map { _ in rng.pick(pool) }.joined()
            for form in [key.precomposedStringWithCanonicalMapping, key.decomposedStringWithCanonicalMapping] {
                guard
                    holds(
                        form == key && KeyHash.hash(form, seed: seed) == KeyHash.hash(key, seed: seed),
                        "REG-2 step \(step): \(key.unicodeScalars.map { String($0.value, radix: 16) }) hashes apart from its normal form",
                        replay: PropertySeed.replay("composedAndDecomposedHashAlike", trace: 0))
                else { return }
            }
        }
    }

    @Test("REG-2 keys equal under canonical equivalence are one key in the registry, short or long")
    func canonicallyEqualKeysAreOneKey() throws {
        let pairs = [
            ("café", "cafe\u{301}"), ("K", "\u{212A}"), ("a;b", "a\u{037E}b"),
            ("GET /search/caf\u{E9}?q=1234567890", "GET /search/cafe\u{301}?q=1234567890"),
            ("user/\u{212A}elvin/a-long-key-on-the-heap", "user/Kelvin/a-long-key-on-the-heap"),
        ]
        for (first, second) in pairs {
            var registry = try RateLimitRegistry(
                rules: [try RateLimitRule(.anyKey, try FixedWindow(limit: 5, windowNanoseconds: 100))], at: .origin)
            _ = registry.tryAcquire(first, at: .origin)
            _ = registry.tryAcquire(second, at: .origin)
            #expect(registry.keyCount == 1, "\(first) and \(second)")
            #expect(registry.quota(of: first, at: .origin)?.statistics.admitted == 2)
        }
    }

    @Test("REG-8 keys chosen to collide switch the table to the standard hasher; every key is still found and removed")
    func collidingKeysSwitchTheHash() {
        var table = KeyTable<TestRow>(maximumCount: 64, floodedProbes: 6, seed: 0x5EED)
        // Keys whose hashes share their home row among the table's first 16 rows.
        var keys: [String] = []
        var candidate = 0
        while keys.count < 10 {
            let key = "flood-\(candidate)"
            candidate += 1
            if KeyTable<TestRow>.home(KeyHash.hash(key, seed: table.seed), rows: 16) == 0 { keys.append(key) }
        }
        for key in keys { #expect(table.insert(key) { TestRow(key: key, slot: $0) } != nil) }
        #expect(table.flooded)
        for (slot, key) in keys.enumerated() { #expect(table.slot(of: key) == UInt32(slot)) }
        #expect(table.slot(of: "flood-absent") == nil)
        for slot in 0..<5 { table.remove(UInt32(slot)) }
        #expect(table.count == 5)
        for (slot, key) in keys.enumerated() { #expect(table.slot(of: key) == (slot < 5 ? nil : UInt32(slot))) }
    }

    @Test(
        "REG-8 the addresses a shell prefetches before its clock read are the home row and control byte each lookup reads first, and the hash it is given back finds the key (plain and flooded tables)",
        arguments: [4_096, 3])
    func prefetchedAddressesAreWhereLookupsStart(floodedProbes: Int) throws {
        var table = KeyTable<TestRow>(maximumCount: 2_000, floodedProbes: floodedProbes, seed: 0x5EED)
        let keys = (0..<1_500).map { "endpoint/\($0)" }
        for key in keys { _ = table.insert(key) { TestRow(key: key, slot: $0) } }
        #expect(table.flooded == (floodedProbes == 3))
        let controls = UInt(bitPattern: table.rows.controls)
        var atHome = 0
        for key in keys + ["endpoint/absent"] {
            let hash = table.hash(key)
            let home = KeyTable<TestRow>.home(hash, rows: table.rows.count)
            let (row, control) = table.homeAddresses(hash)
            #expect(row == UInt(bitPattern: table.rows.base + home), "\(key)")
            #expect(control == controls + UInt(home), "\(key)")
            let found = table.row(of: key, hash: hash)
            #expect(found == table.row(of: key), "\(key)")
            if found == home { atHome += 1 }
        }
        // Linear probing at about 3/4 load: most keys are at home, where the prefetch is the row.
        #expect(atHome > keys.count / 2)

        // Through the registry: the hash `lookUp` gives is the table's, and a request given it
        // answers as one that hashes the key itself.
        let rule = try RateLimitRule(.anyKey, try TokenBucket(capacity: 2, permitsPerPeriod: 1, period: .seconds(1)))
        var looked = try RateLimitRegistry(rules: [rule], at: .origin)
        var plain = looked
        for step in 0..<200 {
            let key = "k\(step % 7)"
            let now = RateLimitInstant(validated: Int64(step) * 100_000_000)
            let (hash, _, _) = looked.lookUp(key)
            #expect(hash == looked.table.hash(key))
            let answer = looked.tryAcquire(key, looked: hash, permits: 1, priority: .normal, at: now)
            let expected = plain.tryAcquire(key, at: now)
            #expect(answer.outcome == expected.outcome && answer.effects == expected.effects, "step \(step)")
        }
    }

    @Test(
        "REG-8 the key table finds every key held and none forgotten, keeps each key's slot while it is held, reuses the slot freed last, and holds no more than its most keys, through random inserts and removals (a flooding guard of 4,096 probes, and of 3, which trips)",
        arguments: [4_096, 3])
    func keyTable(floodedProbes: Int) async {
        // About 208 of the 301 keys are held at once: a maximum of 215 is met at times.
        await offThePool { keyTableOnThread(floodedProbes: floodedProbes, maximum: 215, keys: 301) }
    }

    @Test(
        "REG-8 a key table of 1 to 7 keys (2 to 8 rows, fewer than a control word) finds, keeps and refuses keys as a large one does",
        .heavy, arguments: 1...7)
    func tinyKeyTable(maximum: Int) {
        keyTableOnThread(floodedProbes: 4_096, maximum: maximum, keys: maximum + 3)
    }

    private func keyTableOnThread(floodedProbes: Int, maximum: Int, keys: Int) {
        var rng = PropertySeed.generator("keyTable", trace: floodedProbes * 1_000 + maximum)
        var refused = 0
        var table = KeyTable<TokenRow>(maximumCount: maximum, floodedProbes: floodedProbes, seed: rng.next())
        // Each row holds the one reference to a token of its own, so a token lives exactly while
        // a row holding it does: in `table`, or in the copy kept as `snapshot` (whose rows the
        // table shares until it changes them). Keys are long enough to live on the heap.
        var model: [String: HeldRow] = [:]
        var snapshot = table
        var snapshotModel = model
        var tokens: [(serial: Int, token: WeakToken)] = []  // every token not yet seen gone
        var freed: [UInt32] = []  // free slots below the highest handed out, the last freed last
        var handedOut: UInt32 = 0
        let replay = PropertySeed.replay("keyTable", trace: floodedProbes * 1_000 + maximum)
        let name = { (index: Int64) in "a key long enough for the heap \(index)" }
        for step in 0..<20_000 {
            let key = name(rng.int(in: 0...Int64(keys - 1)))
            if let slot = model[key]?.slot, rng.chance(45) {
                table.remove(slot)
                model[key] = nil
                freed.append(slot)
            } else if model[key] == nil {
                let expected: UInt32? = model.count == maximum ? nil : (freed.last ?? handedOut)
                let token = Token(serial: step)
                let slot = table.insert(key) { TokenRow(key: key, slot: $0, token: token) }
                guard
                    holds(
                        slot == expected,
                        "REG-8 step \(step): \(key) got slot \(String(describing: slot)), expected \(String(describing: expected))",
                        replay: replay)
                else { return }
                if slot == nil { refused += 1 }
                if let slot {
                    model[key] = HeldRow(slot: slot, token: step)
                    tokens.append((step, WeakToken(token: token)))
                    if freed.last == slot { freed.removeLast() } else { handedOut += 1 }
                }
            }
            let probe = name(rng.int(in: 0...Int64(keys - 1)))
            let violation = Self.invariantViolation(table)
            let probeSlot = model[probe]?.slot
            let found = table.slot(of: probe)
            guard
                holds(
                    violation == nil, "REG-8 step \(step): \(violation ?? "")", replay: replay),
                holds(
                    found == probeSlot && table.count == model.count
                        && probeSlot.map { table.isHeld($0) && table[$0].key == probe } ?? true,
                    "REG-8 step \(step): \(probe) found at \(String(describing: found)), held at \(String(describing: probeSlot)); \(table.count) keys held, \(model.count) expected",
                    replay: replay)
            else { return }
            if step % 97 == 0 || step == 19_999 {
                // The copy answers as when it was taken, whatever the table did since.
                let snapshotViolation = Self.invariantViolation(snapshot)
                let changed = snapshotModel.first { snapshot.slot(of: $0.key) != $0.value.slot }
                guard
                    holds(
                        snapshotViolation == nil && changed == nil && snapshot.count == snapshotModel.count,
                        "REG-8 step \(step): the copy changed: \(snapshotViolation ?? changed?.key ?? "its count")",
                        replay: replay)
                else { return }
                // Exactly the tokens of the rows held are alive: none leaked, none freed early.
                let held = Set(model.values.map(\.token)).union(snapshotModel.values.map(\.token))
                let wrong = tokens.first { ($0.token.token != nil) != held.contains($0.serial) }
                guard
                    holds(
                        wrong == nil,
                        "REG-8 step \(step): a row's token is \(wrong?.token.token == nil ? "gone while held" : "alive while no row holds it")",
                        replay: replay)
                else { return }
                tokens.removeAll { $0.token.token == nil }
                if rng.chance(50) { (snapshot, snapshotModel) = (table, model) }
            }
        }
        #expect(refused > 0, "the table was full at times")
        #expect(table.slots == model.values.map(\.slot).sorted())
        #expect(table.rows.count * 7 >= table.count * 8, "at most 7/8 full")
        #expect(table.rows.count <= table.maximumRows)
        #expect(table.flooded == (floodedProbes == 3), "only a guard of 3 probes trips on 301 keys")
    }

    @Test(
        "REG-8 Hasher's output is spread over 64 bits before it picks a home row: where it gives 32 bits, keys would all start at row 0"
    )
    func widenedHashesSpread() {
        // Values below 2^32, as a 32-bit platform's Hasher gives.
        let homes = Set((0..<1_000).map { KeyTable<TestRow>.home(KeyHash.widened($0), rows: 1_000) })
        #expect(homes.count > 500, "\(homes.count) home rows for 1,000 hashes")
    }

    /// What breaks an invariant of the table, without trapping: a row is held exactly where its
    /// control byte is not 0, and that byte is the tag of the row's key; the first 7 (or fewer)
    /// are copied after the rows and the rest of that padding is 0; each row's slot is positioned
    /// at it, and each held slot at a row holding it; the count is the rows held.
    static func invariantViolation<Row>(_ table: KeyTable<Row>) -> String? {
        let size = table.rows.count
        guard table.controls.count == (size == 0 ? 0 : size + 7) else {
            return "\(table.controls.count) control bytes for \(size) rows"
        }
        var held = 0
        for row in 0..<size {
            let control = table.controls[row]
            guard let stored = table.rows[row] else {
                if control != 0 { return "row \(row) is empty with control \(control)" }
                continue
            }
            held += 1
            let tag = KeyTable<Row>.tag(table.hash(stored.key))
            if control != tag { return "row \(row) has control \(control) for tag \(tag)" }
            let slot = Int(stored.slot)
            guard slot < table.positions.count, table.positions[slot] == UInt32(row) else {
                return "row \(row) holds slot \(slot), positioned elsewhere"
            }
        }
        for extra in 0..<(size == 0 ? 0 : 7) {
            let copy: UInt8 = extra < size ? table.controls[extra] : 0
            if table.controls[size + extra] != copy {
                return "padding byte \(extra) is \(table.controls[size + extra]), not \(copy)"
            }
        }
        for slot in table.slots {
            let row = Int(table.positions[Int(slot)])
            guard row < size, table.controls[row] != 0, table.rows.base[row].slot == slot else {
                return "slot \(slot) is positioned at row \(row), which does not hold it"
            }
        }
        return held == table.count ? nil : "count \(table.count) for \(held) rows held"
    }

    @Test("REG-8 a token bucket's registry entry is one 64-byte row, on a cache line of its own")
    func entryFitsARow() {
        #expect(MemoryLayout<RateLimitRegistry<TokenBucket>.Entry>.size <= 64)
        // 64 bytes on 64-bit platforms (a 32-bit `String` is 12 bytes: rows share lines there).
        #expect(MemoryLayout<Int>.size == 4 || MemoryLayout<RateLimitRegistry<TokenBucket>.Entry>.stride == 64)
        let rows = KeyTableRows<RateLimitRegistry<TokenBucket>.Entry>(count: 3)
        #expect(UInt(bitPattern: rows.base) % 64 == 0)
        #expect((0..<3).allSatisfy { rows[$0] == nil && rows.controls[$0] == 0 })
    }

    @Test(
        "REG-8 growing moves the rows into the new table, or copies them when a copy of the registry shares them: each row lives as long as a table holds it, and is destroyed once"
    )
    func growingMovesOrCopiesRows() {
        // A row holds the only reference to `token`: it lives exactly as long as some table's
        // row holding it (a row destroyed twice would release it twice and trap).
        weak var watched: Token?
        let key = { (index: Int) in "a key long enough for the heap \(index)" }
        var shared: KeyTable<TokenRow>?
        do {
            var table = KeyTable<TokenRow>(maximumCount: 1_000, seed: 7)
            do {
                let token = Token()
                watched = token
                _ = table.insert(key(0)) { TokenRow(key: key(0), slot: $0, token: token) }
            }
            for index in 1..<600 {
                _ = table.insert(key(index)) { TokenRow(key: key(index), slot: $0, token: nil) }
                // 112 keys fill 128 rows to 7/8: the next insertion grows the table while the copy
                // shares its rows, so they are copied; the later growths move them.
                if index == 111 {
                    shared = table
                    #expect(table.rows.count == 128)
                }
            }
            #expect(KeyTableTests.invariantViolation(table) == nil)
            for index in 0..<600 { #expect(table.slot(of: key(index)) == UInt32(index)) }
        }
        // The growing table is gone; the copy still holds its rows, the token's among them.
        #expect(watched != nil, "the copy's rows were moved out from under it")
        #expect(shared?.count == 112)
        for index in 0..<600 { #expect((shared?.slot(of: key(index)) != nil) == (index <= 111)) }
        shared = nil
        #expect(watched == nil, "a row holding the token was never destroyed")
    }

    @Test("REG-1 a registry is a value: a copy's requests, new keys and removals leave the original as it was")
    func copiesAreIndependent() throws {
        var original = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, try FixedWindow(limit: 3, windowNanoseconds: 1_000))], at: .origin)
        for key in ["a", "b", "c"] { _ = original.tryAcquire(key, at: .origin) }
        var copy = original
        _ = copy.tryAcquire("a", at: .origin)  // in place, on rows both share until now
        _ = copy.tryAcquire("d", at: .origin)  // a new key
        _ = copy.remove("b", at: .origin)
        #expect(original.keys == ["a", "b", "c"])
        #expect(copy.keys == ["a", "c", "d"])
        #expect(original.quota(of: "a", at: .origin)?.statistics.admitted == 1)
        #expect(copy.quota(of: "a", at: .origin)?.statistics.admitted == 2)
        _ = original.tryAcquire("a", at: .origin)
        #expect(original.quota(of: "a", at: .origin)?.remaining == 1)
        #expect(copy.quota(of: "a", at: .origin)?.remaining == 1)
    }

    @Test("REG-9 a key's counters carry past 2^32 - 1 and a forgotten key's carries go with it")
    func countersCarry() throws {
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, try FixedWindow(limit: 1, windowNanoseconds: 100))], at: .origin)
        _ = registry.tryAcquire("k", at: .origin)  // admitted: 1
        let slot = try #require(registry.slot(of: "k"))
        registry.table[slot].admitted = .max
        registry.table[slot].rejected = .max
        _ = registry.tryAcquire("k", at: RateLimitInstant(validated: 100))  // admitted: carries
        _ = registry.tryAcquire("k", at: RateLimitInstant(validated: 100))  // rejected: carries
        let statistics = try #require(registry.quota(of: "k", at: RateLimitInstant(validated: 100))?.statistics)
        #expect(statistics.admitted == 1 << 32)
        #expect(statistics.rejected == 1 << 32)
        #expect(registry.remove("k", at: RateLimitInstant(validated: 100)).removed)
        #expect(registry.carries.storage.isEmpty)
    }
}

/// A key table's row with nothing but a key.
struct TestRow: KeyTableRow {
    let key: String
    let slot: UInt32
}

/// A key the model holds: its slot, and its row's token.
struct HeldRow {
    let slot: UInt32
    let token: Int
}

/// What a `TokenRow` holds: it lives as long as a row holding it. Its serial names it (an
/// `ObjectIdentifier` is an address, which a later token may reuse).
final class Token: Sendable {
    let serial: Int
    init(serial: Int = 0) { self.serial = serial }
}

/// A token, not kept alive.
struct WeakToken {
    weak var token: Token?
}

/// A row holding a reference, to see when rows are destroyed.
struct TokenRow: KeyTableRow {
    let key: String
    let slot: UInt32
    let token: Token?
}
