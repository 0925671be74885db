import RateLimitCore

/// Judges an implementation's answers, step by step, against the Spec given the implementation's
/// own history (Spec/Conformance.md, CONF-1 to CONF-6).
///
/// The judge keeps a *shadow*: the reference model fed the events the implementation applied,
/// as the implementation applied them (an admitted acquire is taken, a refused one is not, an
/// admission within the tolerance is taken at the Spec's admission instant). Each answer is
/// compared with the shadow's answer to the same event at the same instant, so a conservative
/// step is not held against every later one, and a looser one is caught where it happens.
struct Judge {
    /// The tolerance T (CONF-6) and the largest instant of the implementation's profile.
    let tolerance: Int64
    let largestInstant: Int64
    /// The most permits one event of the implementation's API takes (CONF-7): a `remaining` is
    /// judged up to it, since no larger acquire can be asked.
    let largestPermits: Int64
    /// The resolution of the implementation's clock (CONF-7): an admission instant it answers
    /// is exact when it is the Spec's rounded up to the next multiple of it, the first instant
    /// that clock can tell.
    let clockUnit: Int64
    private(set) var shadow: ReferenceLimiter
    /// The shadow's configuration (a reconfigure the implementation applied replaces it).
    private(set) var configuration: AnyRateLimitStrategy
    /// The implementation's last answer when it refused an acquire with a retry-after: the
    /// promise CONF-5 holds it to at the next step.
    private var promise: (step: Int, permits: Int64, now: Int64, retryAfter: Int64)?
    /// A sustained refusal (CONF-5): the implementation refused `acquire(permits)` at `since`, and
    /// the Spec has admitted it at every step from then on.
    private var debt: (permits: Int64, since: Int64)?

    init(configuration: AnyRateLimitStrategy, createdAt: Int64, profile: ImplementationProfile, tolerance: Int64) {
        self.tolerance = tolerance
        largestInstant = profile.largestInstantNanoseconds
        largestPermits = profile.largestPermits
        clockUnit = max(1, profile.timeUnitNanoseconds)
        shadow = ReferenceLimiter(configuration, at: .generated(createdAt))
        self.configuration = configuration
    }

    /// The verdict on one step.
    struct Verdict {
        /// The Spec's answer given the implementation's history.
        var expected: RateLimitResult
        /// Set when the answer is not the Spec's (and not within the tolerance of it).
        var kind: FindingKind?
        var explanation: String?
        var severity = FindingSeverity()
        /// The instant at which the Spec admits the step's acquire (for the cause).
        var specAdmission: Int64?
        /// The answer differs from the Spec's but lies within the tolerance.
        var withinTolerance = false
        /// The answer is the Spec's as the implementation's clock tells it: its instant rounded up
        /// to the clock's unit (CONF-7), or a wait past the end of the timeline where the Spec
        /// admits only past it (CONF-1). Exact.
        var exactOnItsClock = false
        /// The implementation refused again after its own retry-after (CONF-5).
        var brokenPromise = false
    }

    /// Judges answer `got` to `event` at step `step` (1-based), then moves the shadow on as the
    /// implementation did (CONF-2).
    mutating func judge(step: Int, _ event: ConformanceEvent, at now: Int64, got: RateLimitResult) -> Verdict {
        let got = capped(got)
        let spec = capped(shadow.probe(event, at: .generated(now)))
        var verdict = Verdict(expected: spec)
        defer {
            if verdict.kind?.failsSafety != true {
                advance(step: step, event, at: now, got: got, spec: spec, verdict: verdict)
            }
        }
        if let problem = Self.malformation(got, to: event, at: now) {
            (verdict.kind, verdict.explanation) = (.malformed, problem)
            return verdict
        }
        guard got.comparable != spec.comparable else { return verdict }
        switch event {
        case .acquire(let permits) where permits > 0:
            judgeAcquire(permits, step: step, at: now, got: got, spec: spec, into: &verdict)
        case .acquire, .release, .reset, .reconfigure: judgeOther(event, at: now, got: got, spec: spec, into: &verdict)
        }
        if verdict.kind == nil, !verdict.withinTolerance, !verdict.exactOnItsClock { verdict.kind = .difference }
        return verdict
    }

