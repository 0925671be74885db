import Foundation
import RateLimitConformance
import Testing

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
        SeededGenerator(seed: base, stream: name, index: index)
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
