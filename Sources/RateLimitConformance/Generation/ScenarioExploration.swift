import RateLimitCore

// Random exploration of the extensions an implementation declares (composite limits, the wait
// queue, the adaptive machines): generated scenarios (ScenarioGenerator.swift), each answered by
// the reference model and compared step by step, until a deadline. Exploration goes on past a
// failure: failures are grouped by cause (the event, the answer's kind and the members that
// differ), and the first scenario of each cause is shrunk to the fewest steps that still fail
// the same way, re-answered by the reference after every cut.

/// A cause of failure found by exploring one machine, with its smallest scenario.
package struct ScenarioFinding: Sendable {
    package var machine: ScenarioMachine
    /// The generated scenario it was first seen in (`--scenario MACHINE/INDEX --seed S` replays it).
    package var index: Int
    /// What failed: `acquire: allowed vs allowed [remaining]`, or `no answer`.
    package var cause: String
    /// How many generated scenarios failed with this cause.
    package var occurrences: Int
    /// The steps of the scenario it was first seen in, and of the shrunk one.
    package var originalSteps: Int
    package var shrunk: ScenarioCase
    /// The shrunk scenario's first difference.
    package var difference: String
    /// Whether it is a path of the exhaustive wait-queue walk (`--scenario wait-queue/walk-INDEX`
    /// replays it), not a generated scenario.
    package var walked = false
}

/// What exploring the extensions covered and found.
package struct ScenarioExplorationReport: Sendable {
    package struct Machine: Sendable {
        package var machine: ScenarioMachine
        package var scenarios = 0
        package var steps = 0
        package var longest = 0
        /// Generated scenarios that failed, whatever their cause.
        package var failed = 0
        /// One per cause, in the order found, at most ``ScenarioExploration/findingsPerMachine``.
        package var findings: [ScenarioFinding] = []
        /// Why exploration of this machine stopped before its deadline, if it did.
        package var stoppedBecause: String?
        /// Generated scenarios not sent because they lie outside the implementation's profile
        /// (CONF-7), and the first one's reason.
        package var outsideProfile = 0
        package var firstOutside: String?
        /// For the exhaustive wait-queue walk: its depth and how many paths it has (``scenarios``
        /// counts those sent); `nil` for generated scenarios.
        package var walkDepth: Int?
        package var walkPaths = 0
    }

    package var seed: UInt64
    package var machines: [Machine]

    package init(seed: UInt64, machines: [Machine]) {
        self.seed = seed
        self.machines = machines
    }

    package var passed: Bool { machines.allSatisfy { $0.failed == 0 } }

    /// One line per machine, then one per finding.
    package var lines: [String] {
        machines.flatMap { machine -> [String] in
            let counts =
                machine.walkDepth.map {
                    "\(machine.machine.rawValue) walk to depth \($0): \(machine.scenarios) of \(machine.walkPaths) paths to every state of a token bucket and a concurrency limit with 3 waiters (\(machine.steps) steps)"
                }
                ?? "\(machine.machine.rawValue): \(machine.scenarios) generated scenarios (\(machine.steps) steps, the longest \(machine.longest))"
            let stopped =
                (machine.stoppedBecause.map { "; stopped: \($0)" } ?? "")
                + (machine.firstOutside.map {
                    "; \(machine.outsideProfile) outside the profile, not sent (NOT CHECKED; the first: \($0))"
                } ?? "")
            guard machine.failed > 0 else { return ["\(counts), all as \(machine.machine.specFile) says\(stopped)"] }
            return ["\(counts), \(machine.failed) failed, \(machine.findings.count) distinct causes\(stopped):"]
                + machine.findings.map { finding in
                    finding.walked
                        ? "DIFF \(finding.shrunk.id) (\(finding.cause); \(finding.occurrences) paths, the first \(finding.shrunk.stepCount) steps): \(finding.difference)"
                        : "DIFF \(finding.shrunk.id) (\(finding.cause); \(finding.occurrences) scenarios, shrunk from \(finding.originalSteps) to \(finding.shrunk.stepCount) steps): \(finding.difference)"
                }
        }
    }

    package var json: JSONValue {
        .object([
            ("seed", .string(String(seed))),
            (
                "machines",
                .array(
                    machines.map { machine in
                        .object([
                            ("machine", .string(machine.machine.rawValue)),
                            ("scenarios", .integer(Int64(machine.scenarios))),
                            ("steps", .integer(Int64(machine.steps))),
                            ("longest", .integer(Int64(machine.longest))), ("failed", .integer(Int64(machine.failed))),
                            ("stoppedBecause", machine.stoppedBecause.map(JSONValue.string) ?? .null),
                            ("outsideProfile", .integer(Int64(machine.outsideProfile))),
                            ("walkDepth", machine.walkDepth.map { .integer(Int64($0)) } ?? .null),
                            ("walkPaths", .integer(Int64(machine.walkPaths))),
                            (
                                "findings",
                                .array(
                                    machine.findings.map { finding in
                                        .object([
                                            ("index", .integer(Int64(finding.index))),
                                            ("walked", .bool(finding.walked)),
                                            ("cause", .string(finding.cause)),
                                            ("occurrences", .integer(Int64(finding.occurrences))),
                                            ("originalSteps", .integer(Int64(finding.originalSteps))),
                                            ("difference", .string(finding.difference)),
                                            ("shrunk", finding.shrunk.json),
                                        ])
                                    })
                            ),
                        ])
                    })
            ),
        ])
    }
}

