@_exported import RateLimitCore

extension AnyRateLimitStrategy {
    /// The Spec clause prefix of each strategy (`token-bucket` → `TB`).
    package static let clausePrefixes: [String: String] = [
        TokenBucket.identifier: "TB", IntervalTokenBucket.identifier: "TBI", GCRA.identifier: "GCRA",
        PayLater.identifier: "PL", WarmUp.identifier: "WU",
        FixedWindow.identifier: "FW", SlidingWindowLog.identifier: "SWL", SlidingWindowCounter.identifier: "SWC",
        SlidingWindowSegments.identifier: "SWS",
        LeakyBucketMeter.identifier: "LBM", LeakyBucketQueue.identifier: "LBQ", ConcurrencyLimiter.identifier: "CL",
    ]

    /// The configuration's fields, named as in the Spec's tables, every field written out.
    public var json: JSONValue { .object(fields.map { ($0.name, .integer($0.value)) }) }

    /// Builds a configuration of `strategy` from its JSON fields.
    ///
    /// - Throws: ``ConformanceFormatError`` for an unknown strategy, a missing, extra or
    ///   non-integer field; ``RateLimitInputError`` (wrapped) when the Spec refuses the values.
    public init(strategy: String, json: JSONValue) throws(ConformanceFormatError) {
        try self.init(strategy: strategy, json: json, requiringEveryField: false)
    }

    /// Builds a configuration of `strategy` from its JSON fields; with `requiringEveryField`, an
    /// optional field left out (`initialTokens`, `initialLevel`) is an error rather than its
    /// default, as vector stories and reconfigure events require.
    package init(strategy: String, json: JSONValue, requiringEveryField: Bool) throws(ConformanceFormatError) {
        guard let (fields, optional) = Self.fieldNames(of: strategy) else {
            throw ConformanceFormatError("unknown strategy \"\(strategy)\"")
        }
        guard case .object = json else { throw ConformanceFormatError("a \(strategy) configuration must be an object") }
        if let extra = json.keys.first(where: { !fields.contains($0) }) {
            throw ConformanceFormatError("unknown field \"\(extra)\" in a \(strategy) configuration")
        }
        var values: [String: Int64] = [:]
        for field in fields {
            guard let value = json[field] else {
                if optional.contains(field), !requiringEveryField { continue }
                throw ConformanceFormatError(
                    "missing field \"\(field)\" in a \(strategy) configuration"
                        + (optional.contains(field)
                            ? " (every field is given here; its default applies only to refusals)" : ""))
            }
            guard let integer = value.int64 else {
                throw ConformanceFormatError("field \"\(field)\" must be an integer, got \(value.compactText)")
            }
            values[field] = integer
        }
        do {
            self = try AnyRateLimitStrategy(identifier: strategy, values: values)
        } catch {
            throw ConformanceFormatError(
                "the Spec refuses this \(strategy) configuration: \(error)", refusedBySpec: error)
        }
    }
}

/// A malformed vector file, protocol message or configuration, explained.
public struct ConformanceFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    /// Set when the input was well formed but the Spec refuses its values (CORE-3).
    public var refusedBySpec: RateLimitInputError?

    public init(_ message: String, refusedBySpec: RateLimitInputError? = nil) {
        self.message = message
        self.refusedBySpec = refusedBySpec
    }

    public var description: String { message }
}