    /// `instant` rounded up to the next multiple of the clock unit; past ``lastOnClock`` when
    /// that multiple lies beyond the timeline (saturating).
    private func onClock(_ instant: Int64) -> Int64 {
        let over = instant % clockUnit
        return over == 0 ? instant : Self.saturating(instant - over, clockUnit)
    }

    /// The last instant the implementation's clock can tell: the last multiple of its unit.
    private var lastOnClock: Int64 { Int64.max - Int64.max % clockUnit }

    /// Whether an answered instant other than the Spec's is the Spec's on the implementation's
    /// clock: both read the same there, each rounded up to its next multiple (CONF-7). A caller
    /// on that clock waits for its first reading at or after the instant it is given, so an
    /// instant between two readings is the later one.
    private func onClockUnit(_ answered: Int64, spec: Int64) -> Bool {
        clockUnit > 1 && answered != spec && onClock(answered) == onClock(spec)
    }

    /// Judges answer `got` to a reconfigure to raw `fields` at `now`, fields the Spec
    /// refuses (CORE-3): the Spec answers `invalid` naming the refusal and changes nothing
    /// (CORE-13, CORE-8), so the shadow does not move. Applying it is an over-admission (CONF-4);
    /// naming another field, problem or maximum is a difference (CONF-3).
    mutating func judgeRefusedReconfigure(_ fields: JSONValue, at now: Int64, got: RateLimitResult) -> Verdict {
        promise = nil  // an event came between (CONF-5)
        var probe = shadow
        let spec = probe.reconfigure(toFields: fields, at: .generated(now))
        var verdict = Verdict(expected: spec)
        // The field checks of CORE-5 hold for any event (an acquire's answer may be any kind).
        if let problem = Self.malformation(got, to: .acquire(1), at: now) {
            (verdict.kind, verdict.explanation) = (.malformed, problem)
            return verdict
        }
        switch got {
        case .allowed, .invalid: break
        case .delayed, .rejected, .rejectedUntilRelease, .neverAllowed:
            (verdict.kind, verdict.explanation) = (
                .malformed, "a reconfigure is answered allowed or invalid (CORE-5), not \(got.brief)"
            )
            return verdict
        }
        guard got.comparable != spec.comparable else {
            if case .allowed = got {  // the Spec applies these fields after all
                shadow = probe
                configuration = probe.configuration
            }
            return verdict
        }
        if spec.isInvalid, got.isAdmitted {
            verdict.kind = .overAdmission
            verdict.explanation =
                "applied a reconfigure to a configuration the Spec refuses (\(spec.brief)): the state must not change (CORE-13)"
        } else if got.isInvalid, spec.remaining != nil {
            verdict.kind = .liveness
            verdict.explanation =
                "refuses a reconfigure the Spec applies (\(spec.brief)): the new limits never take effect"
        } else {
            verdict.kind = .difference
        }
        return verdict
    }

    // MARK: CONF-1 well-formed answers

