import Foundation
import Testing

/// SplitMix64: small, fast, and the same sequence on every platform for a given seed.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private(set) var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly drawn value in `range`.
    mutating func int(in range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }

    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    /// One of `choices`, uniformly.
    mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &self)] }
}

/// The seed of this test run: `RATELIMIT_SEED` when set (to replay a failure), otherwise fresh.
///
/// Every property test derives its traces from this seed and the test's own name, so one seed
/// reproduces the whole run; failures print it with the command that replays them.
enum PropertySeed {
    static let base: UInt64 = {
        let seed: UInt64
        if let text = ProcessInfo.processInfo.environment["RATELIMIT_SEED"], let given = UInt64(text) {
            seed = given
        } else {
            seed = UInt64.random(in: 1...UInt64.max)
        }
        // Printed up front too, so that even a crash (which cannot print afterwards) can be replayed.
        print("property tests: RATELIMIT_SEED=\(seed)")
        return seed
    }()

    /// A generator for trace `index` of the test named `name`.
    static func generator(_ name: String, trace index: Int) -> SeededGenerator {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a: stable across runs, unlike Hasher
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        var mixer = SeededGenerator(seed: base ^ hash ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        return SeededGenerator(seed: mixer.next())
    }

    /// How to replay a failure of the test function `name`.
    static func replay(_ name: String, trace index: Int) -> String {
        "seed \(base), trace \(index); replay with: RATELIMIT_SEED=\(base) swift test --filter \(name)"
    }
}

/// Records a property failure with its seed; returns `condition` so callers can stop a trace.
@discardableResult
func holds(
    _ condition: Bool, _ message: @autoclosure () -> String, replay: String,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    if !condition { Issue.record("\(message())\n  \(replay)", sourceLocation: sourceLocation) }
    return condition
}
