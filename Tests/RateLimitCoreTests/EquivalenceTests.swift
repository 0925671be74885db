import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

// The relations of Spec/README.md ("How the strategies relate"): two strategies run side by side
// on the same random trace and must give the same answers. Most pairs are written independently;
// two share code, so their relation checks only what is not shared: the segmented window and the
// sliding log both keep a `PermitLog` (the history checks of SWS-11 and SWL-11 cover its
// arithmetic on each), and the warm-up limiter with no warm-up runs pay later's own debt.

/// Runs `traces` random traces through `a` and `b` and reports the first step where `agree` fails.
private func differential<A: RateLimitStrategy, B: RateLimitStrategy>(
    _ name: String, traces: Int = 60, steps: Int = 250,
    make: (inout SeededGenerator) -> (A, B),
    event: (inout SeededGenerator, A, B) -> (RateLimitEvent<A>, RateLimitEvent<B>),
    next: (inout SeededGenerator, Int64, Int64) -> Int64,
    agree: (RateLimitResult, RateLimitResult) -> Bool = { $0 == $1 }
) {
    for trace in 0..<traces {
        var rng = PropertySeed.generator(name, trace: trace)
        var (a, b) = make(&rng)
        var now = rng.int(in: 0...50)
        var left = RateLimiter(a, at: t(now))
        var right = RateLimiter(b, at: t(now))
        for index in 0..<steps {
            let (eventA, eventB) = event(&rng, a, b)
            now = next(&rng, now, max(1, a.maximumPermits))
            let resultA = left.step(eventA, at: t(now))
            let resultB = right.step(eventB, at: t(now))
            guard
                holds(
                    agree(resultA, resultB),
                    "step \(index) at \(now)ns: \(eventA) -> \(resultA), but \(eventB) -> \(resultB) (configs \(a), \(b))",
                    replay: PropertySeed.replay(name, trace: trace))
            else { break }
            a = left.strategy
            b = right.strategy
        }
    }
}

/// Non-decreasing instants: repeats, 1 ns steps, short and long gaps.
private func forwardInstant(_ rng: inout SeededGenerator, _ now: Int64, _ span: Int64) -> Int64 {
    let delta: Int64 =
        switch rng.int(in: 0...9) {
        case 0...2: 0
        case 3...4: 1
        case 5...7: rng.int(in: 0...40)
        default: rng.int(in: 0...1_000)
        }
    return now > Int64.max - delta ? .max : now + delta
}

/// Any instants: forward as above, or back by up to 100 ns.
private func anyInstant(_ rng: inout SeededGenerator, _ now: Int64, _ span: Int64) -> Int64 {
    rng.chance(15) ? max(0, now - rng.int(in: 1...100)) : forwardInstant(&rng, now, span)
}

/// An acquire size, biased to the edges of `maximum`.
private func permits(_ rng: inout SeededGenerator, _ maximum: Int64) -> Int64 {
    rng.chance(10)
        ? (maximum == .max ? .max : maximum + 1) : rng.chance(10) ? 0 : rng.int(in: 1...max(1, min(maximum, 6)))
}

@Suite("How the strategies relate (Spec/README.md)")
struct EquivalenceTests {
    private static func bucketAndMeter(_ rng: inout SeededGenerator) -> (TokenBucket, LeakyBucketMeter) {
        let bucket = TokenBucket.random(using: &rng)
        let meter = try! LeakyBucketMeter(
            capacity: bucket.capacity, leakPermitsPerPeriod: bucket.permitsPerPeriod,
            periodNanoseconds: bucket.periodNanoseconds, initialLevel: bucket.capacity - bucket.initialTokens)
        return (bucket, meter)
    }

    @Test("TB-12 LBM-12 token bucket and leaky bucket meter answer every trace identically")
    func tokenBucketIsMeter() async { await offThePool { tokenBucketIsMeterOnThread() } }

