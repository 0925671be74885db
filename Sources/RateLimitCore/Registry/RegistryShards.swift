// What a sharded shell needs of the registries it holds as shards (Spec/Registry.md, REG-13):
// which shard a key lies in, the room to create a key, forgetting idle keys in every shard at one
// instant, and serving what fell due in every shard in time order. The shell holds each shard
// under a lock of its own and calls these under it; the decisions stay here.

extension RateLimitRegistry {
    /// The seeded hash of `key` that chooses its shard: the key table's own hash for a table made
    /// with `seed` (it differs only once a table is flooded, and ``prefetch(_:hash:)`` knows it).
    @inlinable @inline(__always) package static func shardHash(_ key: String, seed: UInt64) -> UInt64 {
        KeyHash.hash(key, seed: seed)
    }

    /// The shard of `count` (a power of two) that holds the key of `hash`: bits the table does not
    /// use for a key's home row (its high bits) or its control byte (its low byte).
    @inlinable @inline(__always) package static func shard(of hash: UInt64, count: Int) -> Int {
        Int(truncatingIfNeeded: hash >> 8) & (count - 1)
    }

    /// The addresses a request on `key` reads first (``lookUp(_:)``), with `hash` from
    /// ``shardHash(_:seed:)``.
    @inlinable @inline(__always) package func homeAddresses(_ key: String, hash: UInt64) -> (row: UInt, control: UInt) {
        table.homeAddresses(table.flooded ? table.hash(key) : hash)
    }

    /// The instant of the latest operation (REG-3's `G`).
    @inlinable package var latestInstant: RateLimitInstant { RateLimitInstant(validated: latest) }

    /// Whether `key` is held; `hash` is ``shardHash(_:seed:)`` with this registry's seed.
    @inlinable package func hasKey(_ key: String, hash: UInt64) -> Bool {
        table.row(of: key, hash: table.flooded ? table.hash(key) : hash) != nil
    }

    /// Whether an operation on `key` that creates a key not held would create it now: it is not
    /// held and a rule governs it, and, for ``reconfigure(_:to:at:)`` (`reconfiguring`), that
    /// rule's configuration may become `strategy` (otherwise the answer is `invalid`, creating
    /// nothing). `hash` is ``shardHash(_:seed:)`` with this registry's seed.
    @inlinable package func createsKey(_ key: String, hash: UInt64, reconfiguring strategy: Strategy? = nil) -> Bool {
        guard !hasKey(key, hash: hash), let rule = ruleIndex(for: key) else { return false }
        guard let strategy else { return true }
        do throws(RateLimitInputError) {
            _ = try rules[rule].reconfigured(strategy)
            return true
        } catch {
            return false
        }
    }

    // MARK: Admissions in parallel (REG-13 item 5)

    /// The row of `key` when a request of `permits` at `now` may be admitted in parallel with
    /// other such requests on other keys, its lock byte, and the instant it is decided at
    /// (`max(now, G)`): the key held, with no side table entry (queue, throttle, configuration of
    /// its own, recovery), and nothing due by that instant. `nil` otherwise: the request then
    /// takes the shard's lock.
    ///
    /// Called without the shard's exclusion, while no operation that changes the registry can
    /// run (the shell's readers' protocol, REG-13 item 5): it only reads, through `registry`
    /// (read accesses that other threads' admissions make at once; a call on a registry read
    /// through a pointer copied all of it, retaining every table). The row it answers is changed
    /// only by ``admitInParallel(in:_:permits:at:)``, under the row's lock byte. Writing a row
    /// in place needs rows that no copy of the registry shares: a shell never keeps a copy of a
    /// shard's registry, so its rows are the shard's alone whenever the shard's lock is free.
    @inlinable @inline(__always) package static func parallelRow(
        in registry: UnsafePointer<Self>, _ key: String, hash: UInt64, permits: Int64, at now: RateLimitInstant
    ) -> (row: UnsafeMutableRawPointer, lock: UnsafeMutablePointer<UInt8>, instant: RateLimitInstant)? {
        // Plain values first, each read where it lies: a table or a side table read whole through
        // the pointer was copied, its storage retained and released on every request, on a line
        // every thread then wrote.
        let instant = RateLimitInstant(validated: max(now.nanoseconds, registry.pointee.latest))
        let base = registry.pointee.table.rows.base
        let controls = UnsafeRawPointer(registry.pointee.table.rows.controls)
        let size = registry.pointee.table.rows.count
        guard permits > 0, size > 0, !registry.pointee.table.flooded,
            registry.pointee.wakeUps.first.map({ $0.deadline > instant.nanoseconds }) ?? true,
            let lockOffset = MemoryLayout<Entry>.offset(of: \.parallelLock),
            let index = KeyTable<Entry>.row(of: key, hash: hash, base: base, controls: controls, size: size)
        else { return nil }
        let entry = base + index
        if !(registry.pointee.queues.isEmpty && registry.pointee.throttles.isEmpty
            && registry.pointee.overrides.isEmpty && registry.pointee.recoveries.isEmpty)
        {
            let slot = entry.pointee.slot
            guard !registry.pointee.queues.contains(slot), !registry.pointee.throttles.contains(slot),
                !registry.pointee.overrides.contains(slot), !registry.pointee.recoveries.contains(slot)
            else { return nil }
        }
        let row = UnsafeMutableRawPointer(entry)
        return (row, (row + lockOffset).assumingMemoryBound(to: UInt8.self), instant)
    }

