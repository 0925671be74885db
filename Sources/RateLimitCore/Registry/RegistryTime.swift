// What time does to a key (Spec/Registry.md, REG-3, REG-4, REG-6, REG-11): throttles that end,
// quota that recovers, wake-ups, and answers seen from a later instant.

extension RateLimitRegistry {
    // MARK: Time (REG-4, REG-6, REG-11)

    /// Reports what time did to a key since its last change, each transition at the instant it
    /// happened and in time order: a throttle that ended, then quota that recovered.
    @inlinable mutating func catchUp(_ slot: UInt32, to instant: RateLimitInstant, _ effects: inout RateLimitEffects) {
        // The common key has nothing to report: no throttle reported, no recovery pending.
        guard table.isHeld(slot), table[slot].throttleReported || recoveries.contains(slot), let key = key(of: slot)
        else { return }
        while true {
            // The limit itself ignores a throttle once its instant passes (KeyLimit); only the report is due.
            let until = throttledUntil(slot)
            let throttleEnd = table[slot].throttleReported && until <= instant.nanoseconds ? until : nil
            // A key with waiters is served at `instant` next: its status there is settled after
            // serving (a waiter may take the quota that just came back), so only earlier recoveries.
            let served = queues.contains(slot)
            let recovery = recoveries[slot].flatMap {
                $0 < instant.nanoseconds || (!served && $0 == instant.nanoseconds) ? $0 : nil
            }
            if let throttleEnd, recovery.map({ throttleEnd <= $0 }) ?? true {
                let at = RateLimitInstant(validated: throttleEnd)
                effects.append(.stateChanged(key: key, from: .throttled(until: at), to: .accepting, at: at))
                table[slot].throttleReported = false
                recoveries[slot] = nextRecovery(slot, from: at)
                continue
            }
            guard let recovery else { return }
            let at = RateLimitInstant(validated: recovery)
            let status = status(slot, at: at)
            let reported = table[slot].reported
            guard status < reported else {
                recoveries[slot] = nil  // an exact recovery instant always improves the status
                return
            }
            effects.append(
                .statusChanged(key: key, from: reported, to: status, remaining: limiter(slot).remaining(at: at), at: at)
            )
            table[slot].reported = status
            recoveries[slot] = nextRecovery(slot, from: at)
        }
    }

    /// REG-6: when the key's status next improves with no event, seen from `instant`: the instant
    /// an acquire of one permit more than its level allows would be admitted.
    @inlinable func nextRecovery(_ slot: UInt32, from instant: RateLimitInstant) -> Int64? {
        let reported = table[slot].reported
        guard !table[slot].disabled, reported != .ok else { return nil }
        let limiter = limiter(slot)
        let needed = reported == .limited ? 1 : warningThreshold(slot) + 1
        switch limiter.strategy.step(limiter.state, .acquire(needed), at: instant).result {
        case .rejected(let wait): return instant.nanoseconds + wait  // on the timeline (CORE-5)
        case .allowed, .delayed: return instant.nanoseconds
        case .rejectedUntilRelease, .neverAllowed, .invalid: return nil
        }
    }

    /// Schedules the key's next wake-up: its queue's, its throttle's end, or its quota's recovery.
    @inlinable mutating func schedule(_ slot: UInt32, at instant: RateLimitInstant) {
        var next = queues.contains(slot) ? queues[slot]?.nextWakeUp(at: instant)?.nanoseconds : nil
        let until = throttledUntil(slot)
        if table[slot].throttleReported { next = min(next ?? until, until) }
        if let recovery = recoveries[slot] { next = min(next ?? recovery, recovery) }
        // Never before `instant`: everything due by then was served (a queue's cancelled deadlines linger).
        let wake = next.map { max($0, instant.nanoseconds) }
        guard wake != scheduled[slot] else { return }
        scheduled[slot] = wake
        if let wake { wakeUps.insert(deadline: wake, slot) }
        dropStaleWakeUps()
    }

    /// REG-11: keeps the heap's top a live wake-up, so that `nextWakeUp` is exact (a wake-up that
    /// would change nothing is never named). An entry a reschedule superseded, or whose key was
    /// forgotten, stays in the heap until it reaches the top.
    @inlinable mutating func dropStaleWakeUps() {
        while let first = wakeUps.first, scheduled[first.payload] != first.deadline { wakeUps.removeFirst() }
    }
}

extension RateLimitEffects {
    /// The effects as seen from `shift` nanoseconds earlier (REG-3): waits and retry-afters grow.
    /// A completion's instant moves back by as much as its wait grows (down to the origin), so that
    /// a scheduled start, its instant plus its wait (WQ-12), stays where the registry put it: the
    /// caller's own completion then counts from its `now`, like every wait in the effects.
    @inlinable
    func shifted(by shift: Int64) -> RateLimitEffects {
        guard shift > 0, !isEmpty else { return self }
        return mapped(
            completion: {
                let moved = min(shift, $0.at.nanoseconds)
                return WaitCompletion(
                    ticket: $0.ticket, outcome: $0.outcome.shifted(by: moved),
                    at: RateLimitInstant(validated: $0.at.nanoseconds - moved))
            },
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
