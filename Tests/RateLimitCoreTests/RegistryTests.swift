import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// The keys random traces use: exact, prefixed (two prefix lengths), and default-ruled ones.
let keyPool = ["alpha", "api/users", "api/v2/items", "api/v2/", "other", "zeta"]

/// Four rules over `keyPool`, each with a random strategy, policy and threshold.
func randomRules(using rng: inout SeededGenerator) -> [RateLimitRule<AnyRateLimitStrategy>] {
    let patterns: [KeyPattern] = [.exact("alpha"), .prefix("api/"), .prefix("api/v2/"), .anyKey]
    return patterns.compactMap { pattern in
        for _ in 0..<20 {
            guard let strategy = TraceGenerator.configuration(rng.pick(AnyRateLimitStrategy.identifiers), using: &rng)
            else { continue }
            let overflow: OverflowPolicy =
                rng.chance(50)
                ? .reject
                : .queue(limit: rng.int(in: 1...12), timeout: rng.chance(50) ? nil : .nanoseconds(rng.int(in: 0...200)))
            let threshold = strategy.maximumPermits > 1 ? rng.int(in: 0...min(3, strategy.maximumPermits - 1)) : 0
            if let rule = try? RateLimitRule(pattern, strategy, overflow: overflow, warningThreshold: threshold) {
                return rule
            }
        }
        return nil
    }
}

/// A registry driven side by side with the model it must equal: one wait queue per key, created
/// at the key's first use (REG-3, REG-5). Tickets map between the two.
struct Harness {
    var registry: RateLimitRegistry<AnyRateLimitStrategy>
    let rules: [RateLimitRule<AnyRateLimitStrategy>]
    var models: [String: WaitQueue<AnyRateLimitStrategy>] = [:]
    var tickets: [WaitTicket: (key: String, model: WaitTicket)] = [:]
    var requests = 0
    var tryAdmitted = 0
    var ended: [WaitTicket: WaitOutcome] = [:]
    var latest: Int64 = 0
    let replay: String
    var failed = false

    init(rules: [RateLimitRule<AnyRateLimitStrategy>], maximumKeys: Int = 1_000, replay: String) throws {
        registry = try RateLimitRegistry(rules: rules, maximumKeys: maximumKeys, at: t(0))
        self.rules = rules
        self.replay = replay
    }

    func rule(_ key: String) -> RateLimitRule<AnyRateLimitStrategy>? {
        if let exact = rules.first(where: { $0.keys == .exact(key) }) { return exact }
        let prefixes = rules.compactMap { rule -> (Int, RateLimitRule<AnyRateLimitStrategy>)? in
            if case .prefix(let prefix) = rule.keys, key.hasPrefix(prefix) { return (prefix.utf8.count, rule) }
            return nil
        }
        if let longest = prefixes.max(by: { $0.0 < $1.0 }) { return longest.1 }
        return rules.first { $0.keys == .anyKey }
    }

    /// Every model queue served at `instant`, as the registry serves what is due before an operation.
    mutating func serveModels(at instant: RateLimitInstant) -> [(String, WaitCompletion)] {
        var completions: [(String, WaitCompletion)] = []
        for key in models.keys.sorted() {
            completions += models[key]!.advance(to: instant).completions.map { (key, $0) }
        }
        return completions
    }

    mutating func model(_ key: String, at instant: RateLimitInstant) -> WaitQueue<AnyRateLimitStrategy>? {
        if let model = models[key] { return model }
        guard let rule = rule(key) else { return nil }
        let model = try? WaitQueue(rule.strategy, queueLimit: rule.queueLimit, at: instant)
        models[key] = model
        return model
    }

    /// Compares an operation's completions (registry tickets) with the model's (model tickets).
    mutating func compare(
        _ got: [WaitCompletion], _ expected: [(String, WaitCompletion)], shift: Int64, _ context: String
    ) {
        let mapped = Dictionary(uniqueKeysWithValues: tickets.map { ("\($0.value.key) \($0.value.model)", $0.key) })
        let want = expected.compactMap { key, completion in
            mapped["\(key) \(completion.ticket)"].map { "\($0) \(completion.outcome.shifted(by: shift))" }
        }.sorted()
        let have = got.map { "\($0.ticket) \($0.outcome)" }.sorted()
        if !holds(
            have == want, "REG-5 completions differ at \(context): registry \(have), model \(want)", replay: replay)
        {
            failed = true
        }
        for completion in got {
            if !holds(
                ended.updateValue(completion.outcome, forKey: completion.ticket) == nil,
                "REG-5 \(completion.ticket) ended twice", replay: replay)
            {
                failed = true
            }
        }
    }
}

