// Configurations as JSON (Spec/Core.md CORE-16): the same fields, named as in each strategy's
// Spec table, that the vectors and the protocol carry, so that an app can load its limits from a
// file or a server. Decoding validates exactly as the throwing initializers do: a value the Spec
// refuses, a field missing, unknown or not an integer is a `DecodingError` naming the field.

extension AnyRateLimitStrategy {
    /// Every strategy identifier, in the order of the Spec.
    public static let identifiers: [String] = [
        TokenBucket.identifier, IntervalTokenBucket.identifier, GCRA.identifier, PayLater.identifier, WarmUp.identifier,
        FixedWindow.identifier,
        SlidingWindowLog.identifier, SlidingWindowCounter.identifier, SlidingWindowSegments.identifier,
        LeakyBucketMeter.identifier,
        LeakyBucketQueue.identifier, ConcurrencyLimiter.identifier,
    ]

    /// The fields of a configuration of `identifier`, in the order of its Spec table, and those
    /// that may be left out (they then take the Spec's default); `nil` for an unknown strategy.
    package static func fieldNames(of identifier: String) -> (all: [String], optional: Set<String>)? {
        switch identifier {
        case TokenBucket.identifier:
            (["capacity", "permitsPerPeriod", "periodNanoseconds", "initialTokens"], ["initialTokens"])
        case IntervalTokenBucket.identifier:
            (["capacity", "tokensPerInterval", "intervalNanoseconds", "initialTokens"], ["initialTokens"])
        case GCRA.identifier: (["burst", "emissionIntervalNanoseconds"], [])
        case PayLater.identifier: (["burst", "emissionIntervalNanoseconds", "initialTokens"], ["initialTokens"])
        case WarmUp.identifier: (["burst", "emissionIntervalNanoseconds", "warmUpPeriodNanoseconds"], [])
        case FixedWindow.identifier, SlidingWindowLog.identifier, SlidingWindowCounter.identifier:
            (["limit", "windowNanoseconds"], [])
        case SlidingWindowSegments.identifier: (["limit", "segmentsPerWindow", "segmentNanoseconds"], [])
        case LeakyBucketMeter.identifier:
            (["capacity", "leakPermitsPerPeriod", "periodNanoseconds", "initialLevel"], ["initialLevel"])
        case LeakyBucketQueue.identifier: (["queueCapacity", "intervalNanoseconds"], [])
        case ConcurrencyLimiter.identifier: (["limit"], [])
        default: nil
        }
    }

