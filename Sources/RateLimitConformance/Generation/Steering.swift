import RateLimitCore

// Coverage-steered random traces. A swarm drawn blindly (Swarm.swift) reaches a rare corner only
// by luck: a GCRA that goes wrong at its 1,000th admission needs a long history of admissions, a
// log capped at 64 entries needs 65 admissions in one window. So each strategy's traces are
// planned from what the traces before them reached, as coverage-guided fuzzers (AFL, libFuzzer)
// keep the inputs that reach something new: after its first four short traces, each trace's
// regimes (of instants with one of sizes) are chosen, every pair tried once first, then favouring
// the pairs whose recent traces reached features no trace had reached. History lengths are not
// steered, since a longer history always reaches higher counts and would take the whole run: the
// first steered trace is a long march (at least a quarter of the most steps), the next two a
// medium and a short one, then 65% short, 22% medium and 13% long, as blind traces are. A feature is an
// outcome (the event and the Spec's answer, so a clause branch: TB-4 admitted, TB-6 refused, ...)
// with one quantity of its step bucketed by bit length, as AFL buckets its edge counts: how many
// steps of the trace had that outcome, how many in a row, the permits asked, the remaining
// answered, the wait, the time since the last step, the configuration's largest acquire. A
// trace that admits 1,024 times, or 70 times in a row, or answers a remaining above 64, reaches a
// bucket the short ones did not, and the regimes that got there are drawn more. Everything is drawn from the seed and the reference's answers, never the implementation's:
// trace K of a seed is the same against every implementation, and `--trace K` replays it by
// planning traces 0 to K − 1 again.

/// How long a trace's history is: the band its number of steps is drawn from, log-uniformly.
package enum HistoryLength: String, CaseIterable, Hashable, Sendable {
    /// Up to 100 steps.
    case short
    /// 101 to 1,000 steps.
    case medium
    /// 1,001 steps to the run's most (`--random-steps`, 10,000 by default).
    case long

    /// The band within `maximum`.
    func band(maximum: Int) -> ClosedRange<Int64> {
        let bound = Int64(max(1, maximum))
        switch self {
        case .short: return 1...min(bound, 100)
        case .medium: return min(bound, 101)...min(bound, 1_000)
        case .long: return min(bound, 1_001)...bound
        }
    }
}

/// What one random trace was drawn from: its swarm and its number of steps.
package struct TracePlan: Hashable, Sendable {
    package var swarm: Swarm
    package var steps: Int
    /// Its history length's band; `nil` for the first short traces, drawn as they always were.
    package var history: HistoryLength?
}

/// An outcome with one quantity of its step, bucketed by bit length; see `Steering.swift`.
package struct CoverageFeature: Hashable, Sendable {
    /// What the step was and what the Spec answered (``outcome(of:answer:)``).
    package var outcome: UInt8
    /// Which quantity: ``Aspect``.
    package var aspect: UInt8
    /// The quantity's bit length (0 for 0; 65 for a negative value).
    package var bucket: UInt8

    package init(outcome: UInt8, aspect: UInt8, bucket: UInt8) {
        self.outcome = outcome
        self.aspect = aspect
        self.bucket = bucket
    }

    package enum Aspect: UInt8 {
        case stepsInTrace, inARow, permits, remaining, wait, forward, backward, largestAcquire
    }

    /// A value's bucket: its bit length, 65 when negative.
    static func bucket(_ value: Int64) -> UInt8 { value < 0 ? 65 : UInt8(Int64.bitWidth - value.leadingZeroBitCount) }

    /// The outcome of `event` answered `answer`: the clause branch it reaches
    /// (`VectorGenerator.clausesReached`, split by the answer's kind).
    package static func outcome(of event: ConformanceEvent, answer: RateLimitResult) -> UInt8 {
        switch (event, answer) {
        case (.acquire(0), _): 0
        case (.acquire, .allowed): 1
        case (.acquire, .delayed): 2
        case (.acquire, .rejected): 3
        case (.acquire, .rejectedUntilRelease): 4
        case (.acquire, .neverAllowed): 5
        case (.acquire, .invalid): 6
        case (.release, .invalid): 7
        case (.release, _): 8
        case (.reset, _): 9
        case (.reconfigure, .invalid): 10
        case (.reconfigure, _): 11
        }
    }

    /// Every feature `steps` reach, answered `answers`, from a limiter first configured `initial`.
    package static func features(
        of steps: [TraceStep], answers: [RateLimitResult], initial: AnyRateLimitStrategy, createdAt: Int64
    ) -> Set<CoverageFeature> {
        var features: Set<CoverageFeature> = []
        var counts = [Int64](repeating: 0, count: 12)
        var previous: UInt8?
        var inARow: Int64 = 0
        var largest = initial.maximumPermits
        var last = createdAt
        for (step, answer) in zip(steps, answers) {
            let outcome = outcome(of: step.event, answer: answer)
            func add(_ aspect: Aspect, _ value: Int64) {
                features.insert(CoverageFeature(outcome: outcome, aspect: aspect.rawValue, bucket: bucket(value)))
            }
            counts[Int(outcome)] += 1
            inARow = previous == outcome ? inARow + 1 : 1
            previous = outcome
            add(.inARow, inARow)
            switch step.event {
            case .acquire(let permits), .release(let permits): add(.permits, permits)
            case .reset: break
            case .reconfigure(let replacement):
                if answer.isAdmitted { largest = replacement.maximumPermits }
            }
            if let remaining = answer.remaining { add(.remaining, remaining) }
            switch answer {
            case .rejected(let wait), .delayed(let wait, _): add(.wait, wait)
            default: break
            }
            let (elapsed, overflow) = step.now.subtractingReportingOverflow(last)
            if !overflow { elapsed >= 0 ? add(.forward, elapsed) : add(.backward, -elapsed) }
            last = step.now
            add(.largestAcquire, largest)
        }
        for (outcome, count) in counts.enumerated() where count > 0 {
            features.insert(
                CoverageFeature(
                    outcome: UInt8(outcome), aspect: Aspect.stepsInTrace.rawValue, bucket: bucket(count)))
        }
        return features
    }
}

