// A registry of limiters by key (Spec/Registry.md, clauses REG-1 ... REG-11).
//
// The object an app holds: a limiter per endpoint (key), created on first use from the rule that
// matches the key, with per-key states (accepting, throttled, disabled), a quota status for the
// UI, statistics, and events. Like the wait queue it is a pure value: every operation takes the
// instant it happens at and returns what the adapter must do (deliver outcomes, report events,
// arm one timer for `nextWakeUp`).
//
// Storage. 10,000 keys must fit in under 1 MB, so a key costs one dictionary slot (its name and a
// 32-bit index) and one compact entry (the limiter's state, three counters, the rule, two flags).
// Everything rarer lives in side tables keyed by that index: per-key configurations, throttles,
// wait queues (only while somebody waits), pending wake-ups. A key with a queue keeps its limiter
// in the queue; the entry's copy is written back when the queue empties.

/// The state of a key (REG-4).
public enum KeyState: Hashable, Sendable {
    /// Requests are decided by the key's limit.
    case accepting
    /// Nothing but critical requests passes before `until` (a server's Retry-After, or the app's
    /// decision); the state returns to accepting at `until`.
    case throttled(until: RateLimitInstant)
    /// The limit is off: every request passes at once, uncounted by the limit.
    case disabled
}

/// How much quota a key has left, as an app shows it (REG-6).
public enum QuotaStatus: UInt8, Hashable, Sendable, Comparable {
    /// More than the rule's warning threshold remains.
    case ok
    /// Some quota remains, at most the threshold.
    case warning
    /// Nothing remains now.
    case limited

    public static func < (lhs: QuotaStatus, rhs: QuotaStatus) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Requests counted per key or in total (REG-9).
public struct KeyStatistics: Hashable, Sendable {
    /// Requests let through: granted, or bypassed (critical, or a disabled key).
    public internal(set) var admitted: UInt64 = 0
    /// Requests refused at once or timed out.
    public internal(set) var rejected: UInt64 = 0
    /// Requests that had to wait in a queue (whatever their outcome).
    public internal(set) var queued: UInt64 = 0
    /// Requests waiting now.
    public internal(set) var waiting: Int = 0

    @usableFromInline
    package init() {}

    /// Counts a request (the setters are internal, so inlined registry code counts through these).
    @usableFromInline mutating func countAdmitted() { admitted += 1 }
    @usableFromInline mutating func countRejected() { rejected += 1 }
    @usableFromInline mutating func countQueued() { queued += 1 }
}

/// A key's state, quota and statistics at an instant (REG-6).
public struct KeyQuota: Hashable, Sendable {
    public let key: String
    public let state: KeyState
    public let status: QuotaStatus
    /// The largest acquire the key would admit now (0 while throttled; the limit's maximum while disabled).
    public let remaining: Int64
    public let statistics: KeyStatistics
}

/// Something that happened to a key (REG-10), stamped with the instant it happened at.
public enum RegistryEvent: Hashable, Sendable {
    /// A request refused at once (any reason) or timed out.
    case rejected(key: String, permits: Int64, outcome: WaitOutcome, at: RateLimitInstant)
    /// The key's state changed.
    case stateChanged(key: String, from: KeyState, to: KeyState, at: RateLimitInstant)
    /// The key's quota status changed; `remaining` is the quota at that instant.
    case statusChanged(key: String, from: QuotaStatus, to: QuotaStatus, remaining: Int64, at: RateLimitInstant)
}

/// Limiters by key, configured by rules (Spec/Registry.md).
public struct RateLimitRegistry<Strategy: RateLimitStrategy>: Sendable {
    @usableFromInline typealias Limit = KeyLimit<Strategy>

    /// The most keys held at once (REG-8).
    public let maximumKeys: Int

    @usableFromInline var rules: [RateLimitRule<Strategy>]
    @usableFromInline var exactRules: [String: Int] = [:]
    /// Prefix rules, longest prefix first (REG-2).
    @usableFromInline var prefixRules: [(prefix: String, rule: Int)] = []
    @usableFromInline var defaultRule: Int?

