// Warm-up (Spec/WarmUp.md, clauses WU-1 ... WU-12).
//
// Pay later (PayLater.swift) whose permits cost more when the limiter is cold: after idleness the
// rate ramps up from a cold interval of 3T per permit to the stable T over a warm-up period, so a
// service that has been idle is not hit at full rate at once (Guava's `SmoothWarmingUp`). Every
// idle nanosecond past the instant the limiter is back to a full burst adds a nanosecond of
// *coldness* σ, up to the warm-up period P (Guava's stored permits, σ/T of them); an acquire of n
// spends s = min(n·T, σ) of it, and costs n·T plus the area of the ramp over what it spent:
// (u(σ)² − u(σ − s)²) / 2P with u(x) = max(0, 2x − P), rounded up to whole nanoseconds. Below
// half the period (u = 0) permits cost T; from P down to P/2 they cost P/2 more in all, so a
// saturated caller reaches the stable rate after exactly P.
//
// Implementation. GCRA's two words plus the coldness (24 bytes); the admission, the debt, its
// saturation and the reconfigure of tokens are PayLater's, which this strategy holds. The ramp's
// area is formed at 128 bits (u² < 2^126) and divided once per acquire.
//
// Departures from Guava: integers and nanoseconds instead of doubles and microseconds, the area
// rounded up per acquire instead of truncated twice, a warm-up period of 0 meaning no warm-up
// (Guava's then divides 0 by 0 and stops limiting), and the cold factor fixed at 3 (Guava's public
// factory fixes it too).

/// Pay later with a warm-up: a request of any size is admitted when the limiter is not in debt;
/// its cost is one `emissionIntervalNanoseconds` per permit, up to three times that while the
/// limiter is cold, falling back to the stable interval over `warmUpPeriodNanoseconds` of use.
public struct WarmUp: RateLimitStrategy {
    public static let identifier = "warm-up"

    /// Permits a rested, warm limiter admits back to back, one at a time (WU-1).
    public var burst: Int64 { payLater.burst }
    /// Nanoseconds per permit at the stable rate (T); a cold permit costs up to 3T.
    public var emissionIntervalNanoseconds: Int64 { payLater.emissionIntervalNanoseconds }
    /// How long a saturated caller takes to bring a cold limiter to the stable rate (P); also how
    /// long idle a warm limiter takes to be cold again.
    public let warmUpPeriodNanoseconds: Int64

    @usableFromInline let payLater: PayLater

    /// A validated warm-up configuration (WU-1).
    ///
    /// - Throws: ``RateLimitInputError`` naming the first bad field: a non-positive burst or
    ///   interval, a negative warm-up period, or a tolerance `burst × emissionIntervalNanoseconds`
    ///   above `Int64.max`.
    public init(burst: Int64, emissionIntervalNanoseconds: Int64, warmUpPeriodNanoseconds: Int64)
        throws(RateLimitInputError)
    {
        try RateLimitInputError.checkPositive(burst, "burst")
        try RateLimitInputError.checkPositive(emissionIntervalNanoseconds, "emissionIntervalNanoseconds")
        try RateLimitInputError.checkNotNegative(warmUpPeriodNanoseconds, "warmUpPeriodNanoseconds")
        self.payLater = try PayLater(burst: burst, emissionIntervalNanoseconds: emissionIntervalNanoseconds)
        self.warmUpPeriodNanoseconds = warmUpPeriodNanoseconds
    }

    /// A validated warm-up configuration with the spans as `Duration`s (whole nanoseconds).
    public init(burst: Int64, emissionInterval: Duration, warmUpPeriod: Duration) throws(RateLimitInputError) {
        try self.init(
            burst: burst,
            emissionIntervalNanoseconds: emissionInterval.wholeNanoseconds(field: "emissionIntervalNanoseconds"),
            warmUpPeriodNanoseconds: warmUpPeriod.wholeNanoseconds(field: "warmUpPeriodNanoseconds"))
    }

    /// Pay later's theoretical arrival time and last instant, and the coldness (24 bytes).
    public struct State: Hashable, Sendable {
        /// The instant at which the limiter is back to a full burst (PL-2).
        public internal(set) var theoreticalArrivalNanoseconds: UInt64
        /// Idle time banked, `0...warmUpPeriodNanoseconds`: how cold the limiter was at its last instant.
        public internal(set) var coldnessNanoseconds: Int64
        /// The latest instant the state was updated at (WU-3).
        public internal(set) var lastNanoseconds: Int64

        @usableFromInline
        init(theoreticalArrivalNanoseconds: UInt64, coldnessNanoseconds: Int64, lastNanoseconds: Int64) {
            self.theoreticalArrivalNanoseconds = theoreticalArrivalNanoseconds
            self.coldnessNanoseconds = coldnessNanoseconds
            self.lastNanoseconds = lastNanoseconds
        }
    }