/// Plans one strategy's random traces from what those before them reached; see `Steering.swift`.
package struct TraceSteering: Sendable {
    /// How recently a value of a dimension reached new features: halved at each of its traces,
    /// then the new features added.
    private struct Arm: Sendable {
        var score: Int64 = 0
    }

    /// The first traces are short and drawn blindly: a failure found there is small.
    package static let blindTraces = 4

    package let strategy: String
    /// The index of the next trace it plans.
    package private(set) var next = 0
    /// Every feature the traces so far reached.
    package private(set) var seen: Set<CoverageFeature> = []
    private var regimes: [Regimes: Arm] = [:]

    package init(strategy: String) { self.strategy = strategy }

    /// A regime of instants with one of sizes: chosen together, since what a regime of instants
    /// reaches depends on the sizes (a burst of 1 ns steps overfills a log of 64 entries only
    /// with a limit above 64).
    struct Regimes: Hashable {
        var times: TimeRegime
        var sizes: SizeRegime
    }

    /// The regimes in the order they are first tried: every regime of instants with mid-range
    /// sizes, then with large ones, small ones and mixed; the regimes that reach far corners
    /// (marches and bursts) first within each.
    static let regimeOrder: [Regimes] = [SizeRegime.medium, .large, .small, .mixed].flatMap { sizes in
        [TimeRegime.march, .burst, .dense, .edges, .classic, .idle, .backwards].map { Regimes(times: $0, sizes: sizes) }
    }
    /// The history lengths of the first steered traces.
    static let historyOrder: [HistoryLength] = [.long, .medium, .short]

    /// Trace ``next`` within `profile` (`options` give the seed and the most steps), and what it
    /// was drawn from; records what it reached. `nil` for a strategy the generator does not know.
    package mutating func draw(options: ConformanceOptions, profile: ImplementationProfile) -> (Trace, TracePlan)? {
        let index = next
        next += 1
        var rng = SeededGenerator(seed: options.seed, stream: strategy, index: index)
        let plan: TracePlan
        if index < Self.blindTraces {
            let swarm = Swarm.draw(using: &rng)
            plan = TracePlan(
                swarm: swarm,
                steps: TraceGenerator.length(
                    of: index, maximum: options.randomSteps, times: swarm.times, using: &rng),
                history: nil)
        } else {
            plan = self.plan(maximum: options.randomSteps, using: &rng)
        }
        guard
            let (trace, answers, unscaled) = TraceGenerator.generated(
                strategy, steps: plan.steps, profile: profile, swarm: plan.swarm, using: &rng)
        else { return nil }
        let reached = CoverageFeature.features(
            of: unscaled.steps, answers: answers, initial: unscaled.configuration, createdAt: unscaled.createdAt)
        let new = Int64(reached.subtracting(seen).count)
        seen.formUnion(reached)
        if plan.history != nil {
            let key = Regimes(times: plan.swarm.times, sizes: plan.swarm.sizes)
            regimes[key] = Arm(score: (regimes[key]?.score ?? 0) / 2 + new)
        }
        return (trace, plan)
    }

    /// Plans the traces before `index` again (they are not run): `--trace K` replays trace K.
    package mutating func skip(to index: Int, options: ConformanceOptions, profile: ImplementationProfile) {
        while next < index, draw(options: options, profile: profile) != nil {}
        next = max(next, index)
    }

    /// A steered plan: regimes (of instants and sizes) not yet tried, else drawn in proportion to
    /// their score (plus one, so that none is ever starved); a history length as the file's
    /// comment says; the events kept as a blind swarm keeps them.
    private func plan(maximum: Int, using rng: inout SeededGenerator) -> TracePlan {
        func choose<Value: Hashable>(_ order: [Value], _ arms: [Value: Arm]) -> Value {
            if let untried = order.first(where: { arms[$0] == nil }) { return untried }
            let weights = order.map { (arms[$0]?.score ?? 0) + 1 }
            var roll = rng.int(in: 0...(weights.reduce(0, +) - 1))
            for (value, weight) in zip(order, weights) {
                if roll < weight { return value }
                roll -= weight
            }
            return order[0]
        }
        let regime = choose(Self.regimeOrder, regimes)
        let steered = next - 1 - Self.blindTraces
        let history: HistoryLength
        if steered < Self.historyOrder.count {
            history = Self.historyOrder[steered]
        } else {
            let roll = rng.int(in: 0...99)
            history = roll < 65 ? .short : roll < 87 ? .medium : .long
        }
        // The first long one has room for 1,000 admissions and 257 windows.
        var band = history.band(maximum: maximum)
        if steered == 0 { band = max(band.lowerBound, band.upperBound / 4)...band.upperBound }
        let everything = rng.chance(25)
        let swarm = Swarm(
            events: Set(ImplementationProfile.Event.allCases.filter { _ in everything || rng.chance(50) }),
            releases: everything || rng.chance(50), sizes: regime.sizes, times: regime.times)
        return TracePlan(
            swarm: swarm, steps: Int(rng.logUniform(in: band)), history: history)
    }
}
