import RateLimitCore

/// The admission bound of a strategy's invariants clause (TB-11, TBI-11, GCRA-11, PL-11, WU-11, FW-11,
/// SWL-11, SWC-11, SWS-11, LBM-11, LBQ-11, CL-11), in a form the exhaustive walk checks at every transition.
///
/// The bounds are stated over pairs of admissions between resets and reconfigures, so the walk
/// carries an ``AdmissionMonitor`` with each state: the admissions that can still be the first of
/// a violating pair, nothing more, so that equal futures give equal monitors.
package enum AdmissionBound: Hashable, Sendable {
    /// Admitted acquires `i ... j` total at most `capacity + ⌊permits·(e_j − e_i)/period⌋`
    /// (TB-11, LBM-11; GCRA-11 with `permits` 1 and the emission interval as the period).
    case rate(clause: String, capacity: Int64, permits: Int64, periodNanoseconds: Int64)
    /// PL-11, WU-11: admitted acquires `i ... j` total at most `burst − 1 + ⌊(e_j − e_i)/T⌋`
    /// permits leaving out the last one, `j`, which may be of any size (it is paid for later).
    case debt(clause: String, burst: Int64, intervalNanoseconds: Int64)
    /// TBI-11: admitted acquires `i ... j` total at most `capacity + perInterval·(⌊e_j/I⌋ − ⌊e_i/I⌋)`.
    case grid(capacity: Int64, perInterval: Int64, intervalNanoseconds: Int64)
    /// FW-11: the permits admitted in each window `⌊e/W⌋` total at most `limit`.
    case fixedWindow(limit: Int64, windowNanoseconds: Int64)
    /// SWL-11, SWC-11: the permits admitted with evaluation instants in any `(t − W, t]` total at
    /// most `limit` (`N` for the log, `N + ⌊N·(W − 2)/W⌋` for the counter).
    case slidingWindow(clause: String, limit: Int64, windowNanoseconds: Int64)
    /// SWS-11: the permits admitted with evaluation instants in any `S` consecutive segments of
    /// `G` ns, `[m·G, (m + S)·G)`, total at most `limit`.
    case segments(limit: Int64, segmentNanoseconds: Int64, segmentsPerWindow: Int64)
    /// LBQ-11: starts in admission order, each at or after its evaluation instant and at least
    /// `n·T` after the start of the request before; at each admission at `e`, the permits whose
    /// slots begin after `e` total at most `queueCapacity`.
    case schedule(queueCapacity: Int64, intervalNanoseconds: Int64)
    /// CL-11: in flight is admitted minus released since the last reset, never negative, at most
    /// the limit after an admission, and `remaining` is what is left of the limit.
    case inFlight(limit: Int64)

    /// The bound of `configuration`'s strategy.
    package init(_ configuration: AnyRateLimitStrategy) {
        switch configuration {
        case .tokenBucket(let s):
            self = .rate(
                clause: "TB-11", capacity: s.capacity, permits: s.permitsPerPeriod,
                periodNanoseconds: s.periodNanoseconds)
        case .leakyBucketMeter(let s):
            self = .rate(
                clause: "LBM-11", capacity: s.capacity, permits: s.leakPermitsPerPeriod,
                periodNanoseconds: s.periodNanoseconds)
        case .gcra(let s):
            self = .rate(
                clause: "GCRA-11", capacity: s.burst, permits: 1, periodNanoseconds: s.emissionIntervalNanoseconds)
        case .payLater(let s):
            self = .debt(clause: "PL-11", burst: s.burst, intervalNanoseconds: s.emissionIntervalNanoseconds)
        case .warmUp(let s):
            self = .debt(clause: "WU-11", burst: s.burst, intervalNanoseconds: s.emissionIntervalNanoseconds)
        case .intervalTokenBucket(let s):
            self = .grid(
                capacity: s.capacity, perInterval: s.tokensPerInterval, intervalNanoseconds: s.intervalNanoseconds)
        case .fixedWindow(let s): self = .fixedWindow(limit: s.limit, windowNanoseconds: s.windowNanoseconds)
        case .slidingWindowLog(let s):
            self = .slidingWindow(clause: "SWL-11", limit: s.limit, windowNanoseconds: s.windowNanoseconds)
        case .slidingWindowCounter(let s):
            let (n, w) = (s.limit, s.windowNanoseconds)
            // SWC-11's worst case; the walk's configurations are small, so the product fits.
            let limit = w >= 2 ? n + (n.multipliedReportingOverflow(by: w - 2).partialValue / w) : n
            self = .slidingWindow(clause: "SWC-11", limit: limit, windowNanoseconds: w)
        case .slidingWindowSegments(let s):
            self = .segments(
                limit: s.limit, segmentNanoseconds: s.segmentNanoseconds, segmentsPerWindow: s.segmentsPerWindow)
        case .leakyBucketQueue(let s):
            self = .schedule(queueCapacity: s.queueCapacity, intervalNanoseconds: s.intervalNanoseconds)
        case .concurrency(let s): self = .inFlight(limit: s.limit)
        }
    }

    /// The clause the bound restates.
    package var clause: String {
        switch self {
        case .rate(let clause, _, _, _), .debt(let clause, _, _), .slidingWindow(let clause, _, _): clause
        case .grid: "TBI-11"
        case .fixedWindow: "FW-11"
        case .segments: "SWS-11"
        case .schedule: "LBQ-11"
        case .inFlight: "CL-11"
        }
    }

    /// The most permits admitted acquires with evaluation instants `first ≤ last` may total (the
    /// last acquire left out when ``excludesLastAcquire``), or `nil` when the clause sets no bound
    /// on that pair.
    func limit(from first: Int64, to last: Int64) -> Int64? {
        switch self {
        case .rate(_, let capacity, let permits, let period):
            let (product, overflow) = permits.multipliedReportingOverflow(by: last - first)
            return overflow ? nil : capacity + product / period
        case .debt(_, let burst, let interval):
            return saturated(burst - 1, (last - first) / interval)
        case .grid(let capacity, let perInterval, let interval):
            return capacity + perInterval * (last / interval - first / interval)
        case .fixedWindow(let limit, let window):
            return first / window == last / window ? limit : nil
        case .slidingWindow(_, let limit, let window):
            return last - first < window ? limit : nil
        case .segments(let limit, let segment, let count):
            return last / segment - first / segment < count ? limit : nil
        case .schedule, .inFlight:
            return nil
        }
    }

    /// True when the bound leaves out the permits of the acquire that closes the interval (PL-11).
    var excludesLastAcquire: Bool {
        switch self {
        case .debt: true
        case .rate, .grid, .fixedWindow, .slidingWindow, .segments, .schedule, .inFlight: false
        }
    }

    /// How the bounds from an earlier admission `first` and a later one `next` compare from now
    /// on, `permitsBetween` being the permits admitted from `first` up to (not including) `next`:
    /// `.later` when `next`'s bound is always at least as tight (so `first` can be forgotten),
    /// `.earlier` when `first`'s is (so `next` can), `nil` when it depends on the instant (the
    /// pairwise bounds that grow with time: rate and grid).
    func tighter(of first: AdmissionMonitor.Entry, _ next: AdmissionMonitor.Entry, permitsBetween: Int64) -> Tighter? {
        // The slack of a bound from `i` at `e` is `limit(i, e) − permits admitted from i`; the
        // difference of two slacks, from `first` minus from `next`, is `g(e) − permitsBetween`.
        switch self {
        case .rate(_, _, let permits, let period):
            // g(e) = ⌊R(e − e_i)/P⌋ − ⌊R(e − e_j)/P⌋ lies within ⌊R(e_j − e_i)/P⌋ ... ⌈R(e_j − e_i)/P⌉.
            let (product, overflow) = permits.multipliedReportingOverflow(by: next.instant - first.instant)
            if overflow || product / period >= permitsBetween { return .later }
            return (product + period - 1) / period <= permitsBetween ? .earlier : nil
        case .debt(_, _, let interval):
            // As `.rate` with one permit per interval: the left-out last acquire is common to both.
            let elapsed = next.instant - first.instant
            if elapsed / interval >= permitsBetween { return .later }
            return elapsed / interval + (elapsed % interval == 0 ? 0 : 1) <= permitsBetween ? .earlier : nil
        case .grid(_, let perInterval, let interval):
            let gained = perInterval * (next.instant / interval - first.instant / interval)
            return gained >= permitsBetween ? .later : .earlier
        case .fixedWindow, .slidingWindow, .segments, .schedule, .inFlight:
            return nil
        }
    }

    enum Tighter { case earlier, later }
}

