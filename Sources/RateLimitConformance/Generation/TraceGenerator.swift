import RateLimitCore

/// Draws for generated traces; the generator itself is the core's (`SeededGenerator`).
extension SeededGenerator {
    /// A uniformly drawn value in `range`.
    package mutating func int(in range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }

    /// True with probability `percent` / 100.
    package mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    /// One of `choices`, uniformly.
    package mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &self)] }

    /// A count: usually small, sometimes one of the extreme values.
    package mutating func count(small: ClosedRange<Int64> = 1...6) -> Int64 {
        chance(85) ? int(in: small) : pick(TraceGenerator.extremeValues)
    }

    /// A span in nanoseconds: usually small, sometimes one of the extreme values.
    package mutating func span(small: ClosedRange<Int64> = 1...40) -> Int64 {
        chance(85) ? int(in: small) : pick(TraceGenerator.extremeValues)
    }
}

/// A configuration and a sequence of events at instants: what the randomized runs and shrinking
/// work on.
public struct Trace: Hashable, Sendable {
    public var configuration: AnyRateLimitStrategy
    public var createdAt: Int64
    public var steps: [TraceStep]
    /// A vector story's reconfigures to configurations the Spec refuses, each at its position
    /// among ``steps`` (none in a random trace).
    package var refusedReconfigures: [RefusedReconfigureStep] = []

    public init(configuration: AnyRateLimitStrategy, createdAt: Int64, steps: [TraceStep]) {
        self.configuration = configuration
        self.createdAt = createdAt
        self.steps = steps
    }
}

extension AnyRateLimitStrategy {
    /// A fixed window (FW-13) or segmented window (SWS-13) aligned as `alignment` says, when it
    /// has that variant; any other configuration unchanged.
    package func aligned(_ alignment: WindowAlignment) -> AnyRateLimitStrategy {
        switch self {
        case .fixedWindow(let window): .fixedWindow(window.aligned(alignment))
        case .slidingWindowSegments(let window): window.aligned(alignment).map(Self.slidingWindowSegments) ?? self
        default: self
        }
    }

    /// Where a fixed window's windows or a segmented window's segments start (FW-13, SWS-13); the
    /// origin for every other strategy.
    package var alignment: WindowAlignment {
        switch self {
        case .fixedWindow(let window): window.alignment
        case .slidingWindowSegments(let window): window.alignment
        default: .origin
        }
    }

    /// The alignments `strategy` has (FW-13, SWS-13): the origin alone for most.
    package static func alignments(of strategy: String) -> [WindowAlignment] {
        switch strategy {
        case FixedWindow.identifier: WindowAlignment.allCases
        case SlidingWindowSegments.identifier: [.origin, .creation]
        default: [.origin]
        }
    }
}

extension Trace {
    /// The trace with its configuration and every reconfigure's aligned as `alignment` says.
    package func aligned(_ alignment: WindowAlignment) -> Trace {
        guard configuration.alignment != alignment || steps.contains(where: \.isReconfigure) else { return self }
        var aligned = self
        aligned.configuration = configuration.aligned(alignment)
        for index in aligned.steps.indices {
            if case .reconfigure(let next) = aligned.steps[index].event {
                aligned.steps[index].event = .reconfigure(next.aligned(alignment))
            }
        }
        return aligned
    }
}

/// One event of a trace at its instant.
public struct TraceStep: Hashable, Sendable {
    public var now: Int64
    public var event: ConformanceEvent

    public init(now: Int64, event: ConformanceEvent) {
        self.now = now
        self.event = event
    }

    var isReconfigure: Bool {
        if case .reconfigure = event { true } else { false }
    }
}

