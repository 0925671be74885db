import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// The registry's key index and key hash (Spec/Registry.md REG-2, REG-8, REG-9).
@Suite("Registry keys: index, hash and counters (Spec/Registry.md)")
struct KeyIndexTests {
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

    @Test("REG-8 keys chosen to collide switch the index to the standard hasher; every key is still found and removed")
    func collidingKeysSwitchTheHash() {
        var index = KeyIndex(maximumSlots: 64, floodedProbes: 6)
        var storage: [String] = []
        // Keys whose hashes share their home bucket in the index's first 16 buckets.
        var candidate = 0
        while storage.count < 10 {
            let key = "flood-\(candidate)"
            candidate += 1
            if KeyHash.hash(key, seed: index.seed) & 15 == 0 { storage.append(key) }
        }
        for (slot, key) in storage.enumerated() {
            index.insert(key, slot: UInt32(slot)) { storage[Int($0)] }
        }
        #expect(index.flooded)
        for (slot, key) in storage.enumerated() { #expect(index.slot(of: key) { storage[Int($0)] } == UInt32(slot)) }
        #expect(index.slot(of: "flood-absent") { storage[Int($0)] } == nil)
        for key in storage.prefix(5) { index.remove(key) { storage[Int($0)] } }
        #expect(index.count == 5)
        for (slot, key) in storage.enumerated() {
            #expect(index.slot(of: key) { storage[Int($0)] } == (slot < 5 ? nil : UInt32(slot)))
        }
    }

    @Test(
        "REG-8 the compact key index finds every key held and none forgotten, through random inserts and removals (a flooding guard of 4,096 probes, and of 3, which trips)",
        arguments: [4_096, 3])
    func keyIndex(floodedProbes: Int) async { await offThePool { keyIndexOnThread(floodedProbes: floodedProbes) } }

    private func keyIndexOnThread(floodedProbes: Int) {
        var rng = PropertySeed.generator("keyIndex", trace: floodedProbes)
        var index = KeyIndex(maximumSlots: 301, floodedProbes: floodedProbes)
        var storage: [String] = []  // slot → key ("" when free)
        var model: [String: UInt32] = [:]
        for step in 0..<20_000 {
            let key = "key-\(rng.int(in: 0...300))"
            let keyOf = { (slot: UInt32) in storage[Int(slot)] }
            if let slot = model[key], rng.chance(45) {
                index.remove(key, keyOf: keyOf)
                storage[Int(slot)] = ""
                model[key] = nil
            } else if model[key] == nil {
                let slot = UInt32(storage.firstIndex(of: "") ?? storage.count)
                if Int(slot) == storage.count { storage.append(key) } else { storage[Int(slot)] = key }
                index.insert(key, slot: slot) { storage[Int($0)] }
                model[key] = slot
            }
            let probe = "key-\(rng.int(in: 0...300))"
            guard
                holds(
                    index.slot(of: probe) { storage[Int($0)] } == model[probe] && index.count == model.count,
                    "REG-8 step \(step): \(probe) found at \(String(describing: index.slot(of: probe) { storage[Int($0)] })), held at \(String(describing: model[probe]))",
                    replay: PropertySeed.replay("keyIndex", trace: floodedProbes))
            else { return }
        }
        #expect(index.flooded == (floodedProbes == 3), "only a guard of 3 probes trips on 300 keys")
    }

    @Test("REG-9 a key's counters carry past 2^32 - 1 and a forgotten key's carries go with it")
    func countersCarry() throws {
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, try FixedWindow(limit: 1, windowNanoseconds: 100))], at: .origin)
        _ = registry.tryAcquire("k", at: .origin)  // admitted: 1
        let slot = try #require(registry.slot(of: "k"))
        registry.entries[Int(slot)].admitted = .max
        registry.entries[Int(slot)].rejected = .max
        _ = registry.tryAcquire("k", at: RateLimitInstant(validated: 100))  // admitted: carries
        _ = registry.tryAcquire("k", at: RateLimitInstant(validated: 100))  // rejected: carries
        let statistics = try #require(registry.quota(of: "k", at: RateLimitInstant(validated: 100))?.statistics)
        #expect(statistics.admitted == 1 << 32)
        #expect(statistics.rejected == 1 << 32)
        #expect(registry.remove("k", at: RateLimitInstant(validated: 100)).removed)
        #expect(registry.carries.storage.isEmpty)
    }
}
