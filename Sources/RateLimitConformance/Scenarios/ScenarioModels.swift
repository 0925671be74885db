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
func readConfiguration(_ strategy: String, _ fields: JSONValue) -> Result<
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
    var tickets = ScenarioTickets()
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
        let read = FormReader(event)
        switch kind {
        case "acquire":
            try read.members(["ticket", "permits", "priority"], optional: ["deadline", "arrival"])
            let name = try tickets.newName(read)
            let deadline = try event["deadline"].map { _ throws(ConformanceFormatError) in
                try RateLimitInstant.generated(read.instant("deadline"))
            }
            let arrival = try event["arrival"].map { _ throws(ConformanceFormatError) in
                try RateLimitInstant.generated(read.instant("arrival"))
            }
            let (ticket, effects) = queue.acquire(
                try read.integer("permits"), priority: try read.priority(), deadline: deadline, arrival: arrival,
                at: instant)
            tickets.record(name, ticket)
            return answer(effects, at: instant)
        case "tryAcquire":
            try read.members(["permits", "priority"])
            let (outcome, effects) = queue.tryAcquire(
                try read.integer("permits"), priority: try read.priority(), at: instant)
            return answer(effects, at: instant, ("outcome", outcome.json))
        case "availability":
            try read.members(["permits", "priority"])
            let outcome = queue.availability(
                of: try read.integer("permits"), priority: try read.priority(), at: instant)
            return .object([("outcome", outcome.json)])
        case "cancel":
            try read.members(["ticket"])
            let effects = queue.cancel(try tickets.issued(read), at: instant)
            return answer(effects, at: instant)
        case "advance":
            try read.members([])
            let effects = queue.advance(to: instant)
            return answer(effects, at: instant)
        case "release":
            try read.members(["permits"])
            let (result, effects) = queue.release(try read.integer("permits"), at: instant)
            return answer(effects, at: instant, ("result", result.json))
        case "reset":
            try read.members([])
            let (result, effects) = queue.reset(at: instant)
            return answer(effects, at: instant, ("result", result.json))
        case "reconfigure":
            try read.members(["configuration"])
            guard case .success(let configuration) = readConfiguration(strategy, event["configuration"] ?? .null) else {
                throw ConformanceFormatError(
                    "a wait-queue reconfigure carries a configuration of \(strategy) the Spec accepts")
            }
            let (result, effects) = queue.reconfigure(configuration, at: instant)
            return answer(effects, at: instant, ("result", result.json))
        case "close":
            try read.members([])
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
        let wake = queue.nextWakeUp(at: now).map { JSONValue.integer($0.nanoseconds) } ?? .null
        return .object(first + [("completions", tickets.json(effects.completions)), ("nextWakeUp", wake)])
    }
}

/// A story's names for its requests that may wait (new positive integers), and the machine's tickets.
struct ScenarioTickets {
    private var tickets: [Int64: WaitTicket] = [:]
    private var names: [WaitTicket: Int64] = [:]

    /// The event's `ticket`, a name not used before.
    func newName(_ read: FormReader) throws(ConformanceFormatError) -> Int64 {
        let name = try read.integer("ticket")
        guard name >= 1, tickets[name] == nil else {
            throw ConformanceFormatError("ticket \(name) is not a new positive integer")
        }
        return name
    }

    mutating func record(_ name: Int64, _ ticket: WaitTicket) {
        tickets[name] = ticket
        names[ticket] = name
    }

    /// The machine's ticket for the event's `ticket`.
    func issued(_ read: FormReader) throws(ConformanceFormatError) -> WaitTicket {
        let name = try read.integer("ticket")
        guard let ticket = tickets[name] else { throw ConformanceFormatError("cancel of ticket \(name), never issued") }
        return ticket
    }

    /// `[{"ticket": name, "outcome": {...}, "at": instant}, ...]`, in order.
    func json(_ completions: [WaitCompletion]) -> JSONValue {
        .array(
            completions.map { completion in
                .object([
                    ("ticket", names[completion.ticket].map(JSONValue.integer) ?? .null),
                    ("outcome", completion.outcome.json), ("at", .integer(completion.at.nanoseconds)),
                ])
            })
    }
}

/// The members of an event (or any object of a form), read strictly: a member missing, of the
/// wrong type or not of the form is a ``ConformanceFormatError`` naming it.
struct FormReader {
    let json: JSONValue
    /// The event's `kind` (empty for an object that has none).
    let kind: String

    init(_ json: JSONValue) {
        self.json = json
        kind = json["kind"]?.string ?? ""
    }

    /// Checks that the object has `kind`, every `required` member and no member beyond `optional`.
    func members(_ required: [String], optional: [String] = []) throws(ConformanceFormatError) {
        let given = Set(json.keys)
        guard given.isSuperset(of: required + ["kind"]), given.isSubset(of: required + optional + ["kind"]) else {
            throw ConformanceFormatError(
                "a \(kind) event has \((["kind"] + required).joined(separator: ", "))\(optional.isEmpty ? "" : " and optionally \(optional.joined(separator: ", "))")"
            )
        }
    }

    func integer(_ name: String) throws(ConformanceFormatError) -> Int64 {
        guard let value = json[name]?.int64 else { throw ConformanceFormatError("\"\(name)\" must be an integer") }
        return value
    }

    func string(_ name: String) throws(ConformanceFormatError) -> String {
        guard let value = json[name]?.string else { throw ConformanceFormatError("\"\(name)\" must be a string") }
        return value
    }

    func instant(_ name: String) throws(ConformanceFormatError) -> Int64 {
        let value = try integer(name)
        guard value >= 0 else { throw ConformanceFormatError("\"\(name)\" is an instant, not \(value)") }
        return value
    }

    func priority() throws(ConformanceFormatError) -> RateLimitPriority {
        guard let name = json["priority"]?.string, let priority = RateLimitPriority(name: name) else {
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