    /// How `got` breaks CORE-5 (or the protocol's schema), if it does.
    static func malformation(_ got: RateLimitResult, to event: ConformanceEvent, at now: Int64) -> String? {
        switch got {
        case .allowed(let remaining):
            if remaining < 0 { return "remaining \(remaining) is negative (CORE-5: remaining ≥ 0)" }
        case .delayed(let wait, let remaining):
            if wait < 1 { return "a delayed answer waits \(wait) ns (CORE-5: wait ≥ 1)" }
            if remaining < 0 { return "remaining \(remaining) is negative (CORE-5: remaining ≥ 0)" }
            if wait > Int64.max - now {
                return "now + wait passes the end of the timeline (CORE-5: a start at most \(Int64.max))"
            }
        case .rejected(let retryAfter):
            // A wait past the end of the timeline is well formed (a library whose clock outlives
            // it): it is judged as such (CONF-1, judgeAcquire).
            if retryAfter < 1 { return "retry-after \(retryAfter) ns (CORE-5: retry-after ≥ 1)" }
        case .rejectedUntilRelease(let shortfall):
            if shortfall < 1 { return "shortfall \(shortfall) (CORE-5: shortfall ≥ 1)" }
        case .neverAllowed, .invalid:
            break
        }
        switch (event, got) {
        case (.acquire, _), (_, .allowed), (.release, .invalid), (.reconfigure, .invalid): return nil
        case (.release, _): return "a release is answered allowed or invalid (CORE-5), not \(got.brief)"
        case (.reset, _): return "a reset is answered allowed (CORE-5, CORE-12), not \(got.brief)"
        case (.reconfigure, _): return "a reconfigure is answered allowed or invalid (CORE-5), not \(got.brief)"
        }
    }

    // MARK: CONF-4 safety, CONF-5 liveness, CONF-6 tolerance: acquire(n), n ≥ 1

