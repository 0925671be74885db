import RateLimitCore

// Every reachable state of a small wait queue (Spec/WaitQueue.md), breadth first: every
// interleaving of acquires (permits, priorities, deadlines, and retries naming an earlier
// arrival), tryAcquires, cancellations, releases, resets and clock moves, on a queue of two or
// three waiters. Each transition is
// checked against a naive model written from WQ-4 ... WQ-9 alone (a list in service order, served
// at every nanosecond rather than at computed wake-ups), and against the invariants:
// - WQ-2, WQ-10: every ticket gets exactly one outcome; closing gives each waiter left `closed`;
// - WQ-3: a waiter is granted only as the head: none ahead of it (by priority, then arrival,
//   the one a retry names included) is still waiting;
// - WQ-4: a critical request never waits; `availability` answers what `tryAcquire` would and
//   changes nothing;
// - WQ-5, WQ-7: no waiter is stuck while the permits it could take are free: the next wake-up
//   is no later than the head's admission instant or the earliest deadline (the latest instant
//   itself when the head is admissible there), and no deadline before the latest instant is
//   still waiting;
// - WQ-10: waiting permits never exceed the queue limit; every grant took exactly its permits
//   from the strategy at the instant of the grant, and nothing else was taken (a shadow limiter
//   replaying the grants and events ends in the queue's own state).

/// One operation on a wait queue, at the instant of its step.
package enum WaitOperation: Hashable, Sendable, CustomStringConvertible {
    /// A request that may wait; its deadline is `now + timeout` when it has one. A retry names
    /// the arrival `now − arrivalBefore` (WQ-3; a negative `arrivalBefore` names one after its own).
    case acquire(permits: Int64, priority: RateLimitPriority, timeout: Int64?, arrivalBefore: Int64? = nil)
    /// A request that never waits.
    case tryAcquire(permits: Int64, priority: RateLimitPriority)
    /// Cancels the waiter at this position in service order (the head is 0).
    case cancel(position: Int)
    case release(Int64)
    case reset
    /// The clock moves to `now`: what a timer firing does.
    case advance

    /// The arrival a retry names, as nanoseconds before its step's instant; `nil` for the rest.
    package var arrivalBefore: Int64? {
        if case .acquire(_, _, _, let before) = self { before } else { nil }
    }

    package var description: String {
        switch self {
        case .acquire(let permits, let priority, let timeout, let before):
            "acquire(\(permits), \(priority)\(timeout.map { ", timeout \($0)" } ?? "")\(before.map { ", arrival now − \($0)" } ?? ""))"
        case .tryAcquire(let permits, let priority): "tryAcquire(\(permits), \(priority))"
        case .cancel(let position): "cancel(waiter \(position))"
        case .release(let permits): "release(\(permits))"
        case .reset: "reset"
        case .advance: "advance"
        }
    }
}

/// The space a wait-queue walk explores.
package struct WaitQueueSpace<S: RateLimitStrategy>: Sendable {
    package var strategy: S
    package var queueLimit: Int64
    /// Instants stay within `0 ... horizon`.
    package var horizon: Int64
    package var offsets: [Int64]
    package var operations: [WaitOperation]

    package init(strategy: S, queueLimit: Int64, horizon: Int64, offsets: [Int64], operations: [WaitOperation]) {
        self.strategy = strategy
        self.queueLimit = queueLimit
        self.horizon = horizon
        self.offsets = offsets
        self.operations = operations
    }

    /// The operations the walks use: acquires of 1 and 2 permits at low, high and critical
    /// priority, with no deadline, one 2 ns away, or one already due; retries naming an arrival
    /// 1 or 2 ns before their own, or 1 ns after it (WQ-3); a tryAcquire; a cancellation of each
    /// waiter; a reset (and, for a concurrency limit, a release); clock moves.
    package static func operations(releases: Bool, waiters: Int, retries: Bool = true) -> [WaitOperation] {
        var operations: [WaitOperation] = [
            .acquire(permits: 1, priority: .low, timeout: nil), .acquire(permits: 1, priority: .low, timeout: 2),
            .acquire(permits: 1, priority: .high, timeout: nil), .acquire(permits: 1, priority: .high, timeout: 2),
            .acquire(permits: 1, priority: .normal, timeout: 0), .acquire(permits: 2, priority: .low, timeout: nil),
            .acquire(permits: 2, priority: .high, timeout: 2), .acquire(permits: 1, priority: .critical, timeout: nil),
            .tryAcquire(permits: 1, priority: .normal), .reset, .advance,
        ]
        if retries {
            operations += [
                .acquire(permits: 1, priority: .low, timeout: nil, arrivalBefore: 2),
                .acquire(permits: 1, priority: .high, timeout: 2, arrivalBefore: 1),
                .acquire(permits: 2, priority: .low, timeout: nil, arrivalBefore: 1),
                .acquire(permits: 1, priority: .low, timeout: nil, arrivalBefore: -1),
            ]
        }
        operations += (0..<waiters).map { .cancel(position: $0) }
        if releases { operations.append(.release(1)) }
        return operations
    }
}

