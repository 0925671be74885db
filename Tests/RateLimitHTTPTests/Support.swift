import RateLimitConformance
import Testing

/// Records a failure with its seed; returns `condition`.
@discardableResult
func holds(_ condition: Bool, _ message: @autoclosure () -> String, replay: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    if !condition { Issue.record("\(message())\n  \(replay)", sourceLocation: sourceLocation) }
    return condition
}

/// A generator that returns the given 64-bit values in turn (then repeats the last).
struct ScriptedGenerator: RandomNumberGenerator {
    var values: [UInt64]
    mutating func next() -> UInt64 { values.count > 1 ? values.removeFirst() : values[0] }
}
