// The strategies the Redis scripts implement (Scripts/*.lua, Spec/SharedLimits.md), and
// how a configuration and an event travel to a script: ARGV[1] the operation, ARGV[2] the instant
// ("" for the server's clock, SHARED-2), then the configuration's fields in the order of the
// strategy's Spec table (SHARED-1), then the operation's arguments.

@_exported import RateLimitCore

/// One of the Lua scripts of `Sources/RateLimitRedis/Scripts`, as the server receives it: `prelude.lua`, a
/// newline, then the strategy's file. The limiters send it with `EVALSHA` and, when the server
/// does not know it (`NOSCRIPT`), with `EVAL`; an app may also load it ahead (`SCRIPT LOAD`).
public struct RedisScript: Hashable, Sendable {
    /// The strategy's identifier (`gcra`, `token-bucket`, ...), as in the Spec.
    public let strategy: String
    /// The script's text.
    public let source: String
    /// The SHA-1 of ``source`` in hexadecimal, the name `EVALSHA` takes.
    public let sha1: String

    init(strategy: String, file: String, sha1: String) {
        self.strategy = strategy
        self.source = RedisScriptSources.prelude + "\n" + file
        self.sha1 = sha1
    }

    static let tokenBucket = RedisScript(
        strategy: TokenBucket.identifier, file: RedisScriptSources.tokenBucket,
        sha1: RedisScriptSources.tokenBucketSHA1)
    static let intervalTokenBucket = RedisScript(
        strategy: IntervalTokenBucket.identifier, file: RedisScriptSources.intervalTokenBucket,
        sha1: RedisScriptSources.intervalTokenBucketSHA1)
    static let gcra = RedisScript(
        strategy: GCRA.identifier, file: RedisScriptSources.gcra, sha1: RedisScriptSources.gcraSHA1)
    static let fixedWindow = RedisScript(
        strategy: FixedWindow.identifier, file: RedisScriptSources.fixedWindow,
        sha1: RedisScriptSources.fixedWindowSHA1)
    static let slidingWindowLog = RedisScript(
        strategy: SlidingWindowLog.identifier, file: RedisScriptSources.slidingWindowLog,
        sha1: RedisScriptSources.slidingWindowLogSHA1)
    static let leakyBucketMeter = RedisScript(
        strategy: LeakyBucketMeter.identifier, file: RedisScriptSources.leakyBucketMeter,
        sha1: RedisScriptSources.leakyBucketMeterSHA1)
    static let concurrency = RedisScript(
        strategy: ConcurrencyLimiter.identifier, file: RedisScriptSources.concurrency,
        sha1: RedisScriptSources.concurrencySHA1)

    /// Every script, in the order of the Spec.
    public static let all: [RedisScript] = [
        tokenBucket, intervalTokenBucket, gcra, fixedWindow, slidingWindowLog, leakyBucketMeter, concurrency,
    ]
}

/// A strategy with a Redis script: the six time-based strategies a ``RedisRateLimiter`` runs. (The
/// concurrency limiter's script holds leases: ``RedisConcurrencyLimiter``.)
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

extension RateLimitStrategy {
    /// The configuration's fields as a script's arguments, in the order of the strategy's Spec
    /// table (every strategy of the Spec is one of `AnyRateLimitStrategy`'s cases).
    var scriptArguments: [String] {
        (AnyRateLimitStrategy(self)?.fields ?? []).map { String($0.value) }
    }
}
