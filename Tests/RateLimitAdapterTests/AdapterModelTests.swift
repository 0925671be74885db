import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitShell
import RateLimitTestSupport
import Testing

/// The answer `event` gets from the model at `now` (queue empty, so tryAcquire semantics).
private func modelAnswer<S: RateLimitStrategy>(
    _ model: inout WaitQueue<S>, _ event: ConformanceEvent, priority: RateLimitPriority, at now: RateLimitInstant
) -> String? {
    switch event {
    case .acquire(let permits): "\(model.tryAcquire(permits, priority: priority, at: now).outcome)"
    case .release(let permits): "\(model.release(permits, at: now).result)"
    case .reset: "\(model.reset(at: now).result)"
    case .reconfigure(let configuration):
        configuration.typed(as: S.self).map { "\(model.reconfigure($0, at: now).result)" }
    }
}

private func adapterAnswer<S: RateLimitStrategy>(
    _ adapter: any Adapter<S>, _ event: ConformanceEvent, priority: RateLimitPriority
) async -> String? {
    switch event {
    case .acquire(let permits): "\(await adapter.tryAcquire(permits, priority: priority))"
    case .release(let permits): "\(await adapter.release(permits))"
    case .reset: "\(await adapter.reset())"
    case .reconfigure(let configuration):
        if let strategy = configuration.typed(as: S.self) { "\(await adapter.reconfigure(strategy))" } else { nil }
    }
}

/// Immediate answers through every adapter equal the model's (WQ-4 with an empty queue).
func immediateAnswers<S: RateLimitStrategy>(_ type: S.Type) async throws {
    for trace in 0..<8 {
        let replay = TestSeed.replay("immediateAnswers", trace: trace)
        var rng = TestSeed.generator("immediateAnswers \(S.identifier)", trace: trace)
        guard let script = TraceGenerator.trace(S.identifier, steps: 150, using: &rng),
            let strategy = script.configuration.typed(as: S.self)
        else { continue }
        let priorities = script.steps.map { _ in
            rng.chance(10) ? RateLimitPriority.critical : rng.pick([.low, .normal, .high])
        }
        for (adapter, clock) in try adapters(strategy, queueLimit: 0) {
            var model = try WaitQueue(strategy, queueLimit: 0, at: .origin)
            for (index, step) in script.steps.enumerated() {
                if !adapter.queues {  // the lock-free GCRA: acquire and reset only, no priorities
                    if case .release = step.event { continue }
                    if case .reconfigure = step.event { continue }
                }
                let priority = adapter.queues ? priorities[index] : .normal
                move(clock, to: step.now)
                let now = instant(of: clock)
                guard let expected = modelAnswer(&model, step.event, priority: priority, at: now) else { continue }
                let got = await adapterAnswer(adapter, step.event, priority: priority)
                guard
                    holds(
                        got == expected,
                        "\(adapter.name) \(S.identifier) step \(index) at \(step.now) ns \(step.event): got \(got ?? "-"), want \(expected)",
                        replay: replay)
                else { break }
            }
            await adapter.close()
        }
    }
}

/// One adapter driven side by side with the pure wait queue on the adapter's manual clock: each
/// operation goes to both, and the outcomes the model gives are awaited from the adapter's tasks
/// and compared (its timer's wake-ups are mirrored on the model, WQ-7).
struct ModelReplay<S: RateLimitStrategy> {
    let adapter: any Adapter<S>
    let clock: ManualClock
    /// How to replay a failure, printed with it.
    let replay: String
    var model: WaitQueue<S>
    /// The adapter's requests still running, by the model's ticket, and their permits.
    var tasks: [WaitTicket: Task<Result<RateLimitGrant, RateLimitAcquireError>, Never>] = [:]
    var permits: [WaitTicket: Int64] = [:]
    /// Delayed grants (scheduled starts) are checked at the end, once the clock reaches them.
    var deferred: [(WaitTicket, Result<RateLimitGrant, RateLimitAcquireError>, Int64)] = []
    /// Scheduled starts the clock has reached at some point (their sleepers woke then).
    var started: Set<WaitTicket> = []
    var now: Int64 = 0
    var failed = false
    var log: [String] = []
    /// The instant of the adapter's last operation or wake-up, from which it armed its timer.
    var lastDelivered = RateLimitInstant.origin