/// Runs a random multi-key trace against per-key models and checks every answer (REG-2 … REG-5,
/// REG-9, REG-10, REG-11).
func runTrace(_ trace: Int, name: String, steps: Int = 250) throws {
    var rng = PropertySeed.generator(name, trace: trace)
    let rules = randomRules(using: &rng)
    var harness = try Harness(rules: rules, replay: PropertySeed.replay(name, trace: trace))
    var now: Int64 = 0
    var waitingTickets: [WaitTicket] = []
    var statuses: [String: QuotaStatus] = [:]
    for step in 0..<steps where !harness.failed {
        now = rng.chance(5) ? max(0, now - rng.int(in: 1...50)) : now + rng.int(in: 0...40)
        harness.latest = max(harness.latest, now)
        let instant = t(harness.latest)
        let shift = harness.latest - now
        let key = rng.pick(keyPool + ["nobody"])
        let context = "step \(step) at \(now) (registry \(harness.latest)) key \(key)"
        var expected = harness.serveModels(at: instant)
        var ownRefusals = 0  // tryAcquire's outcome is returned, not in the completions; its event is in the effects
        let roll = rng.int(in: 0...99)
        let got: RateLimitEffects
        switch roll {
        case 0..<50:
            let permits = rng.chance(3) ? -1 : rng.int(in: 0...4)
            let priority = rng.chance(5) ? RateLimitPriority.critical : rng.pick([.low, .normal, .high])
            let timeout: Duration? = rng.chance(30) ? .nanoseconds(rng.int(in: 0...150)) : nil
            let (ticket, effects) = harness.registry.acquire(
                key, permits: permits, priority: priority, timeout: timeout, at: t(now))
            harness.requests += 1
            got = effects
            guard var model = harness.model(key, at: instant), let rule = harness.rule(key) else {
                expected.append(
                    (
                        key,
                        WaitCompletion(
                            ticket: WaitTicket(rawValue: .max - ticket.rawValue), outcome: .rejected(.unknownKey),
                            at: instant)
                    ))
                harness.tickets[ticket] = (key, WaitTicket(rawValue: .max - ticket.rawValue))
                break
            }
            let modelTicket: WaitTicket
            if rule.queueLimit == 0 {
                // REG-5: under `reject` an acquire is a tryAcquire.
                let answer = model.tryAcquire(permits, priority: priority, at: instant)
                modelTicket = WaitTicket(rawValue: .max - ticket.rawValue)
                expected +=
                    (answer.effects.completions + [
                        WaitCompletion(ticket: modelTicket, outcome: answer.outcome, at: instant)
                    ]).map { (key, $0) }
            } else {
                let deadline = (timeout.map { $0.components.attoseconds / 1_000_000_000 } ?? rule.timeoutNanoseconds)
                    .map { instant.advanced(byNanoseconds: $0) ?? .end }
                let (issued, completions) = model.acquire(permits, priority: priority, deadline: deadline, at: instant)
                modelTicket = issued
                expected += completions.completions.map { (key, $0) }
                if model.isWaiting(issued) { waitingTickets.append(ticket) }
            }
            harness.models[key] = model
            harness.tickets[ticket] = (key, modelTicket)
        case 50..<62:
            let permits = rng.int(in: 0...3)
            let available = harness.registry.availability(key, permits: permits, at: t(now))
            let (outcome, effects) = harness.registry.tryAcquire(key, permits: permits, at: t(now))
            if !holds(
                available == outcome, "REG-5 availability \(context): \(available), tryAcquire then \(outcome)",
                replay: harness.replay)
            {
                harness.failed = true
            }
            harness.requests += 1
            got = effects
            if case .rejected = outcome { ownRefusals = 1 }
            if case .granted = outcome {
                harness.tryAdmitted += 1
            } else if case .bypassed = outcome {
                harness.tryAdmitted += 1
            }
            guard var model = harness.model(key, at: instant) else {
                holds(
                    outcome == .rejected(.unknownKey), "REG-2 \(key) matched no rule but got \(outcome)",
                    replay: harness.replay)
                break
            }
            let answer = model.tryAcquire(permits, at: instant)
            expected += answer.effects.completions.map { (key, $0) }
            harness.models[key] = model
            if !holds(
                outcome == answer.outcome.shifted(by: shift),
                "REG-5 tryAcquire \(context): \(outcome), model \(answer.outcome)",
                replay: harness.replay)
            {
                harness.failed = true
            }
        case 62..<72 where !waitingTickets.isEmpty:
            let ticket = rng.pick(waitingTickets)
            got = harness.registry.cancel(ticket, at: t(now))
            if let (owner, modelTicket) = harness.tickets[ticket], var model = harness.models[owner] {
                expected += model.cancel(modelTicket, at: instant).completions.map { (owner, $0) }
                harness.models[owner] = model
            }
        case 72..<80:
            let permits = rng.int(in: 0...3)
            let (result, effects) = harness.registry.release(key, permits: permits, at: t(now))
            got = effects
            if var model = harness.model(key, at: instant) {
                let answer = model.release(permits, at: instant)
                expected += answer.effects.completions.map { (key, $0) }
                harness.models[key] = model
                if !holds(
                    result.comparable == answer.result.comparable,
                    "REG-7 release \(context): \(result), model \(answer.result)",
                    replay: harness.replay)
                {
                    harness.failed = true
                }
            }
        case 80..<84:
            let (_, effects) = harness.registry.reset(key, at: t(now))
            got = effects
            if var model = harness.model(key, at: instant) {
                expected += model.reset(at: instant).effects.completions.map { (key, $0) }
                harness.models[key] = model
            }
        default:
            got = harness.registry.advance(to: t(now))
        }
        harness.compare(got.completions, expected, shift: shift, context)
        // REG-10: a rejected event for every refusal or timeout, and nothing else.
        let refusals = got.completions.filter {
            if case .rejected = $0.outcome { true } else if case .timedOut = $0.outcome { true } else { false }
        }
        let rejectedEvents = got.events.filter { if case .rejected = $0 { true } else { false } }
        if !holds(
            rejectedEvents.count == refusals.count + ownRefusals,
            "REG-10 \(rejectedEvents.count) rejected events for \(refusals.count) refusals at \(context)",
            replay: harness.replay)
        {
            harness.failed = true
        }
        // REG-10: status events chain, one per change, and end at the status the key has now.
        for event in got.events {
            guard case .statusChanged(let changed, let from, let to, _, _) = event else { continue }
            if let last = statuses[changed],
                !holds(
                    last == from, "REG-10 \(changed) went \(from) → \(to) after reporting \(last) at \(context)",
                    replay: harness.replay)
            {
                harness.failed = true
            }
            statuses[changed] = to
        }
        // REG-6: every key's quota equals its model's, and its status is the one last reported.
        for (modelKey, model) in harness.models {
            guard let quota = harness.registry.quota(of: modelKey, at: instant) else { continue }
            if !holds(
                quota.remaining == model.limiter.remaining(at: instant),
                "REG-6 \(modelKey) remaining \(quota.remaining), model \(model.limiter.remaining(at: instant)) at \(context)",
                replay: harness.replay)
            {
                harness.failed = true
                break
            }
            let threshold = harness.rule(modelKey)?.warningThreshold ?? 0
            let status = RateLimitRegistry<AnyRateLimitStrategy>.status(quota.remaining, threshold: threshold)
            if !holds(
                quota.status == status,
                "REG-6 \(modelKey) status \(quota.status) with \(quota.remaining) left at \(context)",
                replay: harness.replay)
            {
                harness.failed = true
                break
            }
            if let reported = statuses[modelKey],
                !holds(
                    reported == status, "REG-10 \(modelKey) is \(status) but \(reported) was reported at \(context)",
                    replay: harness.replay)
            {
                harness.failed = true
                break
            }
            if statuses[modelKey] == nil { statuses[modelKey] = status }
        }
        // REG-11: nothing is due before the next wake-up.
        if let wake = harness.registry.nextWakeUp, wake.nanoseconds > harness.latest + 1 {
            var probe = harness.registry
            let early = probe.advance(to: t(wake.nanoseconds - 1))
            if !holds(
                early.completions.isEmpty && early.events.isEmpty,
                "REG-11 something was due before \(wake): \(early) at \(context)",
                replay: harness.replay)
            {
                harness.failed = true
            }
        }
        // REG-11: and something happens at it (the wake-up is exact, never a stale one).
        if let wake = harness.registry.nextWakeUp {
            var probe = harness.registry
            let due = probe.advance(to: wake)
            if !holds(
                !due.completions.isEmpty || !due.events.isEmpty,
                "REG-11 nothing happened at the next wake-up \(wake) at \(context)", replay: harness.replay)
            {
                harness.failed = true
            }
        }
        waitingTickets.removeAll { harness.ended[$0] != nil }
    }
    // REG-9: the totals account for every request.
    let totals = harness.registry.totals
    let cancelledOrClosed = harness.ended.values.filter { $0 == .cancelled || $0 == .closed }.count
    #expect(
        Int(totals.admitted + totals.rejected) + cancelledOrClosed + totals.waiting == harness.requests,
        "REG-9 totals \(totals) for \(harness.requests) requests\n  \(harness.replay)")
}

