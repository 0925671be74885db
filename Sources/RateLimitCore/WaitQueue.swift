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

/// How urgent a request is. Higher priorities are served first; `critical` never waits (WQ-4).
public enum RateLimitPriority: Int, Comparable, CaseIterable, Hashable, Sendable {
    case low, normal, high, critical

    public static func < (lhs: RateLimitPriority, rhs: RateLimitPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The identity of one request in a wait queue.
public struct WaitTicket: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    @usableFromInline init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: WaitTicket, rhs: WaitTicket) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// Why a request was refused without being served (WQ-2, WQ-4).
public enum WaitRejection: Hashable, Sendable {
    /// The permits already waiting plus this request's exceed the queue limit.
    case queueFull
    /// No instant on the timeline admits it (CORE-7).
    case neverAllowed
    /// Malformed (CORE-9, CORE-11). Boxed, as ``RateLimitResult/invalid(_:)`` is: it keeps
    /// outcomes small enough to travel in registers.
    indirect case invalid(RateLimitInputError)
    /// `tryAcquire` only: the strategy refused; its answer carries the exact retry-after or shortfall.
    case limited(RateLimitResult)
    /// `tryAcquire` only: waiters of the same or a higher priority are ahead.
    case waitersAhead
    /// Registry only: no rule matches the key and there is no default rule (REG-2).
    case unknownKey
    /// Registry only: the key is new, the registry holds its maximum of keys and none is idle (REG-8).
    case tooManyKeys
}

/// The one outcome of a request (WQ-2).
public enum WaitOutcome: Hashable, Sendable {
    /// Permits taken: the strategy's `allowed` or `delayed` (proceed after its wait).
    case granted(RateLimitResult)
    /// A critical request the strategy refused, let through without taking permits.
    case bypassed
    /// Refused without being served.
    case rejected(WaitRejection)
    /// Its deadline passed while it waited; nothing was taken.
    case timedOut
    /// Cancelled while it waited; nothing was taken.
    case cancelled
    /// The limiter was shut down while it waited.
    case closed
}

/// A ticket's outcome, for the adapter to deliver, and the instant it was decided at (a
/// scheduled start counts its wait from there, WQ-12).
public struct WaitCompletion: Hashable, Sendable {
    public let ticket: WaitTicket
    public let outcome: WaitOutcome
    public let at: RateLimitInstant

    public init(ticket: WaitTicket, outcome: WaitOutcome, at: RateLimitInstant) {
        self.ticket = ticket
        self.outcome = outcome
        self.at = at
    }
}

/// A limiter with a queue of waiting requests: pure, generic over the strategy (Spec/WaitQueue.md).
public struct WaitQueue<Strategy: RateLimitStrategy>: Sendable {
    /// The strategy and its state.
    @inlinable public var limiter: RateLimiter<Strategy> { storedLimiter }
    @usableFromInline var storedLimiter: RateLimiter<Strategy>
    /// The most permits that may wait at once (WQ-1).
    public let queueLimit: Int64
    /// Permits of the requests now waiting.
    public private(set) var waitingPermits: Int64 = 0

    @usableFromInline struct Waiter: Sendable {
        var permits: Int64
        var priority: RateLimitPriority
        var deadline: Int64?
    }

    @usableFromInline var waiters: [WaitTicket: Waiter] = [:]
    /// One FIFO per waiting priority (low, normal, high), with the index of its first live entry.
    private var lines: [[WaitTicket]] = [[], [], []]
    private var lineStarts: [Int] = [0, 0, 0]
    private var liveCounts: [Int] = [0, 0, 0]
    @usableFromInline var deadlines = DeadlineHeap<WaitTicket>()
    private var issued: UInt64 = 0
    /// The latest instant the queue was served at (WQ-7).
    @usableFromInline var servedUpTo: Int64

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

    // MARK: Requests

    /// A request that may wait (WQ-4). The returned completions hold this ticket's outcome when it
    /// was decided at once, and the outcomes of other waiters served at `now`.
    public mutating func acquire(
        _ permits: Int64, priority: RateLimitPriority = .normal, deadline: RateLimitInstant? = nil, at now: RateLimitInstant
    ) -> (ticket: WaitTicket, completions: [WaitCompletion]) {
        let ticket = issue()
        return (ticket, acquire(permits, priority: priority, deadline: deadline, ticket: ticket, at: now))
    }

