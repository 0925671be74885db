import RateLimitCore

/// An event for a limiter of any strategy (Spec CORE-4), as vectors and the protocol carry it.
public enum ConformanceEvent: Hashable, Sendable, CustomStringConvertible {
    case acquire(Int64)
    case release(Int64)
    case reset
    case reconfigure(AnyRateLimitStrategy)

    /// `{"kind": "acquire", "permits": 3}`, `{"kind": "reset"}`, ...
    public var json: JSONValue {
        switch self {
        case .acquire(let permits): .object([("kind", .string("acquire")), ("permits", .integer(permits))])
        case .release(let permits): .object([("kind", .string("release")), ("permits", .integer(permits))])
        case .reset: .object([("kind", .string("reset"))])
        case .reconfigure(let configuration):
            .object([("kind", .string("reconfigure")), ("configuration", configuration.json)])
        }
    }

    /// Reads an event of a limiter of `strategy` (a reconfigure carries that strategy's fields,
    /// every one of them: a field left out is an error, not its default).
    ///
    /// - Throws: ``ConformanceFormatError``; for a reconfigure whose fields the Spec refuses, one
    ///   whose ``ConformanceFormatError/refusedBySpec`` names the refusal.
    public init(json: JSONValue, strategy: String) throws(ConformanceFormatError) {
        guard let kind = json["kind"]?.string else { throw ConformanceFormatError("an event needs a string \"kind\"") }
        func permits() throws(ConformanceFormatError) -> Int64 {
            guard json.keys.sorted() == ["kind", "permits"], let permits = json["permits"]?.int64 else {
                throw ConformanceFormatError("a \(kind) event has exactly \"kind\" and an integer \"permits\"")
            }
            return permits
        }
        switch kind {
        case "acquire": self = .acquire(try permits())
        case "release": self = .release(try permits())
        case "reset":
            guard json.keys == ["kind"] else { throw ConformanceFormatError("a reset event has only \"kind\"") }
            self = .reset
        case "reconfigure":
            guard json.keys.sorted() == ["configuration", "kind"], let configuration = json["configuration"] else {
                throw ConformanceFormatError("a reconfigure event has exactly \"kind\" and \"configuration\"")
            }
            self = .reconfigure(
                try AnyRateLimitStrategy(strategy: strategy, json: configuration, requiringEveryField: true))
        default: throw ConformanceFormatError("unknown event kind \"\(kind)\"")
        }
    }

    public var description: String {
        switch self {
        case .acquire(let permits): "acquire(\(permits))"
        case .release(let permits): "release(\(permits))"
        case .reset: "reset"
        case .reconfigure(let configuration): "reconfigure(\(configuration.json.compactText))"
        }
    }
}

extension RateLimitResult {
    /// `{"kind": "allowed", "remaining": 2}`, `{"kind": "rejected", "retryAfterNanoseconds": 7}`, ...
    public var json: JSONValue {
        switch self {
        case .allowed(let remaining):
            .object([("kind", .string("allowed")), ("remaining", .integer(remaining))])
        case .delayed(let wait, let remaining):
            .object([
                ("kind", .string("delayed")), ("waitNanoseconds", .integer(wait)), ("remaining", .integer(remaining)),
            ])
        case .rejected(let retryAfter):
            .object([("kind", .string("rejected")), ("retryAfterNanoseconds", .integer(retryAfter))])
        case .rejectedUntilRelease(let shortfall):
            .object([("kind", .string("rejectedUntilRelease")), ("shortfall", .integer(shortfall))])
        case .neverAllowed:
            .object([("kind", .string("neverAllowed"))])
        case .invalid(let error):
            .object(
                [("kind", .string("invalid")), ("field", .string(error.field))] + Self.problemMembers(error.problem))
        }
    }

    /// `mustBePositive`, `exceedsMaximum 3`: the problem as the protocol names it, with its maximum.
    static func problemText(_ problem: RateLimitInputError.Problem) -> String {
        switch problem {
        case .mustBePositive: "mustBePositive"
        case .mustNotBeNegative: "mustNotBeNegative"
        case .exceedsMaximum(let maximum): "exceedsMaximum \(maximum)"
        case .notWholeNanoseconds: "notWholeNanoseconds"
        case .notSupported: "notSupported"
        }
    }

    private static func problemMembers(_ problem: RateLimitInputError.Problem) -> [(String, JSONValue)] {
        switch problem {
        case .mustBePositive: [("problem", .string("mustBePositive"))]
        case .mustNotBeNegative: [("problem", .string("mustNotBeNegative"))]
        case .exceedsMaximum(let maximum): [("problem", .string("exceedsMaximum")), ("maximum", .integer(maximum))]
        case .notWholeNanoseconds: [("problem", .string("notWholeNanoseconds"))]
        case .notSupported: [("problem", .string("notSupported"))]
        }
    }

