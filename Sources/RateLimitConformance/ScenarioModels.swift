import RateLimitCore

// The reference models of the scenario vectors: the Swift machines (CompositeLimit, WaitQueue)
// behind the JSON forms that Spec/vectors/scenarios/README.md defines. Reading a form checks it
// strictly (every member named, nothing extra), so a malformed case is refused, not guessed at.

// MARK: - Composite limits (Spec/CompositeLimit.md)

/// A composite limit (COMP): `{"limits": [{"strategy": ..., "configuration": {...}}, ...]}`.
struct CompositeScenario: ScenarioModel {
    var limiter: RateLimiter<CompositeLimit>

    static func make(_ configuration: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> Result<any ScenarioModel, RateLimitInputError>
    {
        try composite(configuration).map { CompositeScenario(limiter: RateLimiter($0, at: .generated(now))) }
    }

    /// The composite, or the first refusal of COMP-2: no limit at all; then, limit by limit in
    /// order, a limit its own strategy refuses (with that refusal), or a leaky bucket queue.
    static func composite(_ json: JSONValue) throws(ConformanceFormatError) -> Result<
        CompositeLimit, RateLimitInputError
    > {
        guard json.keys == ["limits"], let items = json["limits"]?.array else {
            throw ConformanceFormatError("a composite configuration is {\"limits\": [...]}, got \(json.compactText)")
        }
        var limits: [AnyRateLimitStrategy] = []
        for (index, item) in items.enumerated() {
            guard item.keys.sorted() == ["configuration", "strategy"], let strategy = item["strategy"]?.string,
                let fields = item["configuration"]
            else {
                throw ConformanceFormatError(
                    "limits[\(index)] is {\"strategy\": ..., \"configuration\": {...}}, got \(item.compactText)")
            }
            switch readConfiguration(strategy, fields) {
            case .success(let limit): limits.append(limit)
            case .failure(let refusal): return .failure(refusal)
            }
            if strategy == LeakyBucketQueue.identifier {
                return .failure(RateLimitInputError(field: "limits[\(index)]", value: nil, problem: .notSupported))
            }
        }
        do {
            return .success(try CompositeLimit(limits))
        } catch {
            return .failure(error)
        }
    }

    mutating func apply(_ event: JSONValue, at now: Int64) throws(ConformanceFormatError) -> JSONValue {
        let instant = RateLimitInstant.generated(now)
        if event["kind"]?.string == "reconfigure" {
            guard event.keys.sorted() == ["configuration", "kind"], let fields = event["configuration"] else {
                throw ConformanceFormatError("a reconfigure event has exactly \"kind\" and \"configuration\"")
            }
            switch try Self.composite(fields) {
            case .success(let composite): return limiter.step(.reconfigure(composite), at: instant).json
            case .failure(let refusal): return RateLimitResult.invalid(refusal).json  // CORE-13: nothing changes
            }
        }
        switch try ConformanceEvent(json: event, strategy: CompositeLimit.identifier) {
        case .acquire(let permits): return limiter.step(.acquire(permits), at: instant).json
        case .release(let permits): return limiter.step(.release(permits), at: instant).json
        case .reset: return limiter.step(.reset, at: instant).json
        case .reconfigure: throw ConformanceFormatError("a reconfigure is read above")
        }
    }
}

/// A strategy's configuration from every one of its fields, or the Spec's refusal of it.
private func readConfiguration(_ strategy: String, _ fields: JSONValue) -> Result<
    AnyRateLimitStrategy, RateLimitInputError
> {
    do {
        return .success(try AnyRateLimitStrategy(strategy: strategy, json: fields, requiringEveryField: true))
    } catch {
        return .failure(
            error.refusedBySpec
                ?? RateLimitInputError(
                    field: "configuration", value: nil, problem: .notSupported, reason: error.message))
    }
}

// MARK: - The wait queue (Spec/WaitQueue.md)

/// A wait queue (WQ): `{"strategy": ..., "configuration": {...}, "queueLimit": n}`. Tickets are
/// the story's names for its requests; instants never go back (WQ-11: the queue runs on a
/// monotonic clock); `close` is a story's last event.
struct WaitQueueScenario: ScenarioModel {
    var queue: WaitQueue<AnyRateLimitStrategy>
    let strategy: String
    var tickets: [Int64: WaitTicket] = [:]
    var names: [WaitTicket: Int64] = [:]
    var latest: Int64
    var closed = false

