// The fixed strategies that enforce a learned limit (Spec/AdaptiveLimits.md, ADAPT-15): a rate as
// a token bucket or a GCRA, a concurrency as a concurrency limiter, and either inside a composite
// or an any-strategy limit. An adaptive machine decides no request; it answers a limit, and the
// registry reconfigures the endpoint's key to the strategy that enforces it (REG-7, CORE-13).

/// A strategy whose rate or concurrency an adaptive machine can set (Spec `ADAPT-15`).
public protocol AdaptableStrategy: RateLimitStrategy {
    /// The rate this configuration enforces, the starting point of an adaptive rate; `nil` when
    /// it enforces none.
    var enforcedRate: AdaptiveRate.Limit? { get }
    /// The concurrency this configuration enforces; `nil` when it enforces none.
    var enforcedConcurrency: Int64? { get }
    /// This configuration enforcing `rate` instead of its own (`ADAPT-15`); `nil` when it has no rate.
    func enforcing(_ rate: AdaptiveRate.Limit) -> Self?
    /// This configuration enforcing a concurrency of `limit` instead of its own; `nil` when it has none.
    func enforcing(concurrency limit: Int64) -> Self?
}

extension TokenBucket: AdaptableStrategy {
    /// `permitsPerPeriod` per `periodNanoseconds`, bursts of `capacity`.
    public var enforcedRate: AdaptiveRate.Limit? {
        AdaptiveRate.Limit(rate: permitsPerPeriod, burst: capacity, periodNanoseconds: periodNanoseconds)
    }
    public var enforcedConcurrency: Int64? { nil }

    /// The bucket `(capacity b, permitsPerPeriod r, periodNanoseconds P)`; new buckets (after a
    /// reset) start with at most the tokens this one's did.
    public func enforcing(_ rate: AdaptiveRate.Limit) -> TokenBucket? {
        try? TokenBucket(
            capacity: rate.burst, permitsPerPeriod: rate.rate, periodNanoseconds: rate.periodNanoseconds,
            initialTokens: min(initialTokens, rate.burst))
    }
    public func enforcing(concurrency limit: Int64) -> TokenBucket? { nil }
}

extension GCRA: AdaptableStrategy {
    /// One permit per emission interval, counted per second when the interval is at most a second
    /// (`⌊1 s / T⌋` per second, rounded down), else one per interval; bursts of `burst`.
    public var enforcedRate: AdaptiveRate.Limit? {
        AdaptiveRate.Limit(perEmissionInterval: emissionIntervalNanoseconds, burst: burst)
    }
    public var enforcedConcurrency: Int64? { nil }

    /// The GCRA `(burst b, emissionIntervalNanoseconds ⌈P/r⌉)`: the rate rounded down.
    public func enforcing(_ rate: AdaptiveRate.Limit) -> GCRA? {
        guard let interval = rate.emissionIntervalNanoseconds else { return nil }
        return try? GCRA(burst: rate.burst, emissionIntervalNanoseconds: interval)
    }
    public func enforcing(concurrency limit: Int64) -> GCRA? { nil }
}

extension ConcurrencyLimiter: AdaptableStrategy {
    public var enforcedRate: AdaptiveRate.Limit? { nil }
    /// Its `limit`.
    public var enforcedConcurrency: Int64? { limit }
    public func enforcing(_ rate: AdaptiveRate.Limit) -> ConcurrencyLimiter? { nil }
    /// The concurrency limiter `(limit N)`.
    public func enforcing(concurrency limit: Int64) -> ConcurrencyLimiter? { try? ConcurrencyLimiter(limit: limit) }
}

extension PayLater: AdaptableStrategy {
    /// As GCRA's: one permit per emission interval, counted per second when the interval is at most
    /// a second; bursts of `burst`.
    public var enforcedRate: AdaptiveRate.Limit? {
        AdaptiveRate.Limit(perEmissionInterval: emissionIntervalNanoseconds, burst: burst)
    }
    public var enforcedConcurrency: Int64? { nil }

    /// Pay later `(burst b, emissionIntervalNanoseconds ⌈P/r⌉)`: the rate rounded down; a new
    /// limiter (after a reset) starts with at most the tokens this one's did.
    public func enforcing(_ rate: AdaptiveRate.Limit) -> PayLater? {
        guard let interval = rate.emissionIntervalNanoseconds else { return nil }
        return try? PayLater(
            burst: rate.burst, emissionIntervalNanoseconds: interval, initialTokens: min(initialTokens, rate.burst))
    }
    public func enforcing(concurrency limit: Int64) -> PayLater? { nil }
}

