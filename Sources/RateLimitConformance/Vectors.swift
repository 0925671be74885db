import RateLimitCore

// The vector files of Spec/vectors/: one per strategy, stories of ordered steps sharing one
// limiter, plus configurations the Spec refuses. A hand-written story carries, at every step, the
// answer worked out by hand from the Spec and a comment saying what the step checks; generation
// checks the reference model against those answers. Random stories, drawn from a fixed seed, carry
// the model's answers and are kept apart (`randomStories`). Spec/vectors/README.md describes the
// format; schema.json validates it.

/// One step of a story: at `now`, `event` must be answered `expected`.
public struct VectorStep: Hashable, Sendable {
    public var now: Int64
    public var event: ConformanceEvent
    public var expected: RateLimitResult
    /// What the step checks, in a few words: every step of a hand-written story has one; the steps
    /// of a random story have none.
    public var comment: String?

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("now", .integer(now)), ("event", event.json), ("expect", expected.json)]
        if let comment { members.append(("comment", .string(comment))) }
        return .object(members)
    }
}

/// A `reconfigure` step whose configuration the Spec refuses (CORE-3): the Spec answers
/// `invalid` naming the refusal and changes nothing (CORE-13, CORE-8). It is kept apart from a
/// story's ``VectorStory/steps`` because no ``ConformanceEvent`` can carry a refused
/// configuration; leaving it out changes no other step's answer (CORE-8).
package struct RefusedReconfigureStep: Hashable, Sendable {
    /// How many of the story's ``VectorStory/steps`` come before it.
    package var position: Int
    package var now: Int64
    /// The configuration's fields, every one present, as the file gives them.
    package var configuration: JSONValue
    /// `invalid`, naming the field and problem of the refusal.
    package var expected: RateLimitResult
    package var comment: String?

    package var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("now", .integer(now)),
            ("event", .object([("kind", .string("reconfigure")), ("configuration", configuration)])),
            ("expect", expected.json),
        ]
        if let comment { members.append(("comment", .string(comment))) }
        return .object(members)
    }
}

/// A named sequence of steps on one limiter, with the Spec clauses it checks.
public struct VectorStory: Hashable, Sendable {
    /// Stable identifier: `<strategy>/<name>`.
    public var id: String
    public var summary: String
    /// The clauses the story was written for (none for a random story).
    public var clauses: [String]
    /// The other clauses its steps reach (an admitted acquire reaches X-4 and X-5, a rejection
    /// X-6, a reset X-9, ...); none of them is in ``clauses``.
    public var reaches: [String]
    /// A story drawn at random from a fixed seed, or a shrunk random failure: its answers are the
    /// reference model's and its steps have no comment. A hand-written story's answers were worked
    /// out by hand from the Spec, and generation checks the model against them.
    public var isRandom: Bool
    public var configuration: AnyRateLimitStrategy
    public var createdAt: Int64
    /// The steps, in order, except the reconfigures to refused configurations.
    public var steps: [VectorStep]
    /// The reconfigures to configurations the Spec refuses, each at its position among ``steps``.
    package var refusedReconfigures: [RefusedReconfigureStep] = []

    /// Every clause the story checks: ``clauses``, then ``reaches``.
    public var clausesChecked: [String] { clauses + reaches }

    /// Steps in the file, the reconfigures to refused configurations included.
    package var stepCount: Int { steps.count + refusedReconfigures.count }