    /// A configuration of `identifier` (one of ``identifiers``) from its fields; a field of
    /// ``fieldNames(of:)`` that is absent takes the Spec's default when it is optional and 0
    /// otherwise (callers check presence first).
    ///
    /// - Throws: ``RateLimitInputError`` when the Spec refuses the values, or for an unknown
    ///   identifier (field `strategy`).
    package init(identifier: String, values: [String: Int64]) throws(RateLimitInputError) {
        func v(_ field: String) -> Int64 { values[field] ?? 0 }
        switch identifier {
        case TokenBucket.identifier:
            self = .tokenBucket(
                try TokenBucket(
                    capacity: v("capacity"), permitsPerPeriod: v("permitsPerPeriod"),
                    periodNanoseconds: v("periodNanoseconds"),
                    initialTokens: values["initialTokens"]))
        case IntervalTokenBucket.identifier:
            self = .intervalTokenBucket(
                try IntervalTokenBucket(
                    capacity: v("capacity"), tokensPerInterval: v("tokensPerInterval"),
                    intervalNanoseconds: v("intervalNanoseconds"),
                    initialTokens: values["initialTokens"]))
        case GCRA.identifier:
            self = .gcra(try GCRA(burst: v("burst"), emissionIntervalNanoseconds: v("emissionIntervalNanoseconds")))
        case PayLater.identifier:
            self = .payLater(
                try PayLater(
                    burst: v("burst"), emissionIntervalNanoseconds: v("emissionIntervalNanoseconds"),
                    initialTokens: values["initialTokens"]))
        case WarmUp.identifier:
            self = .warmUp(
                try WarmUp(
                    burst: v("burst"), emissionIntervalNanoseconds: v("emissionIntervalNanoseconds"),
                    warmUpPeriodNanoseconds: v("warmUpPeriodNanoseconds")))
        case FixedWindow.identifier:
            self = .fixedWindow(try FixedWindow(limit: v("limit"), windowNanoseconds: v("windowNanoseconds")))
        case SlidingWindowLog.identifier:
            self = .slidingWindowLog(try SlidingWindowLog(limit: v("limit"), windowNanoseconds: v("windowNanoseconds")))
        case SlidingWindowCounter.identifier:
            self = .slidingWindowCounter(
                try SlidingWindowCounter(limit: v("limit"), windowNanoseconds: v("windowNanoseconds")))
        case SlidingWindowSegments.identifier:
            self = .slidingWindowSegments(
                try SlidingWindowSegments(
                    limit: v("limit"), segmentsPerWindow: v("segmentsPerWindow"),
                    segmentNanoseconds: v("segmentNanoseconds")))
        case LeakyBucketMeter.identifier:
            self = .leakyBucketMeter(
                try LeakyBucketMeter(
                    capacity: v("capacity"), leakPermitsPerPeriod: v("leakPermitsPerPeriod"),
                    periodNanoseconds: v("periodNanoseconds"),
                    initialLevel: values["initialLevel"] ?? 0))
        case LeakyBucketQueue.identifier:
            self = .leakyBucketQueue(
                try LeakyBucketQueue(queueCapacity: v("queueCapacity"), intervalNanoseconds: v("intervalNanoseconds")))
        case ConcurrencyLimiter.identifier:
            self = .concurrency(try ConcurrencyLimiter(limit: v("limit")))
        default:
            throw RateLimitInputError(
                field: "strategy", value: nil, problem: .notSupported, reason: "unknown strategy \"\(identifier)\"")
        }
    }
}

/// A JSON object's key, any string.
struct ConfigurationKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension AnyRateLimitStrategy {
    /// Decodes the fields of a configuration of `identifier` from `decoder`'s object.
    static func decodeFields(of identifier: String, from decoder: any Decoder) throws -> AnyRateLimitStrategy {
        guard let (names, optional) = fieldNames(of: identifier) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "unknown strategy \"\(identifier)\" (one of \(identifiers.joined(separator: ", ")))"))
        }
        let container = try decoder.container(keyedBy: ConfigurationKey.self)
        // FW-13, SWS-13: a window's alignment, a string, is the one member that is not an integer.
        let alignmentKey = ConfigurationKey("alignment")
        let alignable = identifier == FixedWindow.identifier || identifier == SlidingWindowSegments.identifier
        if let extra = container.allKeys.first(where: {
            !names.contains($0.stringValue) && !(alignable && $0.stringValue == alignmentKey.stringValue)
        }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [extra],
                    debugDescription:
                        "unknown field \"\(extra.stringValue)\" in a \(identifier) configuration (fields: \(names.joined(separator: ", ")))"
                ))
        }
        var values: [String: Int64] = [:]
        for name in names {
            let key = ConfigurationKey(name)
            if optional.contains(name) {
                values[name] = try container.decodeIfPresent(Int64.self, forKey: key)
            } else {
                values[name] = try container.decode(Int64.self, forKey: key)
            }
        }
        var alignment = WindowAlignment.origin
        if alignable, let name = try container.decodeIfPresent(String.self, forKey: alignmentKey) {
            guard let declared = WindowAlignment(rawValue: name) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath + [alignmentKey],
                        debugDescription:
                            "unknown alignment \"\(name)\" (one of \(WindowAlignment.allCases.map(\.rawValue).joined(separator: ", ")))"
                    ))
            }
            alignment = declared
        }
        do throws(RateLimitInputError) {
            let configuration = try AnyRateLimitStrategy(identifier: identifier, values: values)
            switch configuration {
            case .fixedWindow(let window): return .fixedWindow(window.aligned(alignment))
            case .slidingWindowSegments(let window):
                guard let aligned = window.aligned(alignment) else {
                    throw RateLimitInputError(
                        field: "alignment", value: nil, problem: .notSupported,
                        reason: "segments align to the origin or to the creation (SWS-13)")
                }
                return .slidingWindowSegments(aligned)
            default: return configuration
            }
        } catch {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [ConfigurationKey(error.field)],
                    debugDescription: error.description, underlyingError: error))
        }
    }

    /// Encodes the fields of the wrapped configuration, every one written out.
    func encodeFields(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ConfigurationKey.self)
        for (name, value) in fields { try container.encode(value, forKey: ConfigurationKey(name)) }
        let alignment: WindowAlignment =
            switch self {
            case .fixedWindow(let window): window.alignment
            case .slidingWindowSegments(let window): window.alignment
            default: .origin
            }
        if alignment != .origin { try container.encode(alignment.rawValue, forKey: ConfigurationKey("alignment")) }
    }

    /// Decodes a configuration of `S` from its fields.
    static func decode<S: RateLimitStrategy>(_ type: S.Type, from decoder: any Decoder) throws -> S {
        let any = try decodeFields(of: S.identifier, from: decoder)
        guard let typed = any.typed(as: S.self) else {  // unreachable: the fields of S make an S
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "\(S.identifier) decoded as \(any.kind)"))
        }
        return typed
    }
}

