import RateLimitCore

// The report in text for people (a table, what was not checked, findings grouped by cause with
// one small example each, the cases that differ) and in JSON for machines.

extension ConformanceReport {
    /// Differing steps listed per case after its first, and random traces listed per strategy.
    package static let stepsPerCase = 5
    package static let randomCasesListed = 5

    /// The per-strategy summary table.
    package var table: [String] {
        let header = [
            "strategy", "level", "cases", "steps", "exact", "safe", "failed", "skipped", "random e/s/f", "admitted",
            "validation", "time",
        ]
        let rows = strategies.map { report -> [String] in
            let stories = report.stories.filter { $0.skippedBecause == nil }
            let random = report.randomTraces.filter { $0.skippedBecause == nil }
            return [
                report.strategy, report.levelText, "\(stories.count)", "\(report.steps)",
                "\(report.count(.exact, of: stories))",
                "\(report.count(.safety, of: stories))", "\(report.count(.failed, of: stories))",
                "\(report.skipped.count)",
                report.randomRequested == 0 && random.isEmpty
                    ? "-"
                    : "\(report.count(.exact, of: random))/\(report.count(.safety, of: random))/\(report.count(.failed, of: random))",
                report.utilization.map(Self.percent) ?? "-",
                report.validation == .skipped ? "-" : report.validation.rawValue, Self.seconds(report.seconds),
            ]
        }
        return TextTable.render(header: header, rows: rows, rightAligned: [2, 3, 4, 5, 6, 7, 8, 9, 11])
    }

    /// What each strategy's profile kept from being checked, and the cases skipped, by reason.
    package var skippedLines: [String] {
        var lines: [String] = []
        for report in strategies {
            if let reason = report.skippedBecause {
                lines.append("SKIP \(report.strategy): \(reason)")
                continue
            }
            let notChecked = report.notChecked
            if !notChecked.isEmpty || !report.skipped.isEmpty || !report.partial.isEmpty {
                lines.append(
                    "CHECKED \(report.strategy): \(report.clausesChecked.count) clauses by the cases that ran (--json lists them)"
                )
            }
            for line in notChecked { lines.append("NOT CHECKED \(report.strategy): \(line)") }
            var reasons: [(String, Int)] = []
            for outcome in report.skipped {
                let reason =
                    (outcome.outsideProfile ? "outside the profile: " : "unsupported: ")
                    + (outcome.skippedBecause ?? "")
                if let index = reasons.firstIndex(where: { $0.0 == reason }) {
                    reasons[index].1 += 1
                } else {
                    reasons.append((reason, 1))
                }
            }
            for (reason, count) in reasons {
                lines.append("SKIP \(report.strategy): \(count) case\(count == 1 ? "" : "s") \(reason)")
            }
            var partial: [(String, Int)] = []
            for outcome in report.partial {
                let reason = (outcome.partialBecause ?? "").components(separatedBy: " (from step ").first ?? ""
                if let index = partial.firstIndex(where: { $0.0 == reason }) {
                    partial[index].1 += 1
                } else {
                    partial.append((reason, 1))
                }
            }
            for (reason, count) in partial {
                lines.append(
                    "PARTIAL \(report.strategy): \(count) stor\(count == 1 ? "y" : "ies") judged up to their first step outside the profile, which \(reason)"
                )
            }
            if let reason = report.stoppedBecause { lines.append("STOP \(report.strategy): \(reason)") }
            if let reason = report.belowFloor {
                lines.append(
                    "THIN \(report.strategy): too little checked to judge it (\(reason)); the run does not pass")
            }
        }
        return lines
    }

