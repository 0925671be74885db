import RateLimitCore

// What the suite found: each step where an implementation's answer differs from the Spec's, how
// much that matters (its kind, from a mere difference to a crash), how badly (severity), and the
// Spec clause that most likely explains it (its cause). Spec/Conformance.md, CONF-1 to CONF-11.

/// How a step's answer breaks the Spec, from the mildest to the most severe. Every kind but
/// ``difference`` fails the `safety` level too (CONF-4, CONF-5, CONF-1); a shrunk trace keeps the
/// kind of the failure it was shrunk from.
public enum FindingKind: Int, Comparable, Hashable, Sendable, CaseIterable {
    /// Not the Spec's answer, but neither looser than it nor beyond the liveness bound (CONF-3).
    case difference
    /// Accepted a configuration the Spec refuses: the validation verdict (CONF-8), not an admission.
    case acceptedBadConfiguration
    /// Refuses longer than the liveness bound allows, refuses for good what time would admit, or
    /// refuses again after the instant its own retry-after promised (CONF-5).
    case liveness
    /// A retry-after or a scheduled start earlier than the Spec's, beyond the tolerance (CONF-4).
    case earlyRetry
    /// A `remaining` larger than the Spec's (CONF-4).
    case overPromise
    /// A retry-after (or a wait for releases) where the Spec never admits the acquire: a caller
    /// would retry forever (CONF-4, CORE-7).
    case retryForever
    /// Admitted an acquire the Spec refuses, or applied an event the Spec refuses as invalid (CONF-4).
    case overAdmission
    /// An answer CORE-5 and the protocol's schema do not allow (CONF-1).
    case malformed
    /// The implementation crashed, hung, or broke the protocol (CONF-11).
    case misbehaved

    public static func < (lhs: FindingKind, rhs: FindingKind) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether the kind fails level `safety` (every kind but ``difference``).
    public var failsSafety: Bool { self != .difference }

    /// A short name for reports.
    public var name: String {
        switch self {
        case .difference: "difference"
        case .acceptedBadConfiguration: "accepted a bad configuration"
        case .liveness: "liveness"
        case .earlyRetry: "early retry"
        case .overPromise: "over-promise"
        case .retryForever: "retry forever"
        case .overAdmission: "over-admission"
        case .malformed: "malformed answer"
        case .misbehaved: "misbehaviour"
        }
    }
}

/// How badly a step breaks the Spec, in the units a maintainer weighs: permits given beyond the
/// Spec's, nanoseconds too early (unsafe) or too late (conservative).
public struct FindingSeverity: Hashable, Sendable {
    /// Permits admitted or promised beyond what the Spec allows.
    public var permitsOver: Int64 = 0
    /// How much earlier than the Spec an admission, a retry-after or a start came.
    public var nanosecondsEarly: Int64 = 0
    /// How much later than the Spec a retry-after or a start came.
    public var nanosecondsLate: Int64 = 0

    public init(permitsOver: Int64 = 0, nanosecondsEarly: Int64 = 0, nanosecondsLate: Int64 = 0) {
        self.permitsOver = permitsOver
        self.nanosecondsEarly = nanosecondsEarly
        self.nanosecondsLate = nanosecondsLate
    }

    /// The worst of both, field by field.
    public func worst(_ other: FindingSeverity) -> FindingSeverity {
        FindingSeverity(
            permitsOver: max(permitsOver, other.permitsOver),
            nanosecondsEarly: max(nanosecondsEarly, other.nanosecondsEarly),
            nanosecondsLate: max(nanosecondsLate, other.nanosecondsLate))
    }

