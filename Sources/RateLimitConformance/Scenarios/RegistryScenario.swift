import RateLimitCore

// The registry's reference model for the scenario vectors (Spec/Registry.md): the Swift
// RateLimitRegistry over any strategy, behind the JSON forms Spec/vectors/scenarios/README.md
// defines ("The registry"). Reading a form checks it strictly, as for the other machines.

/// A registry (REG): `{"rules": [{"keys", "limit", "overflow", "warningThreshold"}, ...],
/// "maximumKeys": n}`. Tickets are the story's names for its requests that may wait. Instants may
/// go back: the registry applies each operation at the latest instant it has seen (REG-3).
struct RegistryScenario: ScenarioModel {
    typealias Registry = RateLimitRegistry<AnyRateLimitStrategy>

    var registry: Registry
    var tickets = ScenarioTickets()

    static func make(_ configuration: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> Result<any ScenarioModel, ScenarioRefusal>
    {
        guard configuration.keys.sorted() == ["maximumKeys", "rules"], let items = configuration["rules"]?.array,
            let maximumKeys = configuration["maximumKeys"]?.int64
        else {
            throw ConformanceFormatError(
                "a registry configuration is {\"rules\": [...], \"maximumKeys\": n}, got \(configuration.compactText)")
        }
        // REG-1: rule by rule in order (its pattern, its limit, its overflow, its threshold), then
        // maximumKeys, then patterns given twice.
        var rules: [RateLimitRule<AnyRateLimitStrategy>] = []
        for (index, item) in items.enumerated() {
            guard item.keys.sorted() == ["keys", "limit", "overflow", "warningThreshold"],
                let pattern = item["keys"], let limit = item["limit"], let overflow = item["overflow"],
                let threshold = item["warningThreshold"]?.int64
            else {
                throw ConformanceFormatError(
                    "rules[\(index)] is {\"keys\", \"limit\", \"overflow\", \"warningThreshold\"}, got \(item.compactText)"
                )
            }
            let keys = try Self.pattern(pattern)
            switch keys {
            case .exact(let key), .prefix(let key):
                if key.isEmpty { return .failure(refusal(.emptyKey(keys))) }
            case .anyKey: break
            }
            let strategy: AnyRateLimitStrategy
            switch try Self.limit(limit) {
            case .success(let read): strategy = read
            case .failure(let error): return .failure(refusal(.invalidRule(keys, error)))
            }
            let policy = try Self.overflow(overflow)
            do throws(RateLimitRegistryError) {
                rules.append(try RateLimitRule(keys, strategy, overflow: policy, warningThreshold: threshold))
            } catch {
                return .failure(refusal(error))
            }
        }
        do {
            let registry = try Registry(rules: rules, maximumKeys: Int(maximumKeys), at: .generated(now))
            return .success(RegistryScenario(registry: registry))
        } catch {
            return .failure(refusal(error))
        }
    }

    mutating func apply(_ event: JSONValue, at now: Int64) throws(ConformanceFormatError) -> JSONValue {
        let instant = RateLimitInstant.generated(now)
        guard let kind = event["kind"]?.string else { throw ConformanceFormatError("an event needs a string \"kind\"") }
        let read = FormReader(event)
        func key() throws(ConformanceFormatError) -> String { try read.string("key") }
        switch kind {
        case "acquire":
            try read.members(["key", "ticket", "permits", "priority"], optional: ["timeoutNanoseconds"])
            let name = try tickets.newName(read)
            var timeout: Duration?
            if event["timeoutNanoseconds"] != nil {
                let nanoseconds = try read.integer("timeoutNanoseconds")
                guard nanoseconds >= 0 else { throw ConformanceFormatError("a request's timeout is not negative") }
                timeout = .nanoseconds(nanoseconds)
            }
            let (ticket, effects) = registry.acquire(
                try key(), permits: try read.integer("permits"), priority: try read.priority(),
                timeout: timeout, at: instant)
            tickets.record(name, ticket)
            return answer(effects)
        case "tryAcquire":
            try read.members(["key", "permits", "priority"])
            let (outcome, effects) = registry.tryAcquire(
                try key(), permits: try read.integer("permits"), priority: try read.priority(), at: instant)
            return answer(effects, ("outcome", outcome.json))
        case "availability":
            try read.members(["key", "permits", "priority"])
            let outcome = registry.availability(
                try key(), permits: try read.integer("permits"), priority: try read.priority(), at: instant)
            return .object([("outcome", outcome.json)])
        case "cancel":
            try read.members(["ticket"])
            let effects = registry.cancel(try tickets.issued(read), at: instant)
            return answer(effects)
        case "advance":
            try read.members([])
            let effects = registry.advance(to: instant)
            return answer(effects)
        case "resetAll":
            try read.members([])
            let effects = registry.resetAll(at: instant)
            return answer(effects)
        case "close":
            try read.members([])
            let effects = registry.close(at: instant)
            return answer(effects)
        case "release":
            try read.members(["key", "permits"])
            let (result, effects) = registry.release(
                try key(), permits: try read.integer("permits"), at: instant)
            return answer(effects, ("result", result.json))
        case "reset":
            try read.members(["key"])
            let (result, effects) = registry.reset(try key(), at: instant)
            return answer(effects, ("result", result.json))
        case "reconfigure":
            try read.members(["key", "limit"])
            let (result, effects) = registry.reconfigure(try key(), to: try Self.acceptedLimit(event), at: instant)
            return answer(effects, ("result", result.json))
        case "restoreRule":
            try read.members(["key"])
            let (result, effects) = registry.restoreRule(try key(), at: instant)
            return answer(effects, ("result", result.map(\.json) ?? .null))
        case "reconfigureRule":
            try read.members(["rule", "limit"])
            let pattern = try Self.pattern(event["rule"] ?? .null)
            let limit = try Self.acceptedLimit(event)
            do {
                let effects = try registry.reconfigure(rule: pattern, to: limit, at: instant)
                return answer(effects)
            } catch {
                return .object([("refused", Self.refusal(error).json)])
            }
        case "throttle":
            try read.members(["key", "until"])
            let until = try read.instant("until")
            let effects = registry.throttle(try key(), until: .generated(until), at: instant)
            return answer(effects)
        case "disable", "resume":
            try read.members(["key"])
            let effects =
                kind == "disable" ? registry.disable(try key(), at: instant) : registry.resume(try key(), at: instant)
            return answer(effects)
        case "remove":
            try read.members(["key"])
            let (removed, effects) = registry.remove(try key(), at: instant)
            return answer(effects, ("removed", .bool(removed)))
        case "quota":
            try read.members(["key"])
            return .object([("quota", registry.quota(of: try key(), at: instant).map(\.json) ?? .null)])
        case "inspect":
            try read.members([])
            return .object([
                ("keys", .array(registry.keys.map(JSONValue.string))), ("totals", registry.totals.json),
                ("nextWakeUp", registry.nextWakeUp.map { .integer($0.nanoseconds) } ?? .null),
            ])
        default:
            throw ConformanceFormatError("unknown registry event kind \"\(kind)\"")
        }
    }

    /// `{..., "completions": [...], "events": [...], "nextWakeUp": n or null}` after an operation.
    private func answer(_ effects: RateLimitEffects, _ first: (String, JSONValue)...) -> JSONValue {
        let wake = registry.nextWakeUp.map { JSONValue.integer($0.nanoseconds) } ?? .null
        return .object(
            first + [
                ("completions", tickets.json(effects.completions)), ("events", .array(effects.events.map(\.json))),
                ("nextWakeUp", wake),
            ])
    }

    // MARK: Forms

    /// `{"match": "exact", "key": k}`, `{"match": "prefix", "key": p}` or `{"match": "any"}`.
    static func pattern(_ json: JSONValue) throws(ConformanceFormatError) -> KeyPattern {
        switch (json["match"]?.string, json["key"]?.string, json.keys.count) {
        case ("exact", let key?, 2): .exact(key)
        case ("prefix", let key?, 2): .prefix(key)
        case ("any", nil, 1): .anyKey
        default:
            throw ConformanceFormatError(
                "a key pattern is {\"match\": \"exact\" or \"prefix\", \"key\": ...} or {\"match\": \"any\"}, got \(json.compactText)"
            )
        }
    }

    /// `{"strategy": ..., "configuration": {...}}`, or the Spec's refusal of it.
    private static func limit(_ json: JSONValue) throws(ConformanceFormatError) -> Result<
        AnyRateLimitStrategy, RateLimitInputError
    > {
        guard json.keys.sorted() == ["configuration", "strategy"], let strategy = json["strategy"]?.string,
            let fields = json["configuration"]
        else {
            throw ConformanceFormatError(
                "a limit is {\"strategy\": ..., \"configuration\": {...}}, got \(json.compactText)")
        }
        return readConfiguration(strategy, fields)
    }

    /// An event's `limit`, which must be one the Spec accepts (its refusals are the strategies' vectors).
    private static func acceptedLimit(_ event: JSONValue) throws(ConformanceFormatError) -> AnyRateLimitStrategy {
        guard case .success(let limit) = try limit(event["limit"] ?? .null) else {
            throw ConformanceFormatError("an event's limit is one its strategy accepts")
        }
        return limit
    }

    /// `{"policy": "reject"}` or `{"policy": "queue", "queueLimit": n, "timeoutNanoseconds": t or null}`.
    private static func overflow(_ json: JSONValue) throws(ConformanceFormatError) -> OverflowPolicy {
        switch json["policy"]?.string {
        case "reject" where json.keys == ["policy"]:
            return .reject
        case "queue" where json.keys.sorted() == ["policy", "queueLimit", "timeoutNanoseconds"]:
            let limit = try FormReader(json).integer("queueLimit")
            switch json["timeoutNanoseconds"] {
            case .null?: return .queue(limit: limit, timeout: nil)
            case .integer(let timeout)?: return .queue(limit: limit, timeout: .nanoseconds(timeout))
            default: break
            }
        default: break
        }
        throw ConformanceFormatError(
            "an overflow is {\"policy\": \"reject\"} or {\"policy\": \"queue\", \"queueLimit\": n, \"timeoutNanoseconds\": t or null}, got \(json.compactText)"
        )
    }

    private static func refusal(_ error: RateLimitRegistryError) -> ScenarioRefusal {
        var members: [(String, JSONValue)]
        switch error {
        case .emptyKey(let pattern): members = [("error", .string("emptyKey")), ("rule", pattern.json)]
        case .duplicateRule(let pattern): members = [("error", .string("duplicateRule")), ("rule", pattern.json)]
        case .unknownRule(let pattern): members = [("error", .string("unknownRule")), ("rule", pattern.json)]
        case .invalidMaximumKeys: members = [("error", .string("invalidMaximumKeys"))]
        // An adapter's argument: a scenario's registry has no shards, so no vector holds it.
        case .invalidShardCount: members = [("error", .string("invalidShardCount"))]
        case .invalidRule(let pattern, let input):
            members = [("error", .string("invalidRule")), ("rule", pattern.json)]
            if case .object(let named) = ScenarioRefusal(input).json { members += named }
        }
        return ScenarioRefusal(unchecked: .object(members))
    }

    /// Checks a registry refusal's form: `{"error": e, "rule": pattern}`, with `field`, `problem`
    /// (and `maximum`) for `invalidRule`, and only `error` for `invalidMaximumKeys`.
    static func checkRefusal(_ json: JSONValue) throws(ConformanceFormatError) {
        let error = json["error"]?.string ?? ""
        switch error {
        case "invalidMaximumKeys":
            guard json.keys == ["error"] else { throw ConformanceFormatError("invalidMaximumKeys names nothing else") }
        case "emptyKey", "duplicateRule", "unknownRule":
            guard json.keys.sorted() == ["error", "rule"] else {
                throw ConformanceFormatError("\(error) names the rule, and nothing else")
            }
            _ = try pattern(json["rule"] ?? .null)
        case "invalidRule":
            _ = try pattern(json["rule"] ?? .null)
            _ = try ScenarioRefusal(
                json: .object(json.keys.filter { $0 != "error" && $0 != "rule" }.map { ($0, json[$0] ?? .null) }))
        default:
            throw ConformanceFormatError(
                "a registry refusal's error is emptyKey, duplicateRule, invalidRule, invalidMaximumKeys or unknownRule, got \(json.compactText)"
            )
        }
    }
}

extension ScenarioRefusal {
    /// A refusal built by the reference model, whose form is right by construction.
    fileprivate init(unchecked json: JSONValue) {
        self.json = json
    }
}

extension KeyPattern {
    /// `{"match": "exact", "key": k}`, `{"match": "prefix", "key": p}`, `{"match": "any"}`.
    var json: JSONValue {
        switch self {
        case .exact(let key): .object([("match", .string("exact")), ("key", .string(key))])
        case .prefix(let prefix): .object([("match", .string("prefix")), ("key", .string(prefix))])
        case .anyKey: .object([("match", .string("any"))])
        }
    }
}

extension KeyState {
    /// `{"state": "accepting"}`, `{"state": "throttled", "until": i}`, `{"state": "disabled"}`.
    var json: JSONValue {
        switch self {
        case .accepting: .object([("state", .string("accepting"))])
        case .throttled(let until): .object([("state", .string("throttled")), ("until", .integer(until.nanoseconds))])
        case .disabled: .object([("state", .string("disabled"))])
        }
    }
}

extension QuotaStatus {
    /// `ok`, `warning` or `limited`.
    var name: String {
        switch self {
        case .ok: "ok"
        case .warning: "warning"
        case .limited: "limited"
        }
    }
}

extension KeyStatistics {
    /// `{"admitted", "rejected", "queued", "waiting"}` (REG-9).
    var json: JSONValue {
        .object([
            ("admitted", .integer(Int64(clamping: admitted))), ("rejected", .integer(Int64(clamping: rejected))),
            ("queued", .integer(Int64(clamping: queued))), ("waiting", .integer(Int64(waiting))),
        ])
    }
}

extension KeyQuota {
    /// `{"key", "state", "status", "remaining", "statistics"}` (REG-9).
    var json: JSONValue {
        .object([
            ("key", .string(key)), ("state", state.json), ("status", .string(status.name)),
            ("remaining", .integer(remaining)), ("statistics", statistics.json),
        ])
    }
}

extension RegistryEvent {
    /// `{"kind": "rejected" | "stateChanged" | "statusChanged", "key", ..., "at"}` (REG-10).
    var json: JSONValue {
        switch self {
        case .rejected(let key, let permits, let outcome, let at):
            .object([
                ("kind", .string("rejected")), ("key", .string(key)), ("permits", .integer(permits)),
                ("outcome", outcome.json), ("at", .integer(at.nanoseconds)),
            ])
        case .stateChanged(let key, let from, let to, let at):
            .object([
                ("kind", .string("stateChanged")), ("key", .string(key)), ("from", from.json), ("to", to.json),
                ("at", .integer(at.nanoseconds)),
            ])
        case .statusChanged(let key, let from, let to, let remaining, let at):
            .object([
                ("kind", .string("statusChanged")), ("key", .string(key)), ("from", .string(from.name)),
                ("to", .string(to.name)), ("remaining", .integer(remaining)), ("at", .integer(at.nanoseconds)),
            ])
        }
    }
}
