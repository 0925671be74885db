// A registry of limiters by key (Spec/Registry.md, clauses REG-1 ... REG-12).
//
// The object an app holds: a limiter per endpoint (key), created on first use from the rule that
// matches the key, with per-key states (accepting, throttled, disabled), a quota status for the
// UI, statistics, and events. Like the wait queue it is a pure value: every operation takes the
// instant it happens at and returns what the adapter must do (deliver outcomes, report events,
// arm one timer for `nextWakeUp`).
//
// This file holds the public operations; RegistryOperations.swift the steps they share,
// RegistryStorage.swift how keys are stored, RegistryTime.swift what time does to a key.

/// Limiters by key, configured by rules (Spec/Registry.md).
public struct RateLimitRegistry<Strategy: RateLimitStrategy>: Sendable {
    @usableFromInline typealias Limit = KeyLimit<Strategy>

    // What every admitted request writes comes first, in 49 bytes: a lock shell keeps the
    // registry right after its lock word, on that word's cache line (Performance.md, "Contention").
    /// The latest instant the registry has seen (REG-3).
    @usableFromInline var latest: Int64
    @usableFromInline var issued: UInt64 = 0
    @usableFromInline var counted = KeyStatistics()
    /// Written by `KeyTable.rowToChange`, read by nobody.
    @usableFromInline var touched: UInt8 = 0

    /// The most keys held at once (REG-8; at most 2^30 are, whatever it says).
    public let maximumKeys: Int

    @usableFromInline var rules: [RateLimitRule<Strategy>]
    @usableFromInline var exactRules: [String: Int] = [:]
    /// Prefix rules, longest prefix first (REG-2).
    @usableFromInline var prefixRules: [(prefix: String, rule: Int)] = []
    @usableFromInline var defaultRule: Int?

    /// The keys held and their entries, by key and by slot.
    @usableFromInline var table: KeyTable<Entry>
    @usableFromInline var overrides = SideTable<Strategy>()
    @usableFromInline var throttles = SideTable<Int64>()
    @usableFromInline var queues = SideTable<WaitQueue<Limit>>()
    @usableFromInline var waiting: [WaitTicket: (slot: UInt32, permits: Int64)] = [:]
    /// When the status of a key that is not `ok` improves with no event (REG-6).
    @usableFromInline var recoveries = SideTable<Int64>()
    /// The earliest pending wake-up of each slot that has one, and the heap that orders them.
    @usableFromInline var scheduled = SideTable<Int64>()
    @usableFromInline var wakeUps = DeadlineHeap<UInt32>()
    /// The high bits of counters that passed 2^32 − 1.
    @usableFromInline var carries = SideTable<CounterCarries>()
    /// Keys this registry may still create beyond what it holds: unlimited (up to `maximumKeys`)
    /// unless a sharded shell shares `maximumKeys` among its shards (Spec/Registry.md, REG-13),
    /// when the shell grants each creation first.
    @usableFromInline package var keyAllowance = Int.max

    /// A registry of `rules` created at `now` (REG-1).
    ///
    /// - Throws: ``RateLimitRegistryError`` for two rules with the same pattern or `maximumKeys < 1`.
    @inlinable public init(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, at now: RateLimitInstant)
        throws(RateLimitRegistryError)
    {
        try self.init(rules: rules, maximumKeys: maximumKeys, at: now, seed: .random(in: .min ... .max))
    }

    /// A registry whose keys hash with `seed`: the shards of one sharded shell share theirs, so
    /// that the hash that chose a key's shard is the one its table probes with (REG-13).
    @inlinable package init(
        rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, at now: RateLimitInstant, seed: UInt64
    ) throws(RateLimitRegistryError) {
        guard maximumKeys >= 1 else { throw .invalidMaximumKeys(maximumKeys) }
        self.maximumKeys = maximumKeys
        self.rules = rules
        table = KeyTable(maximumCount: maximumKeys, seed: seed)
        latest = now.nanoseconds
        var seen: Set<KeyPattern> = []
        for (index, rule) in rules.enumerated() {
            guard seen.insert(rule.keys).inserted else { throw .duplicateRule(rule.keys) }
            switch rule.keys {
            case .exact(let key): exactRules[key] = index
            case .prefix(let prefix): prefixRules.append((prefix, index))
            case .anyKey: defaultRule = index
            }
        }
        prefixRules.sort { $0.prefix.count > $1.prefix.count }  // in characters: the same under any Unicode normal form
    }

