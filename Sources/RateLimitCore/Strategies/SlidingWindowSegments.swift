// Segmented sliding window (Spec/SlidingWindowSegments.md, clauses SWS-1 ... SWS-12).
//
// The window of `segmentsPerWindow` segments of `segmentNanoseconds` each, aligned to the origin
// (or, as a declared variant, to the limiter's creation: SWS-13), slides one segment at a time: every admission is counted in the segment of its instant, and a
// segment's count leaves as a whole when the segment slides out of the window. An acquire at t is
// admitted when the permits counted in the segments ⌊t/G⌋ − S + 1 … ⌊t/G⌋ plus its own are at most
// `limit`. This is .NET's `SlidingWindowRateLimiter` with `SegmentsPerWindow`, exact: segments
// slide with time itself (not with a timer's ticks), and are aligned to the timeline's origin.
// With one segment it is the fixed window; with segments of one nanosecond, the sliding log.
//
// Implementation. The segments still in force that hold permits, as (segment index, permits)
// entries in a `PermitLog` shared with the sliding log: at most min(segments, limit) entries
// after an admission, however many segments the window has, so a window of a million segments of
// one nanosecond costs what the log of the same limit costs. Expired segments are pruned when the
// state changes; a refused acquire only reads (CORE-8). Segment boundaries are products of at most
// 64 bits: a segment index times the segment length never exceeds the instant it came from.

/// A sliding window in segments: at most `limit` permits in the `segmentsPerWindow` segments of
/// `segmentNanoseconds` ending with the present one; each segment's permits leave together.
public struct SlidingWindowSegments: RateLimitStrategy {
    public static let identifier = "sliding-window-segments"

    /// Permits admitted in any window of consecutive segments.
    public let limit: Int64
    /// Segments per window (S).
    public let segmentsPerWindow: Int64
    /// The length of one segment in nanoseconds (G); the window is `segmentsPerWindow × segmentNanoseconds`.
    public let segmentNanoseconds: Int64
    /// Where segments start: the origin unless the creation variant is asked for (SWS-13).
    public let alignment: WindowAlignment

