// A seeded pseudo-random generator: backoff jitter (Spec/HTTP.md HTTP-7) and the generated traces
// of the conformance suite draw from it, so a seed replays a sequence on every platform.

/// SplitMix64: small, fast, and the same sequence on every platform for a given seed.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    package private(set) var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A generator for stream `index` of `name` under `seed`: independent, stable streams.
    package init(seed: UInt64, stream name: String, index: Int) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a: stable across runs and platforms
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        var mixer = SeededGenerator(seed: seed ^ hash ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        self.init(seed: mixer.next())
    }
}
