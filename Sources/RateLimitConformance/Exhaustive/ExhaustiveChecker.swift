import RateLimitCore

/// The bounded space an exhaustive walk explores: a configuration, the events tried from every
/// state, and the instants they are tried at.
///
/// Instants stay on a short timeline `0 ... horizon` and in a short stretch at its end (the last
/// `endMargin` nanoseconds before `end`), so the walk is finite and reaches a fixpoint. From each
/// state every event is tried at every ``Move``: an offset from the latest instant seen (forwards,
/// at it, backwards), or a jump to an absolute instant (an idle stretch, the end of the timeline).
package struct ExhaustiveSpace<S: RateLimitStrategy>: Sendable {
    /// Where the next event happens, from the latest instant seen.
    package enum Move: Hashable, Sendable, CustomStringConvertible {
        case offset(Int64)
        case to(Int64)

        package var description: String {
            switch self {
            case .offset(let offset): offset < 0 ? "\(offset)" : "+\(offset)"
            case .to(let instant): "to \(instant)"
            }
        }
    }

    package var strategy: S
    package var horizon: Int64
    /// The last instant of the timeline the walk uses (`Int64.max`, or a profile's largest instant).
    package var end: Int64 = .max
    /// How far before `end` instants are still tried (none when 0).
    package var endMargin: Int64 = 0
    package var moves: [Move]
    package var events: [RateLimitEvent<S>]
    /// The instants limiters are created at: one start of the walk each (windows and interval
    /// grids align to the origin, not to the creation, FW-3 and TBI-3).
    package var creations: [Int64] = [0]

    package init(
        strategy: S, horizon: Int64, end: Int64 = .max, endMargin: Int64 = 0, moves: [Move],
        events: [RateLimitEvent<S>], creations: [Int64] = [0]
    ) {
        self.strategy = strategy
        self.horizon = horizon
        self.end = end
        self.endMargin = endMargin
        self.moves = moves
        self.events = events
        self.creations = creations
    }

    /// The same timeline and moves for another strategy and its events.
    package func with<T: RateLimitStrategy>(_ strategy: T, events: [RateLimitEvent<T>]) -> ExhaustiveSpace<T> {
        ExhaustiveSpace<T>(
            strategy: strategy, horizon: horizon, end: end, endMargin: endMargin,
            moves: moves.map {
                switch $0 {
                case .offset(let offset): .offset(offset)
                case .to(let instant): .to(instant)
                }
            }, events: events, creations: creations)
    }

    /// The instant `move` leads to from `latest`, when it lies within the space.
    func instant(_ move: Move, from latest: Int64) -> Int64? {
        let now: Int64
        switch move {
        case .offset(let offset):
            let (sum, overflow) = latest.addingReportingOverflow(offset)
            guard !overflow else { return nil }
            now = sum
        case .to(let instant): now = instant
        }
        guard now >= 0, now <= end else { return nil }
        return now <= horizon || (endMargin > 0 && now >= end - endMargin) ? now : nil
    }
}

