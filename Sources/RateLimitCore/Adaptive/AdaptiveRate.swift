// The adaptive rate (Spec/AdaptiveLimits.md, clauses ADAPT-1 ... ADAPT-9, ADAPT-15, ADAPT-16).
//
// A rate of `r` permits per period `P` and a burst `b`, learned from the server's responses as TCP
// learns its window: additive increase while requests are served, multiplicative decrease when
// the server refuses (429, 503), at most one decrease per cool-down, within a floor and a ceiling.
// A rate the server states (RateLimit-Policy, HTTP-13) is adopted at once and becomes the ceiling.
//
// The rules. Served responses are counted in rounds of `r`: a round is what the client serves in
// one period when it sends at its rate, so each round completed within two periods raises the rate
// by the step (`startIncrease` until the first decrease, like TCP's start phase, then `increase`),
// and also measures the rate actually served, `k·P/Δ`. A rejection decreases by `decreasePercent`,
// from the lower of the rate and that measured rate when a round was measured since the last
// decrease (the client crept past the server's rate). One refusal cannot tell a rate a little too
// high from one far too high, so the first step is gentle either way; a second refusal with no
// round served in between says it was not enough, and decreases by `steepDecreasePercent`. A
// rejection that arrives before the client sent more than its own burst since the last decrease
// means the server's burst is smaller: the burst shrinks to a share of what was served. The burst
// never grows again but by a reset: a burst only matters after an idle stretch, and one that
// grew back would meet the same refusal after every wait.
//
// The plateau (as TCP CUBIC's plateau around the window it lost at). A measured rejection says
// the server's limit lies a little below the rate it refused: the client climbs back to a margin
// below it and holds there, probing above it only every `holdRounds` rounds. A probe is one rate,
// `probeStep` above the plateau, held for 8 rounds: refused, the client returns to the plateau at
// once (it held: no cut) and doubles the hold, so a client that has found the limit asks less and
// less often; served, the server sustains it, so the plateau rises to it and the next probe goes
// twice as far (a limit that grew is found in a few probes). Without a plateau the rate saws up
// and down, a refusal (and the server's Retry-After) every few seconds; with one that climbs each
// round of a probe, the probe itself crosses the limit.
//
// Implementation. A dozen integers; products at 128 bits (WideArithmetic.swift), every sum
// saturated. Departures from TCP: the decrease is from the measured rate (as botocore's adaptive
// mode does), the increase needs a round the client really served, and the burst is learned.

/// A rate learned from the server (Spec `ADAPT-2` … `ADAPT-9`): additive increase while requests
/// are served, multiplicative decrease when the server refuses, a stated rate adopted at once.
public struct AdaptiveRate: AdaptiveLimit {
    public static let identifier = "adaptive-rate"

    /// The unit of time of every rate (P).
    public let periodNanoseconds: Int64
    /// The ceiling: never more permits per period.
    public let maximumRate: Int64
    /// The rate of a new machine, permits per period.
    public let initialRate: Int64
    /// The floor: never fewer permits per period.
    public let minimumRate: Int64
    /// Permits at once at first; the burst only ever shrinks from it.
    public let burst: Int64
    /// Rate added per round until the first decrease.
    public let startIncrease: Int64
    /// Rate added per round after a decrease.
    public let increase: Int64
    /// The decrease on a rejection, in percent.
    public let decreasePercent: Int64
    /// The decrease on a second rejection with no round served in between, and of a burst, in percent.
    public let steepDecreasePercent: Int64
    /// After a decrease, rejections change nothing for this long.
    public let coolDownNanoseconds: Int64

