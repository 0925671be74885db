// The wait queue (Spec/WaitQueue.md, clauses WQ-1 ... WQ-10).
//
// A limiter of any strategy with callers waiting for permits, as a pure value: it decides who is
// granted, rejected, timed out or cancelled, and when it must next be woken; the adapters hold it
// under their lock or actor and only execute its answers (resume continuations, call completion
// handlers, arm one timer). Every operation takes the instant it happens at and first serves the
// queue at that instant (WQ-5), so an adapter that is woken late, early or not at all between two
// calls still gets the same decisions the next time it calls.
//
// Implementation. Waiters live in a dictionary by ticket (the truth); each waiting priority has a
// FIFO of tickets and deadlines sit in a min-heap, both cleaned lazily (a cancelled or granted
// ticket is skipped when it reaches the front). Finding the head, cancelling and expiring are
// O(1) amortised or O(log n), so thousands of waiters with random cancellations stay cheap.

/// A limiter with a queue of waiting requests: pure, generic over the strategy (Spec/WaitQueue.md).
public struct WaitQueue<Strategy: RateLimitStrategy>: Sendable {
    /// The strategy and its state.
    @inlinable public var limiter: RateLimiter<Strategy> { storedLimiter }
    /// The latest instant the queue was served at (WQ-7). First, before the limiter's state,
    /// which the same requests write: a shell's lock hands one cache line to the next thread, not
    /// three (Performance.md, "Contention").
    @usableFromInline var servedUpTo: Int64
    @usableFromInline var storedLimiter: RateLimiter<Strategy>
    /// The most permits that may wait at once (WQ-1).
    public let queueLimit: Int64
    /// Permits of the requests now waiting.
    public private(set) var waitingPermits: Int64 = 0

    @usableFromInline struct Waiter: Sendable {
        var permits: Int64
        var priority: RateLimitPriority
        var deadline: Int64?
        /// The instant it is ordered by within its priority: its arrival, or the earlier one of
        /// the request it continues (WQ-3).
        var arrival: Int64
    }

    @usableFromInline var waiters: [WaitTicket: Waiter] = [:]
    /// One line per waiting priority (low, normal, high), in order of arrival (WQ-3), with the
    /// index of its first live entry and the latest (arrival, ticket) enqueued in it.
    private var lines: [[WaitTicket]] = [[], [], []]
    private var lineStarts: [Int] = [0, 0, 0]
    private var lineEnds: [(arrival: Int64, ticket: WaitTicket)?] = [nil, nil, nil]
    private var liveCounts: [Int] = [0, 0, 0]
    @usableFromInline var deadlines = DeadlineHeap<WaitTicket>()
    private var issued: UInt64 = 0

    /// A wait queue for `strategy` created at `now` (WQ-1).
    ///
    /// - Throws: ``RateLimitInputError`` naming `queueLimit` when it is negative.
    public init(_ strategy: Strategy, queueLimit: Int64, at now: RateLimitInstant) throws(RateLimitInputError) {
        try RateLimitInputError.checkNotNegative(queueLimit, "queueLimit")
        self.storedLimiter = RateLimiter(strategy, at: now)
        self.queueLimit = queueLimit
        servedUpTo = now.nanoseconds
    }

    /// A wait queue around an existing limiter at `now` (a registry's key, REG-5), issuing no
    /// tickets itself.
    @usableFromInline
    init(limiter: RateLimiter<Strategy>, queueLimit: Int64, at now: RateLimitInstant) {
        self.storedLimiter = limiter
        self.queueLimit = queueLimit
        servedUpTo = now.nanoseconds
    }

    /// Requests now waiting.
    public var waitingCount: Int { waiters.count }

    /// Whether `ticket` is still waiting.
    public func isWaiting(_ ticket: WaitTicket) -> Bool { waiters[ticket] != nil }

