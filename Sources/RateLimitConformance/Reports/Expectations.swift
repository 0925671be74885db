import RateLimitCore

// Expectations: a regression gate for a maintainer (Spec/Conformance.md, CONF-12). A run's
// findings, each reduced to what stays the same across seeds and builds (where: a strategy, the
// exhaustive pass of one, a kind of vector, generated scenarios of a machine; which cause; how
// severe), are written to a file that is reviewed like code. A later run passes when every
// finding it makes is in the file at no worse severity, and says which expectations it no longer
// observed, so that they can be removed.

/// One finding as a regression gate sees it: where, which cause, and its kind (CONF-12).
public struct Expectation: Hashable, Sendable, Comparable {
    /// Where it was found: a strategy identifier (its vectors and random traces), `exhaustive
    /// STRATEGY`, a kind of vector (`http`, `wait-queue`, ...), or `generated MACHINE`.
    public var scope: String
    /// The cause (`TB-4 acquire beyond the tokens`), a case's id for the HTTP and scenario
    /// vectors, or what generated scenarios differed in.
    public var cause: String
    /// The finding's kind (``FindingKind/name``), `thin` for a strategy too little checked to
    /// judge (CONF-7), or `difference` where no kind is told apart.
    public var kind: String

    public init(scope: String, cause: String, kind: String) {
        (self.scope, self.cause, self.kind) = (scope, cause, kind)
    }

    public static func < (lhs: Expectation, rhs: Expectation) -> Bool {
        (lhs.scope, lhs.cause, lhs.kind) < (rhs.scope, rhs.cause, rhs.kind)
    }

    /// The kind's rank: ``FindingKind``'s order, `thin` above them all (nothing is known).
    var rank: Int {
        if kind == "thin" { return FindingKind.allCases.count }
        return FindingKind.allCases.first { $0.name == kind }?.rawValue ?? 0
    }

    /// Whether `self`, a finding, is covered by `expected`: the same scope and cause, no worse.
    func isCovered(by expected: Expectation) -> Bool {
        scope == expected.scope && cause == expected.cause && rank <= expected.rank
    }

    /// One line for reports: `token-bucket: TB-4 acquire beyond the tokens (over-admission)`.
    public var description: String { "\(scope): \(cause) (\(kind))" }
}

/// A file of expectations (`--write-expect`, `--expect`), its JSON form and the verdict of a run
/// against it.
public struct ExpectationFile: Hashable, Sendable {
    public static let format = "ratelimit-conformance-expectations"
    public static let formatVersion: Int64 = 1

    /// The implementation the file was written for (informative).
    public var implementation: String
    public var expectations: [Expectation]

    public init(implementation: String, expectations: [Expectation]) {
        self.implementation = implementation
        self.expectations = Array(Set(expectations)).sorted()
    }

    /// `{"format", "formatVersion", "implementation", "expected": [{"scope", "cause", "kind"}, ...]}`,
    /// one expectation per line, sorted, so that a change reads well in a diff.
    public var text: String {
        func quoted(_ text: String) -> String { JSONValue.string(text).compactText }
        let lines = expectations.map {
            "    {\"scope\": \(quoted($0.scope)), \"cause\": \(quoted($0.cause)), \"kind\": \(quoted($0.kind))}"
        }
        return """
            {
              "format": "\(Self.format)",
              "formatVersion": \(Self.formatVersion),
              "implementation": \(quoted(implementation)),
              "expected": [\(lines.isEmpty ? "]" : "\n" + lines.joined(separator: ",\n") + "\n  ]")
            }

            """
    }

    /// Reads a file written by ``text`` (or by hand in the same form), strictly.
    public init(parsing text: String) throws(ConformanceFormatError) {
        let json: JSONValue
        do { json = try JSONValue(parsing: text) } catch {
            throw ConformanceFormatError("an expectations file is JSON: \(error)")
        }
        guard json["format"]?.string == Self.format, json["formatVersion"]?.int64 == Self.formatVersion else {
            throw ConformanceFormatError(
                "an expectations file declares \"format\": \"\(Self.format)\", \"formatVersion\": \(Self.formatVersion)"
            )
        }
        guard let items = json["expected"]?.array else {
            throw ConformanceFormatError("an expectations file has an \"expected\" array")
        }
        var expectations: [Expectation] = []
        for (index, item) in items.enumerated() {
            guard item.keys.sorted() == ["cause", "kind", "scope"], let scope = item["scope"]?.string,
                let cause = item["cause"]?.string, let kind = item["kind"]?.string
            else {
                throw ConformanceFormatError(
                    "expected[\(index)] is {\"scope\": ..., \"cause\": ..., \"kind\": ...}, got \(item.compactText)")
            }
            guard kind == "thin" || FindingKind.allCases.contains(where: { $0.name == kind }) else {
                throw ConformanceFormatError(
                    "expected[\(index)]: \"\(kind)\" is not a kind (\(FindingKind.allCases.map(\.name).joined(separator: ", ")), thin)"
                )
            }
            expectations.append(Expectation(scope: scope, cause: cause, kind: kind))
        }
        self.init(implementation: json["implementation"]?.string ?? "", expectations: expectations)
    }

