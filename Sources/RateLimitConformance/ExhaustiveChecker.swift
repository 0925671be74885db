import RateLimitCore

/// Every reachable state of a small limiter, not a sample: a breadth-first walk of the pure
/// model over a bounded timeline, each distinct `(state, latest instant)` visited once, with the
/// Spec's relations checked at every transition.
///
/// Instants stay within `0 ... horizon`, so the walk is finite and reaches a fixpoint: when a
/// depth adds no new state, every state reachable within the horizon has been seen, whatever the
/// number of events. From each state the walk tries every event at every offset from the latest
/// instant (forwards, at the same instant, backwards). At each transition it checks:
/// - CORE-5: a refusal's retry-after is at least 1, `remaining` is within `0 ... maximumPermits`;
/// - CORE-7: the retry-after is tight: the same acquire is admitted at `now + r` and refused at
///   `now + r − 1` (on the state before it, since a refusal changes nothing);
/// - CORE-6: `remaining` is the largest acquire admitted right after;
/// - CORE-8: a refused acquire leaves the state unchanged;
/// - CORE-10: time going backwards never grants: an acquire admitted at `now` is admitted at
///   every later instant up to the latest one seen, on the same state.
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
            "\(name): \(states) states, \(transitions) transitions, depth \(depth)\(complete ? " (every reachable state)" : " (stopped at the state limit)"), \(violations.isEmpty ? "no violation" : "\(violations.count) violations")"
        }
    }

    /// Walks `strategy` from its initial state at 0.
    package static func walk<S: RateLimitStrategy>(
        _ strategy: S, name: String, horizon: Int64, offsets: [Int64], events: [RateLimitEvent<S>],
        stateLimit: Int = 500_000, violationLimit: Int = 20
    ) -> Report {
        var report = Report(name: name)
        let start = WalkNode(state: strategy.initialState(at: .origin), latest: 0)
        var seen: Set<WalkNode<S.State>> = [start]
        var frontier = [start]
        func instant(_ nanoseconds: Int64) -> RateLimitInstant { .generated(nanoseconds) }
        func admitted(_ state: S.State, _ event: RateLimitEvent<S>, at now: Int64) -> Bool {
            var copy = state
            return strategy.step(&copy, event, at: instant(now)).isAdmitted
        }
        func violation(_ text: String) {
            if report.violations.count < violationLimit { report.violations.append("\(name): \(text)") }
        }
        func check(
            _ result: RateLimitResult, _ event: RateLimitEvent<S>, _ at: String, _ before: S.State, _ after: S.State,
            _ now: Int64, latest: Int64
        ) {
            switch result {
            case .allowed(let remaining), .delayed(_, let remaining):
                if remaining < 0 || remaining > strategy.maximumPermits {
                    violation("CORE-5 remaining \(remaining) outside 0...\(strategy.maximumPermits): \(event) at \(at)")
                }
                // CORE-6: the largest acquire admitted right after.
                if remaining > 0, !admitted(after, .acquire(remaining), at: now) {
                    violation("CORE-6 remaining \(remaining) but acquire(\(remaining)) refused right after: \(at)")
                }
                if remaining < strategy.maximumPermits, admitted(after, .acquire(remaining + 1), at: now) {
                    violation("CORE-6 remaining \(remaining) but acquire(\(remaining + 1)) admitted right after: \(at)")
                }
            case .rejected(let wait):
                guard case .acquire(let permits) = event else { return }
                if wait < 1 { violation("CORE-5 retry-after \(wait): \(at)") }
                if after != before { violation("CORE-8 a refused acquire changed the state: \(at)") }
                // CORE-7: admitted at now + r, refused one nanosecond earlier.
                let (admission, overflow) = now.addingReportingOverflow(wait)
                if !overflow {
                    if !admitted(before, .acquire(permits), at: admission) {
                        violation("CORE-7 retry-after \(wait) not honoured at \(admission): \(at)")
                    }
                    if wait > 1, admitted(before, .acquire(permits), at: admission - 1) {
                        violation("CORE-7 retry-after \(wait) not tight: admitted at \(admission - 1): \(at)")
                    }
                }
            case .neverAllowed, .rejectedUntilRelease:
                if case .acquire = event, after != before {
                    violation("CORE-8 a refused acquire changed the state: \(at)")
                }
            case .invalid:
                if after != before { violation("CORE-8 an invalid event changed the state: \(at)") }
            }
            // CORE-10: going back never grants what staying at the latest instant would not.
            if case .acquire(let permits) = event, permits > 0, now < latest, result.isAdmitted,
                !admitted(before, .acquire(permits), at: latest)
            {
                violation(
                    "CORE-10 admitted at \(now), before the latest instant \(latest), but not at \(latest): \(at)")
            }
        }

        while !frontier.isEmpty, seen.count < stateLimit {
            report.depth += 1
            var next: [WalkNode<S.State>] = []
            for node in frontier {
                for offset in offsets {
                    let now = node.latest + offset
                    guard now >= 0, now <= horizon else { continue }
                    for event in events {
                        var state = node.state
                        let result = strategy.step(&state, event, at: instant(now))
                        report.transitions += 1
                        let at = "\(event) at \(now) (latest \(node.latest)) on \(node.state)"
                        check(result, event, at, node.state, state, now, latest: node.latest)
                        let reached = WalkNode(state: state, latest: max(node.latest, now))
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

    /// Walks two strategies on the same events and instants, pairs of states visited once, and
    /// reports every step where their answers differ (the equivalences of Spec/README.md).
    package static func walkPair<A: RateLimitStrategy, B: RateLimitStrategy>(
        _ a: A, _ b: B, name: String, horizon: Int64, offsets: [Int64], permits: ClosedRange<Int64>,
        resets: Bool = true, stateLimit: Int = 500_000, violationLimit: Int = 20
    ) -> Report {
        var report = Report(name: name)
        let start = WalkNode(
            state: PairState(a: a.initialState(at: .origin), b: b.initialState(at: .origin)), latest: 0)
        var seen: Set<WalkNode<PairState<A.State, B.State>>> = [start]
        var frontier = [start]
        var events: [(RateLimitEvent<A>, RateLimitEvent<B>)] = permits.map { (.acquire($0), .acquire($0)) }
        if resets { events.append((.reset, .reset)) }
        while !frontier.isEmpty, seen.count < stateLimit {
            report.depth += 1
            var next: [WalkNode<PairState<A.State, B.State>>] = []
            for node in frontier {
                for offset in offsets {
                    let now = node.latest + offset
                    guard now >= 0, now <= horizon else { continue }
                    for (eventA, eventB) in events {
                        var stateA = node.state.a
                        var stateB = node.state.b
                        let answerA = a.step(&stateA, eventA, at: .generated(now))
                        let answerB = b.step(&stateB, eventB, at: .generated(now))
                        report.transitions += 1
                        if answerA != answerB, report.violations.count < violationLimit {
                            report.violations.append(
                                "\(name): \(eventA) at \(now) (latest \(node.latest)): \(answerA.brief) against \(answerB.brief), from \(node.state.a) and \(node.state.b)"
                            )
                        }
                        let reached = WalkNode(state: PairState(a: stateA, b: stateB), latest: max(node.latest, now))
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

/// A state of a walk, with the latest instant seen on the way to it.
struct WalkNode<State: Hashable>: Hashable {
    var state: State
    var latest: Int64
}

/// The states of two strategies walked together.
struct PairState<A: Hashable, B: Hashable>: Hashable {
    var a: A
    var b: B
}