    /// Per strategy whose random traces ran, the steps that reached each clause, and the clauses a
    /// step can reach (`VectorGenerator.clausesReached`) that none did.
    package var coverageLines: [String] {
        strategies.compactMap { report in
            guard !report.clauseHits.isEmpty else { return nil }
            let prefix = AnyRateLimitStrategy.clausePrefixes[report.strategy] ?? report.strategy
            let reachable =
                ["CORE-6", "CORE-7", "CORE-8", "CORE-9", "CORE-12", "CORE-13"] + (4...10).map { "\(prefix)-\($0)" }
            let hits = report.clauseHits.keys.sorted(by: VectorGenerator.clauseOrder).map {
                "\($0) \(report.clauseHits[$0] ?? 0)"
            }
            let missed = reachable.filter { report.clauseHits[$0] == nil }
            return "COVERAGE \(report.strategy): \(hits.joined(separator: ", "))"
                + (missed.isEmpty ? "" : "; not reached: \(missed.joined(separator: ", "))")
                + "; \(report.coverageFeatures) coverage features"
        }
    }

    /// Findings grouped by cause, the most severe first, each with its smallest case (CONF-10).
    package var findingLines: [String] {
        var lines: [String] = []
        for report in strategies {
            for group in report.groups {
                let mark = group.kind.failsSafety ? "FAIL" : "DIFF"
                var line =
                    "\(mark) \(report.strategy) \(group.cause.description): \(group.kind.name), \(group.casesText)"
                if let worst = group.severity.text { line += "; worst: \(worst)" }
                lines.append(line)
                let finding = group.exampleFinding
                lines.append("     smallest: \(group.example.id), \(Self.describe(finding))")
                for row in Self.rows(of: group.example, upTo: finding.step) { lines.append("     " + row) }
            }
        }
        return lines
    }

    /// One entry per case that is not exact: its failing (or first differing) step, then up to
    /// ``stepsPerCase`` more differing steps; random traces up to ``randomCasesListed`` per strategy.
    package var caseLines: [String] {
        var lines: [String] = []
        for report in strategies {
            var randomListed = 0
            var randomMore = 0
            for outcome in report.outcomes + report.refusals where !outcome.findings.isEmpty {
                if case .random = outcome.origin {
                    guard randomListed < Self.randomCasesListed else {
                        randomMore += 1
                        continue
                    }
                    randomListed += 1
                }
                guard let primary = outcome.primary else { continue }
                lines.append("\(primary.kind.failsSafety ? "FAIL" : "DIFF") \(outcome.id) \(Self.describe(primary))")
                let others = outcome.findings.filter { $0 != primary }
                for finding in others.prefix(Self.stepsPerCase) { lines.append("     also \(Self.describe(finding))") }
                if others.count > Self.stepsPerCase {
                    lines.append("     … and \(others.count - Self.stepsPerCase) more differing steps")
                }
            }
            if randomMore > 0 {
                lines.append("     … and \(randomMore) more random traces of \(report.strategy) that are not exact")
            }
        }
        return lines
    }

    /// `step 3 at 10 ns acquire(2): expected allowed(0), got rejected(1ns) [early retry: ...]`.
    package static func describe(_ finding: StepFinding) -> String {
        let place = finding.step == 0 ? finding.event : "step \(finding.step) at \(finding.now) ns \(finding.event)"
        var text =
            finding.kind == .misbehaved
            ? "\(place): \(finding.explanation ?? "")"
                + (finding.got.hasPrefix("received ") ? "; received: \(finding.got.dropFirst(9))" : "")
            : "\(place): expected \(finding.expected), got \(finding.got)"
        if finding.kind != .misbehaved {
            text +=
                finding.kind == .difference
                ? " (safe, not exact)" : " [\(finding.kind.name): \(finding.explanation ?? "")]"
        }
        return text
    }

    /// The case's trace as a table up to step `last`: at most 12 rows, the last one marked.
    static func rows(of outcome: CaseOutcome, upTo last: Int) -> [String] {
        guard let trace = outcome.trace, last > 0 else { return [] }
        let steps = trace.mergedSteps
        let first = max(1, last - 11)
        var rows: [[String]] = []
        if first > 1 { rows.append(["…", "", "\(first - 1) earlier steps", "", "", ""]) }
        for step in first...max(first, min(last, steps.count)) where step <= steps.count {
            let index = step - 1
            let got = index < outcome.answers.count ? outcome.answers[index].brief : "—"
            let expected = index < outcome.expected.count ? outcome.expected[index].brief : "—"
            rows.append([
                "\(step)", "\(steps[index].now)", steps[index].description, expected, got,
                step == last ? "<- here" : "",
            ])
        }
        if last > steps.count { rows.append(["", "", "drop", "dropped", "—", "<- here"]) }
        let header = "configuration \(trace.configuration.json.compactText), created at \(trace.createdAt) ns"
        return [header]
            + TextTable.render(
                header: ["step", "now (ns)", "event", "expected", "got", ""], rows: rows, rightAligned: [0, 1])
    }

