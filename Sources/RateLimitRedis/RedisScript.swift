// The strategies the Redis scripts implement (Scripts/*.lua, Spec/SharedLimits.md), and
// how a configuration and an event travel to a script: ARGV[1] the operation, ARGV[2] the instant
// ("" for the server's clock, SHARED-2), then the configuration's fields in the order of the
// strategy's Spec table (SHARED-1), then the operation's arguments.

@_exported import RateLimitCore

/// One of the Lua scripts of `Sources/RateLimitRedis/Scripts`, as the server receives it: `prelude.lua`, a
/// newline, then the strategy's file. The limiters send it with `EVALSHA` and, when the server
/// does not know it (`NOSCRIPT`), with `EVAL`; an app may also load it ahead (`SCRIPT LOAD`).
/// Through a ``RedisFunctionRunner`` they call its ``function`` of the ``library`` instead.
public struct RedisScript: Hashable, Sendable {
    /// The strategy's identifier (`gcra`, `token-bucket`, ...), as in the Spec.
    public let strategy: String
    /// The script's text.
    public let source: String
    /// The SHA-1 of ``source`` in hexadecimal, the name `EVALSHA` takes.
    public let sha1: String
    /// The name of the same script in ``library``, which `FCALL` takes: the library's name, then
    /// the strategy's (`ratelimit_<12 hex digits>_gcra`).
    public let function: String

    /// Every script as one Redis Functions library (`Scripts/functions.lua`), the text
    /// `FUNCTION LOAD` takes: the same files, whose top-level code runs at the first call. Its name
    /// (``libraryName``) carries a hash of the files, so libraries of several versions of this
    /// package can be loaded on one server at once.
    public static let library = RedisScriptSources.library

    /// The name of ``library``: `ratelimit_` and 12 hexadecimal digits.
    public static let libraryName = RedisScriptSources.libraryName

    init(strategy: String, file: String, sha1: String, function: String) {
        self.init(strategy: strategy, source: RedisScriptSources.prelude + "\n" + file, sha1: sha1, function: function)
    }

    init(strategy: String, source: String, sha1: String, function: String) {
        self.strategy = strategy
        self.source = source
        self.sha1 = sha1
        self.function = function
    }

    /// The composite limit's script (`composite-script.lua`: the prelude, every strategy's code
    /// and `composite.lua`, made by `make redis-scripts`): one call decides every limit of a
    /// `CompositeLimit`, limit `i` (from 1) at `<key>:<i>`, all or nothing (COMP-4, SHARED-9).
    /// Its ``strategy`` is `composite`.
    public static let composite = RedisScript(
        strategy: CompositeLimit.identifier, source: RedisScriptSources.composite,
        sha1: RedisScriptSources.compositeSHA1, function: RedisScriptSources.compositeFunction)

    static let tokenBucket = RedisScript(
        strategy: TokenBucket.identifier, file: RedisScriptSources.tokenBucket,
        sha1: RedisScriptSources.tokenBucketSHA1, function: RedisScriptSources.tokenBucketFunction)
    static let intervalTokenBucket = RedisScript(
        strategy: IntervalTokenBucket.identifier, file: RedisScriptSources.intervalTokenBucket,
        sha1: RedisScriptSources.intervalTokenBucketSHA1, function: RedisScriptSources.intervalTokenBucketFunction)
    static let gcra = RedisScript(
        strategy: GCRA.identifier, file: RedisScriptSources.gcra, sha1: RedisScriptSources.gcraSHA1,
        function: RedisScriptSources.gcraFunction)
    static let fixedWindow = RedisScript(
        strategy: FixedWindow.identifier, file: RedisScriptSources.fixedWindow,
        sha1: RedisScriptSources.fixedWindowSHA1, function: RedisScriptSources.fixedWindowFunction)
    static let slidingWindowLog = RedisScript(
        strategy: SlidingWindowLog.identifier, file: RedisScriptSources.slidingWindowLog,
        sha1: RedisScriptSources.slidingWindowLogSHA1, function: RedisScriptSources.slidingWindowLogFunction)
    static let leakyBucketMeter = RedisScript(
        strategy: LeakyBucketMeter.identifier, file: RedisScriptSources.leakyBucketMeter,
        sha1: RedisScriptSources.leakyBucketMeterSHA1, function: RedisScriptSources.leakyBucketMeterFunction)
    static let concurrency = RedisScript(
        strategy: ConcurrencyLimiter.identifier, file: RedisScriptSources.concurrency,
        sha1: RedisScriptSources.concurrencySHA1, function: RedisScriptSources.concurrencyFunction)

    /// Every script, in the order of the Spec.
    public static let all: [RedisScript] = [
        tokenBucket, intervalTokenBucket, gcra, fixedWindow, slidingWindowLog, leakyBucketMeter, concurrency,
    ]
}

/// A strategy with a Redis script: the six time-based strategies a ``RedisRateLimiter`` runs, and
/// composites of them. (The concurrency limiter's script holds leases: ``RedisConcurrencyLimiter``.)
public protocol RedisScriptedStrategy: RateLimitStrategy {
    /// The script that decides this strategy's events on the server.
    static var redisScript: RedisScript { get }
}

extension TokenBucket: RedisScriptedStrategy {
    public static var redisScript: RedisScript { .tokenBucket }
}

extension IntervalTokenBucket: RedisScriptedStrategy {
    public static var redisScript: RedisScript { .intervalTokenBucket }
}

extension GCRA: RedisScriptedStrategy {
    public static var redisScript: RedisScript { .gcra }
}

extension FixedWindow: RedisScriptedStrategy {
    public static var redisScript: RedisScript { .fixedWindow }
}

extension SlidingWindowLog: RedisScriptedStrategy {
    public static var redisScript: RedisScript { .slidingWindowLog }
}

extension LeakyBucketMeter: RedisScriptedStrategy {
    public static var redisScript: RedisScript { .leakyBucketMeter }
}

/// A composite of the six time-based strategies with a script: one call over the keys `<key>:1`,
/// `<key>:2`, ... of its limits, which share the key's hash tag on a Redis Cluster (SHARED-9). A
/// concurrency limit (whose permits are leases here: ``RedisConcurrencyLimiter``) is answered
/// `invalid` naming `limits[i]` at every call; a limit of a strategy without a script, a server
/// error naming it (``RedisLimitError/serverError(_:)``).
extension CompositeLimit: RedisScriptedStrategy {
    public static var redisScript: RedisScript { .composite }
}

extension RateLimitStrategy {
    /// The configuration's fields as a script's arguments, in the order of the strategy's Spec
    /// table (every strategy of the Spec is one of `AnyRateLimitStrategy`'s cases).
    var scriptArguments: [String] {
        if let composite = self as? CompositeLimit {
            // The number of limits, then each limit's strategy and fields (composite.lua).
            return [String(composite.limits.count)]
                + composite.limits.flatMap { [$0.kind] + $0.fields.map { String($0.value) } }
        }
        return (AnyRateLimitStrategy(self)?.fields ?? []).map { String($0.value) }
    }

    /// The keys a call about `key` declares: `key`, or a composite's `<key>:1 ... <key>:k`, the
    /// key of each limit (SHARED-9).
    func scriptKeys(_ key: String) -> [String] {
        guard let composite = self as? CompositeLimit else { return [key] }
        return composite.limits.indices.map { "\(key):\($0 + 1)" }
    }
}