/// A path of a wait-queue walk: the operations from creation, each at its instant.
package struct WaitQueuePath: Hashable, Sendable {
    package var steps: [Step]

    package struct Step: Hashable, Sendable {
        package var now: Int64
        package var operation: WaitOperation

        package init(now: Int64, operation: WaitOperation) {
            self.now = now
            self.operation = operation
        }
    }

    package init(steps: [Step]) { self.steps = steps }
}

package enum WaitQueueChecker {
    /// One request, as the walk knows it: its ticket (none for a tryAcquire), the number the
    /// outcomes are compared by, what it asked for, and the instant it is ordered by (WQ-3).
    struct Waiter: Hashable, Sendable {
        var ticket: WaitTicket?
        var permits: Int64
        var priority: RateLimitPriority
        var deadline: Int64?
        var arrival: Int64
        var id: UInt64 { ticket?.rawValue ?? .max }

        /// Whether this waiter comes before a request made after it, of `priority`, ordered by
        /// `arrival` (WQ-3): a higher priority, or the same one and an arrival no later.
        func isAhead(of priority: RateLimitPriority, arrival: Int64) -> Bool {
            self.priority > priority || (self.priority == priority && self.arrival <= arrival)
        }

        /// Where a waiter made after every one in `waiters` joins them (in service order).
        static func position(of waiter: Waiter, in waiters: [Waiter]) -> Int {
            waiters.lastIndex { $0.isAhead(of: waiter.priority, arrival: waiter.arrival) }.map { $0 + 1 } ?? 0
        }
    }

    /// An outcome as compared: the request's number, the outcome, the instant.
    struct Outcome: Hashable, CustomStringConvertible {
        var id: UInt64
        var outcome: WaitOutcome
        var at: Int64

        init(_ completion: WaitCompletion) {
            (id, outcome, at) = (completion.ticket.rawValue, completion.outcome, completion.at.nanoseconds)
        }
        init(id: UInt64, outcome: WaitOutcome, at: Int64) { (self.id, self.outcome, self.at) = (id, outcome, at) }

        var description: String { "#\(id == .max ? "try" : "\(id)") \(outcome) at \(at)" }
    }

    /// Walks `space` breadth first to `depthLimit` operations (or to the fixpoint), each
    /// canonical state once; `paths` receives the path to each state found, in order.
    package static func walk<S: RateLimitStrategy>(
        _ space: WaitQueueSpace<S>, name: String, depthLimit: Int, stateLimit: Int = 1_000_000,
        violationLimit: Int = 20, recordPaths: Bool = false
    ) throws(RateLimitInputError) -> (report: ExhaustiveChecker.Report, paths: [WaitQueuePath]) {
        var report = ExhaustiveChecker.Report(name: name)
        let queue = try WaitQueue(space.strategy, queueLimit: space.queueLimit, at: .origin)
        let start = QueueNode(queue: queue, waiters: [], latest: 0)
        var seen: Set<QueueKey<S>> = []
        var nodes = [start]
        var parents: [(source: Int, step: WaitQueuePath.Step)?] = [nil]
        func path(to state: Int) -> WaitQueuePath {
            var steps: [WaitQueuePath.Step] = []
            var current = state
            while let (source, step) = parents[current] {
                steps.append(step)
                current = source
            }
            return WaitQueuePath(steps: steps.reversed())
        }
        // Instants a retry can name lie at most this far before the latest one: waiters that
        // arrived earlier are all before every one a retry can name, whatever their instants.
        let reach = (space.operations.compactMap(\.arrivalBefore).max() ?? 0) - min(0, space.offsets.min() ?? 0)
        var frontier = 0..<1
        seen.insert(start.key(reach: reach))
        func violation(_ text: String, from source: Int, _ step: WaitQueuePath.Step?) {
            guard report.violations.count < violationLimit else { return }
            let steps = (path(to: source).steps + (step.map { [$0] } ?? [])).map { "\($0.operation) at \($0.now)" }
            report.violations.append("\(name): \(text), after \(steps.joined(separator: ", "))")
        }
        while !frontier.isEmpty, report.depth < depthLimit, nodes.count < stateLimit {
            report.depth += 1
            for source in frontier {
                let node = nodes[source]
                for problem in node.stateChecks(queueLimit: space.queueLimit) { violation(problem, from: source, nil) }
                for offset in space.offsets {
                    let now = node.latest + offset
                    guard now >= 0, now <= space.horizon else { continue }
                    for operation in space.operations {
                        if case .cancel(let position) = operation, position >= node.waiters.count { continue }
                        if let before = operation.arrivalBefore, now - before < 0 { continue }
                        let step = WaitQueuePath.Step(now: now, operation: operation)
                        var next = node
                        let problems = next.apply(operation, at: now, queueLimit: space.queueLimit)
                        report.transitions += 1
                        for problem in problems { violation(problem, from: source, step) }
                        if seen.insert(next.key(reach: reach)).inserted {
                            nodes.append(next)
                            parents.append((source, step))
                        }
                    }
                }
            }
            frontier = frontier.upperBound..<nodes.count
        }
        report.states = nodes.count
        report.complete = frontier.isEmpty
        return (report, recordPaths ? nodes.indices.map(path(to:)) : [])
    }
}

