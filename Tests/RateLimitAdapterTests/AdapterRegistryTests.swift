import Foundation
import RateLimitConformance
import RateLimitCore
import RateLimitDispatch
import RateLimitTestSupport
import Testing

/// Three rules with random limits: an exact key that queues, a prefix that rejects, a default
/// that queues with a timeout; thresholds make quota statuses move.
private func adapterRules(using rng: inout SeededGenerator) throws -> [RateLimitRule<AnyRateLimitStrategy>] {
    [
        try RateLimitRule(.exact("alpha"), adapterLimit(using: &rng), overflow: .queue(limit: 6), warningThreshold: 1),
        try RateLimitRule(.prefix("api/"), adapterLimit(using: &rng), overflow: .reject, warningThreshold: 1),
        try RateLimitRule(.anyKey, adapterLimit(using: &rng), overflow: .queue(limit: 4, timeout: .nanoseconds(300))),
    ]
}

/// A random limit of the adapter rules' kinds and sizes.
private func adapterLimit(using rng: inout SeededGenerator) -> AnyRateLimitStrategy {
    // Scheduled starts (the leaky bucket queue) are checked by the single-limiter tests.
    let kinds = [
        TokenBucket.identifier, GCRA.identifier, PayLater.identifier, WarmUp.identifier, FixedWindow.identifier,
        SlidingWindowLog.identifier, SlidingWindowCounter.identifier, SlidingWindowSegments.identifier,
        ConcurrencyLimiter.identifier,
    ]
    while true {
        // Pay later and warm-up admit any size (PL-7, WU-7): their burst is what must stay small.
        if let strategy = TraceGenerator.configuration(rng.pick(kinds), using: &rng),
            strategy.maximumPermits >= 2,
            strategy.typed(as: PayLater.self)?.burst ?? strategy.typed(as: WarmUp.self)?.burst
                ?? strategy.maximumPermits < 1_000,
            TraceGenerator.characteristicNanoseconds(strategy) < 1_000
        {
            return strategy
        }
    }
}

/// One request in flight through an adapter, and what the model says of it.
private struct Pending {
    let task: Task<Result<RateLimitGrant, RateLimitAcquireError>, Never>
    let permits: Int64
}