    /// A validated adaptive rate (`ADAPT-2`).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field, in the order of the Spec's table.
    public init(
        periodNanoseconds: Int64, maximumRate: Int64, initialRate: Int64, minimumRate: Int64, burst: Int64,
        startIncrease: Int64, increase: Int64, decreasePercent: Int64 = 10, steepDecreasePercent: Int64 = 50,
        coolDownNanoseconds: Int64
    ) throws(RateLimitInputError) {
        try RateLimitInputError.checkPositive(periodNanoseconds, "periodNanoseconds")
        try RateLimitInputError.checkBounds(maximumRate, initialRate, minimumRate, of: "Rate")
        try RateLimitInputError.checkPositive(burst, "burst")
        try RateLimitInputError.checkAtMost(
            burst, Int64.max / periodNanoseconds, "burst", "a burst refills in burst × periodNanoseconds ns at most")
        try RateLimitInputError.checkNotNegative(startIncrease, "startIncrease")
        try RateLimitInputError.checkNotNegative(increase, "increase")
        try RateLimitInputError.checkPercent(decreasePercent, "decreasePercent")
        try RateLimitInputError.checkPercent(steepDecreasePercent, "steepDecreasePercent")
        try RateLimitInputError.checkNotNegative(coolDownNanoseconds, "coolDownNanoseconds")
        self.periodNanoseconds = periodNanoseconds
        self.maximumRate = maximumRate
        self.initialRate = initialRate
        self.minimumRate = minimumRate
        self.burst = burst
        self.startIncrease = startIncrease
        self.increase = increase
        self.decreasePercent = decreasePercent
        self.steepDecreasePercent = steepDecreasePercent
        self.coolDownNanoseconds = coolDownNanoseconds
    }

    /// A validated adaptive rate with the period and the cool-down as durations (whole nanoseconds).
    public init(
        period: Duration, maximumRate: Int64, initialRate: Int64, minimumRate: Int64, burst: Int64,
        startIncrease: Int64, increase: Int64, decreasePercent: Int64 = 10, steepDecreasePercent: Int64 = 50,
        coolDown: Duration
    ) throws(RateLimitInputError) {
        try self.init(
            periodNanoseconds: period.wholeNanoseconds(field: "periodNanoseconds"), maximumRate: maximumRate,
            initialRate: initialRate, minimumRate: minimumRate, burst: burst, startIncrease: startIncrease,
            increase: increase, decreasePercent: decreasePercent, steepDecreasePercent: steepDecreasePercent,
            coolDownNanoseconds: coolDown.wholeNanoseconds(field: "coolDownNanoseconds"))
    }

    /// The limit in force: `rate` permits per `periodNanoseconds`, up to `burst` at once.
    public struct Limit: Hashable, Sendable {
        /// Permits per period.
        public let rate: Int64
        /// Permits at once.
        public let burst: Int64
        /// The period, in nanoseconds.
        public let periodNanoseconds: Int64

        /// A rate of `rate` permits per `periodNanoseconds`, up to `burst` at once.
        public init(rate: Int64, burst: Int64, periodNanoseconds: Int64) {
            self.rate = rate
            self.burst = burst
            self.periodNanoseconds = periodNanoseconds
        }
    }

    /// What the machine remembers (`ADAPT-3`).
    public struct State: Hashable, Sendable {
        /// The rate in force, permits per period.
        public internal(set) var rate: Int64
        /// The burst in force.
        public internal(set) var burst: Int64
        /// The highest rate the machine may reach now: `maximumRate`, or the stated rate within the bounds.
        public internal(set) var ceiling: Int64
        /// The last rate the server stated, permits per period before the bounds.
        public internal(set) var stated: Int64?
        /// Whether a decrease happened since creation or the last reset.
        public internal(set) var decreased: Bool
        /// Whether the last decrease found no measured round (`ADAPT-5`).
        public internal(set) var unmeasured: Bool
        /// Rejections before this instant change nothing (`ADAPT-6`).
        public internal(set) var coolDownUntil: Int64
        /// Responses served since the last decrease, creation or reset.
        public internal(set) var served: Int64
        /// Responses served in the current round.
        public internal(set) var roundCount: Int64
        /// The instant of the current round's first served response.
        public internal(set) var roundStart: Int64
        /// The rate of the last round completed since the last decrease.
        public internal(set) var measured: Int64?
        /// The rate the client holds at after a measured rejection: a margin below the rate the
        /// server refused (`ADAPT-5`), or none.
        public internal(set) var plateau: Int64?
        /// Rounds held at the plateau before the next probe above it (`ADAPT-4`).
        public internal(set) var holdRounds: Int64
        /// Rounds completed at the plateau since the last probe, decrease or adoption.
        public internal(set) var heldRounds: Int64
        /// Whether the rate is above the plateau by a probe.
        public internal(set) var probing: Bool
        /// Rounds completed since the probe began.
        public internal(set) var probedRounds: Int64
        /// How far above the plateau the next probe goes: `increase`, doubled by each probe served.
        public internal(set) var probeStep: Int64
        /// The latest instant of an applied event.
        public internal(set) var last: Int64
    }