    /// `99.7%`, rounded down to a tenth (so only 100.0% is all).
    static func percent(_ share: Double) -> String {
        let tenths = Int64(min(share * 1_000, 1e15).rounded(.down))
        return "\(tenths / 10).\(tenths % 10)%"
    }

    /// `0.9973`: four decimals, for JSON.
    static func decimal(_ value: Double) -> String {
        let units = Int64(min(value * 10_000, 1e15).rounded())
        let fraction = String(units % 10_000)
        return "\(units / 10_000).\(String(repeating: "0", count: 4 - fraction.count))\(fraction)"
    }

    package static func seconds(_ value: Double) -> String {
        let milliseconds = Int((value * 1_000).rounded())
        return
            "\(milliseconds / 1_000).\(String(repeating: "0", count: 3 - String(milliseconds % 1_000).count))\(milliseconds % 1_000)s"
    }

    /// The report for machines.
    public var json: JSONValue {
        .object([
            ("implementation", .string(implementation)),
            ("exact", .bool(passes(at: .exact))), ("safety", .bool(passes(at: .safety))),
            ("strategies", .array(strategies.map(\.json))),
        ])
    }
}

extension StrategyReport {
    /// `exact`, or `exact ±5ns` when judged with a tolerance.
    package var levelText: String {
        toleranceNanoseconds > 0 && (level == .exact || level == .safety)
            ? "\(level.rawValue) ±\(toleranceNanoseconds)ns" : level.rawValue
    }