/// `{"strategy": "gcra", "configuration": {"burst": 5, "emissionIntervalNanoseconds": 200000000}}`:
/// the identifier and the fields, as a protocol `create` message carries them.
extension AnyRateLimitStrategy: Codable {
    enum CodingKeys: String, CodingKey { case strategy, configuration }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let identifier = try container.decode(String.self, forKey: .strategy)
        self = try Self.decodeFields(of: identifier, from: try container.superDecoder(forKey: .configuration))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .strategy)
        try encodeFields(to: container.superEncoder(forKey: .configuration))
    }
}

// Each strategy alone: its fields, as a vector story's `configuration` carries them.

extension TokenBucket: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.tokenBucket(self).encodeFields(to: encoder)
    }
}

extension IntervalTokenBucket: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.intervalTokenBucket(self).encodeFields(to: encoder)
    }
}

extension GCRA: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws { try AnyRateLimitStrategy.gcra(self).encodeFields(to: encoder) }
}

extension PayLater: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.payLater(self).encodeFields(to: encoder)
    }
}

extension WarmUp: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.warmUp(self).encodeFields(to: encoder)
    }
}

extension FixedWindow: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.fixedWindow(self).encodeFields(to: encoder)
    }
}

extension SlidingWindowLog: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.slidingWindowLog(self).encodeFields(to: encoder)
    }
}

extension SlidingWindowCounter: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.slidingWindowCounter(self).encodeFields(to: encoder)
    }
}

extension SlidingWindowSegments: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.slidingWindowSegments(self).encodeFields(to: encoder)
    }
}

extension LeakyBucketMeter: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.leakyBucketMeter(self).encodeFields(to: encoder)
    }
}

extension LeakyBucketQueue: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.leakyBucketQueue(self).encodeFields(to: encoder)
    }
}

extension ConcurrencyLimiter: Codable {
    public init(from decoder: any Decoder) throws { self = try AnyRateLimitStrategy.decode(Self.self, from: decoder) }
    public func encode(to encoder: any Encoder) throws {
        try AnyRateLimitStrategy.concurrency(self).encodeFields(to: encoder)
    }
}

