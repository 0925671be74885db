import Foundation
import RateLimitCore

/// The seed of a test run, shared by every property test: `RATELIMIT_SEED` when set (to replay a
/// failure), otherwise a fresh one. It is printed when first used, so that even a crash (which
/// cannot print afterwards) can be replayed; failures print it again with the replay command.
package enum TestSeed {
    package static let base: UInt64 = {
        let seed: UInt64
        if let text = ProcessInfo.processInfo.environment["RATELIMIT_SEED"], let given = UInt64(text) {
            seed = given
        } else {
            seed = UInt64.random(in: 1...UInt64.max)
        }
        print("property tests: RATELIMIT_SEED=\(seed)")
        return seed
    }()

    /// A generator for trace `index` of the test named `name`.
    package static func generator(_ name: String, trace index: Int) -> SeededGenerator {
        SeededGenerator(seed: base, stream: name, index: index)
    }

    /// How to replay a failure of the test function `name`.
    package static func replay(_ name: String, trace index: Int) -> String {
        "seed \(base), trace \(index); replay with: RATELIMIT_SEED=\(base) swift test --filter \(name)"
    }
}

/// How far the exhaustive tests walk: `make verify`'s pass by default, `make exhaustive`'s deeper
/// one with `RATELIMIT_EXHAUSTIVE=deep` (Spec/Conformance.md, "Exhaustive checking", has the numbers). The
/// strategies are walked to their fixpoint either way; the wait queues go deeper.
package enum ExhaustiveBudget {
    package static let deep = ProcessInfo.processInfo.environment["RATELIMIT_EXHAUSTIVE"] == "deep"
    /// Operations for the wait queues' walks, and for the paths replayed through the adapters.
    package static var waitQueueDepth: Int { deep ? 7 : 4 }
    package static var adapterDepth: Int { deep ? 4 : 3 }
}