    /// The steps as the file writes them, in order.
    var stepsJSON: [JSONValue] {
        var result: [JSONValue] = []
        var refused = refusedReconfigures[...]
        for (position, step) in steps.enumerated() {
            while let next = refused.first, next.position <= position {
                result.append(next.json)
                refused.removeFirst()
            }
            result.append(step.json)
        }
        return result + refused.map(\.json)
    }

    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("description", .string(summary)), ("clauses", .array(clauses.map(JSONValue.string))),
            ("reaches", .array(reaches.map(JSONValue.string))), ("configuration", configuration.json),
            ("createdAt", .integer(createdAt)), ("steps", .array(stepsJSON)),
        ])
    }

    /// Where the reference model disagrees with the story's answers, one line per step (`<id>
    /// step 3 at 10 ns acquire(1): the story expects allowed(0), the reference model answers
    /// rejected(1ns)`); empty when it agrees everywhere.
    package var disagreementsWithReference: [String] {
        var reference = ReferenceLimiter(configuration, at: .generated(createdAt))
        var lines: [String] = []
        var refused = refusedReconfigures[...]
        var number = 0
        func check(_ expected: RateLimitResult, _ answer: RateLimitResult, now: Int64, event: String) {
            number += 1
            guard answer.comparable != expected.comparable else { return }
            lines.append(
                "\(id) step \(number) at \(now) ns \(event): the story expects \(expected.brief), the reference model answers \(answer.brief)"
            )
        }
        func refusedUpTo(_ position: Int) {
            while let next = refused.first, next.position <= position {
                let answer = reference.reconfigure(toFields: next.configuration, at: .generated(next.now))
                check(
                    next.expected, answer, now: next.now,
                    event: "reconfigure(\(next.configuration.compactText))")
                refused.removeFirst()
            }
        }
        for (position, step) in steps.enumerated() {
            refusedUpTo(position)
            check(
                step.expected, reference.apply(step.event, at: .generated(step.now)), now: step.now,
                event: step.event.description)
        }
        refusedUpTo(steps.count)
        return lines
    }
}

/// A configuration the Spec refuses, and the field and problem it must be refused with.
public struct ConfigurationRefusal: Hashable, Sendable {
    public var id: String
    public var summary: String
    public var clauses: [String]
    /// The raw fields (they do not form a valid configuration).
    public var configuration: JSONValue
    public var error: RateLimitInputError

    public var json: JSONValue {
        var expect: [(String, JSONValue)] = [("field", .string(error.field))]
        switch error.problem {
        case .mustBePositive: expect.append(("problem", .string("mustBePositive")))
        case .mustNotBeNegative: expect.append(("problem", .string("mustNotBeNegative")))
        case .exceedsMaximum(let maximum):
            expect += [("problem", .string("exceedsMaximum")), ("maximum", .integer(maximum))]
        case .notWholeNanoseconds: expect.append(("problem", .string("notWholeNanoseconds")))
        case .notSupported: expect.append(("problem", .string("notSupported")))
        }
        return .object([
            ("id", .string(id)), ("description", .string(summary)), ("clauses", .array(clauses.map(JSONValue.string))),
            ("configuration", configuration), ("expect", .object(expect)),
        ])
    }
}

/// The vectors of one strategy.
public struct VectorFile: Hashable, Sendable {
    public static let format = "ratelimit-conformance-vectors"
    /// 2: hand-written stories carry a comment per step and separate `clauses` (written for) from
    /// `reaches`; random stories are kept apart in `randomStories`; a reconfigure may carry a
    /// configuration the Spec refuses. Files of version 1 (regression vectors saved by earlier
    /// versions) are still read.
    public static let formatVersion: Int64 = 2

    public var strategy: String
    public var generator: String
    /// Every story: the hand-written ones first, then the random ones (``VectorStory/isRandom``),
    /// which the file keeps apart in `randomStories`.
    public var stories: [VectorStory]
    public var refusals: [ConfigurationRefusal]

    /// Stories plus refusals: the file's case count.
    public var caseCount: Int { stories.count + refusals.count }
    public var stepCount: Int { stories.reduce(0) { $0 + $1.stepCount } }

    /// The file name under `Spec/vectors/`.
    public var fileName: String { "\(strategy).json" }

