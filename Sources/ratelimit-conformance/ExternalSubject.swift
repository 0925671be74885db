import Foundation
import RateLimitConformance
import RateLimitCore

/// An implementation in another process, speaking the JSON-lines protocol of Spec/protocol.md.
/// Any misbehaviour (a crash, a hang, invalid JSON, a missing field, a wrong id, output on
/// stderr) is a ``SubjectFailure`` carrying the line received; the child is then killed and a new
/// one is started for the next case.
final class ExternalSubject: ConformanceSubject {
    /// The newest protocol version the harness speaks; an implementation answers the version it
    /// speaks, at most the one offered (Spec/protocol.md, "hello").
    static let protocolVersion: Int64 = 2

    let command: String
    let timeout: Double
    /// The version offered in the hello, and the one the implementation answered.
    let offeredVersion: Int64
    private(set) var version: Int64 = 1
    private var child: ChildProcess?
    private var counter = 0
    private(set) var name = "external implementation"
    private(set) var strategies: Set<String> = []
    private var profiles: [String: ImplementationProfile] = [:]
    /// The optional parts of the protocol the implementation declares in its hello (protocol.md).
    private(set) var extensions: Set<String> = []
    /// The extensions this harness knows: `server-feedback` (the HTTP vectors, `feedback` messages)
    /// and one per machine of the scenario vectors (`scenario` and `step` messages).
    static let knownExtensions: Set<String> = Set(["server-feedback"] + ScenarioMachine.allCases.map(\.rawValue))
    /// How many times the child had to be started.
    private(set) var starts = 0

    init(command: String, timeout: Double, protocolVersion: Int64 = ExternalSubject.protocolVersion)
        throws(SubjectFailure)
    {
        self.command = command
        self.timeout = timeout
        offeredVersion = protocolVersion
        try start()
    }

    func profile(for strategy: String) -> ImplementationProfile { profiles[strategy] ?? .full }

    private func start() throws(SubjectFailure) {
        starts += 1
        do {
            child = try ChildProcess(command: command)
        } catch {
            throw SubjectFailure("cannot start \(command): \(error)", kind: .crashed)
        }
        let hello = try exchange(
            .object([("type", .string("hello")), ("protocol", .integer(offeredVersion))]), expecting: ["hello"], id: nil
        )
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
        if starts > 1,
            profiles != self.profiles || Set(list.compactMap(\.string)) != strategies || extensions != self.extensions
        {
            throw fail(
                "a restarted implementation declared other strategies, profiles or extensions than at first",
                received: hello.compactText)
        }
        self.version = version
        self.profiles = profiles
        self.extensions = extensions
        name = implementation
        strategies = Set(list.compactMap(\.string))
    }

    /// Kills the child after a failure and builds the error.
    private func fail(_ message: String, received: String?, kind: SubjectFailure.Kind = .brokeProtocol)
        -> SubjectFailure
    {
        child?.close(grace: 0)
        child = nil
        return SubjectFailure(message, received: received, kind: kind)
    }

