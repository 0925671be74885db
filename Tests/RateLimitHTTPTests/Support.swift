import RateLimitConformance
import RateLimitTestSupport
import Testing

/// A generator that returns the given 64-bit values in turn (then repeats the last).
struct ScriptedGenerator: RandomNumberGenerator {
    var values: [UInt64]
    mutating func next() -> UInt64 { values.count > 1 ? values.removeFirst() : values[0] }
}