    private mutating func judgeAcquire(
        _ permits: Int64, step: Int, at now: Int64, got: RateLimitResult, spec: RateLimitResult,
        into verdict: inout Verdict
    ) {
        let bound = Self.saturating(tolerance, Self.quantum(configuration))
        // When the Spec admits the acquire, and when the admitted request starts (its schedule).
        let admission: Int64?
        switch spec {
        case .allowed, .delayed: admission = now
        case .rejected(let retryAfter): admission = now + retryAfter
        case .rejectedUntilRelease, .neverAllowed, .invalid: admission = nil
        }
        verdict.specAdmission = admission
        let specStart = admission.map { start(of: shadow.probe(.acquire(permits), at: .generated($0)), at: $0) }

        if let previous = promise, step == previous.step + 1, permits <= previous.permits,
            now >= Self.saturating(Self.saturating(previous.now, previous.retryAfter), tolerance), !got.isAdmitted
        {
            verdict.kind = .liveness
            verdict.brokenPromise = true
            verdict.explanation =
                "refused again at \(now) ns, although its retry-after at step \(previous.step) promised admission from \(previous.now + previous.retryAfter) ns (CORE-7)"
            return
        }
        // A refusal within T of the Spec's admission (CONF-6) is no evidence of a sustained one: a
        // limiter on a coarse clock refuses so at scattered steps (CORE-17).
        let refusalWithinTolerance = if case .rejected(let retryAfter) = got { retryAfter <= tolerance } else { false }
        if !got.isAdmitted, spec.isAdmitted, !refusalWithinTolerance {
            if let owed = debt, permits <= owed.permits {
                if now > Self.saturating(owed.since, bound) {
                    verdict.kind = .liveness
                    verdict.severity.nanosecondsLate = now - owed.since
                    verdict.explanation =
                        "has refused acquire(\(permits)) since \(owed.since) ns, \(now - owed.since) ns, although the Spec admits it at every step since; beyond the liveness bound of \(bound) ns"
                    return
                }
            } else {
                debt = (permits, now)
            }
        }
        switch got {
        case .allowed, .delayed:
            let gotStart = start(of: got, at: now)
            guard let admission, let specStart else {
                verdict.kind = .overAdmission
                verdict.severity.permitsOver = permits
                verdict.explanation = "admitted acquire(\(permits)) where the Spec answers \(spec.brief)"
                if case .rejectedUntilRelease(let shortfall) = spec {
                    verdict.severity.permitsOver = min(permits, shortfall)
                }
                return
            }
            if admission > Self.saturating(now, tolerance) {
                verdict.kind = .overAdmission
                verdict.severity = FindingSeverity(permitsOver: permits, nanosecondsEarly: admission - now)
                verdict.explanation =
                    "admitted acquire(\(permits)) \(admission - now) ns before the Spec would (\(spec.brief))"
                return
            }
            if gotStart < specStart - min(tolerance, specStart), !onClockUnit(gotStart, spec: specStart) {
                verdict.kind = .earlyRetry
                verdict.severity.nanosecondsEarly = specStart - gotStart
                verdict.explanation = "starts \(specStart - gotStart) ns earlier than the Spec's schedule"
                return
            }
            if let remaining = got.remaining, let allowed = remainingBound(.acquire(permits), at: now, upper: true),
                remaining > allowed
            {
                verdict.kind = .overPromise
                verdict.severity.permitsOver = remaining - allowed
                verdict.explanation = "promises \(remaining) remaining where the Spec allows \(allowed)"
                return
            }
            if gotStart > Self.saturating(onClock(specStart), bound) {
                verdict.kind = .liveness
                verdict.severity.nanosecondsLate = gotStart - specStart
                verdict.explanation =
                    "starts \(gotStart - specStart) ns after the Spec's schedule, beyond the liveness bound of \(bound) ns"
                return
            }
            let lower = remainingBound(.acquire(permits), at: now, upper: false) ?? 0
            let remainingHolds = got.remaining.map { $0 >= lower } ?? false
            verdict.withinTolerance = tolerance > 0 && abs(gotStart - specStart) <= tolerance && remainingHolds
            verdict.exactOnItsClock =
                onClockUnit(gotStart, spec: specStart) && got.remaining == spec.remaining && !verdict.withinTolerance
            if !verdict.withinTolerance, !verdict.exactOnItsClock, gotStart > specStart {
                verdict.severity.nanosecondsLate = gotStart - specStart
            }
        case .rejected(let retryAfter):
            // A wait that ends past the end of the timeline: after every instant the Spec has
            // (Int64.max stands for any wait that long or longer).
            let pastTheEnd = retryAfter > Int64.max - now || retryAfter == Int64.max
            let retry = pastTheEnd ? Int64.max : now + retryAfter
            if spec == .neverAllowed {
                if pastTheEnd, permits <= configuration.maximumPermits {
                    // The Spec's admission lies past the end too (CORE-7): the same answer, from
                    // a clock that outlives the timeline.
                    verdict.exactOnItsClock = true
                    return
                }
                verdict.kind = .retryForever
                verdict.explanation =
                    "retry-after \(retryAfter) ns where the Spec never admits this acquire (CORE-7): a caller would retry forever"
                return
            }
            guard let admission, let specStart else { return }
            if retry < admission - min(tolerance, admission), !onClockUnit(retry, spec: admission) {
                verdict.kind = .earlyRetry
                verdict.severity.nanosecondsEarly = admission - retry
                verdict.explanation =
                    "retry-after \(retryAfter) ns is \(admission - retry) ns shorter than the Spec's (\(spec.brief))"
                return
            }
            if retry > Self.saturating(onClock(specStart), bound) {
                verdict.kind = .liveness
                verdict.severity.nanosecondsLate = retry - specStart
                verdict.explanation =
                    pastTheEnd
                    ? "retry-after \(retryAfter) ns passes the end of the timeline, where the Spec admits at \(specStart) ns (\(spec.brief)), beyond the liveness bound of \(bound) ns"
                    : "retry-after \(retryAfter) ns reaches \(retry - specStart) ns past the Spec's admission (\(spec.brief)), beyond the liveness bound of \(bound) ns"
                return
            }
            verdict.withinTolerance = tolerance > 0 && abs(retry - admission) <= tolerance
            verdict.exactOnItsClock = onClockUnit(retry, spec: admission) && !verdict.withinTolerance
            if !verdict.withinTolerance, !verdict.exactOnItsClock, retry > admission {
                verdict.severity.nanosecondsLate = retry - admission
            }
        case .rejectedUntilRelease:
            if spec == .neverAllowed {
                verdict.kind = .retryForever
                verdict.explanation = "waits for releases where the Spec never admits this acquire (CORE-7)"
            } else if let admission {
                verdict.kind = .liveness
                verdict.explanation =
                    admission == now
                    ? "waits for a release where the Spec admits the acquire now"
                    : "waits for a release where time alone admits it at \(admission) ns"
            }
        case .neverAllowed:
            if let admission, onClock(admission) <= largestInstant, onClock(admission) <= lastOnClock {
                verdict.kind = .liveness
                verdict.explanation = "never allowed, where the Spec admits it at \(admission) ns (\(spec.brief))"
            } else if case .rejectedUntilRelease = spec {
                verdict.kind = .liveness
                verdict.explanation = "never allowed, where releases would admit it (\(spec.brief))"
            } else if let admission, onClock(admission) > lastOnClock {
                verdict.exactOnItsClock = true  // admitted only after the last instant its clock tells
            } else if admission != nil {
                verdict.withinTolerance = true  // admitted only after the profile's largest instant
            }
        case .invalid:
            if admission != nil || spec.isRejectedUntilRelease {
                verdict.kind = .liveness
                verdict.explanation =
                    "refuses a valid acquire(\(permits)) as invalid, where the Spec answers \(spec.brief)"
            }
        }
    }