/// The canonical form of a wait-queue state: the limiter, the latest instant, and the waiters in
/// service order without their tickets (two states that differ only in ticket numbers have the
/// same future), each arrival no earlier than the earliest a retry can still name, less one (the
/// arrivals before it compare alike with every one a retry can name from then on).
struct QueueKey<S: RateLimitStrategy>: Hashable {
    var limiter: RateLimiter<S>
    var latest: Int64
    var waiters: [Shape]

    struct Shape: Hashable {
        var permits: Int64
        var priority: RateLimitPriority
        var deadline: Int64?
        var arrival: Int64
    }
}

/// A state of a wait-queue walk: the queue, its waiters in service order, the latest instant.
struct QueueNode<S: RateLimitStrategy> {
    var queue: WaitQueue<S>
    var waiters: [WaitQueueChecker.Waiter]
    var latest: Int64

    /// The state's canonical form, for retries naming arrivals at most `reach` before the latest instant.
    func key(reach: Int64) -> QueueKey<S> {
        let longAgo = latest - reach - 1
        return QueueKey(
            limiter: queue.limiter, latest: latest,
            waiters: waiters.map {
                .init(
                    permits: $0.permits, priority: $0.priority, deadline: $0.deadline, arrival: max($0.arrival, longAgo)
                )
            })
    }