    init(adapter: any Adapter<S>, clock: ManualClock, strategy: S, queueLimit: Int64, replay: String) throws {
        self.adapter = adapter
        self.clock = clock
        self.replay = replay
        model = try WaitQueue(strategy, queueLimit: queueLimit, at: .origin)
    }

    private mutating func check(_ condition: Bool, _ message: String) {
        if !holds(condition, "\(adapter.name) \(S.identifier) \(message)", replay: replay) { failed = true }
    }

    /// The adapter's timer, mirrored on the model: every wake-up the clock has reached, each
    /// served at its own instant (WQ-7), as the adapter's timer does.
    private mutating func timerWakeUps(to position: Int64) -> [WaitCompletion] {
        var completions: [WaitCompletion] = []
        while let wake = model.nextWakeUp(at: lastDelivered), wake.nanoseconds <= position, completions.count < 100_000
        {
            completions += model.advance(to: wake).completions
            lastDelivered = wake
        }
        return completions
    }

    /// Awaits the adapter's outcomes for the model's completions and compares them.
    private mutating func settle(_ completions: [WaitCompletion], step: Int) async {
        log.append("  completions \(completions.map { "\($0.ticket) \($0.outcome)" })")
        for completion in completions {
            guard let task = tasks.removeValue(forKey: completion.ticket) else { continue }
            let expected = completion.outcome.grant(permits: permits[completion.ticket] ?? 0)
            if case .success(let grant) = expected, case .delayed(let wait, _)? = grant.answer {
                deferred.append((completion.ticket, expected, completion.at.nanoseconds + wait))
                tasks[completion.ticket] = task
                continue
            }
            let got = await finishes { await task.value }
            check(
                got.map { "\($0)" } == "\(expected)",
                "step \(step): \(completion.ticket) got \(got.map { "\($0)" } ?? "nothing (stuck)"), want \(expected)")
        }
        // The adapter has processed the step once its queue matches the model's (waiters, plus
        // granted requests whose scheduled start the clock has not reached).
        for (ticket, _, start) in deferred where start <= now { started.insert(ticket) }
        let scheduled = deferred.filter { !started.contains($0.0) }.count
        var counts = (0, 0)
        _ = await eventually {
            counts = (await adapter.waitingCount(), await adapter.scheduledCount())
            return counts == (model.waitingCount, scheduled)
        }
        check(
            counts == (model.waitingCount, scheduled),
            "step \(step): \(counts) waiting and scheduled, model \((model.waitingCount, scheduled))")
    }

    /// A request that may wait: `timeout` as the adapter takes it, `deadline` as the model does;
    /// one that continues an earlier request names its `arrival` (WQ-3).
    mutating func acquire(
        _ permits: Int64, priority: RateLimitPriority, timeout: Duration?, arrival: Int64? = nil, step: Int
    ) async {
        let instant = RateLimitInstant.fromManual(now)
        let arrived = arrival.map(RateLimitInstant.fromManual)
        let (ticket, completions) = model.acquire(
            permits, priority: priority,
            deadline: timeout.map { ClockTimeline(clock: ManualClock()).deadline(after: $0, from: instant) },
            arrival: arrived, at: instant)
        self.permits[ticket] = permits
        log.append(
            "  acquire \(ticket) permits \(permits) \(priority) timeout \(timeout.map { "\($0)" } ?? "none") arrival \(arrival.map { "\($0)" } ?? "now") wake \(model.nextWakeUp(at: instant).map { "\($0)" } ?? "none")"
        )
        let adapter = self.adapter
        tasks[ticket] = Task { await adapter.acquire(permits, priority: priority, timeout: timeout, arrival: arrived) }
        lastDelivered = instant
        await settle(completions.completions, step: step)
    }

