import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

// What the adaptive machines' tests share (Spec/AdaptiveLimits.md): stories, the bounds of their
// configurations, and random feedback.

/// One row of an adaptive story: at `nanoseconds`, `feedback` must be answered `expected`.
typealias AdaptiveStep<M: AdaptiveLimit> = (
    nanoseconds: Int64, feedback: AdaptiveFeedback, expected: AdaptiveAnswer<M.Limit>
)

/// Runs a hand-written story on one machine created at `createdAt`; each wrong answer is reported
/// as `step N at Tns: got X, want Y`.
func adaptiveStory<M: AdaptiveLimit>(
    _ machine: M, createdAt: Int64 = 0, _ steps: [AdaptiveStep<M>], sourceLocation: SourceLocation = #_sourceLocation
) {
    var state = machine.initialState(at: t(createdAt))
    for (index, step) in steps.enumerated() {
        let got = machine.step(&state, step.feedback, at: t(step.nanoseconds))
        #expect(
            got == step.expected,
            "step \(index + 1) at \(step.nanoseconds)ns \(step.feedback): got \(got), want \(step.expected)",
            sourceLocation: sourceLocation)
    }
}

/// A response of `status` (latency and requests in flight do not matter to the rate).
func response(_ status: Int64, stated: StatedRate? = nil) -> AdaptiveFeedback {
    .response(status: status, latencyNanoseconds: 1, inFlight: 1, stated: stated)
}

/// Checks the bounds every adaptive configuration validates first, in order (`ADAPT-2`, `ADAPT-10`):
/// `maximum<name>` below 1, `initial<name>` below 1 and above the maximum, `minimum<name>` below 1
/// and above the initial value, each at its edge; `make(maximum, initial, minimum)` builds one.
func expectBoundsRefused<T>(
    _ name: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ make: (Int64, Int64, Int64) throws(RateLimitInputError) -> T
) {
    expectRefused(field: "maximum\(name)", .mustBePositive, sourceLocation: sourceLocation) {
        () throws(RateLimitInputError) in try make(0, 0, 0)
    }
    expectRefused(field: "initial\(name)", .mustBePositive, sourceLocation: sourceLocation) {
        () throws(RateLimitInputError) in try make(10, 0, 0)
    }
    expectRefused(field: "initial\(name)", .exceedsMaximum(10), sourceLocation: sourceLocation) {
        () throws(RateLimitInputError) in try make(10, 11, 2)
    }
    expectRefused(field: "minimum\(name)", .mustBePositive, sourceLocation: sourceLocation) {
        () throws(RateLimitInputError) in try make(10, 4, 0)
    }
    expectRefused(field: "minimum\(name)", .exceedsMaximum(4), sourceLocation: sourceLocation) {
        () throws(RateLimitInputError) in try make(10, 4, 5)
    }
    #expect((try? make(10, 10, 10)) != nil, sourceLocation: sourceLocation)
    #expect((try? make(1, 1, 1)) != nil, sourceLocation: sourceLocation)
}

/// One step of random feedback: the machine, the states around it, and the answer.
struct FeedbackStep<M: AdaptiveLimit> {
    let machine: M
    let before: M.State
    let after: M.State
    let feedback: AdaptiveFeedback
    /// The instant the feedback carried.
    let now: Int64
    let limit: M.Limit
    let change: AdaptiveChange
    let replay: String
    /// The trace the step belongs to (a new machine each).
    let trace: Int
    var description: String { "\(feedback) at \(now) from \(before): \(limit) \(change)" }
}

/// Feeds 60 machines (`make` draws each) 400 random feedbacks each, at instants that now and then go
/// back, and calls `check` after every valid one; an invalid one must change nothing (`ADAPT-1`).
/// Every other trace is calm (a refusal in about 50 responses), so that a rate reaches a plateau,
/// holds it and probes above it (`ADAPT-4`). A failure prints its seed and trace.
func forEachRandomFeedback<M: AdaptiveLimit>(
    _ name: String, spread: Int64, _ make: (inout SeededGenerator) -> M, _ check: (FeedbackStep<M>) -> Bool
) {
    for trace in 0..<60 {
        var random = PropertySeed.generator("\(name) \(M.identifier)", trace: trace)
        let replay = PropertySeed.replay(name, trace: trace)
        let machine = make(&random)
        var now = Int64.random(in: 0...1_000, using: &random)
        var state = machine.initialState(at: t(now))
        for _ in 0..<400 {
            now = max(0, now + Int64.random(in: -20...spread, using: &random))
            let feedback = AdaptiveFeedback.random(calm: trace % 2 == 1, using: &random)
            let before = state
            switch machine.step(&state, feedback, at: t(now)) {
            case .invalid(let error):
                guard holds(state == before, "\(error) changed the state: \(feedback)", replay: replay) else { return }
            case .limit(let limit, let change):
                let step = FeedbackStep(
                    machine: machine, before: before, after: state, feedback: feedback, now: now,
                    limit: limit, change: change, replay: replay, trace: trace)
                guard check(step) else { return }
            }
        }
    }
}

