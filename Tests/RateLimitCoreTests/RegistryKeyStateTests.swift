import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

// Registry key states (Spec/Registry.md REG-4, REG-6, REG-7, REG-8, REG-12): disabled and
// throttled keys, quota, reconfiguring, eviction and removal, on the pure registry.

@Suite("Registry: key states, reconfiguring and eviction (Spec/Registry.md)")
struct RegistryKeyStateTests {
    @Test(
        "REG-4 disable lets everything through at once, waiters included, keeps the limit's state, ignores throttles; resume restores"
    )
    func disable() async throws { try await offThePool { try disableOnThread() } }

    private func disableOnThread() throws {
        let window = try FixedWindow(limit: 1, windowNanoseconds: 1_000)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, window, overflow: .queue(limit: 5))], at: t(0))
        #expect(registry.tryAcquire("k", at: t(0)).outcome == .granted(.allowed(remaining: 0)))
        let (waiter, _) = registry.acquire("k", at: t(1))
        let disabled = registry.disable("k", at: t(2))
        #expect(disabled.completions == [WaitCompletion(ticket: waiter, outcome: .bypassed, at: t(2))])
        #expect(disabled.events.first == .stateChanged(key: "k", from: .accepting, to: .disabled, at: t(2)))
        #expect(registry.tryAcquire("k", permits: 1_000, at: t(3)).outcome == .bypassed)
        #expect(registry.throttle("k", until: t(500), at: t(4)).events.isEmpty)
        #expect(registry.quota(of: "k", at: t(4))?.state == .disabled)
        #expect(registry.quota(of: "k", at: t(4))?.status == .ok)
        let resumed = registry.resume("k", at: t(5))
        #expect(resumed.events.first == .stateChanged(key: "k", from: .disabled, to: .accepting, at: t(5)))
        #expect(registry.tryAcquire("k", at: t(6)).outcome == .rejected(.limited(retryAfterNanoseconds: 994)))
        let statistics = try #require(registry.quota(of: "k", at: t(6))?.statistics)
        #expect(statistics.admitted == 3 && statistics.rejected == 1 && statistics.queued == 1)
    }

    @Test(
        "REG-6 the quota status goes ok, warning, limited as permits are taken, and back at the exact instants time restores them"
    )
    func quotaStatus() async throws { try await offThePool { try quotaStatusOnThread() } }

    private func quotaStatusOnThread() throws {
        let bucket = try TokenBucket(capacity: 5, permitsPerPeriod: 1, periodNanoseconds: 100)
        var registry = try RateLimitRegistry(rules: [try RateLimitRule(.anyKey, bucket, warningThreshold: 2)], at: t(0))
        #expect(registry.quota(of: "k", at: t(0))?.status == .ok)
        #expect(registry.tryAcquire("k", permits: 2, at: t(0)).effects.events.isEmpty)  // 3 left: ok
        let warning = registry.tryAcquire("k", permits: 1, at: t(0)).effects
        #expect(warning.events == [.statusChanged(key: "k", from: .ok, to: .warning, remaining: 2, at: t(0))])
        let limited = registry.tryAcquire("k", permits: 2, at: t(0)).effects
        #expect(limited.events == [.statusChanged(key: "k", from: .warning, to: .limited, remaining: 0, at: t(0))])
        #expect(registry.nextWakeUp == t(100))
        // One call long after: both recoveries, each at its own instant, in order.
        let recovered = registry.advance(to: t(10_000))
        #expect(
            recovered.events == [
                .statusChanged(key: "k", from: .limited, to: .warning, remaining: 1, at: t(100)),
                .statusChanged(key: "k", from: .warning, to: .ok, remaining: 3, at: t(300)),
            ])
        #expect(registry.nextWakeUp == nil)
    }

    @Test(
        "REG-7 a key's own configuration and a rule's new one carry the state over; a threshold that no longer fits is refused"
    )
    func reconfigure() async throws { try await offThePool { try reconfigureOnThread() } }

    private func reconfigureOnThread() throws {
        let bucket = try TokenBucket(capacity: 4, permitsPerPeriod: 1, periodNanoseconds: 100)
        let rule = try RateLimitRule(.prefix("api/"), bucket, warningThreshold: 2)
        var registry = try RateLimitRegistry(rules: [rule], at: t(0))
        _ = registry.tryAcquire("api/a", permits: 3, at: t(0))
        _ = registry.tryAcquire("api/b", permits: 1, at: t(0))
        let bigger = try TokenBucket(capacity: 10, permitsPerPeriod: 1, periodNanoseconds: 100)
        // tokens kept (TB-10)
        #expect(registry.reconfigure("api/a", to: bigger, at: t(0)).result == .allowed(remaining: 1))
        let smaller = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 100)
        guard case .invalid(let error) = registry.reconfigure("api/b", to: smaller, at: t(0)).result else {
            Issue.record("a threshold of 2 was kept with a capacity of 2")
            return
        }
        #expect(error.field == "warningThreshold")
        #expect(throws: RateLimitRegistryError.unknownRule(.anyKey)) {
            try registry.reconfigure(rule: .anyKey, to: bigger, at: t(0))
        }
        let wider = try TokenBucket(capacity: 8, permitsPerPeriod: 1, periodNanoseconds: 100)
        _ = try registry.reconfigure(rule: .prefix("api/"), to: wider, at: t(0))
        #expect(registry.quota(of: "api/a", at: t(0))?.remaining == 1)  // its own configuration is untouched
        #expect(registry.quota(of: "api/b", at: t(0))?.remaining == 3)
        #expect(registry.quota(of: "api/new", at: t(0))?.remaining == 8)
    }

    @Test(
        "REG-8 forgetting idle keys never changes a decision; a registry full of busy keys refuses new keys",
        arguments: 0..<4)
    func eviction(_ batch: Int) async throws { try await offThePool { try evictionOnThread(batch) } }

    private func evictionOnThread(_ batch: Int) throws {
        var forgotten = 0
        for trace in (batch * 10)..<(batch * 10 + 10) {
            var rng = PropertySeed.generator("eviction", trace: trace)
            let replay = PropertySeed.replay("eviction", trace: trace)
            // Limits that start full (so idle keys exist) and reject (so keys never hold waiters).
            let kinds = AnyRateLimitStrategy.identifiers.filter { $0 != ConcurrencyLimiter.identifier }
            var strategy = try #require(TraceGenerator.configuration(rng.pick(kinds), using: &rng))
            while case .tokenBucket(let bucket) = strategy, bucket.initialTokens < bucket.capacity {
                strategy = try #require(TraceGenerator.configuration(TokenBucket.identifier, using: &rng))
            }
            let rule = try RateLimitRule(.anyKey, strategy)
            var bounded = try RateLimitRegistry(rules: [rule], maximumKeys: 3, at: t(0))
            var unbounded = try RateLimitRegistry(rules: [rule], at: t(0))
            var now: Int64 = 0
            let span = TraceGenerator.characteristicNanoseconds(strategy)
            for step in 0..<300 {
                let gap =
                    rng.chance(70)
                    ? rng.int(in: 0...max(1, span / 4)) : rng.int(in: 0...(span > Int64.max / 8 ? span : span * 4))
                now = now > Int64.max - gap ? Int64.max : now + gap
                let key = "k\(rng.int(in: 0...6))"
                let permits = TraceGenerator.permits(maximum: strategy.maximumPermits, using: &rng)
                let (keysBefore, existed) = (bounded.keyCount, bounded.hasKey(key))
                let (got, _) = bounded.tryAcquire(key, permits: permits, at: t(now))
                if got == .rejected(.tooManyKeys) { continue }  // the unbounded registry does not see it either
                if bounded.keyCount < keysBefore + (existed ? 0 : 1) { forgotten += 1 }
                let (expected, _) = unbounded.tryAcquire(key, permits: permits, at: t(now))
                guard
                    holds(
                        got == expected,
                        "REG-8 step \(step) at \(now) \(key) acquire(\(permits)): \(got), without forgetting \(expected)",
                        replay: replay)
                else { break }
            }
        }
        #expect(forgotten > 0, "no key was ever forgotten: the property was not exercised")
        // Busy keys are never forgotten: the new key is refused instead.
        var full = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, try ConcurrencyLimiter(limit: 1))], maximumKeys: 2, at: t(0))
        _ = full.tryAcquire("a", at: t(0))
        _ = full.tryAcquire("b", at: t(0))
        #expect(full.tryAcquire("c", at: t(1)).outcome == .rejected(.tooManyKeys))
        _ = full.release("a", permits: 1, at: t(2))
        #expect(full.tryAcquire("c", at: t(3)).outcome == .granted(.allowed(remaining: 0)))
        #expect(full.keyCount == 2 && full.quota(of: "b", at: t(3))?.remaining == 0)
    }

    @Test(
        "REG-7 REG-8 restoreRule gives a key its rule's configuration again: its state maps, a rule reconfigured reaches it, idle it may be forgotten; a key without one is left alone"
    )
    func restoreRule() async throws { try await offThePool { try restoreRuleOnThread() } }

    private func restoreRuleOnThread() throws {
        let rule = try TokenBucket(capacity: 4, permitsPerPeriod: 1, periodNanoseconds: 100)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.prefix("api/"), rule)], maximumKeys: 2, at: t(0))
        #expect(registry.restoreRule("api/a", at: t(0)).result == nil, "not held: nothing to restore")
        #expect(registry.restoreRule("other", at: t(0)).result == nil, "no rule: nothing to restore")
        _ = registry.tryAcquire("api/a", permits: 1, at: t(0))  // 3 tokens left
        #expect(registry.restoreRule("api/a", at: t(0)).result == nil, "it follows its rule already")
        let small = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 100)
        #expect(registry.reconfigure("api/a", to: small, at: t(0)).result == .allowed(remaining: 2))  // TB-10: 3 → 2
        // Back to the rule's capacity of 4, keeping the 2 tokens (TB-10): full at 2, it got none by 100.
        let (result, effects) = registry.restoreRule("api/a", at: t(100))
        #expect(result == .allowed(remaining: 2))
        #expect(effects.events.isEmpty && effects.completions.isEmpty)
        #expect(registry.restoreRule("api/a", at: t(100)).result == nil, "once is enough")
        // It follows the rule now: a rule reconfigured reaches it.
        let wider = try TokenBucket(capacity: 6, permitsPerPeriod: 1, periodNanoseconds: 100)
        _ = try registry.reconfigure(rule: .prefix("api/"), to: wider, at: t(100))
        #expect(registry.quota(of: "api/a", at: t(100))?.remaining == 2)
        #expect(registry.quota(of: "api/a", at: t(499))?.remaining == 5)
        #expect(registry.quota(of: "api/a", at: t(500))?.remaining == 6, "it refills to the rule's new capacity")
        // A key with a configuration of its own is never forgotten (REG-8): with two such keys
        // held, a third is refused, until one follows its rule again and is idle (full: 2 tokens
        // at 1,000 under its own capacity, 6 at 1,400 under the rule's).
        _ = registry.reconfigure("api/b", to: small, at: t(500))
        _ = registry.reconfigure("api/a", to: small, at: t(500))
        #expect(registry.tryAcquire("api/c", at: t(1_000)).outcome == .rejected(.tooManyKeys))
        #expect(registry.restoreRule("api/a", at: t(1_000)).result == .allowed(remaining: 2))
        #expect(registry.tryAcquire("api/c", at: t(1_399)).outcome == .rejected(.tooManyKeys))
        #expect(registry.tryAcquire("api/c", at: t(1_400)).outcome == .granted(.allowed(remaining: 5)))
        #expect(registry.keys == ["api/b", "api/c"])
    }

    @Test("REG-7 a key reconfigured into exhaustion reports it at once and wakes at the new configuration's recovery")
    func reconfigureReports() async throws { try await offThePool { try reconfigureReportsOnThread() } }

    private func reconfigureReportsOnThread() throws {
        func window(_ limit: Int64, _ nanoseconds: Int64) throws -> FixedWindow {
            try FixedWindow(limit: limit, windowNanoseconds: nanoseconds)
        }
        var registry = try RateLimitRegistry(rules: [try RateLimitRule(.anyKey, try window(10, 10_000))], at: t(0))
        _ = registry.tryAcquire("k", permits: 2, at: t(1))
        let (result, effects) = registry.reconfigure("k", to: try window(2, 1_000), at: t(2))
        #expect(result == .allowed(remaining: 0))
        #expect(effects.events == [.statusChanged(key: "k", from: .ok, to: .limited, remaining: 0, at: t(2))])
        #expect(registry.nextWakeUp == t(1_000), "the new window ends at 1,000, the old one at 10,000")
    }

    @Test("REG-7 a rule reconfigured to another strategy is refused and changes nothing")
    func reconfigureRuleRefused() async throws { try await offThePool { try reconfigureRuleRefusedOnThread() } }

    private func reconfigureRuleRefusedOnThread() throws {
        let gcra = AnyRateLimitStrategy.gcra(try GCRA(burst: 5, emissionIntervalNanoseconds: 100))
        var registry = try RateLimitRegistry(rules: [try RateLimitRule(.anyKey, gcra)], at: t(0))
        #expect(registry.tryAcquire("k", at: t(1)).outcome == .granted(.allowed(remaining: 4)))
        let window = AnyRateLimitStrategy.fixedWindow(try FixedWindow(limit: 5, windowNanoseconds: 100))
        do {
            _ = try registry.reconfigure(rule: .anyKey, to: window, at: t(2))
            Issue.record("a gcra rule became a fixed window")
        } catch {
            guard case .invalidRule(.anyKey, let input) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(input.field == "configuration")
        }
        #expect(registry.rule(for: "k")?.strategy == gcra)
        #expect(registry.tryAcquire("k", at: t(3)).outcome == .granted(.allowed(remaining: 3)))
    }

    @Test("REG-5 a queue policy with a limit of 0 refuses with queueFull, as the wait queue does")
    func zeroQueue() async throws { try await offThePool { try zeroQueueOnThread() } }

    private func zeroQueueOnThread() throws {
        let window = try FixedWindow(limit: 1, windowNanoseconds: 1_000)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, window, overflow: .queue(limit: 0))], at: t(0))
        _ = registry.acquire("k", at: t(1))
        let (ticket, effects) = registry.acquire("k", at: t(2))
        #expect(effects.completions == [WaitCompletion(ticket: ticket, outcome: .rejected(.queueFull), at: t(2))])
    }

    @Test("REG-6 quota a waiter takes at the instant it comes back is not reported as recovered")
    func noFlicker() async throws { try await offThePool { try noFlickerOnThread() } }

    private func noFlickerOnThread() throws {
        let window = try FixedWindow(limit: 1, windowNanoseconds: 1_000)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, window, overflow: .queue(limit: 5))], at: t(0))
        _ = registry.acquire("k", at: t(1))
        let (waiter, _) = registry.acquire("k", at: t(2))
        let served = registry.advance(to: t(1_000))
        #expect(served.completions.map(\.ticket) == [waiter])
        #expect(
            served.events.filter { if case .statusChanged = $0 { true } else { false } }.isEmpty, "\(served.events)")
    }

    @Test(
        "REG-12 keys lists the keys held; removing one closes its waiters, forgets its state, throttle and own configuration, and the next request starts it anew"
    )
    func removeKeys() async throws { try await offThePool { try removeKeysOnThread() } }

    private func removeKeysOnThread() throws {
        let bucket = try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: 100)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.anyKey, bucket, overflow: .queue(limit: 5))], at: t(0))
        #expect(registry.keys.isEmpty)
        _ = registry.tryAcquire("b", permits: 2, at: t(0))
        _ = registry.tryAcquire("a", at: t(0))
        #expect(registry.keys == ["a", "b"])
        let (waiter, _) = registry.acquire("b", at: t(10))
        _ = registry.throttle("b", until: t(5_000), at: t(10))
        _ = registry.reconfigure(
            "b", to: try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 100), at: t(10))
        let before = registry.totals
        let (removed, effects) = registry.remove("b", at: t(20))
        #expect(removed)
        #expect(effects.completions == [WaitCompletion(ticket: waiter, outcome: .closed, at: t(20))])
        #expect(registry.keys == ["a"] && registry.waitingCount == 0)
        var later = registry
        #expect(later.advance(to: t(6_000)).isEmpty, "the removed key's throttle ends unreported")
        #expect(
            registry.totals.admitted == before.admitted && registry.totals.waiting == 0,
            "the totals keep the key's requests")
        #expect(registry.remove("b", at: t(20)).removed == false, "a key not held: nothing to remove")
        // Anew: the rule's configuration, a full bucket, accepting, statistics from zero.
        #expect(registry.availability("b", permits: 2, at: t(20)) == .granted(.allowed(remaining: 0)))
        #expect(registry.keys == ["a"], "availability creates no key")
        #expect(registry.tryAcquire("b", permits: 2, at: t(20)).outcome == .granted(.allowed(remaining: 0)))
        let quota = registry.quota(of: "b", at: t(20))
        #expect(quota?.state == .accepting && quota?.statistics.admitted == 1 && quota?.statistics.queued == 0)
        #expect(registry.rule(for: "b")?.strategy == bucket)
    }

    @Test(
        "REG-5 availability answers what tryAcquire would, without creating the key: unknown keys, disabled keys, a full registry"
    )
    func availability() async throws { try await offThePool { try availabilityOnThread() } }

    private func availabilityOnThread() throws {
        let gcra = try GCRA(burst: 1, emissionIntervalNanoseconds: 10)
        var registry = try RateLimitRegistry(
            rules: [try RateLimitRule(.prefix("k"), gcra, overflow: .queue(limit: 5))], maximumKeys: 1, at: t(0))
        #expect(registry.availability("x", at: t(0)) == .rejected(.unknownKey))
        #expect(registry.availability("k1", at: t(0)) == .granted(.allowed(remaining: 0)))
        _ = registry.tryAcquire("k1", at: t(0))
        #expect(registry.availability("k1", at: t(3)) == .rejected(.limited(retryAfterNanoseconds: 7)))
        #expect(registry.availability("k2", at: t(3)) == .rejected(.tooManyKeys), "full, and k1 is not idle")
        #expect(
            registry.availability("k2", at: t(10)) == .granted(.allowed(remaining: 0)),
            "k1 idle at 10: it would be forgotten")
        _ = registry.acquire("k1", at: t(3))
        #expect(registry.availability("k1", at: t(4)) == .rejected(.waitersAhead))
        #expect(registry.availability("k1", priority: .critical, at: t(4)) == .bypassed)
        _ = registry.disable("k1", at: t(5))
        #expect(registry.availability("k1", at: t(5)) == .bypassed)
        #expect(registry.availability("k1", permits: -1, at: t(5)) == .rejected(.invalid(.negativePermits(-1))))
        // Asked earlier than the registry's latest instant, the wait counts from that earlier now (REG-3).
        _ = registry.resume("k1", at: t(5))
        #expect(registry.availability("k1", at: t(2)) == registry.tryAcquire("k1", at: t(2)).outcome)
    }

}
