import RateLimitCore

// Random registry scenarios (Spec/Registry.md, the forms of Spec/vectors/scenarios/README.md "The
// registry"), answered by the reference registry: rules of any strategy over a few key families,
// so that exact rules, nested prefixes, the default rule and keys no rule matches all meet; a key
// cap often below the keys in play, so that keys are evicted and refused; and every operation on
// keys, rules and waiters, at instants that may go back (REG-3).

extension ScenarioGenerator {
    /// The keys a story uses: two exact keys, two nested prefix families, and keys only the
    /// default rule (if any) matches.
    private static let registryKeys = ["a", "b", "u:1", "u:2", "u:x1", "u:xy", "v:1", "z"]
    /// The patterns rules are drawn from: each matches some of `registryKeys`.
    private static let registryPatterns: [JSONValue] = [
        pattern("exact", "a"), pattern("exact", "u:xy"), pattern("prefix", "u:"), pattern("prefix", "u:x"),
        pattern("prefix", "v:"), .object([("match", .string("any"))]),
    ]

    private static func pattern(_ match: String, _ key: String) -> JSONValue {
        .object([("match", .string(match)), ("key", .string(key))])
    }

    static func registry(steps: Int, swarm: Swarm, using rng: inout SeededGenerator)
        -> (JSONValue, Int64, [(Int64, JSONValue)])?
    {
        func draw(_ kind: String? = nil) -> AnyRateLimitStrategy? {
            TraceGenerator.configuration(
                kind ?? rng.pick(AnyRateLimitStrategy.identifiers), sizes: swarm.sizes, using: &rng)
        }
        // 1 to 4 rules of distinct patterns (a pattern given twice is a refusal the vectors cover).
        var patterns = registryPatterns
        var rules: [(pattern: JSONValue, limit: AnyRateLimitStrategy)] = []
        var members: [JSONValue] = []
        for _ in 0..<rng.int(in: 1...4) {
            guard let strategy = draw() else { return nil }
            let index = Int(rng.int(in: 0...Int64(patterns.count - 1)))
            let keys = patterns.remove(at: index)
            let span = TraceGenerator.characteristicNanoseconds(strategy)
            let overflow: JSONValue =
                rng.chance(40)
                ? .object([("policy", .string("reject"))])
                : .object([
                    ("policy", .string("queue")),
                    ("queueLimit", .integer(rng.chance(70) ? rng.int(in: 0...8) : rng.logUniform(in: 9...1_000_000))),
                    (
                        "timeoutNanoseconds",
                        rng.chance(50) ? .null : .integer(rng.logUniform(in: 0...min(Int64.max / 8, span) * 4))
                    ),
                ])
            let threshold = rng.chance(50) ? 0 : rng.logUniform(in: 0...max(1, strategy.maximumPermits))
            members.append(
                .object([
                    ("keys", keys), ("limit", limit(strategy)), ("overflow", overflow),
                    ("warningThreshold", .integer(threshold)),
                ]))
            rules.append((keys, strategy))
        }
        // A cap below the keys in play half the time: eviction of idle keys and refusals (REG-12).
        let maximumKeys = rng.chance(50) ? rng.int(in: 1...4) : rng.logUniform(in: 5...1_000_000, edges: [8])
        let configuration = JSONValue.object([("rules", .array(members)), ("maximumKeys", .integer(maximumKeys))])
        let span = rules.map { TraceGenerator.characteristicNanoseconds($0.limit) }.min() ?? 1
        let largest = rules.map(\.limit.maximumPermits).max() ?? 1
        let createdAt = TraceGenerator.firstInstant(using: &rng)
        var now = createdAt
        var ticket: Int64 = 0
        var events: [(Int64, JSONValue)] = []
        for step in 0..<steps {
            now = TraceGenerator.nextInstant(after: now, span: span, retryAfter: nil, times: swarm.times, using: &rng)
            let key = JSONValue.string(rng.pick(registryKeys))
            var permits = TraceGenerator.permits(maximum: largest, remaining: nil, using: &rng)
            if permits < 0, !swarm.events.contains(.invalid) { permits = 1 }
            let priority = JSONValue.string(rng.pick(["low", "normal", "high", "critical"]))
            func event(_ kind: String, _ members: (String, JSONValue)...) -> JSONValue {
                .object([("kind", .string(kind))] + members)
            }
            let next: JSONValue
            if step == steps - 1, rng.chance(30) {
                next = event("close")
            } else {
                switch rng.int(in: 0...99) {
                case 0..<30:
                    ticket += 1
                    var members: [(String, JSONValue)] = [
                        ("kind", .string("acquire")), ("key", key), ("ticket", .integer(ticket)),
                        ("permits", .integer(permits)), ("priority", priority),
                    ]
                    if rng.chance(40) {
                        members.append(
                            ("timeoutNanoseconds", .integer(rng.logUniform(in: 0...min(Int64.max / 8, span) * 4))))
                    }
                    next = .object(members)
                case 30..<45:
                    next = event("tryAcquire", ("key", key), ("permits", .integer(permits)), ("priority", priority))
                case 45..<50:
                    next = event("availability", ("key", key), ("permits", .integer(permits)), ("priority", priority))
                case 50..<56 where ticket > 0: next = event("cancel", ("ticket", .integer(rng.int(in: 1...ticket))))
                case 56..<61:
                    next = event("release", ("key", key), ("permits", .integer(rng.logUniform(in: 0...largest))))
                case 61..<64 where swarm.events.contains(.reset): next = event("reset", ("key", key))
                case 64..<65 where swarm.events.contains(.reset): next = event("resetAll")
                case 65..<68 where swarm.events.contains(.reconfigure):
                    // Mostly of the rule's own strategy, sometimes of another.
                    let kind = rng.chance(70) ? rng.pick(rules).limit.kind : nil
                    guard let replacement = draw(kind) else { continue }
                    next = event("reconfigure", ("key", key), ("limit", limit(replacement)))
                case 68..<70: next = event("restoreRule", ("key", key))
                case 70..<72 where swarm.events.contains(.reconfigure):
                    let rule = rng.chance(90) ? rng.pick(rules).pattern : rng.pick(registryPatterns)
                    guard let replacement = draw() else { continue }
                    next = event("reconfigureRule", ("rule", rule), ("limit", limit(replacement)))
                case 72..<76:
                    // Until an instant already past, sometimes; mostly a few spans ahead.
                    let ahead = rng.logUniform(in: 0...min(Int64.max / 8, span) * 4)
                    let until =
                        rng.chance(20) ? rng.int(in: 0...now) : now > Int64.max - ahead ? Int64.max : now + ahead
                    next = event("throttle", ("key", key), ("until", .integer(until)))
                case 76..<79: next = event("disable", ("key", key))
                case 79..<82: next = event("resume", ("key", key))
                case 82..<85: next = event("remove", ("key", key))
                case 85..<90: next = event("quota", ("key", key))
                case 90..<93: next = event("inspect")
                default: next = event("advance")
                }
            }
            events.append((now, next))
            if next["kind"]?.string == "close" { break }
        }
        return (configuration, createdAt, events)
    }

}