    /// The waiters in the order they will be served (WQ-3), each with the instant it is ordered
    /// by: what the exhaustive checker compares with its model after every step.
    package var serviceOrder: [(ticket: WaitTicket, arrival: Int64)] {
        stride(from: 2, through: 0, by: -1).flatMap { line in
            lines[line][lineStarts[line]...].compactMap { ticket in waiters[ticket].map { (ticket, $0.arrival) } }
        }
    }

    // MARK: Requests

    /// A request that may wait (WQ-4). The effects hold this ticket's outcome when it was decided
    /// at once, and the outcomes of other waiters served at `now`. A request that continues an
    /// earlier one (a retry) names that one's `arrival` and keeps its place: it is ordered among
    /// the waiters of its priority as if it had arrived then (WQ-3).
    public mutating func acquire(
        _ permits: Int64, priority: RateLimitPriority = .normal, deadline: RateLimitInstant? = nil,
        arrival: RateLimitInstant? = nil, at now: RateLimitInstant
    ) -> (ticket: WaitTicket, effects: RateLimitEffects) {
        let ticket = issue()
        return (
            ticket,
            acquire(permits, priority: priority, deadline: deadline, ticket: ticket, arrival: arrival, at: now)
        )
    }

    /// ``acquire(_:priority:deadline:arrival:at:)`` with a ticket issued by the caller (a registry
    /// issues tickets unique across its keys).
    @usableFromInline
    mutating func acquire(
        _ permits: Int64, priority: RateLimitPriority, deadline: RateLimitInstant?, ticket: WaitTicket,
        arrival: RateLimitInstant? = nil, at now: RateLimitInstant
    ) -> RateLimitEffects {
        var completions: [WaitCompletion] = []
        let outcome: WaitOutcome
        if isEmpty {  // nobody to catch up with or to serve: WQ-4 steps 1–4 alone
            servedUpTo = max(servedUpTo, now.nanoseconds)
            outcome = Self.admitNewcomer(permits, priority: priority, waitersAhead: false, to: &storedLimiter, at: now)
        } else {
            completions = catchUp(before: now) + serve(at: now)
            outcome = admitNewcomer(
                permits, priority: priority, arrival: min(arrival?.nanoseconds ?? servedUpTo, servedUpTo),
                ticket: ticket, at: now)
        }
        guard outcome.mayWait else {
            completions.append(WaitCompletion(ticket: ticket, outcome: outcome, at: now))
            return RateLimitEffects(completions: completions + servedAfterNewcomer(outcome, at: now))
        }
        // WQ-4 step 5: wait, unless the deadline has passed or the queue is full.
        if let deadline, deadline <= now {
            completions.append(WaitCompletion(ticket: ticket, outcome: .timedOut, at: now))
        } else if permits > queueLimit - waitingPermits {
            completions.append(WaitCompletion(ticket: ticket, outcome: .rejected(.queueFull), at: now))
        } else {
            // WQ-3: it arrived at the queue's instant, or at the earlier one it names.
            let arrived = min(arrival?.nanoseconds ?? servedUpTo, servedUpTo)
            enqueue(
                ticket, Waiter(permits: permits, priority: priority, deadline: deadline?.nanoseconds, arrival: arrived))
        }
        return RateLimitEffects(completions: completions)
    }

    /// A request that never waits (WQ-4): where it would wait, it is answered with the reason.
    /// Its outcome is returned, not in the effects, which hold the other waiters served at `now`.
    @inlinable
    public mutating func tryAcquire(
        _ permits: Int64, priority: RateLimitPriority = .normal, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects) {
        guard isEmpty else { return tryAcquireServing(permits, priority: priority, at: now) }
        // Nobody to catch up with or to serve: the strategy alone decides, and no array is made.
        // Inlined into the adapters, so it is specialized for the strategy.
        servedUpTo = max(servedUpTo, now.nanoseconds)
        return (
            Self.admitNewcomer(permits, priority: priority, waitersAhead: false, to: &storedLimiter, at: now),
            RateLimitEffects()
        )
    }

