import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// One permit per 10 ns, burst 1: every second request must wait.
private let onePerTen = try! GCRA(burst: 1, emissionIntervalNanoseconds: 10)

private func queue<S: RateLimitStrategy>(_ strategy: S, limit: Int64 = 100) -> WaitQueue<S> {
    try! WaitQueue(strategy, queueLimit: limit, at: t(0))
}

/// The outcome given to `ticket` among `completions`, if any.
private func outcome(_ ticket: WaitTicket, _ completions: [WaitCompletion]) -> WaitOutcome? {
    completions.first { $0.ticket == ticket }?.outcome
}

@Suite("Wait queue (Spec/WaitQueue.md)")
struct WaitQueueTests {
    @Test("WQ-1 a negative queue limit is refused by name")
    func validation() async { await offThePool { validationOnThread() } }

    private func validationOnThread() {
        expectRefused(field: "queueLimit", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try WaitQueue(onePerTen, queueLimit: -1, at: t(0))
        }
    }

    @Test("WQ-2 WQ-4 a newcomer is granted, rejected or made to wait, as its case says")
    func newcomers() async throws { try await offThePool { try newcomersOnThread() } }

    private func newcomersOnThread() throws {
        var waits = queue(onePerTen, limit: 2)
        // first took the permit
        #expect(outcome(waits.acquire(1, at: t(0)).ticket, waits.acquire(0, at: t(0)).effects.completions) == nil)
        var fresh = queue(onePerTen, limit: 2)
        let granted = fresh.acquire(1, at: t(0))
        #expect(outcome(granted.ticket, granted.effects.completions) == .granted(.allowed(remaining: 0)))
        let query = fresh.acquire(0, at: t(0))
        #expect(outcome(query.ticket, query.effects.completions) == .granted(.allowed(remaining: 0)))
        let negative = fresh.acquire(-1, at: t(0))
        #expect(outcome(negative.ticket, negative.effects.completions) == .rejected(.invalid(.negativePermits(-1))))
        let tooMany = fresh.acquire(2, at: t(0))
        #expect(outcome(tooMany.ticket, tooMany.effects.completions) == .rejected(.neverAllowed))
        let expired = fresh.acquire(1, deadline: t(0), at: t(0))
        #expect(outcome(expired.ticket, expired.effects.completions) == .timedOut)
        let waiting = fresh.acquire(1, deadline: t(5), at: t(0))
        #expect(outcome(waiting.ticket, waiting.effects.completions) == nil)
        #expect(fresh.waitingPermits == 1)
        let second = fresh.acquire(1, at: t(0))
        #expect(outcome(second.ticket, second.effects.completions) == nil)
        let full = fresh.acquire(1, at: t(0))
        #expect(outcome(full.ticket, full.effects.completions) == .rejected(.queueFull))
    }

    @Test("WQ-4 critical requests take permits when they can and bypass the limit when they cannot")
    func critical() async { await offThePool { criticalOnThread() } }

    private func criticalOnThread() {
        var waits = queue(onePerTen)
        let first = waits.acquire(1, priority: .critical, at: t(0))
        #expect(outcome(first.ticket, first.effects.completions) == .granted(.allowed(remaining: 0)))
        let second = waits.acquire(1, priority: .critical, at: t(0))
        #expect(outcome(second.ticket, second.effects.completions) == .bypassed)
        #expect(waits.limiter.state.theoreticalArrivalNanoseconds == 10, "the bypass took nothing")
    }

    @Test("WQ-3 waiters are served by priority, then in arrival order; nobody overtakes the head")
    func order() async throws { try await offThePool { try orderOnThread() } }

