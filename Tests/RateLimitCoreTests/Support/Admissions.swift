import RateLimitTestSupport
import Testing

@testable import RateLimitCore

/// One admitted acquire of a random trace.
struct Admission {
    /// The evaluation instant (CORE-10), where the permits were taken.
    let instant: Int64
    let permits: Int64
    /// For a leaky bucket queue: when the request starts.
    let start: Int64
}

/// Runs random traces and calls `check` after every admitted acquire with the admissions of the
/// current *segment* (a segment restarts at every applied reset or reconfigure, since the
/// invariants of clause 11 hold between them), the configuration and the step.
func forEachAdmission<S: RandomizedStrategy>(
    _ type: S.Type, _ name: String, traces: Int = 40, steps: Int = 300,
    _ check: (_ history: [Admission], _ strategy: S, _ step: TraceStep<S>) -> Bool
) {
    var history: [Admission] = []
    forEachRandomStep(type, name, traces: traces, steps: steps) { step in
        if step.index == 0 { history.removeAll() }
        switch step.event {
        case .reset, .reconfigure:
            history.removeAll()
            return true
        case .acquire(let permits):
            guard permits > 0, step.result.isAdmitted else { return true }
            var start = step.now
            if case .delayed(let wait, _) = step.result { start += wait }
            history.append(
                Admission(
                    instant: step.strategy.evaluationInstant(step.before, now: step.now), permits: permits, start: start
                ))
            return check(history, step.strategy, step)
        case .release:
            return true
        }
    }
}

/// The permits of `admissions`, saturated at `Int64.max` (so that a bug shows as a failure, not a trap).
func totalPermits<C: Collection<Admission>>(_ admissions: C) -> Int64 {
    admissions.reduce(0) { total, admission in
        let (sum, overflow) = total.addingReportingOverflow(admission.permits)
        return overflow ? .max : sum
    }
}

/// `⌊a·b / c⌋` at full width, or `nil` when it exceeds `Int64.max` (so a bound is not checkable).
func floorMultiplyDivide(_ a: Int64, _ b: Int64, _ c: Int64) -> Int64? {
    let product = UInt64(a).multipliedFullWidth(by: UInt64(b))
    guard product.high < UInt64(c) else { return nil }
    let quotient = UInt64(c).dividingFullWidth(product).quotient
    return quotient <= UInt64(Int64.max) ? Int64(quotient) : nil
}

/// For the newest admission, checks every interval [lo, hi] between its instant and another
/// admission's instant: the permits admitted at instants within it total at most `bound(lo, hi)`.
/// Instants are sorted first, so strategies whose admissions can go back in time (GCRA) are
/// judged on the timeline, not in admission order.
func intervalBoundHolds(
    _ history: [Admission], replay: String, describe: String,
    sourceLocation: SourceLocation = #_sourceLocation,
    bound: (_ lo: Int64, _ hi: Int64) -> Int64?
) -> Bool {
    guard let newest = history.last else { return true }
    let sorted = history.sorted { $0.instant < $1.instant }
    var prefix: [Int64] = [0]  // prefix[i] = permits of sorted[..<i], saturated
    for admission in sorted {
        let (sum, overflow) = prefix[prefix.count - 1].addingReportingOverflow(admission.permits)
        prefix.append(overflow ? .max : sum)
    }
    func firstIndex(atLeast instant: Int64) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle].instant < instant { low = middle + 1 } else { high = middle }
        }
        return low
    }
    for other in sorted {
        let lo = min(other.instant, newest.instant)
        let hi = max(other.instant, newest.instant)
        guard let limit = bound(lo, hi) else { continue }
        let end = hi == .max ? sorted.count : firstIndex(atLeast: hi + 1)
        let total = prefix[end] - prefix[firstIndex(atLeast: lo)]
        if total > limit {
            return holds(
                false, "admitted \(total) permits at instants in [\(lo), \(hi)] ns, bound \(limit): \(describe)",
                replay: replay, sourceLocation: sourceLocation)
        }
    }
    return true
}

/// PL-11, WU-11: for the newest admission of `history`, the permits admitted before it since each
/// earlier admission total at most `burst − 1 + ⌊(e_newest − e_i) / T⌋` (the newest, paid for
/// later, may be of any size).
func allButLastBoundHolds(
    _ history: [Admission], burst: Int64, intervalNanoseconds: Int64, clause: String, replay: String,
    describe: String, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    guard let last = history.last else { return true }
    var before: Int64 = 0
    for admission in history.dropLast().reversed() {
        let (sum, overflow) = before.addingReportingOverflow(admission.permits)
        before = overflow ? .max : sum
        let slots = (last.instant - admission.instant) / intervalNanoseconds
        let bound = slots > Int64.max - burst ? Int64.max : slots + burst - 1
        guard
            holds(
                before <= bound,
                "\(clause) \(before) permits admitted from \(admission.instant) before the acquire at \(last.instant), bound \(bound): \(describe)",
                replay: replay, sourceLocation: sourceLocation)
        else { return false }
    }
    return true
}