    package var json: JSONValue {
        let stories = self.stories.filter { $0.skippedBecause == nil }
        let random = randomTraces.filter { $0.skippedBecause == nil }
        var members: [(String, JSONValue)] = [
            ("strategy", .string(strategy)), ("level", .string(level.rawValue)),
            ("validation", .string(validation.rawValue)),
            ("toleranceNanoseconds", .integer(toleranceNanoseconds)), ("profile", profile.json),
            ("clausesChecked", .array(clausesChecked.map(JSONValue.string))),
            ("notChecked", .array(notChecked.map(JSONValue.string))),
            ("cases", .integer(Int64(stories.count))), ("steps", .integer(Int64(steps))),
            ("exact", .integer(Int64(count(.exact, of: stories)))),
            ("safe", .integer(Int64(count(.safety, of: stories)))),
            ("failed", .integer(Int64(count(.failed, of: stories)))),
            (
                "random",
                .object([
                    ("requested", .integer(Int64(randomRequested))),
                    ("exact", .integer(Int64(count(.exact, of: random)))),
                    ("safe", .integer(Int64(count(.safety, of: random)))),
                    ("failed", .integer(Int64(count(.failed, of: random)))),
                ])
            ),
            ("utilization", utilization.map { .otherNumber(ConformanceReport.decimal($0)) } ?? .null),
            ("milliseconds", .integer(Int64((seconds * 1_000).rounded()))),
        ]
        if let reason = skippedBecause { members.append(("skippedBecause", .string(reason))) }
        if let reason = belowFloor { members.append(("belowFloor", .string(reason))) }
        if !clauseHits.isEmpty {
            members.append(
                (
                    "clauseCoverage",
                    .object(
                        clauseHits.keys.sorted(by: VectorGenerator.clauseOrder).map {
                            ($0, .integer(Int64(clauseHits[$0] ?? 0)))
                        })
                ))
            members.append(("coverageFeatures", .integer(Int64(coverageFeatures))))
        }
        if let reason = stoppedBecause { members.append(("stoppedBecause", .string(reason))) }
        members.append(
            (
                "skipped",
                .array(
                    skipped.map {
                        .object([
                            ("id", .string($0.id)), ("reason", .string($0.skippedBecause ?? "")),
                            ("outsideProfile", .bool($0.outsideProfile)),
                        ])
                    })
            ))
        members.append(
            (
                "partial",
                .array(partial.map { .object([("id", .string($0.id)), ("reason", .string($0.partialBecause ?? ""))]) })
            ))
        members.append(
            (
                "findings",
                .array(
                    groups.map { group in
                        var fields: [(String, JSONValue)] = [
                            ("clause", .string(group.cause.clause)), ("cause", .string(group.cause.title)),
                            ("kind", .string(group.kind.name)),
                            ("cases", .array(group.cases.map(JSONValue.string))),
                            (
                                "casesByKind",
                                .object(group.casesByKind.map { ($0.kind.name, .integer(Int64($0.count))) })
                            ),
                        ]
                        fields.append(("worst", group.severity.json))
                        fields.append(
                            (
                                "smallest",
                                .object([("id", .string(group.example.id)), ("step", group.exampleFinding.json)])
                            ))
                        return .object(fields)
                    })
            ))
        members.append(
            (
                "failures",
                .array(
                    (outcomes + refusals).filter { !$0.findings.isEmpty }.map { outcome in
                        var fields: [(String, JSONValue)] = [
                            ("id", .string(outcome.id)), ("level", .string(outcome.level.rawValue)),
                        ]
                        if let failure = outcome.subjectFailure {
                            fields.append(("misbehaviour", .string(failure.kind.rawValue)))
                            if let received = failure.received { fields.append(("received", .string(received))) }
                        }
                        fields.append(("steps", .array(outcome.findings.map(\.json))))
                        return .object(fields)
                    })
            ))
        if let shrunk {
            var fields: [(String, JSONValue)] = [
                ("seed", .string(String(shrunk.seed))), ("trace", .integer(Int64(shrunk.traceIndex))),
                ("randomSteps", .integer(Int64(shrunk.randomSteps))),
                ("originalSteps", .integer(Int64(shrunk.original.trace?.steps.count ?? 0))),
                ("steps", .integer(Int64(shrunk.trace.steps.count))), ("runs", .integer(Int64(shrunk.runs))),
            ]
            if let original = shrunk.original.primary { fields.append(("originalFinding", original.json)) }
            if let finding = shrunk.outcome.primary { fields.append(("finding", finding.json)) }
            fields.append(("vector", shrunk.vectorFile.json))
            members.append(("shrunk", .object(fields)))
        }
        return .object(members)
    }
}

extension StepFinding {
    var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("step", .integer(Int64(step))), ("now", .integer(now)), ("event", .string(event)),
            ("expected", .string(expected)),
            ("got", .string(got)), ("kind", .string(kind.name)), ("clause", .string(cause.clause)),
            ("cause", .string(cause.title)),
        ]
        if let explanation { fields.append(("explanation", .string(explanation))) }
        if severity != FindingSeverity() { fields.append(("severity", severity.json)) }
        return .object(fields)
    }
}

extension FindingSeverity {
    var json: JSONValue {
        .object([
            ("permitsOver", .integer(permitsOver)), ("nanosecondsEarly", .integer(nanosecondsEarly)),
            ("nanosecondsLate", .integer(nanosecondsLate)),
        ])
    }
}

extension ShrunkFailure {
    /// The shrunk trace as a table, the failing step marked, then the failing step of the
    /// original trace.
    package var lines: [String] {
        var lines = ConformanceReport.rows(of: outcome, upTo: outcome.primary?.step ?? trace.steps.count)
        if let finding = outcome.primary, finding.kind != .difference || finding.explanation != nil {
            lines.append("\(finding.kind.name): \(finding.explanation ?? "")")
        }
        if let original = original.primary {
            lines.append("in the original trace: \(ConformanceReport.describe(original))")
        }
        return lines
    }
}
