import RateLimitCore

/// A configuration of any of the nine strategies: what a vector story or a protocol `create`
/// message carries, and what an implementation under test is asked to build. It is the core's
/// ``AnyRateLimitStrategy``; this module adds its JSON form.
public typealias StrategyConfiguration = AnyRateLimitStrategy

extension AnyRateLimitStrategy {
    /// Every strategy identifier, in the order of the Spec.
    public static let identifiers: [String] = [
        TokenBucket.identifier, IntervalTokenBucket.identifier, GCRA.identifier, FixedWindow.identifier,
        SlidingWindowLog.identifier, SlidingWindowCounter.identifier, LeakyBucketMeter.identifier,
        LeakyBucketQueue.identifier, ConcurrencyLimiter.identifier,
    ]

    /// The Spec clause prefix of each strategy (`token-bucket` → `TB`).
    public static let clausePrefixes: [String: String] = [
        TokenBucket.identifier: "TB", IntervalTokenBucket.identifier: "TBI", GCRA.identifier: "GCRA",
        FixedWindow.identifier: "FW", SlidingWindowLog.identifier: "SWL", SlidingWindowCounter.identifier: "SWC",
        LeakyBucketMeter.identifier: "LBM", LeakyBucketQueue.identifier: "LBQ", ConcurrencyLimiter.identifier: "CL",
    ]

    /// The configuration's fields, named as in the Spec's tables, every field written out.
    public var json: JSONValue { .object(fields.map { ($0.name, .integer($0.value)) }) }

    /// Builds a configuration of `strategy` from its JSON fields.
    ///
    /// - Throws: ``ConformanceFormatError`` for an unknown strategy, a missing, extra or
    ///   non-integer field; ``RateLimitInputError`` (wrapped) when the Spec refuses the values.
    public init(strategy: String, json: JSONValue) throws(ConformanceFormatError) {
        let fields: [String]
        let optional: Set<String>
        switch strategy {
        case TokenBucket.identifier: (fields, optional) = (["capacity", "permitsPerPeriod", "periodNanoseconds", "initialTokens"], ["initialTokens"])
        case IntervalTokenBucket.identifier: (fields, optional) = (["capacity", "tokensPerInterval", "intervalNanoseconds", "initialTokens"], ["initialTokens"])
        case GCRA.identifier: (fields, optional) = (["burst", "emissionIntervalNanoseconds"], [])
        case FixedWindow.identifier, SlidingWindowLog.identifier, SlidingWindowCounter.identifier:
            (fields, optional) = (["limit", "windowNanoseconds"], [])
        case LeakyBucketMeter.identifier: (fields, optional) = (["capacity", "leakPermitsPerPeriod", "periodNanoseconds", "initialLevel"], ["initialLevel"])
        case LeakyBucketQueue.identifier: (fields, optional) = (["queueCapacity", "intervalNanoseconds"], [])
        case ConcurrencyLimiter.identifier: (fields, optional) = (["limit"], [])
        default: throw ConformanceFormatError("unknown strategy \"\(strategy)\"")
        }
        guard case .object = json else { throw ConformanceFormatError("a \(strategy) configuration must be an object") }
        if let extra = json.keys.first(where: { !fields.contains($0) }) {
            throw ConformanceFormatError("unknown field \"\(extra)\" in a \(strategy) configuration")
        }
        var values: [String: Int64] = [:]
        for field in fields {
            guard let value = json[field] else {
                if optional.contains(field) { continue }
                throw ConformanceFormatError("missing field \"\(field)\" in a \(strategy) configuration")
            }
            guard let integer = value.int64 else {
                throw ConformanceFormatError("field \"\(field)\" must be an integer, got \(value.compactText)")
            }
            values[field] = integer
        }
        func v(_ field: String) -> Int64 { values[field] ?? 0 }
        do {
            switch strategy {
            case TokenBucket.identifier:
                self = .tokenBucket(try TokenBucket(
                    capacity: v("capacity"), permitsPerPeriod: v("permitsPerPeriod"),
                    periodNanoseconds: v("periodNanoseconds"), initialTokens: values["initialTokens"]))
            case IntervalTokenBucket.identifier:
                self = .intervalTokenBucket(try IntervalTokenBucket(
                    capacity: v("capacity"), tokensPerInterval: v("tokensPerInterval"),
                    intervalNanoseconds: v("intervalNanoseconds"), initialTokens: values["initialTokens"]))
            case GCRA.identifier:
                self = .gcra(try GCRA(burst: v("burst"), emissionIntervalNanoseconds: v("emissionIntervalNanoseconds")))
            case FixedWindow.identifier:
                self = .fixedWindow(try FixedWindow(limit: v("limit"), windowNanoseconds: v("windowNanoseconds")))
            case SlidingWindowLog.identifier:
                self = .slidingWindowLog(try SlidingWindowLog(limit: v("limit"), windowNanoseconds: v("windowNanoseconds")))
            case SlidingWindowCounter.identifier:
                self = .slidingWindowCounter(try SlidingWindowCounter(limit: v("limit"), windowNanoseconds: v("windowNanoseconds")))
            case LeakyBucketMeter.identifier:
                self = .leakyBucketMeter(try LeakyBucketMeter(
                    capacity: v("capacity"), leakPermitsPerPeriod: v("leakPermitsPerPeriod"),
                    periodNanoseconds: v("periodNanoseconds"), initialLevel: values["initialLevel"] ?? 0))
            case LeakyBucketQueue.identifier:
                self = .leakyBucketQueue(try LeakyBucketQueue(
                    queueCapacity: v("queueCapacity"), intervalNanoseconds: v("intervalNanoseconds")))
            default:
                self = .concurrency(try ConcurrencyLimiter(limit: v("limit")))
            }
        } catch {
            throw ConformanceFormatError("the Spec refuses this \(strategy) configuration: \(error)", refusedBySpec: error)
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