    /// A run's findings judged against the file.
    public func verdict(_ findings: [Expectation]) -> ExpectationVerdict {
        let findings = Array(Set(findings)).sorted()
        let unexpected = findings.filter { finding in !expectations.contains { finding.isCovered(by: $0) } }
        let observed = expectations.filter { expected in
            findings.contains { $0.scope == expected.scope && $0.cause == expected.cause }
        }
        let fixed = expectations.filter { !observed.contains($0) }
        return ExpectationVerdict(
            unexpected: unexpected.map { finding in
                (finding, expectations.first { $0.scope == finding.scope && $0.cause == finding.cause })
            },
            expected: findings.filter { finding in expectations.contains { finding.isCovered(by: $0) } },
            noLongerObserved: fixed)
    }
}

/// What a run found against an expectations file.
public struct ExpectationVerdict: Sendable {
    /// Findings not in the file, or worse than it expects (with that expectation).
    public var unexpected: [(finding: Expectation, expected: Expectation?)]
    /// Findings the file expects.
    public var expected: [Expectation]
    /// Expectations no finding of the run matched: fixed, or not reached this time.
    public var noLongerObserved: [Expectation]

    /// Whether the run passes the gate: nothing new, nothing worse.
    public var passes: Bool { unexpected.isEmpty }

    /// The lines a report prints.
    public var lines: [String] {
        unexpected.map { finding, expected in
            expected.map { "NEW (worse than expected, \($0.kind)) \(finding.description)" }
                ?? "NEW \(finding.description)"
        }
            + noLongerObserved.map { "NO LONGER OBSERVED (fixed? remove it from the file) \($0.description)" }
            + [
                "expectations: \(expected.count) finding\(expected.count == 1 ? "" : "s") expected, \(unexpected.count) new or worse, \(noLongerObserved.count) expected but not observed"
            ]
    }
}

extension ConformanceReport {
    /// Every finding of the vectors and random traces that keeps a strategy below `level`, and
    /// every strategy too little checked to judge (CONF-7), as expectations.
    public func findings(at level: ConformanceLevel) -> [Expectation] {
        strategies.flatMap { strategy in
            var found = strategy.groups.filter { level == .exact || $0.kind.failsSafety }.map {
                Expectation(scope: strategy.strategy, cause: $0.cause.description, kind: $0.kind.name)
            }
            if strategy.belowFloor != nil {
                found.append(Expectation(scope: strategy.strategy, cause: "CONF-7 too little checked", kind: "thin"))
            }
            return found
        }
    }
}

extension ExhaustiveReport {
    /// Every cause the exhaustive pass found (below the level it was asked for), as expectations.
    public var findings: [Expectation] { strategies.flatMap(Self.findings(of:)) }

    /// One strategy's causes, in order, as expectations.
    public static func findings(of strategy: ExhaustiveStrategyReport) -> [Expectation] {
        strategy.findings.map {
            Expectation(scope: "exhaustive \(strategy.strategy)", cause: $0.cause, kind: $0.kind.name)
        }
    }
}

extension CaseRunReport {
    /// Every case that differed, by its id, as expectations.
    package var findings: [Expectation] {
        failures.map { Expectation(scope: label, cause: $0.id, kind: FindingKind.difference.name) }
    }
}

extension ScenarioExplorationReport {
    /// Every cause the generated scenarios found, as expectations.
    package var findings: [Expectation] { machines.flatMap(Self.findings(of:)) }

    /// One machine's findings, in order, as expectations.
    package static func findings(of machine: Machine) -> [Expectation] {
        machine.findings.map {
            Expectation(
                scope: "\(machine.walkDepth == nil ? "generated" : "walked") \(machine.machine.rawValue)",
                cause: $0.cause,
                kind: ($0.cause == "no answer" ? FindingKind.misbehaved : .difference).name)
        }
    }
}