    public var json: JSONValue {
        .object([
            ("format", .string(Self.format)), ("formatVersion", .integer(Self.formatVersion)),
            ("generator", .string(generator)), ("strategy", .string(strategy)),
            ("caseCount", .integer(Int64(caseCount))), ("stepCount", .integer(Int64(stepCount))),
            ("stories", .array(stories.filter { !$0.isRandom }.map(\.json))),
            ("randomStories", .array(stories.filter(\.isRandom).map(\.json))),
            ("refusals", .array(refusals.map(\.json))),
        ])
    }

    /// Whether `json` declares itself a vector file (its `format`), whatever its version.
    package static func declaresFormat(_ json: JSONValue) -> Bool { json["format"]?.string == format }

    /// Reads a vector file (format version 2, or 1) and checks its header: format, version, and
    /// that the counts match.
    public init(json: JSONValue) throws(ConformanceFormatError) {
        guard Self.declaresFormat(json) else {
            throw ConformanceFormatError("not a vector file: format must be \"\(Self.format)\"")
        }
        guard let version = json["formatVersion"]?.int64, version == 1 || version == Self.formatVersion else {
            throw ConformanceFormatError(
                "unsupported formatVersion \(json["formatVersion"]?.compactText ?? "missing") (this harness reads 1 and \(Self.formatVersion))"
            )
        }
        let allowed =
            version == 1
            ? ["format", "formatVersion", "generator", "strategy", "caseCount", "stepCount", "stories", "refusals"]
            : [
                "format", "formatVersion", "generator", "strategy", "caseCount", "stepCount", "stories",
                "randomStories",
                "refusals",
            ]
        if let unknown = json.keys.first(where: { !allowed.contains($0) }) {
            throw ConformanceFormatError("unknown member \"\(unknown)\" in a vector file of format version \(version)")
        }
        guard let strategy = json["strategy"]?.string, AnyRateLimitStrategy.identifiers.contains(strategy) else {
            throw ConformanceFormatError("unknown or missing strategy")
        }
        guard let generator = json["generator"]?.string else { throw ConformanceFormatError("missing generator") }
        guard let storyValues = json["stories"]?.array, let refusalValues = json["refusals"]?.array else {
            throw ConformanceFormatError("stories and refusals must be arrays")
        }
        let randomValues: [JSONValue]
        if version == 1 {
            randomValues = []
        } else {
            guard let values = json["randomStories"]?.array else {
                throw ConformanceFormatError("randomStories must be an array")
            }
            randomValues = values
        }
        var stories: [VectorStory] = []
        for value in storyValues {
            stories.append(try Self.story(value, strategy: strategy, version: version, random: false))
        }
        for value in randomValues {
            stories.append(try Self.story(value, strategy: strategy, version: version, random: true))
        }
        var refusals: [ConfigurationRefusal] = []
        for value in refusalValues { refusals.append(try Self.refusal(value)) }
        self.init(strategy: strategy, generator: generator, stories: stories, refusals: refusals)
        guard json["caseCount"]?.int64 == Int64(caseCount) else {
            throw ConformanceFormatError(
                "caseCount \(json["caseCount"]?.compactText ?? "missing") but the file holds \(caseCount) cases")
        }
        guard json["stepCount"]?.int64 == Int64(stepCount) else {
            throw ConformanceFormatError(
                "stepCount \(json["stepCount"]?.compactText ?? "missing") but the stories hold \(stepCount) steps")
        }
    }

    public init(strategy: String, generator: String, stories: [VectorStory], refusals: [ConfigurationRefusal]) {
        self.strategy = strategy
        self.generator = generator
        self.stories = stories
        self.refusals = refusals
    }

    private static func instant(_ value: JSONValue?, _ what: String) throws(ConformanceFormatError) -> Int64 {
        guard let instant = value?.int64, instant >= 0 else {
            throw ConformanceFormatError("\(what) must be an integer instant ≥ 0")
        }
        return instant
    }