    /// Keys held now.
    public var keyCount: Int { table.count }

    /// Whether `key` is held now (used, and not forgotten since, REG-8).
    @inlinable public func hasKey(_ key: String) -> Bool { slot(of: key) != nil }

    /// Requests waiting now, over all keys.
    public var waitingCount: Int { waiting.count }

    /// Every request so far, including those of forgotten keys (REG-9).
    public var totals: KeyStatistics {
        var totals = counted
        totals.waiting = waiting.count
        return totals
    }

    /// The rule that governs `key` (REG-2), if any.
    @inlinable public func rule(for key: String) -> RateLimitRule<Strategy>? {
        ruleIndex(for: key).map { rules[$0] }
    }

    /// The earliest instant at which ``advance(to:)`` would change something, or `nil`.
    /// Waking early or late changes nothing but latency (REG-11).
    @inlinable public var nextWakeUp: RateLimitInstant? {
        wakeUps.first.map { RateLimitInstant(validated: $0.deadline) }
    }

    // MARK: Requests (REG-5)

    /// A request for `permits` on `key`. Under a `queue` policy it may wait, and its outcome comes
    /// in the effects of a later operation; otherwise this operation's effects hold it. A request
    /// that continues an earlier one (a retry) names that one's `arrival` and keeps its place among
    /// the key's waiters of its priority (WQ-3, REG-5).
    @inlinable public mutating func acquire(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        arrival: RateLimitInstant? = nil, at now: RateLimitInstant
    ) -> (ticket: WaitTicket, effects: RateLimitEffects) {
        var (instant, effects) = begin(at: now)
        let ticket = issue()
        request(
            key, ticket: ticket, permits: permits, priority: priority, timeout: timeout, arrival: arrival,
            mayWait: true, at: instant, &effects)
        return (ticket, end(effects, now))
    }

    /// A request that never waits, whatever the key's policy: where it would wait it is refused
    /// with the reason (WQ-4). Its outcome is returned, not in the effects.
    @inlinable @inline(__always) public mutating func tryAcquire(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects) {
        tryAcquire(key, looked: table.hash(key), permits: permits, priority: priority, at: now)
    }

    /// Where a request on `key` will look (its hash), and the addresses it reads first, its row's
    /// and its control byte's, as integers never to be read: a shell prefetches them before it
    /// reads its clock, whose read waits for earlier loads (its time-stamp counter read is
    /// ordered after them) but not for prefetches, so that at a million keys the key's cache miss
    /// overlaps the clock's read (Performance.md, "Prefetch"). Valid for the next operation.
    @inlinable @inline(__always) package func lookUp(_ key: String) -> (hash: UInt64, row: UInt, control: UInt) {
        let hash = table.hash(key)
        let (row, control) = table.homeAddresses(hash)
        return (hash, row, control)
    }

    /// ``tryAcquire(_:permits:priority:at:)`` with `key`'s hash from ``lookUp(_:)``.
    @inlinable @inline(__always) package mutating func tryAcquire(
        _ key: String, looked hash: UInt64, permits: Int64, priority: RateLimitPriority, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects) {
        assert(hash == table.hash(key), "the hash of another key or another table")
        var absent = false
        if let outcome = admitInPlace(key, hash: hash, permits: permits, at: now, absent: &absent) {
            return (outcome, RateLimitEffects())
        }
        return tryAcquireOutOfPlace(key, permits: permits, priority: priority, knownAbsent: absent, at: now)
    }

    /// ``tryAcquire(_:looked:permits:priority:at:)`` when the key is not admitted in place.
    @inlinable mutating func tryAcquireOutOfPlace(
        _ key: String, permits: Int64, priority: RateLimitPriority, knownAbsent absent: Bool, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects) {
        var (instant, effects) = begin(at: now)
        let ticket = issue()
        // A request that cannot wait is always decided.
        let outcome =
            request(
                key, ticket: ticket, permits: permits, priority: priority, timeout: nil, mayWait: false,
                knownAbsent: absent, at: instant, &effects) ?? .closed
        return (outcome.shifted(by: latest - now.nanoseconds), end(effects, now))
    }

