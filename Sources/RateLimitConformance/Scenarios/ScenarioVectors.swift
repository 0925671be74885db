import RateLimitCore

// The scenario vectors of Spec/vectors/scenarios/: the machines beyond the strategies
// (composite limits, the wait queue, the registry), one file per machine. A scenario is one
// machine made from a configuration at `createdAt`, and ordered steps: an event at an instant and
// the answer worked out by hand from the Spec, with a comment saying what the step checks.
// Answers are compared exactly (objects member by member in any order, arrays in order): the
// conformance levels of CONF-3 judge the strategies' decisions, not these machines'.
// Spec/vectors/scenarios/README.md describes the format; its schema.json validates it.

/// A machine the scenario vectors cover, by the name the files and the protocol use.
package enum ScenarioMachine: String, CaseIterable, Hashable, Sendable {
    case composite
    case waitQueue = "wait-queue"
    case registry
    case adaptiveRate = "adaptive-rate"
    case adaptiveConcurrency = "adaptive-concurrency"

    /// The Spec file whose clauses the machine's answers follow.
    package var specFile: String {
        switch self {
        case .composite: "CompositeLimit.md"
        case .waitQueue: "WaitQueue.md"
        case .registry: "Registry.md"
        case .adaptiveRate, .adaptiveConcurrency: "AdaptiveLimits.md"
        }
    }
}

/// How the Spec refuses a machine's configuration: `{"field", "problem", "maximum"}` as an
/// `invalid` result names it (CORE-3), or, for a registry, `{"error", "rule", ...}` (REG-1).
package struct ScenarioRefusal: Error, Hashable, Sendable {
    package var json: JSONValue

    /// The refusal of a strategy's input error: its field, problem and maximum.
    package init(_ error: RateLimitInputError) {
        guard case .object(let members) = RateLimitResult.invalid(error).json else {
            json = .null
            return
        }
        json = .object(members.filter { $0.0 != "kind" })
    }

    /// A refusal read from a file or an implementation, checked to be one of the two forms.
    ///
    /// - Throws: ``ConformanceFormatError`` naming what is malformed.
    package init(json: JSONValue) throws(ConformanceFormatError) {
        if json["error"] != nil {
            try RegistryScenario.checkRefusal(json)
            self.json = json
            return
        }
        self.json = try Self.inputError(json)
    }

    /// The field, problem and maximum of an input error's refusal, read as an `invalid` result reads.
    private static func inputError(_ json: JSONValue) throws(ConformanceFormatError) -> JSONValue {
        let probe: JSONValue
        switch json {
        case .object(let members): probe = .object([("kind", .string("invalid"))] + members)
        case .null, .bool, .integer, .otherNumber, .string, .array: probe = json
        }
        guard case .invalid(let error) = try RateLimitResult(json: probe) else {
            throw ConformanceFormatError("a refusal names a field and a problem, got \(json.compactText)")
        }
        return ScenarioRefusal(error).json
    }
}

/// A machine's answers to its events, as the Spec says (the reference model), on JSON forms.
package protocol ScenarioModel: Sendable {
    /// The answer to `event` at `now`.
    ///
    /// - Throws: ``ConformanceFormatError`` when `event` is not an event of the machine, or
    ///   breaks a rule of the format (an instant earlier than the previous one, a ticket used twice).
    mutating func apply(_ event: JSONValue, at now: Int64) throws(ConformanceFormatError) -> JSONValue
}