    /// Every size is admitted when the limiter is not in debt (WU-7): `Int64.max`.
    public var maximumPermits: Int64 { .max }

    public func initialState(at now: RateLimitInstant) -> State {  // WU-2: rested, and cold
        State(
            theoreticalArrivalNanoseconds: UInt64(now.nanoseconds), coldnessNanoseconds: warmUpPeriodNanoseconds,
            lastNanoseconds: now.nanoseconds)
    }

    public func step(_ state: inout State, _ event: RateLimitEvent<WarmUp>, at now: RateLimitInstant) -> RateLimitResult
    {
        let instant = max(now.nanoseconds, state.lastNanoseconds)  // WU-3
        let tat = state.theoreticalArrivalNanoseconds
        switch event {
        case .acquire(let permits):
            if permits < 0 { return .invalid(.negativePermits(permits)) }
            if payLater.inDebt(tat: tat, at: instant) {
                if permits == 0 { return .allowed(remaining: 0) }  // WU-8
                return rejection(admittedAt: Wide(payLater.admissionInstant(tat: tat)), now: now)  // WU-6
            }
            if permits == 0 { return .allowed(remaining: .max) }  // WU-5, WU-8
            let coldness = cooled(state, to: instant)
            // WU-4: the coldness spent, s = min(n·T, σ), and the cost n·T + ⌈ramp area⌉.
            let fresh = Wide.product(permits, emissionIntervalNanoseconds)
            let spent = fresh < Wide(coldness) ? fresh.int64 ?? coldness : coldness
            let cost = fresh.adding(rampArea(from: coldness, spending: spent))  // n·T < 2^126: no overflow
            let next = payLater.charged(tat: tat, cost: cost, at: instant)
            state = State(
                theoreticalArrivalNanoseconds: next, coldnessNanoseconds: coldness - spent, lastNanoseconds: instant)
            return .allowed(remaining: payLater.remaining(tat: next, at: instant))
        case .release:  // WU-8
            return .invalid(.releaseNotSupported)
        case .reset:  // WU-9
            state = initialState(at: RateLimitInstant(validated: instant))
            return .allowed(remaining: .max)
        case .reconfigure(let replacement):  // WU-10: PL-10's tokens or debt, the coldness capped
            let next = replacement.payLater.carryOver(tat: tat, at: instant, from: payLater)
            state = State(
                theoreticalArrivalNanoseconds: next,
                coldnessNanoseconds: min(cooled(state, to: instant), replacement.warmUpPeriodNanoseconds),
                lastNanoseconds: instant)
            return .allowed(remaining: replacement.payLater.remaining(tat: next, at: instant))
        }
    }

    public func isIdle(_ state: State, at now: RateLimitInstant) -> Bool {  // CORE-15: rested and fully cold
        let instant = max(now.nanoseconds, state.lastNanoseconds)
        return state.theoreticalArrivalNanoseconds <= UInt64(instant)
            && cooled(state, to: instant) == warmUpPeriodNanoseconds
    }

    /// WU-3: the coldness at `instant`: one nanosecond per nanosecond past `tat`, up to the period.
    func cooled(_ state: State, to instant: Int64) -> Int64 {
        let tat = state.theoreticalArrivalNanoseconds
        guard UInt64(instant) > tat else { return state.coldnessNanoseconds }
        // tat < instant ≤ Int64.max, so the idle time fits; the sum is capped before it can overflow.
        let idle = instant - Int64(tat)
        return idle >= warmUpPeriodNanoseconds - state.coldnessNanoseconds
            ? warmUpPeriodNanoseconds : state.coldnessNanoseconds + idle
    }

    /// WU-4: `⌈(u(σ)² − u(σ − s)²) / 2P⌉` with `u(x) = max(0, 2x − P)`: the ramp's area over the
    /// coldness spent, above the stable interval; at most `⌈P / 2⌉`.
    func rampArea(from coldness: Int64, spending spent: Int64) -> Int64 {
        let period = warmUpPeriodNanoseconds
        func excess(_ x: Int64) -> UInt64 {  // 2x − P, where positive: at most P ≤ Int64.max
            let doubled = UInt64(x) * 2
            return doubled > UInt64(period) ? doubled - UInt64(period) : 0
        }
        let before = excess(coldness)
        let after = excess(coldness - spent)
        guard before > 0 else { return 0 }
        // u² − u'² = (u − u')(u + u'): each factor at most 2P < 2^64, the product below 2^127;
        // the quotient is at most ⌈u² / 2P⌉ ≤ ⌈P / 2⌉, so its low word holds it.
        let area = Wide.product(before - after, before + after)
        return Int64(area.dividedRoundingUp(by: 2 * UInt64(period)).low)
    }
}