@Suite("Registry: limiters by key (Spec/Registry.md)")
struct RegistryTests {
    @Test(
        "REG-3 WQ-12 an operation at an instant before the registry's moves each completion's instant back as far as its wait grows: every scheduled start stays where the registry put it"
    )
    func shiftedCompletionsKeepTheirStarts() throws {
        // A leaky bucket queue of one slot every 10 µs with 3 requests waiting behind it; a request
        // on another key at 1,000 ns, then a reset of the first key at 900 or at 1,000 ns (a caller
        // whose clock reading is older than one applied before it, as when it waited for a lock).
        let rule = try RateLimitRule(
            .anyKey, try LeakyBucketQueue(queueCapacity: 1, intervalNanoseconds: 10_000), overflow: .queue(limit: 10))
        var registry = try RateLimitRegistry(rules: [rule], at: t(0))
        for _ in 0..<5 { _ = registry.acquire("k", at: t(0)) }
        _ = registry.tryAcquire("z", at: t(1_000))
        /// Each delayed grant's start: its completion's instant plus its wait.
        func starts(_ effects: RateLimitEffects) -> [WaitTicket: Int64] {
            var starts: [WaitTicket: Int64] = [:]
            for completion in effects.completions {
                if case .granted(.delayed(let wait, _)) = completion.outcome {
                    starts[completion.ticket] = completion.at.nanoseconds + wait
                }
            }
            return starts
        }
        var late = registry
        let atTheRegistrysInstant = starts(registry.reset("k", at: t(1_000)).effects)
        let earlier = late.reset("k", at: t(900)).effects
        #expect(!atTheRegistrysInstant.isEmpty)
        #expect(starts(earlier) == atTheRegistrysInstant)
        #expect(earlier.completions.allSatisfy { $0.at <= t(900) }, "\(earlier.completions)")
    }

