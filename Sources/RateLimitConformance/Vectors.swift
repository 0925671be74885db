import RateLimitCore

// The vector files of Spec/vectors/: one per strategy, stories of ordered steps sharing one
// limiter, with the answers the reference model gives, plus configurations the Spec refuses.
// Spec/vectors/README.md describes the format; schema.json validates it.

/// One step of a story: at `now`, `event` must be answered `expected`.
public struct VectorStep: Hashable, Sendable {
    public var now: Int64
    public var event: ConformanceEvent
    public var expected: RateLimitResult

    public var json: JSONValue {
        .object([("now", .integer(now)), ("event", event.json), ("expect", expected.json)])
    }
}

/// A named sequence of steps on one limiter, with the Spec clauses it checks.
public struct VectorStory: Hashable, Sendable {
    /// Stable identifier: `<strategy>/<name>`.
    public var id: String
    public var summary: String
    public var clauses: [String]
    public var configuration: AnyRateLimitStrategy
    public var createdAt: Int64
    public var steps: [VectorStep]

    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("description", .string(summary)), ("clauses", .array(clauses.map(JSONValue.string))),
            ("configuration", configuration.json), ("createdAt", .integer(createdAt)),
            ("steps", .array(steps.map(\.json))),
        ])
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
    public static let formatVersion: Int64 = 1

    public var strategy: String
    public var generator: String
    public var stories: [VectorStory]
    public var refusals: [ConfigurationRefusal]

    /// Stories plus refusals: the file's case count.
    public var caseCount: Int { stories.count + refusals.count }
    public var stepCount: Int { stories.reduce(0) { $0 + $1.steps.count } }

    /// The file name under `Spec/vectors/`.
    public var fileName: String { "\(strategy).json" }

    public var json: JSONValue {
        .object([
            ("format", .string(Self.format)), ("formatVersion", .integer(Self.formatVersion)),
            ("generator", .string(generator)), ("strategy", .string(strategy)),
            ("caseCount", .integer(Int64(caseCount))), ("stepCount", .integer(Int64(stepCount))),
            ("stories", .array(stories.map(\.json))), ("refusals", .array(refusals.map(\.json))),
        ])
    }

    /// Reads a vector file and checks its header: format, version, and that the counts match.
    public init(json: JSONValue) throws(ConformanceFormatError) {
        guard json["format"]?.string == Self.format else {
            throw ConformanceFormatError("not a vector file: format must be \"\(Self.format)\"")
        }
        guard json["formatVersion"]?.int64 == Self.formatVersion else {
            throw ConformanceFormatError("unsupported formatVersion \(json["formatVersion"]?.compactText ?? "missing")")
        }
        guard let strategy = json["strategy"]?.string, AnyRateLimitStrategy.identifiers.contains(strategy) else {
            throw ConformanceFormatError("unknown or missing strategy")
        }
        guard let generator = json["generator"]?.string else { throw ConformanceFormatError("missing generator") }
        guard let storyValues = json["stories"]?.array, let refusalValues = json["refusals"]?.array else {
            throw ConformanceFormatError("stories and refusals must be arrays")
        }
        var stories: [VectorStory] = []
        for value in storyValues { stories.append(try Self.story(value, strategy: strategy)) }
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

    private static func clauses(_ value: JSONValue?) throws(ConformanceFormatError) -> [String] {
        guard let items = value?.array else { throw ConformanceFormatError("clauses must be an array of strings") }
        var clauses: [String] = []
        for item in items {
            guard let clause = item.string else { throw ConformanceFormatError("clauses must be an array of strings") }
            clauses.append(clause)
        }
        return clauses
    }

    private static func story(_ json: JSONValue, strategy: String) throws(ConformanceFormatError) -> VectorStory {
        guard let id = json["id"]?.string, let summary = json["description"]?.string,
            let configuration = json["configuration"], let stepValues = json["steps"]?.array
        else {
            throw ConformanceFormatError("a story needs id, description, clauses, configuration, createdAt and steps")
        }
        var steps: [VectorStep] = []
        for (index, value) in stepValues.enumerated() {
            guard let event = value["event"], let expected = value["expect"] else {
                throw ConformanceFormatError("\(id) step \(index + 1) needs now, event and expect")
            }
            steps.append(
                VectorStep(
                    now: try instant(value["now"], "\(id) step \(index + 1) now"),
                    event: try ConformanceEvent(json: event, strategy: strategy),
                    expected: try RateLimitResult(json: expected)))
        }
        return VectorStory(
            id: id, summary: summary, clauses: try clauses(json["clauses"]),
            configuration: try AnyRateLimitStrategy(strategy: strategy, json: configuration),
            createdAt: try instant(json["createdAt"], "\(id) createdAt"), steps: steps)
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
            id: id, summary: summary, clauses: try clauses(json["clauses"]), configuration: configuration,
            error: RateLimitInputError(field: field, value: nil, problem: error.problem))
    }
}