    /// ``acquire(_:priority:deadline:at:)`` with a ticket issued by the caller (a registry issues
    /// tickets unique across its keys).
    @usableFromInline
    mutating func acquire(
        _ permits: Int64, priority: RateLimitPriority, deadline: RateLimitInstant?, ticket: WaitTicket, at now: RateLimitInstant
    ) -> [WaitCompletion] {
        if isEmpty {  // the fast path of an admission with nobody waiting (WQ-4 steps 1–4)
            servedUpTo = max(servedUpTo, now.nanoseconds)
            if let outcome = admitNewcomer(permits, priority: priority, at: now) { return [WaitCompletion(ticket: ticket, outcome: outcome, at: now)] }
        }
        var completions = catchUp(before: now) + serve(at: now)
        if let outcome = admitNewcomer(permits, priority: priority, at: now) {
            completions.append(WaitCompletion(ticket: ticket, outcome: outcome, at: now))
            return completions + servedAfterNewcomer(outcome, at: now)
        }
        // WQ-4 step 5: wait, unless the deadline has passed or the queue is full.
        if let deadline, deadline <= now {
            completions.append(WaitCompletion(ticket: ticket, outcome: .timedOut, at: now))
        } else if permits > queueLimit - waitingPermits {
            completions.append(WaitCompletion(ticket: ticket, outcome: .rejected(.queueFull), at: now))
        } else {
            enqueue(ticket, Waiter(permits: permits, priority: priority, deadline: deadline?.nanoseconds))
        }
        return completions
    }

    /// A request that never waits (WQ-4): where it would wait, it is answered with the reason.
    @inlinable
    public mutating func tryAcquire(
        _ permits: Int64, priority: RateLimitPriority = .normal, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, completions: [WaitCompletion]) {
        guard let outcome = tryAcquireIfNobodyWaits(permits, priority: priority, at: now) else {
            return tryAcquireServing(permits, priority: priority, at: now)
        }
        return (outcome, [])
    }

    /// ``tryAcquire(_:priority:at:)`` when nobody waits (``isEmpty``), so that nothing is served
    /// and no completion made: its outcome, or `nil` (nothing done) when requests are waiting.
    /// The adapters' common path, which makes no array.
    @inlinable
    public mutating func tryAcquireIfNobodyWaits(
        _ permits: Int64, priority: RateLimitPriority = .normal, at now: RateLimitInstant
    ) -> WaitOutcome? {
        // Nobody to catch up with or to serve: the strategy alone decides. Inlined into the
        // adapter, so it is specialized for the strategy (the benchmark's lock adapter).
        guard isEmpty else { return nil }
        servedUpTo = max(servedUpTo, now.nanoseconds)
        if let outcome = Self.admitNewcomer(permits, priority: priority, waitersAhead: false, to: &storedLimiter, at: now) {
            return outcome
        }
        return .rejected(.limited(storedLimiter.strategy.step(storedLimiter.state, .acquire(permits), at: now).result))
    }

    /// ``tryAcquire(_:priority:at:)`` with requests waiting: serves them first.
    @usableFromInline
    mutating func tryAcquireServing(
        _ permits: Int64, priority: RateLimitPriority, at now: RateLimitInstant
    ) -> (outcome: WaitOutcome, completions: [WaitCompletion]) {
        let completions = catchUp(before: now) + serve(at: now)
        if let outcome = admitNewcomer(permits, priority: priority, at: now) {
            return (outcome, completions + servedAfterNewcomer(outcome, at: now))
        }
        if hasWaiters(atLeast: priority) { return (.rejected(.waitersAhead), completions) }
        return (.rejected(.limited(storedLimiter.strategy.step(storedLimiter.state, .acquire(permits), at: now).result)), completions)
    }

    /// A newcomer that took permits (overtaking lower priorities, WQ-4) can leave the head never
    /// admissible (a schedule pushed past the end of the timeline): serving again answers it now.
    private mutating func servedAfterNewcomer(_ outcome: WaitOutcome, at now: RateLimitInstant) -> [WaitCompletion] {
        guard case .granted = outcome, !waiters.isEmpty else { return [] }
        return serve(at: now)
    }

    /// WQ-4 steps 1–4: the outcome decided at once, or `nil` when the request must wait.
    private mutating func admitNewcomer(_ permits: Int64, priority: RateLimitPriority, at now: RateLimitInstant) -> WaitOutcome? {
        Self.admitNewcomer(permits, priority: priority, waitersAhead: hasWaiters(atLeast: priority), to: &storedLimiter, at: now)
    }

    /// WQ-4 steps 1–4 for `limiter`: the outcome decided at once, or `nil` when the request must
    /// wait (behind `waitersAhead`, or refused by the strategy).
    @inlinable
    static func admitNewcomer(
        _ permits: Int64, priority: RateLimitPriority, waitersAhead: Bool, to limiter: inout RateLimiter<Strategy>, at now: RateLimitInstant
    ) -> WaitOutcome? {
        if permits < 0 { return .rejected(.invalid(.negativePermits(permits))) }
        if permits > limiter.strategy.maximumPermits { return .rejected(.neverAllowed) }
        if permits == 0 { return .granted(.allowed(remaining: limiter.remaining(at: now))) }
        if priority == .critical {
            let answer = limiter.acquire(permits, at: now)
            return answer.isAdmitted ? .granted(answer) : .bypassed
        }
        if waitersAhead { return nil }
        let answer = limiter.acquire(permits, at: now)
        switch answer {
        case .allowed, .delayed: return .granted(answer)
        case .neverAllowed: return .rejected(.neverAllowed)
        case .invalid(let error): return .rejected(.invalid(error))
        case .rejected, .rejectedUntilRelease: return nil
        }
    }