    /// "2 permits over, 1 ns early", or nil when every field is zero.
    public var text: String? {
        var parts: [String] = []
        if permitsOver > 0 { parts.append("\(permitsOver) permit\(permitsOver == 1 ? "" : "s") over") }
        if nanosecondsEarly > 0 { parts.append("\(nanosecondsEarly) ns early") }
        if nanosecondsLate > 0 { parts.append("\(nanosecondsLate) ns late") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}

/// The Spec clause that most likely explains a finding, found by the decision list of CONF-10:
/// where a maintainer should look first, not a proof.
public struct FindingCause: Hashable, Sendable, Comparable {
    /// The clause (`CORE-10`, `FW-3`), or `protocol` for a misbehaving implementation.
    public var clause: String
    /// What the clause is about, in a few words ("time going backwards").
    public var title: String

    public init(_ clause: String, _ title: String) {
        self.clause = clause
        self.title = title
    }

    public static func < (lhs: FindingCause, rhs: FindingCause) -> Bool {
        lhs.clause == rhs.clause ? lhs.title < rhs.title : VectorGenerator.clauseOrder(lhs.clause, rhs.clause)
    }

    public var description: String { "\(clause) \(title)" }
}

/// One step where the implementation and the Spec disagree.
public struct StepFinding: Hashable, Sendable {
    /// 1-based step number; 0 for the create of a case.
    public var step: Int
    public var now: Int64
    /// The event as written in reports (`acquire(2)`, `create {...}`).
    public var event: String
    /// The Spec's answer given the implementation's own history (CONF-2), as written in reports.
    public var expected: String
    public var got: String
    public var kind: FindingKind
    /// For every kind but ``FindingKind/difference``: which rule the answer breaks, and how.
    public var explanation: String?
    public var severity: FindingSeverity
    public var cause: FindingCause
    /// The cause lies in the step itself (negative permits, more than can be admitted, a refused
    /// release, the end of the timeline), so no experiment on the history can explain it better.
    var causeIsTheStep = false
}

// MARK: - Causes (CONF-10)

extension FindingCause {
    static let validation = FindingCause("CORE-3", "validation of configurations")
    static let misbehaviour = FindingCause("protocol", "the implementation crashed, hung or broke the protocol")
    static let negativePermits = FindingCause("CORE-9", "negative permits")
    static let query = FindingCause("CORE-9", "acquire(0) as a query")
    static let neverAllowed = FindingCause("CORE-7", "never allowed")
    static let release = FindingCause("CORE-11", "releases the Spec refuses")
    static let backwardTime = FindingCause("CORE-10", "time going backwards")
    static let refusedReconfigure = FindingCause("CORE-13", "reconfigure to a configuration the Spec refuses")

    /// The cause a finding at step `index` (0-based) of `trace` shows by itself, by the static
    /// rules of CONF-10: the event where no history changes it, a never-allowed answer, the kind
    /// of event and the strategy's edges, what differs in the answer (a malformed answer too: its
    /// kind says it is malformed, its cause where). `definitive` is true for the first two; an
    /// experiment on the history may overrule the others. `specAdmission` is the instant at which the Spec admits the step's acquire, and
    /// `admitted` the instants of the acquires the implementation admitted before it. The causes
    /// that lie in the history (``HistoryFeature``) are found by experiment instead.
    static func ofStep(
        _ kind: FindingKind, strategy: String, trace: Trace, index: Int, expected: RateLimitResult,
        got: RateLimitResult?,
        specAdmission: Int64?, admitted: [Int64], configuration: AnyRateLimitStrategy
    ) -> (cause: FindingCause, definitive: Bool) {
        let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? strategy
        func own(_ number: Int, _ title: String) -> FindingCause { FindingCause("\(prefix)-\(number)", title) }
        let step = trace.steps[index]
        if kind == .misbehaved { return (.misbehaviour, true) }
        // 1. The event itself, where no history changes what it asks: negative permits, more than
        //    can ever be admitted, a release the Spec refuses.
        switch step.event {
        case .acquire(let permits) where permits < 0: return (.negativePermits, true)
        case .acquire(let permits) where permits > configuration.maximumPermits: return (.neverAllowed, true)
        case .release(let permits) where permits < 0: return (.negativePermits, true)
        case .release: if strategy != ConcurrencyLimiter.identifier || expected.isInvalid { return (.release, true) }
        case .acquire, .reset, .reconfigure: break
        }
        // 2. A never-allowed answer on one side: the end of the timeline, whatever history led there.
        if expected == .neverAllowed || got == .neverAllowed { return (.neverAllowed, true) }
        // 3. (By experiment, for the case's primary finding: ConformanceSuite's explainByHistory. A
        //    feature of the history that explains the finding wins over what follows.)
        // 4. The kind of event, and the strategy's own edges: the instant or the Spec's admission
        //    on a window or interval boundary, an entry exactly one window old.
        switch step.event {
        case .acquire(0): return (.query, false)
        case .reset: return (own(9, "reset"), false)
        case .reconfigure: return (own(10, "reconfigure carry-over"), false)
        case .acquire, .release: break
        }
        let instants = [step.now] + (specAdmission.map { [$0] } ?? [])
        // A boundary of the grid the strategy is judged on: the origin's, a declared variant's
        // creation (FW-13, SWS-13); a first-event grid is placed by the history, so none is claimed.
        func onGrid(_ span: Int64, _ alignment: WindowAlignment) -> Bool {
            instants.contains { instant in
                switch alignment {
                case .origin: return instant % span == 0
                case .creation:
                    let (offset, overflow) = instant.subtractingReportingOverflow(trace.createdAt)
                    return !overflow && offset % span == 0
                case .firstEvent: return false
                }
            }
        }
        func edges(_ what: String, _ alignment: WindowAlignment) -> FindingCause {
            alignment == .origin ? own(3, what) : own(13, "\(what), the declared \(alignment.rawValue)")
        }
        switch configuration {
        case .fixedWindow(let s):
            if onGrid(s.windowNanoseconds, s.alignment) { return (edges("window edges", s.alignment), false) }
        case .slidingWindowCounter(let s):
            if onGrid(s.windowNanoseconds, .origin) { return (own(3, "window edges"), false) }
        case .slidingWindowSegments(let s):
            if onGrid(s.segmentNanoseconds, s.alignment) { return (edges("segment edges", s.alignment), false) }
        case .intervalTokenBucket(let s):
            if instants.contains(where: { $0 % s.intervalNanoseconds == 0 }) {
                return (own(3, "interval edges"), false)
            }
        case .slidingWindowLog(let s):
            if admitted.contains(where: { earlier in instants.contains { $0 - earlier == s.windowNanoseconds } }) {
                return (own(3, "an entry exactly one window old"), false)
            }
        case .tokenBucket, .gcra, .payLater, .warmUp, .leakyBucketMeter, .leakyBucketQueue, .concurrency: break
        }
        // 5. What differs in the answer.
        switch (expected, got) {
        case (.rejected, .rejected?): return (own(6, "retry-after"), false)
        case (.rejectedUntilRelease, .rejectedUntilRelease?): return (own(6, "shortfall"), false)
        case (.delayed, .delayed?), (.delayed, .allowed?), (.allowed, .delayed?): return (own(4, "schedule"), false)
        case (.allowed, .allowed?): return (own(5, "remaining"), false)
        case (.allowed, _), (.delayed, _), (.rejected, _), (.rejectedUntilRelease, _), (.neverAllowed, _),
            (.invalid, _):
            return (own(4, "admission"), false)
        }
    }
}

/// A feature of a case's history that may explain its finding: the suite removes it from the
/// case (up to the finding's step) and runs it again; the feature is the cause only when the
/// finding then disappears (CONF-10).
enum HistoryFeature: CaseIterable {
    /// An instant earlier than one before it: the experiment moves every instant up to the
    /// latest one before it.
    case backwardTime
    /// A reset before the step: the experiment leaves out every reset before it.
    case reset
    /// A reconfigure before the step: the experiment leaves out every reconfigure before it.
    case reconfigure
    /// A limiter created off the window or interval grid: the experiment shifts the case so that
    /// it is created on a grid point.
    case unalignedCreation

    /// The cause this feature names, for a case of `strategy` judged as the `alignment` variant.
    func cause(strategy: String, alignment: WindowAlignment = .origin) -> FindingCause {
        let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? strategy
        switch self {
        case .backwardTime: return .backwardTime
        case .reset: return FindingCause("\(prefix)-9", "reset")
        case .reconfigure: return FindingCause("\(prefix)-10", "reconfigure carry-over")
        case .unalignedCreation where alignment != .origin:
            // The case was judged as a declared variant: its alignment is what differs (FW-13, SWS-13).
            return FindingCause("\(prefix)-13", "window alignment, the declared \(alignment.rawValue)")
        case .unalignedCreation:
            return FindingCause(
                "\(prefix)-3", prefix == "TBI" ? "interval alignment to the origin" : "window alignment to the origin")
        }
    }

    /// The case's steps up to `index` (0-based) without the feature, or `nil` when it does not
    /// have the feature.
    func removed(from trace: Trace, upTo index: Int) -> Trace? {
        var prefix = trace
        prefix.steps = Array(trace.steps[...index])
        switch self {
        case .backwardTime:
            var latest = prefix.createdAt
            var changed = false
            for position in prefix.steps.indices {
                if prefix.steps[position].now < latest {
                    prefix.steps[position].now = latest
                    changed = true
                }
                latest = prefix.steps[position].now
            }
            return changed ? prefix : nil
        case .reset, .reconfigure:
            let kept = prefix.steps.enumerated().filter { position, step in
                guard position < index else { return true }
                switch step.event {
                case .reset: return self != .reset
                case .reconfigure: return self != .reconfigure
                case .acquire, .release: return true
                }
            }.map(\.element)
            guard kept.count < prefix.steps.count else { return nil }
            prefix.steps = kept
            return prefix
        case .unalignedCreation:
            let grid: Int64
            switch trace.configuration {
            case .fixedWindow(let s): grid = s.windowNanoseconds
            case .slidingWindowCounter(let s): grid = s.windowNanoseconds
            case .slidingWindowSegments(let s): grid = s.segmentNanoseconds
            case .intervalTokenBucket(let s): grid = s.intervalNanoseconds
            case .tokenBucket, .gcra, .payLater, .warmUp, .slidingWindowLog, .leakyBucketMeter, .leakyBucketQueue,
                .concurrency:
                return nil
            }
            let offset = prefix.createdAt % grid
            guard offset != 0, prefix.steps.allSatisfy({ $0.now >= offset }) else { return nil }
            prefix.createdAt -= offset
            for position in prefix.steps.indices { prefix.steps[position].now -= offset }
            return prefix
        }
    }
}

extension RateLimitResult {
    var isInvalid: Bool { if case .invalid = self { true } else { false } }
}
