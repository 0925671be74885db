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

    /// Where the story's fixed windows start (FW-13): a story of a variant is run only for an
    /// implementation whose profile declares it.
    public var alignment: WindowAlignment { configuration.alignment }

    public var json: JSONValue {
        let variant: [(String, JSONValue)] = alignment == .origin ? [] : [("alignment", .string(alignment.rawValue))]
        return .object(
            [
                ("id", .string(id)), ("description", .string(summary)),
                ("clauses", .array(clauses.map(JSONValue.string))), ("reaches", .array(reaches.map(JSONValue.string))),
                ("configuration", configuration.json),
            ] + variant + [("createdAt", .integer(createdAt)), ("steps", .array(stepsJSON))])
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
        // FW-13, SWS-13: a story of a window variant says which; its configuration and every
        // reconfigure's are that variant's.
        var alignment = WindowAlignment.origin
        if let value = json["alignment"] {
            let known = AnyRateLimitStrategy.alignments(of: strategy).dropFirst()
            guard let name = value.string, let declared = WindowAlignment(rawValue: name), known.contains(declared)
            else {
                throw ConformanceFormatError(
                    "\(id): a \(strategy) story's alignment is one of: \(known.map(\.rawValue).joined(separator: ", "))"
                )
            }
            alignment = declared
        }
        for index in steps.indices {
            if case .reconfigure(let next) = steps[index].event {
                steps[index].event = .reconfigure(next.aligned(alignment))
            }
        }
        return VectorStory(
            id: id, summary: summary, clauses: written, reaches: reached, isRandom: random,
            configuration: parsed.aligned(alignment), createdAt: try instant(json["createdAt"], "\(id) createdAt"),
            steps: steps, refusedReconfigures: refused)
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