/// Random configurations, events and instants biased to the edges the Spec cares about: window
/// and period edges, exact retry-afters, zero and excess permits, time going backwards, long idle
/// periods and the end of the timeline.
package enum TraceGenerator {
    /// Values near the integer limits that random configurations sometimes take (31_557_600_000_000_000
    /// is a year in nanoseconds).
    package static let extremeValues: [Int64] = [
        1, 2, 7, 1_000, 1_000_000_007, 31_557_600_000_000_000, Int64.max / 3, Int64.max - 1,
        Int64.max,
    ]

    /// A valid configuration of `strategy` (one of ``AnyRateLimitStrategy/identifiers``) whose
    /// spans, multiplied by `unit`, still form a valid configuration; its counts and spans drawn in
    /// `sizes` (`small` draws as the generator always did), each span then multiplied by
    /// `spanScale` (a profile's configuration unit in clock units, ``ImplementationProfile/spanScale``).
    /// `nil` for an identifier it does not know, or when no draw fits the scales.
    package static func configuration(
        _ strategy: String, unit: Int64 = 1, spanScale: Int64 = 1, sizes: SizeRegime = .small,
        using rng: inout SeededGenerator
    ) -> AnyRateLimitStrategy? {
        for _ in 0..<10_000 {
            do {
                // An identifier this generator does not know draws nothing (rather than another strategy).
                guard let drawn = try draw(strategy, sizes: sizes, using: &rng) else { return nil }
                guard let configuration = drawn.scaled(by: spanScale) else { continue }
                if configuration.scaled(by: unit) != nil { return configuration }
            } catch {
                continue  // the Spec refuses the values drawn (CORE-3): draw again
            }
        }
        return nil  // scales so large that nothing drawn fits the timeline
    }

    /// ``configuration(_:unit:spanScale:sizes:using:)`` within `profile`'s units.
    package static func configuration(
        _ strategy: String, within profile: ImplementationProfile, sizes: SizeRegime = .small,
        using rng: inout SeededGenerator
    ) -> AnyRateLimitStrategy? {
        configuration(
            strategy, unit: profile.timeUnitNanoseconds, spanScale: profile.spanScale, sizes: sizes, using: &rng)
    }

    /// A configuration of `strategy` from `rng` in `sizes`, `nil` for an identifier it does not know.
    ///
    /// - Throws: ``RateLimitInputError`` when the Spec refuses the values drawn.
    private static func draw(_ strategy: String, sizes: SizeRegime, using rng: inout SeededGenerator)
        throws(RateLimitInputError) -> AnyRateLimitStrategy?
    {
        // A count and a span of the regime; `small` draws from `small` as the generator always did.
        func count(small range: ClosedRange<Int64> = 1...6) -> Int64 {
            sizes == .small ? rng.count(small: range) : rng.count(sizes)
        }
        func span(small range: ClosedRange<Int64> = 1...40) -> Int64 {
            sizes == .small ? rng.span(small: range) : rng.span(sizes)
        }
        switch strategy {
        case TokenBucket.identifier:
            let capacity = count()
            return .tokenBucket(
                try TokenBucket(
                    capacity: capacity, permitsPerPeriod: count(small: 1...3), periodNanoseconds: span(),
                    initialTokens: rng.chance(50) ? nil : rng.int(in: 0...capacity)))
        case IntervalTokenBucket.identifier:
            let capacity = count()
            return .intervalTokenBucket(
                try IntervalTokenBucket(
                    capacity: capacity, tokensPerInterval: count(small: 1...3), intervalNanoseconds: span(),
                    initialTokens: rng.chance(50) ? nil : rng.int(in: 0...capacity)))
        case GCRA.identifier:
            return .gcra(try GCRA(burst: count(), emissionIntervalNanoseconds: span(small: 1...15)))
        case PayLater.identifier:
            let burst = count()
            return .payLater(
                try PayLater(
                    burst: burst, emissionIntervalNanoseconds: span(small: 1...15),
                    initialTokens: rng.chance(50) ? nil : rng.int(in: 0...burst)))
        case WarmUp.identifier:
            // A period of 0 (no warm-up) is an edge of its own; odd periods leave half-nanosecond thresholds.
            return .warmUp(
                try WarmUp(
                    burst: count(small: 1...4), emissionIntervalNanoseconds: span(small: 1...15),
                    warmUpPeriodNanoseconds: rng.chance(15) ? 0 : span(small: 1...60)))
        case FixedWindow.identifier:
            return .fixedWindow(try FixedWindow(limit: count(), windowNanoseconds: span()))
        case SlidingWindowLog.identifier:
            // The log's memory grows with admissions: small draws keep its limit small.
            let limit = sizes == .small ? rng.int(in: 1...8) : count()
            return .slidingWindowLog(try SlidingWindowLog(limit: limit, windowNanoseconds: span()))
        case SlidingWindowCounter.identifier:
            return .slidingWindowCounter(try SlidingWindowCounter(limit: count(), windowNanoseconds: span()))
        case SlidingWindowSegments.identifier:
            // Segments of 1 ns (the log) and one segment (the fixed window) are edges of their own.
            return .slidingWindowSegments(
                try SlidingWindowSegments(
                    limit: count(), segmentsPerWindow: rng.chance(15) ? 1 : count(small: 1...8),
                    segmentNanoseconds: rng.chance(15) ? 1 : span(small: 1...10)))
        case LeakyBucketMeter.identifier:
            let capacity = count()
            return .leakyBucketMeter(
                try LeakyBucketMeter(
                    capacity: capacity, leakPermitsPerPeriod: count(small: 1...3), periodNanoseconds: span(),
                    initialLevel: rng.chance(50) ? 0 : rng.int(in: 0...capacity)))
        case LeakyBucketQueue.identifier:
            return .leakyBucketQueue(
                try LeakyBucketQueue(
                    queueCapacity: count(small: 0...5) - (rng.chance(10) ? 1 : 0),
                    intervalNanoseconds: span(small: 1...15)))
        case ConcurrencyLimiter.identifier:
            return .concurrency(try ConcurrencyLimiter(limit: count()))
        default:
            return nil
        }
    }

    /// The span instants are drawn around: the time per permit, the window or the interval.
    package static func characteristicNanoseconds(_ configuration: AnyRateLimitStrategy) -> Int64 {
        switch configuration {
        case .tokenBucket(let s): max(1, s.periodNanoseconds / s.permitsPerPeriod)
        case .intervalTokenBucket(let s): s.intervalNanoseconds
        case .gcra(let s): s.emissionIntervalNanoseconds
        case .payLater(let s): s.emissionIntervalNanoseconds
        case .warmUp(let s): s.emissionIntervalNanoseconds
        case .fixedWindow(let s): s.windowNanoseconds
        case .slidingWindowLog(let s): s.windowNanoseconds
        case .slidingWindowCounter(let s): s.windowNanoseconds
        case .slidingWindowSegments(let s): s.segmentNanoseconds
        case .leakyBucketMeter(let s): max(1, s.periodNanoseconds / s.leakPermitsPerPeriod)
        case .leakyBucketQueue(let s): s.intervalNanoseconds
        case .concurrency: 10
        }
    }

    /// An event: mostly acquires of edge-biased sizes, sometimes releases, resets and reconfigures.
    /// An event `profile` lacks becomes `acquire(1)`, and permits beyond its largest its largest
    /// (drawn the same way, so the Spec's own profile draws what it always drew). A swarm other
    /// than ``Swarm/classic`` draws only its own events and sizes, and acquires sized against
    /// `remaining`, the last answer's (its neighbours are where off-by-ones live).
    /// With `bounded`, a strategy that admits any size (pay later, warm-up: PL-7, WU-7) is asked
    /// at most four bursts, a debt the rest of a long history can pay.
    package static func event(
        for configuration: AnyRateLimitStrategy, profile: ImplementationProfile = .full, swarm: Swarm = .classic,
        remaining: Int64? = nil, bounded: Bool = false, using rng: inout SeededGenerator
    ) -> ConformanceEvent {
        guard swarm != .classic else { return classicEvent(for: configuration, profile: profile, using: &rng) }
        var maximum = configuration.maximumPermits
        // The most an acquire may ask for: the maximum, or four bursts when bounded.
        var ceiling = Int64.max
        if bounded {
            var burst: Int64?
            if case .payLater(let strategy) = configuration { burst = strategy.burst }
            if case .warmUp(let strategy) = configuration { burst = strategy.burst }
            if let burst {
                maximum = burst > Int64.max / 4 ? .max : burst * 4
                ceiling = maximum
            }
        }
        let events = swarm.events.intersection(profile.events)
        let roll = rng.int(in: 0...99)
        let concurrency = configuration.kind == ConcurrencyLimiter.identifier
        let releases = concurrency ? 35 : (swarm.releases && events.contains(.invalid) ? 2 : 0)
        // A burst fills a window: a reset or a reconfigure would empty it again.
        if swarm.times == .burst, roll >= 3 || rng.chance(90) { return .acquire(1) }
        if roll < 3, events.contains(.reset) { return .reset }
        if roll >= 3, roll < 6, events.contains(.reconfigure),
            let replacement = Self.configuration(
                configuration.kind, within: profile, sizes: swarm.sizes, using: &rng)
        {
            return .reconfigure(replacement)
        }
        if roll >= 6, roll < 6 + releases {
            let held = remaining.map { max(0, maximum - $0) }
            let amount =
                rng.chance(3) && events.contains(.invalid)
                ? -1
                : rng.chance(50) ? (held ?? 1) : rng.logUniform(in: 0...max(1, maximum), edges: held.map { [$0] } ?? [])
            return .release(profile.expressible(amount))
        }
        let permits = min(
            profile.expressible(Self.permits(maximum: maximum, remaining: remaining, using: &rng)), ceiling)
        if permits > 1, !events.contains(.weighted) { return .acquire(1) }
        if permits == 0, !events.contains(.query) { return .acquire(1) }
        if permits < 0, !events.contains(.invalid) { return .acquire(1) }
        return .acquire(permits)
    }

    /// The classic event (``Swarm/classic``): what the generator always drew.
    private static func classicEvent(
        for configuration: AnyRateLimitStrategy, profile: ImplementationProfile, using rng: inout SeededGenerator
    ) -> ConformanceEvent {
        let maximum = configuration.maximumPermits
        let roll = rng.int(in: 0...99)
        let releases = configuration.kind == ConcurrencyLimiter.identifier ? 35 : 2
        if roll < 3 { return profile.events.contains(.reset) ? .reset : .acquire(1) }
        if roll < 6,
            let replacement = Self.configuration(configuration.kind, within: profile, using: &rng)
        {
            return profile.events.contains(.reconfigure) ? .reconfigure(replacement) : .acquire(1)
        }
        if roll < 6 + releases {
            return .release(rng.chance(3) ? -1 : profile.expressible(rng.int(in: 0...maximum / 2 + 1)))
        }
        // Past the profile's largest either way, its edge: the nearest the implementation can be asked.
        let permits = profile.expressible(permits(maximum: maximum, using: &rng))
        if permits > 1, !profile.events.contains(.weighted) { return .acquire(1) }
        if permits == 0, !profile.events.contains(.query) { return .acquire(1) }
        return .acquire(permits)
    }

    /// Permits for an acquire: 0, 1, the maximum, one above it, a random amount, or bad input.
    package static func permits(maximum: Int64, using rng: inout SeededGenerator) -> Int64 {
        switch rng.int(in: 0...99) {
        case 0..<5: 0
        case 5..<45: 1
        case 45..<55: maximum
        case 55..<60: maximum == .max ? .max : maximum + 1
        case 60..<62: rng.pick([-1, Int64.min])
        default: rng.int(in: 1...min(maximum, 8))
        }
    }

    /// Permits for an acquire of a swarm: 0, 1, the maximum and one above it, bad input, the last
    /// `remaining` and its neighbours, or any amount up to the maximum, log-uniformly.
    package static func permits(maximum: Int64, remaining: Int64?, using rng: inout SeededGenerator) -> Int64 {
        func above(_ value: Int64) -> Int64 { value == .max ? .max : value + 1 }
        switch rng.int(in: 0...99) {
        case 0..<4: return 0
        case 4..<30: return 1
        case 30..<38: return maximum
        case 38..<42: return above(maximum)
        case 42..<44: return rng.pick([-1, Int64.min])
        case 44..<62:
            guard let remaining else { return rng.logUniform(in: 1...maximum) }
            return max(1, rng.pick([remaining - 1, remaining, above(remaining)]))
        default: return rng.logUniform(in: 1...maximum, edges: [maximum, remaining ?? 1])
        }
    }

    /// The next instant: repeats, one-nanosecond steps, window edges (span − 1, span, span + 1),
    /// exact retry-afters, long idles, jumps back, and the end of the timeline; in `times`, mostly
    /// the ones that regime is about.
    package static func nextInstant(
        after now: Int64, span: Int64, retryAfter: Int64?, times: TimeRegime = .classic,
        using rng: inout SeededGenerator
    ) -> Int64 {
        func forward(_ delta: Int64) -> Int64 { now > Int64.max - delta ? Int64.max : now + delta }
        func nudge(_ value: Int64, _ by: Int64) -> Int64 {
            let (sum, overflow) = value.addingReportingOverflow(by)
            return max(0, overflow ? value : sum)
        }
        func back(upTo span: Int64) -> Int64 { max(0, now - rng.int(in: 1...max(1, span))) }
        let twice = span > Int64.max / 2 ? Int64.max : span * 2
        switch times {
        case .classic: break
        case .dense:
            switch rng.int(in: 0...99) {
            case 0..<40: return now
            case 40..<70: return forward(1)
            case 70..<95: return forward(rng.int(in: 0...max(1, span / 16)))
            default: break
            }
        case .edges:
            switch rng.int(in: 0...99) {
            case 0..<45: return forward(nudge(span, rng.int(in: -1...1)))
            case 45..<85: return forward(nudge(retryAfter ?? span, rng.chance(60) ? 0 : rng.pick([-1, 1])))
            default: break
            }
        case .idle:
            if rng.chance(60) { return forward(rng.logUniform(in: max(1, span)...Int64.max)) }
        case .backwards:
            if rng.chance(45) { return back(upTo: twice) }
        case .burst:
            switch rng.int(in: 0...99) {
            case 0..<20: return now
            case 20..<95: return forward(1)  // distinct instants: entries a log cannot merge
            case 95..<99: return forward(rng.int(in: 0...max(1, span / 64)))
            default: return forward(nudge(span, 1))
            }
        case .march:
            switch rng.int(in: 0...99) {
            case 0..<60: return forward(nudge(span, rng.int(in: -1...1)))
            case 60..<85: return forward(span > Int64.max / 3 ? span : span * rng.int(in: 2...3))
            default: break
            }
        }
        switch rng.int(in: 0...99) {
        case 0..<18: return now
        case 18..<28: return forward(1)
        case 28..<46: return forward(nudge(span, rng.int(in: -1...1)))
        case 46..<58: return forward(nudge(retryAfter ?? span, rng.chance(70) ? 0 : -1))
        case 58..<78: return forward(rng.int(in: 0...max(1, span / 3)))
        case 78..<88: return forward(rng.int(in: 0...(span > Int64.max / 3 ? Int64.max : span * 3)))
        case 88..<96: return back(upTo: twice)
        case 96..<98: return forward(rng.pick([1_000_000_000, 86_400_000_000_000, Int64.max / 2]))
        default: return Int64.max - rng.int(in: 0...span)
        }
    }

    /// The first instant of a trace: near the origin, sometimes near the end of the timeline
    /// (`last`, in the trace's unit).
    package static func firstInstant(last: Int64 = .max, using rng: inout SeededGenerator) -> Int64 {
        rng.chance(90) ? min(last, rng.int(in: 0...100)) : max(0, last - rng.int(in: 0...1_000))
    }

    /// How many steps random trace `index` has, at most `maximum`: histories grow with the run, as
    /// QuickCheck's sizes do. A strategy's first four traces have at most 20 steps (a failure found
    /// there is small); after them, four in five have up to 100, one in seven 101 to 1,000 and one
    /// in sixteen 1,001 to `maximum`, log-uniformly within each band.
    package static func length(
        of index: Int, maximum: Int, times: TimeRegime = .classic, using rng: inout SeededGenerator
    ) -> Int {
        let bound = Int64(max(1, maximum))
        let band: ClosedRange<Int64>
        switch (index, rng.int(in: 0...99)) {
        case (0..<4, _): band = 1...20
        case (_, _) where times == .burst: band = 30...max(30, bound)
        case (_, _) where times == .march: band = 100...max(100, bound)
        case (_, 0..<65): band = 1...100
        case (_, 65..<87): band = 101...1_000
        default: band = 1_001...max(1_001, bound)
        }
        return Int(min(bound, rng.logUniform(in: band)))
    }

    /// A random trace of `steps` events for `strategy`, within `profile` (CONF-7): drawn in the
    /// profile's time unit, then scaled to nanoseconds; never past its largest instant, never
    /// backwards on a monotonic clock, only events it has (and, of those, only the `swarm`'s).
    /// Retry-afters steer later instants, so the trace is drawn against the reference model as it goes.
    package static func trace(
        _ strategy: String, steps: Int, profile: ImplementationProfile = .full, swarm: Swarm = .classic,
        using rng: inout SeededGenerator
    ) -> Trace? {
        generated(strategy, steps: steps, profile: profile, swarm: swarm, using: &rng)?.trace
    }

    /// ``trace(_:steps:profile:swarm:using:)``, with the reference's answers to it as drawn, in
    /// the profile's time unit, and the trace in that unit (what coverage is measured on).
    package static func generated(
        _ strategy: String, steps: Int, profile: ImplementationProfile = .full, swarm: Swarm = .classic,
        using rng: inout SeededGenerator
    ) -> (trace: Trace, answers: [RateLimitResult], unscaled: Trace)? {
        let unit = profile.timeUnitNanoseconds
        let last = profile.largestInstantNanoseconds / unit
        guard let initial = Self.configuration(strategy, within: profile, sizes: swarm.sizes, using: &rng) else {
            return nil
        }
        var configuration = initial
        // The end of the timeline absorbs a trace: nothing moves past it, a monotonic clock never
        // comes back, and there a limiter can only refuse. A long history (more than 100 steps)
        // starts near the origin and stays within the first half of the timeline until its last
        // tenth, so that its thousands of steps exercise a limiter that still admits; the short
        // traces and the last tenth visit the end.
        let long = steps > 100
        let createdAt = long ? min(last, rng.int(in: 0...100)) : firstInstant(last: last, using: &rng)
        let finalStretch = long ? steps - steps / 10 : 0
        let halfway = last / 2
        var reference = ReferenceLimiter(configuration, at: .generated(createdAt))
        var now = createdAt
        var retryAfter: Int64?
        var remaining: Int64?
        var result: [TraceStep] = []
        var answers: [RateLimitResult] = []
        result.reserveCapacity(steps)
        answers.reserveCapacity(steps)
        let invalid = profile.events.contains(.invalid) && swarm.events.contains(.invalid)
        for position in 0..<steps {
            // A debt past the end of the timeline absorbs a trace as the end itself does (PL-7).
            var event = Self.event(
                for: configuration, profile: profile, swarm: swarm, remaining: remaining,
                bounded: position < finalStretch, using: &rng)
            let span = characteristicNanoseconds(configuration)
            var next = min(
                last, nextInstant(after: now, span: span, retryAfter: retryAfter, times: swarm.times, using: &rng))
            if position < finalStretch, next > halfway {
                // Past halfway too early: a step of the span instead, or a repeat.
                let (stepped, overflow) = now.addingReportingOverflow(span)
                next = !overflow && stepped <= halfway ? stepped : now
            }
            now = profile.monotonic ? max(now, next) : next
            var answer = reference.apply(event, at: .generated(now))
            if answer.isInvalid, !invalid {
                event = .acquire(1)  // an invalid event changed nothing (CORE-8)
                answer = reference.apply(event, at: .generated(now))
            }
            result.append(TraceStep(now: now, event: event))
            answers.append(answer)
            if case .rejected(let wait) = answer { retryAfter = wait }
            if let left = answer.remaining { remaining = left }
            if case .reconfigure(let replacement) = event, case .allowed = answer { configuration = replacement }
        }
        var trace = Trace(configuration: initial, createdAt: createdAt, steps: result)
        if profile.createdAtFirstEvent, let first = result.first { trace.createdAt = first.now }
        guard let scaled = trace.scaled(by: unit) else { return nil }
        return (scaled, answers, trace)
    }
}