    /// Cancels a waiting request (WQ-6); a ticket that already has its outcome is left alone.
    public mutating func cancel(_ ticket: WaitTicket, at now: RateLimitInstant) -> [WaitCompletion] {
        var completions = catchUp(before: now)
        guard remove(ticket) != nil else { return completions + serve(at: now) }
        completions.append(WaitCompletion(ticket: ticket, outcome: .cancelled, at: now))
        return completions + serve(at: now)
    }

    /// Serves the queue up to `now` (WQ-7): what a wake-up does.
    public mutating func advance(to now: RateLimitInstant) -> [WaitCompletion] {
        catchUp(before: now) + serve(at: now)
    }

    // MARK: Other events (WQ-8)

    /// Gives back permits (concurrency limiter), then serves the queue.
    public mutating func release(_ permits: Int64, at now: RateLimitInstant) -> (result: RateLimitResult, completions: [WaitCompletion]) {
        let completions = catchUp(before: now)
        let result = storedLimiter.step(.release(permits), at: now)
        return (result, completions + serve(at: now))
    }

    /// Resets the strategy's state; waiters stay and are served from the fresh state.
    public mutating func reset(at now: RateLimitInstant) -> (result: RateLimitResult, completions: [WaitCompletion]) {
        let completions = catchUp(before: now)
        let result = storedLimiter.step(.reset, at: now)
        return (result, completions + serve(at: now))
    }

    /// Replaces the configuration; waiters stay and are served under the new one.
    public mutating func reconfigure(_ strategy: Strategy, at now: RateLimitInstant) -> (result: RateLimitResult, completions: [WaitCompletion]) {
        let completions = catchUp(before: now)
        let result = storedLimiter.step(.reconfigure(strategy), at: now)
        return (result, completions + serve(at: now))
    }

    /// Shuts the queue down (WQ-9): every waiter is `closed`.
    public mutating func close() -> [WaitCompletion] {
        drain(.closed)
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
    mutating func updateLimiter(at now: RateLimitInstant?, _ change: (inout RateLimiter<Strategy>) -> Void) -> [WaitCompletion] {
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
              wake.nanoseconds < now.nanoseconds {
            let before = (servedUpTo, waiters.count, deadlines.count)
            completions += serve(at: RateLimitInstant(validated: max(wake.nanoseconds, servedUpTo)))
            if (servedUpTo, waiters.count, deadlines.count) == before { break }  // nothing moved: serving at `now` will do
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
                completions.append(WaitCompletion(ticket: first.payload, outcome: .timedOut, at: RateLimitInstant(validated: instant)))
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
        lines[waiter.priority.rawValue].append(ticket)
        liveCounts[waiter.priority.rawValue] += 1
        if let deadline = waiter.deadline { deadlines.insert(deadline: deadline, ticket) }
    }

    /// Removes a waiting ticket (its FIFO and heap entries are skipped later).
    private mutating func remove(_ ticket: WaitTicket) -> Waiter? {
        guard let waiter = waiters.removeValue(forKey: ticket) else { return nil }
        waitingPermits -= waiter.permits
        liveCounts[waiter.priority.rawValue] -= 1
        if waiters.isEmpty { deadlines = DeadlineHeap<WaitTicket>() }
        return waiter
    }

    /// No waiter and no deadline: serving would change nothing but `servedUpTo`.
    @inlinable
    var isEmpty: Bool { waiters.isEmpty && deadlines.isEmpty }

    private func hasWaiters(atLeast priority: RateLimitPriority) -> Bool {
        (priority.rawValue..<3).contains { liveCounts[$0] > 0 }
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

/// A binary min-heap of (deadline, payload), ordered by deadline then payload.
@usableFromInline
struct DeadlineHeap<Payload: Comparable & Sendable>: Sendable {
    @usableFromInline var items: [(deadline: Int64, payload: Payload)] = []

    @inlinable var isEmpty: Bool { items.isEmpty }

    @inlinable var first: (deadline: Int64, payload: Payload)? { items.first }

    var count: Int { items.count }

    private static func before(_ a: (deadline: Int64, payload: Payload), _ b: (deadline: Int64, payload: Payload)) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.payload < b.payload
    }

    @usableFromInline
    mutating func insert(deadline: Int64, _ payload: Payload) {
        items.append((deadline, payload))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.before(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    @usableFromInline
    mutating func removeFirst() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, Self.before(items[left], items[smallest]) { smallest = left }
            if right < items.count, Self.before(items[right], items[smallest]) { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