    /// Cancels a waiting request (WQ-6); a ticket that already has its outcome is left alone.
    @inlinable public mutating func cancel(_ ticket: WaitTicket, at now: RateLimitInstant) -> RateLimitEffects {
        var (instant, effects) = begin(at: now)
        if let (slot, _) = waiting[ticket] {
            inQueue(slot, at: instant, &effects) { $0.cancel(ticket, at: instant).completions }
        }
        return end(effects, now)
    }

    /// Serves what is due at `now` (REG-11): waiters, throttles that end, quota that recovers.
    @inlinable public mutating func advance(to now: RateLimitInstant) -> RateLimitEffects {
        end(begin(at: now).effects, now)
    }

    // MARK: Key operations (REG-4, REG-7)

    /// Gives back permits on `key` (concurrency limits) and serves its waiters.
    @inlinable public mutating func release(_ key: String, permits: Int64, at now: RateLimitInstant) -> (
        result: RateLimitResult, effects: RateLimitEffects
    ) {
        keyEvent(key, .release(permits), at: now)
    }

    /// Resets `key`'s limit to a new one's state; its key state and its waiters stay.
    @inlinable public mutating func reset(_ key: String, at now: RateLimitInstant) -> (
        result: RateLimitResult, effects: RateLimitEffects
    ) {
        keyEvent(key, .reset, at: now)
    }

    /// Resets every key's limit.
    @inlinable public mutating func resetAll(at now: RateLimitInstant) -> RateLimitEffects {
        var (instant, effects) = begin(at: now)
        for slot in heldSlots {
            _ = change(slot, at: instant, &effects) { $0.step(.reset, at: instant) }
        }
        return end(effects, now)
    }

    /// Gives `key` a configuration of its own (REG-7); its state maps as the strategy's reconfigure says.
    @inlinable public mutating func reconfigure(_ key: String, to strategy: Strategy, at now: RateLimitInstant) -> (
        result: RateLimitResult, effects: RateLimitEffects
    ) {
        if let rule = ruleIndex(for: key) {
            do throws(RateLimitInputError) {
                _ = try rules[rule].reconfigured(strategy)
            } catch {
                return (.invalid(error), advance(to: now))
            }
        }
        var (instant, effects) = begin(at: now)
        guard let slot = slot(for: key, at: instant, &effects) else {
            return (
                .invalid(ruleIndex(for: key) == nil ? Self.unknownKeyError : Self.tooManyKeysError), end(effects, now)
            )
        }
        let result = reconfigure(slot, to: strategy, at: instant, &effects) { registry, slot in
            registry.overrides[slot] = strategy
        }
        return (result.shifted(by: latest - now.nanoseconds), end(effects, now))
    }

    /// Gives `key` its rule's configuration again (REG-7): its own configuration is dropped, its
    /// state mapped to the rule's configuration as ``reconfigure(_:to:at:)`` maps it, and from then
    /// on it follows the rule (a rule reconfigured reaches it; idle, it may be forgotten, REG-8).
    /// The result is the strategy's answer to that reconfiguration (a refusal keeps the key's own
    /// configuration), `nil` when the key has none (not held, or following its rule already):
    /// nothing changes then.
    @inlinable public mutating func restoreRule(_ key: String, at now: RateLimitInstant) -> (
        result: RateLimitResult?, effects: RateLimitEffects
    ) {
        var (instant, effects) = begin(at: now)
        guard let slot = slot(of: key), overrides[slot] != nil else { return (nil, end(effects, now)) }
        let rule = rules[Int(table[slot].rule)].strategy
        let result = reconfigure(slot, to: rule, at: instant, &effects) { registry, slot in
            registry.overrides[slot] = nil
        }
        return (result.shifted(by: latest - now.nanoseconds), end(effects, now))
    }