// The other strategies enforce neither a rate an adaptive machine could set nor a concurrency:
// their limits are counts per window, levels, or (warm-up) a rate bound to its cold rate and
// warm-up period; they are left as they are. Every case is named, so a new strategy is decided here.
extension AnyRateLimitStrategy: AdaptableStrategy {
    /// The rate of a token bucket, a GCRA or a pay-later limiter.
    public var enforcedRate: AdaptiveRate.Limit? {
        switch self {
        case .tokenBucket(let bucket): bucket.enforcedRate
        case .gcra(let gcra): gcra.enforcedRate
        case .payLater(let payLater): payLater.enforcedRate
        case .intervalTokenBucket, .warmUp, .fixedWindow, .slidingWindowLog, .slidingWindowCounter,
            .slidingWindowSegments, .leakyBucketMeter, .leakyBucketQueue, .concurrency:
            nil
        }
    }
    /// The limit of a concurrency limiter.
    public var enforcedConcurrency: Int64? {
        switch self {
        case .concurrency(let limiter): limiter.enforcedConcurrency
        case .tokenBucket, .intervalTokenBucket, .gcra, .payLater, .warmUp, .fixedWindow, .slidingWindowLog,
            .slidingWindowCounter, .slidingWindowSegments, .leakyBucketMeter, .leakyBucketQueue:
            nil
        }
    }
    public func enforcing(_ rate: AdaptiveRate.Limit) -> AnyRateLimitStrategy? {
        switch self {
        case .tokenBucket(let bucket): bucket.enforcing(rate).map(AnyRateLimitStrategy.tokenBucket)
        case .gcra(let gcra): gcra.enforcing(rate).map(AnyRateLimitStrategy.gcra)
        case .payLater(let payLater): payLater.enforcing(rate).map(AnyRateLimitStrategy.payLater)
        case .intervalTokenBucket, .warmUp, .fixedWindow, .slidingWindowLog, .slidingWindowCounter,
            .slidingWindowSegments, .leakyBucketMeter, .leakyBucketQueue, .concurrency:
            nil
        }
    }
    public func enforcing(concurrency limit: Int64) -> AnyRateLimitStrategy? {
        switch self {
        case .concurrency(let limiter): limiter.enforcing(concurrency: limit).map(AnyRateLimitStrategy.concurrency)
        case .tokenBucket, .intervalTokenBucket, .gcra, .payLater, .warmUp, .fixedWindow, .slidingWindowLog,
            .slidingWindowCounter, .slidingWindowSegments, .leakyBucketMeter, .leakyBucketQueue:
            nil
        }
    }
}

extension CompositeLimit: AdaptableStrategy {
    /// The rate of its first limit that enforces one (a composite of a per-second and a per-hour
    /// limit learns the first: the others stay as configured).
    public var enforcedRate: AdaptiveRate.Limit? { limits.lazy.compactMap(\.enforcedRate).first }
    /// The concurrency of its first limit that enforces one.
    public var enforcedConcurrency: Int64? { limits.lazy.compactMap(\.enforcedConcurrency).first }

    public func enforcing(_ rate: AdaptiveRate.Limit) -> CompositeLimit? {
        guard let index = limits.firstIndex(where: { $0.enforcedRate != nil }),
            let replaced = limits[index].enforcing(rate)
        else { return nil }
        var changed = limits
        changed[index] = replaced
        return try? CompositeLimit(changed)
    }

    public func enforcing(concurrency limit: Int64) -> CompositeLimit? {
        guard let index = limits.firstIndex(where: { $0.enforcedConcurrency != nil }),
            let replaced = limits[index].enforcing(concurrency: limit)
        else { return nil }
        var changed = limits
        changed[index] = replaced
        return try? CompositeLimit(changed)
    }
}

extension AdaptiveRate.Limit {
    /// One permit per emission interval of `interval` ns, counted per second when the interval is
    /// at most a second (`⌊1 s / T⌋` per second, rounded down), else one per interval.
    @usableFromInline init(perEmissionInterval interval: Int64, burst: Int64) {
        let second: Int64 = 1_000_000_000
        self =
            interval <= second
            ? AdaptiveRate.Limit(rate: second / interval, burst: burst, periodNanoseconds: second)
            : AdaptiveRate.Limit(rate: 1, burst: burst, periodNanoseconds: interval)
    }

    /// The emission interval that enforces this rate, `⌈P/r⌉` (the rate rounded down); `nil` for
    /// a rate below 1.
    @usableFromInline var emissionIntervalNanoseconds: Int64? {
        guard rate >= 1, periodNanoseconds >= 1 else { return nil }
        return periodNanoseconds.multipliedDividedRoundingUp(1, rate)
    }
}

extension AdaptiveRate {
    /// The adaptive rate a client uses for an endpoint whose fixed limit enforces `start` (HTTP-13):
    /// from `start`, between a hundredth of it (at least 1) and four times it, rising by a
    /// quarter of it per round until the first decrease and by a hundredth (at least 1) after,
    /// decreasing by 10% (50% before a round was measured), with a cool-down of one second.
    /// `nil` when `start`'s burst does not fit `ADAPT-2` (a burst that refills in more than
    /// `Int64.max` ns).
    public static func standard(startingAt start: AdaptiveRate.Limit) -> AdaptiveRate? {
        let initial = start.rate
        return try? AdaptiveRate(
            periodNanoseconds: start.periodNanoseconds, maximumRate: initial.multipliedDividedRoundingDown(4, 1),
            initialRate: initial, minimumRate: max(1, initial / 100), burst: start.burst,
            startIncrease: max(1, initial / 4), increase: max(1, initial / 100), decreasePercent: 10,
            steepDecreasePercent: 50, coolDownNanoseconds: 1_000_000_000)
    }
}

extension AdaptiveConcurrency {
    /// The adaptive concurrency a client uses for an endpoint whose fixed limit is `start` in
    /// flight (HTTP-13): between 1 and four times it, alpha 2 and beta 4, decreasing by 10% on a
    /// drop with a cool-down of one second, the baseline kept over windows of ten seconds.
    public static func standard(startingAt start: Int64) -> AdaptiveConcurrency? {
        try? AdaptiveConcurrency(
            maximumLimit: start.multipliedDividedRoundingDown(4, 1), initialLimit: start, minimumLimit: 1, alpha: 2,
            beta: 4, decreasePercent: 10, coolDownNanoseconds: 1_000_000_000, baselineWindowNanoseconds: 10_000_000_000)
    }
}
