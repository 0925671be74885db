import RateLimitCore

/// What an implementation declares about itself for one strategy (Spec/protocol.md, "Profiles";
/// CONF-7): the resolution and the end of its clock, whether that clock can go back, the events it
/// can express, the tolerance its arithmetic needs. The harness generates every case within the
/// profile, skips the vector cases that lie outside it, and reports what it therefore did not check.
public struct ImplementationProfile: Hashable, Sendable {
    /// An event an implementation may lack. `acquire(1)` is always required, and `release` on
    /// the concurrency limiter (which is meaningless without it).
    public enum Event: String, CaseIterable, Hashable, Sendable, Comparable {
        /// `acquire(n)` with `n > 1` (CORE-4).
        case weighted
        /// `acquire(0)`, the query (CORE-9).
        case query
        /// Events the Spec answers `invalid`: negative permits, a release without permits held (CORE-9, CORE-11).
        case invalid
        /// `reset` (CORE-12).
        case reset
        /// `reconfigure` (CORE-13).
        case reconfigure

        public static func < (lhs: Event, rhs: Event) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }

        /// The optional event `event` is: `nil` for `acquire(1)` and a release, which every
        /// profile has. (A release the Spec refuses is `invalid` by its answer, not its form.)
        package init?(optional event: ConformanceEvent) {
            switch event {
            case .acquire(0): self = .query
            case .acquire(let permits) where permits < 0: self = .invalid
            case .acquire(let permits) where permits > 1: self = .weighted
            case .acquire, .release: return nil
            case .reset: self = .reset
            case .reconfigure: self = .reconfigure
            }
        }
    }

    /// The resolution of the implementation's clock: every instant the harness sends is a whole
    /// multiple of it, and a retry-after or a start it answers is judged at it (CONF-7: the Spec's
    /// instant rounded up to the next multiple is exact).
    public var timeUnitNanoseconds: Int64 = 1
    /// The granularity of the configurations it accepts: every span of a configuration the harness
    /// sends is a whole multiple of it, itself a multiple of ``timeUnitNanoseconds`` (a library
    /// whose windows are whole seconds and whose clock reads microseconds: 1,000,000,000 and
    /// 1,000). The same as ``timeUnitNanoseconds`` unless declared. Keep it a multiple of
    /// ``timeUnitNanoseconds`` when setting either (the initializers do).
    public var configurationUnitNanoseconds: Int64 = 1
    /// The last instant the implementation can represent exactly (a `Double` of microseconds is
    /// exact up to 2^53 µs); the harness sends no instant after it.
    public var largestInstantNanoseconds: Int64 = .max
    /// The most permits one `acquire` or `release` of its API takes (a library whose counts are
    /// 32-bit integers: 2^31 − 1); the harness asks for no more, nor for a negative count beyond
    /// its negation (CORE-4 beyond it, and CORE-9 below its negation, are not checked).
    public var largestPermits: Int64 = .max
    /// The implementation reads a clock that never goes back: the harness never sends a `now`
    /// earlier than one it sent before to the same limiter (CORE-10 is not checked).
    public var monotonic = false
    /// The events it can express beyond `acquire(1)`.
    public var events: Set<Event> = Set(Event.allCases)
    /// How far, in nanoseconds, its answers may stray from the Spec's (CONF-6).
    public var toleranceNanoseconds: Int64 = 0
    /// Whether it refuses the configurations the Spec refuses (CORE-3); when not, the refusal
    /// cases are not run.
    public var validatesConfigurations = true
    /// Its state begins at its first event, not at `create`: the harness sends `create` at the
    /// instant of the first event.
    public var createdAtFirstEvent = false
    /// Where its fixed windows or segments start (FixedWindow.md FW-13, SlidingWindowSegments.md
    /// SWS-13): the harness judges the strategy as the variant declared, the origin unless
    /// declared. A strategy without that variant ignores it.
    public var alignment: WindowAlignment = .origin

    /// The largest tolerance a profile or `--tolerance` may ask for: one second. Past the quanta
    /// of the strategies it judges, a tolerance leaves nothing of safety and liveness to check.
    public static let maximumTolerance: Int64 = 1_000_000_000

    /// The Spec's own profile: nanoseconds, the whole timeline, every event, no tolerance.
    public static let full = ImplementationProfile()

    /// The profile of an implementation that reads a coarse clock of resolution
    /// `resolutionNanoseconds` (Spec/Core.md CORE-17, 3): a monotonic clock, no reconfigure (it
    /// carries the lag over into the new configuration's units), no instant in the second half of
    /// the timeline (near its end a late reading moves admissions across it), and answers judged
    /// within twice the resolution (capped at ``maximumTolerance``): one resolution for the
    /// reading, one for the shadow, which takes an early admission at the Spec's instant (CONF-2).
    /// It fits TB, GCRA, PL, LBM, SWL, LBQ and CL; the strategies with windows aligned to the origin
    /// cannot conform on such a clock (CORE-17, 4).
    public static func coarseClock(resolutionNanoseconds: Int64) -> ImplementationProfile {
        let resolution = max(1, resolutionNanoseconds)
        return ImplementationProfile(
            largestInstantNanoseconds: Int64.max / 2, monotonic: true,
            events: Set(Event.allCases).subtracting([.reconfigure]),
            toleranceNanoseconds: resolution > maximumTolerance / 2 ? maximumTolerance : 2 * resolution)
    }

    public init(
        timeUnitNanoseconds: Int64 = 1, largestInstantNanoseconds: Int64 = .max, monotonic: Bool = false,
        events: Set<Event> = Set(Event.allCases), toleranceNanoseconds: Int64 = 0, validatesConfigurations: Bool = true,
        createdAtFirstEvent: Bool = false, largestPermits: Int64 = .max, configurationUnitNanoseconds: Int64? = nil,
        alignment: WindowAlignment = .origin
    ) {
        self.alignment = alignment
        self.timeUnitNanoseconds = max(1, timeUnitNanoseconds)
        // At least the clock unit, rounded up to a multiple of it (the JSON reader refuses others).
        let unit = self.timeUnitNanoseconds
        let declared = max(unit, configurationUnitNanoseconds ?? unit)
        let over = declared % unit
        self.configurationUnitNanoseconds =
            over == 0 || declared > Int64.max - unit ? declared - over : declared - over + unit
        self.largestInstantNanoseconds = largestInstantNanoseconds
        self.largestPermits = max(1, largestPermits)
        self.monotonic = monotonic
        self.events = events
        self.toleranceNanoseconds = toleranceNanoseconds
        self.validatesConfigurations = validatesConfigurations
        self.createdAtFirstEvent = createdAtFirstEvent
    }

    static let keys = [
        "timeUnitNanoseconds", "configurationUnitNanoseconds", "largestInstantNanoseconds", "largestPermits",
        "monotonic", "events",
        "toleranceNanoseconds", "validation", "createdAtFirstEvent", "alignment",
    ]

    /// Reads a profile as a `hello` of protocol 2 declares it; every member is optional.
    public init(json: JSONValue) throws(ConformanceFormatError) {
        guard case .object = json else { throw ConformanceFormatError("a profile must be an object") }
        if let unknown = json.keys.first(where: { !Self.keys.contains($0) }) {
            throw ConformanceFormatError(
                "unknown profile member \"\(unknown)\" (known: \(Self.keys.joined(separator: ", ")))")
        }
        func integer(_ key: String, atLeast minimum: Int64) throws(ConformanceFormatError) -> Int64? {
            guard let value = json[key] else { return nil }
            guard let number = value.int64, number >= minimum else {
                throw ConformanceFormatError(
                    "profile member \"\(key)\" must be an integer ≥ \(minimum), got \(value.compactText)")
            }
            return number
        }
        func flag(_ key: String) throws(ConformanceFormatError) -> Bool? {
            guard let value = json[key] else { return nil }
            guard let flag = value.bool else {
                throw ConformanceFormatError("profile member \"\(key)\" must be true or false")
            }
            return flag
        }
        timeUnitNanoseconds = try integer("timeUnitNanoseconds", atLeast: 1) ?? 1
        configurationUnitNanoseconds =
            try integer("configurationUnitNanoseconds", atLeast: timeUnitNanoseconds) ?? timeUnitNanoseconds
        guard configurationUnitNanoseconds % timeUnitNanoseconds == 0 else {
            throw ConformanceFormatError(
                "profile member \"configurationUnitNanoseconds\" must be a multiple of \"timeUnitNanoseconds\" (\(timeUnitNanoseconds)), got \(configurationUnitNanoseconds)"
            )
        }
        largestInstantNanoseconds = try integer("largestInstantNanoseconds", atLeast: timeUnitNanoseconds) ?? .max
        largestPermits = try integer("largestPermits", atLeast: 1) ?? .max
        toleranceNanoseconds = try integer("toleranceNanoseconds", atLeast: 0) ?? 0
        guard toleranceNanoseconds <= Self.maximumTolerance else {
            throw ConformanceFormatError(
                "profile member \"toleranceNanoseconds\" must be at most \(Self.maximumTolerance) (one second)")
        }
        monotonic = try flag("monotonic") ?? false
        validatesConfigurations = try flag("validation") ?? true
        createdAtFirstEvent = try flag("createdAtFirstEvent") ?? false
        if let value = json["alignment"] {
            guard let name = value.string, let declared = WindowAlignment(rawValue: name) else {
                throw ConformanceFormatError(
                    "profile member \"alignment\" must be one of \(WindowAlignment.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), got \(value.compactText)"
                )
            }
            alignment = declared
        }
        if let list = json["events"] {
            guard let items = list.array else {
                throw ConformanceFormatError("profile member \"events\" must be an array of strings")
            }
            var events: Set<Event> = []
            for item in items {
                guard let name = item.string, let event = Event(rawValue: name) else {
                    throw ConformanceFormatError(
                        "unknown event \(item.compactText) in a profile (known: \(Event.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                events.insert(event)
            }
            self.events = events
        }
    }

    /// The profile as a `hello` writes it, every member present.
    public var json: JSONValue {
        .object([
            ("timeUnitNanoseconds", .integer(timeUnitNanoseconds)),
            ("configurationUnitNanoseconds", .integer(configurationUnitNanoseconds)),
            ("largestInstantNanoseconds", .integer(largestInstantNanoseconds)),
            ("largestPermits", .integer(largestPermits)),
            ("monotonic", .bool(monotonic)), ("events", .array(events.sorted().map { .string($0.rawValue) })),
            ("toleranceNanoseconds", .integer(toleranceNanoseconds)), ("validation", .bool(validatesConfigurations)),
            ("createdAtFirstEvent", .bool(createdAtFirstEvent)), ("alignment", .string(alignment.rawValue)),
        ])
    }

    /// `configuration` as this profile's implementation declares it works: a window aligned as
    /// ``alignment`` says (FW-13, SWS-13) when it has that variant; any other unchanged.
    package func aligned(_ configuration: AnyRateLimitStrategy) -> AnyRateLimitStrategy {
        configuration.aligned(alignment)
    }

    /// `trace` with its configuration and every reconfigure's aligned (``aligned(_:)-swift.method``).
    package func aligned(_ trace: Trace) -> Trace { trace.aligned(alignment) }

    /// What the Spec requires and this profile keeps the harness from checking, one line each,
    /// naming the clause (CONF-7).
    public func notChecked(strategy: String) -> [String] { notChecked(strategy: strategy, toleranceOverride: nil) }

    /// ``notChecked(strategy:)`` for a run that judged with `toleranceOverride` (`--tolerance`)
    /// instead of the profile's tolerance, when given.
    package func notChecked(strategy: String, toleranceOverride: Int64?) -> [String] {
        let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? strategy
        var lines: [String] = []
        if alignment != .origin, AnyRateLimitStrategy.alignments(of: strategy).contains(alignment) {
            lines.append(
                "\(prefix)-3 windows aligned to the origin: judged as the variant the implementation declares, \(prefix)-13 \(alignment.rawValue)"
            )
        }
        if configurationUnitNanoseconds > timeUnitNanoseconds {
            if timeUnitNanoseconds > 1 {
                lines.append("CORE-1 instants finer than the profile's clock unit of \(timeUnitNanoseconds) ns")
            }
            lines.append(
                "CORE-1 spans of a configuration finer than the profile's configuration unit of \(configurationUnitNanoseconds) ns"
            )
        } else if timeUnitNanoseconds > 1 {
            lines.append("CORE-1 instants and spans finer than the profile's unit of \(timeUnitNanoseconds) ns")
        }
        if largestInstantNanoseconds < .max {
            lines.append(
                "CORE-7 instants after \(largestInstantNanoseconds) ns, the profile's largest instant, and the end of the timeline"
            )
        }
        if largestPermits < .max {
            lines.append(
                "CORE-4 acquires and releases of more than \(largestPermits) permits, the profile's largest; a remaining above it is judged as \(largestPermits)"
            )
            lines.append(
                "CORE-9 negative counts below -\(largestPermits), the negation of the profile's largest permits")
        }
        if let toleranceOverride, toleranceOverride > 0 {
            lines.append(
                "CONF-6 instants to the nanosecond: answers within \(toleranceOverride) ns of the Spec's, the run's tolerance (--tolerance), are judged exact"
            )
        } else if toleranceOverride == nil, toleranceNanoseconds > 0 {
            lines.append(
                "CONF-6 instants to the nanosecond: answers within \(toleranceNanoseconds) ns of the Spec's, the profile's tolerance, are judged exact"
            )
        }
        if monotonic { lines.append("CORE-10 time going backwards (monotonic clock)") }
        if !events.contains(.weighted) { lines.append("CORE-4 weighted acquires (acquire(n) with n > 1)") }
        if !events.contains(.query) { lines.append("CORE-9 acquire(0) as a query") }
        if !events.contains(.invalid) {
            lines.append("CORE-9, CORE-11 invalid events (negative permits, releases the Spec refuses)")
        }
        if !events.contains(.reset) { lines.append("CORE-12 reset") }
        if !events.contains(.reconfigure) { lines.append("CORE-13 reconfigure") }
        if !validatesConfigurations { lines.append("CORE-3 refusing bad configurations") }
        if createdAtFirstEvent { lines.append("\(prefix)-2 the state between create and the first event") }
        return lines
    }

    /// `permits` as the implementation's API can take it: a count past ``largestPermits`` either
    /// way is that count's edge (−``largestPermits`` for a negative one), the nearest it can be
    /// asked; with no largest declared, every count as it is (`Int64.min` included).
    package func expressible(_ permits: Int64) -> Int64 {
        guard largestPermits >= 1, largestPermits < .max else { return permits }
        return min(max(permits, -largestPermits), largestPermits)
    }

    /// Whether `event` is one the profile can express, given the Spec's answer to it.
    func allows(_ event: ConformanceEvent, specAnswer: RateLimitResult) -> String? {
        if specAnswer.isInvalid, !events.contains(.invalid) { return "an invalid event (the profile has none)" }
        switch event {
        case .acquire(let permits) where permits > largestPermits, .release(let permits) where permits > largestPermits:
            return "more than \(largestPermits) permits (the profile's largest)"
        case .acquire(let permits) where expressible(permits) != permits,
            .release(let permits) where expressible(permits) != permits:
            return "a count below -\(largestPermits) (the negation of the profile's largest permits)"
        case .acquire(let permits) where permits > 1:
            return events.contains(.weighted) ? nil : "a weighted acquire (the profile has none)"
        case .acquire(0): return events.contains(.query) ? nil : "acquire(0) (the profile has no query)"
        case .acquire, .release: return nil
        case .reset: return events.contains(.reset) ? nil : "a reset (the profile has none)"
        case .reconfigure: return events.contains(.reconfigure) ? nil : "a reconfigure (the profile has none)"
        }
    }

    /// How many clock units make a configuration unit: a generated configuration's spans, counted
    /// in clock units, are multiples of it.
    package var spanScale: Int64 { max(1, configurationUnitNanoseconds / max(1, timeUnitNanoseconds)) }

    /// A vector story (`trace`, with the Spec's `answers`) as run against this profile: the same
    /// trace, a transformed one (created at its first event, scaled to the configuration unit:
    /// a story's instants and spans keep their proportions), its prefix up to
    /// the first step the profile cannot take (an event it lacks, time going backwards on a
    /// monotonic clock), or the reason it lies outside the profile (CONF-7).
    func adapt(_ trace: Trace, answers: [RateLimitResult]) -> Adaptation {
        var trace = trace
        var partial: (judged: Int, of: Int, reason: String)?
        let merged = trace.mergedSteps
        if let (position, reason) = firstStepOutside(trace, merged: merged, answers: answers) {
            // Nothing before it to judge: the whole story lies outside.
            guard position > 0 else { return .outside(reason) }
            let prefix = merged.prefix(position)
            trace.steps = prefix.compactMap { if case .event(let step) = $0 { step } else { nil } }
            trace.refusedReconfigures = prefix.compactMap {
                if case .refusedReconfigure(let step) = $0 { step } else { nil }
            }
            partial = (position, merged.count, reason)
        }
        let whole = adaptWhole(trace)
        guard let partial else { return whole }
        switch whole {
        case .outside: return whole
        case .transformed(let adapted):
            return .partial(adapted, judged: partial.judged, of: partial.of, reason: partial.reason)
        case .unchanged, .partial:
            return .partial(trace, judged: partial.judged, of: partial.of, reason: partial.reason)
        }
    }

    /// The first step of `merged` (``Trace/mergedSteps``) the profile cannot take, and why: an
    /// event it lacks, a reconfigure to a refused configuration without both reconfigures and
    /// invalid events, an instant before an earlier one on a monotonic clock.
    private func firstStepOutside(_ trace: Trace, merged: [RunStep], answers: [RateLimitResult]) -> (Int, String)? {
        var latest = createdAtFirstEvent ? (merged.first?.now ?? trace.createdAt) : trace.createdAt
        var event = 0
        for (position, step) in merged.enumerated() {
            switch step {
            case .event(let traced):
                let answer = answers.indices.contains(event) ? answers[event] : .neverAllowed
                event += 1
                if let reason = allows(traced.event, specAnswer: answer) { return (position, "uses \(reason)") }
            case .refusedReconfigure:
                if !events.contains(.reconfigure) || !events.contains(.invalid) {
                    return (
                        position,
                        "uses a reconfigure to a configuration the Spec refuses (the profile has no \(events.contains(.reconfigure) ? "invalid event" : "reconfigure"))"
                    )
                }
            }
            if monotonic, step.now < latest {
                return (position, "time goes backwards (the profile's clock is monotonic)")
            }
            latest = max(latest, step.now)
        }
        return nil
    }

    /// A trace whose every step the profile can take, as run against it: the same, transformed, or
    /// outside the profile (its instants or spans do not fit the profile's unit and timeline).
    private func adaptWhole(_ trace: Trace) -> Adaptation {
        var adapted = trace
        let instants = trace.mergedSteps.map(\.now)
        if createdAtFirstEvent, let first = instants.first, first != trace.createdAt {
            adapted.createdAt = first
        }
        let unit = configurationUnitNanoseconds
        if unit > 1 {
            guard let scaled = adapted.scaled(by: unit) else {
                return .outside("does not fit the timeline when scaled to the profile's unit of \(unit) ns")
            }
            adapted = scaled
            let strategy = trace.configuration.kind
            for refused in adapted.refusedReconfigures {
                let parsed = Result { () throws(ConformanceFormatError) in
                    try AnyRateLimitStrategy(strategy: strategy, json: refused.configuration, requiringEveryField: true)
                }
                guard case .failure(let error) = parsed, error.refusedBySpec != nil else {
                    return .outside(
                        "its refused reconfigure is one the Spec accepts once scaled to the profile's unit of \(unit) ns"
                    )
                }
            }
        }
        if ([adapted.createdAt] + adapted.mergedSteps.map(\.now)).contains(where: { $0 > largestInstantNanoseconds }) {
            return .outside("reaches an instant after the profile's largest instant")
        }
        return adapted == trace ? .unchanged : .transformed(adapted)
    }

    /// Whether a trace lies within the profile as it is (the shrinker's candidates): instants on
    /// the clock unit, up to the largest instant, never backwards on a monotonic clock, spans on
    /// the configuration unit, only events the profile has, created at the first event when it must be.
    func contains(_ trace: Trace, answers: [RateLimitResult]) -> Bool {
        for (step, answer) in zip(trace.steps, answers) where allows(step.event, specAnswer: answer) != nil {
            return false
        }
        if createdAtFirstEvent, let first = trace.steps.first, first.now != trace.createdAt { return false }
        var latest = trace.createdAt
        for instant in [trace.createdAt] + trace.steps.map(\.now) {
            if instant % timeUnitNanoseconds != 0 || instant > largestInstantNanoseconds
                || (monotonic && instant < latest)
            {
                return false
            }
            latest = max(latest, instant)
        }
        var configurations = [trace.configuration]
        for step in trace.steps {
            if case .reconfigure(let replacement) = step.event { configurations.append(replacement) }
        }
        return configurations.allSatisfy {
            $0.fields.allSatisfy {
                !$0.name.hasSuffix("Nanoseconds") || $0.value % max(1, configurationUnitNanoseconds) == 0
            }
        }
    }

    enum Adaptation: Equatable {
        case unchanged
        case transformed(Trace)
        /// The story's first `judged` of its `of` steps (transformed as a whole story is); the
        /// step after them is outside the profile for `reason`.
        case partial(Trace, judged: Int, of: Int, reason: String)
        case outside(String)
    }
}

extension Trace {
    /// The trace with every instant and every span of its configurations multiplied by `unit`, or
    /// `nil` when a product leaves the timeline or a scaled configuration is one the Spec refuses.
    public func scaled(by unit: Int64) -> Trace? {
        guard unit != 1 else { return self }
        func scale(_ instant: Int64) -> Int64? {
            let (product, overflow) = instant.multipliedReportingOverflow(by: unit)
            return overflow ? nil : product
        }
        guard let createdAt = scale(createdAt), let configuration = configuration.scaled(by: unit) else { return nil }
        var steps: [TraceStep] = []
        for step in self.steps {
            guard let now = scale(step.now) else { return nil }
            var event = step.event
            if case .reconfigure(let replacement) = step.event {
                guard let scaled = replacement.scaled(by: unit) else { return nil }
                event = .reconfigure(scaled)
            }
            steps.append(TraceStep(now: now, event: event))
        }
        var scaled = Trace(configuration: configuration, createdAt: createdAt, steps: steps)
        for var refused in refusedReconfigures {
            guard let now = scale(refused.now),
                let fields = StrategyRun.scaled(refused.configuration, by: unit)
            else { return nil }
            (refused.now, refused.configuration) = (now, fields)
            scaled.refusedReconfigures.append(refused)
        }
        return scaled
    }
}

extension AnyRateLimitStrategy {
    /// The configuration with each span (every field ending in `Nanoseconds`) multiplied by
    /// `unit`, or `nil` when a product overflows or the Spec refuses the result.
    public func scaled(by unit: Int64) -> AnyRateLimitStrategy? {
        guard unit != 1 else { return self }
        var members: [(String, JSONValue)] = []
        for (name, value) in fields {
            guard name.hasSuffix("Nanoseconds") else {
                members.append((name, .integer(value)))
                continue
            }
            let (product, overflow) = value.multipliedReportingOverflow(by: unit)
            guard !overflow else { return nil }
            members.append((name, .integer(product)))
        }
        return try? AnyRateLimitStrategy(strategy: kind, json: .object(members))
    }
}
