import RateLimitCore

/// Shrinks a failing random trace to a small one that still fails the same way: drops chunks of
/// steps (halves, quarters, ..., single steps), then simplifies what is left (smaller permits,
/// instants moved towards the previous step and towards the origin, smaller configuration
/// numbers), repeating until nothing more can be removed or simplified.
enum Shrinker {
    /// At most this many candidate runs against the implementation.
    static let budget = 3_000

    static func shrink<S: ConformanceSubject>(
        _ trace: Trace, outcome: CaseOutcome, strategy: String, seed: UInt64, index: Int, on subject: inout S
    ) -> ShrunkFailure {
        let kind = failureKind(outcome)
        var best = trace
        var bestOutcome = outcome
        var runs = 0

        func stillFails(_ candidate: Trace) -> Bool {
            guard runs < budget else { return false }
            runs += 1
            let (result, _) = ConformanceSuite.runTrace(
                candidate, id: outcome.id, expected: ConformanceSuite.referenceAnswers(candidate), on: &subject)
            guard failureKind(result) == kind else { return false }
            bestOutcome = result
            return true
        }

        var changed = true
        while changed, runs < budget {
            changed = false
            // 1. Drop chunks of steps, largest first. Steps after the failure never matter.
            if let failing = (bestOutcome.firstViolation ?? bestOutcome.firstMismatch)?.step, failing > 0, failing < best.steps.count {
                var candidate = best
                candidate.steps.removeSubrange(failing...)
                if stillFails(candidate) { best = candidate; changed = true }
            }
            var chunk = max(1, best.steps.count / 2)
            while chunk >= 1 {
                var start = 0
                while start < best.steps.count {
                    var candidate = best
                    candidate.steps.removeSubrange(start..<min(start + chunk, best.steps.count))
                    if !candidate.steps.isEmpty, stillFails(candidate) { best = candidate; changed = true } else { start += chunk }
                }
                chunk /= 2
            }
            // 2. Simplify each remaining step.
            for position in best.steps.indices {
                for simpler in simplifications(of: best.steps[position], previous: position == 0 ? best.createdAt : best.steps[position - 1].now) {
                    var candidate = best
                    candidate.steps[position] = simpler
                    if stillFails(candidate) { best = candidate; changed = true; break }
                }
            }
            // 3. Move the whole trace towards the origin.
            let earliest = min(best.createdAt, best.steps.map(\.now).min() ?? best.createdAt)
            if earliest > 0 {
                var candidate = best
                candidate.createdAt -= earliest
                for position in candidate.steps.indices { candidate.steps[position].now -= earliest }
                if stillFails(candidate) { best = candidate; changed = true }
            }
            // 4. Smaller configuration numbers.
            for configuration in simplifications(of: best.configuration) {
                var candidate = best
                candidate.configuration = configuration
                if stillFails(candidate) { best = candidate; changed = true; break }
            }
        }
        // One final run to record the answers of the minimal trace.
        let expected = ConformanceSuite.referenceAnswers(best)
        let (final, answers) = ConformanceSuite.runTrace(best, id: outcome.id, expected: expected, on: &subject)
        let rows = best.steps.enumerated().map { index, step in
            (now: step.now, event: step.event, expected: expected[index], got: index < answers.count ? answers[index] : nil)
        }
        return ShrunkFailure(
            strategy: strategy, seed: seed, traceIndex: index, originalSteps: trace.steps.count, trace: best,
            outcome: failureKind(final) == kind ? final : bestOutcome, rows: rows)
    }

    /// Failures of different kinds are not interchangeable while shrinking.
    enum Kind: Equatable { case exactOnly, safety, misbehaved, none }

    static func failureKind(_ outcome: CaseOutcome) -> Kind {
        if outcome.subjectFailure != nil { return .misbehaved }
        if outcome.firstViolation != nil { return .safety }
        return outcome.firstMismatch != nil ? .exactOnly : .none
    }

    /// Simpler versions of a step: fewer permits, an instant closer to the previous one.
    static func simplifications(of step: TraceStep, previous: Int64) -> [TraceStep] {
        var result: [TraceStep] = []
        switch step.event {
        case .acquire(let permits) where permits > 1:
            result.append(TraceStep(now: step.now, event: .acquire(1)))
            result.append(TraceStep(now: step.now, event: .acquire(permits / 2)))
        case .release(let permits) where permits > 1:
            result.append(TraceStep(now: step.now, event: .release(1)))
        case .reconfigure:
            result.append(TraceStep(now: step.now, event: .reset))
        default:
            break
        }
        if step.now != previous {
            result.append(TraceStep(now: previous, event: step.event))
            let middle = previous / 2 + step.now / 2
            if middle != step.now, middle != previous { result.append(TraceStep(now: middle, event: step.event)) }
        }
        return result
    }

    /// The configuration with one of its numbers made smaller (1, or halved), when still valid.
    static func simplifications(of configuration: StrategyConfiguration) -> [StrategyConfiguration] {
        guard case .object(let members) = configuration.json else { return [] }
        var result: [StrategyConfiguration] = []
        for (position, (key, value)) in members.enumerated() {
            guard let number = value.int64, number > 1 else { continue }
            for smaller in [Int64(1), number / 2] where smaller < number {
                var fields = members
                fields[position] = (key, .integer(smaller))
                if let simpler = try? StrategyConfiguration(strategy: configuration.kind, json: .object(fields)) {
                    result.append(simpler)
                }
            }
        }
        return result
    }
}

/// Plain-text tables with aligned columns.
public enum TextTable {
    /// The header, a rule and the rows, each column padded to its widest cell.
    public static func render(header: [String], rows: [[String]], rightAligned: Set<Int> = []) -> [String] {
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() where column < widths.count { widths[column] = max(widths[column], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        return [line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")] + rows.map(line)
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