    /// ``tryAcquire(_:priority:at:)`` with requests waiting: serves them first.
    @usableFromInline
    mutating func tryAcquireServing(
        _ permits: Int64, priority: RateLimitPriority, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, effects: RateLimitEffects) {
        let completions = catchUp(before: now) + serve(at: now)
        let outcome = admitNewcomer(permits, priority: priority, at: now)
        return (outcome, RateLimitEffects(completions: completions + servedAfterNewcomer(outcome, at: now)))
    }

    /// The outcome ``tryAcquire(_:priority:at:)`` would give at `now`, without taking anything or
    /// changing the queue: whether `permits` are available now and, when the strategy refuses, the
    /// exact wait until they are (WQ-4).
    public func availability(of permits: Int64, priority: RateLimitPriority = .normal, at now: RateLimitInstant)
        -> WaitOutcome
    {
        var copy = self  // the queue's storage is copied only when waiters are served in the copy
        return copy.tryAcquire(permits, priority: priority, at: now).outcome
    }

    /// A newcomer that took permits (overtaking lower priorities, WQ-4) can leave the head never
    /// admissible (a schedule pushed past the end of the timeline): serving again answers it now.
    private mutating func servedAfterNewcomer(_ outcome: WaitOutcome, at now: RateLimitInstant) -> [WaitCompletion] {
        guard case .granted = outcome, !waiters.isEmpty else { return [] }
        return serve(at: now)
    }

    /// WQ-4 steps 1–4 behind the waiters now in the queue that come before a request of
    /// `priority` that arrived at `arrival` with `ticket` (WQ-3); `nil` for one arriving now.
    private mutating func admitNewcomer(
        _ permits: Int64, priority: RateLimitPriority, arrival: Int64? = nil, ticket: WaitTicket? = nil,
        at now: RateLimitInstant
    ) -> WaitOutcome {
        let ahead =
            if let arrival, let ticket { hasWaiters(before: priority, arrival: arrival, ticket: ticket) } else {
                hasWaiters(atLeast: priority)
            }
        return Self.admitNewcomer(permits, priority: priority, waitersAhead: ahead, to: &storedLimiter, at: now)
    }

    /// WQ-4 steps 1–4 for `limiter`: the outcome decided now. A refusal that lets the request wait
    /// (``WaitOutcome/mayWait``) is `limited`, `untilRelease` or `waitersAhead`.
    @inlinable
    static func admitNewcomer(
        _ permits: Int64, priority: RateLimitPriority, waitersAhead: Bool, to limiter: inout RateLimiter<Strategy>,
        at now: RateLimitInstant
    ) -> WaitOutcome {
        if permits < 0 { return .rejected(.invalid(.negativePermits(permits))) }
        if permits > limiter.strategy.maximumPermits { return .rejected(.neverAllowed) }
        if permits == 0 { return .granted(.allowed(remaining: limiter.remaining(at: now))) }
        if priority == .critical {
            let answer = limiter.acquire(permits, at: now)
            return answer.isAdmitted ? .granted(answer) : .bypassed
        }
        if waitersAhead { return .rejected(.waitersAhead) }
        let answer = limiter.acquire(permits, at: now)
        switch answer {  // `WaitOutcome.init(_:)`, written out: the initializer was not inlined here
        case .allowed, .delayed: return .granted(answer)
        case .rejected(let wait): return .rejected(.limited(retryAfterNanoseconds: wait))
        case .rejectedUntilRelease(let shortfall): return .rejected(.untilRelease(shortfall: shortfall))
        case .neverAllowed: return .rejected(.neverAllowed)
        case .invalid(let error): return .rejected(.invalid(error))
        }
    }