    /// The checks of a state itself (WQ-4 availability, WQ-5, WQ-7, WQ-9, WQ-10).
    func stateChecks(queueLimit: Int64) -> [String] {
        var problems: [String] = []
        let now = RateLimitInstant.generated(latest)
        let waiting = waiters.reduce(Int64(0)) { $0 + $1.permits }
        if waiting > queueLimit { problems.append("WQ-10 \(waiting) permits wait, more than the limit \(queueLimit)") }
        if queue.waitingCount != waiters.count {
            problems.append("WQ-2 the queue holds \(queue.waitingCount) waiters, the walk counts \(waiters.count)")
        }
        if let deadline = waiters.compactMap(\.deadline).min(), deadline < latest {
            problems.append("WQ-5 a waiter whose deadline \(deadline) passed is still waiting at \(latest)")
        }
        let wake = queue.nextWakeUp(at: now)
        if let head = waiters.first {
            // The head may be admissible at the latest instant only when the last request came
            // at an earlier one; the queue then asks to be served at once (WQ-7).
            var due = waiters.compactMap(\.deadline).min()
            switch queue.limiter.availability(of: head.permits, at: now) {
            case .rejected(let wait): due = min(due ?? .max, latest + wait)
            case .allowed, .delayed, .neverAllowed, .invalid: due = latest
            case .rejectedUntilRelease: break
            }
            if let due, (wake?.nanoseconds ?? .max) > due {
                problems.append("WQ-7 next wake-up \(wake.map { "\($0.nanoseconds)" } ?? "none"), after \(due)")
            }
        } else if wake != nil {
            problems.append("WQ-7 a wake-up at \(wake!.nanoseconds) with nobody waiting")
        }
        // WQ-4: availability is tryAcquire without its effects.
        for (permits, priority) in [(Int64(1), RateLimitPriority.normal), (2, .high), (1, .critical)] {
            var copy = queue
            let tried = copy.tryAcquire(permits, priority: priority, at: now).outcome
            let available = queue.availability(of: permits, priority: priority, at: now)
            if tried != available {
                problems.append("WQ-4 availability(\(permits), \(priority)) is \(available), tryAcquire \(tried)")
            }
        }
        // WQ-9: closing serves what is due, then closes every waiter left, once each.
        var closing = queue
        let closed = closing.close(at: now).completions.map(WaitQueueChecker.Outcome.init)
        var naive = NaiveWaitQueue(limiter: queue.limiter, waiters: waiters, servedUpTo: latest, queueLimit: queueLimit)
        naive.close(at: latest)
        if closed != naive.outcomes || closing.waitingCount != 0 {
            problems.append("WQ-9 closing at \(latest) gave \(closed), the naive model \(naive.outcomes)")
        }
        return problems
    }

