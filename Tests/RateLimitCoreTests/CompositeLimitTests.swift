import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// The eight strategies a composite accepts (COMP-2: not the leaky bucket queue).
private let composable = AnyRateLimitStrategy.identifiers.filter { $0 != LeakyBucketQueue.identifier }

/// A random composite of one to three limits, and how many of each step's events to draw.
private func randomComposite(using rng: inout SeededGenerator) -> CompositeLimit? {
    let limits = (0..<rng.int(in: 1...3)).compactMap { _ in
        TraceGenerator.configuration(rng.pick(composable), using: &rng)
    }
    return try? CompositeLimit(limits)
}

/// A reconfiguration of `composite` limit by limit (the same strategies, new values).
private func reshaped(_ composite: CompositeLimit, using rng: inout SeededGenerator) -> CompositeLimit? {
    try? CompositeLimit(composite.limits.compactMap { TraceGenerator.configuration($0.kind, using: &rng) })
}

/// The Spec's combination of the limits' own answers (COMP-4, COMP-5).
private func combined(_ answers: [RateLimitResult]) -> RateLimitResult {
    if let invalid = answers.first(where: { if case .invalid = $0 { true } else { false } }) { return invalid }
    if answers.contains(.neverAllowed) { return .neverAllowed }
    let shortfalls = answers.compactMap { if case .rejectedUntilRelease(let s) = $0 { s } else { nil } }
    if let shortfall = shortfalls.max() { return .rejectedUntilRelease(shortfall: shortfall) }
    let waits = answers.compactMap { if case .rejected(let wait) = $0 { wait } else { nil } }
    if let wait = waits.max() { return .rejected(retryAfterNanoseconds: wait) }
    return .allowed(remaining: answers.compactMap(\.remaining).min() ?? 0)
}

@Suite("Any strategy and composite limits (Spec/CompositeLimit.md)")
struct CompositeLimitTests {
    @Test(
        "COMP-1 any strategy answers exactly as the strategy it wraps, on random traces of all nine",
        arguments: AnyRateLimitStrategy.identifiers)
    func anyForwards(_ identifier: String) throws {
        for trace in 0..<20 {
            var rng = PropertySeed.generator("anyForwards \(identifier)", trace: trace)
            let replay = PropertySeed.replay("anyForwards", trace: trace)
            let generated = try #require(TraceGenerator.trace(identifier, steps: 200, using: &rng))
            var any = RateLimiter(generated.configuration, at: t(generated.createdAt))
            var direct = ReferenceLimiter(generated.configuration, at: t(generated.createdAt))
            for (index, step) in generated.steps.enumerated() {
                guard let event = step.event.typed(as: AnyRateLimitStrategy.self) else { continue }
                let expected = direct.apply(step.event, at: t(step.now))
                let got = any.step(event, at: t(step.now))
                guard
                    holds(
                        got == expected,
                        "step \(index) at \(step.now): \(step.event) answered \(got), the strategy \(expected)",
                        replay: replay)
                else { break }
            }
        }
    }

    @Test("COMP-1 a state of another strategy, or a reconfigure to another strategy, is invalid and changes nothing")
    func anyRefusesForeign() async throws { try await offThePool { try anyRefusesForeignOnThread() } }

