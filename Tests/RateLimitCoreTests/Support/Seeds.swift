import Foundation
import RateLimitConformance
import Testing

typealias PropertySeed = TestSeed

/// Records a property failure with its seed; returns `condition` so callers can stop a trace.
@discardableResult
func holds(
    _ condition: Bool, _ message: @autoclosure () -> String, replay: String,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    if !condition { Issue.record("\(message())\n  \(replay)", sourceLocation: sourceLocation) }
    return condition
}