    @Test(
        "REG-1 rules are refused by name: empty keys, duplicates, bad queue limits, timeouts and thresholds, no room for keys"
    )
    func ruleValidation() async throws { try await offThePool { try ruleValidationOnThread() } }

    private func ruleValidationOnThread() throws {
        let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 1, periodNanoseconds: 10)
        #expect(throws: RateLimitRegistryError.emptyKey(.exact(""))) { try RateLimitRule(.exact(""), bucket) }
        #expect(throws: RateLimitRegistryError.emptyKey(.prefix(""))) { try RateLimitRule(.prefix(""), bucket) }
        func refusal(_ make: () throws(RateLimitRegistryError) -> Void) -> String? {
            do {
                try make()
                return nil
            } catch {
                if case .invalidRule(_, let input) = error { return "\(input.field) \(input.problem)" }
                return "\(error)"
            }
        }
        #expect(
            refusal { () throws(RateLimitRegistryError) in
                _ = try RateLimitRule(.anyKey, bucket, overflow: .queue(limit: -1))
            } == "queueLimit mustNotBeNegative")
        #expect(
            refusal { () throws(RateLimitRegistryError) in
                _ = try RateLimitRule(.anyKey, bucket, overflow: .queue(limit: 1, timeout: .nanoseconds(-1)))
            } == "timeout mustNotBeNegative")
        #expect(
            refusal { () throws(RateLimitRegistryError) in
                _ = try RateLimitRule(
                    .anyKey, bucket,
                    overflow: .queue(limit: 1, timeout: Duration(secondsComponent: 0, attosecondsComponent: 5)))
            }
                == "timeout notWholeNanoseconds")
        #expect(
            refusal { () throws(RateLimitRegistryError) in _ = try RateLimitRule(.anyKey, bucket, warningThreshold: 5) }
                == "warningThreshold exceedsMaximum(4)")
        #expect(
            refusal { () throws(RateLimitRegistryError) in _ = try RateLimitRule(.anyKey, bucket, warningThreshold: -1)
            } == "warningThreshold mustNotBeNegative")
        let rule = try RateLimitRule(.prefix("api/"), bucket)
        #expect(throws: RateLimitRegistryError.duplicateRule(.prefix("api/"))) {
            try RateLimitRegistry(rules: [rule, rule], at: t(0))
        }
        #expect(throws: RateLimitRegistryError.invalidMaximumKeys(0)) {
            try RateLimitRegistry(rules: [rule], maximumKeys: 0, at: t(0))
        }
    }

    @Test(
        "REG-2 an exact rule wins over prefixes, the longest prefix over shorter ones, any prefix over the default; no match is unknownKey"
    )
    func precedence() async throws { try await offThePool { try precedenceOnThread() } }

    private func precedenceOnThread() throws {
        func fixed(_ limit: Int64) throws -> FixedWindow { try FixedWindow(limit: limit, windowNanoseconds: 100) }
        let rules = [
            try RateLimitRule(.prefix("api/"), try fixed(2)), try RateLimitRule(.prefix("api/v2/"), try fixed(3)),
            try RateLimitRule(.exact("api/v2/login"), try fixed(4)),
        ]
        var registry = try RateLimitRegistry(rules: rules, at: t(0))
        #expect(registry.rule(for: "api/v2/login")?.strategy.limit == 4)
        #expect(registry.rule(for: "api/v2/items")?.strategy.limit == 3)
        #expect(registry.rule(for: "api/users")?.strategy.limit == 2)
        #expect(registry.rule(for: "web/") == nil)
        #expect(registry.tryAcquire("api/v2/login", at: t(0)).outcome == .granted(.allowed(remaining: 3)))
        #expect(registry.tryAcquire("api/v2/x", at: t(0)).outcome == .granted(.allowed(remaining: 2)))
        let (outcome, effects) = registry.tryAcquire("web/", at: t(0))
        #expect(outcome == .rejected(.unknownKey))
        #expect(effects.events == [.rejected(key: "web/", permits: 1, outcome: .rejected(.unknownKey), at: t(0))])
        #expect(registry.keyCount == 2)
        #expect(registry.quota(of: "web/", at: t(0)) == nil)
        let withDefault = try RateLimitRegistry(rules: rules + [try RateLimitRule(.anyKey, try fixed(9))], at: t(0))
        #expect(withDefault.rule(for: "web/")?.strategy.limit == 9)
        #expect(withDefault.quota(of: "web/", at: t(0))?.remaining == 9)
    }

    @Test(
        "REG-3 REG-5 REG-9 REG-10 REG-11 random traces over many keys equal one wait queue per key, event by event",
        .heavy, arguments: 0..<8)
    func randomTraces(_ batch: Int) throws {
        for trace in (batch * 10)..<(batch * 10 + 10) { try runTrace(trace, name: "registryTraces") }
    }

    @Test(
        "REG-4 a throttle refuses until its end with a tight retry-after, lets critical requests through, wakes waiters at its end, and is reported once each way"
    )
    func throttle() async throws { try await offThePool { try throttleOnThread() } }

    private func throttleOnThread() throws {
        let bucket = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 100)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, bucket, overflow: .queue(limit: 5))], at: t(0))
        let started = registry.throttle("k", until: t(1_000), at: t(10))
        #expect(
            started.events.first
                == .stateChanged(key: "k", from: .accepting, to: .throttled(until: t(1_000)), at: t(10)))
        #expect(registry.tryAcquire("k", at: t(10)).outcome == .rejected(.limited(retryAfterNanoseconds: 990)))
        #expect(registry.tryAcquire("k", permits: 1, priority: .critical, at: t(10)).outcome == .bypassed)
        let (waiter, queued) = registry.acquire("k", at: t(20))
        #expect(queued.completions.isEmpty)
        #expect(registry.nextWakeUp == t(1_000))
        #expect(registry.advance(to: t(999)).completions.isEmpty)
        let ended = registry.advance(to: t(1_005))
        #expect(
            ended.completions == [
                WaitCompletion(ticket: waiter, outcome: .granted(.allowed(remaining: 1)), at: t(1_000))
            ])
        #expect(
            ended.events.first
                == .stateChanged(key: "k", from: .throttled(until: t(1_000)), to: .accepting, at: t(1_000)))
        #expect(ended.events.filter { if case .stateChanged = $0 { true } else { false } }.count == 1)
        #expect(registry.quota(of: "k", at: t(1_005))?.state == .accepting)
        // A longer own wait wins over the throttle's: the retry-after stays tight. (The waiter took
        // its token at 1,000, so after this one the next comes at 1,100.)
        _ = registry.tryAcquire("k", at: t(1_005))
        _ = registry.throttle("k", until: t(1_050), at: t(1_010))
        #expect(registry.tryAcquire("k", at: t(1_010)).outcome == .rejected(.limited(retryAfterNanoseconds: 90)))
        // Resuming ends the throttle at once, reported once.
        let resumed = registry.resume("k", at: t(1_020))
        #expect(
            resumed.events.first
                == .stateChanged(key: "k", from: .throttled(until: t(1_050)), to: .accepting, at: t(1_020)))
        #expect(registry.advance(to: t(2_000)).events.allSatisfy { if case .stateChanged = $0 { false } else { true } })
    }

    @Test(
        "REG-5 WQ-3 during a throttle a request naming an earlier arrival waits before the requests of its priority that arrived after it"
    )
    func arrivalKeepsItsPlace() throws {
        let bucket = try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 100)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, bucket, overflow: .queue(limit: 5))], at: t(0))
        _ = registry.throttle("k", until: t(1_000), at: t(10))
        let (later, _) = registry.acquire("k", at: t(20))
        let (retry, _) = registry.acquire("k", arrival: t(5), at: t(30))
        let (high, _) = registry.acquire("k", priority: .high, at: t(40))
        // At the throttle's end one token: the high request first (priority), then the retry
        // (arrived at 5) before the request that arrived at 20, one token every 100 ns.
        let served = registry.advance(to: t(1_200))
        #expect(
            served.completions == [
                WaitCompletion(ticket: high, outcome: .granted(.allowed(remaining: 0)), at: t(1_000)),
                WaitCompletion(ticket: retry, outcome: .granted(.allowed(remaining: 0)), at: t(1_100)),
                WaitCompletion(ticket: later, outcome: .granted(.allowed(remaining: 0)), at: t(1_200)),
            ])
    }

    @Test(
        "REG-4 REG-10 random throttles, disables and resumes: states chain event by event, nothing passes a throttle but critical requests",
        arguments: 0..<4)
    func randomStates(_ batch: Int) throws {
        for trace in (batch * 10)..<(batch * 10 + 10) {
            var rng = PropertySeed.generator("randomStates", trace: trace)
            let replay = PropertySeed.replay("randomStates", trace: trace)
            var registry = try RateLimitRegistry(rules: randomRules(using: &rng), at: t(0))
            var states: [String: KeyState] = [:]
            var now: Int64 = 0
            steps: for step in 0..<200 {
                now += rng.int(in: 0...30)
                let key = rng.pick(keyPool)
                let effects: RateLimitEffects
                var outcome: WaitOutcome?
                let priority = rng.chance(10) ? RateLimitPriority.critical : .normal
                switch rng.int(in: 0...99) {
                case 0..<10:
                    effects = registry.throttle(key, until: t(max(0, now + rng.int(in: -20...200))), at: t(now))
                case 10..<14: effects = registry.disable(key, at: t(now))
                case 14..<22: effects = registry.resume(key, at: t(now))
                case 22..<30: effects = registry.advance(to: t(now))
                default:
                    (outcome, effects) = registry.tryAcquire(
                        key, permits: rng.int(in: 1...2), priority: priority, at: t(now))
                }
                for event in effects.events {
                    guard case .stateChanged(let changed, let from, let to, let at) = event else { continue }
                    guard
                        holds(
                            from == states[changed, default: .accepting] && from != to && at.nanoseconds <= now,
                            "REG-10 step \(step): \(changed) went \(from) → \(to) at \(at) after \(states[changed, default: .accepting])",
                            replay: replay)
                    else { break steps }
                    states[changed] = to
                }
                let state = registry.quota(of: key, at: t(now))?.state ?? .accepting
                guard
                    holds(
                        state == states[key, default: .accepting],
                        "REG-4 step \(step): \(key) is \(state), reported \(states[key, default: .accepting])",
                        replay: replay)
                else { break }
                if let outcome, case .granted = outcome, case .throttled = state, priority != .critical {
                    Issue.record("REG-4 step \(step): \(key) granted while \(state)\n  \(replay)")
                    break
                }
                if let outcome, state == .disabled, outcome != .bypassed {
                    Issue.record("REG-4 step \(step): disabled \(key) answered \(outcome)\n  \(replay)")
                    break
                }
            }
        }
    }
}