    // MARK: The query, bad input, release, reset and reconfigure

    private func judgeOther(
        _ event: ConformanceEvent, at now: Int64, got: RateLimitResult, spec: RateLimitResult,
        into verdict: inout Verdict
    ) {
        if spec.isInvalid, got.isAdmitted {
            if case .acquire(let permits) = event, permits < 0 {
                // A negative acquire admits nothing: the answer is wrong, not an admission. The
                // shadow keeps its state, so permits the implementation added show as an
                // over-admission at the step that uses them. A remaining above what a query
                // would show now is an over-promise all the same.
                let available = remainingBound(.acquire(0), at: now, upper: true) ?? 0
                if let promised = got.remaining, promised > available {
                    verdict.kind = .overPromise
                    verdict.severity.permitsOver = promised - available
                    verdict.explanation =
                        "answered \(got.brief) to \(event.description), which the Spec refuses as invalid (\(spec.brief), CORE-9): promises \(promised) remaining where a query shows \(available)"
                    return
                }
                verdict.kind = .difference
                verdict.explanation =
                    "answered \(got.brief) to \(event.description), which the Spec refuses as invalid (\(spec.brief), CORE-9); a negative acquire admits nothing, so it is no over-admission by itself: permits it added show at a later step"
                return
            }
            verdict.kind = .overAdmission
            verdict.explanation = "applied \(event.description), which the Spec refuses as invalid (\(spec.brief))"
            return
        }
        if got.isInvalid, spec.remaining != nil {
            switch event {
            case .release:
                verdict.kind = .liveness
                verdict.explanation =
                    "refuses a release the Spec applies (\(spec.brief)): the permits it holds never come back"
                return
            case .reconfigure:
                verdict.kind = .liveness
                verdict.explanation =
                    "refuses a reconfigure the Spec applies (\(spec.brief)): the new limits never take effect"
                return
            case .acquire, .reset:
                break
            }
        }
        guard let remaining = got.remaining, spec.remaining != nil else { return }
        if let allowed = remainingBound(event, at: now, upper: true), remaining > allowed {
            verdict.kind = .overPromise
            verdict.severity.permitsOver = remaining - allowed
            verdict.explanation = "promises \(remaining) remaining where the Spec allows \(allowed)"
            return
        }
        if tolerance > 0, let lower = remainingBound(event, at: now, upper: false), remaining >= lower,
            case .allowed = got
        {
            verdict.withinTolerance = true
        }
    }

    // MARK: Helpers

    /// The Spec's `remaining` after `event` at `now + T` (upper; `nil` when the Spec does not
    /// admit the event then) or at `now − T` (lower; 0 when it does not admit it then): both are
    /// the Spec's own `remaining` when T = 0 (CONF-6).
    private func remainingBound(_ event: ConformanceEvent, at now: Int64, upper: Bool) -> Int64? {
        let instant = upper ? Self.saturating(now, tolerance) : now - min(tolerance, now)
        let remaining = capped(shadow.probe(event, at: .generated(instant))).remaining
        return upper ? remaining : remaining ?? 0
    }