extension RateLimitInstant {
    /// The instant of a value this module produced itself and knows to be non-negative
    /// (generated instants, parsed instants after validation).
    static func generated(_ nanoseconds: Int64) -> RateLimitInstant {
        (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin
    }
}

/// One step of a trace as it runs: an event, or a vector story's reconfigure to a configuration
/// the Spec refuses (which no ``ConformanceEvent`` carries).
enum RunStep {
    case event(TraceStep)
    case refusedReconfigure(RefusedReconfigureStep)

    var now: Int64 {
        switch self {
        case .event(let step): step.now
        case .refusedReconfigure(let step): step.now
        }
    }

    /// As reports write the event: `acquire(2)`, `reconfigure({...})`.
    var description: String {
        switch self {
        case .event(let step): step.event.description
        case .refusedReconfigure(let step): "reconfigure(\(step.configuration.compactText))"
        }
    }
}

extension Trace {
    /// The steps as they run: ``steps``, with the reconfigures to refused configurations at their
    /// positions (a random trace has none, so this is its ``steps``).
    var mergedSteps: [RunStep] {
        guard !refusedReconfigures.isEmpty else { return steps.map(RunStep.event) }
        var result: [RunStep] = []
        var refused = refusedReconfigures[...]
        for (position, step) in steps.enumerated() {
            while let next = refused.first, next.position <= position {
                result.append(.refusedReconfigure(next))
                refused.removeFirst()
            }
            result.append(.event(step))
        }
        return result + refused.map(RunStep.refusedReconfigure)
    }
}