    private func orderOnThread() throws {
        let bucket = try TokenBucket(capacity: 4, permitsPerPeriod: 1, periodNanoseconds: 10, initialTokens: 0)
        var waits = queue(bucket)
        let low = waits.acquire(1, priority: .low, at: t(0)).ticket
        let big = waits.acquire(3, priority: .normal, at: t(0)).ticket
        let small = waits.acquire(1, priority: .normal, at: t(0)).ticket
        let high = waits.acquire(1, priority: .high, at: t(0)).ticket
        #expect(
            waits.advance(to: t(10)).completions == [
                WaitCompletion(ticket: high, outcome: .granted(.allowed(remaining: 0)), at: t(10))
            ])
        #expect(waits.advance(to: t(20)).isEmpty, "the 3-permit head blocks the 1-permit request behind it")
        #expect(
            waits.advance(to: t(40)).completions == [
                WaitCompletion(ticket: big, outcome: .granted(.allowed(remaining: 0)), at: t(40))
            ])
        #expect(
            waits.advance(to: t(50)).completions == [
                WaitCompletion(ticket: small, outcome: .granted(.allowed(remaining: 0)), at: t(50))
            ])
        #expect(
            waits.advance(to: t(60)).completions == [
                WaitCompletion(ticket: low, outcome: .granted(.allowed(remaining: 0)), at: t(60))
            ])
    }

    @Test("WQ-4 a newcomer does not overtake waiters of its own or a higher priority, but does overtake lower ones")
    func noOvertaking() async throws { try await offThePool { try noOvertakingOnThread() } }

    private func noOvertakingOnThread() throws {
        let bucket = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 10, initialTokens: 0)
        var waits = queue(bucket)
        _ = waits.acquire(2, priority: .normal, at: t(0))  // waits for 2 tokens
        #expect(waits.tryAcquire(1, priority: .normal, at: t(10)).outcome == .rejected(.waitersAhead))
        #expect(waits.tryAcquire(1, priority: .high, at: t(10)).outcome == .granted(.allowed(remaining: 0)))
        #expect(
            waits.tryAcquire(1, priority: .high, at: t(10)).outcome == .rejected(.limited(retryAfterNanoseconds: 10)))
    }

    @Test("WQ-5 a deadline at the instant of the grant is in time; one before it has passed")
    func deadlines() async { await offThePool { deadlinesOnThread() } }

    private func deadlinesOnThread() {
        var waits = queue(onePerTen)
        _ = waits.acquire(1, at: t(0))
        let onTime = waits.acquire(1, deadline: t(10), at: t(0)).ticket
        #expect(
            waits.advance(to: t(10)).completions == [
                WaitCompletion(ticket: onTime, outcome: .granted(.allowed(remaining: 0)), at: t(10))
            ])
        let late = waits.acquire(1, deadline: t(19), at: t(10)).ticket
        let next = waits.acquire(1, at: t(10)).ticket
        #expect(
            waits.advance(to: t(20)).completions == [
                // Woken only at 20, the queue still times `late` out at its deadline, 19 (WQ-7).
                WaitCompletion(ticket: late, outcome: .timedOut, at: t(19)),
                WaitCompletion(ticket: next, outcome: .granted(.allowed(remaining: 0)), at: t(20)),
            ])
    }

    @Test("WQ-5 a head that times out at now uncovers the waiter behind it, served at the same instant")
    func timeoutUncoversNext() async throws { try await offThePool { try timeoutUncoversNextOnThread() } }

    private func timeoutUncoversNextOnThread() throws {
        let bucket = try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10, initialTokens: 0)
        var waits = queue(bucket)
        let big = waits.acquire(3, deadline: t(20), at: t(0)).ticket  // needs 3 tokens (at 30)
        let small = waits.acquire(2, at: t(0)).ticket  // 2 tokens exist at 20
        #expect(
            waits.advance(to: t(20)).completions == [
                WaitCompletion(ticket: big, outcome: .timedOut, at: t(20)),
                WaitCompletion(ticket: small, outcome: .granted(.allowed(remaining: 0)), at: t(20)),
            ])
        #expect(waits.nextWakeUp(at: t(20)) == nil)
    }

    @Test("WQ-6 cancelling gives one outcome, takes nothing, and lets the next waiter move up")
    func cancellation() async { await offThePool { cancellationOnThread() } }

    private func cancellationOnThread() {
        var waits = queue(onePerTen)
        _ = waits.acquire(1, at: t(0))
        let first = waits.acquire(1, at: t(0)).ticket
        let second = waits.acquire(1, at: t(0)).ticket
        #expect(
            waits.cancel(first, at: t(10)).completions == [
                WaitCompletion(ticket: first, outcome: .cancelled, at: t(10)),
                WaitCompletion(ticket: second, outcome: .granted(.allowed(remaining: 0)), at: t(10)),
            ])
        #expect(waits.cancel(first, at: t(10)).isEmpty)
        #expect(waits.cancel(second, at: t(10)).isEmpty)
        #expect(waits.waitingCount == 0)
    }

    @Test("WQ-7 the next wake-up is the head's admission instant or the earliest deadline")
    func wakeUp() async throws { try await offThePool { try wakeUpOnThread() } }

    private func wakeUpOnThread() throws {
        var waits = queue(onePerTen)
        #expect(waits.nextWakeUp(at: t(0)) == nil)
        _ = waits.acquire(1, at: t(0))
        _ = waits.acquire(1, at: t(3))
        #expect(waits.nextWakeUp(at: t(3)) == t(10))
        _ = waits.acquire(1, deadline: t(7), at: t(4))
        #expect(waits.nextWakeUp(at: t(4)) == t(7))
        var held = queue(try ConcurrencyLimiter(limit: 1))
        _ = held.acquire(1, at: t(0))
        _ = held.acquire(1, at: t(0))
        #expect(held.nextWakeUp(at: t(0)) == nil, "only a release helps")
    }

    @Test("WQ-8 a release, a reset or a reconfigure serves the waiters from the new state")
    func events() async throws { try await offThePool { try eventsOnThread() } }

    private func eventsOnThread() throws {
        var held = queue(try ConcurrencyLimiter(limit: 2))
        _ = held.acquire(2, at: t(0))
        let waiting = held.acquire(1, at: t(0)).ticket
        let (released, served) = held.release(1, at: t(0))
        #expect(released == .allowed(remaining: 1), "the release's own answer, before the waiter is served")
        #expect(
            served.completions == [WaitCompletion(ticket: waiting, outcome: .granted(.allowed(remaining: 0)), at: t(0))]
        )

        var waits = queue(onePerTen)
        _ = waits.acquire(1, at: t(0))
        let afterReset = waits.acquire(1, at: t(0)).ticket
        #expect(
            waits.reset(at: t(1)).effects.completions == [
                WaitCompletion(ticket: afterReset, outcome: .granted(.allowed(remaining: 0)), at: t(1))
            ])
        let big = try GCRA(burst: 2, emissionIntervalNanoseconds: 10)
        var larger = queue(big)
        _ = larger.acquire(2, at: t(0))
        let two = larger.acquire(2, at: t(0)).ticket
        #expect(
            larger.reconfigure(onePerTen, at: t(1)).effects.completions == [
                WaitCompletion(ticket: two, outcome: .rejected(.neverAllowed), at: t(1))
            ])
    }

    @Test(
        "WQ-9 closing at an instant serves what fell due by then first: a deadline passed times out, an admissible head is granted, the rest are closed"
    )
    func closeServesFirst() async throws { try await offThePool { try closeServesFirstOnThread() } }

    private func closeServesFirstOnThread() throws {
        var waits = queue(onePerTen)
        _ = waits.acquire(1, at: t(0))
        let head = waits.acquire(1, at: t(0)).ticket
        let expiring = waits.acquire(1, deadline: t(5), at: t(0)).ticket
        let last = waits.acquire(1, at: t(0)).ticket
        #expect(
            waits.close(at: t(12)).completions == [
                WaitCompletion(ticket: expiring, outcome: .timedOut, at: t(5)),
                WaitCompletion(ticket: head, outcome: .granted(.allowed(remaining: 0)), at: t(10)),
                WaitCompletion(ticket: last, outcome: .closed, at: t(12)),
            ])
    }

    @Test("WQ-9 closing gives every waiter its outcome")
    func close() async { await offThePool { closeOnThread() } }

    private func closeOnThread() {
        var waits = queue(onePerTen)
        _ = waits.acquire(1, at: t(0))
        let tickets = (0..<3).map { _ in waits.acquire(1, at: t(0)).ticket }
        #expect(
            waits.close(at: t(0)).completions == tickets.map { WaitCompletion(ticket: $0, outcome: .closed, at: t(0)) })
        #expect(waits.waitingCount == 0 && waits.waitingPermits == 0)
    }

    struct LateWakeUps: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            for trace in 0..<20 {
                var rng = PropertySeed.generator("lateWakeUps \(S.identifier)", trace: trace)
                let replay = PropertySeed.replay("lateWakeUps", trace: trace)
                let strategy = S.random(using: &rng)
                var now: Int64 = rng.int(in: 0...100)
                // `onTime` is woken at every wake-up; `late` only ever sees the operations.
                guard var onTime = try? WaitQueue(strategy, queueLimit: 20, at: t(now)) else { return }
                var late = onTime
                var (early, delayed): ([WaitCompletion], [WaitCompletion]) = ([], [])
                var tickets: [WaitTicket] = []
                let span = min(strategy.characteristicNanoseconds, Int64.max / 8)
                for step in 0..<150 {
                    let gap = rng.int(in: 0...span * 2)
                    guard now <= Int64.max - gap - span * 3 else { break }
                    now += gap
                    while let wake = onTime.nextWakeUp(at: t(max(0, now - gap))), wake.nanoseconds < now {
                        let served = onTime.advance(to: wake).completions
                        early += served
                        if served.isEmpty { break }
                    }
                    switch rng.int(in: 0...9) {
                    case 0...5:
                        let permits = rng.int(in: 1...max(1, min(3, strategy.maximumPermits)))
                        let deadline = rng.chance(50) ? t(now + rng.int(in: 0...span * 3)) : nil
                        let priority = rng.pick([RateLimitPriority.low, .normal, .high])
                        let a = onTime.acquire(permits, priority: priority, deadline: deadline, at: t(now))
                        let b = late.acquire(permits, priority: priority, deadline: deadline, at: t(now))
                        (early, delayed) = (early + a.effects.completions, delayed + b.effects.completions)
                        tickets.append(a.ticket)
                    case 6, 7:
                        guard let ticket = tickets.randomElement(using: &rng) else { continue }
                        (early, delayed) = (
                            early + onTime.cancel(ticket, at: t(now)).completions,
                            delayed + late.cancel(ticket, at: t(now)).completions
                        )
                    case 8:
                        let n = rng.int(in: 0...2)
                        (early, delayed) = (
                            early + onTime.release(n, at: t(now)).effects.completions,
                            delayed + late.release(n, at: t(now)).effects.completions
                        )
                    default:
                        (early, delayed) = (
                            early + onTime.advance(to: t(now)).completions,
                            delayed + late.advance(to: t(now)).completions
                        )
                    }
                    guard
                        holds(
                            onTime.limiter == late.limiter && Set(early) == Set(delayed),
                            "WQ-7 step \(step) at \(now): woken on time \(Set(early).subtracting(delayed)), late \(Set(delayed).subtracting(early))",
                            replay: replay)
                    else { return }
                }
            }
        }
    }

    @Test(
        "WQ-7 a queue woken late, or never, decides exactly as one woken at every wake-up: same outcomes, at the same instants",
        .heavy, arguments: StrategyKind.all)
    func lateWakeUps(_ kind: StrategyKind) { kind.dispatch(LateWakeUps()) }

    struct ExactlyOnce: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            for trace in 0..<30 {
                var rng = PropertySeed.generator("waitQueueInvariants \(S.identifier)", trace: trace)
                let replay = PropertySeed.replay("waitQueueInvariants", trace: trace)
                let strategy = S.random(using: &rng)
                let limit = rng.pick([0, 1, 3, 10, 1_000] as [Int64])
                var now = TraceGenerator.firstInstant(using: &rng)
                guard var waits = try? WaitQueue(strategy, queueLimit: limit, at: t(now)) else { return }
                // The strategy alone, fed exactly the admissions the queue reports, must end in the same state.
                var shadow = RateLimiter(strategy, at: t(now))
                var outcomes: [WaitTicket: WaitOutcome] = [:]
                var priorities: [WaitTicket: RateLimitPriority] = [:]
                var permits: [WaitTicket: Int64] = [:]
                var issued: [WaitTicket] = []

                /// Replays the admissions `completions` report on the shadow, each at the instant it was decided at.
                func record(_ completions: [WaitCompletion]) -> Bool {
                    for completion in completions {
                        guard
                            holds(
                                outcomes[completion.ticket] == nil, "WQ-10 \(completion.ticket) got a second outcome",
                                replay: replay)
                        else { return false }
                        outcomes[completion.ticket] = completion.outcome
                        let n = permits[completion.ticket] ?? 0
                        switch completion.outcome {
                        case .granted(let answer) where n > 0:
                            let replayed = shadow.acquire(n, at: completion.at)
                            guard
                                holds(
                                    replayed == answer,
                                    "WQ-10 \(completion.ticket) granted \(answer) at \(completion.at), the strategy alone answers \(replayed) (\(completions))",
                                    replay: replay)
                            else { return false }
                        case .bypassed:
                            let replayed = shadow.acquire(n, at: completion.at)
                            guard
                                holds(
                                    !replayed.isAdmitted, "WQ-4 a bypass the strategy would have admitted",
                                    replay: replay)
                            else { return false }
                        default:
                            break
                        }
                    }
                    return true
                }

                for _ in 0..<200 {
                    let waitingBefore = Set(issued.filter { waits.isWaiting($0) })
                    let step = rng.int(in: 0...strategy.characteristicNanoseconds)
                    now =
                        rng.chance(10)
                        ? max(0, now - rng.int(in: 0...20)) : (now > Int64.max - step ? Int64.max : now + step)
                    let instant = t(now)
                    var completions: [WaitCompletion] = []
                    let operation = rng.int(in: 0...9)
                    switch operation {
                    case 0...4:
                        let priority = rng.pick(RateLimitPriority.allCases)
                        let n = TraceGenerator.permits(maximum: strategy.maximumPermits, using: &rng)
                        let deadline =
                            rng.chance(50) ? t(now > Int64.max - 50 ? Int64.max : now + rng.int(in: 0...50)) : nil
                        let (ticket, served) = waits.acquire(n, priority: priority, deadline: deadline, at: instant)
                        (priorities[ticket], permits[ticket]) = (priority, n)
                        issued.append(ticket)
                        completions = served.completions
                        if case .granted? = outcome(ticket, served.completions), n > 0, priority != .critical {
                            let ahead = waitingBefore.filter { priorities[$0]! >= priority && waits.isWaiting($0) }
                            guard holds(ahead.isEmpty, "WQ-4 \(ticket) overtook \(ahead)", replay: replay) else {
                                return
                            }
                        }
                    case 5:
                        if let ticket = issued.randomElement(using: &rng) {
                            completions = waits.cancel(ticket, at: instant).completions
                        }
                    case 6:
                        // WQ-7: what fell due before now is served first, then the release, then the queue at now.
                        let n = rng.int(in: 0...2)
                        let (result, served) = waits.release(n, at: instant)
                        guard record(served.completions.filter { $0.at < instant }) else { return }
                        guard
                            holds(
                                shadow.step(.release(n), at: instant) == result, "WQ-8 release differs", replay: replay)
                        else { return }
                        completions = served.completions.filter { $0.at >= instant }
                    case 7:
                        let (result, served) = waits.reset(at: instant)
                        guard record(served.completions.filter { $0.at < instant }) else { return }
                        guard holds(shadow.step(.reset, at: instant) == result, "WQ-8 reset differs", replay: replay)
                        else { return }
                        completions = served.completions.filter { $0.at >= instant }
                    default:
                        completions = waits.advance(to: instant).completions
                    }
                    guard record(completions) else { return }
                    // WQ-5, WQ-7: after serving, nothing is due at the same instant.
                    if let wake = waits.nextWakeUp(at: instant) {
                        guard
                            holds(
                                wake > instant,
                                "WQ-5 after serving at \(instant), the next wake-up is \(wake) (operation \(operation), completions \(completions), queue \(waits.waitingCount) waiting, limiter \(waits.limiter))",
                                replay: replay)
                        else { return }
                    }
                    guard
                        holds(
                            waits.limiter.state == shadow.state,
                            "WQ-10 the queue's limiter drifted from its admissions", replay: replay),
                        holds(
                            waits.waitingPermits <= limit, "WQ-10 \(waits.waitingPermits) permits wait, limit \(limit)",
                            replay: replay)
                    else { return }
                    // A served waiter never leaves someone ahead of it waiting (a newcomer arrives after serving).
                    let stillWaiting = waitingBefore.filter { waits.isWaiting($0) }
                    for completion in completions where waitingBefore.contains(completion.ticket) {
                        guard case .granted = completion.outcome, let priority = priorities[completion.ticket] else {
                            continue
                        }
                        let ahead = stillWaiting.filter {
                            priorities[$0]! > priority || (priorities[$0]! == priority && $0 < completion.ticket)
                        }
                        guard
                            holds(ahead.isEmpty, "WQ-3 \(completion.ticket) was served before \(ahead)", replay: replay)
                        else { return }
                    }
                }
                guard record(waits.close(at: t(now)).completions) else { return }
                let missing = issued.filter { outcomes[$0] == nil }
                guard holds(missing.isEmpty, "WQ-10 tickets without an outcome: \(missing)", replay: replay) else {
                    return
                }
            }
        }
    }

    @Test(
        "WQ-10 every request gets exactly one outcome, in order, within the queue limit", .heavy,
        arguments: StrategyKind.all)
    func waitQueueInvariants(_ kind: StrategyKind) { kind.dispatch(ExactlyOnce()) }

    /// The adapters' fast path: with nobody waiting, `tryAcquire` answers as the full algorithm
    /// (`tryAcquireServing`, which catches up and serves first: same outcome, same state, nothing
    /// served); with waiters it is the full algorithm.
    struct NobodyWaitsFastPath: StrategyProperty {
        func check<S: RandomizedStrategy>(_ type: S.Type) {
            for trace in 0..<30 {
                var rng = PropertySeed.generator("tryAcquire fast path \(S.identifier)", trace: trace)
                let replay = PropertySeed.replay("tryAcquire fast path", trace: trace)
                let strategy = S.random(using: &rng)
                var now = TraceGenerator.firstInstant(using: &rng)
                guard var waits = try? WaitQueue(strategy, queueLimit: rng.pick([1, 3, 1_000] as [Int64]), at: t(now))
                else { return }
                for _ in 0..<200 {
                    let step = rng.int(in: 0...strategy.characteristicNanoseconds)
                    now =
                        rng.chance(10)
                        ? max(0, now - rng.int(in: 0...20)) : (now > Int64.max - step ? Int64.max : now + step)
                    let n = TraceGenerator.permits(maximum: strategy.maximumPermits, using: &rng)
                    let priority = rng.pick(RateLimitPriority.allCases)
                    var fast = waits
                    var full = waits
                    let available = waits.availability(of: n, priority: priority, at: t(now))
                    let quick = fast.tryAcquire(n, priority: priority, at: t(now))
                    guard
                        holds(
                            available == quick.outcome,
                            "WQ-4 availability \(available), tryAcquire then \(quick.outcome)", replay: replay)
                    else { return }
                    let answer = full.tryAcquireServing(n, priority: priority, at: t(now))
                    guard
                        holds(
                            quick.outcome == answer.outcome,
                            "WQ-4 fast path \(quick.outcome), full algorithm \(answer.outcome)", replay: replay),
                        holds(
                            quick.effects == answer.effects,
                            "WQ-4 fast path served \(quick.effects), full algorithm \(answer.effects)", replay: replay),
                        holds(
                            fast.limiter == full.limiter,
                            "WQ-4 the fast path left \(fast.limiter), the full algorithm \(full.limiter)",
                            replay: replay)
                    else { return }
                    if waits.isEmpty {
                        guard
                            holds(
                                answer.effects.isEmpty,
                                "WQ-4 nobody waits, yet the full algorithm served \(answer.effects)", replay: replay)
                        else { return }
                    }
                    // Move on: mostly requests that may wait, so that the queue fills and empties.
                    if rng.chance(70) {
                        _ = waits.acquire(
                            n, priority: priority,
                            deadline: rng.chance(50)
                                ? t(now > Int64.max - 50 ? Int64.max : now + rng.int(in: 0...50)) : nil, at: t(now))
                    } else {
                        waits = full
                    }
                }
            }
        }
    }

    @Test(
        "WQ-4 with nobody waiting, the adapters' fast path answers as the full algorithm; with waiters it does nothing",
        .heavy, arguments: StrategyKind.all)
    func nobodyWaitsFastPath(_ kind: StrategyKind) { kind.dispatch(NobodyWaitsFastPath()) }

    @Test("WQ-13 effects with nothing in them are one value, however they were made")
    func emptyEffects() async { await offThePool { emptyEffectsOnThread() } }

    private func emptyEffectsOnThread() {
        let none = RateLimitEffects()
        #expect(none.isEmpty && none.completions.isEmpty && none.events.isEmpty)
        #expect(RateLimitEffects(completions: [], events: []) == none)
        #expect(RateLimitEffects(completions: []).hashValue == none.hashValue)
        var grown = none
        let completion = WaitCompletion(ticket: WaitTicket(rawValue: 1), outcome: .closed, at: t(5))
        grown.append(completion)
        #expect(!grown.isEmpty && grown.completions == [completion] && grown != none)
        #expect(grown.removeCompletion(of: completion.ticket) == completion)
        #expect(grown.isEmpty && grown == none, "emptied again, the effects are the empty value")
        #expect(grown.removeCompletion(of: completion.ticket) == nil, "a completion is taken out once")
        grown.append(.rejected(key: "k", permits: 1, outcome: .closed, at: t(5)))
        #expect(!grown.isEmpty && grown.events.count == 1 && grown.completions.isEmpty)
        grown.append(contentsOf: [])
        #expect(grown.events.count == 1 && grown.completions.isEmpty, "appending no completion adds no array")
    }
}
