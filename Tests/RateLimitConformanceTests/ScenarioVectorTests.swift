import Foundation
import RateLimitConformance
import RateLimitTestSupport
import Testing

private let scenarioFolder = "Spec/vectors/scenarios"

/// The committed scenario file of `machine`, as text.
private func committedText(_ machine: ScenarioMachine) throws -> String {
    try String(contentsOfFile: Repository.path("Spec/vectors/scenarios/\(machine.rawValue).json"), encoding: .utf8)
}

/// The reference, except that every answer's completions come in reverse order.
private struct ReversedCompletions: ScenarioDriver {
    var reference = ReferenceScenarioDriver()

    func make(_ machine: ScenarioMachine, _ configuration: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> ScenarioMade<any ScenarioModel>
    {
        try reference.make(machine, configuration, at: now)
    }

    func apply(_ event: JSONValue, to handle: inout any ScenarioModel, at now: Int64) throws(ConformanceFormatError)
        -> JSONValue
    {
        let answer = try reference.apply(event, to: &handle, at: now)
        guard case .object(let members) = answer else { return answer }
        return .object(
            members.map { name, value in
                name == "completions" ? (name, .array((value.array ?? []).reversed())) : (name, value)
            })
    }

    func drop(_ handle: inout any ScenarioModel) {}
}

@Suite("Scenario vector files (Spec/vectors/scenarios)")
struct ScenarioVectorTests {
    @Test(
        "COMP-2 COMP-4 COMP-5 COMP-6 COMP-7 COMP-8 WQ-1 WQ-2 WQ-3 WQ-4 WQ-5 WQ-6 WQ-7 WQ-8 WQ-9 WQ-12 WQ-14 REG-1 REG-2 REG-3 REG-4 REG-5 REG-6 REG-7 REG-8 REG-9 REG-10 REG-11 REG-12 ADAPT-1 ADAPT-2 ADAPT-10 regenerating the scenario vectors reproduces the committed files byte for byte (make vectors)"
    )
    func regenerationIsByteForByte() throws {
        let files = try ScenarioVectorGenerator.files()
        #expect(files.map(\.machine) == ScenarioMachine.allCases)
        for file in files {
            #expect(
                try committedText(file.machine) == file.json.prettyText,
                "\(file.path) differs from the stories: run `make vectors` and review the diff")
        }
    }

    @Test("Each scenario file validates against scenarios/schema.json and reads back as the cases it was written from")
    func schemaValid() throws {
        let validator = JSONSchemaValidator(root: try Repository.json("\(scenarioFolder)/schema.json"))
        for machine in ScenarioMachine.allCases {
            let json = try JSONValue(parsing: try committedText(machine))
            let violations = validator.violations(of: json)
            #expect(violations.isEmpty, "\(machine.rawValue): \(violations.prefix(5))")
            let read = try ScenarioVectorFile(json: json)
            #expect(read.cases == ScenarioCatalogue.cases(machine))
            #expect(read.machine == machine)
        }
    }

