import RateLimitCore

/// An implementation under test: create a limiter from a configuration, apply events at instants.
///
/// Conform a Swift implementation to this protocol and call ``ConformanceSuite/run(_:vectors:options:clock:progress:)``;
/// the `ratelimit-conformance` command conforms an external process speaking the JSON-lines
/// protocol (Spec/protocol.md) the same way.
///
/// Give a conforming type at least one stored property: Swift 6.3 passes a zero-sized `inout`
/// argument as an undefined address, which crashes ThreadSanitizer's instrumentation.
public protocol ConformanceSubject {
    /// A handle to one limiter of the implementation.
    associatedtype Limiter

    /// The implementation's name, for reports.
    var name: String { get }

    /// The strategy identifiers it implements (`AnyRateLimitStrategy.identifiers`); the others
    /// are reported as skipped, not failed.
    var strategies: Set<String> { get }

    /// What the implementation declares about itself for `strategy` (CONF-7): the harness keeps
    /// every case within it. The Spec's own profile, ``ImplementationProfile/full``, by default.
    func profile(for strategy: String) -> ImplementationProfile

    /// Creates a limiter of `request.strategy` at `now`, or says that it cannot.
    mutating func create(_ request: CreateRequest, at now: Int64) throws(SubjectFailure) -> CreateOutcome<Limiter>

    /// Applies `event` to `limiter` at `now` and returns the implementation's answer.
    mutating func apply(_ event: ConformanceEvent, to limiter: inout Limiter, at now: Int64) throws(SubjectFailure)
        -> RateLimitResult

    /// Called when a case is done with `limiter`, so that the implementation can free it; a
    /// failure here (the implementation misbehaved) fails the case.
    mutating func finish(_ limiter: inout Limiter) throws(SubjectFailure)

    /// Applies to `limiter` at `now` a reconfigure to raw `fields` (every field of the strategy
    /// present) that the Spec refuses (CORE-3), and returns the implementation's answer: the Spec
    /// answers `invalid` naming the refusal and changes nothing (CORE-13). Only an implementation
    /// that receives configurations as raw values can be asked this; `nil`, the default, says it
    /// cannot (a Swift implementation builds its configurations itself, and the refusal cases
    /// check its validation), and the harness then skips the vector stories that need it.
    mutating func reconfigure(_ limiter: inout Limiter, toRefusedFields fields: JSONValue, at now: Int64)
        throws(SubjectFailure) -> RateLimitResult?

    /// Told, right after `limiter` is created, the requests the case will make of it, in order:
    /// an implementation in another process may send them ahead (Spec/protocol.md,
    /// "Pipelining") and hand back each answer when the request is made. A case that stops early
    /// makes fewer of them, then calls ``finish(_:)``. The default does nothing.
    mutating func plan(_ requests: [PlannedRequest], for limiter: inout Limiter)
}

/// A request a case will make of its limiter (``ConformanceSubject/plan(_:for:)``).
public enum PlannedRequest: Hashable, Sendable {
    /// ``ConformanceSubject/apply(_:to:at:)`` of this event at this instant.
    case event(ConformanceEvent, at: Int64)
    /// ``ConformanceSubject/reconfigure(_:toRefusedFields:at:)`` with these fields at this instant.
    case refusedReconfigure(JSONValue, at: Int64)
    /// ``ConformanceSubject/finish(_:)``.
    case finish
}

extension ConformanceSubject {
    public mutating func finish(_ limiter: inout Limiter) throws(SubjectFailure) {}
    public func profile(for strategy: String) -> ImplementationProfile { .full }
    public mutating func reconfigure(_ limiter: inout Limiter, toRefusedFields fields: JSONValue, at now: Int64)
        throws(SubjectFailure) -> RateLimitResult?
    { nil }
    public mutating func plan(_ requests: [PlannedRequest], for limiter: inout Limiter) {}
}

/// What a `create` asks for.
public struct CreateRequest: Sendable {
    /// The strategy identifier.
    public var strategy: String
    /// The configuration fields as sent (possibly ones the Spec refuses).
    public var fields: JSONValue
    /// The configuration, or `nil` when the Spec refuses the fields (a refusal case).
    public var configuration: AnyRateLimitStrategy?
}