    /// Applies `operation` at `now` to the queue and to the naive model, and returns what
    /// differs from the naive model or breaks an invariant.
    mutating func apply(_ operation: WaitOperation, at now: Int64, queueLimit: Int64) -> [String] {
        typealias Waiter = WaitQueueChecker.Waiter
        typealias Outcome = WaitQueueChecker.Outcome
        let instant = RateLimitInstant.generated(now)
        var naive = NaiveWaitQueue(limiter: queue.limiter, waiters: waiters, servedUpTo: latest, queueLimit: queueLimit)
        let limiterBefore = queue.limiter
        var problems: [String] = []
        var outcomes: [Outcome]
        var newcomer: Newcomer?
        var eventAnswer: RateLimitResult?
        switch operation {
        case .acquire(let permits, let priority, let timeout, let before):
            let deadline = timeout.map { RateLimitInstant.generated(now + $0) }
            let named = before.map { now - $0 }
            let (ticket, effects) = queue.acquire(
                permits, priority: priority, deadline: deadline, arrival: named.map(RateLimitInstant.generated),
                at: instant)
            outcomes = effects.completions.map(Outcome.init)
            // WQ-3: it arrived at the queue's instant, or at the earlier one it names.
            let own = max(latest, now)
            let waiter = Waiter(
                ticket: ticket, permits: permits, priority: priority, deadline: deadline?.nanoseconds,
                arrival: min(named ?? own, own))
            newcomer = Newcomer(waiter: waiter, mayWait: true)
            naive.request(waiter, mayWait: true, at: now)
        case .tryAcquire(let permits, let priority):
            let (outcome, effects) = queue.tryAcquire(permits, priority: priority, at: instant)
            let waiter = Waiter(
                ticket: nil, permits: permits, priority: priority, deadline: nil, arrival: max(latest, now))
            newcomer = Newcomer(waiter: waiter, mayWait: false)
            naive.request(waiter, mayWait: false, at: now)
            // Its outcome is returned, not in the effects: put it where the naive model has it.
            outcomes = effects.completions.map(Outcome.init)
            let position = min(naive.newcomerPosition ?? outcomes.count, outcomes.count)
            outcomes.insert(Outcome(id: waiter.id, outcome: outcome, at: now), at: position)
        case .cancel(let position):
            guard let ticket = waiters[position].ticket else { return ["a waiter without a ticket"] }
            outcomes = queue.cancel(ticket, at: instant).completions.map(Outcome.init)
            naive.cancel(waiters[position].id, at: now)
        case .release(let permits):
            let (result, effects) = queue.release(permits, at: instant)
            (outcomes, eventAnswer) = (effects.completions.map(Outcome.init), result)
            naive.event(.release(permits), at: now)
        case .reset:
            let (result, effects) = queue.reset(at: instant)
            (outcomes, eventAnswer) = (effects.completions.map(Outcome.init), result)
            naive.event(.reset, at: now)
        case .advance:
            outcomes = queue.advance(to: instant).completions.map(Outcome.init)
            naive.advance(to: now)
        }
        if let eventAnswer, eventAnswer != naive.eventAnswer {
            problems.append(
                "WQ-8 \(operation) answered \(eventAnswer), the naive model \(naive.eventAnswer.map { "\($0)" } ?? "-")"
            )
        }
        if outcomes != naive.outcomes {
            problems.append("WQ-5 WQ-7 outcomes \(outcomes), the naive model's \(naive.outcomes)")
        }
        problems += outcomeChecks(outcomes, newcomer: newcomer)
        problems += shadowCheck(outcomes, from: limiterBefore, operation: operation, at: now, newcomer: newcomer)
        // The walk's own bookkeeping, from the outcomes.
        let ended = Set(outcomes.map(\.id))
        waiters.removeAll { ended.contains($0.id) }
        if let newcomer, newcomer.mayWait, !ended.contains(newcomer.waiter.id) {
            waiters.insert(newcomer.waiter, at: Waiter.position(of: newcomer.waiter, in: waiters))
        }
        latest = max(latest, now)
        if waiters.map(\.id) != naive.waiters.map(\.id) {
            problems.append(
                "WQ-3 waiters \(waiters.map(\.id)) in service order, the naive model's \(naive.waiters.map(\.id))")
        }
        // The queue's own order and arrivals, which later requests are ordered against (a state
        // that differs only there would be taken for one already seen).
        let order = queue.serviceOrder
        if order.map(\.ticket.rawValue) != waiters.map(\.id) || order.map(\.arrival) != waiters.map(\.arrival) {
            problems.append(
                "WQ-3 the queue serves \(order.map { "#\($0.ticket.rawValue) (arrived \($0.arrival))" }), the model \(waiters.map { "#\($0.id) (arrived \($0.arrival))" })"
            )
        }
        return problems
    }

    struct Newcomer {
        var waiter: WaitQueueChecker.Waiter
        var mayWait: Bool
    }

    /// WQ-2, WQ-3, WQ-4, WQ-5: one outcome per request, grants only of the head, deadlines kept,
    /// critical requests and tryAcquires never wait.
    private func outcomeChecks(_ outcomes: [WaitQueueChecker.Outcome], newcomer: Newcomer?) -> [String] {
        var problems: [String] = []
        var waiting = waiters
        var newcomerDecided = false
        for outcome in outcomes {
            if let newcomer, outcome.id == newcomer.waiter.id {
                if newcomerDecided { problems.append("WQ-2 \(outcome): a second outcome") }
                newcomerDecided = true
                continue
            }
            guard let position = waiting.firstIndex(where: { $0.id == outcome.id }) else {
                problems.append("WQ-2 \(outcome): not waiting")
                continue
            }
            let deadline = waiting[position].deadline
            if case .granted = outcome.outcome {
                if position != 0 { problems.append("WQ-3 \(outcome) while #\(waiting[0].id) is ahead of it") }
                if let deadline, deadline < outcome.at {
                    problems.append("WQ-5 \(outcome), after its deadline \(deadline)")
                }
            }
            if outcome.outcome == .timedOut, deadline.map({ $0 > outcome.at }) ?? true {
                problems.append("WQ-5 \(outcome), before its deadline \(deadline.map(String.init) ?? "(none)")")
            }
            waiting.remove(at: position)
        }
        if let newcomer, !newcomerDecided {
            if newcomer.waiter.priority == .critical { problems.append("WQ-4 a critical request waits") }
            if !newcomer.mayWait { problems.append("WQ-4 a tryAcquire got no outcome") }
        }
        return problems
    }

