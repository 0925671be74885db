// The steps every registry operation shares (Spec/Registry.md, REG-3, REG-5, REG-10): begin at
// the registry's instant, decide in the key's limiter or queue, apply the change, report it.

extension RateLimitRegistry {
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
            guard table.isHeld(slot) else { continue }  // forgotten
            let due = RateLimitInstant(validated: first.deadline)
            inQueue(slot, at: due, &effects) { $0.advance(to: due).completions }
        }
        dropStaleWakeUps()
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
    /// Returns its outcome when decided now. A request that may wait also gets it as a completion
    /// in `effects`, where adapters look for every outcome; one that cannot wait does not, so the
    /// common answer builds no array.
    @inlinable @discardableResult mutating func request(
        _ key: String, ticket: WaitTicket, permits: Int64, priority: RateLimitPriority, timeout: Duration?,
        arrival: RateLimitInstant? = nil, mayWait: Bool, knownAbsent: Bool = false, at instant: RateLimitInstant,
        _ effects: inout RateLimitEffects
    ) -> WaitOutcome? {
        guard let slot = slot(for: key, at: instant, &effects, knownAbsent: knownAbsent) else {
            let reason: WaitRejection = ruleIndex(for: key) == nil ? .unknownKey : .tooManyKeys
            let outcome = WaitOutcome.rejected(reason)
            finish(
                ticket, key: key, slot: nil, permits: permits, outcome: outcome, deliver: mayWait, at: instant, &effects
            )
            return outcome
        }
        if table[slot].disabled {
            let outcome: WaitOutcome = permits < 0 ? .rejected(.invalid(.negativePermits(permits))) : .bypassed
            finish(
                ticket, key: key, slot: slot, permits: permits, outcome: outcome, deliver: mayWait, at: instant,
                &effects)
            settle(slot, [], at: instant, &effects)
            return outcome
        }
        guard queues.contains(slot), var queue = queues.removeValue(forKey: slot) else {
            // Nobody waits: WQ-4 on the stored state, without building a queue.
            var limiter = limiter(slot)
            let outcome = WaitQueue.admitNewcomer(
                permits, priority: priority, waitersAhead: false, to: &limiter, at: instant)
            store(limiter, in: slot)
            // The common answer: admitted with quota above the warning threshold on a key reported
            // `ok`, with no throttle and no recovery pending. Settling it would change nothing:
            // its status stays `ok` (REG-6) and it needs no wake-up (REG-11).
            if case .granted(.allowed(let remaining)) = outcome, table[slot].reported == .ok,
                !table[slot].throttleReported, remaining > warningThreshold(slot), !recoveries.contains(slot)
            {
                finish(
                    ticket, key: key, slot: slot, permits: permits, outcome: outcome, deliver: mayWait, at: instant,
                    &effects)
                return outcome
            }
            // The rule is read only for a refusal that may wait: the common answer copies nothing more.
            guard outcome.mayWait, mayWait, case .queue = rules[Int(table[slot].rule)].overflow else {
                finish(
                    ticket, key: key, slot: slot, permits: permits, outcome: outcome, deliver: mayWait, at: instant,
                    &effects)
                settle(slot, [], at: instant, &effects)
                return outcome
            }
            let rule = rules[Int(table[slot].rule)]
            queues[slot] = WaitQueue(limiter: limiter, queueLimit: rule.queueLimit, at: instant)
            return request(
                key, ticket: ticket, permits: permits, priority: priority, timeout: timeout, arrival: arrival,
                mayWait: true, at: instant, &effects)
        }
        var completions: [WaitCompletion]
        var decided: WaitOutcome?
        if mayWait {
            let timeout = timeout.map(Self.nanoseconds) ?? rules[Int(table[slot].rule)].timeoutNanoseconds
            let deadline = timeout.map { instant.advanced(byNanoseconds: $0) ?? .end }
            var served = queue.acquire(
                permits, priority: priority, deadline: deadline, ticket: ticket, arrival: arrival, at: instant)
            decided = served.removeCompletion(of: ticket)?.outcome
            completions = served.completions
        } else {
            let (outcome, served) = queue.tryAcquire(permits, priority: priority, at: instant)
            (decided, completions) = (outcome, served.completions)
        }
        queues[slot] = queue
        if let decided {
            finish(
                ticket, key: key, slot: slot, permits: permits, outcome: decided, deliver: mayWait, at: instant,
                &effects)
        } else {
            waiting[ticket] = (slot, permits)
            countQueued(slot)
            counted.countQueued()
        }
        settle(slot, completions, at: instant, &effects)
        return decided
    }

    /// The common request decided in place, or `nil` (having changed nothing) for every other:
    /// nothing due (REG-11), a held key accepting and reported `ok` with nothing on the side (no
    /// queue, throttle, configuration of its own or recovery), and its rule's strategy admitting
    /// at once with quota left above the warning threshold. That is what ``request(_:ticket:permits:priority:timeout:mayWait:at:_:)``
    /// answers then, without settling: the status stays `ok` (REG-6) and nothing needs a wake-up.
    /// Steps the entry's state where it lies, without building a limiter (Performance.md,
    /// "Registry fast path").
    @inlinable mutating func admitInPlace(
        _ key: String, hash: UInt64, permits: Int64, at now: RateLimitInstant, absent: inout Bool
    ) -> WaitOutcome? {
        var present = false
        return admitInPlace(key, hash: hash, permits: permits, at: now, absent: &absent, present: &present)
    }

    /// ``admitInPlace(_:hash:permits:at:absent:)`` that also says whether it found the key held.
    @inlinable mutating func admitInPlace(
        _ key: String, hash: UInt64, permits: Int64, at now: RateLimitInstant, absent: inout Bool, present: inout Bool
    ) -> WaitOutcome? {
        let instant = RateLimitInstant(validated: max(now.nanoseconds, latest))
        guard permits > 0, wakeUps.first.map({ $0.deadline > instant.nanoseconds }) ?? true else { return nil }
        guard let row = table.rowToChange(of: key, hash: hash, touching: &touched) else {
            absent = true  // and stays so until the request creates it: serving what is due creates no key
            return nil
        }
        present = true
        // The key's slot is read only when a side table holds anything.
        if !(queues.isEmpty && throttles.isEmpty && overrides.isEmpty && recoveries.isEmpty) {
            let slot = table.rows.base[row].slot
            guard !queues.contains(slot), !throttles.contains(slot), !overrides.contains(slot),
                !recoveries.contains(slot)
            else { return nil }
        }
        guard let answer = Self.admit(permits, at: instant, in: &table.uniqueRows()[row], rules) else { return nil }
        latest = instant.nanoseconds
        issued += 1
        counted.countAdmitted()
        return .granted(answer)
    }

    /// ``admitInPlace(_:hash:permits:at:absent:)``'s decision on one entry, stepped where it lies: the answer
    /// when it is the common one, and then the entry records it; `nil`, changing nothing,
    /// otherwise. Static, taking the entry and the rules apart, so that no closure captures the
    /// registry (Swift then copied all of it).
    @inlinable static func admit(
        _ permits: Int64, at instant: RateLimitInstant, in entry: inout Entry,
        _ rules: borrowing [RateLimitRule<Strategy>]
    ) -> RateLimitResult? {
        rules.withUnsafeBufferPointer { admit(permits, at: instant, in: &entry, rules: $0.baseAddress!) }
    }

    /// ``admit(_:at:in:_:)`` with the rules at `rules`: for a caller that reads the registry
    /// through a pointer, which passes the rules' address, not the array (REG-13 item 5).
    @inlinable @inline(__always) static func admit(
        _ permits: Int64, at instant: RateLimitInstant, in entry: inout Entry,
        rules: UnsafePointer<RateLimitRule<Strategy>>
    ) -> RateLimitResult? {
        // A counter about to carry takes the common path, which carries it.
        guard entry.flags.isEmpty, entry.reported == .ok, entry.admitted < .max else { return nil }
        let rule = rules + Int(entry.rule)
        var state = entry.state
        let answer = rule.pointee.strategy.step(&state, .acquire(permits), at: instant)
        // Granted with quota above the threshold (`.allowed`: CORE-9's `remaining`).
        guard case .allowed(let remaining) = answer, remaining > rule.pointee.warningThreshold else { return nil }
        entry.state = state
        entry.admitted += 1
        return answer
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

    // MARK: Applying changes

    /// Applies `body` to the key's limiter (in its queue when it has one, which is then served at
    /// `instant`) and settles the key.
    @inlinable mutating func change(
        _ slot: UInt32, at instant: RateLimitInstant, _ effects: inout RateLimitEffects,
        _ body: (inout RateLimiter<Limit>) -> RateLimitResult
    ) -> RateLimitResult {
        var result = RateLimitResult.allowed(remaining: 0)
        if queues.contains(slot) {
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
        guard queues.contains(slot), var queue = queues.removeValue(forKey: slot) else {
            return settle(slot, [], at: instant, &effects)
        }
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
        if queues.contains(slot), let queue = queues[slot], queue.waitingCount == 0 {
            queues[slot] = nil
            store(queue.limiter, in: slot)
        }
        let status = status(slot, at: instant)
        let reported = table[slot].reported
        if status != reported {
            effects.append(
                .statusChanged(
                    key: key, from: reported, to: status, remaining: remaining(slot, at: instant), at: instant))
            table[slot].reported = status
        }
        recoveries[slot] = nextRecovery(slot, from: instant)
        schedule(slot, at: instant)
    }

    /// Records an outcome in the statistics and the events (REG-9, REG-10), and hands it to the
    /// adapter as a completion when `deliver`.
    @inlinable mutating func finish(
        _ ticket: WaitTicket, key: String, slot: UInt32?, permits: Int64, outcome: WaitOutcome, deliver: Bool = true,
        at instant: RateLimitInstant,
        _ effects: inout RateLimitEffects
    ) {
        if deliver { effects.append(WaitCompletion(ticket: ticket, outcome: outcome, at: instant)) }
        switch outcome {
        case .granted, .bypassed:
            counted.countAdmitted()
            if let slot { countAdmitted(slot) }
        case .rejected, .timedOut:
            counted.countRejected()
            if let slot { countRejected(slot) }
            effects.append(.rejected(key: key, permits: permits, outcome: outcome, at: instant))
        case .cancelled, .closed:
            break
        }
    }
}