    private static func clauses(_ value: JSONValue?, _ what: String) throws(ConformanceFormatError) -> [String] {
        guard let items = value?.array else { throw ConformanceFormatError("\(what) must be an array of strings") }
        var clauses: [String] = []
        for item in items {
            guard let clause = item.string else { throw ConformanceFormatError("\(what) must be an array of strings") }
            clauses.append(clause)
        }
        return clauses
    }

    private static func story(_ json: JSONValue, strategy: String, version: Int64, random: Bool)
        throws(ConformanceFormatError) -> VectorStory
    {
        guard let id = json["id"]?.string, let summary = json["description"]?.string,
            let configuration = json["configuration"], let stepValues = json["steps"]?.array
        else {
            throw ConformanceFormatError(
                "a story needs id, description, clauses, \(version == 1 ? "" : "reaches, ")configuration, createdAt and steps"
            )
        }
        var steps: [VectorStep] = []
        var refused: [RefusedReconfigureStep] = []
        for (index, value) in stepValues.enumerated() {
            let place = "\(id) step \(index + 1)"
            guard let event = value["event"], let expectation = value["expect"] else {
                throw ConformanceFormatError("\(place) needs now, event and expect")
            }
            let comment = value["comment"]?.string
            if version > 1 {
                if value["comment"] != nil, comment == nil {
                    throw ConformanceFormatError("\(place): comment must be a string")
                }
                if !random, comment?.isEmpty ?? true {
                    throw ConformanceFormatError(
                        "\(place): every step of a hand-written story says what it checks (comment)")
                }
            }
            let now = try instant(value["now"], "\(place) now")
            let expected: RateLimitResult
            do {
                expected = try RateLimitResult(json: expectation)
            } catch {
                throw ConformanceFormatError("\(place): \(error.message)")
            }
            do {
                steps.append(
                    VectorStep(
                        now: now, event: try ConformanceEvent(json: event, strategy: strategy), expected: expected,
                        comment: comment))
            } catch let error where error.refusedBySpec != nil && event["kind"]?.string == "reconfigure" {
                // A reconfigure to a configuration the Spec refuses (CORE-13): it must expect `invalid`.
                guard version > 1, case .invalid = expected, let fields = event["configuration"] else {
                    throw ConformanceFormatError(
                        "\(place): \(error.message); a reconfigure to a configuration the Spec refuses must expect invalid naming the refusal"
                    )
                }
                refused.append(
                    RefusedReconfigureStep(
                        position: steps.count, now: now, configuration: fields, expected: expected, comment: comment))
            } catch {
                throw ConformanceFormatError("\(place): \(error.message)")
            }
        }
        let written = try clauses(json["clauses"], "\(id): clauses")
        let reached = version == 1 ? [] : try clauses(json["reaches"], "\(id): reaches")
        let parsed: AnyRateLimitStrategy
        do {
            parsed = try AnyRateLimitStrategy(strategy: strategy, json: configuration, requiringEveryField: true)
        } catch {
            throw ConformanceFormatError("\(id): \(error.message)")
        }
        return VectorStory(
            id: id, summary: summary, clauses: written, reaches: reached, isRandom: random, configuration: parsed,
            createdAt: try instant(json["createdAt"], "\(id) createdAt"), steps: steps, refusedReconfigures: refused)
    }

    private static func refusal(_ json: JSONValue) throws(ConformanceFormatError) -> ConfigurationRefusal {
        guard let id = json["id"]?.string, let summary = json["description"]?.string,
            let configuration = json["configuration"],
            let expect = json["expect"], let field = expect["field"]?.string
        else {
            throw ConformanceFormatError("a refusal needs id, description, clauses, configuration and expect.field")
        }
        let result = try RateLimitResult(
            json: .object([("kind", .string("invalid"))] + (expect.keys.map { ($0, expect[$0] ?? .null) })))
        guard case .invalid(let error) = result else { throw ConformanceFormatError("\(id): bad expect") }
        return ConfigurationRefusal(
            id: id, summary: summary, clauses: try clauses(json["clauses"], "\(id): clauses"),
            configuration: configuration,
            error: RateLimitInputError(field: field, value: nil, problem: error.problem))
    }
}