/// Explores the extensions with generated scenarios; see `ScenarioExploration.swift`.
package enum ScenarioExploration {
    /// Distinct causes kept (and shrunk) per machine; more are counted, not shrunk.
    package static let findingsPerMachine = 5
    /// Scenarios in a row without an answer after which a machine is not explored further.
    package static let unansweredInARowAllowed = 20
    /// Candidate scenarios tried while shrinking one finding.
    package static let shrinkAttempts = 3_000

    /// The paths of the wait-queue walk to `depth` (WaitQueueWalk.swift) in the order they are
    /// sent: the spaces' paths in turn, the shortest first.
    package static func walkOrder(depth: Int) -> [(space: WaitQueueWalk.Space, path: Int)] {
        let spaces = WaitQueueWalk.spaces(depth: depth)
        let longest = spaces.map(\.paths.count).max() ?? 0
        return (0..<longest).flatMap { path in
            spaces.filter { $0.paths.indices.contains(path) }.map { (space: $0, path: path) }
        }
    }

    /// Sends the wait-queue walk's paths to `driver` until `clock()` reaches `deadline` (with
    /// `only`, that one path, a replay), comparing each step with the reference. Breadth first,
    /// so a cause's first path is one of its shortest: it is kept as it is, not shrunk.
    package static func walk<Driver: ScenarioDriver>(
        depth: Int, driver: inout Driver, only: Int? = nil, until deadline: Double, clock: () -> Double,
        outside: (ScenarioCase) -> String? = { _ in nil }, progress: (String) -> Void = { _ in }
    ) -> ScenarioExplorationReport.Machine {
        let order = walkOrder(depth: depth)
        var report = ScenarioExplorationReport.Machine(machine: .waitQueue)
        (report.walkDepth, report.walkPaths) = (depth, order.count)
        var unanswered = 0
        for index in only.map({ [$0] }) ?? Array(order.indices) {
            guard only != nil || clock() < deadline, order.indices.contains(index) else { break }
            guard let scenario = WaitQueueWalk.scenario(order[index].space, index: order[index].path) else { continue }
            if let reason = outside(scenario) {  // within the profile only (CONF-7)
                report.outsideProfile += 1
                report.firstOutside = report.firstOutside ?? "walk-\(index): \(reason)"
                continue
            }
            if index % 100 == 0 { progress("wait-queue walk: path \(index + 1) of \(order.count)") }
            report.scenarios += 1
            report.steps += scenario.stepCount
            report.longest = max(report.longest, scenario.stepCount)
            guard let failure = failure(of: scenario, .waitQueue, driver: &driver) else {
                unanswered = 0
                continue
            }
            report.failed += 1
            unanswered = failure.answered ? 0 : unanswered + 1
            if let known = report.findings.firstIndex(where: { $0.cause == failure.cause }) {
                report.findings[known].occurrences += 1
            } else if report.findings.count < findingsPerMachine {
                var shown = scenario
                shown.id = "wait-queue/walk-\(index)"
                report.findings.append(
                    ScenarioFinding(
                        machine: .waitQueue, index: index, cause: failure.cause, occurrences: 1,
                        originalSteps: scenario.stepCount, shrunk: shown, difference: failure.line, walked: true))
            }
            if unanswered >= unansweredInARowAllowed {
                report.stoppedBecause = "\(unanswered) paths in a row had no answer"
                break
            }
        }
        return report
    }

    /// How a scenario went on `driver`: `nil` when every answer is the reference's.
    struct Failure {
        var step: Int
        var cause: String
        var line: String
        var answered: Bool
    }

    /// Explores `machines` in turn (scenario 0 of each, then 1, ...) until `clock()` reaches
    /// `deadline` or each machine has run `limit` scenarios; with `only`, runs that one generated
    /// scenario of each machine (a replay).
    package static func run<Driver: ScenarioDriver>(
        _ machines: [ScenarioMachine], driver: inout Driver, seed: UInt64, maximumSteps: Int, limit: Int? = nil,
        only: Int? = nil, until deadline: Double, shrinkSeconds: Double = 10, clock: () -> Double,
        outside: (ScenarioCase) -> String? = { _ in nil },
        events: Set<ImplementationProfile.Event> = Set(ImplementationProfile.Event.allCases),
        strategies: Set<String>? = nil, progress: (String) -> Void = { _ in }
    ) -> ScenarioExplorationReport {
        let explored = machines.filter(ScenarioGenerator.machines.contains)
        var reports = explored.map { ScenarioExplorationReport.Machine(machine: $0) }
        var unanswered = Array(repeating: 0, count: explored.count)
        var index = only ?? 0
        while clock() < deadline || index == (only ?? 0) {
            var ranAny = false
            for (position, machine) in explored.enumerated() where reports[position].stoppedBecause == nil {
                guard
                    let scenario = ScenarioGenerator.scenario(
                        machine, seed: seed, index: index, maximumSteps: maximumSteps, events: events,
                        strategies: strategies)
                else { continue }
                ranAny = true
                var report = reports[position]
                // Only scenarios within the profile are sent (CONF-7); the others are counted.
                if let reason = outside(scenario) {
                    report.outsideProfile += 1
                    report.firstOutside = report.firstOutside ?? "\(scenario.id): \(reason)"
                    reports[position] = report
                    continue
                }
                progress("\(machine.rawValue): generated scenario \(index)")
                report.scenarios += 1
                report.steps += scenario.stepCount
                report.longest = max(report.longest, scenario.stepCount)
                if let failure = failure(of: scenario, machine, driver: &driver) {
                    report.failed += 1
                    unanswered[position] = failure.answered ? 0 : unanswered[position] + 1
                    if let known = report.findings.firstIndex(where: { $0.cause == failure.cause }) {
                        report.findings[known].occurrences += 1
                    } else if report.findings.count < findingsPerMachine {
                        progress("\(machine.rawValue): shrinking generated scenario \(index)")
                        report.findings.append(
                            shrunk(
                                scenario, index: index, machine, failure, seed: seed, until: clock() + shrinkSeconds,
                                clock: clock, outside: outside, driver: &driver))
                    }
                    if unanswered[position] >= unansweredInARowAllowed {
                        report.stoppedBecause = "\(unanswered[position]) scenarios in a row had no answer"
                    }
                } else {
                    unanswered[position] = 0
                }
                reports[position] = report
                if clock() >= deadline, only == nil { break }
            }
            index += 1
            if !ranAny || only != nil || limit.map({ index >= $0 }) == true { break }
        }
        return ScenarioExplorationReport(seed: seed, machines: reports)
    }

    /// The first step where `driver` answers otherwise than the scenario, or its first error.
    static func failure<Driver: ScenarioDriver>(
        of scenario: ScenarioCase, _ machine: ScenarioMachine, driver: inout Driver
    ) -> Failure? {
        guard case .story(let createdAt, let steps) = scenario.body else { return nil }
        var step = 0
        do throws(ConformanceFormatError) {
            switch try driver.make(machine, scenario.configuration, at: createdAt) {
            case .refused(let refusal):
                return Failure(
                    step: -1, cause: "configuration refused",
                    line: "refused the configuration with \(refusal.json.compactText)", answered: true)
            case .made(var handle):
                defer { try? driver.drop(&handle) }
                for (index, expected) in steps.enumerated() {
                    step = index
                    let answer = try driver.apply(expected.event, to: &handle, at: expected.now)
                    guard answer.canonical != expected.expected.canonical else { continue }
                    return Failure(
                        step: index, cause: cause(expected.event, expected: expected.expected, answered: answer),
                        line:
                            "step \(index + 1) at \(expected.now) ns \(expected.event.compactText): expected \(expected.expected.compactText), answered \(answer.compactText)",
                        answered: true)
                }
                return nil
            }
        } catch {
            return Failure(step: step, cause: "no answer", line: "no answer: \(error.message)", answered: false)
        }
    }

    /// `acquire: allowed vs rejected [kind, remaining, retryAfterNanoseconds]`: the event, the
    /// answers' kinds and the members that differ.
    static func cause(_ event: JSONValue, expected: JSONValue, answered: JSONValue) -> String {
        let names = Set((expected.objectMembers + answered.objectMembers).map(\.0)).sorted()
        let differing = names.filter { expected[$0]?.canonical != answered[$0]?.canonical }
        let kinds =
            expected["kind"] == nil && answered["kind"] == nil
            ? "" : "\(expected["kind"]?.string ?? "no kind") vs \(answered["kind"]?.string ?? "no kind") "
        return "\(event["kind"]?.string ?? "event"): \(kinds)[\(differing.joined(separator: ", "))]"
    }

    /// The finding of `scenario`: its cause, and the fewest steps that still fail with that cause.
    static func shrunk<Driver: ScenarioDriver>(
        _ scenario: ScenarioCase, index: Int, _ machine: ScenarioMachine, _ failure: Failure, seed: UInt64,
        until deadline: Double = .infinity, clock: () -> Double = { 0 },
        outside: (ScenarioCase) -> String? = { _ in nil }, driver: inout Driver
    ) -> ScenarioFinding {
        guard case .story(let createdAt, let steps) = scenario.body else {
            return ScenarioFinding(
                machine: machine, index: index, cause: failure.cause, occurrences: 1, originalSteps: 0,
                shrunk: scenario, difference: failure.line)
        }
        let id = "\(machine.rawValue)/random-seed-\(seed)-scenario-\(index)-shrunk"
        var best = (case: scenario, failure: failure)
        var configuration = scenario.configuration
        func attempt(
            _ events: [(Int64, JSONValue)], configuration: JSONValue? = nil, driver: inout Driver
        ) -> Bool {
            guard
                let candidate = ScenarioGenerator.answered(
                    machine, id: id, summary: "generated, shrunk: \(failure.cause)",
                    configuration: configuration ?? best.case.configuration, createdAt: createdAt, events: events),
                // A smaller candidate stays within the profile (a number shrunk off the time unit is not).
                outside(candidate) == nil,
                let found = Self.failure(of: candidate, machine, driver: &driver), found.cause == failure.cause
            else { return false }
            best = (candidate, found)
            return true
        }
        // Everything after the failing step is cut first: it cannot have caused it.
        var events = steps.prefix(max(failure.step + 1, 1)).map { ($0.now, $0.event) }
        var tries = 1
        guard attempt(events, driver: &driver) else {
            return ScenarioFinding(
                machine: machine, index: index, cause: failure.cause, occurrences: 1, originalSteps: steps.count,
                shrunk: scenario, difference: failure.line)
        }
        // Then chunks of steps, halving (ddmin), each cut kept if the same cause remains.
        func cutSteps(driver: inout Driver) {
            var chunk = max(1, events.count / 2)
            // Each try replays the whole candidate: on a long history, time runs out before tries do.
            while tries < shrinkAttempts, clock() < deadline {
                var start = 0
                var cut = false
                while start < events.count, tries < shrinkAttempts, clock() < deadline {
                    let end = min(events.count, start + chunk)
                    let candidate = Array(events[..<start] + events[end...])
                    tries += 1
                    if !candidate.isEmpty, attempt(candidate, driver: &driver) {
                        events = Array(candidate.prefix(best.failure.step + 1))
                        cut = true
                    } else {
                        start = end
                    }
                }
                if chunk == 1 && !cut { break }
                chunk = max(1, chunk / 2)
            }
        }
        cutSteps(driver: &driver)
        // Then the configuration's numbers, each towards 0 (a queue limit of 1 needs fewer waiters
        // to fill than one of 8), then each event's numbers, then the steps again, until a round
        // makes nothing smaller: a smaller number often lets more steps go.
        var smaller = true
        while smaller, tries < shrinkAttempts, clock() < deadline {
            smaller = false
            for path in configuration.integerPaths where tries < shrinkAttempts && clock() < deadline {
                guard case .integer(let value)? = configuration[path: path] else { continue }
                for candidate in [0, 1, value / 2, value - 1] where candidate >= 0 && candidate < value {
                    let changed = configuration.replacing(path, with: .integer(candidate))
                    tries += 1
                    if attempt(events, configuration: changed, driver: &driver) {
                        (configuration, smaller) = (changed, true)
                        events = Array(events.prefix(best.failure.step + 1))
                        break
                    }
                }
            }
            // Each event's numbers (permits, instants of a deadline, a reconfigure's sizes) but its
            // ticket, towards 1 and 0.
            for index in events.indices where tries < shrinkAttempts && clock() < deadline {
                guard index < events.count else { break }
                for path in events[index].1.integerPaths where path.first != .member("ticket") {
                    guard case .integer(let value)? = events[index].1[path: path] else { continue }
                    for candidate in [0, 1, value / 2] where candidate >= 0 && candidate < value {
                        var changed = events
                        changed[index].1 = events[index].1.replacing(path, with: .integer(candidate))
                        tries += 1
                        if attempt(changed, driver: &driver) {
                            (events, smaller) = (Array(changed.prefix(best.failure.step + 1)), true)
                            break
                        }
                    }
                    guard index < events.count else { break }
                }
            }
            // Then two neighbouring events of one kind made one, their permits summed (three releases
            // of 1 as one of 3, two admitted acquires as one): a state built up in small steps often
            // fails as well built in one, and no single cut or smaller number can remove such a step
            // when the steps after it count on its permits.
            var index = events.count - 2
            while index >= 0, tries < shrinkAttempts, clock() < deadline {
                if index + 1 < events.count, let merged = events[index].1.merged(with: events[index + 1].1) {
                    var changed = events
                    changed[index].1 = merged
                    changed.remove(at: index + 1)
                    tries += 1
                    if attempt(changed, driver: &driver) {
                        (events, smaller) = (Array(changed.prefix(best.failure.step + 1)), true)
                    }
                }
                index -= 1
            }
            if smaller { cutSteps(driver: &driver) }
        }
        return ScenarioFinding(
            machine: machine, index: index, cause: failure.cause, occurrences: 1, originalSteps: steps.count,
            shrunk: best.case, difference: best.failure.line)
    }
}

