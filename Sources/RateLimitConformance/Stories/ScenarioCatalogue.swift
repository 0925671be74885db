import RateLimitCore

/// The scenarios the scenario vector files are generated from, one file of stories per machine
/// in this folder. As for the strategies (``VectorCatalogue``), every answer is written by hand
/// from the Spec next to a comment saying what the step checks, and generation checks the
/// reference models against them.
package enum ScenarioCatalogue {
    /// The cases of `machine`.
    package static func cases(_ machine: ScenarioMachine) -> [ScenarioCase] {
        switch machine {
        case .composite: compositeCases()
        case .waitQueue: waitQueueCases()
        case .registry: registryCases()
        case .adaptiveRate: adaptiveRateCases()
        case .adaptiveConcurrency: adaptiveConcurrencyCases()
        }
    }

    /// A story: a machine made from `configuration` at `createdAt`, then (now, event, answer, comment) steps.
    static func story(
        _ machine: ScenarioMachine, _ name: String, _ summary: String, clauses: [String], _ configuration: JSONValue,
        createdAt: Int64 = 0, _ steps: [(Int64, JSONValue, JSONValue, String)]
    ) -> ScenarioCase {
        ScenarioCase(
            id: "\(machine.rawValue)/\(name)", summary: summary, clauses: clauses, configuration: configuration,
            body: .story(
                createdAt: createdAt,
                steps: steps.map { ScenarioStep(now: $0.0, event: $0.1, expected: $0.2, comment: $0.3) }))
    }

    /// A configuration the Spec refuses, naming `field` and `problem`.
    static func refusal(
        _ machine: ScenarioMachine, _ name: String, _ summary: String, clauses: [String], _ configuration: JSONValue,
        _ field: String, _ problem: RateLimitInputError.Problem
    ) -> ScenarioCase {
        ScenarioCase(
            id: "\(machine.rawValue)/\(name)", summary: summary, clauses: clauses, configuration: configuration,
            body: .refusal(ScenarioRefusal(RateLimitInputError(field: field, value: nil, problem: problem))))
    }

    // MARK: Configurations

    /// `{"strategy": ..., "configuration": {...}}`: one limit of a composite.
    static func limit(_ strategy: String, _ fields: KeyValuePairs<String, Int64>) -> JSONValue {
        .object([("strategy", .string(strategy)), ("configuration", self.fields(fields))])
    }

    static func fields(_ fields: KeyValuePairs<String, Int64>) -> JSONValue {
        .object(fields.map { ($0.key, .integer($0.value)) })
    }

    /// A token bucket of `capacity`, one token per `period` ns, full (or holding `initial`).
    static func tokenBucket(_ capacity: Int64, period: Int64 = 10, initial: Int64? = nil) -> KeyValuePairs<
        String, Int64
    > {
        [
            "capacity": capacity, "permitsPerPeriod": 1, "periodNanoseconds": period,
            "initialTokens": initial ?? capacity,
        ]
    }

    // MARK: Events and answers of the strategies' vocabulary (CORE-4, CORE-5)

    static func acquire(_ permits: Int64) -> JSONValue { ConformanceEvent.acquire(permits).json }
    static func release(_ permits: Int64) -> JSONValue { ConformanceEvent.release(permits).json }
    static let reset = ConformanceEvent.reset.json
    static func reconfigure(_ configuration: JSONValue) -> JSONValue {
        .object([("kind", .string("reconfigure")), ("configuration", configuration)])
    }

    static func allowed(_ remaining: Int64) -> JSONValue { VectorCatalogue.allowed(remaining).json }
    static func delayed(_ wait: Int64, _ remaining: Int64) -> JSONValue {
        VectorCatalogue.delayed(wait, remaining).json
    }
    static func rejected(_ retryAfter: Int64) -> JSONValue { VectorCatalogue.rejected(retryAfter).json }
    static func untilRelease(_ shortfall: Int64) -> JSONValue { VectorCatalogue.untilRelease(shortfall).json }
    static let never = VectorCatalogue.never.json
    static func invalid(_ field: String, _ problem: RateLimitInputError.Problem) -> JSONValue {
        VectorCatalogue.invalid(field, problem).json
    }

    // MARK: Outcomes of requests that may wait (WQ-2)

    static func granted(_ result: JSONValue) -> JSONValue {
        .object([("kind", .string("granted")), ("result", result)])
    }
    static func outcome(_ kind: String) -> JSONValue { .object([("kind", .string(kind))]) }
    static func refused(_ reason: String, _ members: (String, JSONValue)...) -> JSONValue {
        .object([("kind", .string("rejected")), ("reason", .string(reason))] + members)
    }
    static func limited(_ retryAfter: Int64) -> JSONValue {
        refused("limited", ("retryAfterNanoseconds", .integer(retryAfter)))
    }

    /// `[{"ticket": t, "outcome": o, "at": i}, ...]`: the outcomes decided, in order.
    static func completions(_ completions: [(Int64, JSONValue, Int64)]) -> JSONValue {
        .array(completions.map { .object([("ticket", .integer($0.0)), ("outcome", $0.1), ("at", .integer($0.2))]) })
    }
}