    /// `result` with its `remaining` judged up to the profile's largest permits (CONF-7).
    private func capped(_ result: RateLimitResult) -> RateLimitResult {
        guard largestPermits < .max else { return result }
        switch result {
        case .allowed(let remaining): return .allowed(remaining: min(remaining, largestPermits))
        case .delayed(let wait, let remaining):
            return .delayed(waitNanoseconds: wait, remaining: min(remaining, largestPermits))
        case .rejected, .rejectedUntilRelease, .neverAllowed, .invalid: return result
        }
    }

    /// When an admitted request starts: now, or after its wait.
    private func start(of result: RateLimitResult, at now: Int64) -> Int64 {
        if case .delayed(let wait, _) = result { return Self.saturating(now, wait) }
        return now
    }

    /// Moves the shadow on as the implementation did (CONF-2), and remembers a retry-after as a
    /// promise for the next step.
    private mutating func advance(
        step: Int, _ event: ConformanceEvent, at now: Int64, got: RateLimitResult, spec: RateLimitResult,
        verdict: Verdict
    ) {
        promise = nil
        defer {
            // A sustained refusal lasts while the Spec keeps admitting the acquire.
            if let owed = debt, !shadow.probe(.acquire(owed.permits), at: .generated(now)).isAdmitted { debt = nil }
        }
        switch event {
        case .acquire(let permits) where permits > 0:
            if got.isAdmitted {
                // An admission within the tolerance is taken when the Spec would take it.
                let instant = spec.isAdmitted ? now : max(now, verdict.specAdmission ?? now)
                _ = shadow.apply(event, at: .generated(instant))
            } else if case .rejected(let retryAfter) = got, retryAfter <= Int64.max - now, retryAfter < Int64.max {
                promise = (step, permits, now, retryAfter)  // a wait past the end promises nothing
            }
        case .acquire:
            break
        case .release, .reset, .reconfigure:
            guard case .allowed = got, case .allowed = spec else { return }
            _ = shadow.apply(event, at: .generated(now))
            if case .reconfigure(let replacement) = event { configuration = replacement }
        }
    }

    /// The liveness quantum of CONF-5: the time the Spec takes to make one more permit available
    /// (a window, an interval, an emission interval, a period per permit); 0 for the concurrency
    /// limiter, which has no time.
    static func quantum(_ configuration: AnyRateLimitStrategy) -> Int64 {
        func perPermit(_ period: Int64, _ permits: Int64) -> Int64 {
            period / permits + (period % permits == 0 ? 0 : 1)
        }
        switch configuration {
        case .tokenBucket(let s): return perPermit(s.periodNanoseconds, s.permitsPerPeriod)
        case .intervalTokenBucket(let s): return s.intervalNanoseconds
        case .gcra(let s): return s.emissionIntervalNanoseconds
        case .payLater(let s): return s.emissionIntervalNanoseconds
        case .warmUp(let s):  // a cold permit takes up to three intervals (WU-11)
            return s.emissionIntervalNanoseconds > Int64.max / 3 ? .max : 3 * s.emissionIntervalNanoseconds
        case .fixedWindow(let s): return s.windowNanoseconds
        case .slidingWindowLog(let s): return s.windowNanoseconds
        case .slidingWindowCounter(let s): return s.windowNanoseconds
        case .slidingWindowSegments(let s): return s.segmentsPerWindow * s.segmentNanoseconds
        case .leakyBucketMeter(let s): return perPermit(s.periodNanoseconds, s.leakPermitsPerPeriod)
        case .leakyBucketQueue(let s): return s.intervalNanoseconds
        case .concurrency: return 0
        }
    }

    /// `a + b` for non-negative values, saturated at `Int64.max`.
    static func saturating(_ a: Int64, _ b: Int64) -> Int64 { a > Int64.max - b ? Int64.max : a + b }
}

extension RateLimitResult {
    var isRejectedUntilRelease: Bool { if case .rejectedUntilRelease = self { true } else { false } }
}
