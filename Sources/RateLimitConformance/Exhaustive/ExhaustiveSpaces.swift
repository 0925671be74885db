import RateLimitCore

// The spaces the exhaustive pass walks (Spec/README.md, "Exhaustive checking"): one small
// configuration per strategy and one to reconfigure to, every acquire from −1 to one more than
// either can ever admit, resets, reconfigures both ways (releases for the concurrency limiter),
// at offsets that reach every edge of their periods and windows.
//
// Why these bounds are enough (the small-scope hypothesis): every clause is a comparison of
// counts against a limit and of instants against a period or window edge. Limits of 2–3 and
// periods of 2–4 ns already give each comparison its three sides (one below, at, one above), a
// period that does not divide evenly (fractions of a permit: 2 permits per 4 ns, 1 per 3 ns), a
// weighted acquire larger than one refill and one larger than the limit, more than one window,
// and backward steps of 1 and 3 (within a period and across one). A 16 ns timeline holds four
// windows, so a state's window, the one before and the one before that are all seen; the jump
// to 16 is an idle stretch longer than any refill, and the jump to the end of the timeline
// reaches CORE-7's admissions that would lie past it. Limiters are created at 0 and at 1, off
// every window and interval boundary, so that a grid aligned to the creation is seen. A strategy
// that admits any size (pay later) is tried with acquires up to 4, more than either burst (a debt
// deeper than the tolerance: 4 permits of 2 ns from a rested burst of 3, τ = 6), and with
// `Int64.max`, whose debt runs past the end of the timeline (PL-2).

extension ExhaustiveSpace where S == AnyRateLimitStrategy {
    /// The standard space of `identifier` (one of ``AnyRateLimitStrategy/identifiers``), within
    /// `profile`: in the profile's time unit (each trace is scaled by it before it is sent), up to
    /// its largest instant, without backward steps on a monotonic clock, with only the events it
    /// has (an answer the Spec gives as `invalid` is left out by the walk when it has none).
    /// `nil` for an identifier this function does not know.
    package static func standard(_ identifier: String, profile: ImplementationProfile = .full) -> Self? {
        guard let (standard, alternative) = standardConfigurations(identifier) else { return nil }
        // FW-13: the states of the variant the profile declares.
        let (configuration, other) = (profile.aligned(standard), profile.aligned(alternative))
        let horizon: Int64 = 16
        var offsets: [Int64] = [-3, -1, 0, 1, 2, 3, 4, 5]
        if profile.monotonic { offsets.removeAll { $0 < 0 } }
        let end = profile.largestInstantNanoseconds / max(1, profile.configurationUnitNanoseconds)
        var moves = offsets.map(Move.offset) + [.to(horizon)]
        if end > horizon + 8 { moves.append(.to(end)) }
        let maximum = max(configuration.maximumPermits, other.maximumPermits)
        let sizes: [Int64] = maximum == .max ? Array(-1...3) + [.max] : Array(-1...(maximum + 1))
        var events = sizes.compactMap { permits -> RateLimitEvent<AnyRateLimitStrategy>? in
            if permits > 1, !profile.events.contains(.weighted) { return nil }
            if permits == 0, !profile.events.contains(.query) { return nil }
            if permits < 0, !profile.events.contains(.invalid) { return nil }
            return .acquire(permits)
        }
        if profile.events.contains(.reset) { events.append(.reset) }
        if profile.events.contains(.reconfigure) {
            events += [.reconfigure(other), .reconfigure(configuration)]
            // Warm-up also loses its period: a third configuration, with none (WU-12's edge).
            if identifier == WarmUp.identifier,
                let none = try? WarmUp(burst: 2, emissionIntervalNanoseconds: 1, warmUpPeriodNanoseconds: 0)
            {
                events.append(.reconfigure(.warmUp(none)))
            }
        }
        if identifier == ConcurrencyLimiter.identifier {
            events += [.release(1), .release(2)]
            if profile.events.contains(.invalid) { events.append(.release(-1)) }
        }
        return ExhaustiveSpace(
            strategy: configuration, horizon: horizon, end: end, endMargin: end > horizon + 8 ? 4 : 0, moves: moves,
            events: events, creations: [0, 1])
    }