/// The implementation's answer to a `create`.
public enum CreateOutcome<Limiter> {
    /// A limiter was created.
    case created(Limiter)
    /// The implementation supports the strategy but not this configuration (e.g. windows must be
    /// whole seconds); the case is skipped with this reason.
    case unsupported(reason: String)
    /// The configuration is refused as bad input (CORE-3), naming the field and the problem.
    case refused(field: String, problem: RateLimitInputError.Problem)

    /// The same outcome with the created limiter transformed: how a subject that wraps another
    /// one's limiter (the reference's, with a fault or a clock of its own) answers a `create`.
    public func map<Other>(_ transform: (Limiter) -> Other) -> CreateOutcome<Other> {
        switch self {
        case .created(let limiter): .created(transform(limiter))
        case .unsupported(let reason): .unsupported(reason: reason)
        case .refused(let field, let problem): .refused(field: field, problem: problem)
        }
    }
}

/// The implementation misbehaved (crashed, hung, answered garbage); the message says how and
/// `received` holds what it sent, if anything.
public struct SubjectFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// How it misbehaved: a strategy stops after a few consecutive failures of one kind (CONF-11).
    public enum Kind: String, Hashable, Sendable {
        case crashed
        case timedOut
        case brokeProtocol

        /// "crashed", "did not answer in time", "broke the protocol".
        public var pastTense: String {
            switch self {
            case .crashed: "crashed"
            case .timedOut: "did not answer in time"
            case .brokeProtocol: "broke the protocol"
            }
        }
    }

    public var message: String
    public var received: String?
    public var kind: Kind
    /// The misbehaviour surfaced while later requests were already sent (pipelining), so it may
    /// belong to one of them: the case is then run again one request at a time, which names the
    /// step exactly.
    public var stepUncertain = false

    public init(_ message: String, received: String? = nil, kind: Kind = .brokeProtocol, stepUncertain: Bool = false) {
        self.message = message
        self.received = received
        self.kind = kind
        self.stepUncertain = stepUncertain
    }

    public var description: String { received.map { "\(message); received: \($0)" } ?? message }
}

/// The Swift model itself as a subject: the suite run with no arguments checks the reference
/// against its own committed vectors (which proves the files and the model agree).
public struct ReferenceSubject: ConformanceSubject {
    /// Only so that the type is not zero-sized: see `ReferenceScenarioDriver`'s (a zero-sized
    /// `inout` argument crashed ThreadSanitizer in `ConformanceSuite.run`).
    private var notZeroSized: UInt8 = 0

    public init() {}
    public var name: String { "swift-rate-limit reference model" }
    public var strategies: Set<String> { Set(AnyRateLimitStrategy.identifiers) }

    public func create(_ request: CreateRequest, at now: Int64) -> CreateOutcome<ReferenceLimiter> {
        guard let configuration = request.configuration else {
            // Re-parse to name the field and problem the Spec refuses.
            let parsed = Result { () throws(ConformanceFormatError) in
                try AnyRateLimitStrategy(strategy: request.strategy, json: request.fields)
            }
            if case .failure(let error) = parsed, let refusal = error.refusedBySpec {
                return .refused(field: refusal.field, problem: refusal.problem)
            }
            return .unsupported(reason: "malformed configuration")
        }
        return .created(ReferenceLimiter(configuration, at: .generated(now)))
    }

    public func apply(_ event: ConformanceEvent, to limiter: inout ReferenceLimiter, at now: Int64) -> RateLimitResult {
        guard let instant = try? RateLimitInstant(nanoseconds: now) else {
            return .invalid(RateLimitInputError(field: "now", value: now, problem: .mustNotBeNegative))
        }
        return limiter.apply(event, at: instant)
    }

    public func reconfigure(_ limiter: inout ReferenceLimiter, toRefusedFields fields: JSONValue, at now: Int64)
        -> RateLimitResult?
    {
        guard let instant = try? RateLimitInstant(nanoseconds: now) else {
            return .invalid(RateLimitInputError(field: "now", value: now, problem: .mustNotBeNegative))
        }
        return limiter.reconfigure(toFields: fields, at: instant)
    }
}