    private func tokenBucketIsMeterOnThread() {
        differential(
            "tokenBucketIsMeter",
            make: Self.bucketAndMeter,
            event: { rng, bucket, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1:
                    let (newBucket, newMeter) = Self.bucketAndMeter(&rng)
                    return (.reconfigure(newBucket), .reconfigure(newMeter))
                case 2: return (.release(1), .release(1))
                default:
                    let n = permits(&rng, bucket.capacity)
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant)
    }

    /// A GCRA and the token bucket with `permitsPerPeriod = scale` and `P = scale·T`.
    private static func bucketAndGCRA(_ rng: inout SeededGenerator, scaled: Bool) -> (TokenBucket, GCRA) {
        while true {
            let gcra = GCRA.random(using: &rng)
            let scale = scaled ? rng.pick([1, 2, 3, 7, 1_000] as [Int64]) : 1
            guard gcra.emissionIntervalNanoseconds <= Int64.max / scale,
                let bucket = try? TokenBucket(
                    capacity: gcra.burst, permitsPerPeriod: scale,
                    periodNanoseconds: gcra.emissionIntervalNanoseconds * scale)
            else { continue }
            return (bucket, gcra)
        }
    }

    @Test("TB-12 GCRA-12 token bucket with P = R·T and GCRA answer every trace identically")
    func tokenBucketIsGCRA() async { await offThePool { tokenBucketIsGCRAOnThread() } }

    private func tokenBucketIsGCRAOnThread() {
        differential(
            "tokenBucketIsGCRA",
            make: { rng in Self.bucketAndGCRA(&rng, scaled: true) },
            event: { rng, bucket, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1:
                    // A bucket with R > 1 keeps fractions finer than 1/T after a reconfigure (TB-10), which
                    // GCRA cannot hold: the relation covers reconfigures to R = 1 only.
                    let (newBucket, newGCRA) = Self.bucketAndGCRA(&rng, scaled: false)
                    return (.reconfigure(newBucket), .reconfigure(newGCRA))
                case 2: return (.release(1), .release(1))
                default:
                    let n = permits(&rng, bucket.capacity)
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant)
    }

    @Test("GCRA-12 LBQ-12 GCRA admits exactly what the leaky bucket queue admits or schedules")
    func gcraIsQueue() async { await offThePool { gcraIsQueueOnThread() } }

    private func gcraIsQueueOnThread() {
        differential(
            "gcraIsQueue",
            make: { rng in
                let queue = try! LeakyBucketQueue(
                    queueCapacity: rng.int(in: 0...5), intervalNanoseconds: rng.int(in: 1...20))
                return (
                    try! GCRA(burst: queue.queueCapacity + 1, emissionIntervalNanoseconds: queue.intervalNanoseconds),
                    queue
                )
            },
            event: { rng, gcra, _ in
                if rng.chance(5) { return (.reset, .reset) }
                let n = permits(&rng, gcra.burst)
                return (.acquire(n), .acquire(n))
            },
            next: forwardInstant,
            agree: { policed, shaped in
                switch shaped {
                case .delayed(_, let remaining): policed == .allowed(remaining: remaining)
                default: policed == shaped
                }
            })
    }

    /// A GCRA and the pay-later limiter with the same burst and interval (rested, as GCRA starts).
    private static func gcraAndPayLater(_ rng: inout SeededGenerator) -> (GCRA, PayLater) {
        let gcra = GCRA.random(using: &rng)
        return (gcra, try! PayLater(burst: gcra.burst, emissionIntervalNanoseconds: gcra.emissionIntervalNanoseconds))
    }

    @Test("PL-12 GCRA-12 on one-permit requests pay later answers as GCRA, remaining aside")
    func payLaterIsGCRAOnOnePermit() async { await offThePool { payLaterIsGCRAOnOnePermitOnThread() } }

    private func payLaterIsGCRAOnOnePermitOnThread() {
        differential(
            "payLaterIsGCRAOnOnePermit",
            make: Self.gcraAndPayLater,
            event: { rng, _, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1:
                    let (newGCRA, newPayLater) = Self.gcraAndPayLater(&rng)
                    return (.reconfigure(newGCRA), .reconfigure(newPayLater))
                case 2: return (.release(1), .release(1))
                case 3: return (.acquire(-1), .acquire(-1))
                default:
                    let n: Int64 = rng.chance(20) ? 0 : 1
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant,
            agree: { gcra, payLater in
                // PL-5: any size (Int64.max) where GCRA has at least one permit left, none where it has none.
                switch (gcra, payLater) {
                case (.allowed(let slack), .allowed(let remaining)): remaining == (slack > 0 ? .max : 0)
                default: gcra == payLater
                }
            })
    }

    @Test("PL-12 from every state GCRA reaches, pay later admits every acquire GCRA admits")
    func payLaterIsNeverStricterThanGCRA() async { await offThePool { payLaterIsNeverStricterThanGCRAOnThread() } }

    private func payLaterIsNeverStricterThanGCRAOnThread() {
        forEachRandomStep(GCRA.self, "payLaterIsNeverStricterThanGCRA") { step in
            guard case .acquire(let n) = step.event, n > 0, step.result.isAdmitted else { return true }
            let gcra = step.strategy
            let payLater = try! PayLater(
                burst: gcra.burst, emissionIntervalNanoseconds: gcra.emissionIntervalNanoseconds)
            let state = PayLater.State(
                theoreticalArrivalNanoseconds: step.before.theoreticalArrivalNanoseconds,
                lastNanoseconds: step.before.lastNanoseconds)
            let (after, answer) = payLater.step(state, .acquire(n), at: t(step.now))
            return holds(
                answer.isAdmitted && after.theoreticalArrivalNanoseconds == step.after.theoreticalArrivalNanoseconds,
                "GCRA admitted \(n), pay later from the same state answered \(answer): \(step.description)",
                replay: step.replay)
        }
    }

    @Test("TBI-12 FW-12 an interval bucket refilled to capacity each interval is the fixed window")
    func intervalBucketIsFixedWindow() async { await offThePool { intervalBucketIsFixedWindowOnThread() } }

    private func intervalBucketIsFixedWindowOnThread() {
        differential(
            "intervalBucketIsFixedWindow",
            make: { rng in
                let window = FixedWindow.random(using: &rng)
                let bucket = try! IntervalTokenBucket(
                    capacity: window.limit, tokensPerInterval: window.limit,
                    intervalNanoseconds: window.windowNanoseconds)
                return (bucket, window)
            },
            event: { rng, bucket, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1: return (.release(1), .release(1))
                default:
                    let n = permits(&rng, bucket.capacity)
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant)
    }

    /// Pay later and the warm-up limiter with the same burst and interval and no warm-up.
    private static func payLaterAndNoWarmUp(_ rng: inout SeededGenerator) -> (PayLater, WarmUp) {
        let warmUp = WarmUp.random(using: &rng)
        return (
            try! PayLater(burst: warmUp.burst, emissionIntervalNanoseconds: warmUp.emissionIntervalNanoseconds),
            try! WarmUp(
                burst: warmUp.burst, emissionIntervalNanoseconds: warmUp.emissionIntervalNanoseconds,
                warmUpPeriodNanoseconds: 0)
        )
    }

    @Test("WU-12 PL-12 the warm-up limiter with a warm-up period of 0 answers every trace as pay later")
    func noWarmUpIsPayLater() async { await offThePool { noWarmUpIsPayLaterOnThread() } }

    private func noWarmUpIsPayLaterOnThread() {
        differential(
            "noWarmUpIsPayLater",
            make: Self.payLaterAndNoWarmUp,
            event: { rng, _, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1:
                    let (newPayLater, newWarmUp) = Self.payLaterAndNoWarmUp(&rng)
                    return (.reconfigure(newPayLater), .reconfigure(newWarmUp))
                case 2: return (.release(1), .release(1))
                default:
                    let n = rng.chance(10) ? .max : permits(&rng, 8)
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant)
    }

    /// The token bucket of one permit per interval and the warm-up limiter of the same burst with no warm-up.
    private static func bucketAndNoWarmUp(_ rng: inout SeededGenerator) -> (TokenBucket, WarmUp) {
        let gcra = GCRA.random(using: &rng)
        return (
            try! TokenBucket(
                capacity: gcra.burst, permitsPerPeriod: 1, periodNanoseconds: gcra.emissionIntervalNanoseconds),
            try! WarmUp(
                burst: gcra.burst, emissionIntervalNanoseconds: gcra.emissionIntervalNanoseconds,
                warmUpPeriodNanoseconds: 0)
        )
    }

    @Test("WU-12 TB-12 with no warm-up, on one-permit requests, the token bucket's answers, remaining aside")
    func noWarmUpIsTokenBucketOnOnePermit() async { await offThePool { noWarmUpIsTokenBucketOnOnePermitOnThread() } }

    private func noWarmUpIsTokenBucketOnOnePermitOnThread() {
        differential(
            "noWarmUpIsTokenBucketOnOnePermit",
            make: Self.bucketAndNoWarmUp,
            event: { rng, _, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1:
                    let (newBucket, newWarmUp) = Self.bucketAndNoWarmUp(&rng)
                    return (.reconfigure(newBucket), .reconfigure(newWarmUp))
                case 2: return (.release(1), .release(1))
                default:
                    let n: Int64 = rng.chance(20) ? 0 : 1
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant,
            agree: { bucket, warmUp in
                switch (bucket, warmUp) {
                case (.allowed(let tokens), .allowed(let remaining)): remaining == (tokens > 0 ? .max : 0)
                default: bucket == warmUp
                }
            })
    }

    @Test("WU-12 given the same admissions, the warm-up limiter admits only what pay later would")
    func warmUpIsNeverLooserThanPayLater() async { await offThePool { warmUpIsNeverLooserThanPayLaterOnThread() } }

    private func warmUpIsNeverLooserThanPayLaterOnThread() {
        // Pay later takes every event the warm-up limiter applied (its admissions, resets and
        // reconfigures): whenever the warm-up limiter admits, pay later from that history must too.
        var shadow: RateLimiter<PayLater>?
        forEachRandomStep(WarmUp.self, "warmUpIsNeverLooserThanPayLater") { step in
            let same = { (warmUp: WarmUp) in
                try! PayLater(burst: warmUp.burst, emissionIntervalNanoseconds: warmUp.emissionIntervalNanoseconds)
            }
            if step.index == 0 { shadow = RateLimiter(same(step.strategy), at: t(step.before.lastNanoseconds)) }
            guard var payLater = shadow else { return true }
            defer { shadow = payLater }
            switch step.event {
            case .acquire(let n):
                guard n > 0, step.result.isAdmitted else { return true }
                let answer = payLater.step(.acquire(n), at: t(step.now))
                return holds(
                    answer.isAdmitted, "warm-up admitted \(n), pay later answers \(answer): \(step.description)",
                    replay: step.replay)
            case .reset: _ = payLater.step(.reset, at: t(step.now))
            case .reconfigure(let replacement): _ = payLater.step(.reconfigure(same(replacement)), at: t(step.now))
            case .release: break
            }
            return true
        }
    }

    /// A fixed window and the segmented window of one segment of the same length.
    private static func windowAndOneSegment(_ rng: inout SeededGenerator) -> (FixedWindow, SlidingWindowSegments) {
        let window = FixedWindow.random(using: &rng)
        return (
            window,
            try! SlidingWindowSegments(
                limit: window.limit, segmentsPerWindow: 1, segmentNanoseconds: window.windowNanoseconds)
        )
    }

    @Test("SWS-12 FW-12 the segmented window of one segment answers every trace as the fixed window")
    func oneSegmentIsFixedWindow() async { await offThePool { oneSegmentIsFixedWindowOnThread() } }

    private func oneSegmentIsFixedWindowOnThread() {
        differential(
            "oneSegmentIsFixedWindow",
            make: Self.windowAndOneSegment,
            event: { rng, window, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1:
                    let (newWindow, newSegments) = Self.windowAndOneSegment(&rng)
                    return (.reconfigure(newWindow), .reconfigure(newSegments))
                case 2: return (.release(1), .release(1))
                default:
                    let n = permits(&rng, window.limit)
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant)
    }

    /// A sliding log and the segmented window of segments of 1 ns as many as its window.
    private static func logAndNanosecondSegments(_ rng: inout SeededGenerator) -> (
        SlidingWindowLog, SlidingWindowSegments
    ) {
        let log = SlidingWindowLog.random(using: &rng)
        return (
            log,
            try! SlidingWindowSegments(
                limit: log.limit, segmentsPerWindow: log.windowNanoseconds, segmentNanoseconds: 1)
        )
    }

    @Test("SWS-12 SWL-12 the segmented window of 1 ns segments answers every trace as the sliding log")
    func nanosecondSegmentsAreTheLog() async { await offThePool { nanosecondSegmentsAreTheLogOnThread() } }

    private func nanosecondSegmentsAreTheLogOnThread() {
        differential(
            "nanosecondSegmentsAreTheLog",
            make: Self.logAndNanosecondSegments,
            event: { rng, log, _ in
                switch rng.int(in: 0...19) {
                case 0: return (.reset, .reset)
                case 1:
                    let (newLog, newSegments) = Self.logAndNanosecondSegments(&rng)
                    return (.reconfigure(newLog), .reconfigure(newSegments))
                case 2: return (.release(1), .release(1))
                default:
                    let n = permits(&rng, log.limit)
                    return (.acquire(n), .acquire(n))
                }
            },
            next: anyInstant)
    }

    @Test("SWC-12 the sliding counter refuses whenever a fixed window with the same counts would")
    func counterIsStricterThanWindow() async { await offThePool { counterIsStricterThanWindowOnThread() } }

    private func counterIsStricterThanWindowOnThread() {
        forEachRandomStep(SlidingWindowCounter.self, "counterIsStricterThanWindow") { step in
            guard case .acquire(let n) = step.event, n > 0, step.result.isAdmitted else { return true }
            let current = step.strategy.rolled(
                step.before, to: step.strategy.evaluationInstant(step.before, now: step.now)
            ).current
            return holds(
                current <= step.strategy.limit - n,
                "admitted \(n) over a current count of \(current): \(step.description)",
                replay: step.replay)
        }
    }
}