// MARK: - Generation

/// One step of a story as the catalogue writes it: the event, and for a hand-written story the
/// answer worked out by hand from the Spec and what the step checks.
package struct DraftStep: Sendable {
    package enum Action: Sendable {
        case event(ConformanceEvent)
        /// A reconfigure to these fields, which the Spec refuses (CORE-13).
        case refusedReconfigure(JSONValue)
    }

    package var now: Int64
    package var action: Action
    /// The hand-worked answer; `nil` in a random story, whose answers are the model's.
    package var expected: RateLimitResult?
    package var comment: String?

    package init(_ now: Int64, _ event: ConformanceEvent, _ expected: RateLimitResult, _ comment: String) {
        self.now = now
        self.action = .event(event)
        self.expected = expected
        self.comment = comment
    }

    /// A reconfigure to `fields`, which the Spec refuses: answered `expected` (`invalid`).
    package init(
        _ now: Int64, reconfigureTo fields: [(String, Int64)], _ expected: RateLimitResult, _ comment: String
    ) {
        self.now = now
        self.action = .refusedReconfigure(.object(fields.map { ($0.0, .integer($0.1)) }))
        self.expected = expected
        self.comment = comment
    }

    init(now: Int64, event: ConformanceEvent) {
        self.now = now
        self.action = .event(event)
    }
}

/// A story as written in the catalogue: a hand-written one carries the answers worked out by hand
/// and a comment per step; a random one only events (the reference model supplies its answers).
package struct StoryDraft: Sendable {
    package var name: String
    package var summary: String
    package var clauses: [String]
    package var configuration: AnyRateLimitStrategy
    package var createdAt: Int64
    package var steps: [DraftStep]
    package var isRandom: Bool

    /// A hand-written story: each step is (now, event, the Spec's answer, what it checks).
    package init(
        _ name: String, _ summary: String, clauses: [String], _ configuration: AnyRateLimitStrategy,
        createdAt: Int64 = 0, _ steps: [(Int64, ConformanceEvent, RateLimitResult, String)]
    ) {
        self.init(
            name, summary, clauses: clauses, configuration, createdAt: createdAt,
            steps: steps.map { DraftStep($0.0, $0.1, $0.2, $0.3) })
    }

    /// A hand-written story with steps of any kind (reconfigures to refused configurations too).
    package init(
        _ name: String, _ summary: String, clauses: [String], _ configuration: AnyRateLimitStrategy,
        createdAt: Int64 = 0, steps: [DraftStep]
    ) {
        self.name = name
        self.summary = summary
        self.clauses = clauses
        self.configuration = configuration
        self.createdAt = createdAt
        self.steps = steps
        self.isRandom = false
    }

    /// A random story (or a shrunk random failure): events only, the answers are the model's.
    package init(
        random name: String, _ summary: String, clauses: [String] = [], _ configuration: AnyRateLimitStrategy,
        createdAt: Int64, _ steps: [TraceStep]
    ) {
        self.name = name
        self.summary = summary
        self.clauses = clauses
        self.configuration = configuration
        self.createdAt = createdAt
        self.steps = steps.map { DraftStep(now: $0.now, event: $0.event) }
        self.isRandom = true
    }
}

/// A configuration the catalogue expects the Spec to refuse, and the refusal worked out by hand.
package struct RefusalDraft: Sendable {
    package var name: String
    package var summary: String
    package var configuration: JSONValue
    package var field: String
    package var problem: RateLimitInputError.Problem

    package init(
        _ name: String, _ summary: String, _ fields: [(String, Int64)],
        refusedAs field: String, _ problem: RateLimitInputError.Problem
    ) {
        self.name = name
        self.summary = summary
        self.configuration = .object(fields.map { ($0.0, .integer($0.1)) })
        self.field = field
        self.problem = problem
    }
}