/// `{"limits": [{"strategy": ..., "configuration": ...}, ...]}`.
extension CompositeLimit: Codable {
    enum CodingKeys: String, CodingKey { case limits }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let limits = try container.decode([AnyRateLimitStrategy].self, forKey: .limits)
        do {
            try self.init(limits)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [CodingKeys.limits], debugDescription: error.description,
                    underlyingError: error))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(limits, forKey: .limits)
    }
}

/// `{"exact": "api/search"}`, `{"prefix": "api/"}` or `{"anyKey": true}` (REG-2).
extension KeyPattern: Codable {
    enum CodingKeys: String, CodingKey { case exact, prefix, anyKey }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "a key pattern is one of {\"exact\": key}, {\"prefix\": prefix}, {\"anyKey\": true}"))
        }
        switch key {
        case .exact: self = .exact(try container.decode(String.self, forKey: .exact))
        case .prefix: self = .prefix(try container.decode(String.self, forKey: .prefix))
        case .anyKey:
            guard try container.decode(Bool.self, forKey: .anyKey) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath + [key], debugDescription: "\"anyKey\" must be true"))
            }
            self = .anyKey
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .exact(let key): try container.encode(key, forKey: .exact)
        case .prefix(let prefix): try container.encode(prefix, forKey: .prefix)
        case .anyKey: try container.encode(true, forKey: .anyKey)
        }
    }
}

/// `"reject"`, or `{"queue": {"limit": 10, "timeoutNanoseconds": 2000000000}}` (the timeout may
/// be left out: no timeout).
extension OverflowPolicy: Codable {
    enum CodingKeys: String, CodingKey { case queue }
    enum QueueKeys: String, CodingKey { case limit, timeoutNanoseconds }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let word = try? single.decode(String.self) {
            guard word == "reject" else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "unknown overflow policy \"\(word)\""))
            }
            self = .reject
            return
        }
        let queue = try decoder.container(keyedBy: CodingKeys.self).nestedContainer(
            keyedBy: QueueKeys.self, forKey: .queue)
        let limit = try queue.decode(Int64.self, forKey: .limit)
        let timeout = try queue.decodeIfPresent(Int64.self, forKey: .timeoutNanoseconds)
        self = .queue(limit: limit, timeout: timeout.map { .nanoseconds($0) })
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .reject:
            var single = encoder.singleValueContainer()
            try single.encode("reject")
        case .queue(let limit, let timeout):
            var container = encoder.container(keyedBy: CodingKeys.self)
            var queue = container.nestedContainer(keyedBy: QueueKeys.self, forKey: .queue)
            try queue.encode(limit, forKey: .limit)
            if let timeout {
                try queue.encode(try timeout.wholeNanoseconds(field: "timeout"), forKey: .timeoutNanoseconds)
            }
        }
    }
}

/// `{"keys": {"prefix": "api/"}, "strategy": ..., "overflow": "reject", "warningThreshold": 0}`;
/// `overflow` and `warningThreshold` may be left out (`reject`, 0). Decoding validates the rule as
/// ``RateLimitRule/init(_:_:overflow:warningThreshold:)`` does.
extension RateLimitRule: Codable where Strategy: Codable {
    enum CodingKeys: String, CodingKey { case keys, strategy, overflow, warningThreshold }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let keys = try container.decode(KeyPattern.self, forKey: .keys)
        let strategy = try container.decode(Strategy.self, forKey: .strategy)
        let overflow = try container.decodeIfPresent(OverflowPolicy.self, forKey: .overflow) ?? .reject
        let threshold = try container.decodeIfPresent(Int64.self, forKey: .warningThreshold) ?? 0
        do {
            try self.init(keys, strategy, overflow: overflow, warningThreshold: threshold)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description, underlyingError: error))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keys, forKey: .keys)
        try container.encode(strategy, forKey: .strategy)
        try container.encode(overflow, forKey: .overflow)
        try container.encode(warningThreshold, forKey: .warningThreshold)
    }
}