extension JSONValue {
    /// The paths (member names and array indices) to every integer within the value.
    fileprivate var integerPaths: [[JSONPathElement]] {
        switch self {
        case .integer: [[]]
        case .object(let members):
            members.flatMap { name, value in value.integerPaths.map { [.member(name)] + $0 } }
        case .array(let items):
            items.enumerated().flatMap { index, value in value.integerPaths.map { [.index(index)] + $0 } }
        case .null, .bool, .otherNumber, .string: []
        }
    }

    /// The value at `path`, if there is one.
    fileprivate subscript(path path: [JSONPathElement]) -> JSONValue? {
        guard let first = path.first else { return self }
        switch (first, self) {
        case (.member(let name), .object(let members)):
            return members.first { $0.0 == name }?.1[path: Array(path.dropFirst())]
        case (.index(let index), .array(let items)) where items.indices.contains(index):
            return items[index][path: Array(path.dropFirst())]
        default: return nil
        }
    }

    /// The value with the one at `path` replaced by `value`.
    fileprivate func replacing(_ path: [JSONPathElement], with value: JSONValue) -> JSONValue {
        guard let first = path.first else { return value }
        let rest = Array(path.dropFirst())
        switch (first, self) {
        case (.member(let name), .object(let members)):
            return .object(members.map { $0.0 == name ? ($0.0, $0.1.replacing(rest, with: value)) : $0 })
        case (.index(let index), .array(var items)) where items.indices.contains(index):
            items[index] = items[index].replacing(rest, with: value)
            return .array(items)
        default: return self
        }
    }