    /// Cancels a waiting request (WQ-6); a ticket that already has its outcome is left alone.
    public mutating func cancel(_ ticket: WaitTicket, at now: RateLimitInstant) -> RateLimitEffects {
        var completions = catchUp(before: now)
        if remove(ticket) != nil { completions.append(WaitCompletion(ticket: ticket, outcome: .cancelled, at: now)) }
        return RateLimitEffects(completions: completions + serve(at: now))
    }

    /// Serves the queue up to `now` (WQ-7): what a wake-up does.
    public mutating func advance(to now: RateLimitInstant) -> RateLimitEffects {
        RateLimitEffects(completions: catchUp(before: now) + serve(at: now))
    }

    // MARK: Other events (WQ-8)

    /// Gives back permits (concurrency limiter), then serves the queue.
    public mutating func release(_ permits: Int64, at now: RateLimitInstant) -> (
        result: RateLimitResult, effects: RateLimitEffects
    ) {
        step(.release(permits), at: now)
    }

    /// Resets the strategy's state; waiters stay and are served from the fresh state.
    public mutating func reset(at now: RateLimitInstant) -> (result: RateLimitResult, effects: RateLimitEffects) {
        step(.reset, at: now)
    }

    /// Replaces the configuration; waiters stay and are served under the new one.
    public mutating func reconfigure(_ strategy: Strategy, at now: RateLimitInstant) -> (
        result: RateLimitResult, effects: RateLimitEffects
    ) {
        step(.reconfigure(strategy), at: now)
    }

    /// WQ-8: what was due before `now` first, then the event, then the queue served at `now`.
    private mutating func step(_ event: RateLimitEvent<Strategy>, at now: RateLimitInstant) -> (
        result: RateLimitResult, effects: RateLimitEffects
    ) {
        let completions = catchUp(before: now)
        let result = storedLimiter.step(event, at: now)
        return (result, RateLimitEffects(completions: completions + serve(at: now)))
    }

    /// Shuts the queue down (WQ-9): what was due by `now` is served, then every waiter left is `closed`.
    public mutating func close(at now: RateLimitInstant) -> RateLimitEffects {
        RateLimitEffects(completions: catchUp(before: now) + serve(at: now) + drain(.closed))
    }

    /// Ends every waiter with `outcome`, in ticket order, and empties the queue.
    @usableFromInline
    mutating func drain(_ outcome: WaitOutcome) -> [WaitCompletion] {
        let at = RateLimitInstant(validated: servedUpTo)
        let completions = waiters.keys.sorted().map { WaitCompletion(ticket: $0, outcome: outcome, at: at) }
        waiters.removeAll()
        lines = [[], [], []]
        lineStarts = [0, 0, 0]
        liveCounts = [0, 0, 0]
        deadlines = DeadlineHeap<WaitTicket>()
        waitingPermits = 0
        return completions
    }

    /// Applies `change` to the limiter (a registry's key event or throttle, REG-4), then serves the
    /// queue at `now` (not at all when `now` is `nil`).
    @usableFromInline
    mutating func updateLimiter(at now: RateLimitInstant?, _ change: (inout RateLimiter<Strategy>) -> Void)
        -> [WaitCompletion]
    {
        guard let now else {
            change(&storedLimiter)
            return []
        }
        let completions = catchUp(before: now)
        change(&storedLimiter)
        return completions + serve(at: now)
    }

    // MARK: Wake-up (WQ-7)

    /// The earliest instant at which serving could change something, or `nil` when nobody waits
    /// or only a release can help.
    @inlinable
    public func nextWakeUp(at now: RateLimitInstant) -> RateLimitInstant? {
        isEmpty ? nil : nextWakeUpServing(at: now)
    }