extension ScenarioMachine {
    /// The reference model of a scenario made from `configuration` at `now`, or the refusal the
    /// Spec gives that configuration (CORE-3).
    ///
    /// - Throws: ``ConformanceFormatError`` for a malformed configuration.
    package func reference(_ configuration: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> Result<any ScenarioModel, ScenarioRefusal>
    {
        switch self {
        case .composite: try CompositeScenario.make(configuration, at: now).mapError(ScenarioRefusal.init)
        case .waitQueue: try WaitQueueScenario.make(configuration, at: now).mapError(ScenarioRefusal.init)
        case .registry: try RegistryScenario.make(configuration, at: now)
        case .adaptiveRate:
            try AdaptiveScenario<AdaptiveRate>.make(configuration, at: now).mapError(ScenarioRefusal.init)
        case .adaptiveConcurrency:
            try AdaptiveScenario<AdaptiveConcurrency>.make(configuration, at: now).mapError(ScenarioRefusal.init)
        }
    }
}

// MARK: - Comparing answers

extension JSONValue {
    /// The value with every object's members sorted by name (at every depth): two answers are the
    /// same when their canonical forms are equal, whatever order their members came in.
    package var canonical: JSONValue {
        switch self {
        case .array(let items): .array(items.map(\.canonical))
        case .object(let members): .object(members.map { ($0.0, $0.1.canonical) }.sorted { $0.0 < $1.0 })
        case .null, .bool, .integer, .otherNumber, .string: self
        }
    }
}

// MARK: - The file

/// One step of a scenario: at `now`, `event` must be answered `expected`.
package struct ScenarioStep: Hashable, Sendable {
    package var now: Int64
    package var event: JSONValue
    package var expected: JSONValue
    /// What the step checks, in a few words.
    package var comment: String

    package var json: JSONValue {
        .object([("now", .integer(now)), ("event", event), ("expect", expected), ("comment", .string(comment))])
    }
}

/// A scenario, or a configuration the Spec refuses: a case of a scenario file.
package struct ScenarioCase: Hashable, Sendable {
    package enum Body: Hashable, Sendable {
        /// A machine made at `createdAt`, then the steps in order.
        case story(createdAt: Int64, steps: [ScenarioStep])
        /// Making the machine MUST fail with this refusal.
        case refusal(ScenarioRefusal)
    }

    /// Stable identifier: `<machine>/<name>`.
    package var id: String
    package var summary: String
    /// The Spec clauses the case was written for.
    package var clauses: [String]
    package var configuration: JSONValue
    package var body: Body

    package var stepCount: Int {
        if case .story(_, let steps) = body { return steps.count }
        return 0
    }

    package var json: JSONValue {
        let head: [(String, JSONValue)] = [
            ("id", .string(id)), ("description", .string(summary)), ("clauses", .array(clauses.map(JSONValue.string))),
            ("configuration", configuration),
        ]
        switch body {
        case .story(let createdAt, let steps):
            return .object(head + [("createdAt", .integer(createdAt)), ("steps", .array(steps.map(\.json)))])
        case .refusal(let refusal):
            return .object(head + [("expect", refusal.json)])
        }
    }

    package init(
        id: String, summary: String, clauses: [String], configuration: JSONValue, body: Body
    ) {
        self.id = id
        self.summary = summary
        self.clauses = clauses
        self.configuration = configuration
        self.body = body
    }

    package init(json: JSONValue) throws(ConformanceFormatError) {
        guard let id = json["id"]?.string, let summary = json["description"]?.string,
            let clauses = json["clauses"]?.array?.compactMap(\.string), let configuration = json["configuration"]
        else {
            throw ConformanceFormatError(
                "a scenario case needs string \"id\" and \"description\", \"clauses\" and \"configuration\"")
        }
        if let expect = json["expect"] {
            guard json.keys.sorted() == ["clauses", "configuration", "description", "expect", "id"] else {
                throw ConformanceFormatError("refusal \(id): unexpected members \(json.keys)")
            }
            let refusal: ScenarioRefusal
            do { refusal = try ScenarioRefusal(json: expect) } catch {
                throw ConformanceFormatError("refusal \(id): \(error.message)")
            }
            self.init(id: id, summary: summary, clauses: clauses, configuration: configuration, body: .refusal(refusal))
            return
        }
        guard json.keys.sorted() == ["clauses", "configuration", "createdAt", "description", "id", "steps"],
            let createdAt = json["createdAt"]?.int64, createdAt >= 0, let values = json["steps"]?.array
        else {
            throw ConformanceFormatError(
                "scenario \(id): a story has exactly id, description, clauses, configuration, createdAt (an instant) and steps"
            )
        }
        var steps: [ScenarioStep] = []
        for value in values {
            guard value.keys.sorted() == ["comment", "event", "expect", "now"], let now = value["now"]?.int64, now >= 0,
                let event = value["event"], let expected = value["expect"], let comment = value["comment"]?.string
            else {
                throw ConformanceFormatError(
                    "scenario \(id) step \(steps.count + 1): a step has exactly now (an instant), event, expect and comment"
                )
            }
            steps.append(ScenarioStep(now: now, event: event, expected: expected, comment: comment))
        }
        self.init(
            id: id, summary: summary, clauses: clauses, configuration: configuration,
            body: .story(createdAt: createdAt, steps: steps))
    }

    /// Where the reference model answers otherwise than the case, one line per step (`<id> step 3
    /// at 10 ns {...}: the case expects {...}, the reference model answers {...}`).
    ///
    /// - Throws: ``ConformanceFormatError`` when the case is malformed for its machine.
    package func disagreementsWithReference(_ machine: ScenarioMachine) throws(ConformanceFormatError) -> [String] {
        var driver = ReferenceScenarioDriver()
        return try differences(machine, driver: &driver).map { "\(id) \($0) (the reference model's answer)" }
    }

    /// Runs the case on `driver`'s machine and compares: one line per difference, empty when every
    /// answer is the case's. A driver that fails to answer ends the case with its error.
    package func differences<Driver: ScenarioDriver>(_ machine: ScenarioMachine, driver: inout Driver)
        throws(ConformanceFormatError) -> [String]
    {
        let made = try driver.make(machine, configuration, at: createdAtOrZero)
        switch (body, made) {
        case (.refusal(let expected), .refused(let refusal)):
            return expected.json.canonical == refusal.json.canonical
                ? [] : ["refused with \(refusal.json.compactText), expected \(expected.json.compactText)"]
        case (.refusal(let expected), .made(var handle)):
            try driver.drop(&handle)
            return ["accepted a configuration the Spec refuses with \(expected.json.compactText)"]
        case (.story, .refused(let refusal)):
            return ["refused the configuration with \(refusal.json.compactText)"]
        case (.story(_, let steps), .made(var handle)):
            var lines: [String] = []
            for (index, step) in steps.enumerated() {
                let answer = try driver.apply(step.event, to: &handle, at: step.now)
                if answer.canonical != step.expected.canonical {
                    lines.append(
                        "step \(index + 1) at \(step.now) ns \(step.event.compactText): expected \(step.expected.compactText), answered \(answer.compactText)"
                    )
                }
            }
            try driver.drop(&handle)
            return lines
        }
    }

    private var createdAtOrZero: Int64 {
        if case .story(let createdAt, _) = body { return createdAt }
        return 0
    }
}

/// The vectors of one machine.
package struct ScenarioVectorFile: Hashable, Sendable {
    package static let format = "ratelimit-scenario-vectors"
    package static let formatVersion: Int64 = 1

    package var machine: ScenarioMachine
    package var generator: String
    package var cases: [ScenarioCase]

    package init(machine: ScenarioMachine, generator: String, cases: [ScenarioCase]) {
        self.machine = machine
        self.generator = generator
        self.cases = cases
    }

    /// Where the file lies under `Spec/vectors/`.
    package var path: String { "scenarios/\(machine.rawValue).json" }
    package var stepCount: Int { cases.reduce(0) { $0 + $1.stepCount } }

    package static func declaresFormat(_ json: JSONValue) -> Bool { json["format"]?.string == format }

    package var json: JSONValue {
        .object([
            ("format", .string(Self.format)), ("formatVersion", .integer(Self.formatVersion)),
            ("generator", .string(generator)), ("machine", .string(machine.rawValue)),
            ("caseCount", .integer(Int64(cases.count))), ("stepCount", .integer(Int64(stepCount))),
            ("cases", .array(cases.map(\.json))),
        ])
    }

    /// Reads a scenario file and checks its header: format, version, machine and the counts.
    package init(json: JSONValue) throws(ConformanceFormatError) {
        guard Self.declaresFormat(json) else {
            throw ConformanceFormatError("not a scenario vector file: format must be \"\(Self.format)\"")
        }
        guard json["formatVersion"]?.int64 == Self.formatVersion else {
            throw ConformanceFormatError(
                "unsupported formatVersion \(json["formatVersion"]?.compactText ?? "missing") (this harness reads \(Self.formatVersion))"
            )
        }
        let allowed = ["format", "formatVersion", "generator", "machine", "caseCount", "stepCount", "cases"]
        if let unknown = json.keys.first(where: { !allowed.contains($0) }) {
            throw ConformanceFormatError("unknown member \"\(unknown)\" in a scenario vector file")
        }
        guard let name = json["machine"]?.string, let machine = ScenarioMachine(rawValue: name) else {
            throw ConformanceFormatError(
                "machine must be one of \(ScenarioMachine.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let generator = json["generator"]?.string else { throw ConformanceFormatError("missing generator") }
        guard let values = json["cases"]?.array else { throw ConformanceFormatError("cases must be an array") }
        var cases: [ScenarioCase] = []
        var seen: Set<String> = []
        for value in values {
            let read = try ScenarioCase(json: value)
            guard read.id.hasPrefix(name + "/") else {
                throw ConformanceFormatError("case id \(read.id) does not start with \(name)/")
            }
            guard seen.insert(read.id).inserted else { throw ConformanceFormatError("duplicate case id \(read.id)") }
            cases.append(read)
        }
        guard !cases.isEmpty else { throw ConformanceFormatError("a scenario vector file with no case") }
        self.init(machine: machine, generator: generator, cases: cases)
        guard json["caseCount"]?.int64 == Int64(cases.count), json["stepCount"]?.int64 == Int64(stepCount) else {
            throw ConformanceFormatError(
                "caseCount \(json["caseCount"]?.compactText ?? "missing") and stepCount \(json["stepCount"]?.compactText ?? "missing") but the file holds \(cases.count) cases and \(stepCount) steps"
            )
        }
    }
}

// MARK: - Drivers

/// A machine made from a configuration, or the implementation's refusal of it.
package enum ScenarioMade<Handle> {
    case made(Handle)
    case refused(ScenarioRefusal)
}

/// What runs scenarios: the reference model, or an implementation over the protocol.
package protocol ScenarioDriver {
    associatedtype Handle
    /// Makes `machine` from `configuration` at `now`.
    mutating func make(_ machine: ScenarioMachine, _ configuration: JSONValue, at now: Int64)
        throws(ConformanceFormatError) -> ScenarioMade<Handle>
    /// The answer to `event` at `now`.
    mutating func apply(_ event: JSONValue, to handle: inout Handle, at now: Int64) throws(ConformanceFormatError)
        -> JSONValue
    /// Done with the machine.
    mutating func drop(_ handle: inout Handle) throws(ConformanceFormatError)
}

/// The Spec's answers: the reference models.
package struct ReferenceScenarioDriver: ScenarioDriver {
    /// Only so that the type is not zero-sized. Swift 6.3 passes a zero-sized `inout` argument as an
    /// undefined address (nothing is read or written through it), and under ThreadSanitizer the
    /// closure in ``CaseRunReport/run(_:_:driver:)`` reports its inout access to that address to the
    /// runtime, which crashed (SEGV in `__tsan::MemoryAccess`) computing its shadow memory.
    private var notZeroSized: UInt8 = 0

    package init() {}

    package func make(_ machine: ScenarioMachine, _ configuration: JSONValue, at now: Int64)
        throws(ConformanceFormatError) -> ScenarioMade<any ScenarioModel>
    {
        switch try machine.reference(configuration, at: now) {
        case .success(let model): .made(model)
        case .failure(let error): .refused(error)
        }
    }

    package func apply(_ event: JSONValue, to handle: inout any ScenarioModel, at now: Int64)
        throws(ConformanceFormatError) -> JSONValue
    {
        try handle.apply(event, at: now)
    }

    package func drop(_ handle: inout any ScenarioModel) {}
}

// MARK: - Generation

/// Turns the hand-written scenarios into the scenario files, checking the reference models
/// against every answer.
package enum ScenarioVectorGenerator {
    /// Bumped whenever the generated bytes change for a reason other than the cases.
    package static let version = "swift-rate-limit scenario vector generator 1"

    /// Every machine's file.
    ///
    /// - Throws: ``ConformanceFormatError`` naming every case and step where a reference model
    ///   answers otherwise than the answer written by hand.
    package static func files() throws(ConformanceFormatError) -> [ScenarioVectorFile] {
        var files: [ScenarioVectorFile] = []
        var disagreements: [String] = []
        for machine in ScenarioMachine.allCases {
            let (file, lines) = try checked(machine)
            files.append(file)
            disagreements += lines
        }
        guard disagreements.isEmpty else {
            throw ConformanceFormatError(
                "the reference models disagree with \(disagreements.count) hand-written scenario answer\(disagreements.count == 1 ? "" : "s"):\n"
                    + disagreements.joined(separator: "\n"))
        }
        return files
    }

    /// A machine's file, and every place where its reference model answers otherwise than the case.
    package static func checked(_ machine: ScenarioMachine) throws(ConformanceFormatError) -> (
        ScenarioVectorFile, [String]
    ) {
        let cases = ScenarioCatalogue.cases(machine)
        var seen: Set<String> = []
        var disagreements: [String] = []
        for scenario in cases {
            guard scenario.id.hasPrefix(machine.rawValue + "/"), seen.insert(scenario.id).inserted else {
                throw ConformanceFormatError("scenario id \(scenario.id) is repeated or not under \(machine.rawValue)/")
            }
            disagreements += try scenario.disagreementsWithReference(machine)
        }
        return (ScenarioVectorFile(machine: machine, generator: version, cases: cases), disagreements)
    }
}

// MARK: - Running

/// How an implementation answered cases judged exactly (the HTTP vectors, a machine's scenarios):
/// each case is answered as the vectors say, or differs.
package struct CaseRunReport: Sendable {
    /// A case whose answers differ, each difference (or why there is no answer).
    package struct Failure: Sendable {
        package var id: String
        package var differences: [String]
    }

    /// What ran (`http`, `wait-queue`, ...), and the Spec file the answers follow.
    package var label: String
    package var specFile: String
    package var cases: Int
    package var failures: [Failure]
    /// Why the cases did not run (the implementation does not declare the extension), if so.
    package var notRun: String?
    /// The cases not sent because they lie outside the implementation's profile (CONF-7), each
    /// with the first reason.
    package var outsideProfile: [Failure] = []
    /// Cases that differ beyond those listed in ``failures`` (a run that lists only the first few).
    package var unlisted = 0
    /// What the cases did not check, as the implementation declared (CONF-7): lines for reports.
    package var notChecked: [String] = []

    package var passed: Bool { notRun != nil || (failures.isEmpty && unlisted == 0) }
    /// Cases that differ, listed or not.
    package var differing: Int { failures.count + unlisted }

    /// This report without `cases`, which lie outside the profile for the reasons `outside` gives:
    /// they are counted as not checked, not run.
    package static func within(
        _ cases: [ScenarioCase], outside: (ScenarioCase) -> String?, run: ([ScenarioCase]) -> CaseRunReport
    ) -> CaseRunReport {
        var inside: [ScenarioCase] = []
        var skipped: [Failure] = []
        for item in cases {
            if let reason = outside(item) {
                skipped.append(Failure(id: item.id, differences: [reason]))
            } else {
                inside.append(item)
            }
        }
        var report = run(inside)
        report.outsideProfile = skipped
        return report
    }

    /// After this many cases in a row without an answer, the rest are not asked (as CONF-11).
    package static let consecutiveFailuresAllowed = 3

    /// Runs `cases`: `differences` answers each one's differences from the vectors, or throws when
    /// the implementation gave no answer. After ``consecutiveFailuresAllowed`` cases in a row
    /// without an answer, the rest fail unasked.
    package static func run<Case>(
        label: String, specFile: String, _ cases: [Case], id: (Case) -> String,
        differences: (Case) throws(ConformanceFormatError) -> [String]
    ) -> CaseRunReport {
        var failures: [Failure] = []
        var unanswered = 0
        for item in cases {
            guard unanswered < consecutiveFailuresAllowed else {
                failures.append(
                    Failure(id: id(item), differences: ["not run: \(unanswered) cases in a row had no answer"]))
                continue
            }
            do {
                let found = try differences(item)
                unanswered = 0
                if !found.isEmpty { failures.append(Failure(id: id(item), differences: found)) }
            } catch {
                unanswered += 1
                failures.append(Failure(id: id(item), differences: ["no answer: \(error.message)"]))
            }
        }
        return CaseRunReport(label: label, specFile: specFile, cases: cases.count, failures: failures, notRun: nil)
    }

    /// Runs `machine`'s scenarios on `driver`.
    package static func run<Driver: ScenarioDriver>(
        _ machine: ScenarioMachine, _ cases: [ScenarioCase], driver: inout Driver
    ) -> CaseRunReport {
        run(label: machine.rawValue, specFile: machine.specFile, cases, id: \.id) {
            scenario throws(ConformanceFormatError) in try scenario.differences(machine, driver: &driver)
        }
    }

    /// The report of cases that were not run, and why.
    package static func notRun(label: String, specFile: String, _ reason: String) -> CaseRunReport {
        CaseRunReport(label: label, specFile: specFile, cases: 0, failures: [], notRun: reason)
    }

    /// The report's line, then one line per differing case (its first difference and how many more).
    package var lines: [String] {
        if let notRun { return ["\(label): not run (\(notRun))"] }
        let skipped =
            notChecked.map { "NOT CHECKED \(label): \($0)" }
            + outsideProfile.map { "NOT CHECKED \($0.id): outside the profile: \($0.differences.first ?? "")" }
        if differing == 0 { return ["\(label): \(cases) cases, all as \(specFile) says"] + skipped }
        let more = unlisted > 0 ? " (the first \(failures.count) listed)" : ""
        return ["\(label): \(cases) cases, \(cases - differing) as \(specFile) says, \(differing) differ\(more):"]
            + failures.map { failure in
                let more = failure.differences.count > 1 ? " (and \(failure.differences.count - 1) more)" : ""
                return "DIFF \(failure.id): \(failure.differences.first ?? "")\(more)"
            } + skipped
    }

    package var json: JSONValue {
        if let notRun { return .object([("ran", .bool(false)), ("reason", .string(notRun))]) }
        return .object([
            ("ran", .bool(true)), ("cases", .integer(Int64(cases))),
            ("asSpecified", .integer(Int64(cases - differing))), ("differing", .integer(Int64(differing))),
            ("notChecked", .array(notChecked.map(JSONValue.string))),
            (
                "outsideProfile",
                .array(
                    outsideProfile.map {
                        .object([("id", .string($0.id)), ("reason", .string($0.differences.first ?? ""))])
                    })
            ),
            (
                "differ",
                .array(
                    failures.map {
                        .object([("id", .string($0.id)), ("differences", .array($0.differences.map(JSONValue.string)))])
                    })
            ),
        ])
    }
}