    private func anyRefusesForeignOnThread() throws {
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10))
        let window = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 3, windowNanoseconds: 10))
        var state = window.initialState(at: t(0))
        let before = state
        guard case .invalid(let error) = bucket.step(&state, .acquire(1), at: t(5)) else {
            Issue.record("a foreign state was used")
            return
        }
        #expect(error.field == "state" && error.problem == .notSupported)
        #expect(state == before)
        var limiter = RateLimiter(bucket, at: t(0))
        #expect(limiter.acquire(2, at: t(0)) == .allowed(remaining: 1))
        let kept = limiter
        guard case .invalid(let refusal) = limiter.step(.reconfigure(window), at: t(1)) else {
            Issue.record("the strategy changed")
            return
        }
        #expect(refusal.field == "configuration" && refusal.problem == .notSupported)
        #expect(limiter == kept)
        #expect(!bucket.isIdle(window.initialState(at: t(0)), at: t(100)))
    }

    @Test("COMP-2 a composite needs at least one limit and refuses a leaky bucket queue, naming it")
    func validation() async throws { try await offThePool { try validationOnThread() } }

    private func validationOnThread() throws {
        #expect(
            throws: RateLimitInputError(
                field: "limits", value: 0, problem: .mustBePositive,
                reason: "a composite needs at least one limit")
        ) { try CompositeLimit([]) }
        let queue = AnyRateLimitStrategy.leakyBucketQueue(
            try LeakyBucketQueue(queueCapacity: 2, intervalNanoseconds: 10))
        let window = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 3, windowNanoseconds: 10))
        do {
            _ = try CompositeLimit(window, queue)
            Issue.record("a leaky bucket queue was accepted")
        } catch {
            #expect(error.field == "limits[1]" && error.problem == .notSupported)
        }
        #expect(try CompositeLimit(window).maximumPermits == 3)
    }

    @Test(
        "COMP-4 COMP-5 10 per second and 1,000 per hour: both must allow, neither records a refusal, the longest wait wins"
    )
    func secondAndHour() async throws { try await offThePool { try secondAndHourOnThread() } }

    private func secondAndHourOnThread() throws {
        let second: Int64 = 1_000_000_000
        let composite = try CompositeLimit(
            .fixedWindow(try FixedWindow(limit: 10, windowNanoseconds: second)),
            .slidingWindowLog(try SlidingWindowLog(limit: 1_000, windowNanoseconds: 3_600 * second)))
        var limiter = RateLimiter(composite, at: t(0))
        for index in 0..<10 { #expect(limiter.acquire(at: t(Int64(index))) == .allowed(remaining: Int64(9 - index))) }
        // The per-second limit refuses until the next second; the hourly one still has 990.
        let before = limiter
        #expect(limiter.acquire(at: t(500)) == .rejected(retryAfterNanoseconds: second - 500))
        #expect(limiter == before)
        // 990 more over the next 99 seconds fill the hour; then the hourly limit has the longest wait.
        for window in 1...99 {
            for _ in 0..<10 { #expect(limiter.acquire(at: t(Int64(window) * second)).isAdmitted) }
        }
        let full = limiter.acquire(at: t(100 * second))
        #expect(full == .rejected(retryAfterNanoseconds: 3_600 * second - 100 * second), "\(full)")
        // At one hour the first admission (at 0) expires: room for exactly one.
        #expect(limiter.acquire(at: t(3_600 * second)) == .allowed(remaining: 0))
    }

    @Test(
        "COMP-3 COMP-4 COMP-5 COMP-6 COMP-7 COMP-8 random composites: all or nothing, the smallest remaining, the Spec's answer, exact and tight"
    )
    func randomComposites() async throws { try await offThePool { try randomCompositesOnThread() } }

    private func randomCompositesOnThread() throws {
        var idleSeen = 0
        for trace in 0..<60 {
            var rng = PropertySeed.generator("randomComposites", trace: trace)
            let replay = PropertySeed.replay("randomComposites", trace: trace)
            guard var composite = randomComposite(using: &rng) else { continue }
            var now = TraceGenerator.firstInstant(using: &rng)
            var state = composite.initialState(at: t(now))
            var retryAfter: Int64?
            steps: for index in 0..<150 {
                let event: RateLimitEvent<CompositeLimit>
                switch rng.int(in: 0...99) {
                case 0..<3: event = .reset
                case 3..<7:
                    guard let replacement = reshaped(composite, using: &rng) else { continue }
                    event = .reconfigure(replacement)
                case 7..<20: event = .release(rng.chance(5) ? -1 : rng.int(in: 0...3))
                default: event = .acquire(TraceGenerator.permits(maximum: composite.maximumPermits, using: &rng))
                }
                let span = composite.limits.map { TraceGenerator.characteristicNanoseconds($0) }.min() ?? 1
                now = TraceGenerator.nextInstant(after: now, span: span, retryAfter: retryAfter, using: &rng)
                let at = t(now)
                let (after, result) = composite.step(state, event, at: at)
                let context = "step \(index) at \(now): \(event) -> \(result), composite \(composite.limits)"

                // The model: each limit on its own (COMP-4 ... COMP-8).
                var alone: [(AnyRateLimitStrategy.State, RateLimitResult)] = []
                for (limit, own) in zip(composite.limits, state.limits) {
                    let limitEvent: RateLimitEvent<AnyRateLimitStrategy>
                    switch event {
                    case .acquire(let permits): limitEvent = .acquire(permits)
                    case .release(let permits):
                        if case .concurrency = limit {
                            limitEvent = .release(permits)
                        } else {
                            limitEvent = .acquire(0)
                        }
                    case .reset: limitEvent = .reset
                    case .reconfigure(let replacement): limitEvent = .reconfigure(replacement.limits[alone.count])
                    }
                    alone.append(limit.step(own, limitEvent, at: at))
                }
                var expected = combined(alone.map(\.1))
                // COMP-6
                if case .acquire(let permits) = event, permits > composite.maximumPermits { expected = .neverAllowed }
                if case .release(let permits) = event {  // COMP-7
                    if !composite.limits.contains(where: { if case .concurrency = $0 { true } else { false } }) {
                        expected = .invalid(.releaseNotSupported)
                    } else if permits < 0 {
                        expected = .invalid(.negativePermits(permits))
                    }
                }
                guard
                    holds(
                        result.comparable == expected.comparable,
                        "COMP-5 answered \(result), the limits say \(expected): \(context)",
                        replay: replay)
                else { break }
                if case .allowed = result {
                    let changed = { if case .acquire(0) = event { false } else { true } }()
                    guard
                        holds(
                            after.limits == (changed ? alone.map(\.0) : state.limits),
                            "COMP-4 a limit recorded otherwise than alone: \(context)",
                            replay: replay)
                    else { break }
                } else {
                    guard holds(after == state, "COMP-5 a refusal changed a limit: \(context)", replay: replay) else {
                        break
                    }
                }
                if case .reconfigure(let replacement) = event, result.isAdmitted { composite = replacement }

                // CORE-6 and CORE-7 for the composite as a whole.
                if let remaining = result.remaining, remaining < Int64.max {
                    let more = composite.step(after, .acquire(remaining + 1), at: at).result
                    guard holds(!more.isAdmitted, "CORE-6 acquire(remaining + 1) admitted: \(context)", replay: replay)
                    else { break }
                    if remaining > 0 {
                        let taken = composite.step(after, .acquire(remaining), at: at).result
                        guard
                            holds(
                                taken.isAdmitted, "CORE-6 acquire(remaining) refused (\(taken)): \(context)",
                                replay: replay)
                        else { break }
                    }
                }
                if case .rejected(let wait) = result, case .acquire(let permits) = event {
                    let atRetry = composite.step(state, .acquire(permits), at: t(now + wait)).result
                    let before = composite.step(state, .acquire(permits), at: t(now + wait - 1)).result
                    guard
                        holds(
                            atRetry.isAdmitted && !before.isAdmitted,
                            "COMP-5 retry-after not tight: at it \(atRetry), 1 ns before \(before): \(context)",
                            replay: replay)
                    else { break }
                }
                // COMP-3: idle exactly when every limit is.
                let idle = composite.isIdle(after, at: at)
                guard
                    holds(
                        idle == zip(composite.limits, after.limits).allSatisfy({ $0.isIdle($1, at: at) }),
                        "COMP-3 idle differs from the limits': \(context)", replay: replay)
                else { break }
                if idle { idleSeen += 1 }
                if case .rejected(let wait) = result { retryAfter = wait }
                state = after
            }
        }
        #expect(idleSeen > 0, "no composite was ever idle: the property was not exercised")
    }

    @Test("COMP-7 a release goes to the concurrency limits only; a release beyond what one holds changes nothing")
    func release() async throws { try await offThePool { try releaseOnThread() } }

    private func releaseOnThread() throws {
        let composite = try CompositeLimit(
            .concurrency(try ConcurrencyLimiter(limit: 2)),
            .tokenBucket(try TokenBucket(capacity: 5, permitsPerPeriod: 1, periodNanoseconds: 100)))
        var limiter = RateLimiter(composite, at: t(0))
        #expect(limiter.acquire(2, at: t(0)) == .allowed(remaining: 0))
        #expect(limiter.acquire(1, at: t(0)) == .rejectedUntilRelease(shortfall: 1))
        let held = limiter
        guard case .invalid(let error) = limiter.step(.release(3), at: t(1)) else {
            Issue.record("released more than held")
            return
        }
        #expect(error.field == "permits" && error.problem == .exceedsMaximum(2))
        #expect(limiter == held)
        #expect(limiter.step(.release(2), at: t(1)) == .allowed(remaining: 2))  // the bucket has 3 left, the limiter 2
        let buckets = try CompositeLimit(.gcra(try GCRA(burst: 2, emissionIntervalNanoseconds: 10)))
        for permits in [1, 0, -1] as [Int64] {
            #expect(
                buckets.step(buckets.initialState(at: t(0)), .release(permits), at: t(0)).result
                    == .invalid(.releaseNotSupported))
        }
    }

    @Test(
        "COMP-8 a composite is reconfigured limit by limit; another count or another strategy is invalid and changes nothing"
    )
    func reconfigureShape() async throws { try await offThePool { try reconfigureShapeOnThread() } }

    private func reconfigureShapeOnThread() throws {
        let window = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 3, windowNanoseconds: 10))
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10))
        var limiter = RateLimiter(try CompositeLimit(window, bucket), at: t(0))
        #expect(limiter.acquire(2, at: t(0)) == .allowed(remaining: 1))
        let kept = limiter
        for (replacement, field) in [
            (try CompositeLimit(window), "limits"), (try CompositeLimit(bucket, window), "limits[0]"),
        ] {
            guard case .invalid(let error) = limiter.step(.reconfigure(replacement), at: t(1)) else {
                Issue.record("reshaped")
                return
            }
            #expect(error.field == field && error.problem == .notSupported)
            #expect(limiter == kept)
        }
        let wider = try CompositeLimit(.fixedWindow(try FixedWindow(limit: 6, windowNanoseconds: 10)), bucket)
        #expect(limiter.step(.reconfigure(wider), at: t(1)) == .allowed(remaining: 1))  // the bucket keeps 1 token
        #expect(limiter.strategy == wider)
    }
}
