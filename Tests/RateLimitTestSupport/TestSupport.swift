import Dispatch
import Testing

// What only the tests share: recording a property failure with its seed, and running a long
// synchronous test body without holding one of the cooperative pool's threads.

/// Records a property failure with its seed; returns `condition` so callers can stop a trace.
@discardableResult
public func holds(
    _ condition: Bool, _ message: @autoclosure () -> String, replay: String,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    if !condition { Issue.record("\(message())\n  \(replay)", sourceLocation: sourceLocation) }
    return condition
}