    /// Reads a result; an `invalid` result keeps its field and problem (the value and reason text
    /// are not part of the comparison).
    public init(json: JSONValue) throws(ConformanceFormatError) {
        guard let kind = json["kind"]?.string else { throw ConformanceFormatError("a result needs a string \"kind\"") }
        func integer(_ name: String) throws(ConformanceFormatError) -> Int64 {
            guard let value = json[name]?.int64 else {
                throw ConformanceFormatError("a result of kind \"\(kind)\" needs an integer \"\(name)\"")
            }
            return value
        }
        func exactly(_ names: [String]) throws(ConformanceFormatError) {
            guard json.keys.sorted() == (["kind"] + names).sorted() else {
                throw ConformanceFormatError(
                    "a \(kind) result has exactly \((["kind"] + names).map { "\"\($0)\"" }.joined(separator: ", "))")
            }
        }
        switch kind {
        case "allowed":
            try exactly(["remaining"])
            self = .allowed(remaining: try integer("remaining"))
        case "delayed":
            try exactly(["waitNanoseconds", "remaining"])
            self = .delayed(waitNanoseconds: try integer("waitNanoseconds"), remaining: try integer("remaining"))
        case "rejected":
            try exactly(["retryAfterNanoseconds"])
            self = .rejected(retryAfterNanoseconds: try integer("retryAfterNanoseconds"))
        case "rejectedUntilRelease":
            try exactly(["shortfall"])
            self = .rejectedUntilRelease(shortfall: try integer("shortfall"))
        case "neverAllowed":
            try exactly([])
            self = .neverAllowed
        case "invalid":
            guard let field = json["field"]?.string, let problem = json["problem"]?.string else {
                throw ConformanceFormatError("an invalid result needs string \"field\" and \"problem\"")
            }
            let parsed: RateLimitInputError.Problem
            switch problem {
            case "mustBePositive": parsed = .mustBePositive
            case "mustNotBeNegative": parsed = .mustNotBeNegative
            case "exceedsMaximum": parsed = .exceedsMaximum(try integer("maximum"))
            case "notWholeNanoseconds": parsed = .notWholeNanoseconds
            case "notSupported": parsed = .notSupported
            default: throw ConformanceFormatError("unknown problem \"\(problem)\"")
            }
            self = .invalid(RateLimitInputError(field: field, value: nil, problem: parsed))
        default: throw ConformanceFormatError("unknown result kind \"\(kind)\"")
        }
    }

    /// The result as compared across implementations: an `invalid` keeps only field and problem.
    public var comparable: RateLimitResult {
        if case .invalid(let error) = self {
            return .invalid(RateLimitInputError(field: error.field, value: nil, problem: error.problem))
        }
        return self
    }

    /// A short, readable form for tables: `allowed(2)`, `rejected(7ns)`, `delayed(10ns, 1)`,
    /// `invalid(permits: exceedsMaximum 2)` (an `invalid` names its field, problem and maximum, so
    /// that two that differ never read the same).
    public var brief: String {
        switch self {
        case .allowed(let remaining): "allowed(\(remaining))"
        case .delayed(let wait, let remaining): "delayed(\(wait)ns, \(remaining))"
        case .rejected(let retryAfter): "rejected(\(retryAfter)ns)"
        case .rejectedUntilRelease(let shortfall): "untilRelease(\(shortfall))"
        case .neverAllowed: "neverAllowed"
        case .invalid(let error): "invalid(\(error.field): \(Self.problemText(error.problem)))"
        }
    }
}

extension ConformanceEvent {
    /// The event for a limiter of strategy type `S` (`nil` for a reconfigure to another strategy).
    public func typed<S: RateLimitStrategy>(as type: S.Type) -> RateLimitEvent<S>? {
        switch self {
        case .acquire(let permits): .acquire(permits)
        case .release(let permits): .release(permits)
        case .reset: .reset
        case .reconfigure(let configuration): configuration.typed(as: S.self).map { .reconfigure($0) }
        }
    }
}

/// The reference model for a limiter of any strategy: the Swift implementation of the Spec.
public struct ReferenceLimiter: Sendable {
    private var limiter: RateLimiter<AnyRateLimitStrategy>

    /// A limiter of `configuration` created at `now`.
    public init(_ configuration: AnyRateLimitStrategy, at now: RateLimitInstant) {
        limiter = RateLimiter(configuration, at: now)
    }

    /// Applies `event` at `now` and returns the Spec's answer; a reconfigure to another strategy
    /// is `invalid` (COMP-1).
    public mutating func apply(_ event: ConformanceEvent, at now: RateLimitInstant) -> RateLimitResult {
        switch event {
        case .acquire(let permits): limiter.step(.acquire(permits), at: now)
        case .release(let permits): limiter.step(.release(permits), at: now)
        case .reset: limiter.step(.reset, at: now)
        case .reconfigure(let configuration): limiter.step(.reconfigure(configuration), at: now)
        }
    }

    /// The answer `event` would get at `now`, without applying it.
    public func probe(_ event: ConformanceEvent, at now: RateLimitInstant) -> RateLimitResult {
        var copy = self
        return copy.apply(event, at: now)
    }

    /// The configuration in force.
    package var configuration: AnyRateLimitStrategy { limiter.strategy }

    /// A reconfigure to raw `fields` of the strategy in force, as an implementation that receives
    /// raw values answers it (CORE-13): fields the Spec refuses (CORE-3) are answered `invalid`
    /// naming the refusal and change nothing; fields it accepts are applied as a reconfigure;
    /// malformed fields (missing, unknown, not integers) are `invalid` naming `configuration`.
    package mutating func reconfigure(toFields fields: JSONValue, at now: RateLimitInstant) -> RateLimitResult {
        let parsed = Result { () throws(ConformanceFormatError) in
            try AnyRateLimitStrategy(strategy: limiter.strategy.kind, json: fields, requiringEveryField: true)
        }
        switch parsed {
        case .success(let configuration): return apply(.reconfigure(configuration), at: now)
        case .failure(let error):
            return .invalid(
                error.refusedBySpec
                    ?? RateLimitInputError(
                        field: "configuration", value: nil, problem: .notSupported, reason: error.message))
        }
    }
}