    /// ``homeAddresses(_:hash:)`` read through `registry`, as ``parallelRow(in:_:hash:permits:at:)``
    /// reads (a flooded table's are not the shard hash's: the admission declines there anyway).
    @inlinable @inline(__always) package static func homeAddresses(
        in registry: UnsafePointer<Self>, hash: UInt64
    ) -> (row: UInt, control: UInt) {
        KeyTable<Entry>.homeAddresses(
            hash, base: registry.pointee.table.rows.base, controls: registry.pointee.table.rows.controls,
            size: registry.pointee.table.rows.count)
    }

    /// Admits a request of `permits` at `instant` on `row` (from
    /// ``parallelRow(in:_:hash:permits:at:)``), with its lock byte held, when it is the common
    /// case ``tryAcquire(_:permits:priority:at:)`` answers without settling (the limit admits at
    /// once with quota above the warning threshold): the key's state and count change, and
    /// nothing else; `nil`, changing nothing, otherwise. The registry's own count of admissions
    /// and its `G` are left as they are: the shell counts the admission (REG-9) and the instant
    /// is the caller's (REG-13 item 5).
    @inlinable @inline(__always) package static func admitInParallel(
        in registry: UnsafePointer<Self>, _ row: UnsafeMutableRawPointer, permits: Int64, at instant: RateLimitInstant
    ) -> RateLimitResult? {
        // The rules' address, taken out of the array's closure: the array lives as long as no
        // operation changes the registry, and none can until this admission ends.
        let rules = registry.pointee.rules.withUnsafeBufferPointer { $0.baseAddress! }
        return admit(permits, at: instant, in: &row.assumingMemoryBound(to: Entry.self).pointee, rules: rules)
    }

    /// ``tryAcquire(_:permits:priority:at:)`` with `hash` from ``shardHash(_:seed:)``, unless
    /// `key` is not held and the registry has no room granted for it (``keyAllowance`` is 0):
    /// then `nil`, and nothing changed.
    @inlinable @inline(__always) package mutating func tryAcquireHeld(
        _ key: String, hash: UInt64, permits: Int64, priority: RateLimitPriority, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects)? {
        let hash = table.flooded ? table.hash(key) : hash
        var absent = false
        var present = false
        if let outcome = admitInPlace(key, hash: hash, permits: permits, at: now, absent: &absent, present: &present) {
            return (outcome, RateLimitEffects())
        }
        // Looked up again only when the common path did not look.
        if keyAllowance <= 0, !present, absent || table.row(of: key, hash: hash) == nil { return nil }
        return tryAcquireOutOfPlace(key, permits: permits, priority: priority, knownAbsent: absent, at: now)
    }

    /// REG-8 in a shard of a full sharded registry: serves what is due by `now` (REG-3), then
    /// forgets every key that is idle then.
    @inlinable package mutating func forgettingIdleKeys(at now: RateLimitInstant) -> RateLimitEffects {
        let (instant, effects) = begin(at: now)
        forgetIdleKeys(at: instant)
        return end(effects, now)
    }

    /// Whether a key would be forgotten at `now` (REG-8), changing nothing: what an availability
    /// check of a new key in a full sharded registry asks every shard.
    @inlinable package func hasForgettableKey(at now: RateLimitInstant) -> Bool {
        let instant = RateLimitInstant(validated: max(now.nanoseconds, latest))
        return heldSlots.contains { isForgettable($0, at: instant, served: false) }
    }

    /// REG-11 over shards: serves what fell due by `instant` in every shard, in time order across
    /// them (a tie between shards in shard order), each shard at its own wake-up's instant, as one
    /// registry serves its keys. `nextWakeUp(s)` is shard `s`'s; `advance(s, at)` serves it at `at`.
    @inlinable package static func serveDue(
        shards count: Int, by instant: RateLimitInstant, nextWakeUp: (Int) -> RateLimitInstant?,
        advance: (Int, RateLimitInstant) -> Void
    ) {
        while true {
            var earliest: (shard: Int, at: RateLimitInstant)?
            for shard in 0..<count {
                guard let wakeUp = nextWakeUp(shard), wakeUp <= instant else { continue }
                if earliest.map({ wakeUp < $0.at }) ?? true { earliest = (shard, wakeUp) }
            }
            guard let (shard, at) = earliest else { return }
            advance(shard, at)
        }
    }
}