    mutating func tryAcquire(_ permits: Int64, priority: RateLimitPriority, step: Int) async {
        let expected = model.tryAcquire(permits, priority: priority, at: .fromManual(now))
        lastDelivered = .fromManual(now)
        let got = await adapter.tryAcquire(permits, priority: priority)
        check("\(got)" == "\(expected.outcome)", "step \(step) tryAcquire: got \(got), want \(expected.outcome)")
        await settle(expected.effects.completions, step: step)
    }

    /// The clock moves to `position`: the adapter's timer fires for what fell due.
    mutating func move(to position: Int64, step: Int) async {
        now = position
        RateLimitAdapterTests.move(clock, to: now)
        log.append("  advance to \(now)")
        await settle(timerWakeUps(to: now), step: step)
    }

    /// Cancels the task of a waiting `ticket` (the adapter must be cancellable).
    mutating func cancel(_ ticket: WaitTicket, step: Int) async {
        guard model.isWaiting(ticket) else { return }
        tasks[ticket]?.cancel()
        lastDelivered = .fromManual(now)
        await settle(model.cancel(ticket, at: .fromManual(now)).completions, step: step)
    }

    mutating func release(_ permits: Int64, step: Int) async {
        let expected = model.release(permits, at: .fromManual(now))
        lastDelivered = .fromManual(now)
        let got = await adapter.release(permits)
        check(got == expected.result, "step \(step) release: got \(got), want \(expected.result)")
        await settle(expected.effects.completions, step: step)
    }

    mutating func reset(step: Int) async {
        let expected = model.reset(at: .fromManual(now))
        lastDelivered = .fromManual(now)
        let got = await adapter.reset()
        check(got == expected.result, "step \(step) reset: got \(got), want \(expected.result)")
        await settle(expected.effects.completions, step: step)
    }

    /// Every request left gets an outcome: scheduled starts run once the clock reaches them, and
    /// closing the limiter closes the rest (WQ-9). None may be left hanging.
    mutating func finish(step: Int) async {
        // Serving at a later instant can schedule more starts: repeat until none is ahead.
        for round in 0..<100 {
            guard let last = deferred.map(\.2).max(), last > now else { break }
            await move(to: last, step: step + round)
        }
        for (ticket, expected, _) in deferred {
            guard let task = tasks.removeValue(forKey: ticket) else { continue }
            let got = await finishes { await task.value }
            check(
                got.map { "\($0)" } == "\(expected)",
                "\(ticket) (scheduled) got \(got.map { "\($0)" } ?? "nothing (stuck)"), want \(expected)")
        }
        if failed || !deferred.isEmpty && ProcessInfo.processInfo.environment["RATELIMIT_TRACE"] != nil {
            print("TRACE \(adapter.name) \(S.identifier):\n" + log.joined(separator: "\n"))
        }
        let closing = model.close(at: .fromManual(now)).completions
        await adapter.close()
        await settle(closing, step: -1)
    }
}

