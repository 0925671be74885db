// Where the windows of a window strategy start (Spec/FixedWindow.md FW-13,
// Spec/SlidingWindowSegments.md SWS-13). The Spec's design aligns every window to the timeline's
// origin, which makes each edge an exact multiple of the window in the vectors; libraries also
// align to their creation (.NET's window limiters, Bucket4j) or open a window at the first hit
// (Python limits' fixed window). Each is a declared variant with its own clauses.

/// Where the windows of a fixed window, or the segments of a segmented sliding window, start.
public enum WindowAlignment: String, CaseIterable, Hashable, Sendable {
    /// Windows `[j·W, (j+1)·W)` of the timeline: the Spec's design.
    case origin
    /// Windows `[c + j·W, c + (j+1)·W)` from the instant `c` the limiter was created (or reset).
    case creation
    /// A window `[a, a + W)` opens at the first admission `a` that finds none open (a fixed
    /// window only).
    case firstEvent = "first-event"
}