    /// The configuration walked and the one it is reconfigured to.
    static func standardConfigurations(_ identifier: String) -> (AnyRateLimitStrategy, AnyRateLimitStrategy)? {
        // The values are valid by construction; `try?` only because the initializers validate.
        switch identifier {
        case TokenBucket.identifier:
            guard let a = try? TokenBucket(capacity: 3, permitsPerPeriod: 2, periodNanoseconds: 3, initialTokens: 3),
                let b = try? TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 3, initialTokens: 0)
            else { return nil }
            return (.tokenBucket(a), .tokenBucket(b))
        case IntervalTokenBucket.identifier:
            guard
                let a = try? IntervalTokenBucket(
                    capacity: 3, tokensPerInterval: 2, intervalNanoseconds: 4, initialTokens: 0),
                let b = try? IntervalTokenBucket(capacity: 2, tokensPerInterval: 1, intervalNanoseconds: 3)
            else { return nil }
            return (.intervalTokenBucket(a), .intervalTokenBucket(b))
        case GCRA.identifier:
            guard let a = try? GCRA(burst: 3, emissionIntervalNanoseconds: 2),
                let b = try? GCRA(burst: 2, emissionIntervalNanoseconds: 3)
            else { return nil }
            return (.gcra(a), .gcra(b))
        case PayLater.identifier:
            guard let a = try? PayLater(burst: 3, emissionIntervalNanoseconds: 2),
                let b = try? PayLater(burst: 2, emissionIntervalNanoseconds: 3, initialTokens: 0)
            else { return nil }
            return (.payLater(a), .payLater(b))
        case WarmUp.identifier:
            // A warm-up of 4 ns over 2 ns per permit: coldness 0 … 4, a threshold at 2, ramp areas
            // with halves to round up; the other a shorter one over 1 ns, so that a reconfigure
            // caps a coldness between the two periods (and a third, reconfigured to in `standard`,
            // has none).
            guard let a = try? WarmUp(burst: 2, emissionIntervalNanoseconds: 2, warmUpPeriodNanoseconds: 4),
                let b = try? WarmUp(burst: 2, emissionIntervalNanoseconds: 1, warmUpPeriodNanoseconds: 2)
            else { return nil }
            return (.warmUp(a), .warmUp(b))
        case FixedWindow.identifier:
            guard let a = try? FixedWindow(limit: 3, windowNanoseconds: 4),
                let b = try? FixedWindow(limit: 2, windowNanoseconds: 3)
            else { return nil }
            return (.fixedWindow(a), .fixedWindow(b))
        case SlidingWindowLog.identifier:
            guard let a = try? SlidingWindowLog(limit: 3, windowNanoseconds: 4),
                let b = try? SlidingWindowLog(limit: 2, windowNanoseconds: 3)
            else { return nil }
            return (.slidingWindowLog(a), .slidingWindowLog(b))
        case SlidingWindowCounter.identifier:
            guard let a = try? SlidingWindowCounter(limit: 3, windowNanoseconds: 4),
                let b = try? SlidingWindowCounter(limit: 2, windowNanoseconds: 3)
            else { return nil }
            return (.slidingWindowCounter(a), .slidingWindowCounter(b))
        case SlidingWindowSegments.identifier:
            // Two segments of 2 ns: a window of 4 that slides in steps; one segment of 3: the fixed window.
            guard let a = try? SlidingWindowSegments(limit: 3, segmentsPerWindow: 2, segmentNanoseconds: 2),
                let b = try? SlidingWindowSegments(limit: 2, segmentsPerWindow: 1, segmentNanoseconds: 3)
            else { return nil }
            return (.slidingWindowSegments(a), .slidingWindowSegments(b))
        case LeakyBucketMeter.identifier:
            guard
                let a = try? LeakyBucketMeter(
                    capacity: 3, leakPermitsPerPeriod: 2, periodNanoseconds: 3, initialLevel: 0),
                let b = try? LeakyBucketMeter(
                    capacity: 2, leakPermitsPerPeriod: 1, periodNanoseconds: 3, initialLevel: 2)
            else { return nil }
            return (.leakyBucketMeter(a), .leakyBucketMeter(b))
        case LeakyBucketQueue.identifier:
            guard let a = try? LeakyBucketQueue(queueCapacity: 2, intervalNanoseconds: 3),
                let b = try? LeakyBucketQueue(queueCapacity: 1, intervalNanoseconds: 2)
            else { return nil }
            return (.leakyBucketQueue(a), .leakyBucketQueue(b))
        case ConcurrencyLimiter.identifier:
            guard let a = try? ConcurrencyLimiter(limit: 3), let b = try? ConcurrencyLimiter(limit: 1) else {
                return nil
            }
            return (.concurrency(a), .concurrency(b))
        default:
            return nil
        }
    }
}