    /// Rounds held at a new plateau before the first probe above it, and rounds a probe must be
    /// served above it before the plateau rises to it (`ADAPT-4`).
    public static let plateauRounds: Int64 = 8

    public func initialState(at now: RateLimitInstant) -> State {
        State(
            rate: initialRate, burst: burst, ceiling: maximumRate, stated: nil, decreased: false,
            unmeasured: false, coolDownUntil: now.nanoseconds, served: 0, roundCount: 0, roundStart: now.nanoseconds,
            measured: nil, plateau: nil, holdRounds: Self.plateauRounds, heldRounds: 0, probing: false,
            probedRounds: 0, probeStep: increase, last: now.nanoseconds)
    }

    public func limit(of state: State) -> Limit {
        Limit(rate: state.rate, burst: state.burst, periodNanoseconds: periodNanoseconds)
    }

    public func step(_ state: inout State, _ feedback: AdaptiveFeedback, at now: RateLimitInstant) -> AdaptiveAnswer<
        Limit
    > {
        let instant = max(now.nanoseconds, state.last)  // ADAPT-1
        switch feedback {
        case .reset:  // ADAPT-8
            state = initialState(at: RateLimitInstant(validated: instant))
            return .limit(limit(of: state), .reset)
        case .failure:  // ADAPT-8
            state.last = instant
            return .limit(limit(of: state), .unchanged)
        case .response(let status, let latency, let inFlight, let stated):
            if let error = AdaptiveFeedback.check(status: status, latency: latency, inFlight: inFlight, stated: stated)
            {
                return .invalid(error)
            }
            state.last = instant
            var adopted = false
            if let stated { adopted = adopt(stated, &state) }
            var change: AdaptiveChange = adopted ? .adopted : .unchanged
            switch ResponseClass(status: status) {
            case .served:
                if serve(&state, at: instant), !adopted { change = .increased }
            case .rejection:
                if decrease(&state, at: instant) { change = .decreased }
            case .serverError, .none:  // ADAPT-8
                break
            }
            let after = limit(of: state)
            return .limit(after, change)
        }
    }

    /// ADAPT-7: a stated rate, applied before the response's class; whether it was adopted.
    private func adopt(_ stated: StatedRate, _ state: inout State) -> Bool {
        let rate = stated.permits.multipliedDividedRoundingDown(periodNanoseconds, stated.windowNanoseconds)
        guard rate != state.stated else { return false }
        state.stated = rate
        state.ceiling = max(minimumRate, min(maximumRate, rate))
        state.rate = state.ceiling
        state.roundCount = 0
        state.measured = nil
        forgetPlateau(&state)
        return true
    }

    /// No plateau: the rate climbs by the step again (`ADAPT-4`, `ADAPT-7`).
    private func forgetPlateau(_ state: inout State) {
        state.plateau = nil
        state.holdRounds = Self.plateauRounds
        state.heldRounds = 0
        state.probing = false
        state.probedRounds = 0
        state.probeStep = increase
    }