    @usableFromInline var index = KeyIndex()
    @usableFromInline var entries: ContiguousArray<Entry> = []
    @usableFromInline var freeSlots: [UInt32] = []
    @usableFromInline var overrides = SideTable<Strategy>()
    @usableFromInline var throttles = SideTable<Int64>()
    @usableFromInline var queues = SideTable<WaitQueue<Limit>>()
    @usableFromInline var waiting: [WaitTicket: (slot: UInt32, permits: Int64)] = [:]
    /// When the status of a key that is not `ok` improves with no event (REG-6).
    @usableFromInline var recoveries = SideTable<Int64>()
    /// The earliest pending wake-up of each slot that has one, and the heap that orders them.
    @usableFromInline var scheduled = SideTable<Int64>()
    @usableFromInline var wakeUps = DeadlineHeap<UInt32>()
    @usableFromInline var counted = KeyStatistics()
    @usableFromInline var issued: UInt64 = 0
    /// The latest instant the registry has seen (REG-3).
    @usableFromInline var latest: Int64

    /// One key: the limiter's state (stale while a queue holds it), the key, counters, rule and flags.
    @usableFromInline struct Entry: Sendable {
        @usableFromInline var state: Strategy.State
        @usableFromInline var key: String
        @usableFromInline var admitted: UInt64 = 0
        @usableFromInline var rejected: UInt64 = 0
        @usableFromInline var queued: UInt64 = 0
        @usableFromInline var rule: UInt32
        /// Bit 0: disabled. Bits 1–2: the status last reported. Bit 3: forgotten (a free slot).
        /// Bit 4: reported as throttled (its end is still to be reported).
        @usableFromInline var flags: UInt8 = 0

        @inlinable init(state: Strategy.State, key: String, rule: UInt32) {
            self.state = state
            self.key = key
            self.rule = rule
        }

        @inlinable var throttleReported: Bool {
            get { flags & 16 != 0 }
            set { flags = newValue ? flags | 16 : flags & ~16 }
        }

        @inlinable var held: Bool {
            get { flags & 8 == 0 }
            set { flags = newValue ? flags & ~8 : flags | 8 }
        }

        @inlinable var disabled: Bool {
            get { flags & 1 != 0 }
            set { flags = newValue ? flags | 1 : flags & ~1 }
        }

        @inlinable var reported: QuotaStatus {
            get { QuotaStatus(rawValue: (flags >> 1) & 3) ?? .ok }
            set { flags = (flags & ~6) | (newValue.rawValue << 1) }
        }
    }