/// Every reachable state of a small limiter, not a sample: a breadth-first walk of the pure
/// model over an ``ExhaustiveSpace``, each distinct `(configuration, state, latest instant,
/// admission monitor)` visited once, with the Spec's relations checked at every transition.
///
/// At each transition it checks:
/// - CORE-5: a refusal's retry-after is at least 1, `remaining` is within `0 ... maximumPermits`;
/// - CORE-7: the retry-after is tight: the same acquire is admitted at `now + r` and refused at
///   `now + r − 1` (on the state before it, since a refusal changes nothing);
/// - CORE-6: `remaining` is the largest acquire admitted right after;
/// - CORE-8: a refused acquire (or an invalid event) leaves the state unchanged;
/// - CORE-10: time going backwards never grants: an acquire admitted at `now` is admitted at
///   every later instant up to the latest one seen, on the same state;
/// - the strategy's admission bound over every pair of admissions between resets and
///   reconfigures (clause 11: TB-11, TBI-11, GCRA-11, FW-11, SWL-11, SWC-11, LBM-11, LBQ-11,
///   CL-11; ``AdmissionBound``).
package enum ExhaustiveChecker {
    /// What a walk covered and what it found.
    package struct Report: Sendable, CustomStringConvertible {
        package var name: String
        package var states = 0
        package var transitions = 0
        /// The depth at which no new state appeared (the fixpoint), or the depth reached.
        package var depth = 0
        package var complete = false
        package var violations: [String] = []

        package var description: String {
            let reach = complete ? "every reachable state" : "stopped before the fixpoint"
            let found = violations.isEmpty ? "no violation" : "\(violations.count) violations"
            return "\(name): \(states) states, \(transitions) transitions, depth \(depth) (\(reach)), \(found)"
        }
    }

    /// The states of a walk and the transitions between them, for replaying paths elsewhere.
    package struct Graph: Sendable {
        /// One transition: the move and event (indexes into the space's) and the state reached.
        package struct Edge: Hashable, Sendable {
            package var move: Int
            package var event: Int
            package var now: Int64
            package var target: Int
        }

        /// For each state, in the order found: the edge of the first path reaching it (`nil` for
        /// a start) with its source, its depth, and the creation instant its path starts from.
        package var parents: [(source: Int, edge: Edge)?] = []
        package var depths: [Int] = []
        package var createdAt: [Int64] = []
        /// For each state whose transitions were explored, every one of them.
        package var edges: [[Edge]] = []

        /// The path from the start to `state`.
        package func path(to state: Int) -> [Edge] {
            var path: [Edge] = []
            var current = state
            while let (source, edge) = parents[current] {
                path.append(edge)
                current = source
            }
            return path.reversed()
        }
    }

    /// Walks `space` from the initial state at 0, to the fixpoint or to `depthLimit` events.
    /// `bound` gives the admission bound of a configuration (by default its strategy's, when it is
    /// one of the Spec's strategies; `nil` checks none). A transition `allows` refuses is neither checked nor
    /// followed (an event an implementation's profile lacks).
    package static func walk<S: RateLimitStrategy>(
        _ space: ExhaustiveSpace<S>, name: String, depthLimit: Int = .max,
        bound: (S) -> AdmissionBound? = { AnyRateLimitStrategy($0).map(AdmissionBound.init) },
        allows: (RateLimitEvent<S>, RateLimitResult) -> Bool = { _, _ in true },
        stateLimit: Int = 2_000_000, violationLimit: Int = 20, recordGraph: Bool = false
    ) -> (report: Report, graph: Graph?) {
        var report = Report(name: name)
        var graph = recordGraph ? Graph() : nil
        var index: [WalkNode<RateLimiter<S>>: Int] = [:]
        var nodes: [WalkNode<RateLimiter<S>>] = []
        for creation in space.creations {
            let start = WalkNode(
                limiter: RateLimiter(space.strategy, at: .generated(creation)), latest: creation,
                monitor: AdmissionMonitor(createdAt: creation))
            guard index[start] == nil else { continue }
            index[start] = nodes.count
            nodes.append(start)
            graph?.parents.append(nil)
            graph?.depths.append(0)
            graph?.createdAt.append(creation)
        }
        var frontier = 0..<nodes.count
        func violation(_ text: String) {
            if report.violations.count < violationLimit { report.violations.append("\(name): \(text)") }
        }

        while !frontier.isEmpty, report.depth < depthLimit, nodes.count < stateLimit {
            report.depth += 1
            for source in frontier {
                let node = nodes[source]
                var edges: [Graph.Edge] = []
                for (moveIndex, move) in space.moves.enumerated() {
                    guard let now = space.instant(move, from: node.latest) else { continue }
                    for (eventIndex, event) in space.events.enumerated() {
                        var limiter = node.limiter
                        let result = limiter.step(event, at: .generated(now))
                        guard allows(event, result) else { continue }
                        report.transitions += 1
                        var monitor = node.monitor
                        // Only what is admitted or applied reaches the monitor (a refusal records nothing).
                        if result.isAdmitted, event != .acquire(0), let clause = bound(node.limiter.strategy) {
                            let problems = monitor.observe(
                                event, at: now, result: result, bound: clause, after: bound(limiter.strategy) ?? clause)
                            for problem in problems { violation("\(problem): \(event) at \(now) on \(node)") }
                        }
                        for problem in relations(result, event, node: node, after: limiter, now: now) {
                            violation("\(problem): \(event) at \(now) (latest \(node.latest)) on \(node.limiter)")
                        }
                        let reached = WalkNode(limiter: limiter, latest: max(node.latest, now), monitor: monitor)
                        var target = index[reached]
                        if target == nil {
                            target = nodes.count
                            index[reached] = nodes.count
                            nodes.append(reached)
                            let edge = Graph.Edge(move: moveIndex, event: eventIndex, now: now, target: nodes.count - 1)
                            graph?.parents.append((source, edge))
                            graph?.depths.append(report.depth)
                            if let creation = graph?.createdAt[source] { graph?.createdAt.append(creation) }
                        }
                        edges.append(Graph.Edge(move: moveIndex, event: eventIndex, now: now, target: target!))
                    }
                }
                // Refusals and queries first (they lead back here): a path then takes them all
                // before it moves on, which tests that they changed nothing (CORE-8).
                graph?.edges.append(edges.filter { $0.target == source } + edges.filter { $0.target != source })
            }
            frontier = frontier.upperBound..<nodes.count
        }
        report.states = nodes.count
        report.complete = frontier.isEmpty
        return (report, graph)
    }

    /// The Spec's relations between the answer to `event` at `now` and the states around it.
    static func relations<S: RateLimitStrategy>(
        _ result: RateLimitResult, _ event: RateLimitEvent<S>, node: WalkNode<RateLimiter<S>>, after: RateLimiter<S>,
        now: Int64
    ) -> [String] {
        let before = node.limiter
        func admitted(_ limiter: RateLimiter<S>, _ permits: Int64, at instant: Int64) -> Bool {
            limiter.availability(of: permits, at: .generated(instant)).isAdmitted
        }
        var problems: [String] = []
        switch result {
        case .allowed(let remaining), .delayed(_, let remaining):
            let maximum = after.strategy.maximumPermits
            if remaining < 0 || remaining > maximum {
                problems.append("CORE-5 remaining \(remaining) outside 0...\(maximum)")
            }
            // CORE-6: the largest acquire admitted right after.
            if remaining > 0, !admitted(after, remaining, at: now) {
                problems.append("CORE-6 remaining \(remaining) but acquire(\(remaining)) refused right after")
            }
            if remaining < maximum, admitted(after, remaining + 1, at: now) {
                problems.append("CORE-6 remaining \(remaining) but acquire(\(remaining + 1)) admitted right after")
            }
        case .rejected(let wait):
            guard case .acquire(let permits) = event else { break }
            if wait < 1 { problems.append("CORE-5 retry-after \(wait)") }
            if after != before { problems.append("CORE-8 a refused acquire changed the state") }
            // CORE-7: admitted at now + r, refused one nanosecond earlier.
            let (admission, overflow) = now.addingReportingOverflow(wait)
            if !overflow, wait >= 1 {
                if !admitted(before, permits, at: admission) {
                    problems.append("CORE-7 retry-after \(wait) not honoured at \(admission)")
                }
                if wait > 1, admitted(before, permits, at: admission - 1) {
                    problems.append("CORE-7 retry-after \(wait) not tight: admitted at \(admission - 1)")
                }
            }
        case .neverAllowed, .rejectedUntilRelease:
            if case .acquire = event, after != before { problems.append("CORE-8 a refused acquire changed the state") }
        case .invalid:
            if after != before { problems.append("CORE-8 an invalid event changed the state") }
        }
        // CORE-10: going back never grants what staying at the latest instant would not.
        if case .acquire(let permits) = event, permits > 0, now < node.latest, result.isAdmitted,
            !admitted(before, permits, at: node.latest)
        {
            problems.append("CORE-10 admitted at \(now), before the latest instant \(node.latest), but not at it")
        }
        return problems
    }

    /// Walks two strategies on the same events and instants, pairs of states visited once, and
    /// reports every step where their answers differ (the equivalences of Spec/README.md).
    package static func walkPair<A: RateLimitStrategy, B: RateLimitStrategy>(
        _ a: ExhaustiveSpace<A>, _ b: ExhaustiveSpace<B>, name: String, stateLimit: Int = 2_000_000,
        violationLimit: Int = 20
    ) -> Report {
        precondition(
            a.moves.map(\.description) == b.moves.map(\.description) && a.events.count == b.events.count,
            "a pair walks one space")
        var report = Report(name: name)
        let start = WalkNode(
            limiter: PairLimiter(a: RateLimiter(a.strategy, at: .origin), b: RateLimiter(b.strategy, at: .origin)),
            latest: 0, monitor: AdmissionMonitor(createdAt: 0))
        var seen: Set<WalkNode<PairLimiter<A, B>>> = [start]
        var frontier = [start]
        while !frontier.isEmpty, seen.count < stateLimit {
            report.depth += 1
            var next: [WalkNode<PairLimiter<A, B>>] = []
            for node in frontier {
                for move in a.moves {
                    guard let now = a.instant(move, from: node.latest) else { continue }
                    for (eventA, eventB) in zip(a.events, b.events) {
                        var pair = node.limiter
                        let answerA = pair.a.step(eventA, at: .generated(now))
                        let answerB = pair.b.step(eventB, at: .generated(now))
                        report.transitions += 1
                        if answerA != answerB, report.violations.count < violationLimit {
                            report.violations.append(
                                "\(name): \(eventA) at \(now) (latest \(node.latest)): \(answerA.brief) against \(answerB.brief), from \(node.limiter.a.state) and \(node.limiter.b.state)"
                            )
                        }
                        let reached = WalkNode(limiter: pair, latest: max(node.latest, now), monitor: node.monitor)
                        if seen.insert(reached).inserted { next.append(reached) }
                    }
                }
            }
            frontier = next
        }
        report.states = seen.count
        report.complete = frontier.isEmpty
        return report
    }
}

/// A state of a walk: the configuration and state, the latest instant seen on the way to it, and
/// what the admission bound still needs of the path.
struct WalkNode<Limiter: Hashable>: Hashable, CustomStringConvertible {
    var limiter: Limiter
    var latest: Int64
    var monitor: AdmissionMonitor

    var description: String { "\(limiter) (latest \(latest))" }
}

/// Two limiters walked together.
struct PairLimiter<A: RateLimitStrategy, B: RateLimitStrategy>: Hashable {
    var a: RateLimiter<A>
    var b: RateLimiter<B>
}