    /// ADAPT-4: a served response counts in the round; a complete round measures and may raise the
    /// rate. Returns whether the rate went up.
    private func serve(_ state: inout State, at instant: Int64) -> Bool {
        state.served = state.served.saturatingAdd(1)
        if state.roundCount == 0 { state.roundStart = instant }
        state.roundCount += 1
        guard state.roundCount >= state.rate else { return false }
        let span = instant - state.roundStart
        state.measured =
            span == 0 ? .max : state.roundCount.multipliedDividedRoundingDown(periodNanoseconds, span)
        state.roundCount = 0
        guard span <= periodNanoseconds.saturatingAdd(periodNanoseconds) else { return false }
        let before = state.rate
        let step = state.decreased ? increase : startIncrease
        if let plateau = state.plateau {
            if state.probing {
                // A probe holds one rate: served for `plateauRounds` rounds, the server sustains it,
                // so the plateau rises to it, and the next probe (after the hold) reaches twice as far.
                state.probedRounds += 1
                if state.probedRounds >= Self.plateauRounds {
                    state.plateau = state.rate
                    state.probeStep = state.probeStep.saturatingAdd(state.probeStep)
                    state.probing = false
                    state.probedRounds = 0
                }
            } else if state.rate < plateau {
                state.rate = min(state.ceiling, plateau, state.rate.saturatingAdd(step))
            } else {
                // At the plateau: hold it for `holdRounds` rounds, then probe above it.
                state.heldRounds += 1
                if state.heldRounds >= state.holdRounds {
                    state.heldRounds = 0
                    state.rate = min(state.ceiling, plateau.saturatingAdd(state.probeStep))
                    state.probing = state.rate > plateau
                    state.probedRounds = 0
                }
            }
        } else {
            state.rate = min(state.ceiling, state.rate.saturatingAdd(step))
        }
        return state.rate > before
    }

    /// ADAPT-5, ADAPT-6: a rejection decreases the rate (and the burst) once per cool-down.
    /// Returns whether the rate or the burst went down.
    private func decrease(_ state: inout State, at instant: Int64) -> Bool {
        guard instant >= state.coolDownUntil else { return false }
        let before = (state.rate, state.burst)
        if state.probing, let plateau = state.plateau {
            // A probe refused: back to the plateau, which held; probe half as often, one step above.
            state.rate = min(state.rate, plateau)
            state.holdRounds = state.holdRounds.saturatingAdd(state.holdRounds)
            state.heldRounds = 0
            state.probing = false
            state.probedRounds = 0
            state.probeStep = increase
        } else {
            let lowered =
                if let measured = state.measured {
                    min(state.rate, measured).multipliedDividedRoundingDown(100 - decreasePercent, 100)
                } else if !state.unmeasured {
                    state.rate.multipliedDividedRoundingDown(100 - decreasePercent, 100)
                } else {
                    state.rate.multipliedDividedRoundingDown(100 - steepDecreasePercent, 100)
                }
            if let measured = state.measured {
                // The rate refused, less a margin: half the decrease, and at least one step. Not a
                // probe's refusal: the limit is new (or fell), so the hold starts again.
                let refused = min(state.rate, measured)
                state.plateau = max(
                    minimumRate,
                    min(refused - increase, refused.multipliedDividedRoundingDown(200 - decreasePercent, 200)))
                state.holdRounds = Self.plateauRounds
                state.heldRounds = 0
                state.probeStep = increase
            }
            state.rate = min(state.rate, max(minimumRate, lowered))
        }
        if state.served <= state.burst {
            state.burst = max(1, state.served.multipliedDividedRoundingDown(100 - steepDecreasePercent, 100))
        }
        state.unmeasured = state.measured == nil
        state.decreased = true
        state.coolDownUntil = instant.saturatingAdd(coolDownNanoseconds)
        state.served = 0
        state.roundCount = 0
        state.measured = nil
        return state.rate < before.0 || state.burst < before.1
    }
}