/// Waiting requests through every queueing adapter: outcomes, order and wake-ups equal the model's.
func waitingAnswers<S: RateLimitStrategy>(_ type: S.Type, name: String, drift: Bool) async throws {
    for trace in 0..<5 {
        let replay = TestSeed.replay(name, trace: trace)
        var setup = TestSeed.generator("\(name) \(S.identifier)", trace: trace)
        guard let strategy = TraceGenerator.configuration(S.identifier, using: &setup)?.typed(as: S.self) else {
            continue
        }
        let queueLimit = setup.pick([1, 3, 20] as [Int64])
        let span = AnyRateLimitStrategy(strategy).map(TraceGenerator.characteristicNanoseconds) ?? 10
        for (adapter, clock) in try adapters(strategy, queueLimit: queueLimit) where adapter.queues {
            // the same script for every adapter
            var rng = TestSeed.generator("\(name) script \(S.identifier)", trace: trace)
            // Which acquires continue an earlier request (WQ-3), drawn apart so the script stays the same.
            var retries = TestSeed.generator("\(name) arrivals \(S.identifier)", trace: trace)
            var run = try ModelReplay(
                adapter: adapter, clock: clock, strategy: strategy, queueLimit: queueLimit, replay: replay)
            for step in 0..<60 where !run.failed {
                let roll = rng.int(in: 0...99)
                run.log.append("step \(step) roll \(roll) now \(run.now) model waiting \(run.model.waitingCount)")
                switch roll {
                case 0..<45:  // a waiting acquire
                    let permits =
                        rng.chance(5)
                        ? TraceGenerator.permits(maximum: strategy.maximumPermits, using: &rng)
                        : rng.int(in: 1...max(1, min(3, strategy.maximumPermits)))
                    let priority = rng.chance(5) ? RateLimitPriority.critical : rng.pick([.low, .normal, .high])
                    let timeout: Duration? = rng.chance(40) ? .nanoseconds(rng.int(in: 0...times(span, 3))) : nil
                    let arrival = retries.chance(25) ? run.now - retries.int(in: 0...min(run.now, times(span, 3))) : nil
                    await run.acquire(permits, priority: priority, timeout: timeout, arrival: arrival, step: step)
                case 45..<55:
                    await run.tryAcquire(rng.int(in: 1...3), priority: .normal, step: step)
                case 55..<80:  // time passes (or, with drift, jumps)
                    var now = run.now
                    if drift, rng.chance(30) {
                        let jump = rng.pick([1_000_000_000, 86_400_000_000_000, times(span, 5)] as [Int64])
                        now = rng.chance(50) ? max(0, now - jump) : (now > Int64.max - jump ? Int64.max : now + jump)
                    } else {
                        let delta = rng.int(in: 0...times(span, 2))
                        now = now > Int64.max - delta ? Int64.max : now + delta
                    }
                    await run.move(to: now, step: step)
                case 80..<88 where adapter.cancellable:
                    let tickets = run.tasks.keys.sorted()
                    guard !tickets.isEmpty else { continue }
                    await run.cancel(tickets[Int(rng.int(in: 0...Int64(tickets.count - 1)))], step: step)
                case 88..<94:
                    await run.release(rng.int(in: 0...2), step: step)
                case 94..<100:
                    await run.reset(step: step)
                default:
                    continue
                }
            }
            await run.finish(step: 60)
        }
    }
}

/// `value × factor`, saturated at Int64.max.
private func times(_ value: Int64, _ factor: Int64) -> Int64 {
    let (product, overflow) = value.multipliedReportingOverflow(by: factor)
    return overflow ? .max : product
}

extension RateLimitInstant {
    /// A manual clock's position in nanoseconds as an instant (the adapters' timelines start at 0).
    static func fromManual(_ nanoseconds: Int64) -> RateLimitInstant {
        ClockTimeline(clock: ManualClock()).instant(of: ManualClock.Instant(offset: .nanoseconds(nanoseconds)))
    }
}

@Suite("Every adapter answers as the pure wait queue does")
struct AdapterModelTests {
    @Test(
        "WQ-4 tryAcquire, release, reset and reconfigure through every adapter equal the model, at every instant",
        arguments: AnyRateLimitStrategy.identifiers)
    func immediate(_ identifier: String) async throws {
        let type = try #require(strategyTypes[identifier])
        try await immediateAnswers(type)
    }

    @Test(
        "WQ-3 WQ-5 WQ-6 WQ-7 WQ-12 waiting requests: outcomes, order (retries naming an earlier arrival included), timeouts, cancellations, wake-ups and scheduled starts equal the model",
        arguments: AnyRateLimitStrategy.identifiers)
    func waiting(_ identifier: String) async throws {
        let type = try #require(strategyTypes[identifier])
        try await waitingAnswers(type, name: "waiting", drift: false)
    }

    @Test(
        "CORE-10 clock drift: jumps back (a second to a day) and forward: no over-admission, no trap, no stuck waiter",
        arguments: AnyRateLimitStrategy.identifiers)
    func drift(_ identifier: String) async throws {
        let type = try #require(strategyTypes[identifier])
        try await waitingAnswers(type, name: "drift", drift: true)
    }
}