    /// A registry of `rules` created at `now` (REG-1).
    ///
    /// - Throws: ``RateLimitRegistryError`` for two rules with the same pattern or `maximumKeys < 1`.
    @inlinable public init(rules: [RateLimitRule<Strategy>], maximumKeys: Int = 10_000, at now: RateLimitInstant)
        throws(RateLimitRegistryError)
    {
        guard maximumKeys >= 1 else { throw .invalidMaximumKeys(maximumKeys) }
        self.maximumKeys = maximumKeys
        self.rules = rules
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
    public var keyCount: Int { index.count }

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
    /// in the effects of a later operation; otherwise this operation's effects hold it.
    @inlinable public mutating func acquire(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, timeout: Duration? = nil,
        at now: RateLimitInstant
    ) -> (ticket: WaitTicket, effects: RateLimitEffects) {
        var (instant, effects) = begin(at: now)
        let ticket = issue()
        request(
            key, ticket: ticket, permits: permits, priority: priority, timeout: timeout, mayWait: true, at: instant,
            &effects)
        return (ticket, end(effects, now))
    }

    /// A request that never waits, whatever the key's policy: where it would wait it is refused
    /// with the reason (WQ-4). Its outcome is returned, not in the effects.
    @inlinable public mutating func tryAcquire(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects) {
        var (instant, effects) = begin(at: now)
        let ticket = issue()
        request(
            key, ticket: ticket, permits: permits, priority: priority, timeout: nil, mayWait: false, at: instant,
            &effects)
        var rest = end(effects, now)
        // A request that cannot wait is always decided.
        let outcome = rest.removeCompletion(of: ticket)?.outcome ?? .closed
        return (outcome, rest)
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
        let governed = heldSlots.filter { entries[Int($0)].rule == UInt32(index) && overrides[$0] == nil }
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
            guard !entries[Int(slot)].disabled else { return end(effects, now) }  // the limit is off
            setThrottle(slot, until > instant ? until.nanoseconds : 0)
        case .disabled:
            entries[Int(slot)].disabled = true
            setThrottle(slot, 0)
        case .accepting:
            entries[Int(slot)].disabled = false
            setThrottle(slot, 0)
        }
        let after = keyState(slot, at: instant)
        if case .throttled = after {
            entries[Int(slot)].throttleReported = true
        } else {
            entries[Int(slot)].throttleReported = false
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
        let limiter = limiter(slot)
        let entry = entries[Int(slot)]
        var statistics = KeyStatistics()
        statistics.admitted = entry.admitted
        statistics.rejected = entry.rejected
        statistics.queued = entry.queued
        statistics.waiting = queues[slot]?.waitingCount ?? 0
        return KeyQuota(
            key: key, state: keyState(slot, at: instant), status: status(slot, at: instant),
            remaining: entry.disabled ? limiter.strategy.maximumPermits : limiter.remaining(at: instant),
            statistics: statistics)
    }

    /// The keys held now (used, and neither forgotten nor removed since), sorted.
    public var keys: [String] { heldSlots.map { entries[Int($0)].key }.sorted() }

    /// The outcome ``tryAcquire(_:permits:priority:at:)`` would give at `now`, without taking
    /// anything or changing the registry: whether `permits` on `key` are available now and, when
    /// its limit refuses, the exact wait until they are (REG-5). A key not held reads as a new one.
    public func availability(
        _ key: String, permits: Int64 = 1, priority: RateLimitPriority = .normal, at now: RateLimitInstant
    ) -> WaitOutcome {
        let instant = RateLimitInstant(validated: max(now.nanoseconds, latest))
        let outcome: WaitOutcome
        if let slot = slot(of: key) {
            if entries[Int(slot)].disabled {
                outcome = permits < 0 ? .rejected(.invalid(.negativePermits(permits))) : .bypassed
            } else if var queue = queues[slot] {
                outcome = queue.tryAcquire(permits, priority: priority, at: instant).outcome
            } else {
                var limiter = limiter(slot)
                outcome = WaitQueue.admitNewcomer(
                    permits, priority: priority, waitersAhead: false, to: &limiter, at: instant)
            }
        } else if let rule = ruleIndex(for: key) {
            if index.count >= maximumKeys, !heldSlots.contains(where: { isForgettable($0, at: instant, served: false) })
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

    // MARK: Operations

    /// REG-3: the instant an operation at `now` applies at, after serving everything due by then.
    @inlinable mutating func begin(at now: RateLimitInstant) -> (instant: RateLimitInstant, effects: RateLimitEffects) {
        latest = max(latest, now.nanoseconds)
        let instant = RateLimitInstant(validated: latest)
        var effects = RateLimitEffects()
        // REG-11: what fell due since the last operation, in time order, each at its own instant
        // (as a timer firing on time would have served it), so that waking late changes nothing
        // but latency and events come in the order they happened.
        while let first = wakeUps.first, first.deadline <= latest {
            wakeUps.removeFirst()
            let slot = first.payload
            guard scheduled[slot] == first.deadline else { continue }  // superseded by an earlier one
            scheduled[slot] = nil
            guard entries[Int(slot)].held else { continue }  // forgotten
            let due = RateLimitInstant(validated: first.deadline)
            inQueue(slot, at: due, &effects) { $0.advance(to: due).completions }
        }
        return (instant, effects)
    }

    /// REG-3: the effects as the caller at `now` sees them (spans count from `now`).
    @inlinable func end(_ effects: RateLimitEffects, _ now: RateLimitInstant) -> RateLimitEffects {
        effects.shifted(by: latest - now.nanoseconds)
    }

    @inlinable mutating func issue() -> WaitTicket {
        issued += 1
        return WaitTicket(rawValue: issued)
    }

    /// REG-5: decides or queues a request on `key`, creating the key if needed (REG-3, REG-8).
    @inlinable mutating func request(
        _ key: String, ticket: WaitTicket, permits: Int64, priority: RateLimitPriority, timeout: Duration?,
        mayWait: Bool, at instant: RateLimitInstant, _ effects: inout RateLimitEffects
    ) {
        guard let slot = slot(for: key, at: instant, &effects) else {
            let reason: WaitRejection = ruleIndex(for: key) == nil ? .unknownKey : .tooManyKeys
            return finish(
                ticket, key: key, slot: nil, permits: permits, outcome: .rejected(reason), at: instant, &effects)
        }
        if entries[Int(slot)].disabled {
            let outcome: WaitOutcome = permits < 0 ? .rejected(.invalid(.negativePermits(permits))) : .bypassed
            finish(ticket, key: key, slot: slot, permits: permits, outcome: outcome, at: instant, &effects)
            return settle(slot, [], at: instant, &effects)
        }
        guard var queue = queues.removeValue(forKey: slot) else {
            // Nobody waits: WQ-4 on the stored state, without building a queue.
            var limiter = limiter(slot)
            let outcome = WaitQueue.admitNewcomer(
                permits, priority: priority, waitersAhead: false, to: &limiter, at: instant)
            store(limiter, in: slot)
            // The rule is read only for a refusal that may wait: the common answer copies nothing more.
            guard outcome.mayWait, mayWait, case .queue = rules[Int(entries[Int(slot)].rule)].overflow else {
                finish(ticket, key: key, slot: slot, permits: permits, outcome: outcome, at: instant, &effects)
                return settle(slot, [], at: instant, &effects)
            }
            let rule = rules[Int(entries[Int(slot)].rule)]
            queues[slot] = WaitQueue(limiter: limiter, queueLimit: rule.queueLimit, at: instant)
            return request(
                key, ticket: ticket, permits: permits, priority: priority, timeout: timeout, mayWait: true, at: instant,
                &effects)
        }
        var completions: [WaitCompletion]
        var decided: WaitOutcome?
        if mayWait {
            let timeout = timeout.map(Self.nanoseconds) ?? rules[Int(entries[Int(slot)].rule)].timeoutNanoseconds
            let deadline = timeout.map { instant.advanced(byNanoseconds: $0) ?? .end }
            var served = queue.acquire(permits, priority: priority, deadline: deadline, ticket: ticket, at: instant)
            decided = served.removeCompletion(of: ticket)?.outcome
            completions = served.completions
        } else {
            let (outcome, served) = queue.tryAcquire(permits, priority: priority, at: instant)
            (decided, completions) = (outcome, served.completions)
        }
        queues[slot] = queue
        if let decided {
            finish(ticket, key: key, slot: slot, permits: permits, outcome: decided, at: instant, &effects)
        } else {
            waiting[ticket] = (slot, permits)
            entries[Int(slot)].queued += 1
            counted.countQueued()
        }
        settle(slot, completions, at: instant, &effects)
    }

    /// An event on `key`'s limit (release, reset, reconfigure) at the registry's instant.
    @inlinable mutating func keyEvent(
        _ key: String, _ event: RateLimitEvent<Limit>, at now: RateLimitInstant
    ) -> (result: RateLimitResult, effects: RateLimitEffects) {
        var (instant, effects) = begin(at: now)
        guard let slot = slot(for: key, at: instant, &effects) else {
            return (
                .invalid(ruleIndex(for: key) == nil ? Self.unknownKeyError : Self.tooManyKeysError), end(effects, now)
            )
        }
        let result = change(slot, at: instant, &effects) { $0.step(event, at: instant) }
        return (result.shifted(by: latest - now.nanoseconds), end(effects, now))
    }

    /// Sets the key's throttle (0: none), in its queue when it has one; served by the caller.
    @inlinable mutating func setThrottle(_ slot: UInt32, _ until: Int64) {
        if var queue = queues.removeValue(forKey: slot) {
            _ = queue.updateLimiter(at: nil) { $0.updateState { $0.throttledUntil = until } }
            queues[slot] = queue
        } else {
            throttles[slot] = until > 0 ? until : nil
        }
    }

    // MARK: Keys

    /// The slot of `key`, created at `instant` in its rule's initial state when new; `nil` when
    /// no rule matches or the registry is full of keys that are not idle (REG-8). An existing key
    /// first reports what time did to it (REG-6).
    @inlinable mutating func slot(for key: String, at instant: RateLimitInstant, _ effects: inout RateLimitEffects)
        -> UInt32?
    {
        if let slot = slot(of: key) {
            catchUp(slot, to: instant, &effects)
            return slot
        }
        guard let rule = ruleIndex(for: key) else { return nil }
        if index.count >= maximumKeys { forgetIdleKeys(at: instant) }
        guard index.count < maximumKeys else { return nil }
        let entry = Entry(state: rules[rule].strategy.initialState(at: instant), key: key, rule: UInt32(rule))
        let slot: UInt32
        if let free = freeSlots.popLast() {
            slot = free
            entries[Int(slot)] = entry
        } else {
            slot = UInt32(entries.count)
            if entries.count == entries.capacity {
                entries.reserveCapacity(min(maximumKeys, max(16, entries.count * 2)))
            }
            entries.append(entry)
        }
        index.insert(key, slot: slot) { entries[Int($0)].key }
        entries[Int(slot)].reported = status(slot, at: instant)
        recoveries[slot] = nextRecovery(slot, from: instant)
        schedule(slot, at: instant)
        return slot
    }

    /// REG-8: forgets every key that is idle at `instant`: a new key would answer exactly as it does.
    @inlinable mutating func forgetIdleKeys(at instant: RateLimitInstant) {
        for slot in heldSlots where isForgettable(slot, at: instant) { forget(slot) }
    }

    /// REG-8: nobody waits on the key, it is accepting with its rule's configuration, its status
    /// `ok` (as reported, or, for a registry that has not served `instant` yet, as it will be),
    /// and its limit is idle at `instant`.
    @inlinable func isForgettable(_ slot: UInt32, at instant: RateLimitInstant, served: Bool = true) -> Bool {
        let entry = entries[Int(slot)]
        guard queues[slot] == nil, !entry.disabled, overrides[slot] == nil else { return false }
        guard (served ? entry.reported : status(slot, at: instant)) == .ok else { return false }
        let limiter = limiter(slot)
        return limiter.strategy.isIdle(limiter.state, at: instant)
    }

    /// Frees a held key's slot and everything kept for it (its waiters, if any, were ended first).
    @inlinable mutating func forget(_ slot: UInt32) {
        index.remove(entries[Int(slot)].key) { entries[Int($0)].key }
        entries[Int(slot)].key = ""
        entries[Int(slot)].held = false
        overrides[slot] = nil
        throttles[slot] = nil
        recoveries[slot] = nil
        scheduled[slot] = nil
        freeSlots.append(slot)
    }

    /// The slots of the keys held, in slot order.
    @inlinable var heldSlots: [UInt32] {
        entries.indices.compactMap { entries[$0].held ? UInt32($0) : nil }
    }

    /// The slot of a held key.
    @inlinable func slot(of key: String) -> UInt32? {
        index.slot(of: key) { entries[Int($0)].key }
    }

    /// The key held in a slot (`nil` once forgotten).
    @inlinable func key(of slot: UInt32) -> String? {
        entries[Int(slot)].held ? entries[Int(slot)].key : nil
    }

    /// REG-2: the exact rule, else the longest matching prefix, else the default.
    @inlinable func ruleIndex(for key: String) -> Int? {
        if let exact = exactRules[key] { return exact }
        if let prefix = prefixRules.first(where: { key.hasPrefix($0.prefix) }) { return prefix.rule }
        return defaultRule
    }

    // MARK: Applying changes

    /// Applies `body` to the key's limiter (in its queue when it has one, which is then served at
    /// `instant`) and settles the key.
    @inlinable mutating func change(
        _ slot: UInt32, at instant: RateLimitInstant, _ effects: inout RateLimitEffects,
        _ body: (inout RateLimiter<Limit>) -> RateLimitResult
    ) -> RateLimitResult {
        var result = RateLimitResult.allowed(remaining: 0)
        if queues[slot] != nil {
            inQueue(slot, at: instant, &effects) { queue in queue.updateLimiter(at: instant) { result = body(&$0) } }
        } else {
            var limiter = limiter(slot)
            result = body(&limiter)
            store(limiter, in: slot)
            settle(slot, [], at: instant, &effects)
        }
        return result
    }

    /// Runs `body` on the key's queue, if it has one, and settles the key with its completions.
    @inlinable mutating func inQueue(
        _ slot: UInt32, at instant: RateLimitInstant, _ effects: inout RateLimitEffects,
        _ body: (inout WaitQueue<Limit>) -> [WaitCompletion]
    ) {
        catchUp(slot, to: instant, &effects)
        guard var queue = queues.removeValue(forKey: slot) else { return settle(slot, [], at: instant, &effects) }
        let completions = body(&queue)
        queues[slot] = queue
        settle(slot, completions, at: instant, &effects)
    }

    /// After a change at `instant`: delivers the key's completions, writes back a queue that
    /// emptied, reports a status change (REG-6) and schedules the key's next wake-up (REG-11).
    @inlinable mutating func settle(
        _ slot: UInt32, _ completions: [WaitCompletion], at instant: RateLimitInstant, _ effects: inout RateLimitEffects
    ) {
        guard let key = key(of: slot) else { return }
        for completion in completions {
            guard let (_, permits) = waiting.removeValue(forKey: completion.ticket) else { continue }
            finish(
                completion.ticket, key: key, slot: slot, permits: permits, outcome: completion.outcome, at: instant,
                &effects)
        }
        if let queue = queues[slot], queue.waitingCount == 0 {
            queues[slot] = nil
            store(queue.limiter, in: slot)
        }
        let status = status(slot, at: instant)
        let reported = entries[Int(slot)].reported
        if status != reported {
            effects.append(
                .statusChanged(
                    key: key, from: reported, to: status, remaining: limiter(slot).remaining(at: instant), at: instant))
            entries[Int(slot)].reported = status
        }
        recoveries[slot] = nextRecovery(slot, from: instant)
        schedule(slot, at: instant)
    }

    /// Records an outcome in the statistics and the events, and hands it to the adapter (REG-9, REG-10).
    @inlinable mutating func finish(
        _ ticket: WaitTicket, key: String, slot: UInt32?, permits: Int64, outcome: WaitOutcome,
        at instant: RateLimitInstant,
        _ effects: inout RateLimitEffects
    ) {
        effects.append(WaitCompletion(ticket: ticket, outcome: outcome, at: instant))
        switch outcome {
        case .granted, .bypassed:
            counted.countAdmitted()
            if let slot { entries[Int(slot)].admitted += 1 }
        case .rejected, .timedOut:
            counted.countRejected()
            if let slot { entries[Int(slot)].rejected += 1 }
            effects.append(.rejected(key: key, permits: permits, outcome: outcome, at: instant))
        case .cancelled, .closed:
            break
        }
    }

    // MARK: Time (REG-4, REG-6, REG-11)

    /// Reports what time did to a key since its last change, each transition at the instant it
    /// happened and in time order: a throttle that ended, then quota that recovered.
    @inlinable mutating func catchUp(_ slot: UInt32, to instant: RateLimitInstant, _ effects: inout RateLimitEffects) {
        guard let key = key(of: slot) else { return }
        while true {
            // The limit itself ignores a throttle once its instant passes (KeyLimit); only the report is due.
            let until = limiter(slot).state.throttledUntil
            let throttleEnd = entries[Int(slot)].throttleReported && until <= instant.nanoseconds ? until : nil
            // A key with waiters is served at `instant` next: its status there is settled after
            // serving (a waiter may take the quota that just came back), so only earlier recoveries.
            let served = queues[slot] != nil
            let recovery = recoveries[slot].flatMap {
                $0 < instant.nanoseconds || (!served && $0 == instant.nanoseconds) ? $0 : nil
            }
            if let throttleEnd, recovery.map({ throttleEnd <= $0 }) ?? true {
                let at = RateLimitInstant(validated: throttleEnd)
                effects.append(.stateChanged(key: key, from: .throttled(until: at), to: .accepting, at: at))
                entries[Int(slot)].throttleReported = false
                recoveries[slot] = nextRecovery(slot, from: at)
                continue
            }
            guard let recovery else { return }
            let at = RateLimitInstant(validated: recovery)
            let status = status(slot, at: at)
            let reported = entries[Int(slot)].reported
            guard status < reported else {
                recoveries[slot] = nil  // an exact recovery instant always improves the status
                return
            }
            effects.append(
                .statusChanged(key: key, from: reported, to: status, remaining: limiter(slot).remaining(at: at), at: at)
            )
            entries[Int(slot)].reported = status
            recoveries[slot] = nextRecovery(slot, from: at)
        }
    }

    /// REG-6: when the key's status next improves with no event, seen from `instant`: the instant
    /// an acquire of one permit more than its level allows would be admitted.
    @inlinable func nextRecovery(_ slot: UInt32, from instant: RateLimitInstant) -> Int64? {
        let entry = entries[Int(slot)]
        guard !entry.disabled, entry.reported != .ok else { return nil }
        let limiter = limiter(slot)
        let threshold = rules[Int(entry.rule)].warningThreshold
        let needed = entry.reported == .limited ? 1 : threshold + 1
        switch limiter.strategy.step(limiter.state, .acquire(needed), at: instant).result {
        case .rejected(let wait): return instant.nanoseconds + wait  // on the timeline (CORE-5)
        case .allowed, .delayed: return instant.nanoseconds
        case .rejectedUntilRelease, .neverAllowed, .invalid: return nil
        }
    }

    /// Schedules the key's next wake-up: its queue's, its throttle's end, or its quota's recovery.
    @inlinable mutating func schedule(_ slot: UInt32, at instant: RateLimitInstant) {
        var next = queues[slot]?.nextWakeUp(at: instant)?.nanoseconds
        let until = limiter(slot).state.throttledUntil
        if entries[Int(slot)].throttleReported { next = min(next ?? until, until) }
        if let recovery = recoveries[slot] { next = min(next ?? recovery, recovery) }
        // Never before `instant`: everything due by then was served (a queue's cancelled deadlines linger).
        guard let next = next.map({ max($0, instant.nanoseconds) }), scheduled[slot].map({ next < $0 }) ?? true else {
            return
        }
        scheduled[slot] = next
        wakeUps.insert(deadline: next, slot)
    }

    // MARK: Storage and derived values

    /// The key's limiter: in its queue, or rebuilt from the entry and the side tables.
    @inlinable func limiter(_ slot: UInt32) -> RateLimiter<Limit> {
        if let queue = queues[slot] { return queue.limiter }
        // Field by field: a copy of the whole entry would retain and release its key.
        let strategy = overrides[slot] ?? rules[Int(entries[Int(slot)].rule)].strategy
        return RateLimiter(
            Limit(strategy), state: Limit.State(inner: entries[Int(slot)].state, throttledUntil: throttles[slot] ?? 0))
    }

    @inlinable mutating func store(_ limiter: RateLimiter<Limit>, in slot: UInt32) {
        entries[Int(slot)].state = limiter.state.inner
        throttles[slot] = limiter.state.throttledUntil > 0 ? limiter.state.throttledUntil : nil
    }

    /// REG-4: disabled, throttled until an instant after `instant`, or accepting.
    @inlinable func keyState(_ slot: UInt32, at instant: RateLimitInstant) -> KeyState {
        if entries[Int(slot)].disabled { return .disabled }
        let until = limiter(slot).state.throttledUntil
        return until > instant.nanoseconds ? .throttled(until: RateLimitInstant(validated: until)) : .accepting
    }

    /// REG-6: the key's quota status at `instant`.
    @inlinable func status(_ slot: UInt32, at instant: RateLimitInstant) -> QuotaStatus {
        let entry = entries[Int(slot)]
        if entry.disabled { return .ok }
        return Self.status(limiter(slot).remaining(at: instant), threshold: rules[Int(entry.rule)].warningThreshold)
    }

    @inlinable static func status(_ remaining: Int64, threshold: Int64) -> QuotaStatus {
        remaining == 0 ? .limited : remaining <= threshold ? .warning : .ok
    }

    /// A timeout in whole nanoseconds, a fraction of a nanosecond dropped, negative as 0 and at most `Int64.max` (WQ-11).
    @inlinable static func nanoseconds(_ timeout: Duration) -> Int64 {
        guard timeout > .zero else { return 0 }
        guard timeout < .nanoseconds(Int64.max) else { return .max }
        let (seconds, attoseconds) = timeout.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    @inlinable static var unknownKeyError: RateLimitInputError {
        RateLimitInputError(field: "key", value: nil, problem: .notSupported, reason: "no rule matches the key")
    }

    @inlinable static var tooManyKeysError: RateLimitInputError {
        RateLimitInputError(
            field: "key", value: nil, problem: .notSupported,
            reason: "the registry holds its maximum of keys and none is idle")
    }
}

extension RateLimitEffects {
    /// The effects as seen from `shift` nanoseconds earlier (REG-3): waits and retry-afters grow.
    @inlinable
    func shifted(by shift: Int64) -> RateLimitEffects {
        guard shift > 0, !isEmpty else { return self }
        return mapped(
            completion: { WaitCompletion(ticket: $0.ticket, outcome: $0.outcome.shifted(by: shift), at: $0.at) },
            event: { event in
                switch event {
                case .rejected(let key, let permits, let outcome, let at):
                    .rejected(key: key, permits: permits, outcome: outcome.shifted(by: shift), at: at)
                case .stateChanged, .statusChanged:
                    event
                }
            })
    }
}

extension WaitOutcome {
    @inlinable
    func shifted(by shift: Int64) -> WaitOutcome {
        switch self {
        case .granted(let answer): .granted(answer.shifted(by: shift))
        case .rejected(.limited(let wait)):
            .rejected(.limited(retryAfterNanoseconds: RateLimitResult.grown(wait, by: shift)))
        case .rejected, .bypassed, .timedOut, .cancelled, .closed: self
        }
    }
}

extension RateLimitResult {
    /// The answer as seen from `shift` nanoseconds earlier: spans grow (saturated at `Int64.max`).
    @inlinable
    func shifted(by shift: Int64) -> RateLimitResult {
        guard shift > 0 else { return self }
        switch self {
        case .rejected(let wait): return .rejected(retryAfterNanoseconds: Self.grown(wait, by: shift))
        case .delayed(let wait, let remaining):
            return .delayed(waitNanoseconds: Self.grown(wait, by: shift), remaining: remaining)
        case .allowed, .rejectedUntilRelease, .neverAllowed, .invalid: return self
        }
    }

    /// `span + shift`, saturated at `Int64.max`.
    @inlinable
    static func grown(_ span: Int64, by shift: Int64) -> Int64 { span > Int64.max - shift ? .max : span + shift }
}

/// A registry side table: what few keys have (a queue, a throttle, a pending wake-up), by slot.
/// Most of the time it is empty, and then a lookup or a removal costs one comparison instead of
/// hashing the slot (ratelimit-bench: five such lookups per request).
@usableFromInline
struct SideTable<Value: Sendable>: Sendable {
    @usableFromInline var storage: [UInt32: Value] = [:]

    @inlinable init() {}

    @inlinable
    subscript(slot: UInt32) -> Value? {
        get { storage.isEmpty ? nil : storage[slot] }
        set {
            if newValue == nil, storage.isEmpty { return }
            storage[slot] = newValue
        }
    }

    @inlinable
    mutating func removeValue(forKey slot: UInt32) -> Value? {
        storage.isEmpty ? nil : storage.removeValue(forKey: slot)
    }

    /// The slots that have an entry.
    @inlinable var slots: Dictionary<UInt32, Value>.Keys { storage.keys }
}