    static func make(_ configuration: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> Result<any ScenarioModel, RateLimitInputError>
    {
        guard configuration.keys.sorted() == ["configuration", "queueLimit", "strategy"],
            let strategy = configuration["strategy"]?.string, let fields = configuration["configuration"],
            let queueLimit = configuration["queueLimit"]?.int64
        else {
            throw ConformanceFormatError(
                "a wait-queue configuration is {\"strategy\", \"configuration\", \"queueLimit\" (an integer)}")
        }
        // WQ-1: the strategy's configuration is checked first, then the queue limit.
        let limit: AnyRateLimitStrategy
        switch readConfiguration(strategy, fields) {
        case .success(let read): limit = read
        case .failure(let refusal): return .failure(refusal)
        }
        do {
            let queue = try WaitQueue(limit, queueLimit: queueLimit, at: .generated(now))
            return .success(WaitQueueScenario(queue: queue, strategy: strategy, latest: now))
        } catch {
            return .failure(error)
        }
    }

    mutating func apply(_ event: JSONValue, at now: Int64) throws(ConformanceFormatError) -> JSONValue {
        guard !closed else { throw ConformanceFormatError("close is a wait-queue story's last event") }
        guard now >= latest else {
            throw ConformanceFormatError(
                "a wait-queue story's instants never go back (WQ-11): \(now) after \(latest)")
        }
        latest = now
        let instant = RateLimitInstant.generated(now)
        guard let kind = event["kind"]?.string else { throw ConformanceFormatError("an event needs a string \"kind\"") }
        func members(_ required: [String], optional: [String] = []) throws(ConformanceFormatError) {
            let given = Set(event.keys)
            guard given.isSuperset(of: required + ["kind"]), given.isSubset(of: required + optional + ["kind"]) else {
                throw ConformanceFormatError(
                    "a \(kind) event has \((["kind"] + required).joined(separator: ", "))\(optional.isEmpty ? "" : " and optionally \(optional.joined(separator: ", "))")"
                )
            }
        }
        switch kind {
        case "acquire":
            try members(["ticket", "permits", "priority"], optional: ["deadline"])
            let name = try Self.integer(event, "ticket")
            guard name >= 1, tickets[name] == nil else {
                throw ConformanceFormatError("ticket \(name) is not a new positive integer")
            }
            let deadline = try event["deadline"].map { _ throws(ConformanceFormatError) in
                try RateLimitInstant.generated(Self.instant(event, "deadline"))
            }
            let (ticket, effects) = queue.acquire(
                try Self.integer(event, "permits"), priority: try Self.priority(event), deadline: deadline, at: instant)
            tickets[name] = ticket
            names[ticket] = name
            return answer(effects, at: instant)
        case "tryAcquire":
            try members(["permits", "priority"])
            let (outcome, effects) = queue.tryAcquire(
                try Self.integer(event, "permits"), priority: try Self.priority(event), at: instant)
            return answer(effects, at: instant, ("outcome", outcome.json))
        case "availability":
            try members(["permits", "priority"])
            let outcome = queue.availability(
                of: try Self.integer(event, "permits"), priority: try Self.priority(event), at: instant)
            return .object([("outcome", outcome.json)])
        case "cancel":
            try members(["ticket"])
            let name = try Self.integer(event, "ticket")
            guard let ticket = tickets[name] else {
                throw ConformanceFormatError("cancel of ticket \(name), never issued")
            }
            let effects = queue.cancel(ticket, at: instant)
            return answer(effects, at: instant)
        case "advance":
            try members([])
            let effects = queue.advance(to: instant)
            return answer(effects, at: instant)
        case "release":
            try members(["permits"])
            let (result, effects) = queue.release(try Self.integer(event, "permits"), at: instant)
            return answer(effects, at: instant, ("result", result.json))
        case "reset":
            try members([])
            let (result, effects) = queue.reset(at: instant)
            return answer(effects, at: instant, ("result", result.json))
        case "reconfigure":
            try members(["configuration"])
            guard case .success(let configuration) = readConfiguration(strategy, event["configuration"] ?? .null) else {
                throw ConformanceFormatError(
                    "a wait-queue reconfigure carries a configuration of \(strategy) the Spec accepts")
            }
            let (result, effects) = queue.reconfigure(configuration, at: instant)
            return answer(effects, at: instant, ("result", result.json))
        case "close":
            try members([])
            closed = true
            let effects = queue.close(at: instant)
            return answer(effects, at: instant)
        default:
            throw ConformanceFormatError("unknown wait-queue event kind \"\(kind)\"")
        }
    }

    /// `{..., "completions": [...], "nextWakeUp": n or null}` after an operation at `now`. (Called
    /// with the effects in a local: an argument that mutates the queue would run after `self` was
    /// read for the call, and the wake-up would be the old queue's.)
    private func answer(_ effects: RateLimitEffects, at now: RateLimitInstant, _ first: (String, JSONValue)...)
        -> JSONValue
    {
        let completions = effects.completions.map { completion in
            JSONValue.object([
                ("ticket", names[completion.ticket].map(JSONValue.integer) ?? .null),
                ("outcome", completion.outcome.json), ("at", .integer(completion.at.nanoseconds)),
            ])
        }
        let wake = queue.nextWakeUp(at: now).map { JSONValue.integer($0.nanoseconds) } ?? .null
        return .object(first + [("completions", .array(completions)), ("nextWakeUp", wake)])
    }

    private static func integer(_ event: JSONValue, _ name: String) throws(ConformanceFormatError) -> Int64 {
        guard let value = event[name]?.int64 else { throw ConformanceFormatError("\"\(name)\" must be an integer") }
        return value
    }

    private static func instant(_ event: JSONValue, _ name: String) throws(ConformanceFormatError) -> Int64 {
        let value = try integer(event, name)
        guard value >= 0 else { throw ConformanceFormatError("\"\(name)\" is an instant, not \(value)") }
        return value
    }

    private static func priority(_ event: JSONValue) throws(ConformanceFormatError) -> RateLimitPriority {
        guard let name = event["priority"]?.string, let priority = RateLimitPriority(name: name) else {
            throw ConformanceFormatError("\"priority\" is one of low, normal, high, critical")
        }
        return priority
    }
}

extension RateLimitPriority {
    /// `low`, `normal`, `high`, `critical`: the name the vectors use.
    package var name: String {
        switch self {
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .critical: "critical"
        }
    }

