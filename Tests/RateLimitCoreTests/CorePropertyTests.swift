import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

// The rules every strategy shares (Spec/Core.md), each checked over random traces of every
// strategy: 40 traces × 300 events per strategy and property, seeded (see Support/Seeds.swift).

private func isAcquire<S>(_ event: RateLimitEvent<S>) -> Int64? {
    if case .acquire(let permits) = event { return permits }
    return nil
}

@Suite("Core rules on random traces of every strategy")
struct CorePropertyTests {
    struct SpansAndCounts: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "spansAndCounts") { step in
                let sane: Bool
                switch step.result {
                case .allowed(let remaining): sane = remaining >= 0
                case .delayed(let wait, let remaining): sane = wait > 0 && remaining >= 0
                case .rejected(let wait): sane = wait > 0 && wait <= Int64.max - step.now
                case .rejectedUntilRelease(let shortfall): sane = shortfall > 0
                case .neverAllowed, .invalid: sane = true
                }
                return holds(sane, "CORE-5 out-of-range span or count: \(step.description)", replay: step.replay)
            }
        }
    }

    @Test(
        "CORE-5 spans are positive, counts never negative, now + retry-after stays on the timeline",
        arguments: StrategyKind.all)
    func spansAndCounts(_ kind: StrategyKind) async { await offThePool { kind.dispatch(SpansAndCounts()) } }

    struct RemainingIsExact: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "remainingIsExact") { step in
                guard let remaining = step.result.remaining else { return true }
                let strategy = step.strategyAfter
                let instant = t(step.now)
                if remaining > 0 {
                    let taken = strategy.step(step.after, .acquire(remaining), at: instant).result
                    guard
                        holds(
                            taken.isAdmitted,
                            "CORE-6 acquire(remaining = \(remaining)) refused with \(taken): \(step.description)",
                            replay: step.replay)
                    else { return false }
                }
                guard remaining < Int64.max else { return true }
                let more = strategy.step(step.after, .acquire(remaining + 1), at: instant).result
                return holds(
                    !more.isAdmitted, "CORE-6 acquire(remaining + 1) admitted with \(more): \(step.description)",
                    replay: step.replay)
            }
        }
    }

    @Test("CORE-6 remaining is the largest acquire admitted at the same instant", arguments: StrategyKind.all)
    func remainingIsExact(_ kind: StrategyKind) async { await offThePool { kind.dispatch(RemainingIsExact()) } }

    struct RetryAfterIsTight: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "retryAfterIsTight") { step in
                guard let permits = isAcquire(step.event) else { return true }
                switch step.result {
                case .rejected(let wait):
                    let at = step.probe(.acquire(permits), at: step.now + wait).result
                    guard
                        holds(
                            at.isAdmitted, "CORE-7 not admitted at now + retry-after (\(at)): \(step.description)",
                            replay: step.replay)
                    else { return false }
                    let before = step.probe(.acquire(permits), at: step.now + wait - 1).result
                    return holds(
                        !before.isAdmitted,
                        "CORE-7 already admitted 1 ns before now + retry-after (\(before)): \(step.description)",
                        replay: step.replay)
                case .neverAllowed:
                    guard permits <= step.strategy.maximumPermits else { return true }
                    // Within capacity: only an admission past the end of the timeline makes it never.
                    let atEnd = step.probe(.acquire(permits), at: .max).result
                    return holds(
                        !atEnd.isAdmitted,
                        "CORE-7 neverAllowed within capacity, yet admitted at the end: \(step.description)",
                        replay: step.replay)
                case .allowed, .delayed, .rejectedUntilRelease, .invalid:
                    return true
                }
            }
        }
    }

    @Test(
        "CORE-7 retry-after is tight: admitted at now + retry-after, rejected 1 ns earlier", arguments: StrategyKind.all
    )
    func retryAfterIsTight(_ kind: StrategyKind) async { await offThePool { kind.dispatch(RetryAfterIsTight()) } }

    struct RefusalChangesNothing: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "refusalChangesNothing") { step in
                switch step.result {
                case .rejected, .rejectedUntilRelease, .neverAllowed, .invalid:
                    return holds(
                        step.after == step.before, "CORE-8 a refused event changed the state: \(step.description)",
                        replay: step.replay)
                case .allowed, .delayed:
                    return true
                }
            }
        }
    }

    @Test("CORE-8 a rejected, never-allowed or invalid event leaves the state unchanged", arguments: StrategyKind.all)
    func refusalChangesNothing(_ kind: StrategyKind) async {
        await offThePool { kind.dispatch(RefusalChangesNothing()) }
    }

    struct ZeroAndNegativePermits: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "zeroAndNegativePermits") { step in
                guard let permits = isAcquire(step.event) else { return true }
                if permits == 0 {
                    guard case .allowed = step.result else {
                        return holds(false, "CORE-9 acquire(0) not allowed: \(step.description)", replay: step.replay)
                    }
                    return holds(
                        step.after == step.before, "CORE-9 acquire(0) changed the state: \(step.description)",
                        replay: step.replay)
                }
                if permits < 0 {
                    return holds(
                        step.result == .invalid(.negativePermits(permits)),
                        "CORE-9 negative permits not invalid: \(step.description)", replay: step.replay)
                }
                return true
            }
        }
    }

    @Test(
        "CORE-9 acquire(0) is an allowed query that records nothing; negative permits are invalid",
        arguments: StrategyKind.all)
    func zeroAndNegativePermits(_ kind: StrategyKind) async {
        await offThePool { kind.dispatch(ZeroAndNegativePermits()) }
    }

    struct BackwardTime: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "backwardTime") { step in
                let instant = step.strategy.evaluationInstant(step.before, now: step.now)
                guard instant > step.now else { return true }
                // Evaluated as if at the evaluation instant: same state, same answer, spans from now.
                let (state, result) = step.probe(step.event, at: instant)
                guard
                    holds(
                        state == step.after,
                        "CORE-10 an earlier now gave another state than \(instant)ns: \(step.description)",
                        replay: step.replay)
                else { return false }
                let expected = step.strategy.measured(result, of: step.event, nanosecondsEarlier: instant - step.now)
                return holds(
                    expected == step.result,
                    "CORE-10 an earlier now answered differently from \(instant)ns (\(result)): \(step.description)",
                    replay: step.replay)
            }
        }
    }

    @Test(
        "CORE-10 an instant earlier than the state's is evaluated at the state's instant", arguments: StrategyKind.all)
    func backwardTime(_ kind: StrategyKind) async { await offThePool { kind.dispatch(BackwardTime()) } }

    struct WaitingNeverHurts: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "waitingNeverHurts") { step in
                guard let permits = isAcquire(step.event), step.result.isAdmitted, step.now < Int64.max else {
                    return true
                }
                let span = step.strategy.characteristicNanoseconds
                for later in [step.now + 1, step.now + min(span, Int64.max - step.now), Int64.max] {
                    let result = step.probe(.acquire(permits), at: later).result
                    guard
                        holds(
                            result.isAdmitted,
                            "CORE-10 admitted at now but not at \(later)ns (\(result)): \(step.description)",
                            replay: step.replay)
                    else { return false }
                }
                return true
            }
        }
    }

    @Test(
        "CORE-10 an acquire admitted at an instant is admitted at every later one (waiting never hurts)",
        arguments: StrategyKind.all)
    func waitingNeverHurts(_ kind: StrategyKind) async { await offThePool { kind.dispatch(WaitingNeverHurts()) } }

    struct IdleIsFresh: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            var idleSeen = 0
            forEachRandomStep(type, "idleIsFresh", traces: 20, steps: 120) { step in
                let strategy = step.strategyAfter
                let span = strategy.characteristicNanoseconds
                var rng = PropertySeed.generator(
                    "idleIsFresh continuation \(S.identifier) \(step.replay)", trace: step.index)
                for gap in [0, span, span > Int64.max / 1_000 ? Int64.max : span * 1_000, Int64.max] {
                    let probed = step.now > Int64.max - gap ? Int64.max : step.now + gap
                    guard strategy.isIdle(step.after, at: t(probed)) else { continue }
                    let idleAt = strategy.evaluationInstant(step.after, now: probed)  // e = max(now, L)
                    idleSeen += 1
                    // Idle: the same answers as a new limiter created then, for any events from then on.
                    var kept = RateLimiter(strategy, at: .origin)
                    kept.storedState = step.after
                    var fresh = RateLimiter(strategy, at: t(idleAt))
                    var instant = idleAt
                    var trail: [String] = []
                    for index in 0..<25 {
                        guard let configuration = AnyRateLimitStrategy(kept.strategy),
                            let event = TraceGenerator.event(for: configuration, using: &rng).typed(as: S.self)
                        else { return false }
                        instant = max(
                            instant,
                            TraceGenerator.nextInstant(after: instant, span: span, retryAfter: nil, using: &rng))
                        let (expected, got) = (fresh.step(event, at: t(instant)), kept.step(event, at: t(instant)))
                        trail.append("\(event) at \(instant)")
                        guard
                            holds(
                                got == expected,
                                "CORE-15 idle at \(idleAt) but event \(index) answered \(got), a new limiter \(expected), after \(trail): \(step.description)",
                                replay: step.replay)
                        else { return false }
                    }
                }
                return true
            }
            #expect(idleSeen > 0, "CORE-15 no \(S.identifier) state was ever idle: the property was not exercised")
        }
    }

    @Test(
        "CORE-15 an idle state answers everything from then on exactly as a new limiter would",
        arguments: StrategyKind.all)
    func idleIsFresh(_ kind: StrategyKind) async { await offThePool { kind.dispatch(IdleIsFresh()) } }

    struct ResetIsFresh: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "resetIsFresh") { step in
                guard case .reset = step.event else { return true }
                let instant = step.strategy.evaluationInstant(step.before, now: step.now)
                let fresh = step.strategy.initialState(at: t(instant))
                return holds(
                    step.after == fresh,
                    "CORE-12 reset differs from a new limiter at \(instant)ns: \(step.description)",
                    replay: step.replay)
            }
        }
    }

    @Test("CORE-12 reset gives exactly the state of a new limiter created at that instant", arguments: StrategyKind.all)
    func resetIsFresh(_ kind: StrategyKind) async { await offThePool { kind.dispatch(ResetIsFresh()) } }

    struct CreatedAtAnInstant: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            var rng = PropertySeed.generator("createdAtAnInstant \(S.identifier)", trace: 0)
            for _ in 0..<200 {
                let strategy = S.random(using: &rng)
                let created = rng.chance(50) ? rng.int(in: 0...1_000) : rng.int(in: 0...Int64.max)
                let limiter = RateLimiter(strategy, at: t(created))
                guard
                    holds(
                        limiter.state == strategy.initialState(at: t(created)) && limiter.strategy == strategy,
                        "CORE-4 a limiter created at \(created) is not in the initial state of \(strategy)",
                        replay: PropertySeed.replay("createdAtAnInstant", trace: 0))
                else { return }
            }
        }
    }

    @Test("CORE-4 a limiter is created at an instant in its strategy's initial state", arguments: StrategyKind.all)
    func createdAtAnInstant(_ kind: StrategyKind) async { await offThePool { kind.dispatch(CreatedAtAnInstant()) } }

    struct ReleaseOnlyWhereHeld: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            forEachRandomStep(type, "releaseOnlyWhereHeld") { step in
                guard case .release(let permits) = step.event, permits >= 0, S.self != ConcurrencyLimiter.self else {
                    return true
                }
                return holds(
                    step.result == .invalid(.releaseNotSupported),
                    "CORE-11 release answered \(step.result): \(step.description)",
                    replay: step.replay)
            }
        }
    }

    @Test("CORE-11 release is invalid on every strategy but the concurrency limiter", arguments: StrategyKind.all)
    func releaseOnlyWhereHeld(_ kind: StrategyKind) async { await offThePool { kind.dispatch(ReleaseOnlyWhereHeld()) } }

    struct Deterministic: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            var first: [RateLimitResult] = []
            forEachRandomStep(type, "deterministic", traces: 10) { step in
                first.append(step.result)
                return true
            }
            var index = 0
            forEachRandomStep(type, "deterministic", traces: 10) { step in
                defer { index += 1 }
                return holds(
                    first[index] == step.result, "CORE-14 the same trace answered differently: \(step.description)",
                    replay: step.replay)
            }
        }
    }

    @Test("CORE-14 the same trace gives the same answers", arguments: StrategyKind.all)
    func deterministic(_ kind: StrategyKind) async { await offThePool { kind.dispatch(Deterministic()) } }
}