/// The decreases a machine made on a trace of random feedback (`ADAPT-6`, `ADAPT-14`): each must
/// come at least a cool-down after the previous one, counted at the instants they were evaluated.
struct DecreaseSpacing {
    private var last: Int64?
    private var trace = -1

    /// Records `step`, which decreased when it moved the cool-down's end; false (and the issue
    /// recorded) when it came within the cool-down of the previous decrease.
    mutating func holds<M>(
        _ step: FeedbackStep<M>, coolDownUntil: (M.State) -> Int64, latest: (M.State) -> Int64, coolDown: Int64,
        clause: String
    ) -> Bool {
        if step.trace != trace || step.change == .reset { (last, trace) = (nil, step.trace) }
        guard step.change != .reset, coolDownUntil(step.after) != coolDownUntil(step.before) else { return true }
        let evaluated = max(step.now, latest(step.before))
        defer { last = evaluated }
        guard let last else { return true }
        return RateLimitTestSupport.holds(
            evaluated >= last.saturatingAdd(coolDown),
            "\(clause) two decreases within a cool-down: \(step.description)",
            replay: step.replay)
    }
}

extension AdaptiveRate {
    /// A random valid adaptive rate: small periods and rates, so that rounds complete and bounds are met.
    static func random(using random: inout SeededGenerator) -> AdaptiveRate {
        let maximum = Int64.random(in: 1...40, using: &random)
        let initial = Int64.random(in: 1...maximum, using: &random)
        return try! AdaptiveRate(  // every field drawn within its bounds
            periodNanoseconds: Int64.random(in: 1...200, using: &random), maximumRate: maximum, initialRate: initial,
            minimumRate: Int64.random(in: 1...initial, using: &random), burst: Int64.random(in: 1...10, using: &random),
            startIncrease: Int64.random(in: 0...5, using: &random), increase: Int64.random(in: 0...3, using: &random),
            decreasePercent: Int64.random(in: 1...99, using: &random),
            steepDecreasePercent: Int64.random(in: 1...99, using: &random),
            coolDownNanoseconds: Int64.random(in: 0...100, using: &random))
    }
}

extension AdaptiveFeedback {
    /// Random feedback: mostly served responses, rejections, failures, statuses at the classes'
    /// edges, now and then a stated rate, a reset or a malformed field. Calm: served responses but
    /// for a refusal, a failure or a reset in about 50.
    static func random(calm: Bool = false, using random: inout SeededGenerator) -> AdaptiveFeedback {
        if calm {
            let draw = Int.random(in: 0..<100, using: &random)
            if draw == 0 { return .reset }
            if draw == 1 { return .failure }
            let status: Int64 = draw < 4 ? 429 : 200
            return .response(
                status: status, latencyNanoseconds: Int64.random(in: 0...1_000, using: &random),
                inFlight: Int64.random(in: 0...40, using: &random))
        }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<3: return .reset
        case 3..<8: return .failure
        case 8..<11:
            return .response(
                status: Int64.random(in: -2...1_001, using: &random),
                latencyNanoseconds: Int64.random(in: -1...5, using: &random),
                inFlight: Int64.random(in: -1...5, using: &random))
        default:
            let statuses: [Int64] = [200, 200, 200, 204, 404, 429, 429, 503, 500, 502, 99, 600]
            let stated: StatedRate? =
                Int.random(in: 0..<10, using: &random) == 0
                ? StatedRate(
                    permits: Int64.random(in: -1...60, using: &random),
                    windowNanoseconds: Int64.random(in: 0...300, using: &random)) : nil
            return .response(
                status: statuses.randomElement(using: &random)!,
                latencyNanoseconds: Int64.random(in: 0...1_000, using: &random),
                inFlight: Int64.random(in: 0...40, using: &random), stated: stated)
        }
    }
}
