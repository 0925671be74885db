import Foundation
import RateLimitCore

/// An implementation in another process, speaking the JSON-lines protocol of Spec/protocol.md.
/// Any misbehaviour (a crash, a hang, invalid JSON, a missing field, a wrong id, output on
/// stderr) is a ``SubjectFailure`` carrying the line received; the child is then killed and a new
/// one is started for the next case.
package final class ExternalSubject: ConformanceSubject {
    /// The newest protocol version the harness speaks; an implementation answers the version it
    /// speaks, at most the one offered (Spec/protocol.md, "hello").
    package static let protocolVersion: Int64 = 2

    package let command: String
    package let timeout: Double
    /// The version offered in the hello, and the one the implementation answered.
    package let offeredVersion: Int64
    package private(set) var version: Int64 = 1
    private var child: ChildProcess?
    private var counter = 0
    package private(set) var name = "external implementation"
    package private(set) var strategies: Set<String> = []
    private var profiles: [String: ImplementationProfile] = [:]
    /// The optional parts of the protocol the implementation declares in its hello (protocol.md).
    package private(set) var extensions: Set<String> = []
    /// The members of a `feedback` answer the implementation fills, when its hello names them
    /// (`feedbackMembers`); `nil`: all of them.
    package private(set) var feedbackMembers: Set<String>?
    /// The extensions this harness knows: `server-feedback` (the HTTP vectors, `feedback` messages)
    /// and one per machine of the scenario vectors (`scenario` and `step` messages).
    package static let knownExtensions: Set<String> = Set(
        ["server-feedback"] + ScenarioMachine.allCases.map(\.rawValue))
    /// How many times the child had to be started.
    package private(set) var starts = 0
    /// The most requests the harness offers to send ahead of their answers (protocol.md,
    /// "Pipelining"), and the window the implementation accepted (1: one request at a time).
    package let offeredWindow: Int64
    package private(set) var window: Int64 = 1
    /// A request sent or to be sent ahead: what the case will ask, its line, the answer it expects.
    private struct Pending {
        var request: PlannedRequest
        var line: String
        var types: [String]
        var id: String
    }
    /// The requests a case planned and the harness has not sent yet, and those sent whose
    /// answers are not read yet, in order.
    private var planned: ArraySlice<Pending> = []
    private var inFlight: ArraySlice<Pending> = []

    /// The default window offered: small enough that the requests in flight (a few hundred bytes
    /// each) and their answers always fit the pipes' buffers, so neither side can block the other.
    package static let defaultWindow: Int64 = 64

    /// The least time the hello is waited for: starting an interpreter on a loaded 2-core machine
    /// took over a second (the `--timeout 1` tests failed so).
    package static let startupTimeout = 10.0

    package init(
        command: String, timeout: Double, protocolVersion: Int64 = ExternalSubject.protocolVersion,
        window: Int64 = ExternalSubject.defaultWindow
    ) throws(SubjectFailure) {
        self.command = command
        self.timeout = timeout
        offeredVersion = protocolVersion
        offeredWindow = protocolVersion >= 2 ? window : 1
        try start()
    }

    package func profile(for strategy: String) -> ImplementationProfile { profiles[strategy] ?? .full }

    private func start() throws(SubjectFailure) {
        starts += 1
        do {
            child = try ChildProcess(command: command)
        } catch {
            throw SubjectFailure("cannot start \(command): \(error)", kind: .crashed)
        }
        var greeting: [(String, JSONValue)] = [("type", .string("hello")), ("protocol", .integer(offeredVersion))]
        if offeredWindow > 1 { greeting.append(("window", .integer(offeredWindow))) }
        let hello = try exchange(.object(greeting), expecting: ["hello"], id: nil)
        guard let version = hello["protocol"]?.int64, (1...offeredVersion).contains(version) else {
            throw fail(
                "the hello must carry \"protocol\": a version from 1 to \(offeredVersion), the one offered",
                received: hello.compactText)
        }
        guard let implementation = hello["implementation"]?.string, let list = hello["strategies"]?.array else {
            throw fail(
                "the hello must carry a string \"implementation\" and an array \"strategies\"",
                received: hello.compactText)
        }
        var profiles: [String: ImplementationProfile] = [:]
        if let declared = hello["profiles"] {
            guard version >= 2, case .object(let members) = declared else {
                throw fail("\"profiles\" is an object, in a hello of protocol 2", received: hello.compactText)
            }
            for (strategy, json) in members {
                guard list.contains(.string(strategy)) else {
                    throw fail(
                        "a profile for \(strategy), which \"strategies\" does not list", received: hello.compactText)
                }
                do {
                    profiles[strategy] = try ImplementationProfile(json: json)
                } catch {
                    throw fail("the profile of \(strategy): \(error.message)", received: hello.compactText)
                }
            }
        }
        var extensions: Set<String> = []
        if let declared = hello["extensions"] {
            guard version >= 2, let names = declared.array?.compactMap(\.string), names.count == declared.array?.count
            else {
                throw fail(
                    "\"extensions\" is an array of strings, in a hello of protocol 2", received: hello.compactText)
            }
            if let unknown = names.first(where: { !Self.knownExtensions.contains($0) }) {
                throw fail(
                    "unknown extension \"\(unknown)\" (this harness knows \(Self.knownExtensions.sorted().joined(separator: ", ")))",
                    received: hello.compactText)
            }
            extensions = Set(names)
        }
        var feedbackMembers: Set<String>?
        if let declared = hello["feedbackMembers"] {
            guard version >= 2, extensions.contains("server-feedback"),
                let names = declared.array?.compactMap(\.string), names.count == declared.array?.count, !names.isEmpty
            else {
                throw fail(
                    "\"feedbackMembers\" is a non-empty array of strings, in a hello of protocol 2 that declares server-feedback",
                    received: hello.compactText)
            }
            if let unknown = names.first(where: { !FeedbackResult.declarableMembers.contains($0) }) {
                throw fail(
                    "unknown feedback member \"\(unknown)\" (a feedback answer has \(FeedbackResult.declarableMembers.joined(separator: ", ")))",
                    received: hello.compactText)
            }
            feedbackMembers = Set(names)
        }
        var window: Int64 = 1
        if let declared = hello["window"] {
            guard version >= 2, offeredWindow > 1, let accepted = declared.int64, (1...offeredWindow).contains(accepted)
            else {
                throw fail(
                    "\"window\" is an integer from 1 to the \(offeredWindow) offered, in a hello of protocol 2 that offered one",
                    received: hello.compactText)
            }
            window = accepted
        }
        if starts > 1,
            profiles != self.profiles || Set(list.compactMap(\.string)) != strategies || extensions != self.extensions
                || window != self.window || feedbackMembers != self.feedbackMembers
        {
            throw fail(
                "a restarted implementation declared other strategies, profiles, extensions, window or feedback members than at first",
                received: hello.compactText)
        }
        self.version = version
        self.window = window
        self.profiles = profiles
        self.extensions = extensions
        self.feedbackMembers = feedbackMembers
        name = implementation
        strategies = Set(list.compactMap(\.string))
    }

    /// Kills the child after a failure and builds the error; `uncertain` when requests after the
    /// one at hand were already sent and the failure may be theirs.
    private func fail(
        _ message: String, received: String?, kind: SubjectFailure.Kind = .brokeProtocol, uncertain: Bool = false
    ) -> SubjectFailure {
        child?.close(grace: 0)
        child = nil
        (planned, inFlight) = ([], [])
        return SubjectFailure(message, received: received, kind: kind, stepUncertain: uncertain)
    }

    /// Keeps the requests a case will make, to send them ahead within the window.
    package func plan(_ requests: [PlannedRequest], for limiter: inout String) {
        guard window > 1, inFlight.isEmpty else { return }
        planned =
            requests.map { request in
                switch request {
                case .event(let event, let now):
                    Pending(
                        request: request, line: eventMessage(event.json, to: limiter, at: now).compactText,
                        types: ["result"], id: limiter)
                case .refusedReconfigure(let fields, let now):
                    Pending(
                        request: request, line: eventMessage(reconfiguration(fields), to: limiter, at: now).compactText,
                        types: ["result"], id: limiter)
                case .finish:
                    Pending(request: request, line: dropMessage(limiter).compactText, types: ["dropped"], id: limiter)
                }
            }[...]
    }

    /// Sends `message` and returns the answer, which must be an object whose type is one of
    /// `types` and, when `id` is given, whose id is `id`. A request the case planned goes out
    /// with those after it, up to the window, and its answer is the first one not read yet;
    /// any other first reads what is still in flight (a case that stopped early).
    private func exchange(
        _ message: @autoclosure () -> JSONValue, expecting types: [String], id: String?,
        planned request: PlannedRequest? = nil
    ) throws(SubjectFailure) -> JSONValue {
        guard child != nil else { throw SubjectFailure("the implementation is not running", kind: .crashed) }
        if let request, (inFlight.first ?? planned.first)?.request == request, let limiter = id {
            if inFlight.isEmpty || inFlight.count * 2 <= Int(window) {
                // Top up the window in one write.
                var lines: [String] = []
                while Int64(inFlight.count) < window, let next = planned.popFirst(), next.id == limiter {
                    lines.append(next.line)
                    inFlight.append(next)
                }
                if !lines.isEmpty { try transmit(lines.joined(separator: "\n"), sending: lines.count) }
            }
            let expected = inFlight.removeFirst()
            return try receive(expecting: expected.types, id: expected.id)
        }
        planned = []
        while let unread = inFlight.first {
            _ = try receive(expecting: unread.types, id: unread.id)
            inFlight.removeFirst()
        }
        try transmit(message().compactText, sending: 1)
        return try receive(expecting: types, id: id)
    }

    /// Sends `count` lines; nothing may be waiting to be read unless requests were in flight.
    private func transmit(_ lines: String, sending count: Int) throws(SubjectFailure) {
        guard let child else { throw SubjectFailure("the implementation is not running", kind: .crashed) }
        if inFlight.count == count, let extra = child.pendingOutput() {
            throw fail(
                "output nobody asked for arrived before this request (a second answer to the previous one?)",
                received: extra)
        }
        do {
            try child.send(lines)
        } catch {
            // What it said on stderr before it went (a shell's "not found" line) belongs in the
            // message whichever way the end was found: this write, or the next read.
            child.drainErrors()
            throw fail(error.message + Self.stderrSuffix(child), received: nil, kind: .crashed)
        }
    }

    /// `; stderr: …` with the first 500 characters the child wrote to stderr, lines joined by `|`;
    /// empty when it wrote nothing there.
    private static func stderrSuffix(_ child: ChildProcess) -> String {
        child.errorText.isEmpty
            ? ""
            : "; stderr: " + child.errorText.prefix(500).split(whereSeparator: \.isNewline).joined(separator: " | ")
    }

    /// Reads the answer to the oldest request not answered yet.
    private func receive(expecting types: [String], id: String?) throws(SubjectFailure) -> JSONValue {
        guard let child else { throw SubjectFailure("the implementation is not running", kind: .crashed) }
        let line: String
        do {
            // The hello's wait includes starting the process, which a busy machine may take
            // seconds to do: it gets at least `startupTimeout`, whatever --timeout says.
            line = try child.receiveLine(timeout: types == ["hello"] ? max(timeout, Self.startupTimeout) : timeout)
        } catch {
            child.drainErrors()
            let stderr = Self.stderrSuffix(child)
            var partial: String?
            let kind: SubjectFailure.Kind
            switch error {
            case .timeout(_, let text): (partial, kind) = (text.isEmpty ? nil : text, .timedOut)
            case .garbage(_, let text): (partial, kind) = (text, .brokeProtocol)
            case .died: kind = .crashed
            }
            throw fail(error.message + stderr, received: partial, kind: kind)
        }
        if inFlight.isEmpty, let extra = child.pendingOutput() {
            throw fail("answered twice: another line followed the answer \(line)", received: extra)
        }
        child.drainErrors()
        if !child.errorText.isEmpty {
            // Standard error is not ordered with the answers: with later requests sent, any of them may be the cause.
            let text = child.errorText.prefix(500).split(whereSeparator: \.isNewline).joined(separator: " | ")
            throw fail("the implementation wrote to stderr: \(text)", received: line, uncertain: !inFlight.isEmpty)
        }
        let answer: JSONValue
        do {
            answer = try JSONValue(parsing: line)
        } catch {
            throw fail("invalid JSON (\(error.message))", received: line)
        }
        guard let type = answer["type"]?.string else { throw fail("the answer has no string \"type\"", received: line) }
        if type == "error" {
            throw fail(
                "the implementation answered an error: \(answer["message"]?.string ?? "(no message)")", received: line)
        }
        guard types.contains(type) else {
            // A `result` where a `dropped` was due is most often a second answer to an earlier
            // request that arrived late, shifting the answers after it.
            let hint = type == "result" && !types.contains("result") ? " (a second answer to an earlier request?)" : ""
            throw fail(
                "expected a message of type \(types.map { "\"\($0)\"" }.joined(separator: " or ")), got \"\(type)\"\(hint)",
                received: line)
        }
        if let id, answer["id"]?.string != id {
            throw fail(
                "the answer's id is \(answer["id"]?.compactText ?? "missing"), expected \"\(id)\"", received: line)
        }
        return answer
    }

    package func create(_ request: CreateRequest, at now: Int64) throws(SubjectFailure) -> CreateOutcome<String> {
        if child == nil || child?.isRunning == false { try start() }
        counter += 1
        let id = "L\(counter)"
        let answer = try exchange(
            .object([
                ("type", .string("create")), ("id", .string(id)), ("strategy", .string(request.strategy)),
                ("configuration", request.fields), ("now", .integer(now)),
            ]), expecting: ["created", "unsupported", "refused"], id: id)
        switch answer["type"]?.string {
        case "created":
            return .created(id)
        case "unsupported":
            return .unsupported(reason: answer["reason"]?.string ?? "(no reason given)")
        case "refused":
            let error = try inputRefusal(answer)
            return .refused(field: error.field, problem: error.problem)
        default:
            // `exchange` accepts only the types it expects.
            throw fail("expected created, unsupported or refused", received: answer.compactText)
        }
    }

    package func apply(_ event: ConformanceEvent, to limiter: inout String, at now: Int64) throws(SubjectFailure)
        -> RateLimitResult
    {
        try send(event.json, to: limiter, at: now, planned: .event(event, at: now))
    }

    /// A reconfigure to raw fields the Spec refuses goes over the protocol as any reconfigure.
    package func reconfigure(_ limiter: inout String, toRefusedFields fields: JSONValue, at now: Int64)
        throws(SubjectFailure)
        -> RateLimitResult?
    {
        try send(reconfiguration(fields), to: limiter, at: now, planned: .refusedReconfigure(fields, at: now))
    }

    private func reconfiguration(_ fields: JSONValue) -> JSONValue {
        .object([("kind", .string("reconfigure")), ("configuration", fields)])
    }

    private func eventMessage(_ event: JSONValue, to limiter: String, at now: Int64) -> JSONValue {
        .object([("type", .string("event")), ("id", .string(limiter)), ("now", .integer(now)), ("event", event)])
    }

    private func dropMessage(_ limiter: String) -> JSONValue {
        .object([("type", .string("drop")), ("id", .string(limiter))])
    }

    /// Sends the event `event` (its JSON form) to `limiter` at `now` and reads the result.
    private func send(_ event: @autoclosure () -> JSONValue, to limiter: String, at now: Int64, planned: PlannedRequest)
        throws(SubjectFailure) -> RateLimitResult
    {
        let answer = try exchange(
            eventMessage(event(), to: limiter, at: now), expecting: ["result"], id: limiter, planned: planned)
        guard let result = answer["result"] else {
            throw fail("a result message needs \"result\"", received: answer.compactText)
        }
        do {
            return try RateLimitResult(json: result)
        } catch {
            throw fail("malformed result: \(error.message)", received: answer.compactText)
        }
    }

    /// Sends one response of the HTTP vectors (extension `server-feedback`) and reads what the
    /// implementation's server-feedback parsing made of it.
    package func feedback(_ response: FeedbackCase) throws(SubjectFailure) -> FeedbackResult {
        if child == nil || child?.isRunning == false { try start() }
        counter += 1
        let id = "F\(counter)"
        guard case .object(let members) = response.responseJSON else {
            throw SubjectFailure("a response is an object", kind: .brokeProtocol)
        }
        let answer = try exchange(
            .object([("type", .string("feedback")), ("id", .string(id))] + members), expecting: ["feedback"], id: id)
        guard let result = answer["result"] else {
            throw fail("a feedback message needs \"result\"", received: answer.compactText)
        }
        do {
            return try FeedbackResult(json: result)
        } catch {
            throw fail("malformed feedback result: \(error.message)", received: answer.compactText)
        }
    }

    /// Makes a machine of the scenario vectors (extensions `composite`, `wait-queue`, `registry`,
    /// `adaptive-rate`, `adaptive-concurrency`): its id, or
    /// the implementation's refusal of the configuration.
    package func scenario(_ machine: ScenarioMachine, _ configuration: JSONValue, at now: Int64) throws(SubjectFailure)
        -> ScenarioMade<String>
    {
        if child == nil || child?.isRunning == false { try start() }
        counter += 1
        let id = "S\(counter)"
        let answer = try exchange(
            .object([
                ("type", .string("scenario")), ("id", .string(id)), ("machine", .string(machine.rawValue)),
                ("configuration", configuration), ("now", .integer(now)),
            ]), expecting: ["created", "refused"], id: id)
        guard answer["type"]?.string == "refused" else { return .made(id) }
        return .refused(try scenarioRefusal(answer))
    }

    /// The field, problem and maximum of a strategy's `refused` answer, read as an `invalid` result reads.
    private func inputRefusal(_ answer: JSONValue) throws(SubjectFailure) -> RateLimitInputError {
        let probe = JSONValue.object(
            [("kind", .string("invalid"))]
                + answer.keys.filter { $0 != "type" && $0 != "id" }.map { ($0, answer[$0] ?? .null) })
        let parsed = Result { () throws(ConformanceFormatError) in try RateLimitResult(json: probe) }
        switch parsed {
        case .success(.invalid(let error)): return error
        case .success: throw fail("a refusal needs string \"field\" and \"problem\"", received: answer.compactText)
        case .failure(let error):
            throw fail(
                "a refusal needs string \"field\" and \"problem\" (\(error.message))", received: answer.compactText)
        }
    }

    /// The refusal a scenario's `refused` answer carries: its members but `type` and `id`.
    private func scenarioRefusal(_ answer: JSONValue) throws(SubjectFailure) -> ScenarioRefusal {
        let members = JSONValue.object(
            answer.keys.filter { $0 != "type" && $0 != "id" }.map { ($0, answer[$0] ?? .null) })
        do { return try ScenarioRefusal(json: members) } catch {
            throw fail("malformed refusal: \(error.message)", received: answer.compactText)
        }
    }

    /// Sends one step of a scenario and reads the implementation's answer.
    package func step(_ event: JSONValue, of scenario: String, at now: Int64) throws(SubjectFailure) -> JSONValue {
        let answer = try exchange(
            .object([("type", .string("step")), ("id", .string(scenario)), ("now", .integer(now)), ("event", event)]),
            expecting: ["answer"], id: scenario)
        guard let value = answer["answer"] else {
            throw fail("an answer message needs \"answer\"", received: answer.compactText)
        }
        return value
    }

    package func finish(_ limiter: inout String) throws(SubjectFailure) {
        guard let child, child.isRunning else { return }
        _ = try exchange(dropMessage(limiter), expecting: ["dropped"], id: limiter, planned: .finish)
    }

    /// Says goodbye and reaps the child.
    package func close() {
        guard let child else { return }
        try? child.send(JSONValue.object([("type", .string("bye"))]).compactText)
        child.close()
        self.child = nil
    }
}

/// The scenario vectors run over the protocol (`scenario`, `step` and `drop` messages).
package struct ExternalScenarioDriver: ScenarioDriver {
    package let subject: ExternalSubject

    package func make(_ machine: ScenarioMachine, _ configuration: JSONValue, at now: Int64)
        throws(ConformanceFormatError)
        -> ScenarioMade<String>
    {
        do { return try subject.scenario(machine, configuration, at: now) } catch {
            throw ConformanceFormatError(error.description)
        }
    }

    package func apply(_ event: JSONValue, to handle: inout String, at now: Int64) throws(ConformanceFormatError)
        -> JSONValue
    {
        do { return try subject.step(event, of: handle, at: now) } catch {
            throw ConformanceFormatError(error.description)
        }
    }

    package func drop(_ handle: inout String) throws(ConformanceFormatError) {
        do { try subject.finish(&handle) } catch { throw ConformanceFormatError(error.description) }
    }
}