    /// Replaces the configuration of the rule for `pattern` (REG-7): every key it governs without a
    /// configuration of its own is reconfigured now, and new keys start with it.
    ///
    /// - Throws: ``RateLimitRegistryError/unknownRule(_:)``, or ``RateLimitRegistryError/invalidRule(_:_:)``
    ///   when the rule's strategy refuses the new configuration (another strategy, another shape,
    ///   COMP-1, COMP-8) or its warning threshold does not fit the new limit. Nothing changes then.
    @inlinable public mutating func reconfigure(
        rule pattern: KeyPattern, to strategy: Strategy, at now: RateLimitInstant
    ) throws(RateLimitRegistryError) -> RateLimitEffects {
        guard let index = rules.firstIndex(where: { $0.keys == pattern }) else { throw .unknownRule(pattern) }
        let reconfigured: RateLimitRule<Strategy>
        do throws(RateLimitInputError) { reconfigured = try rules[index].reconfigured(strategy) } catch {
            throw .invalidRule(pattern, error)
        }
        // The strategy must accept the change (a new limiter answers as every key would).
        var probe = RateLimiter(rules[index].strategy, at: RateLimitInstant(validated: latest))
        if case .invalid(let error) = probe.step(.reconfigure(strategy), at: RateLimitInstant(validated: latest)) {
            throw .invalidRule(pattern, error)
        }
        var (instant, effects) = begin(at: now)
        let governed = heldSlots.filter { table[$0].rule == UInt32(index) && overrides[$0] == nil }
        let previous = rules[index]
        rules[index] = reconfigured
        for slot in governed {
            _ = reconfigure(slot, to: strategy, from: previous.strategy, at: instant, &effects) { _, _ in }
        }
        return end(effects, now)
    }

    /// REG-7: reconfigures one key's limit, then records the new configuration with `commit` (its
    /// own, or the rule's) before the key's status and wake-up are worked out under it.
    @inlinable mutating func reconfigure(
        _ slot: UInt32, to strategy: Strategy, from current: Strategy? = nil, at instant: RateLimitInstant,
        _ effects: inout RateLimitEffects,
        commit: (inout RateLimitRegistry, UInt32) -> Void
    ) -> RateLimitResult {
        catchUp(slot, to: instant, &effects)
        var completions: [WaitCompletion] = []
        var result = RateLimitResult.allowed(remaining: 0)
        if var queue = queues.removeValue(forKey: slot) {
            completions = queue.updateLimiter(at: instant) {
                result = $0.step(.reconfigure(Limit(strategy)), at: instant)
            }
            queues[slot] = queue
        } else {
            var limiter = limiter(slot)
            // the rule already holds the new one
            if let current { limiter = RateLimiter(Limit(current), state: limiter.state) }
            result = limiter.step(.reconfigure(Limit(strategy)), at: instant)
            store(limiter, in: slot)
        }
        if result.isAdmitted { commit(&self, slot) }
        settle(slot, completions, at: instant, &effects)
        return result
    }

    /// Throttles `key` until `until` (REG-4): only critical requests pass before then. A later call
    /// replaces the instant; one at or before now ends the throttle. A disabled key stays disabled.
    @inlinable public mutating func throttle(_ key: String, until: RateLimitInstant, at now: RateLimitInstant)
        -> RateLimitEffects
    {
        transition(key, to: .throttled(until: until), at: now)
    }

    /// Disables `key` (REG-4): every request passes at once; its waiters are let through.
    @inlinable public mutating func disable(_ key: String, at now: RateLimitInstant) -> RateLimitEffects {
        transition(key, to: .disabled, at: now)
    }

    /// Returns `key` to accepting (REG-4): ends a throttle or a disable.
    @inlinable public mutating func resume(_ key: String, at now: RateLimitInstant) -> RateLimitEffects {
        transition(key, to: .accepting, at: now)
    }

    /// REG-4: moves `key` towards `target`, reporting the change of state before the status it causes.
    @inlinable mutating func transition(_ key: String, to target: KeyState, at now: RateLimitInstant)
        -> RateLimitEffects
    {
        var (instant, effects) = begin(at: now)
        guard let slot = slot(for: key, at: instant, &effects) else { return end(effects, now) }
        // what fell due before now happens first
        inQueue(slot, at: instant, &effects) { $0.advance(to: instant).completions }
        let before = keyState(slot, at: instant)
        switch target {
        case .throttled(let until):
            guard !table[slot].disabled else { return end(effects, now) }  // the limit is off
            setThrottle(slot, until > instant ? until.nanoseconds : 0)
        case .disabled:
            table[slot].disabled = true
            setThrottle(slot, 0)
        case .accepting:
            table[slot].disabled = false
            setThrottle(slot, 0)
        }
        let after = keyState(slot, at: instant)
        if case .throttled = after {
            table[slot].throttleReported = true
        } else {
            table[slot].throttleReported = false
        }
        if before != after { effects.append(.stateChanged(key: key, from: before, to: after, at: instant)) }
        inQueue(slot, at: instant, &effects) { queue in
            if case .disabled = target { return queue.drain(.bypassed) }
            return queue.advance(to: instant).completions
        }
        return end(effects, now)
    }