    /// WQ-10: the grants and the event, replayed in order on the limiter as it was, end in the
    /// queue's limiter: each grant took its permits at its instant, and nothing else was taken.
    private func shadowCheck(
        _ outcomes: [WaitQueueChecker.Outcome], from before: RateLimiter<S>, operation: WaitOperation, at now: Int64,
        newcomer: Newcomer?
    ) -> [String] {
        var shadow = before
        var eventApplied = false
        func applyEvent() {
            guard !eventApplied else { return }
            eventApplied = true
            switch operation {
            case .release(let permits): _ = shadow.step(.release(permits), at: .generated(now))
            case .reset: _ = shadow.step(.reset, at: .generated(now))
            case .acquire, .tryAcquire, .cancel, .advance: break
            }
        }
        for outcome in outcomes {
            // A release or reset applies after what fell due before `now`, before serving at `now`.
            if outcome.at >= now { applyEvent() }
            guard case .granted(let answer) = outcome.outcome else { continue }
            let request = newcomer?.waiter.id == outcome.id ? newcomer?.waiter : waiters.first { $0.id == outcome.id }
            guard let permits = request?.permits, permits > 0 else { continue }
            let replayed = shadow.acquire(permits, at: .generated(outcome.at))
            if replayed != answer { return ["WQ-10 \(outcome), the strategy answers \(replayed) then"] }
        }
        applyEvent()
        return shadow == queue.limiter ? [] : ["WQ-10 the strategy's state is not what the grants alone make it"]
    }
}

/// WQ-4 ... WQ-9 written down as plainly as possible, as the oracle of the walk: waiters in a
/// list in service order, served at every nanosecond from the last instant served.
struct NaiveWaitQueue<S: RateLimitStrategy> {
    typealias Waiter = WaitQueueChecker.Waiter
    var limiter: RateLimiter<S>
    var waiters: [Waiter]
    var servedUpTo: Int64
    let queueLimit: Int64
    var outcomes: [WaitQueueChecker.Outcome] = []
    var eventAnswer: RateLimitResult?
    /// Where the newcomer's own outcome stands among ``outcomes``.
    var newcomerPosition: Int?

    init(limiter: RateLimiter<S>, waiters: [Waiter], servedUpTo: Int64, queueLimit: Int64) {
        self.limiter = limiter
        self.waiters = waiters
        self.servedUpTo = servedUpTo
        self.queueLimit = queueLimit
    }

    private mutating func complete(_ id: UInt64, _ outcome: WaitOutcome, at now: Int64) {
        outcomes.append(.init(id: id, outcome: outcome, at: now))
    }

    /// WQ-5 at `now`: deadlines before it, the heads the strategy admits, deadlines at it (and
    /// the heads again, as long as some waiter timed out).
    private mutating func serve(at now: Int64) {
        servedUpTo = max(servedUpTo, now)
        expire(before: now, inclusive: false)
        repeat {
            // The head is offered to the strategy until it refuses (the head then waits on):
            // an admission is its grant, `neverAllowed` or `invalid` its rejection.
            while let head = waiters.first {
                let answer = limiter.acquire(head.permits, at: .generated(now))
                if case .rejected = answer { break }
                if case .rejectedUntilRelease = answer { break }
                waiters.removeFirst()
                complete(head.id, WaitOutcome(answer), at: now)
            }
        } while expire(before: now, inclusive: true)
    }