@Suite("Registries through every adapter")
struct AdapterRegistryTests {
    @Test(
        "REG-5 REG-8 REG-10 REG-12 REG-13 WQ-3 WQ-13 every adapter's registry answers as the pure registry does: outcomes (retries naming an earlier arrival included), availability, keys held, forgotten and removed, quota, statistics and the event stream",
        arguments: 0..<10)
    func scripts(_ trace: Int) async throws {
        let replay = TestSeed.replay("AdapterRegistryTests", trace: trace)
        var setup = TestSeed.generator("registryAdapters", trace: trace)
        let rules = try adapterRules(using: &setup)
        // The last traces hold at most 3 of 9 keys: new keys forget idle ones, or are refused,
        // across a sharded registry's shards (REG-8, REG-13).
        let full = trace >= 6
        let maximumKeys = full ? 3 : 10_000
        let keys =
            full
            ? ["alpha", "api/a", "api/b", "api/c", "other", "zeta", "k1", "k2", "k3"]
            : ["alpha", "api/a", "api/b", "other", "zeta"]
        for (adapter, clock) in try registryAdapters(rules, maximumKeys: maximumKeys) {
            var rng = TestSeed.generator("registryAdapters script", trace: trace)  // the same script for every adapter
            // Which acquires continue an earlier request (WQ-3), drawn apart so the script stays the same.
            var retries = TestSeed.generator("registryAdapters arrivals", trace: trace)
            var model = try RateLimitRegistry(rules: rules, maximumKeys: maximumKeys, at: .origin)
            var expectedEvents: [RegistryEvent] = []
            let log = EventLog()
            let stream = await adapter.events()
            let collector = Task { for await event in stream { log.append(event) } }
            var pending: [WaitTicket: Pending] = [:]
            var now: Int64 = 0
            var failed = false
            var steps: [String] = []

            /// Delivers the model's effects: each completed request's task must end the same way;
            /// then waits until the adapter holds the same waiters.
            func settle(_ effects: RateLimitEffects, _ context: String) async {
                expectedEvents += effects.events
                for completion in effects.completions {
                    guard let request = pending.removeValue(forKey: completion.ticket) else { continue }
                    let expected = completion.outcome.grant(permits: request.permits)
                    let got = await finishes { await request.task.value }
                    if !holds(
                        "\(String(describing: got))" == "\(String(describing: Optional(expected)))",
                        "\(adapter.name) \(context): \(completion.ticket) got \(String(describing: got)), want \(expected)",
                        replay: replay)
                    {
                        failed = true
                    }
                }
                _ = await eventually { await adapter.waitingCount() == model.waitingCount }
                let waiting = await adapter.waitingCount()
                if !holds(
                    waiting == model.waitingCount,
                    "\(adapter.name) \(context): \(waiting) waiting, model \(model.waitingCount)",
                    replay: replay)
                {
                    failed = true
                }
            }

            /// Records a result that differs from the model's.
            func agree(_ got: RateLimitResult, _ expected: RateLimitResult, _ what: String) {
                if !holds(
                    got.comparable == expected.comparable, "\(adapter.name) \(what): \(got), want \(expected)",
                    replay: replay)
                {
                    failed = true
                }
            }

            for step in 0..<70 where !failed {
                let key = rng.pick(keys)
                let at = RateLimitInstant.fromManual(now)
                let context = "step \(step) at \(now) \(key)"
                let roll = rng.int(in: 0...99)
                steps.append("\(context) roll \(roll) model next wake \(String(describing: model.nextWakeUp))")
                switch roll {
                case 0..<35:
                    let permits = rng.int(in: 1...2)
                    let priority = rng.chance(5) ? RateLimitPriority.critical : rng.pick([.low, .normal, .high])
                    let timeout: Duration? = rng.chance(30) ? .nanoseconds(rng.int(in: 0...200)) : nil
                    let arrival = retries.chance(50) ? RateLimitInstant.fromManual(now - retries.int(in: 0...now)) : nil
                    let (ticket, effects) = model.acquire(
                        key, permits: permits, priority: priority, timeout: timeout, arrival: arrival, at: at)
                    pending[ticket] = Pending(
                        task: Task {
                            await adapter.acquire(
                                key, permits: permits, priority: priority, timeout: timeout, arrival: arrival)
                        },
                        permits: permits)
                    if !effects.completions.contains(where: { $0.ticket == ticket }) {
                        // Waits: let the adapter queue it before anything else happens.
                        _ = await eventually { await adapter.waitingCount() >= model.waitingCount }
                    }
                    await settle(effects, context)
                case 35..<55:
                    let permits = rng.int(in: 0...2)
                    let (expected, effects) = model.tryAcquire(key, permits: permits, at: at)
                    let got = await adapter.tryAcquire(key, permits: permits, priority: .normal)
                    if !holds(
                        got == expected, "\(adapter.name) \(context) tryAcquire(\(permits)): \(got), want \(expected)",
                        replay: replay)
                    {
                        failed = true
                    }
                    await settle(effects, context)
                case 55..<62:
                    let permits = rng.int(in: 0...2)
                    let (expected, effects) = model.release(key, permits: permits, at: at)
                    agree(await adapter.release(key, permits: permits), expected, "\(context) release")
                    await settle(effects, context)
                case 62..<67:
                    let duration = rng.int(in: 0...300)
                    let effects = model.throttle(key, until: RateLimitInstant.fromManual(now + duration), at: at)
                    await adapter.throttle(key, for: .nanoseconds(duration))
                    await settle(effects, context)
                case 67..<70:
                    let effects = model.disable(key, at: at)
                    await adapter.disable(key)
                    await settle(effects, context)
                case 70..<76:
                    let effects = model.resume(key, at: at)
                    await adapter.resume(key)
                    await settle(effects, context)
                case 76..<82 where adapter.cancellable && !pending.isEmpty:
                    let ticket = pending.keys.sorted()[Int(rng.int(in: 0...Int64(pending.count - 1)))]
                    pending[ticket]?.task.cancel()
                    await settle(model.cancel(ticket, at: at), context)
                case 82..<85:
                    let (expected, effects) = model.remove(key, at: at)
                    let got = await adapter.remove(key)
                    if !holds(
                        got == expected, "\(adapter.name) \(context) remove: \(got), want \(expected)", replay: replay)
                    {
                        failed = true
                    }
                    await settle(effects, context)
                case 85..<88:
                    let permits = rng.int(in: 1...2)
                    let expected = model.availability(key, permits: permits, at: at)
                    let got = await adapter.availability(key, permits: permits, priority: .normal)
                    if !holds(
                        got == expected,
                        "\(adapter.name) \(context) availability(\(permits)): \(got), want \(expected)",
                        replay: replay)
                    {
                        failed = true
                    }
                case 88..<90:
                    // A limit of another kind, or under the rule's warning threshold, is refused
                    // (REG-7); only the threshold's refusal leaves a new key uncreated (REG-13).
                    let strategy = adapterLimit(using: &rng)
                    let (expected, effects) = model.reconfigure(key, to: strategy, at: at)
                    agree(await adapter.reconfigure(key, to: strategy), expected, "\(context) reconfigure")
                    await settle(effects, context)
                case 90..<92:
                    let effects = model.resetAll(at: at)
                    await adapter.resetAll()
                    await settle(effects, context)
                    let held = await adapter.keys()
                    if !holds(
                        held == model.keys, "\(adapter.name) \(context) keys: \(held), want \(model.keys)",
                        replay: replay)
                    {
                        failed = true
                    }
                default:
                    now += rng.int(in: 1...150)
                    move(clock, to: now)
                    // The adapter's timer, mirrored: every wake-up the clock reached, each at its own instant.
                    var (completions, events): ([WaitCompletion], [RegistryEvent]) = ([], [])
                    while let wake = model.nextWakeUp, wake.nanoseconds <= now {
                        let served = model.advance(to: wake)
                        (completions, events) = (completions + served.completions, events + served.events)
                    }
                    await settle(RateLimitEffects(completions: completions, events: events), context)
                }
            }
            // Quota and statistics agree key by key, and in total.
            for key in keys where !failed {
                let got = await adapter.quota(of: key)
                let expected = model.quota(of: key, at: RateLimitInstant.fromManual(now))
                if !holds(
                    got == expected,
                    "\(adapter.name) quota of \(key): \(String(describing: got)), want \(String(describing: expected))",
                    replay: replay)
                {
                    failed = true
                }
            }
            let totals = await adapter.totals()
            if !failed {
                holds(totals == model.totals, "\(adapter.name) totals \(totals), want \(model.totals)", replay: replay)
            }
            // Closing ends every waiter and the event stream; the stream saw every event, in order.
            await adapter.close()
            await settle(model.close(at: RateLimitInstant.fromManual(now)), "close")
            _ = await finishes { await collector.value }
            if !failed {
                let same = adapter.sameEvents(log.events, expectedEvents)
                if !same { print("TRACE \(adapter.name) trace \(trace):\n" + steps.joined(separator: "\n")) }
                holds(
                    same,
                    "\(adapter.name): events \(log.events.count), want \(expectedEvents.count)\n  got  \(log.events)\n  want \(expectedEvents)",
                    replay: replay)
            }
        }
    }