    /// This event and `next` as one: two objects of the same `kind` whose members differ only in
    /// `permits` (both integers) and in a `ticket`, the first's kept, with the permits summed (nil
    /// when they differ otherwise, or the sum overflows).
    fileprivate func merged(with next: JSONValue) -> JSONValue? {
        let (first, second) = (objectMembers, next.objectMembers)
        guard first.count == second.count, !first.isEmpty,
            case .string? = first.first(where: { $0.0 == "kind" })?.1,
            case .integer(let a)? = first.first(where: { $0.0 == "permits" })?.1,
            case .integer(let b)? = second.first(where: { $0.0 == "permits" })?.1
        else { return nil }
        let (sum, overflow) = a.addingReportingOverflow(b)
        guard !overflow else { return nil }
        for ((name, value), (otherName, otherValue)) in zip(first, second) {
            guard name == otherName else { return nil }
            if name != "permits", name != "ticket", value != otherValue { return nil }
        }
        return .object(first.map { $0.0 == "permits" ? ($0.0, .integer(sum)) : $0 })
    }

    /// An object's members; none for any other value.
    fileprivate var objectMembers: [(String, JSONValue)] {
        if case .object(let members) = self { return members }
        return []
    }
}

/// One step of a path into a JSON value.
private enum JSONPathElement: Equatable {
    case member(String)
    case index(Int)
}