    /// Sends `message` and returns the answer, which must be an object whose type is one of
    /// `types` and, when `id` is given, whose id is `id`.
    private func exchange(_ message: JSONValue, expecting types: [String], id: String?) throws(SubjectFailure)
        -> JSONValue
    {
        guard let child else { throw SubjectFailure("the implementation is not running", kind: .crashed) }
        if let extra = child.pendingOutput() {
            throw fail(
                "output nobody asked for arrived before this request (a second answer to the previous one?)",
                received: extra)
        }
        let line: String
        do {
            try child.send(message.compactText)
            line = try child.receiveLine(timeout: timeout)
        } catch {
            child.drainErrors()
            let stderr =
                child.errorText.isEmpty
                ? ""
                : "; stderr: " + child.errorText.prefix(500).split(whereSeparator: \.isNewline).joined(separator: " | ")
            var partial: String?
            let kind: SubjectFailure.Kind
            switch error {
            case .timeout(_, let text): (partial, kind) = (text.isEmpty ? nil : text, .timedOut)
            case .garbage(_, let text): (partial, kind) = (text, .brokeProtocol)
            case .died: kind = .crashed
            }
            throw fail(error.message + stderr, received: partial, kind: kind)
        }
        if let extra = child.pendingOutput() {
            throw fail("answered twice: another line followed the answer \(line)", received: extra)
        }
        child.drainErrors()
        if !child.errorText.isEmpty {
            let text = child.errorText.prefix(500).split(whereSeparator: \.isNewline).joined(separator: " | ")
            throw fail("the implementation wrote to stderr: \(text)", received: line)
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

    func create(_ request: CreateRequest, at now: Int64) throws(SubjectFailure) -> CreateOutcome<String> {
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
            let error = try refusal(answer)
            return .refused(field: error.field, problem: error.problem)
        default:
            // `exchange` accepts only the types it expects.
            throw fail("expected created, unsupported or refused", received: answer.compactText)
        }
    }

    func apply(_ event: ConformanceEvent, to limiter: inout String, at now: Int64) throws(SubjectFailure)
        -> RateLimitResult
    {
        try send(event.json, to: limiter, at: now)
    }

    /// A reconfigure to raw fields the Spec refuses goes over the protocol as any reconfigure.
    func reconfigure(_ limiter: inout String, toRefusedFields fields: JSONValue, at now: Int64) throws(SubjectFailure)
        -> RateLimitResult?
    {
        try send(.object([("kind", .string("reconfigure")), ("configuration", fields)]), to: limiter, at: now)
    }

    /// Sends the event `event` (its JSON form) to `limiter` at `now` and reads the result.
    private func send(_ event: JSONValue, to limiter: String, at now: Int64) throws(SubjectFailure)
        -> RateLimitResult
    {
        let answer = try exchange(
            .object([
                ("type", .string("event")), ("id", .string(limiter)), ("now", .integer(now)), ("event", event),
            ]), expecting: ["result"], id: limiter)
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
    func feedback(_ response: FeedbackCase) throws(SubjectFailure) -> FeedbackResult {
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

    /// Makes a machine of the scenario vectors (extensions `composite`, `wait-queue`): its id, or
    /// the implementation's refusal of the configuration.
    func scenario(_ machine: ScenarioMachine, _ configuration: JSONValue, at now: Int64) throws(SubjectFailure)
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
        return .refused(try refusal(answer))
    }

    /// The field, problem and maximum of a `refused` answer, read as an `invalid` result reads.
    private func refusal(_ answer: JSONValue) throws(SubjectFailure) -> RateLimitInputError {
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

    /// Sends one step of a scenario and reads the implementation's answer.
    func step(_ event: JSONValue, of scenario: String, at now: Int64) throws(SubjectFailure) -> JSONValue {
        let answer = try exchange(
            .object([("type", .string("step")), ("id", .string(scenario)), ("now", .integer(now)), ("event", event)]),
            expecting: ["answer"], id: scenario)
        guard let value = answer["answer"] else {
            throw fail("an answer message needs \"answer\"", received: answer.compactText)
        }
        return value
    }

    func finish(_ limiter: inout String) throws(SubjectFailure) {
        guard let child, child.isRunning else { return }
        _ = try exchange(
            .object([("type", .string("drop")), ("id", .string(limiter))]), expecting: ["dropped"], id: limiter)
    }

    /// Says goodbye and reaps the child.
    func close() {
        guard let child else { return }
        try? child.send(JSONValue.object([("type", .string("bye"))]).compactText)
        child.close()
        self.child = nil
    }
}

/// The scenario vectors run over the protocol (`scenario`, `step` and `drop` messages).
struct ExternalScenarioDriver: ScenarioDriver {
    let subject: ExternalSubject

    func make(_ machine: ScenarioMachine, _ configuration: JSONValue, at now: Int64) throws(ConformanceFormatError)
        -> ScenarioMade<String>
    {
        do { return try subject.scenario(machine, configuration, at: now) } catch {
            throw ConformanceFormatError(error.description)
        }
    }

    func apply(_ event: JSONValue, to handle: inout String, at now: Int64) throws(ConformanceFormatError) -> JSONValue {
        do { return try subject.step(event, of: handle, at: now) } catch {
            throw ConformanceFormatError(error.description)
        }
    }

    func drop(_ handle: inout String) throws(ConformanceFormatError) {
        do { try subject.finish(&handle) } catch { throw ConformanceFormatError(error.description) }
    }
}
