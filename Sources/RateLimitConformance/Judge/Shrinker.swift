import RateLimitCore

/// Shrinks a failing random trace to a small one that fails with the same kind of finding (an
/// over-admission never shrinks into a retry-after merely 1 ns short): drops chunks of steps
/// (halves, quarters, ..., single steps), then simplifies what is left (smaller permits, instants
/// moved towards the previous step and towards the origin, smaller configuration numbers),
/// repeating until nothing more can be removed or simplified. Every candidate stays within the
/// implementation's profile.
enum Shrinker {
    /// At most this many candidate runs against the implementation.
    static let budget = 3_000

    static func shrink<S: ConformanceSubject>(
        _ original: CaseOutcome, strategy: String, seed: UInt64, index: Int, randomSteps: Int,
        until deadline: Double = .infinity, clock: () -> Double = { 0 }, run: inout StrategyRun, on subject: inout S
    ) -> ShrunkFailure {
        let kind = original.primary?.kind ?? .difference
        let profile = run.profile
        let unit = profile.timeUnitNanoseconds
        let spanUnit = profile.configurationUnitNanoseconds
        var best = original.trace!
        var bestOutcome = original
        var runs = 0

        func stillFails(_ candidate: Trace) -> Bool {
            guard runs < budget, clock() < deadline, !candidate.steps.isEmpty else { return false }
            guard profile.contains(candidate, answers: ConformanceSuite.referenceAnswers(candidate)) else {
                return false
            }
            runs += 1
            let result = run.judged(candidate, id: original.id, origin: original.origin, on: &subject)
            guard result.primary?.kind == kind else { return false }
            bestOutcome = result
            return true
        }

        var changed = true
        while changed, runs < budget, clock() < deadline {
            changed = false
            // 1. Drop chunks of steps, largest first. Steps after the failure never matter.
            if let failing = bestOutcome.primary?.step, failing > 0, failing < best.steps.count {
                var candidate = best
                candidate.steps.removeSubrange(failing...)
                if stillFails(candidate) {
                    best = candidate
                    changed = true
                }
            }
            var chunk = max(1, best.steps.count / 2)
            while chunk >= 1 {
                var start = 0
                while start < best.steps.count {
                    var candidate = best
                    candidate.steps.removeSubrange(start..<min(start + chunk, best.steps.count))
                    if profile.createdAtFirstEvent, let first = candidate.steps.first {
                        candidate.createdAt = first.now
                    }
                    if stillFails(candidate) {
                        best = candidate
                        changed = true
                    } else {
                        start += chunk
                    }
                }
                chunk /= 2
            }
            // 2. Simplify each remaining step.
            for position in best.steps.indices {
                let previous = position == 0 ? best.createdAt : best.steps[position - 1].now
                for simpler in simplifications(of: best.steps[position], previous: previous, unit: unit) {
                    var candidate = best
                    candidate.steps[position] = simpler
                    if profile.createdAtFirstEvent, position == 0 { candidate.createdAt = simpler.now }
                    if stillFails(candidate) {
                        best = candidate
                        changed = true
                        break
                    }
                }
            }
            // 3. Move the whole trace towards the origin.
            let earliest = min(best.createdAt, best.steps.map(\.now).min() ?? best.createdAt)
            if earliest > 0 {
                var candidate = best
                candidate.createdAt -= earliest
                for position in candidate.steps.indices { candidate.steps[position].now -= earliest }
                if stillFails(candidate) {
                    best = candidate
                    changed = true
                }
            }
            // 4. Smaller configuration numbers.
            for configuration in simplifications(of: best.configuration, unit: spanUnit) {
                var candidate = best
                candidate.configuration = configuration
                if stillFails(candidate) {
                    best = candidate
                    changed = true
                    break
                }
            }
        }
        run.explainByHistory(&bestOutcome, on: &subject)
        return ShrunkFailure(
            strategy: strategy, seed: seed, traceIndex: index, randomSteps: randomSteps, original: original,
            outcome: bestOutcome, runs: runs)
    }

    /// Simpler versions of a step: fewer permits, an instant closer to the previous one (whole
    /// multiples of `unit`).
    static func simplifications(of step: TraceStep, previous: Int64, unit: Int64) -> [TraceStep] {
        var result: [TraceStep] = []
        switch step.event {
        case .acquire(let permits):
            if permits > 1 {
                result.append(TraceStep(now: step.now, event: .acquire(1)))
                result.append(TraceStep(now: step.now, event: .acquire(permits / 2)))
            }
        case .release(let permits):
            if permits > 1 { result.append(TraceStep(now: step.now, event: .release(1))) }
        case .reconfigure:
            result.append(TraceStep(now: step.now, event: .reset))
        case .reset:
            break
        }
        if step.now != previous {
            result.append(TraceStep(now: previous, event: step.event))
            var middle = previous / 2 + step.now / 2
            middle -= middle % unit
            if middle != step.now, middle != previous { result.append(TraceStep(now: middle, event: step.event)) }
        }
        return result
    }

    /// The configuration with one of its numbers made smaller (1, or halved; a span stays a whole
    /// multiple of `unit`), when still valid.
    static func simplifications(of configuration: AnyRateLimitStrategy, unit: Int64) -> [AnyRateLimitStrategy] {
        guard case .object(let members) = configuration.json else { return [] }
        var result: [AnyRateLimitStrategy] = []
        for (position, (key, value)) in members.enumerated() {
            let step: Int64 = key.hasSuffix("Nanoseconds") ? unit : 1
            guard let number = value.int64, number > step else { continue }
            for smaller in [step, number / 2 - (number / 2) % step] where smaller < number && smaller >= step {
                var fields = members
                fields[position] = (key, .integer(smaller))
                if let simpler = try? AnyRateLimitStrategy(strategy: configuration.kind, json: .object(fields)) {
                    result.append(simpler)
                }
            }
        }
        return result
    }
}