/// What an exhaustive walk remembers of a path's admissions to check its strategy's
/// ``AdmissionBound`` on every later transition: canonical, so that two paths with the same future
/// obligations reach the same monitor.
package struct AdmissionMonitor: Hashable, Sendable {
    /// Permits admitted at one evaluation instant (or, for the queue, one request's start).
    package struct Entry: Hashable, Sendable {
        package var instant: Int64
        package var permits: Int64
    }

    /// Admissions that may still start a violating pair, oldest first (the pairwise bounds); the
    /// requests whose slots have not all begun (the queue).
    private(set) var entries: [Entry] = []
    /// The limiter's last recorded instant as the Spec defines it (admissions, resets and
    /// reconfigures record; refusals and queries do not): evaluation instants are `max(now, it)`.
    private(set) var recorded: Int64
    /// The queue's last admitted request, for its spacing; the concurrency limiter's permits in flight.
    private var previous: Entry?
    private var inFlight: Int64 = 0

    package init(createdAt: Int64) { recorded = createdAt }

    /// Records the answer `result` to `event` at `now` under `bound` (the configuration in force
    /// before the event, `after` the one after it) and returns the violations it shows.
    package mutating func observe<S: RateLimitStrategy>(
        _ event: RateLimitEvent<S>, at now: Int64, result: RateLimitResult, bound: AdmissionBound,
        after: AdmissionBound
    ) -> [String] {
        let usesTime: Bool
        if case .inFlight = bound { usesTime = false } else { usesTime = true }
        let evaluation = max(now, recorded)
        var violations: [String] = []
        switch event {
        case .acquire(let permits):
            guard permits > 0, result.isAdmitted else { return [] }
            if usesTime { recorded = evaluation }
            violations = admit(permits, at: evaluation, now: now, result: result, bound: bound)
        case .release(let permits):
            guard case .inFlight = bound, case .allowed(let remaining) = result else { return [] }
            inFlight -= permits
            if inFlight < 0 { violations.append("CL-11 released more than in flight: \(inFlight) in flight") }
            violations += checkRemaining(remaining, bound: bound)
        case .reset:
            guard case .allowed = result else { return [] }
            if usesTime { recorded = evaluation }
            (entries, previous, inFlight) = ([], nil, 0)
        case .reconfigure:
            guard case .allowed = result else { return [] }
            if usesTime { recorded = evaluation }
            // CL-10 keeps what is in flight; the other bounds start again.
            (entries, previous) = ([], nil)
            if case .inFlight = after {} else { inFlight = 0 }
        }
        prune(bound: after, latest: recorded)
        return violations
    }

    private mutating func admit(
        _ permits: Int64, at evaluation: Int64, now: Int64, result: RateLimitResult, bound: AdmissionBound
    )
        -> [String]
    {
        var violations: [String] = []
        switch bound {
        case .schedule(let queueCapacity, let interval):
            let wait: Int64
            if case .delayed(let delay, _) = result { wait = delay } else { wait = 0 }
            let start = saturated(now, wait)
            if start < evaluation {
                violations.append("LBQ-11 a request admitted at \(evaluation) starts at \(start), before it")
            }
            if let previous, start < saturated(previous.instant, previous.permits * interval) {
                violations.append(
                    "LBQ-11 a request starts at \(start), less than \(previous.permits)·\(interval) ns after the start at \(previous.instant) of the one before"
                )
            }
            let request = Entry(instant: start, permits: permits)
            previous = request
            entries.append(request)
            // Permits whose slots begin after `evaluation`: slots s, s + T, ..., s + (n − 1)·T.
            let waiting = entries.reduce(Int64(0)) { total, entry in
                let begun =
                    entry.instant > evaluation ? 0 : min(entry.permits, (evaluation - entry.instant) / interval + 1)
                return total + entry.permits - begun
            }
            if waiting > queueCapacity {
                violations.append(
                    "LBQ-11 \(waiting) permits wait at \(evaluation) after an admission, more than the queue's \(queueCapacity)"
                )
            }
        case .inFlight(let limit):
            inFlight += permits
            if inFlight > limit {
                violations.append("CL-11 \(inFlight) permits in flight, more than the limit \(limit)")
            }
            if case .allowed(let remaining) = result { violations += checkRemaining(remaining, bound: bound) }
        case .fixedWindow(let limit, let window):
            // Only the window's total matters: keep it as one entry at the window's start.
            let start = evaluation - evaluation % window
            let total = (entries.last?.instant == start ? entries.last!.permits : 0) + permits
            entries = [Entry(instant: start, permits: total)]
            if total > limit {
                violations.append(
                    "FW-11 \(total) permits admitted in the window from \(start), more than \(limit)")
            }
        case .rate, .debt, .grid, .slidingWindow, .segments:
            // What was admitted at this instant before this acquire.
            var before: Int64 = 0
            if let last = entries.last, last.instant == evaluation {
                before = last.permits
                entries[entries.count - 1].permits = saturated(last.permits, permits)
            } else {
                entries.append(Entry(instant: evaluation, permits: permits))
            }
            // Saturated sums: a pay-later acquire may take any number of permits. The sum without
            // this acquire is kept apart, not taken back from a saturated total (Int64.max
            // permits would take everything before it back with them).
            var total: Int64 = 0
            var earlier: Int64 = 0
            for (index, entry) in entries.enumerated().reversed() {
                total = saturated(total, entry.permits)
                earlier = saturated(earlier, index == entries.count - 1 ? before : entry.permits)
                let counted = bound.excludesLastAcquire ? earlier : total
                if let limit = bound.limit(from: entry.instant, to: evaluation), counted > limit {
                    violations.append(
                        "\(bound.clause) \(counted) permits admitted from \(entry.instant) to \(evaluation)\(bound.excludesLastAcquire ? " before the last acquire" : ""), more than \(limit)"
                    )
                }
            }
        }
        return violations
    }

    /// CL-11: `remaining` is the limit minus the permits in flight, when that is positive.
    private func checkRemaining(_ remaining: Int64, bound: AdmissionBound) -> [String] {
        guard case .inFlight(let limit) = bound, remaining != max(0, limit - inFlight) else { return [] }
        return ["CL-11 remaining \(remaining) with \(inFlight) of \(limit) in flight"]
    }

    /// Forgets what can no longer matter, so that the monitor stays canonical and the walk finite.
    private mutating func prune(bound: AdmissionBound, latest: Int64) {
        switch bound {
        case .schedule(_, let interval):
            entries.removeAll { saturated($0.instant, ($0.permits - 1) * interval) <= latest }
            if let last = previous, saturated(last.instant, last.permits * interval) <= latest { previous = nil }
        case .inFlight:
            entries = []
        case .fixedWindow(_, let window):
            entries.removeAll { $0.instant / window != latest / window }
        case .slidingWindow(_, _, let window):
            entries.removeAll { latest - $0.instant >= window }
        case .segments(_, let segment, let count):
            entries.removeAll { latest / segment - $0.instant / segment >= count }
        case .rate, .debt, .grid:
            // Keep only the bounds that may be the tightest at some later instant.
            var kept: [(entry: Entry, permitsFrom: Int64)] = []
            var total = entries.reduce(Int64(0)) { saturated($0, $1.permits) }
            for entry in entries {
                let permitsFrom = total
                total -= entry.permits
                let redundant = kept.contains {
                    bound.tighter(of: $0.entry, entry, permitsBetween: $0.permitsFrom - permitsFrom) == .earlier
                }
                if redundant { continue }
                kept.removeAll {
                    bound.tighter(of: $0.entry, entry, permitsBetween: $0.permitsFrom - permitsFrom) == .later
                }
                kept.append((entry, permitsFrom))
            }
            entries = kept.map(\.entry)
        }
    }
}

/// `instant + span`, or `Int64.max` past the end of the timeline.
private func saturated(_ instant: Int64, _ span: Int64) -> Int64 {
    let (sum, overflow) = instant.addingReportingOverflow(span)
    return overflow ? .max : sum
}
