import RateLimitCore

extension ConformanceReport {
    /// The per-strategy summary table for people.
    public var table: [String] {
        let header = ["strategy", "level", "cases", "steps", "exact", "safety", "failed", "skipped", "random", "time"]
        let rows = strategies.map { report -> [String] in
            [report.strategy, report.level.rawValue, "\(report.ran.count)", "\(report.steps)", "\(report.passed)",
             "\(report.failedExactOnly)", "\(report.failed)", "\(report.skippedBecause == nil ? report.skipped.count : 0)",
             "\(report.randomTraces)", Self.seconds(report.seconds)]
        }
        return TextTable.render(header: header, rows: rows, rightAligned: Set(2...9))
    }

    /// One line per failing or skipped case, and per skipped strategy.
    public var details: [String] {
        var lines: [String] = []
        for report in strategies {
            if let reason = report.skippedBecause { lines.append("SKIP \(report.strategy): \(reason)") }
            for outcome in report.outcomes {
                if let reason = outcome.skippedBecause { lines.append("SKIP \(outcome.id): \(reason)") }
                if let failure = outcome.subjectFailure { lines.append("FAIL \(outcome.id): \(failure)") }
                if let violation = outcome.firstViolation {
                    lines.append("FAIL \(outcome.id) \(Self.describe(violation))")
                } else if let mismatch = outcome.firstMismatch {
                    lines.append("DIFF \(outcome.id) \(Self.describe(mismatch)) (safe, not exact)")
                }
            }
        }
        return lines
    }

    static func describe(_ mismatch: StepMismatch) -> String {
        let place = mismatch.step == 0 ? "at create" : "step \(mismatch.step) at \(mismatch.now) ns"
        var text = "\(place) \(mismatch.event): expected \(mismatch.expected), got \(mismatch.got)"
        if let violation = mismatch.safetyViolation { text += " [safety: \(violation)]" }
        return text
    }

    static func seconds(_ value: Double) -> String {
        let milliseconds = Int((value * 1_000).rounded())
        return "\(milliseconds / 1_000).\(String(repeating: "0", count: 3 - String(milliseconds % 1_000).count))\(milliseconds % 1_000)s"
    }

    /// The report for machines.
    public var json: JSONValue {
        .object([
            ("implementation", .string(implementation)),
            ("exact", .bool(passes(at: .exact))), ("safety", .bool(passes(at: .safety))),
            ("strategies", .array(strategies.map(Self.json))),
        ])
    }

    private static func json(_ report: StrategyReport) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("strategy", .string(report.strategy)), ("level", .string(report.level.rawValue)),
            ("cases", .integer(Int64(report.ran.count))), ("steps", .integer(Int64(report.steps))),
            ("exact", .integer(Int64(report.passed))), ("safetyOnly", .integer(Int64(report.failedExactOnly))),
            ("failed", .integer(Int64(report.failed))), ("randomTraces", .integer(Int64(report.randomTraces))),
            ("milliseconds", .integer(Int64((report.seconds * 1_000).rounded()))),
        ]
        if let reason = report.skippedBecause { members.append(("skippedBecause", .string(reason))) }
        members.append(("skipped", .array(report.skipped.map {
            .object([("id", .string($0.id)), ("reason", .string($0.skippedBecause ?? ""))])
        })))
        members.append(("failures", .array(report.outcomes.compactMap { outcome -> JSONValue? in
            guard outcome.level == .failed || outcome.level == .safety else { return nil }
            var fields: [(String, JSONValue)] = [("id", .string(outcome.id)), ("level", .string(outcome.level.rawValue))]
            if let failure = outcome.subjectFailure {
                fields.append(("message", .string(failure.message)))
                if let received = failure.received { fields.append(("received", .string(received))) }
            }
            if let mismatch = outcome.firstViolation ?? outcome.firstMismatch {
                fields += [("step", .integer(Int64(mismatch.step))), ("now", .integer(mismatch.now)), ("event", .string(mismatch.event)),
                           ("expected", .string(mismatch.expected)), ("got", .string(mismatch.got))]
                if let violation = mismatch.safetyViolation { fields.append(("safety", .string(violation))) }
            }
            return .object(fields)
        })))
        if let shrunk = report.shrunk {
            members.append(("shrunk", .object([
                ("seed", .string(String(shrunk.seed))), ("trace", .integer(Int64(shrunk.traceIndex))),
                ("originalSteps", .integer(Int64(shrunk.originalSteps))), ("steps", .integer(Int64(shrunk.trace.steps.count))),
                ("vector", shrunk.vectorFile.json),
            ])))
        }
        return .object(members)
    }
}