// MARK: - Generation

/// A story as written in the catalogue: events only; the reference model supplies the answers.
package struct StoryDraft: Sendable {
    package var name: String
    package var summary: String
    package var clauses: [String]
    package var configuration: AnyRateLimitStrategy
    package var createdAt: Int64
    package var steps: [TraceStep]

    package init(
        _ name: String, _ summary: String, clauses: [String], _ configuration: AnyRateLimitStrategy,
        createdAt: Int64 = 0, _ steps: [(Int64, ConformanceEvent)]
    ) {
        self.name = name
        self.summary = summary
        self.clauses = clauses
        self.configuration = configuration
        self.createdAt = createdAt
        self.steps = steps.map { TraceStep(now: $0.0, event: $0.1) }
    }
}

/// A configuration the catalogue expects the Spec to refuse.
package struct RefusalDraft: Sendable {
    package var name: String
    package var summary: String
    package var configuration: JSONValue

    package init(_ name: String, _ summary: String, _ fields: [(String, Int64)]) {
        self.name = name
        self.summary = summary
        self.configuration = .object(fields.map { ($0.0, .integer($0.1)) })
    }
}

/// Turns the catalogue into vector files with the reference model's answers.
package enum VectorGenerator {
    /// Bumped whenever the generated bytes change for a reason other than the catalogue.
    package static let version = "swift-rate-limit vector generator 1"

    /// Every strategy's vector file, in the order of ``AnyRateLimitStrategy/identifiers``.
    package static func files() throws(ConformanceFormatError) -> [VectorFile] {
        var files: [VectorFile] = []
        for strategy in AnyRateLimitStrategy.identifiers { files.append(try file(strategy)) }
        return files
    }

    /// The vector file of `strategy`.
    package static func file(_ strategy: String) throws(ConformanceFormatError) -> VectorFile {
        let (drafts, refusalDrafts) = try VectorCatalogue.drafts(strategy)
        var seen: Set<String> = []
        var stories: [VectorStory] = []
        for draft in drafts {
            let story = generate(draft, strategy: strategy)
            guard seen.insert(story.id).inserted else { throw ConformanceFormatError("duplicate story id \(story.id)") }
            stories.append(story)
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
            let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? ""
            refusals.append(
                ConfigurationRefusal(
                    id: id, summary: draft.summary, clauses: ["CORE-3", "\(prefix)-1"],
                    configuration: draft.configuration,
                    error: RateLimitInputError(field: inputError.field, value: nil, problem: inputError.problem)))
        }
        return VectorFile(strategy: strategy, generator: version, stories: stories, refusals: refusals)
    }

    /// Runs a draft through the reference model and tags it with every clause its steps exercise.
    static func generate(_ draft: StoryDraft, strategy: String) -> VectorStory {
        let prefix = AnyRateLimitStrategy.clausePrefixes[strategy] ?? ""
        var clauses = Set(draft.clauses).union(["CORE-4", "CORE-5", "\(prefix)-2"])
        var reference = ReferenceLimiter(draft.configuration, at: .generated(draft.createdAt))
        var latest = draft.createdAt
        var steps: [VectorStep] = []
        for step in draft.steps {
            let expected = reference.apply(step.event, at: .generated(step.now))
            steps.append(VectorStep(now: step.now, event: step.event, expected: expected))
            if step.now < latest, strategy != ConcurrencyLimiter.identifier {
                clauses.formUnion(["CORE-10", "\(prefix)-3"])
            }
            if step.now > latest { clauses.insert("\(prefix)-3") }
            latest = max(latest, step.now)
            switch (step.event, expected) {
            case (.acquire(let permits), _) where permits <= 0: clauses.formUnion(["CORE-9", "\(prefix)-8"])
            case (.acquire, .allowed), (.acquire, .delayed):
                clauses.formUnion(["CORE-6", "\(prefix)-4", "\(prefix)-5"])
            case (.acquire, .rejected): clauses.formUnion(["CORE-7", "CORE-8", "\(prefix)-6"])
            case (.acquire, .rejectedUntilRelease): clauses.formUnion(["CORE-8", "\(prefix)-6"])
            case (.acquire, .neverAllowed): clauses.formUnion(["CORE-7", "CORE-8", "\(prefix)-7"])
            case (.acquire, .invalid): clauses.formUnion(["CORE-9", "\(prefix)-8"])
            case (.release, .invalid): clauses.formUnion(["CORE-11", "\(prefix)-8"])
            case (.release, _): clauses.insert("\(prefix)-8")
            case (.reset, _): clauses.formUnion(["CORE-12", "\(prefix)-9"])
            case (.reconfigure, _): clauses.formUnion(["CORE-13", "\(prefix)-10"])
            }
        }
        return VectorStory(
            id: "\(strategy)/\(draft.name)", summary: draft.summary, clauses: clauses.sorted(by: clauseOrder),
            configuration: draft.configuration, createdAt: draft.createdAt, steps: steps)
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
