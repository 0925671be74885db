// How the registry stores its keys (Spec/Registry.md, REG-8).
//
// Storage. 10,000 keys must fit in under 1 MB, so a key costs one compact entry, a row of the key
// table (KeyTable.swift, at most 7/8 full): the limiter's state, the key, three 32-bit counters,
// the rule, the key's slot, the flags and the status last reported (64 bytes for a token bucket,
// Performance.md "Registry memory"), its row's control byte, and 4 bytes that find its row from its
// slot. Everything rarer lives in side tables keyed by the slot: per-key configurations,
// throttles, wait queues (only while somebody waits), pending wake-ups, and the high bits of a
// counter that passed 2^32 − 1. A key with a queue keeps its limiter in the queue; the entry's copy
// is written back when the queue empties.

extension RateLimitRegistry {
    /// One key: the limiter's state (stale while a queue holds it), the key, counters, rule and flags.
    @usableFromInline struct Entry: KeyTableRow {
        @usableFromInline var state: Strategy.State
        @usableFromInline var key: String
        /// The low 32 bits of the key's counts (REG-9); `carries` holds the rest.
        @usableFromInline var admitted: UInt32 = 0
        @usableFromInline var rejected: UInt32 = 0
        @usableFromInline var queued: UInt32 = 0
        /// The rule's index.
        @usableFromInline var rule: UInt32
        /// The key's slot: its number in the side tables while it is held.
        @usableFromInline let slot: UInt32
        @usableFromInline var flags: Flags = []
        /// The quota status last reported (REG-6, REG-10).
        @usableFromInline var reported: QuotaStatus = .ok
        /// A lock byte a sharded shell takes to admit on this row in parallel (REG-13 item 5);
        /// 0, and never read, otherwise. It fills the row's last padding byte.
        @usableFromInline var parallelLock: UInt8 = 0

        @inlinable init(state: Strategy.State, key: String, rule: UInt32, slot: UInt32) {
            self.state = state
            self.key = key
            self.rule = rule
            self.slot = slot
        }

        @usableFromInline typealias Flags = RegistryEntryFlags

        @inlinable var disabled: Bool {
            get { flags.contains(.disabled) }
            set { flags.set(.disabled, newValue) }
        }

        @inlinable var throttleReported: Bool {
            get { flags.contains(.throttleReported) }
            set { flags.set(.throttleReported, newValue) }
        }
    }

    // MARK: Keys

    /// The slot of `key`, created at `instant` in its rule's initial state when new; `nil` when
    /// no rule matches or the registry is full of keys that are not idle (REG-8). An existing key
    /// first reports what time did to it (REG-6).
    @inlinable mutating func slot(
        for key: String, at instant: RateLimitInstant, _ effects: inout RateLimitEffects, knownAbsent: Bool = false
    ) -> UInt32? {
        // An absent key's lookup reads about 32 control bytes at 7/8 load: not twice.
        if !knownAbsent, let slot = slot(of: key) {
            catchUp(slot, to: instant, &effects)
            return slot
        }
        guard let rule = ruleIndex(for: key) else { return nil }
        // A shard granted no room: its shell forgot the idle keys of every shard first (REG-13).
        guard keyAllowance > 0 else { return nil }
        if table.count >= table.maximumCount { forgetIdleKeys(at: instant) }
        let state = rules[rule].strategy.initialState(at: instant)
        guard let slot = table.insert(key, { Entry(state: state, key: key, rule: UInt32(rule), slot: $0) }) else {
            return nil
        }
        if keyAllowance != .max { keyAllowance -= 1 }
        table[slot].reported = status(slot, at: instant)
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
        guard !queues.contains(slot), !table[slot].disabled, overrides[slot] == nil else { return false }
        guard (served ? table[slot].reported : status(slot, at: instant)) == .ok else { return false }
        let limiter = limiter(slot)
        return limiter.strategy.isIdle(limiter.state, at: instant)
    }

    /// Frees a held key's slot and everything kept for it (its waiters, if any, were ended first).
    @inlinable mutating func forget(_ slot: UInt32) {
        table.remove(slot)
        overrides[slot] = nil
        throttles[slot] = nil
        recoveries[slot] = nil
        scheduled[slot] = nil
        carries[slot] = nil
        dropStaleWakeUps()
    }

    // MARK: Counters (REG-9)

    /// The key's statistics: its 32-bit counters with what they carried.
    @usableFromInline func statistics(_ slot: UInt32) -> KeyStatistics {
        let carried = carries[slot] ?? CounterCarries()
        var statistics = KeyStatistics()
        statistics.admitted = carried.admitted << 32 | UInt64(table[slot].admitted)
        statistics.rejected = carried.rejected << 32 | UInt64(table[slot].rejected)
        statistics.queued = carried.queued << 32 | UInt64(table[slot].queued)
        return statistics
    }

    /// Counts an admission on the key, carrying past 2^32 − 1.
    @inlinable mutating func countAdmitted(_ slot: UInt32) {
        let (sum, wrapped) = table[slot].admitted.addingReportingOverflow(1)
        table[slot].admitted = sum
        if wrapped { carries[slot, default: CounterCarries()].admitted += 1 }
    }

    @inlinable mutating func countRejected(_ slot: UInt32) {
        let (sum, wrapped) = table[slot].rejected.addingReportingOverflow(1)
        table[slot].rejected = sum
        if wrapped { carries[slot, default: CounterCarries()].rejected += 1 }
    }