    /// ``nextWakeUp(at:)`` with requests waiting.
    @usableFromInline
    func nextWakeUpServing(at now: RateLimitInstant) -> RateLimitInstant? {
        var earliest = deadlines.first.map { RateLimitInstant(validated: $0.deadline) }
        if let head = peekHead(), let waiter = waiters[head] {
            switch storedLimiter.strategy.step(storedLimiter.state, .acquire(waiter.permits), at: now).result {
            case .rejected(let wait):
                let admission = RateLimitInstant(validated: now.nanoseconds + wait)  // ≤ Int64.max by CORE-7
                earliest = earliest.map { min($0, admission) } ?? admission
            case .allowed, .delayed, .neverAllowed, .invalid:
                earliest = now  // serving now changes something
            case .rejectedUntilRelease:
                break
            }
        }
        return earliest
    }

    // MARK: Serving (WQ-5)

    /// WQ-7: serves every wake-up due after the last instant served and before `now`, each at its
    /// own instant, as a timer firing on time would have. So an adapter woken late, or not at all
    /// before its next call, gets the same decisions, only later.
    private mutating func catchUp(before now: RateLimitInstant) -> [WaitCompletion] {
        var completions: [WaitCompletion] = []
        while servedUpTo < now.nanoseconds, let wake = nextWakeUp(at: RateLimitInstant(validated: servedUpTo)),
            wake.nanoseconds < now.nanoseconds
        {
            let before = (servedUpTo, waiters.count, deadlines.count)
            completions += serve(at: RateLimitInstant(validated: max(wake.nanoseconds, servedUpTo)))
            // nothing moved: serving at `now` will do
            if (servedUpTo, waiters.count, deadlines.count) == before { break }
        }
        return completions
    }

    private mutating func serve(at now: RateLimitInstant) -> [WaitCompletion] {
        servedUpTo = max(servedUpTo, now.nanoseconds)
        var completions = expire(through: now.nanoseconds, inclusive: false)  // 1. deadlines before now
        while true {
            serving: while let ticket = head(), let waiter = waiters[ticket] {  // 2. heads the strategy admits
                let answer = storedLimiter.acquire(waiter.permits, at: now)
                let outcome: WaitOutcome
                switch answer {
                case .allowed, .delayed: outcome = .granted(answer)
                case .neverAllowed: outcome = .rejected(.neverAllowed)
                case .invalid(let error): outcome = .rejected(.invalid(error))
                case .rejected, .rejectedUntilRelease: break serving
                }
                _ = remove(ticket)
                completions.append(WaitCompletion(ticket: ticket, outcome: outcome, at: now))
            }
            // 3. deadlines at now; a head that timed out may uncover one admissible at now.
            let expired = expire(through: now.nanoseconds, inclusive: true)
            completions += expired
            if expired.isEmpty { return completions }
        }
    }

    /// Times out every waiter whose deadline is before `instant` (or at it, when `inclusive`).
    private mutating func expire(through instant: Int64, inclusive: Bool) -> [WaitCompletion] {
        var completions: [WaitCompletion] = []
        while let first = deadlines.first, first.deadline < instant || (inclusive && first.deadline == instant) {
            deadlines.removeFirst()
            if remove(first.payload) != nil {
                completions.append(
                    WaitCompletion(ticket: first.payload, outcome: .timedOut, at: RateLimitInstant(validated: instant)))
            }
        }
        return completions
    }

    // MARK: Bookkeeping

    private mutating func issue() -> WaitTicket {
        issued += 1
        return WaitTicket(rawValue: issued)
    }

    private mutating func enqueue(_ ticket: WaitTicket, _ waiter: Waiter) {
        waiters[ticket] = waiter
        waitingPermits += waiter.permits
        let line = waiter.priority.rawValue
        if let end = lineEnds[line], (waiter.arrival, ticket) < end {
            // WQ-3: a request keeping an earlier arrival goes before the live waiters that arrived
            // after it (dead entries, skipped later, may stay on either side).
            var index = lines[line].count
            while index > lineStarts[line] {
                let other = lines[line][index - 1]
                if let earlier = waiters[other], (earlier.arrival, other) < (waiter.arrival, ticket) { break }
                index -= 1
            }
            lines[line].insert(ticket, at: index)
        } else {
            lines[line].append(ticket)  // a newcomer arrives after every waiter
            lineEnds[line] = (waiter.arrival, ticket)
        }
        liveCounts[line] += 1
        if let deadline = waiter.deadline { deadlines.insert(deadline: deadline, ticket) }
    }