    /// Ends every waiter with `closed` (WQ-9).
    public mutating func close(at now: RateLimitInstant) -> RateLimitEffects {
        var (instant, effects) = begin(at: now)
        for slot in queues.slots.sorted() { inQueue(slot, at: instant, &effects) { $0.close(at: instant).completions } }
        return end(effects, now)
    }

    /// Removes `key` (REG-12): its waiters end `closed`, and everything the registry kept for it
    /// goes (its state, throttle, disable, own configuration and statistics; the totals keep its
    /// requests). The next request on `key` creates it anew from its rule, as a key never used.
    /// Answers whether the key was held.
    public mutating func remove(_ key: String, at now: RateLimitInstant) -> (removed: Bool, effects: RateLimitEffects) {
        var (instant, effects) = begin(at: now)
        guard let slot = slot(of: key) else { return (false, end(effects, now)) }
        if var queue = queues.removeValue(forKey: slot) {
            for completion in queue.close(at: instant).completions {
                guard let (_, permits) = waiting.removeValue(forKey: completion.ticket) else { continue }
                finish(
                    completion.ticket, key: key, slot: slot, permits: permits, outcome: completion.outcome, at: instant,
                    &effects)
            }
        }
        forget(slot)
        return (true, end(effects, now))
    }

    // MARK: Reading (REG-6, REG-9)

    /// `key`'s state, quota status, remaining quota and statistics at `now`, changing nothing (a
    /// key not yet used reads as a new one would; `nil` when no rule matches it).
    public func quota(of key: String, at now: RateLimitInstant) -> KeyQuota? {
        let instant = RateLimitInstant(validated: max(now.nanoseconds, latest))
        guard let slot = slot(of: key) else {
            guard let rule = ruleIndex(for: key) else { return nil }
            let remaining = RateLimiter(rules[rule].strategy, at: instant).remaining(at: instant)
            return KeyQuota(
                key: key, state: .accepting, status: Self.status(remaining, threshold: rules[rule].warningThreshold),
                remaining: remaining, statistics: KeyStatistics())
        }
        var statistics = statistics(slot)
        statistics.waiting = queues[slot]?.waitingCount ?? 0
        return KeyQuota(
            key: key, state: keyState(slot, at: instant), status: status(slot, at: instant),
            remaining: remaining(slot, at: instant), statistics: statistics)
    }

    /// The keys held now (used, and neither forgotten nor removed since), sorted.
    public var keys: [String] { heldSlots.map { table[$0].key }.sorted() }

    /// The outcome ``tryAcquire(_:permits:priority:at:)`` would give at `now`, without taking
    /// anything or changing the registry: whether `permits` on `key` are available now and, when
    /// its limit refuses, the exact wait until they are (REG-5). A key not held reads as a new one.
    public func availability(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, at now: RateLimitInstant
    ) -> WaitOutcome {
        let instant = RateLimitInstant(validated: max(now.nanoseconds, latest))
        let outcome: WaitOutcome
        if let slot = slot(of: key) {
            if table[slot].disabled {
                outcome = permits < 0 ? .rejected(.invalid(.negativePermits(permits))) : .bypassed
            } else if var queue = queues[slot] {
                outcome = queue.tryAcquire(permits, priority: priority, at: instant).outcome
            } else {
                var limiter = limiter(slot)
                outcome = WaitQueue.admitNewcomer(
                    permits, priority: priority, waitersAhead: false, to: &limiter, at: instant)
            }
        } else if let rule = ruleIndex(for: key) {
            if table.count >= table.maximumCount,
                !heldSlots.contains(where: { isForgettable($0, at: instant, served: false) })
            {
                outcome = .rejected(.tooManyKeys)
            } else {
                var limiter = RateLimiter(Limit(rules[rule].strategy), at: instant)
                outcome = WaitQueue.admitNewcomer(
                    permits, priority: priority, waitersAhead: false, to: &limiter, at: instant)
            }
        } else {
            outcome = .rejected(.unknownKey)
        }
        return outcome.shifted(by: instant.nanoseconds - now.nanoseconds)
    }
}