    @inlinable mutating func countQueued(_ slot: UInt32) {
        let (sum, wrapped) = table[slot].queued.addingReportingOverflow(1)
        table[slot].queued = sum
        if wrapped { carries[slot, default: CounterCarries()].queued += 1 }
    }

    /// The slots of the keys held, in slot order.
    @inlinable var heldSlots: [UInt32] { table.slots }

    /// The slot of a held key.
    @inlinable func slot(of key: String) -> UInt32? { table.slot(of: key) }

    /// The key held in a slot (`nil` once forgotten).
    @inlinable func key(of slot: UInt32) -> String? {
        table.isHeld(slot) ? table[slot].key : nil
    }

    /// REG-2: the exact rule, else the longest matching prefix, else the default.
    @inlinable func ruleIndex(for key: String) -> Int? {
        if let exact = exactRules[key] { return exact }
        if let prefix = prefixRules.first(where: { key.hasPrefix($0.prefix) }) { return prefix.rule }
        return defaultRule
    }

    // MARK: Storage and derived values

    /// The key's limiter: in its queue, or rebuilt from the entry and the side tables.
    @inlinable func limiter(_ slot: UInt32) -> RateLimiter<Limit> {
        if queues.contains(slot), let queue = queues[slot] { return queue.limiter }
        // Field by field: a copy of the whole entry would retain and release its key.
        let strategy = overrides[slot] ?? rules.withUnsafeBufferPointer { $0[Int(table[slot].rule)].strategy }
        return RateLimiter(
            Limit(strategy), state: Limit.State(inner: table[slot].state, throttledUntil: throttles[slot] ?? 0))
    }

    @inlinable mutating func store(_ limiter: RateLimiter<Limit>, in slot: UInt32) {
        table[slot].state = limiter.state.inner
        throttles[slot] = limiter.state.throttledUntil > 0 ? limiter.state.throttledUntil : nil
    }

    /// REG-4: disabled, throttled until an instant after `instant`, or accepting.
    @inlinable func keyState(_ slot: UInt32, at instant: RateLimitInstant) -> KeyState {
        if table[slot].disabled { return .disabled }
        let until = throttledUntil(slot)
        return until > instant.nanoseconds ? .throttled(until: RateLimitInstant(validated: until)) : .accepting
    }

    /// REG-6: the key's quota status at `instant`.
    @inlinable func status(_ slot: UInt32, at instant: RateLimitInstant) -> QuotaStatus {
        if table[slot].disabled { return .ok }
        return Self.status(limiter(slot).remaining(at: instant), threshold: warningThreshold(slot))
    }

    /// REG-6: the key's remaining quota, as its quota and its status events report it (0 while
    /// throttled; the limit's maximum while disabled, since every request passes).
    @inlinable func remaining(_ slot: UInt32, at instant: RateLimitInstant) -> Int64 {
        let limiter = limiter(slot)
        return table[slot].disabled ? limiter.strategy.maximumPermits : limiter.remaining(at: instant)
    }

    /// The key's throttle (0: none), without building its limiter.
    @inlinable func throttledUntil(_ slot: UInt32) -> Int64 {
        if queues.contains(slot), let queue = queues[slot] { return queue.limiter.state.throttledUntil }
        return throttles[slot] ?? 0
    }

    /// The warning threshold of the key's rule, without copying the rule.
    @inlinable func warningThreshold(_ slot: UInt32) -> Int64 {
        rules.withUnsafeBufferPointer { $0[Int(table[slot].rule)].warningThreshold }
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

/// What a key's 32-bit counters carried past 2^32 − 1, in units of 2^32 (REG-9: exact counts).
@usableFromInline struct CounterCarries: Sendable {
    @usableFromInline var admitted: UInt64 = 0
    @usableFromInline var rejected: UInt64 = 0
    @usableFromInline var queued: UInt64 = 0

    @inlinable init() {}
}

/// What a registry entry records besides its counters.
@usableFromInline struct RegistryEntryFlags: OptionSet, Sendable {
    @usableFromInline let rawValue: UInt8
    @inlinable init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The limit is off (REG-4).
    @inlinable static var disabled: Self { Self(rawValue: 1 << 0) }
    /// Reported as throttled: the throttle's end is still to be reported (REG-10).
    @inlinable static var throttleReported: Self { Self(rawValue: 1 << 1) }

    /// Inserts `flag` when `on`, removes it otherwise.
    @inlinable mutating func set(_ flag: Self, _ on: Bool) {
        if on { insert(flag) } else { remove(flag) }
    }
}

/// A registry side table: what few keys have (a queue, a throttle, a pending wake-up), by slot.
/// Most of the time it is empty, and then a lookup or a removal costs one comparison instead of
/// hashing the slot, and a request makes several (Performance.md, "Side tables").
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

    /// Whether `slot` has an entry, without copying it out.
    @inlinable
    func contains(_ slot: UInt32) -> Bool { !storage.isEmpty && storage.index(forKey: slot) != nil }

    /// The value of `slot`, made from `defaultValue` when it has none, to change in place.
    @inlinable
    subscript(slot: UInt32, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[slot] ?? defaultValue() }
        set { storage[slot] = newValue }
    }

    /// Whether no slot has an entry.
    @inlinable var isEmpty: Bool { storage.isEmpty }

    @inlinable
    mutating func removeValue(forKey slot: UInt32) -> Value? {
        storage.isEmpty ? nil : storage.removeValue(forKey: slot)
    }

    /// The slots that have an entry.
    @inlinable var slots: Dictionary<UInt32, Value>.Keys { storage.keys }
}