    @Test(
        "REG-7 REG-8 REG-13 in a full registry, a key that is not created (a refused reconfigure, an unknown key) forgets no idle key; a new key does, on every adapter"
    )
    func fullRegistryForgetsOnlyForANewKey() async throws {
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 10))
        let one = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 10))
        let rules = [try RateLimitRule(.prefix("k/"), bucket, warningThreshold: 1)]
        for (adapter, _) in try registryAdapters(rules, maximumKeys: 2) {
            // Two keys, idle at once (a request that takes nothing leaves a bucket full).
            _ = await adapter.tryAcquire("k/a", permits: 0, priority: .normal)
            _ = await adapter.tryAcquire("k/b", permits: 0, priority: .normal)
            // A limit under the rule's warning threshold is refused before the key is created
            // (REG-7): nothing is forgotten for it.
            guard case .invalid = await adapter.reconfigure("k/c", to: one) else {
                Issue.record("\(adapter.name): a limit of 1 under a threshold of 1 was accepted")
                continue
            }
            var held = await adapter.keys()
            #expect(held == ["k/a", "k/b"], "\(adapter.name): \(held)")
            #expect(await adapter.tryAcquire("other", permits: 1, priority: .normal) == .rejected(.unknownKey))
            held = await adapter.keys()
            #expect(held == ["k/a", "k/b"], "\(adapter.name): \(held)")
            // A new key finds the registry full: both idle keys go, and it is held.
            #expect(await adapter.tryAcquire("k/c", permits: 1, priority: .normal).isGranted, "\(adapter.name)")
            held = await adapter.keys()
            #expect(held == ["k/c"], "\(adapter.name): \(held)")
            await adapter.close()
        }
    }

    @Test(
        "REG-5 WQ-9 a registry's tryAcquire (each shell's own, prefetching the key) answers on an empty table, on a held key and on a new one, and answers closed once the registry is closed, on every adapter"
    )
    func tryAcquireAcrossTheTableAndClose() async throws {
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 1_000))
        let rules = [try RateLimitRule(.anyKey, bucket)]
        for (adapter, _) in try registryAdapters(rules) {
            // The first request meets a table with no rows: what it prefetches is no key's row.
            #expect(
                await adapter.tryAcquire("a", permits: 1, priority: .normal) == .granted(.allowed(remaining: 0)),
                "\(adapter.name)")
            // The manual clock stands still: the wait is the whole period.
            #expect(
                await adapter.tryAcquire("a", permits: 1, priority: .normal)
                    == .rejected(.limited(retryAfterNanoseconds: 1_000)), "\(adapter.name)")
            #expect(
                await adapter.tryAcquire("b", permits: 1, priority: .normal) == .granted(.allowed(remaining: 0)),
                "\(adapter.name)")
            await adapter.close()
            for key in ["a", "c"] {
                #expect(await adapter.tryAcquire(key, permits: 1, priority: .normal) == .closed, "\(adapter.name)")
            }
        }
    }

    @Test("REG-10 the callback form reports the same events as the stream, in order, on every adapter")
    func eventHandler() async throws {
        let bucket = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 100))
        let rules = [try RateLimitRule(.anyKey, bucket, warningThreshold: 1)]
        for (adapter, clock) in try registryAdapters(rules) {
            let (streamed, handled) = (EventLog(), EventLog())
            let stream = await adapter.events()
            let collector = Task { for await event in stream { streamed.append(event) } }
            await adapter.setEventHandler { handled.append($0) }
            // ok → warning → limited, then a refusal
            for _ in 0..<4 { _ = await adapter.tryAcquire("k", permits: 1, priority: .normal) }
            await adapter.throttle("k", for: .nanoseconds(50))
            move(clock, to: 1_000)
            _ = await adapter.tryAcquire("k", permits: 1, priority: .normal)  // throttle ended, quota recovered
            await adapter.close()
            _ = await finishes { await collector.value }
            _ = await eventually { handled.events.count >= streamed.events.count }
            #expect(streamed.events.count >= 6, "\(adapter.name): \(streamed.events)")
            #expect(handled.events == streamed.events, "\(adapter.name)")
        }
    }

    @Test(
        "REG-10 the Dispatch event handler gets events one at a time and in order, even on a concurrent callback queue")
    func dispatchHandlerOrder() async throws {
        let rules = [
            try RateLimitRule(
                .anyKey, AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 1, windowNanoseconds: 1_000)))
        ]
        let registry = try DispatchRateLimitRegistry(rules: rules, clock: ManualClock(), callbackQueue: .global())
        let handled = EventLog()
        let busy = Counter()
        registry.setEventHandler { event in
            guard busy.enter() else { return handled.append(event) }  // a second handler running at once
            if case .rejected(_, let permits, _, _) = event, permits % 2 == 0 {
                var work = 0
                for value in 0..<200_000 { work &+= value }  // a slow handler, for some events
                if work == 1 { handled.append(event) }
            }
            handled.append(event)
            busy.leave()
        }
        // never allowed: one event each
        for permits in 2...101 as ClosedRange<Int64> { _ = registry.tryAcquire("k", permits: permits) }
        _ = await eventually { handled.events.count >= 100 }
        let order = handled.events.compactMap { event -> Int64? in
            if case .rejected(_, let permits, _, _) = event { permits } else { nil }
        }
        #expect(order == Array(2...101), "\(order)")
    }
}

/// Whether a handler is running, from any thread.
private final class Counter: @unchecked Sendable {
    // @unchecked: `running` is read and written only under `lock`.
    private let lock = NSLock()
    private var running = false
    /// Marks a handler as running; false when one already was (the handler ran concurrently).
    func enter() -> Bool {
        lock.withLock {
            defer { running = true }
            return !running
        }
    }
    func leave() { lock.withLock { running = false } }
}