/// Turns the catalogue into vector files: the hand-worked answers, checked against the reference
/// model, and the model's answers for random stories.
package enum VectorGenerator {
    /// Bumped whenever the generated bytes change for a reason other than the catalogue.
    package static let version = "swift-rate-limit vector generator 2"

    /// Every strategy's vector file, in the order of ``AnyRateLimitStrategy/identifiers``.
    ///
    /// - Throws: ``ConformanceFormatError`` naming every story and step where the reference
    ///   model disagrees with the answer worked out by hand.
    package static func files() throws(ConformanceFormatError) -> [VectorFile] {
        var files: [VectorFile] = []
        for strategy in AnyRateLimitStrategy.identifiers { files.append(try file(strategy)) }
        return files
    }

    /// The vector file of `strategy`.
    ///
    /// - Throws: ``ConformanceFormatError`` naming every story and step where the reference
    ///   model disagrees with the answer worked out by hand.
    package static func file(_ strategy: String) throws(ConformanceFormatError) -> VectorFile {
        let (file, disagreements) = try checked(strategy)
        guard disagreements.isEmpty else {
            throw ConformanceFormatError(
                "the reference model disagrees with \(disagreements.count) hand-worked answer\(disagreements.count == 1 ? "" : "s") of the catalogue:\n"
                    + disagreements.joined(separator: "\n"))
        }
        return file
    }

    /// The vector file of `strategy`, and every place where the reference model disagrees with
    /// an answer worked out by hand (a story's step, or a refusal's field and problem), one line each.
    package static func checked(_ strategy: String) throws(ConformanceFormatError) -> (VectorFile, [String]) {
        let (drafts, refusalDrafts) = try VectorCatalogue.drafts(strategy)
        var seen: Set<String> = []
        var stories: [VectorStory] = []
        var disagreements: [String] = []
        for draft in drafts {
            let (story, problems) = generate(draft, strategy: strategy)
            guard seen.insert(story.id).inserted else { throw ConformanceFormatError("duplicate story id \(story.id)") }
            stories.append(story)
            disagreements += problems
        }
        var refusals: [ConfigurationRefusal] = []
        for draft in refusalDrafts {
            let id = "\(strategy)/\(draft.name)"
            guard seen.insert(id).inserted else { throw ConformanceFormatError("duplicate case id \(id)") }
            let parsed = Result { () throws(ConformanceFormatError) in
                try AnyRateLimitStrategy(strategy: strategy, json: draft.configuration)
            }
            guard case .failure(let error) = parsed else {
                throw ConformanceFormatError("\(id): the Spec accepts this configuration, so it is not a refusal")
            }
            guard let inputError = error.refusedBySpec else { throw error }
            if inputError.field != draft.field || inputError.problem != draft.problem {
                disagreements.append(
                    "\(id): the refusal expects \(draft.field) (\(draft.problem)), the reference model refuses \(inputError.field) (\(inputError.problem))"
                )
            }
            let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? ""
            refusals.append(
                ConfigurationRefusal(
                    id: id, summary: draft.summary, clauses: ["CORE-3", "\(prefix)-1"],
                    configuration: draft.configuration,
                    error: RateLimitInputError(field: draft.field, value: nil, problem: draft.problem)))
        }
        return (VectorFile(strategy: strategy, generator: version, stories: stories, refusals: refusals), disagreements)
    }

    /// Runs a draft through the reference model, tags it with the clauses its steps reach, and
    /// lists every step whose hand-worked answer the model does not give.
    package static func generate(_ draft: StoryDraft, strategy: String) -> (story: VectorStory, disagreements: [String])
    {
        let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? ""
        let id = "\(strategy)/\(draft.name)"
        var reached: Set<String> = ["CORE-4", "CORE-5", "\(prefix)-2"]
        var reference = ReferenceLimiter(draft.configuration, at: .generated(draft.createdAt))
        var latest = draft.createdAt
        var steps: [VectorStep] = []
        var refused: [RefusedReconfigureStep] = []
        var disagreements: [String] = []
        for (index, step) in draft.steps.enumerated() {
            let answer: RateLimitResult
            let description: String
            switch step.action {
            case .event(let event):
                answer = reference.apply(event, at: .generated(step.now))
                description = event.description
                steps.append(VectorStep(now: step.now, event: event, expected: answer, comment: step.comment))
                reached.formUnion(clausesReached(by: event, answer: answer, prefix: prefix))
            case .refusedReconfigure(let fields):
                answer = reference.reconfigure(toFields: fields, at: .generated(step.now))
                description = "reconfigure(\(fields.compactText))"
                refused.append(
                    RefusedReconfigureStep(
                        position: steps.count, now: step.now, configuration: fields, expected: answer,
                        comment: step.comment))
                reached.formUnion(["CORE-3", "CORE-8", "CORE-13", "\(prefix)-1", "\(prefix)-10"])
            }
            if let expected = step.expected, expected.comparable != answer.comparable {
                disagreements.append(
                    "\(id) step \(index + 1) at \(step.now) ns \(description): the story expects \(expected.brief), the reference model answers \(answer.brief)"
                )
            }
            if step.now < latest, strategy != ConcurrencyLimiter.identifier {
                reached.formUnion(["CORE-10", "\(prefix)-3"])
            }
            if step.now > latest { reached.insert("\(prefix)-3") }
            latest = max(latest, step.now)
        }
        let written = draft.clauses.sorted(by: clauseOrder)
        let story = VectorStory(
            id: id, summary: draft.summary, clauses: written,
            reaches: reached.subtracting(written).sorted(by: clauseOrder), isRandom: draft.isRandom,
            configuration: draft.configuration, createdAt: draft.createdAt, steps: steps, refusedReconfigures: refused)
        return (story, disagreements)
    }

    /// The clauses an event and its answer reach (beyond CORE-4, CORE-5 and X-2, which every step does).
    static func clausesReached(by event: ConformanceEvent, answer: RateLimitResult, prefix: String) -> Set<String> {
        switch (event, answer) {
        case (.acquire(let permits), _) where permits <= 0: ["CORE-9", "\(prefix)-8"]
        case (.acquire, .allowed), (.acquire, .delayed): ["CORE-6", "\(prefix)-4", "\(prefix)-5"]
        case (.acquire, .rejected): ["CORE-7", "CORE-8", "\(prefix)-6"]
        case (.acquire, .rejectedUntilRelease): ["CORE-8", "\(prefix)-6"]
        case (.acquire, .neverAllowed): ["CORE-7", "CORE-8", "\(prefix)-7"]
        case (.acquire, .invalid): ["CORE-9", "\(prefix)-8"]
        case (.release, .invalid): ["CORE-11", "\(prefix)-8"]
        case (.release, _): ["\(prefix)-8"]
        case (.reset, _): ["CORE-12", "\(prefix)-9"]
        case (.reconfigure, _): ["CORE-13", "\(prefix)-10"]
        }
    }

    /// `CORE-2 < CORE-10 < TB-1 < TB-12`: by prefix, then by number.
    static func clauseOrder(_ a: String, _ b: String) -> Bool {
        let (pa, na) = split(a)
        let (pb, nb) = split(b)
        if pa != pb { return pa == "CORE" ? true : pb == "CORE" ? false : pa < pb }
        return na < nb
    }

    private static func split(_ clause: String) -> (String, Int) {
        let parts = clause.split(separator: "-")
        return (String(parts.first ?? ""), Int(parts.last ?? "") ?? 0)
    }
}