    @Test(
        "The scenario schema refuses an unknown outcome, a zero retry-after, a step without a comment, a ticket of 0 and a clause of another file"
    )
    func schemaCatchesDefects() throws {
        let validator = JSONSchemaValidator(root: try Repository.json("\(scenarioFolder)/schema.json"))
        let good = try JSONValue(parsing: try committedText(.waitQueue)).compactText
        for (from, to) in [
            (#"{"kind":"timedOut"}"#, #"{"kind":"expired"}"#),
            (#""retryAfterNanoseconds":5"#, #""retryAfterNanoseconds":0"#),
            (#","comment":"#, #","remark":"#),
            (#""ticket":1,"#, #""ticket":0,"#),
            (#""clauses":["WQ-1","#, #""clauses":["TB-1","#),
        ] {
            #expect(good.contains(from), "the file has no \(from)")
            let broken = try JSONValue(parsing: good.replacingOccurrences(of: from, with: to))
            #expect(!validator.violations(of: broken).isEmpty, "the schema accepted a file with \(to)")
        }
    }

    @Test("A file whose counts, format version, machine or ids do not match its cases is refused")
    func headerChecked() throws {
        let text = try committedText(.composite)
        let file = try ScenarioVectorFile(json: try JSONValue(parsing: text))
        for (from, to) in [
            ("\"caseCount\": \(file.cases.count)", "\"caseCount\": \(file.cases.count + 1)"),
            ("\"stepCount\": \(file.stepCount)", "\"stepCount\": \(file.stepCount - 1)"),
            ("\"formatVersion\": 1", "\"formatVersion\": 2"),
            ("\"machine\": \"composite\"", "\"machine\": \"wait-queue\""),
            ("\"machine\": \"composite\"", "\"machine\": \"registry\""),
            ("\"caseCount\"", "\"extra\": 1, \"caseCount\""),
        ] {
            #expect(text.contains(from))
            let tampered = try JSONValue(parsing: text.replacingOccurrences(of: from, with: to))
            #expect(throws: ConformanceFormatError.self, "accepted with \(to)") {
                try ScenarioVectorFile(json: tampered)
            }
        }
    }

    @Test(
        "WQ-14 COMP-5 generation names the case and the step where the reference model answers otherwise than the answer written by hand"
    )
    func generationChecksTheModels() throws {
        #expect(try ScenarioVectorGenerator.checked(.composite).1 == [])
        #expect(try ScenarioVectorGenerator.checked(.waitQueue).1 == [])
        #expect(try ScenarioVectorGenerator.checked(.registry).1 == [])
        let composite = try #require(ScenarioCatalogue.cases(.composite).first)
        guard case .story(let createdAt, var steps) = composite.body else {
            Issue.record("the first composite case is a story")
            return
        }
        steps[1].expected = ConformanceEvent.acquire(1).json  // not even a result
        steps[4].expected = RateLimitResult.rejected(retryAfterNanoseconds: 4).json  // the smaller retry-after
        var wrong = composite
        wrong.body = .story(createdAt: createdAt, steps: steps)
        let lines = try wrong.disagreementsWithReference(.composite)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("composite/all-or-nothing step 2 at 0 ns") == true, "\(lines)")
        #expect(
            lines.last?.contains(
                #"expected {"kind":"rejected","retryAfterNanoseconds":4}, answered {"kind":"rejected","retryAfterNanoseconds":74}"#
            ) == true, "\(lines)")
    }

    @Test("WQ-14 the order of outcomes is part of the answer: completions in another order fail, naming the case")
    func orderMatters() {
        var driver = ReversedCompletions()
        let cases = ScenarioCatalogue.cases(.waitQueue)
        let report = CaseRunReport.run(.waitQueue, cases, driver: &driver)
        #expect(report.failures.map(\.id).contains("wait-queue/timeouts-in-order"))
        #expect(report.failures.map(\.id).contains("wait-queue/priorities"))
        #expect(!report.passed)
        var reference = ReferenceScenarioDriver()
        let clean = CaseRunReport.run(.waitQueue, cases, driver: &reference)
        #expect(clean.passed && clean.lines == ["wait-queue: \(cases.count) cases, all as WaitQueue.md says"])
    }

    @Test(
        "Malformed scenarios are refused: an instant that goes back in a wait queue, a ticket used twice, an unknown event"
    )
    func malformedScenarios() throws {
        let configuration = try JSONValue(
            parsing: #"{"strategy": "concurrency", "configuration": {"limit": 1}, "queueLimit": 1}"#)
        guard case .success(var model) = try ScenarioMachine.waitQueue.reference(configuration, at: 5) else {
            Issue.record("the configuration is valid")
            return
        }
        let acquire = try JSONValue(parsing: #"{"kind": "acquire", "ticket": 1, "permits": 1, "priority": "normal"}"#)
        _ = try model.apply(acquire, at: 5)
        #expect(throws: ConformanceFormatError.self) { try model.apply(acquire, at: 6) }
        #expect(throws: ConformanceFormatError.self) { try model.apply(.object([("kind", .string("advance"))]), at: 4) }
        #expect(throws: ConformanceFormatError.self) { try model.apply(.object([("kind", .string("wake"))]), at: 7) }
        #expect(throws: ConformanceFormatError.self) {
            try ScenarioMachine.composite.reference(.object([("limit", .array([]))]), at: 0)
        }
    }

    @Test(
        "REG-1 REG-10 the registry schema refuses an unknown status, a state of another name, an event without its instant and a refusal of another error"
    )
    func registrySchemaCatchesDefects() throws {
        let validator = JSONSchemaValidator(root: try Repository.json("\(scenarioFolder)/schema.json"))
        let good = try JSONValue(parsing: try committedText(.registry)).compactText
        #expect(validator.violations(of: try JSONValue(parsing: good)).isEmpty)
        for (from, to) in [
            (#""to":"limited""#, #""to":"exhausted""#),
            (#""state":"disabled""#, #""state":"paused""#),
            (#","at":20}"#, "}"),
            (#""error":"duplicateRule""#, #""error":"sameRule""#),
            (#""match":"prefix""#, #""match":"suffix""#),
        ] {
            #expect(good.contains(from), "the file has no \(from)")
            let broken = try JSONValue(parsing: good.replacingOccurrences(of: from, with: to))
            #expect(!validator.violations(of: broken).isEmpty, "the schema accepted a file with \(to)")
        }
    }

    @Test(
        "REG-1 a registry refusal is read only in its own form, and an event of the registry is read strictly"
    )
    func registryFormsAreStrict() throws {
        let rule = #"{"match": "any"}"#
        for good in [
            #"{"error": "invalidMaximumKeys"}"#, #"{"error": "emptyKey", "rule": {"match": "exact", "key": ""}}"#,
            #"{"error": "invalidRule", "rule": \#(rule), "field": "queueLimit", "problem": "mustNotBeNegative"}"#,
        ] {
            #expect(try ScenarioRefusal(json: try JSONValue(parsing: good)).json == (try JSONValue(parsing: good)))
        }
        for bad in [
            #"{"error": "invalidMaximumKeys", "rule": \#(rule)}"#, #"{"error": "emptyKey"}"#,
            #"{"error": "invalidRule", "rule": \#(rule)}"#, #"{"error": "tooMany", "rule": \#(rule)}"#,
            #"{"error": "unknownRule", "rule": {"match": "exact"}}"#,
        ] {
            #expect(throws: ConformanceFormatError.self, "read \(bad)") {
                try ScenarioRefusal(json: try JSONValue(parsing: bad))
            }
        }
        let configuration = try JSONValue(
            parsing: #"""
                {"rules": [{"keys": {"match": "any"}, "limit": {"strategy": "concurrency", "configuration": {"limit": 1}},
                            "overflow": {"policy": "reject"}, "warningThreshold": 0}], "maximumKeys": 2}
                """#)
        guard case .success(var model) = try ScenarioMachine.registry.reference(configuration, at: 5) else {
            Issue.record("the configuration is valid")
            return
        }
        for bad in [
            #"{"kind": "tryAcquire", "permits": 1, "priority": "normal"}"#,
            #"{"kind": "throttle", "key": "k", "until": -1}"#,
            #"{"kind": "reconfigure", "key": "k", "limit": {"strategy": "concurrency", "configuration": {"limit": 0}}}"#,
            #"{"kind": "acquire", "key": "k", "ticket": 1, "permits": 1, "priority": "normal", "timeoutNanoseconds": -1}"#,
            #"{"kind": "wake"}"#,
        ] {
            #expect(throws: ConformanceFormatError.self, "applied \(bad)") {
                try model.apply(try JSONValue(parsing: bad), at: 6)
            }
        }
        #expect(throws: ConformanceFormatError.self) {
            try ScenarioMachine.registry.reference(.object([("rules", .array([]))]), at: 0)
        }
    }

    @Test(
        "COMP-2 WQ-1 a scan reads the scenario files apart; --vectors runs them, and the Python example answers every scenario as the Spec does"
    )
    func runsFromTheCommand() async throws {
        let scanned = try VectorFiles.scan(directory: Repository.path("Spec/vectors"))
        #expect(
            scanned.scenarios.map(\.path) == [
                "scenarios/adaptive-concurrency.json", "scenarios/adaptive-rate.json", "scenarios/composite.json",
                "scenarios/registry.json", "scenarios/wait-queue.json",
            ])
        let reference = try await runCommand(["--vectors", Repository.path("Spec/vectors"), "--case", "wait-queue"])
        #expect(reference.status == 0, "\(reference.output)")
        #expect(
            reference.output.contains(
                "wait-queue: \(ScenarioCatalogue.cases(.waitQueue).count) cases, all as WaitQueue.md says"))
        let python = try await runCommand(["--exec", Repository.python, "--case", "composite,wait-queue"])
        #expect(python.status == 0, "\(python.output)")
        #expect(
            python.output.contains(
                "composite: \(ScenarioCatalogue.cases(.composite).count) cases, all as CompositeLimit.md says"))
        let buggy = try await runCommand([
            "--exec", "\(Repository.python) --bug queue-newest-first", "--case", "wait-queue",
        ])
        #expect(buggy.status == 1, "\(buggy.output)")
        #expect(buggy.output.contains("DIFF wait-queue/fifo-and-late-wake-up: step 4 at 10 ns"), "\(buggy.output)")
        let undeclared = try await runCommand([
            "--exec", "python3 Tests/RateLimitConformanceTests/Fixtures/retry_after_only.py", "--case", "composite",
        ])
        #expect(
            undeclared.output.contains(
                "composite: not run (the implementation does not declare the composite extension)"),
            "\(undeclared.output)")
    }

    @Test(
        "ADAPT-1 ADAPT-6 ADAPT-12 the Python example answers the adaptive scenarios as the Spec does, and its two adaptive bugs are caught at the step that shows them"
    )
    func adaptiveFromTheCommand() async throws {
        let python = try await runCommand(["--exec", Repository.python, "--case", "adaptive-rate,adaptive-concurrency"])
        #expect(python.status == 0, "\(python.output)")
        for machine in [ScenarioMachine.adaptiveRate, .adaptiveConcurrency] {
            #expect(
                python.output.contains(
                    "\(machine.rawValue): \(ScenarioCatalogue.cases(machine).count) cases, all as AdaptiveLimits.md says"
                ),
                "\(python.output)")
        }
        let noCoolDown = try await runCommand([
            "--exec", "\(Repository.python) --bug adaptive-no-cool-down", "--case", "adaptive-rate",
        ])
        #expect(noCoolDown.status == 1)
        #expect(noCoolDown.output.contains("DIFF adaptive-rate/cool-down: step 2 at 59 ns"), "\(noCoolDown.output)")
        let everySample = try await runCommand([
            "--exec", "\(Repository.python) --bug vegas-every-sample", "--case", "adaptive-concurrency",
        ])
        #expect(everySample.status == 1)
        #expect(
            everySample.output.contains("DIFF adaptive-concurrency/queue-estimate: step 2 at 150 ns"),
            "\(everySample.output)")
    }

    @Test("ADAPT-1 an adaptive scenario refuses a malformed configuration or event as a format error, not an answer")
    func adaptiveFormErrors() throws {
        #expect(throws: ConformanceFormatError.self) {
            try ScenarioMachine.adaptiveRate.reference(.object([("periodNanoseconds", .integer(1))]), at: 0)
        }
        let fields = JSONValue.object(
            [
                ("maximumLimit", 4), ("initialLimit", 2), ("minimumLimit", 1), ("alpha", 2), ("beta", 4),
                ("decreasePercent", 10), ("coolDownNanoseconds", 0), ("baselineWindowNanoseconds", 10),
            ].map { ($0.0, JSONValue.integer($0.1)) })
        guard case .success(var model) = try ScenarioMachine.adaptiveConcurrency.reference(fields, at: 0) else {
            Issue.record("a valid configuration is made")
            return
        }
        let malformed: [JSONValue] = [
            .object([("kind", .string("response")), ("status", .integer(200))]),
            .object([("kind", .string("failure")), ("extra", .integer(1))]),
            .object([("kind", .string("acquire")), ("permits", .integer(1))]),
            .object([
                ("kind", .string("response")), ("status", .integer(200)), ("latencyNanoseconds", .integer(1)),
                ("inFlight", .integer(1)), ("stated", .object([("permits", .integer(1))])),
            ]),
        ]
        for event in malformed {
            #expect(throws: ConformanceFormatError.self, "\(event.compactText)") { try model.apply(event, at: 1) }
        }
        // A value out of range is not malformed: the machine answers it invalid (ADAPT-1).
        let invalid = try model.apply(
            .object([
                ("kind", .string("response")), ("status", .integer(-1)), ("latencyNanoseconds", .integer(0)),
                ("inFlight", .integer(0)),
            ]), at: 1)
        #expect(invalid["kind"]?.string == "invalid" && invalid["field"]?.string == "status")
    }
}