    /// Times out the waiters whose deadline is before `now` (or at it), earliest first, then in the
    /// order the requests were made (WQ-14); whether any did.
    @discardableResult
    private mutating func expire(before now: Int64, inclusive: Bool) -> Bool {
        func due(_ waiter: Waiter) -> Bool { waiter.deadline.map { $0 < now || (inclusive && $0 == now) } ?? false }
        let expired = waiters.filter(due).sorted { ($0.deadline!, $0.id) < ($1.deadline!, $1.id) }
        waiters.removeAll(where: due)
        for waiter in expired { complete(waiter.id, .timedOut, at: now) }
        return !expired.isEmpty
    }

    /// WQ-7: serves at each instant from the last one served (where a request at an earlier
    /// instant may have left the head admissible) to just before `now`, as a timer firing on time
    /// would have.
    private mutating func catchUp(before now: Int64) {
        var instant = servedUpTo
        while instant < now {
            if !waiters.isEmpty { serve(at: instant) }
            instant += 1
        }
    }

    /// A wake-up at `now`.
    mutating func advance(to now: Int64) {
        catchUp(before: now)
        serve(at: now)
    }

    /// WQ-4: a request at `now` that may wait, or not.
    mutating func request(_ waiter: Waiter, mayWait: Bool, at now: Int64) {
        advance(to: now)
        newcomerPosition = outcomes.count
        let instant = RateLimitInstant.generated(now)
        let permits = waiter.permits
        var reason: WaitRejection?
        if permits < 0, case .invalid(let error) = limiter.availability(of: permits, at: instant) {
            complete(waiter.id, .rejected(.invalid(error)), at: now)
        } else if permits > limiter.strategy.maximumPermits {
            complete(waiter.id, .rejected(.neverAllowed), at: now)
        } else if permits == 0 {
            complete(waiter.id, .granted(.allowed(remaining: limiter.remaining(at: instant))), at: now)
        } else if waiter.priority == .critical {
            let answer = limiter.acquire(permits, at: instant)
            complete(waiter.id, answer.isAdmitted ? .granted(answer) : .bypassed, at: now)
        } else if waiters.contains(where: { $0.isAhead(of: waiter.priority, arrival: waiter.arrival) }) {
            reason = .waitersAhead
        } else {
            let answer = limiter.acquire(permits, at: instant)
            switch answer {
            case .allowed, .delayed: complete(waiter.id, .granted(answer), at: now)
            case .rejected(let retryAfter): reason = .limited(retryAfterNanoseconds: retryAfter)
            case .rejectedUntilRelease(let shortfall): reason = .untilRelease(shortfall: shortfall)
            case .neverAllowed: complete(waiter.id, .rejected(.neverAllowed), at: now)
            case .invalid(let error): complete(waiter.id, .rejected(.invalid(error)), at: now)
            }
        }
        guard let reason else {
            // A newcomer that took permits may leave the head never admissible: serve again.
            if case .granted = outcomes.last?.outcome, !waiters.isEmpty { serve(at: now) }
            return
        }
        if !mayWait {
            complete(waiter.id, .rejected(reason), at: now)
        } else if let deadline = waiter.deadline, deadline <= now {
            complete(waiter.id, .timedOut, at: now)
        } else if waiters.reduce(0, { $0 + $1.permits }) + permits > queueLimit {
            complete(waiter.id, .rejected(.queueFull), at: now)
        } else {
            waiters.insert(waiter, at: Waiter.position(of: waiter, in: waiters))
        }
    }

    /// WQ-9: what is due by `now`, then `closed` for every waiter left, in the order the requests
    /// were made (WQ-14).
    mutating func close(at now: Int64) {
        advance(to: now)
        for waiter in waiters.sorted(by: { $0.id < $1.id }) { complete(waiter.id, .closed, at: servedUpTo) }
        waiters = []
    }

    /// WQ-6.
    mutating func cancel(_ id: UInt64, at now: Int64) {
        catchUp(before: now)
        if let position = waiters.firstIndex(where: { $0.id == id }) {
            waiters.remove(at: position)
            complete(id, .cancelled, at: now)
        }
        serve(at: now)
    }

    /// WQ-8: what fell due first, then the event, then serving at `now`.
    mutating func event(_ event: RateLimitEvent<S>, at now: Int64) {
        catchUp(before: now)
        eventAnswer = limiter.step(event, at: .generated(now))
        serve(at: now)
    }
}