    /// Removes a waiting ticket (its FIFO entry is skipped later). The deadline heap's first entry
    /// is kept live, so that `nextWakeUp` never names the deadline of a ticket already gone (WQ-7).
    private mutating func remove(_ ticket: WaitTicket) -> Waiter? {
        guard let waiter = waiters.removeValue(forKey: ticket) else { return nil }
        waitingPermits -= waiter.permits
        liveCounts[waiter.priority.rawValue] -= 1
        if waiters.isEmpty {
            deadlines = DeadlineHeap<WaitTicket>()
        } else {
            while let first = deadlines.first, waiters[first.payload] == nil { deadlines.removeFirst() }
        }
        return waiter
    }

    /// No waiter and no deadline: serving would change nothing but `servedUpTo`.
    @inlinable
    package var isEmpty: Bool { waiters.isEmpty && deadlines.isEmpty }

    private func hasWaiters(atLeast priority: RateLimitPriority) -> Bool {
        (priority.rawValue..<3).contains { liveCounts[$0] > 0 }
    }

    /// Whether a waiter comes before a request of `priority` that arrived at `arrival` with
    /// `ticket` (WQ-3): one of a higher priority, or of the same priority that arrived before it.
    private func hasWaiters(before priority: RateLimitPriority, arrival: Int64, ticket: WaitTicket) -> Bool {
        let line = Int(priority.rawValue)
        guard line < 3 else { return false }  // critical requests never wait (WQ-4)
        if ((line + 1)..<3).contains(where: { liveCounts[$0] > 0 }) { return true }
        guard liveCounts[line] > 0 else { return false }
        // The first live entry of a line arrived first.
        for other in lines[line][lineStarts[line]...] {
            if let earlier = waiters[other] { return (earlier.arrival, other) < (arrival, ticket) }
        }
        return false
    }

    /// The first waiter of the highest priority that has one (WQ-3), skipping removed tickets.
    private mutating func head() -> WaitTicket? {
        for priority in stride(from: 2, through: 0, by: -1) {
            while lineStarts[priority] < lines[priority].count, waiters[lines[priority][lineStarts[priority]]] == nil {
                lineStarts[priority] += 1
            }
            // Drop the dead prefix once it dominates, so memory follows the live waiters.
            if lineStarts[priority] == lines[priority].count {
                lines[priority].removeAll(keepingCapacity: true)
                lineStarts[priority] = 0
            } else if lineStarts[priority] > 64, lineStarts[priority] * 2 > lines[priority].count {
                lines[priority].removeFirst(lineStarts[priority])
                lineStarts[priority] = 0
            }
            if liveCounts[priority] > 0 { return lines[priority][lineStarts[priority]] }
        }
        return nil
    }

    /// The head without cleaning up (for the non-mutating wake-up computation).
    private func peekHead() -> WaitTicket? {
        for priority in stride(from: 2, through: 0, by: -1) where liveCounts[priority] > 0 {
            for ticket in lines[priority][lineStarts[priority]...] where waiters[ticket] != nil { return ticket }
        }
        return nil
    }
}

extension WaitQueue {
    /// The queue limit an adapter has when none is given: 1,000 permits, so that `acquire` waits
    /// as Go's `Wait` and Guava's `acquire` do, and a caller that outruns the limit for good is
    /// refused (`queueFull`) instead of holding memory without bound. At most 1,000 waiters: at
    /// the bound about 110 KB in the pure queue and 375 KB in the Dispatch adapter with its
    /// callbacks (`make bench`, "memory"), beside what the waiting callers hold.
    public static var defaultQueueLimit: Int64 { 1_000 }
}