    /// A validated segmented-window configuration (SWS-1).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field: a non-positive limit, segment
    ///   count or segment length, a window `segmentsPerWindow × segmentNanoseconds` above
    ///   `Int64.max`, or the alignment `firstEvent`, which only a fixed window has.
    public init(
        limit: Int64, segmentsPerWindow: Int64, segmentNanoseconds: Int64, alignment: WindowAlignment = .origin
    ) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(limit, "limit")
        try RateLimitInputError.checkPositive(segmentsPerWindow, "segmentsPerWindow")
        try RateLimitInputError.checkPositive(segmentNanoseconds, "segmentNanoseconds")
        try RateLimitInputError.checkAtMost(
            segmentNanoseconds, Int64.max / segmentsPerWindow, "segmentNanoseconds",
            "the window segmentsPerWindow × segmentNanoseconds must be at most Int64.max")
        guard alignment != .firstEvent else {
            throw RateLimitInputError(
                field: "alignment", value: nil, problem: .notSupported,
                reason: "segments align to the origin or to the creation (SWS-13)")
        }
        self.alignment = alignment
        self.limit = limit
        self.segmentsPerWindow = segmentsPerWindow
        self.segmentNanoseconds = segmentNanoseconds
    }

    /// A validated segmented-window configuration with the segment length as a `Duration` (whole nanoseconds).
    public init(
        limit: Int64, segmentsPerWindow: Int64, segment: Duration, alignment: WindowAlignment = .origin
    ) throws(RateLimitInputError) {
        try self.init(
            limit: limit, segmentsPerWindow: segmentsPerWindow,
            segmentNanoseconds: segment.wholeNanoseconds(field: "segmentNanoseconds"), alignment: alignment)
    }

    /// This configuration with segments aligned as `alignment` says; `nil` for `firstEvent`.
    public func aligned(_ alignment: WindowAlignment) -> SlidingWindowSegments? {
        try? SlidingWindowSegments(
            limit: limit, segmentsPerWindow: segmentsPerWindow, segmentNanoseconds: segmentNanoseconds,
            alignment: alignment)
    }

    /// The permits counted in one segment.
    public struct Segment: Hashable, Sendable {
        /// The segment's index: it covers the instants `[A + index × G, A + (index + 1) × G)`, `A`
        /// the state's anchor (0 on the origin's grid).
        public var index: Int64
        /// Permits admitted in it.
        public var permits: Int64
    }

    /// The segments that hold permits and may still be in force, the last instant recorded and
    /// the anchor segments are counted from.
    public struct State: Hashable, Sendable {
        @usableFromInline var log: PermitLog<Segment>
        /// The latest instant the state was updated at (SWS-3).
        public internal(set) var lastNanoseconds: Int64
        /// The instant segments are counted from (SWS-13): 0, or the creation or reset instant.
        public internal(set) var anchorNanoseconds: Int64 = 0

        /// The segments holding permits, oldest first.
        public var segments: ArraySlice<Segment> { log.entries }
    }

    public var maximumPermits: Int64 { limit }

    public func initialState(at now: RateLimitInstant) -> State {
        State(
            log: PermitLog(), lastNanoseconds: now.nanoseconds,
            anchorNanoseconds: alignment == .origin ? 0 : now.nanoseconds)
    }

    public func step(
        _ state: inout State, _ event: RateLimitEvent<SlidingWindowSegments>, at now: RateLimitInstant
    ) -> RateLimitResult {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // SWS-3
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if permits > limit { return .neverAllowed }  // SWS-7
            let segment = self.segment(of: instant, state)
            switch state.log.acquire(permits, limit: limit, expired: expired(state, at: instant), at: segment) {
            case .admitted(let remaining):  // SWS-4, SWS-5
                if permits > 0 { state.lastNanoseconds = instant }  // SWS-8: a query records nothing
                return .allowed(remaining: remaining)
            case .waitFor(let oldest):  // SWS-6: the oldest segments whose sliding out frees enough permits
                return rejection(admittedAt: slidingOut(oldest, state), now: now)
            }
        case .release:  // SWS-8
            return .invalid(.releaseNotSupported)
        case .reset:  // SWS-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: limit)
        case .reconfigure(let replacement):  // SWS-10
            guard replacement.alignment == alignment else {  // SWS-13: the alignment is the limiter's own
                return .invalid(
                    RateLimitInputError(
                        field: "alignment", value: nil, problem: .notSupported,
                        reason: "a reconfigure keeps the segments' alignment (\(alignment.rawValue))"))
            }
            let (expiredCount, _) = expired(state, at: instant)
            let anchor = state.anchorNanoseconds
            var log = PermitLog<Segment>()
            for segment in state.log.entries.dropFirst(expiredCount) {
                // The segment's last instant not after e (e itself in e's segment; before it,
                // A + (j + 1)·G − 1 < e), from the anchor, in the new segments: monotone in j, so the
                // log stays in order.
                let current = segment.index == self.segment(of: instant, state)
                let lastOffset = current ? instant - anchor : (segment.index + 1) * segmentNanoseconds - 1
                log.append(permits: segment.permits, at: lastOffset / replacement.segmentNanoseconds)
            }
            state = State(log: log, lastNanoseconds: instant, anchorNanoseconds: anchor)
            let (_, stillExpired) = replacement.expired(state, at: instant)
            return .allowed(remaining: max(0, replacement.limit - (log.total - stillExpired)))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: every segment has slid out
        expired(state, at: max(now.nanoseconds, state.lastNanoseconds)).permits == state.log.total
    }

    /// SWS-3, SWS-13: the segment of `instant` (≥ the anchor), `⌊(t − A)/G⌋`.
    func segment(of instant: Int64, _ state: State) -> Int64 {
        (instant - state.anchorNanoseconds) / segmentNanoseconds
    }

    /// SWS-3: the leading segments no longer in force at `instant`: those with index ≤ ⌊(e − A)/G⌋ − S.
    func expired(_ state: State, at instant: Int64) -> (count: Int, permits: Int64) {
        state.log.leading(through: segment(of: instant, state) - segmentsPerWindow)
    }

    /// SWS-6: the instant segment `index` slides out of the window, `A + (index + S) × G` (may
    /// exceed `Int64.max`).
    func slidingOut(_ index: Int64, _ state: State) -> Wide {
        // index × G ≤ an instant − A ≤ Int64.max and S × G ≤ Int64.max: the sum fits in 64 unsigned
        // bits, and A < 2^63 more in 128.
        wideSum(index * segmentNanoseconds, segmentsPerWindow * segmentNanoseconds).adding(state.anchorNanoseconds)
    }
}

extension SlidingWindowSegments.Segment: LoggedPermits {
    @usableFromInline var key: Int64 { index }
    @usableFromInline init(key: Int64, permits: Int64) { self.init(index: key, permits: permits) }
}
