import RateLimitCore

// Random scenarios of the machines beyond the strategies (composite limits, the wait queue, the
// registry (RegistryGenerator.swift), the adaptive rate and concurrency), answered by the reference models: what a run explores of the
// extensions an implementation declares, beside their hand-written vectors. A generated scenario
// is a scenario case like those of Spec/vectors/scenarios, so it is sent, answered and compared
// exactly as they are. Each scenario is a swarm too (Swarm.swift): its sizes, its instants and,
// for the wait queue, the events it uses (priorities, deadlines, retries, cancellations,
// reconfigures) are drawn per scenario.

/// Random scenarios; see `ScenarioGenerator.swift`.
package enum ScenarioGenerator {
    /// The machines it generates scenarios of: all of them.
    package static let machines: [ScenarioMachine] = ScenarioMachine.allCases

    /// Scenario `index` of `machine` under `seed`, of up to `maximumSteps` steps (most have far
    /// fewer, as random traces do), its answers the reference model's; `nil` for a machine it does
    /// not generate. Its optional events (resets, reconfigures, invalid ones) are drawn among
    /// `events` only, the implementation's profiles' (CONF-7), and a composite's limits among
    /// `strategies`, the ones the implementation declares (all when nil).
    package static func scenario(
        _ machine: ScenarioMachine, seed: UInt64, index: Int, maximumSteps: Int,
        events: Set<ImplementationProfile.Event> = Set(ImplementationProfile.Event.allCases),
        strategies: Set<String>? = nil
    ) -> ScenarioCase? {
        guard machines.contains(machine) else { return nil }
        var rng = SeededGenerator(seed: seed, stream: "scenario \(machine.rawValue)", index: index)
        var swarm = Swarm.draw(using: &rng)
        swarm.events.formIntersection(events)
        let steps = TraceGenerator.length(of: index, maximum: maximumSteps, times: swarm.times, using: &rng)
        let id = "\(machine.rawValue)/random-seed-\(seed)-scenario-\(index)"
        // A draw the reference refuses (a wait-queue reconfigure of another size regime that does
        // not fit, say) is drawn again from the same stream.
        for _ in 0..<20 {
            let story: (JSONValue, Int64, [(Int64, JSONValue)])?
            switch machine {
            case .composite: story = composite(steps: steps, swarm: swarm, strategies: strategies, using: &rng)
            case .waitQueue:
                // One scenario in four is a crowd (and some others by chance): whatever the budget,
                // a run sees a queue fill past what a small fixed array holds.
                let crowd = index % 4 == 1 || rng.chance(20)
                story = waitQueue(
                    steps: crowd ? max(steps, min(maximumSteps, 80)) : steps, crowd: crowd, swarm: swarm, using: &rng)
            case .adaptiveRate: story = adaptiveRate(steps: steps, using: &rng)
            case .adaptiveConcurrency: story = adaptiveConcurrency(steps: steps, using: &rng)
            case .registry: story = registry(steps: steps, swarm: swarm, using: &rng)
            }
            if let story, let answered = answered(machine, id: id, swarm: swarm, story) { return answered }
        }
        return nil
    }

    /// The story with the reference model's answers, `nil` when the reference refuses it.
    private static func answered(
        _ machine: ScenarioMachine, id: String, swarm: Swarm, _ story: (JSONValue, Int64, [(Int64, JSONValue)])
    ) -> ScenarioCase? {
        let (configuration, createdAt, events) = story
        return answered(
            machine, id: id, summary: "generated: \(swarm)", configuration: configuration, createdAt: createdAt,
            events: events)
    }

    /// A story of `machine` with the reference model's answers, `nil` when the reference refuses
    /// its configuration or one of its events (a cancel of a ticket a shrink removed, say).
    package static func answered(
        _ machine: ScenarioMachine, id: String, summary: String, configuration: JSONValue, createdAt: Int64,
        events: [(Int64, JSONValue)]
    ) -> ScenarioCase? {
        guard case .success(var model)? = try? machine.reference(configuration, at: createdAt) else { return nil }
        var steps: [ScenarioStep] = []
        steps.reserveCapacity(events.count)
        for (now, event) in events {
            guard let answer = try? model.apply(event, at: now) else { return nil }
            steps.append(ScenarioStep(now: now, event: event, expected: answer, comment: "generated"))
        }
        return ScenarioCase(
            id: id, summary: summary, clauses: [], configuration: configuration,
            body: .story(createdAt: createdAt, steps: steps))
    }

    /// `{"strategy": ..., "configuration": {...}}`.
    static func limit(_ configuration: AnyRateLimitStrategy) -> JSONValue {
        .object([("strategy", .string(configuration.kind)), ("configuration", configuration.json)])
    }

    // MARK: Composite limits

    private static func composite(
        steps: Int, swarm: Swarm, strategies: Set<String>?, using rng: inout SeededGenerator
    ) -> (JSONValue, Int64, [(Int64, JSONValue)])? {
        let kinds = AnyRateLimitStrategy.identifiers.filter {
            $0 != LeakyBucketQueue.identifier && strategies?.contains($0) != false
        }
        guard !kinds.isEmpty else { return nil }
        func draw() -> [AnyRateLimitStrategy] {
            (0..<Int(rng.int(in: 2...4))).compactMap { _ in
                TraceGenerator.configuration(rng.pick(kinds), sizes: swarm.sizes, using: &rng)
            }
        }
        func json(_ limits: [AnyRateLimitStrategy]) -> JSONValue { .object([("limits", .array(limits.map(limit)))]) }
        var limits = draw()
        let createdAt = TraceGenerator.firstInstant(using: &rng)
        var now = createdAt
        var reference = try? CompositeLimit(limits)
        var events: [(Int64, JSONValue)] = []
        for _ in 0..<steps {
            let span = limits.map(TraceGenerator.characteristicNanoseconds).min() ?? 1
            now = TraceGenerator.nextInstant(after: now, span: span, retryAfter: nil, times: swarm.times, using: &rng)
            let maximum = reference?.maximumPermits ?? 1
            let event: JSONValue
            switch rng.int(in: 0...99) {
            case 0..<3 where swarm.events.contains(.reset): event = ConformanceEvent.reset.json
            case 3..<6 where swarm.events.contains(.reconfigure):
                // Mostly the same limits in other sizes (COMP-8 applies it limit by limit), now and
                // then another shape (refused).
                let resized = limits.compactMap {
                    TraceGenerator.configuration($0.kind, sizes: swarm.sizes, using: &rng)
                }
                let replacement = rng.chance(75) && resized.count == limits.count ? resized : draw()
                if let composite = try? CompositeLimit(replacement) {
                    (limits, reference) = (replacement, composite)
                }
                event = .object([("kind", .string("reconfigure")), ("configuration", json(replacement))])
            case 6..<30 where limits.contains { $0.kind == ConcurrencyLimiter.identifier }:
                event = ConformanceEvent.release(rng.logUniform(in: 0...maximum)).json
            default:
                var permits = TraceGenerator.permits(maximum: maximum, remaining: nil, using: &rng)
                if permits < 0, !swarm.events.contains(.invalid) { permits = 1 }
                event = ConformanceEvent.acquire(permits).json
            }
            events.append((now, event))
        }
        return (json(limits), createdAt, events)
    }

    // MARK: The wait queue

    private static func waitQueue(steps: Int, crowd: Bool, swarm: Swarm, using rng: inout SeededGenerator)
        -> (JSONValue, Int64, [(Int64, JSONValue)])?
    {
        // A crowd's limit is one that refuses at once and keeps refusing at one instant (pay later
        // admits into debt, a leaky-bucket queue and warm-up delay or refill within nanoseconds).
        var kind = rng.pick(
            crowd
                ? AnyRateLimitStrategy.identifiers.filter {
                    ![PayLater.identifier, LeakyBucketQueue.identifier, WarmUp.identifier].contains($0)
                } : AnyRateLimitStrategy.identifiers)
        // A crowd: a limit of small sizes (so that it refuses soon and requests queue), a queue
        // limit above any small fixed array (16, 64, 256), at least 80 steps, and nothing that
        // leaves the queue early, so that waiters pile up past what such an array holds.
        var drawn = TraceGenerator.configuration(kind, sizes: crowd ? .small : swarm.sizes, using: &rng)
        // Small sizes may still hold a large burst or a window near the end of time (edges): a
        // crowd draws again, up to 50 times, for a limit that admits at most 16 at once and frees
        // them within 1000 s, then takes a small token bucket.
        func unfit(_ limit: AnyRateLimitStrategy?) -> Bool {
            guard let limit else { return true }
            // Any number of its configuration past 10^12 (a span, or a count of segments that
            // makes the window span the timeline) keeps its permits for good.
            let numbers = limit.json.keys.compactMap { limit.json[$0]?.int64 }
            return limit.maximumPermits > 16 || TraceGenerator.characteristicNanoseconds(limit) > 1_000_000_000_000
                || numbers.contains { $0 > 1_000_000_000_000 }
        }
        for _ in 0..<50 where crowd && unfit(drawn) {
            drawn = TraceGenerator.configuration(kind, sizes: .small, using: &rng)
        }
        if crowd, unfit(drawn),
            let bucket = try? TokenBucket(capacity: 4, permitsPerPeriod: 1, periodNanoseconds: 1_000)
        {
            // None fits after 50 draws: a small token bucket, so that the crowd still queues.
            (kind, drawn) = (TokenBucket.identifier, .tokenBucket(bucket))
        }
        guard let strategy = drawn else { return nil }
        let queueLimit =
            crowd
            ? rng.logUniform(in: 17...1_000_000, edges: [64, 256])
            : rng.chance(70) ? rng.int(in: 0...8) : rng.logUniform(in: 9...Int64.max)
        let configuration = JSONValue.object([
            ("strategy", .string(kind)), ("configuration", strategy.json), ("queueLimit", .integer(queueLimit)),
        ])
        // A crowd starts far from the end of the timeline, where a window's end never comes.
        let createdAt = crowd ? rng.int(in: 0...1_000_000_000) : TraceGenerator.firstInstant(using: &rng)
        let span = TraceGenerator.characteristicNanoseconds(strategy)
        // Which of the queue's features this scenario uses: a swarm of its own.
        let deadlines = !crowd && rng.chance(60)
        let retries = rng.chance(40)
        let cancels = !crowd && rng.chance(50)
        let priorities: [String] =
            crowd
            ? ["low", "normal", "high"]  // critical requests pass the queue
            : rng.chance(40)
                ? ["normal"] : rng.chance(50) ? ["low", "normal", "high"] : ["low", "normal", "high", "critical"]
        var now = createdAt
        var ticket: Int64 = 0
        var events: [(Int64, JSONValue)] = []
        for step in 0..<steps {
            let next = TraceGenerator.nextInstant(
                after: now, span: span, retryAfter: nil, times: swarm.times, using: &rng)
            // The queue's clock never goes back (WQ-11); a crowd arrives at once (its first 40
            // steps at one instant, however short the limit's window or interval), then mostly so.
            now = crowd && (step < 40 || rng.chance(90)) ? now : max(now, next)
            let permits = { (rng: inout SeededGenerator) -> Int64 in
                if crowd, step < 40 || rng.chance(80) { return 1 }  // many waiters, not a few large ones
                let drawn = TraceGenerator.permits(maximum: strategy.maximumPermits, remaining: nil, using: &rng)
                return drawn < 0 && !swarm.events.contains(.invalid) ? 1 : drawn
            }
            let priority = JSONValue.string(rng.pick(priorities))
            let event: JSONValue
            if step == steps - 1, rng.chance(30) {
                event = .object([("kind", .string("close"))])
            } else {
                switch crowd && (step < 40 || rng.chance(70)) ? 0 : rng.int(in: 0...99) {
                case 0..<45:
                    ticket += 1
                    var members: [(String, JSONValue)] = [
                        ("kind", .string("acquire")), ("ticket", .integer(ticket)),
                        ("permits", .integer(permits(&rng))), ("priority", priority),
                    ]
                    if deadlines, rng.chance(60) {
                        let wait =
                            rng.chance(20) ? 0 : rng.int(in: 0...(span > Int64.max / 4 ? Int64.max / 4 : span * 4))
                        members.append(("deadline", .integer(now > Int64.max - wait ? Int64.max : now + wait)))
                    }
                    if retries, rng.chance(40) { members.append(("arrival", .integer(rng.int(in: createdAt...now)))) }
                    event = .object(members)
                case 45..<57:
                    event = .object([
                        ("kind", .string("tryAcquire")), ("permits", .integer(permits(&rng))), ("priority", priority),
                    ])
                case 57..<62:
                    event = .object([
                        ("kind", .string("availability")), ("permits", .integer(permits(&rng))), ("priority", priority),
                    ])
                case 62..<74 where cancels && ticket > 0:
                    event = .object([("kind", .string("cancel")), ("ticket", .integer(rng.int(in: 1...ticket)))])
                case 74..<86 where kind == ConcurrencyLimiter.identifier:
                    event = .object([("kind", .string("release")), ("permits", .integer(permits(&rng)))])
                case 86..<89 where swarm.events.contains(.reset):
                    event = .object([("kind", .string("reset"))])
                case 89..<92 where swarm.events.contains(.reconfigure):
                    let replacement = TraceGenerator.configuration(kind, sizes: swarm.sizes, using: &rng) ?? strategy
                    event = .object([("kind", .string("reconfigure")), ("configuration", replacement.json)])
                default:
                    event = .object([("kind", .string("advance"))])
                }
            }
            events.append((now, event))
            if event["kind"]?.string == "close" { break }
        }
        return (configuration, createdAt, events)
    }

    // MARK: The adaptive machines

    /// A response's status: mostly served and refused, sometimes an edge (0, 999, out of range).
    private static func status(using rng: inout SeededGenerator) -> Int64 {
        switch rng.int(in: 0...99) {
        case 0..<55: 200
        case 55..<80: 429
        case 80..<88: 503
        case 88..<94: rng.pick([100, 204, 301, 404, 500, 502])
        default: rng.pick([-1, 0, 99, 999, 1_000])
        }
    }

    private static func adaptiveRate(steps: Int, using rng: inout SeededGenerator)
        -> (JSONValue, Int64, [(Int64, JSONValue)])
    {
        let maximum = rng.chance(70) ? rng.int(in: 1...50) : rng.logUniform(in: 51...Int64.max)
        let initial = rng.int(in: 1...maximum)
        let minimum = rng.int(in: 1...initial)
        let period = rng.chance(70) ? rng.int(in: 1...200) : rng.logUniform(in: 201...Int64.max)
        let fields: [(String, Int64)] = [
            ("periodNanoseconds", period), ("maximumRate", maximum), ("initialRate", initial),
            ("minimumRate", minimum), ("burst", rng.logUniform(in: 1...maximum)), ("startIncrease", rng.int(in: 0...4)),
            ("increase", rng.int(in: 0...3)), ("decreasePercent", rng.int(in: 1...99)),
            ("steepDecreasePercent", rng.int(in: 1...99)), ("coolDownNanoseconds", rng.int(in: 0...period)),
        ]
        let createdAt = TraceGenerator.firstInstant(using: &rng)
        return (
            .object(fields.map { ($0.0, .integer($0.1)) }), createdAt,
            adaptiveEvents(from: createdAt, steps: steps, span: period, stated: true, using: &rng)
        )
    }

    private static func adaptiveConcurrency(steps: Int, using rng: inout SeededGenerator)
        -> (JSONValue, Int64, [(Int64, JSONValue)])
    {
        let maximum = rng.chance(70) ? rng.int(in: 1...50) : rng.logUniform(in: 51...Int64.max)
        let initial = rng.int(in: 1...maximum)
        let alpha = rng.int(in: 0...6)
        let window = rng.logUniform(in: 1...1_000_000_000)
        let fields: [(String, Int64)] = [
            ("maximumLimit", maximum), ("initialLimit", initial), ("minimumLimit", rng.int(in: 1...initial)),
            ("alpha", alpha), ("beta", alpha + rng.int(in: 0...6)), ("decreasePercent", rng.int(in: 1...99)),
            ("coolDownNanoseconds", rng.int(in: 0...1_000)), ("baselineWindowNanoseconds", window),
        ]
        let createdAt = TraceGenerator.firstInstant(using: &rng)
        return (
            .object(fields.map { ($0.0, .integer($0.1)) }), createdAt,
            adaptiveEvents(from: createdAt, steps: steps, span: max(1, window / 10), stated: false, using: &rng)
        )
    }

    /// Responses, failures and resets at instants that may go back (ADAPT-1).
    private static func adaptiveEvents(
        from createdAt: Int64, steps: Int, span: Int64, stated: Bool, using rng: inout SeededGenerator
    ) -> [(Int64, JSONValue)] {
        var now = createdAt
        var events: [(Int64, JSONValue)] = []
        for _ in 0..<steps {
            now = TraceGenerator.nextInstant(after: now, span: span, retryAfter: nil, using: &rng)
            let event: JSONValue
            switch rng.int(in: 0...99) {
            case 0..<3: event = .object([("kind", .string("reset"))])
            case 3..<8: event = .object([("kind", .string("failure"))])
            default:
                var members: [(String, JSONValue)] = [
                    ("kind", .string("response")), ("status", .integer(status(using: &rng))),
                    ("latencyNanoseconds", .integer(rng.chance(3) ? -1 : rng.logUniform(in: 1...1_000_000_000))),
                    ("inFlight", .integer(rng.chance(3) ? -1 : rng.int(in: 0...64))),
                ]
                if stated, rng.chance(15) {
                    members.append(
                        (
                            "stated",
                            .object([
                                ("permits", .integer(rng.chance(5) ? -1 : rng.logUniform(in: 0...1_000_000))),
                                ("windowNanoseconds", .integer(rng.chance(5) ? 0 : rng.logUniform(in: 1...Int64.max))),
                            ])
                        ))
                }
                event = .object(members)
            }
            events.append((now, event))
        }
        return events
    }
}