    package init?(name: String) {
        guard let priority = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = priority
    }
}

extension WaitOutcome {
    /// `{"kind": "granted", "result": {...}}`, `{"kind": "rejected", "reason": "limited",
    /// "retryAfterNanoseconds": 7}`, `{"kind": "timedOut"}`, ... (Spec/vectors/scenarios/README.md).
    package var json: JSONValue {
        switch self {
        case .granted(let answer): .object([("kind", .string("granted")), ("result", answer.json)])
        case .bypassed: .object([("kind", .string("bypassed"))])
        case .rejected(let reason): .object([("kind", .string("rejected"))] + reason.members)
        case .timedOut: .object([("kind", .string("timedOut"))])
        case .cancelled: .object([("kind", .string("cancelled"))])
        case .closed: .object([("kind", .string("closed"))])
        }
    }
}

extension WaitRejection {
    /// The reason's members: `"reason"` and what it carries.
    var members: [(String, JSONValue)] {
        switch self {
        case .limited(let wait): [("reason", .string("limited")), ("retryAfterNanoseconds", .integer(wait))]
        case .untilRelease(let shortfall): [("reason", .string("untilRelease")), ("shortfall", .integer(shortfall))]
        case .waitersAhead: [("reason", .string("waitersAhead"))]
        case .queueFull: [("reason", .string("queueFull"))]
        case .neverAllowed: [("reason", .string("neverAllowed"))]
        case .unknownKey: [("reason", .string("unknownKey"))]
        case .tooManyKeys: [("reason", .string("tooManyKeys"))]
        case .invalid(let error):
            // `invalid`'s field, problem and maximum, as a result carries them.
            switch RateLimitResult.invalid(error).json {
            case .object(let members): [("reason", .string("invalid"))] + members.filter { $0.0 != "kind" }
            case .null, .bool, .integer, .otherNumber, .string, .array: [("reason", .string("invalid"))]
            }
        }
    }
}
