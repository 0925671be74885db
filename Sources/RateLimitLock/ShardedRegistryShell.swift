// The lock registry's shell (Spec/Registry.md REG-13): the keys split by hash among shards, each
// a registry of its own under a lock of its own (a `LockShell`), so that threads requesting keys
// of different shards do not wait for each other. What a registry does across keys is done across
// shards, under every shard's lock taken in index order: the room for a new key (REG-8, counted
// in one atomic), time events served in time order (REG-11, via the `WakeUpBoard`), and the
// operations on every key. The common request on a held key takes no lock at all: it is admitted
// in parallel (REG-13 item 5, ReaderSlots.swift). The decisions are the shards'
// (RateLimitRegistry, RegistryShards.swift).

import CPrefetch
import CReaderSlots
import RateLimitCore
import RateLimitShell
import Synchronization

/// A registry of limiters by key whose keys are split among `LockShell`s (REG-13).
@usableFromInline
package final class ShardedRegistryShell<Strategy: RateLimitStrategy, C: Clock>: ShardServer
where C.Duration == Duration {
    @usableFromInline typealias Registry = RateLimitRegistry<Strategy>
    @usableFromInline typealias Shard = LockShell<Registry, C>

    @usableFromInline let shards: [Shard]
    /// `shards`, for the common request to borrow one without retaining it.
    @usableFromInline let unmanagedShards: [Unmanaged<Shard>]
    /// The key hash's seed, every shard's table's too.
    @usableFromInline let seed: UInt64
    @usableFromInline let board: WakeUpBoard
    /// The adapter's clock, as every shard's timeline.
    @usableFromInline package let timeline: ClockTimeline<C>
    private let outlet = EventOutlet()
    private let maximumKeys: Int
    /// Keys held by every shard together (REG-8).
    private let keyCount = Atomic<Int>(0)
    /// Where threads admitting in parallel say so (REG-13 item 5), and its address.
    private let readers: ReaderSlots
    // nonisolated(unsafe): `readers.base`, which `readers` keeps allocated as long as `self`;
    // every access to what it points at is atomic (ReaderSlots).
    @usableFromInline nonisolated(unsafe) let readerSlots: UnsafeMutableRawPointer

    /// A registry of `rules` holding at most `maximumKeys` keys among `shards` shards (a power of
    /// two from 1 to 1,024), on `clock`.
    package init(rules: [RateLimitRule<Strategy>], maximumKeys: Int, shards count: Int, clock: C)
        throws(RateLimitRegistryError)
    {
        guard count >= 1, count <= 1_024, count & (count - 1) == 0 else { throw .invalidShardCount(count) }
        let seed = UInt64.random(in: .min ... .max)
        let timeline = ClockTimeline(clock: clock)
        let board = WakeUpBoard(shards: count)
        let readers = ReaderSlots()
        var shards: [Shard] = []
        for index in 0..<count {
            var registry = try Registry(rules: rules, maximumKeys: maximumKeys, at: .origin, seed: seed)
            registry.keyAllowance = 0  // each new key's room is granted by `gate`
            shards.append(
                Shard(
                    machine: registry, timeline: timeline, outlet: outlet, shard: count > 1 ? (board, index) : nil,
                    readers: readers))
        }
        self.shards = shards
        unmanagedShards = shards.map { Unmanaged.passUnretained($0) }
        self.seed = seed
        self.board = board
        self.timeline = timeline
        self.readers = readers
        readerSlots = readers.base
        self.maximumKeys = min(maximumKeys, 1 << 30)  // what one table holds (REG-8's note)
        board.setServer(self)
    }

    deinit { outlet.finishAll() }

    // MARK: Requests on one key

    /// A request that never waits (REG-5): admitted in parallel when it can be (REG-13 item 5);
    /// otherwise the key's shard, unless another shard has something due (REG-11) or the key is
    /// new (REG-8), takes the common path of the one-lock shell.
    @inlinable @inline(__always)
    package func tryAcquire(_ key: String, permits: Int64, priority: RateLimitPriority) -> WaitOutcome {
        let hash = Registry.shardHash(key, seed: seed)
        let index = Registry.shard(of: hash, count: shards.count)
        let slot = Int(ratelimit_reader_slot())
        if slot >= 0, let granted = admitInParallel(key, hash: hash, shard: index, slot: slot, permits: permits) {
            return granted
        }
        // The shard borrowed, not retained and released: `shards` holds it as long as `self`.
        let decided: WaitOutcome? = unmanagedShards[index]._withUnsafeGuaranteedRef { shard in
            shard.mutex.lock()
            if shard.isClosed {
                shard.mutex.unlock()
                return .closed
            }
            shard.machine.prefetch(key, hash: hash)
            let now = timeline.now()
            if board.pendingCount == 0 || !board.scan(otherThan: index, by: max(now, shard.machine.latestInstant)),
                let (outcome, effects) = shard.machine.tryAcquireHeld(
                    key, hash: hash, permits: permits, priority: priority, at: now)
            {
                return shard.unlock(outcome: outcome, after: effects, at: now)
            }
            shard.mutex.unlock()
            return nil
        }
        if let decided { return decided }
        return keyed(key, creates: true, ifOpen: .closed) { registry, now in
            registry.tryAcquire(key, permits: permits, priority: priority, at: now)
        }
    }

    /// REG-13 item 5: the common admission (a held key, nothing due in any shard, the limit admitting at once
    /// with quota above the warning threshold), decided without the shard's lock, so that threads
    /// on different keys write no line in common; `nil` when it is not that, or when the shard's
    /// lock is held (the request then takes it). The shard's `G` is read, not raised.
    @inlinable @inline(__always)
    func admitInParallel(_ key: String, hash: UInt64, shard index: Int, slot: Int, permits: Int64) -> WaitOutcome? {
        ReaderSlots.enter(readerSlots, slot)
        defer { ReaderSlots.leave(readerSlots, slot) }
        return unmanagedShards[index]._withUnsafeGuaranteedRef { shard -> WaitOutcome? in
            // No thread changes the shard from here to `leave`: one that takes its lock waits.
            // The registry read through a pointer, in read accesses only: other threads make the
            // same reads at once (a modifying access, even one that writes nothing, is a race).
            guard shard.mutex.isFree, !shard.isClosed,
                let registry = UnsafePointer(shard.guarded).pointer(to: \.machine)
            else { return nil }
            let (address, control) = Registry.homeAddresses(in: registry, hash: hash)
            ratelimit_prefetch(UnsafeRawPointer(bitPattern: address))
            ratelimit_prefetch(UnsafeRawPointer(bitPattern: control))
            let now = timeline.now()
            guard
                let (row, lock, instant) = Registry.parallelRow(
                    in: registry, key, hash: hash, permits: permits, at: now)
            else { return nil }
            // What another shard has due by then is served first (REG-13 item 3), under the locks.
            if board.pendingCount != 0, board.scan(otherThan: index, by: instant) { return nil }
            ratelimit_byte_lock(lock)
            let answer = Registry.admitInParallel(in: registry, row, permits: permits, at: instant)
            ratelimit_byte_unlock(lock)
            guard let answer else { return nil }
            ReaderSlots.countAdmission(readerSlots, slot)
            return .granted(answer)
        }
    }

    /// Issues a request on `key` with `operation` and parks the calling thread until its outcome.
    package func blockingOutcome(
        _ key: String, permits: Int64,
        _ operation: (inout RateLimitRegistry<Strategy>, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) throws(RateLimitAcquireError) -> RateLimitGrant {
        let (hash, index) = locate(key)
        var pass = Pass()
        defer { giveBack(pass) }
        func issue(_ registry: inout Registry, _ now: RateLimitInstant) -> (WaitTicket, RateLimitEffects) {
            issueOnShard((key, hash, nil), index: index, &pass, &registry, now, operation)
        }
        return try shards[index].blockingOutcome(permits: permits, prepare: { prepare(&pass) }, issue)
    }

    /// Issues a request on `key` with `operation` and suspends until its outcome.
    package func asyncOutcome(
        _ key: String, permits: Int64,
        _ operation: (inout RateLimitRegistry<Strategy>, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) async throws(RateLimitAcquireError) -> RateLimitGrant {
        let (hash, index) = locate(key)
        var pass = Pass()
        defer { giveBack(pass) }
        func issue(_ registry: inout Registry, _ now: RateLimitInstant) -> (WaitTicket, RateLimitEffects) {
            issueOnShard((key, hash, nil), index: index, &pass, &registry, now, operation)
        }
        return try await shards[index].asyncOutcome(permits: permits, prepare: { prepare(&pass) }, issue)
    }

    /// A request that may wait, issued on its shard once ``gate`` lets it: ``WaitTicket/unissued``
    /// until then, which the shard answers by calling ``prepare(_:)`` and issuing it again.
    private func issueOnShard(
        _ key: (String, UInt64, Strategy?), index: Int, _ pass: inout Pass, _ registry: inout Registry,
        _ now: RateLimitInstant,
        _ operation: (inout Registry, RateLimitInstant) -> (WaitTicket, RateLimitEffects)
    ) -> (WaitTicket, RateLimitEffects) {
        guard let reserved = gate(key, index: index, &registry, now, &pass) else {
            return (.unissued, RateLimitEffects())
        }
        return counting(reserved, &registry) { operation(&$0, now) }
    }

    package func availability(_ key: String, permits: Int64, priority: RateLimitPriority) -> WaitOutcome {
        let (hash, index) = locate(key)
        let shard = shards[index]
        var full = false
        let outcome = shard.runIfOpen(otherwise: .closed) { registry, now -> (WaitOutcome, RateLimitEffects) in
            // A new key in a full registry: whether any key of any shard would be forgotten.
            if registry.createsKey(key, hash: hash), keyCount.load(ordering: .relaxed) >= maximumKeys {
                full = true
                return (.closed, RateLimitEffects())
            }
            return (registry.availability(key, permits: permits, priority: priority, at: now), RateLimitEffects())
        }
        guard full else { return outcome }
        let now = timeline.now()
        let room = everyShard { shards in
            let latest = shards.reduce(now) { max($0, $1.machine.latestInstant) }
            return keyCount.load(ordering: .relaxed) < maximumKeys
                || shards.contains { $0.machine.hasForgettableKey(at: latest) }
        }
        guard room else { return .rejected(.tooManyKeys) }
        return shard.runIfOpen(otherwise: .closed) { registry, now in
            (registry.availability(key, permits: permits, priority: priority, at: now), RateLimitEffects())
        }
    }

    package func release(_ key: String, permits: Int64) -> RateLimitResult {
        keyed(key, creates: true) { registry, now in registry.release(key, permits: permits, at: now) }
    }

    package func reset(_ key: String) -> RateLimitResult {
        keyed(key, creates: true) { registry, now in registry.reset(key, at: now) }
    }

    package func reconfigure(_ key: String, to strategy: Strategy) -> RateLimitResult {
        keyed(key, creates: true, reconfiguring: strategy) { registry, now in
            registry.reconfigure(key, to: strategy, at: now)
        }
    }

    package func restoreRule(_ key: String) -> RateLimitResult? {
        keyed(key, creates: false) { registry, now in registry.restoreRule(key, at: now) }
    }

    package func throttle(_ key: String, for duration: Duration) {
        let timeline = timeline
        keyed(key, creates: true) { registry, now in
            ((), registry.throttle(key, until: timeline.deadline(after: duration, from: now), at: now))
        }
    }

    package func disable(_ key: String) {
        keyed(key, creates: true) { registry, now in ((), registry.disable(key, at: now)) }
    }

    package func resume(_ key: String) {
        keyed(key, creates: true) { registry, now in ((), registry.resume(key, at: now)) }
    }

    package func remove(_ key: String) -> Bool {
        keyed(key, creates: false) { registry, now in registry.remove(key, at: now) }
    }

    package func rule(for key: String) -> RateLimitRule<Strategy>? {
        shards[locate(key).index].run { registry, _ in (registry.rule(for: key), RateLimitEffects()) }
    }

    /// After serving what is due (REG-6, REG-9).
    package func quota(of key: String) -> KeyQuota? {
        keyed(key, creates: false) { registry, now in
            let served = registry.advance(to: now)
            return (registry.quota(of: key, at: now), served)
        }
    }

    // MARK: Every key

    package func resetAll() { changeEveryShard { shard, instant in ((), shard.machine.resetAll(at: instant)) } }

    package func reconfigure(rule pattern: KeyPattern, to strategy: Strategy) throws(RateLimitRegistryError) {
        // Every shard holds the same rules at the same instant: each refuses as the first does.
        let refusals: [RateLimitRegistryError?] = changeEveryShard { shard, instant in
            do throws(RateLimitRegistryError) {
                return (nil, try shard.machine.reconfigure(rule: pattern, to: strategy, at: instant))
            } catch {
                return (error, RateLimitEffects())
            }
        }
        if let refusal = refusals.first, let refusal { throw refusal }
    }

    /// Gives every waiter `closed` and refuses later requests with `closed` (WQ-9).
    package func close() {
        changeEveryShard { shard, instant in
            shard.isClosed = true
            return ((), shard.machine.close(at: instant))
        }
        outlet.finishAll()
    }

    package func keys() -> [String] { everyShard { shards in shards.flatMap { $0.machine.keys }.sorted() } }

    package func totals() -> KeyStatistics {
        everyShard { shards in shards.reduce(KeyStatistics(admitted: readers.admitted)) { $0 + $1.machine.totals } }
    }

    package var waitingCount: Int { everyShard { shards in shards.reduce(0) { $0 + $1.machine.waitingCount } } }

    package func events() -> AsyncStream<RegistryEvent> { outlet.subscribe() }

    package func setEventHandler(_ handler: (@Sendable (RegistryEvent) -> Void)?) { outlet.setHandler(handler) }

    // MARK: Across shards

    /// What a keyed operation needs done on every shard before it can run, and what was done.
    @usableFromInline struct Pass {
        @usableFromInline enum Need {
            /// Serve what fell due by then in every shard (REG-11).
            case serveDue(RateLimitInstant)
            /// Serve, then make room for a new key: forget idle keys in every shard (REG-8).
            case makeRoom(RateLimitInstant)
        }

        @usableFromInline var need: Need?
        /// The latest instant every shard has been served by for this operation, and how often:
        /// after two rounds the operation goes ahead, so that a stream of wake-ups other threads
        /// keep arming cannot hold it (what is left is served by the next operation or timer).
        @usableFromInline var servedBy: RateLimitInstant?
        @usableFromInline var rounds = 0
        /// The room made for its key, taken under every shard's lock: 1, or 0 when no key was
        /// idle (the key is then refused); `counting` gives an unused one back.
        @usableFromInline var room: Int?
        @usableFromInline init() {}
    }

    @usableFromInline func locate(_ key: String) -> (hash: UInt64, index: Int) {
        let hash = Registry.shardHash(key, seed: seed)
        return (hash, Registry.shard(of: hash, count: shards.count))
    }

    /// Runs `operation` on `key`'s shard, after what it needs of every shard (``gate``); `creates`
    /// says whether it creates a key that is not held (``RateLimitRegistry/createsKey(_:hash:reconfiguring:)``).
    @usableFromInline @discardableResult
    func keyed<T>(
        _ key: String, creates: Bool, reconfiguring strategy: Strategy? = nil, ifOpen closed: T? = nil,
        _ operation: (inout Registry, RateLimitInstant) -> (T, RateLimitEffects)
    ) -> T {
        let (hash, index) = locate(key)
        return onShard(
            index, key: creates ? (key, hash, strategy) : nil, ifOpen: closed, operation)
    }

    /// Runs `operation` on shard `index` after what it needs of every shard (``gate``); `key`
    /// names the key it would create, if any.
    @usableFromInline
    func onShard<T>(
        _ index: Int, key: (String, UInt64, Strategy?)?, ifOpen closed: T? = nil,
        _ operation: (inout Registry, RateLimitInstant) -> (T, RateLimitEffects)
    ) -> T {
        let shard = shards[index]
        var pass = Pass()
        defer { giveBack(pass) }
        while true {
            let body = { (registry: inout Registry, now: RateLimitInstant) -> (T?, RateLimitEffects) in
                guard let reserved = self.gate(key, index: index, &registry, now, &pass) else {
                    return (nil, RateLimitEffects())
                }
                let (value, effects) = self.counting(reserved, &registry) { operation(&$0, now) }
                return (value, effects)
            }
            let value = if let closed { shard.runIfOpen(otherwise: closed, body) } else { shard.run(body) }
            if let value { return value }
            prepare(&pass)
        }
    }

    /// Under shard `index`'s lock: the room granted for a new key (0 or 1), or `nil` when the
    /// operation must first wait for work on every shard, which `pass` then names: what another
    /// shard had due by the operation's instant (REG-11), or room in a full registry (REG-8).
    @usableFromInline func gate(
        _ key: (String, UInt64, Strategy?)?, index: Int, _ registry: inout Registry, _ now: RateLimitInstant,
        _ pass: inout Pass
    ) -> Int? {
        let instant = max(now, registry.latestInstant)
        if pass.rounds < 2, pass.servedBy.map({ $0 < instant }) ?? true, board.hasDue(otherThan: index, by: instant) {
            pass.need = .serveDue(instant)
            return nil
        }
        if let room = pass.room {
            pass.room = nil
            return room
        }
        guard let (key, hash, strategy) = key, registry.createsKey(key, hash: hash, reconfiguring: strategy) else {
            return 0
        }
        var count = keyCount.load(ordering: .relaxed)
        while count < maximumKeys {
            let (exchanged, original) = keyCount.compareExchange(
                expected: count, desired: count + 1, ordering: .relaxed)
            if exchanged { return 1 }
            count = original
        }
        pass.need = .makeRoom(instant)
        return nil
    }

    /// Runs `operation` with `reserved` room for a new key, and counts the keys it created or removed.
    @usableFromInline func counting<T>(_ reserved: Int, _ registry: inout Registry, _ operation: (inout Registry) -> T)
        -> T
    {
        registry.keyAllowance = reserved
        let before = registry.keyCount
        let value = operation(&registry)
        registry.keyAllowance = 0
        let change = registry.keyCount - before - reserved
        if change != 0 { keyCount.add(change, ordering: .relaxed) }
        return value
    }

    /// Room made for an operation that never ran (the registry closed meanwhile) goes back.
    @usableFromInline func giveBack(_ pass: Pass) {
        if let room = pass.room, room > 0 { keyCount.subtract(room, ordering: .relaxed) }
    }

    /// Does what `pass` names on every shard.
    @usableFromInline func prepare(_ pass: inout Pass) {
        pass.rounds += 1
        switch pass.need {
        case .serveDue(let instant):
            everyShard(serving: instant) { _ in [] }
            pass.servedBy = instant
        case .makeRoom(let instant):
            (pass.room, pass.servedBy) = makeRoom(at: instant)
        case nil:
            break
        }
        pass.need = nil
    }

    /// REG-8 across shards: with every shard locked, serves what fell due by the latest instant any
    /// shard has seen and, if the registry is still full, forgets every idle key of every shard
    /// then; takes room for one key if there is some. Answers the room (0 or 1) and that instant.
    private func makeRoom(at instant: RateLimitInstant) -> (room: Int, servedBy: RateLimitInstant) {
        lockEveryShard()
        let latest = shards.reduce(instant) { max($0, $1.machine.latestInstant) }
        var resumptions = serveDue(by: latest)
        if keyCount.load(ordering: .relaxed) >= maximumKeys {
            for shard in shards {
                let before = shard.machine.keyCount
                let effects = shard.machine.forgettingIdleKeys(at: latest)
                keyCount.add(shard.machine.keyCount - before, ordering: .relaxed)
                resumptions.append(shard.execute(effects, at: latest))
            }
        }
        // Every shard is locked: no reservation can come between the reading and the taking.
        let room = keyCount.load(ordering: .relaxed) < maximumKeys ? 1 : 0
        keyCount.add(room, ordering: .relaxed)
        unlockEveryShard(resuming: resumptions)
        return (room, latest)
    }

    /// A waiter's task was cancelled (WQ-6): on its shard, after what another shard had due.
    package func cancel(_ ticket: WaitTicket, onShard index: Int) {
        onShard(index, key: nil) { registry, now in ((), registry.cancel(ticket, at: now)) }
    }

    /// A shard's timer fired at `target`: every shard serves what fell due by then, in time order.
    package func serve(_ index: Int, firedAt target: RateLimitInstant) {
        everyShard(serving: target) { shards in
            shards[index].timerTarget = nil
            return [shards[index].execute(RateLimitEffects(), at: target)]
        }
    }

    /// Runs `operation` on every shard at one instant, the latest any shard has seen (REG-3),
    /// after serving what fell due by then (REG-11); answers each shard's value, in shard order.
    @discardableResult
    func changeEveryShard<T>(
        at instant: RateLimitInstant? = nil, _ operation: (Shard, RateLimitInstant) -> (T, RateLimitEffects)
    ) -> [T] {
        let now = instant ?? timeline.now()
        var values: [T] = []
        lockEveryShard()
        let latest = shards.reduce(now) { max($0, $1.machine.latestInstant) }
        var resumptions = serveDue(by: latest)
        for shard in shards {
            let (value, effects) = operation(shard, latest)
            values.append(value)
            resumptions.append(shard.execute(effects, at: latest))
        }
        unlockEveryShard(resuming: resumptions)
        return values
    }

    /// Runs `body` with every shard locked, after serving what fell due by `instant`; resumes what
    /// `body` returns once unlocked.
    private func everyShard(serving instant: RateLimitInstant, _ body: ([Shard]) -> [[Shard.Resumption]]) {
        lockEveryShard()
        var resumptions = serveDue(by: instant)
        resumptions += body(shards)
        unlockEveryShard(resuming: resumptions)
    }

    /// `body`'s value read with every shard locked.
    private func everyShard<T>(_ body: ([Shard]) -> T) -> T {
        lockEveryShard()
        let value = body(shards)
        unlockEveryShard(resuming: [])
        return value
    }

    /// With every shard locked: serves what fell due by `instant` in every shard, in time order.
    private func serveDue(by instant: RateLimitInstant) -> [[Shard.Resumption]] {
        var resumptions: [[Shard.Resumption]] = []
        Registry.serveDue(
            shards: shards.count, by: instant, nextWakeUp: { shards[$0].machine.nextWakeUp },
            advance: { index, at in
                let shard = shards[index]
                resumptions.append(shard.execute(shard.machine.advance(to: at), at: at))
            })
        return resumptions
    }

    /// In index order, so that two threads taking every lock never wait for each other in a cycle.
    private func lockEveryShard() { for shard in shards { shard.mutex.lock() } }

    private func unlockEveryShard(resuming resumptions: [[Shard.Resumption]]) {
        for shard in shards { shard.mutex.unlock() }
        for batch in resumptions { shards[0].resume(batch) }
    }
}
