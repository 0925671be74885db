import RateLimitCore

// The reference models of the adaptive machines' scenario vectors (Spec/AdaptiveLimits.md): the
// Swift machines behind the JSON forms that Spec/vectors/scenarios/README.md defines. A
// configuration is the machine's fields, every one an integer; feedback is a `response`, a
// `failure` or a `reset`; the answer is the limit in force and what changed, or `invalid`.

/// An adaptive machine of the scenario vectors (`adaptive-rate`, `adaptive-concurrency`).
struct AdaptiveScenario<Machine: AdaptiveLimit>: ScenarioModel {
    let machine: Machine
    var state: Machine.State
    /// The limit's members in an answer: `rate` and `burst`, or `limit`.
    let members: @Sendable (Machine.Limit) -> [(String, JSONValue)]

    mutating func apply(_ event: JSONValue, at now: Int64) throws(ConformanceFormatError) -> JSONValue {
        let feedback = try AdaptiveFeedback(json: event)
        switch machine.step(&state, feedback, at: .generated(now)) {
        case .limit(let limit, let change):
            return .object([("kind", .string("limit"))] + members(limit) + [("change", .string(change.rawValue))])
        case .invalid(let error):
            return RateLimitResult.invalid(error).json
        }
    }

    /// Reads `fields` strictly (every one of `names`, integers, nothing else) and builds the
    /// machine: a configuration the Spec refuses is that refusal (ADAPT-2, ADAPT-10).
    static func make(
        _ fields: JSONValue, at now: Int64, names: [String],
        build: ([Int64]) throws(RateLimitInputError) -> Machine,
        members: @escaping @Sendable (Machine.Limit) -> [(String, JSONValue)]
    ) throws(ConformanceFormatError) -> Result<any ScenarioModel, RateLimitInputError> {
        guard fields.keys.sorted() == names.sorted() else {
            throw ConformanceFormatError(
                "a \(Machine.identifier) configuration has exactly \(names.joined(separator: ", ")), got \(fields.compactText)"
            )
        }
        var values: [Int64] = []
        for name in names {
            guard let value = fields[name]?.int64 else {
                throw ConformanceFormatError("\"\(name)\" must be an integer")
            }
            values.append(value)
        }
        do {
            let machine = try build(values)
            return .success(
                AdaptiveScenario(machine: machine, state: machine.initialState(at: .generated(now)), members: members))
        } catch {
            return .failure(error)
        }
    }
}

extension AdaptiveScenario where Machine == AdaptiveRate {
    /// ADAPT-2's fields, in the order of its table.
    static var names: [String] {
        [
            "periodNanoseconds", "maximumRate", "initialRate", "minimumRate", "burst", "startIncrease", "increase",
            "decreasePercent", "steepDecreasePercent", "coolDownNanoseconds",
        ]
    }

    static func make(_ fields: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> Result<any ScenarioModel, RateLimitInputError>
    {
        try make(
            fields, at: now, names: names,
            build: { value throws(RateLimitInputError) in
                try AdaptiveRate(
                    periodNanoseconds: value[0], maximumRate: value[1], initialRate: value[2], minimumRate: value[3],
                    burst: value[4], startIncrease: value[5], increase: value[6], decreasePercent: value[7],
                    steepDecreasePercent: value[8], coolDownNanoseconds: value[9])
            },
            members: { [("rate", .integer($0.rate)), ("burst", .integer($0.burst))] })
    }
}

extension AdaptiveScenario where Machine == AdaptiveConcurrency {
    /// ADAPT-10's fields, in the order of its table.
    static var names: [String] {
        [
            "maximumLimit", "initialLimit", "minimumLimit", "alpha", "beta", "decreasePercent", "coolDownNanoseconds",
            "baselineWindowNanoseconds",
        ]
    }

    static func make(_ fields: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> Result<any ScenarioModel, RateLimitInputError>
    {
        try make(
            fields, at: now, names: names,
            build: { value throws(RateLimitInputError) in
                try AdaptiveConcurrency(
                    maximumLimit: value[0], initialLimit: value[1], minimumLimit: value[2], alpha: value[3],
                    beta: value[4], decreasePercent: value[5], coolDownNanoseconds: value[6],
                    baselineWindowNanoseconds: value[7])
            },
            members: { [("limit", .integer($0))] })
    }
}

extension AdaptiveFeedback {
    /// `{"kind": "response", "status": s, "latencyNanoseconds": l, "inFlight": n}` (with an optional
    /// `"stated": {"permits": q, "windowNanoseconds": w}`), `{"kind": "failure"}` or `{"kind": "reset"}`.
    ///
    /// - Throws: ``ConformanceFormatError`` for any other form. Values out of range are not
    ///   refused here: the machine answers them `invalid` (ADAPT-1).
    package init(json: JSONValue) throws(ConformanceFormatError) {
        let read = FormReader(json)
        switch read.kind {
        case "response":
            try read.members(["status", "latencyNanoseconds", "inFlight"], optional: ["stated"])
            var stated: StatedRate?
            if let value = json["stated"] {
                guard value.keys.sorted() == ["permits", "windowNanoseconds"], let permits = value["permits"]?.int64,
                    let window = value["windowNanoseconds"]?.int64
                else {
                    throw ConformanceFormatError(
                        "\"stated\" is {\"permits\": q, \"windowNanoseconds\": w}, two integers")
                }
                stated = StatedRate(permits: permits, windowNanoseconds: window)
            }
            self = .response(
                status: try read.integer("status"), latencyNanoseconds: try read.integer("latencyNanoseconds"),
                inFlight: try read.integer("inFlight"), stated: stated)
        case "failure":
            try read.members([])
            self = .failure
        case "reset":
            try read.members([])
            self = .reset
        default:
            throw ConformanceFormatError(
                "an adaptive machine's feedback is a response, a failure or a reset, got \(json.compactText)")
        }
    }

    /// The form ``init(json:)`` reads.
    package var json: JSONValue {
        switch self {
        case .response(let status, let latency, let inFlight, let stated):
            let head: [(String, JSONValue)] = [
                ("kind", .string("response")), ("status", .integer(status)), ("latencyNanoseconds", .integer(latency)),
                ("inFlight", .integer(inFlight)),
            ]
            guard let stated else { return .object(head) }
            return .object(
                head + [
                    (
                        "stated",
                        .object([
                            ("permits", .integer(stated.permits)),
                            ("windowNanoseconds", .integer(stated.windowNanoseconds)),
                        ])
                    )
                ])
        case .failure: return .object([("kind", .string("failure"))])
        case .reset: return .object([("kind", .string("reset"))])
        }
    }
}
