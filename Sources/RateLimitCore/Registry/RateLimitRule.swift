// Rules of a registry (Spec/Registry.md, REG-1 and REG-2): which keys a configuration governs,
// what happens to a request it refuses, and when its quota counts as running low.

/// The keys a rule governs.
public enum KeyPattern: Hashable, Sendable, CustomStringConvertible {
    /// Exactly this key.
    case exact(String)
    /// Every key that starts with this prefix.
    case prefix(String)
    /// Every key no other rule matches (the default rule).
    case anyKey

    public var description: String {
        switch self {
        case .exact(let key): "exact \"\(key)\""
        case .prefix(let prefix): "prefix \"\(prefix)\""
        case .anyKey: "any key"
        }
    }
}

/// What a key does with a request its limit refuses (REG-5).
public enum OverflowPolicy: Hashable, Sendable {
    /// Refuse it at once, with the limit's exact retry-after.
    case reject
    /// Let it wait in the key's queue (Spec/WaitQueue.md) while at most `limit` permits wait;
    /// `timeout` is the longest wait of a request that gives none (`nil`: no limit).
    case queue(limit: Int64, timeout: Duration? = nil)
}

/// One rule of a registry: a key pattern, its limit, its overflow policy and its low-quota threshold.
public struct RateLimitRule<Strategy: RateLimitStrategy>: Hashable, Sendable {
    /// The keys it governs.
    public let keys: KeyPattern
    /// The limit each of those keys gets (each key its own state).
    public let strategy: Strategy
    /// What a key does with a request its limit refuses.
    public let overflow: OverflowPolicy
    /// The quota status is `warning` while the remaining quota is at most this, `ok` above (REG-6).
    public let warningThreshold: Int64
    /// Permits that may wait per key (0 for `reject`).
    @usableFromInline let queueLimit: Int64
    /// The default timeout of a waiting request, in whole nanoseconds.
    @usableFromInline let timeoutNanoseconds: Int64?

    /// A validated rule (REG-1).
    ///
    /// - Throws: ``RateLimitRegistryError/emptyKey(_:)`` for an empty exact key or prefix;
    ///   ``RateLimitRegistryError/invalidRule(_:_:)`` naming `queueLimit` (negative), `timeout`
    ///   (negative, finer than a nanosecond or beyond `Int64.max` ns) or `warningThreshold`
    ///   (negative, or not below the limit's `maximumPermits`).
    public init(
        _ keys: KeyPattern, _ strategy: Strategy, overflow: OverflowPolicy = .reject, warningThreshold: Int64 = 0
    ) throws(RateLimitRegistryError) {
        switch keys {
        case .exact(let key), .prefix(let key): if key.isEmpty { throw .emptyKey(keys) }
        case .anyKey: break
        }
        do {
            switch overflow {
            case .reject:
                (queueLimit, timeoutNanoseconds) = (0, nil)
            case .queue(let limit, let timeout):
                try RateLimitInputError.checkNotNegative(limit, "queueLimit")
                (queueLimit, timeoutNanoseconds) = (limit, try timeout?.wholeNanoseconds(field: "timeout"))
            }
            try Self.checkThreshold(warningThreshold, for: strategy)
        } catch {
            throw .invalidRule(keys, error)
        }
        self.keys = keys
        self.strategy = strategy
        self.overflow = overflow
        self.warningThreshold = warningThreshold
    }

    /// REG-1: `0 ≤ threshold < maximumPermits`, so that a key can be `ok`.
    static func checkThreshold(_ threshold: Int64, for strategy: Strategy) throws(RateLimitInputError) {
        try RateLimitInputError.checkNotNegative(threshold, "warningThreshold")
        try RateLimitInputError.checkAtMost(
            threshold, strategy.maximumPermits - 1, "warningThreshold",
            "a key is ok only while more than the threshold remains")
    }

    /// The same rule with another strategy (REG-7), checked against the threshold.
    @usableFromInline
    func reconfigured(_ replacement: Strategy) throws(RateLimitInputError) -> Self {
        try Self.checkThreshold(warningThreshold, for: replacement)
        return Self(unchecked: keys, replacement, overflow, warningThreshold, queueLimit, timeoutNanoseconds)
    }

    private init(
        unchecked keys: KeyPattern, _ strategy: Strategy, _ overflow: OverflowPolicy, _ warningThreshold: Int64,
        _ queueLimit: Int64, _ timeoutNanoseconds: Int64?
    ) {
        self.keys = keys
        self.strategy = strategy
        self.overflow = overflow
        self.warningThreshold = warningThreshold
        self.queueLimit = queueLimit
        self.timeoutNanoseconds = timeoutNanoseconds
    }
}

/// A registry or rule refused, naming what is wrong (REG-1, REG-7).
public enum RateLimitRegistryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An exact key or a prefix that is empty.
    case emptyKey(KeyPattern)
    /// Two rules with the same pattern.
    case duplicateRule(KeyPattern)
    /// A rule's value is refused, as the error says.
    case invalidRule(KeyPattern, RateLimitInputError)
    /// `maximumKeys` below 1.
    case invalidMaximumKeys(Int)
    /// A rule to reconfigure that the registry does not have.
    case unknownRule(KeyPattern)
    /// A sharded adapter's shard count that is not a power of two from 1 to 1,024 (REG-13).
    case invalidShardCount(Int)

    public var description: String {
        switch self {
        case .emptyKey(let pattern): "rule \(pattern): the key must not be empty"
        case .duplicateRule(let pattern): "rule \(pattern) is given twice"
        case .invalidRule(let pattern, let error): "rule \(pattern): \(error)"
        case .invalidMaximumKeys(let count): "maximumKeys = \(count) must be at least 1"
        case .unknownRule(let pattern): "no rule \(pattern)"
        case .invalidShardCount(let count): "shards = \(count) must be a power of two from 1 to 1024"
        }
    }
}
