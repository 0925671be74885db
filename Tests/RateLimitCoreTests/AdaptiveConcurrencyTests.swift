import RateLimitConformance
import RateLimitTestSupport
import Testing

@testable import RateLimitCore

// The adaptive concurrency (Spec/AdaptiveLimits.md, ADAPT-10 ... ADAPT-14, ADAPT-16): stories with
// answers worked out by hand, and properties over seeded random feedback.

/// A served response with `latency` ns and `inFlight` requests in flight when it was sent.
private func served(_ latency: Int64, _ inFlight: Int64) -> AdaptiveFeedback {
    .response(status: 200, latencyNanoseconds: latency, inFlight: inFlight)
}

/// A response of `status` with a latency of 1 ns, sent alone.
private func status(_ status: Int64) -> AdaptiveFeedback {
    .response(status: status, latencyNanoseconds: 1, inFlight: 1)
}

private func limit(_ limit: Int64, _ change: AdaptiveChange) -> AdaptiveAnswer<Int64> { .limit(limit, change) }

/// From 10 in flight, between 2 and 20; alpha 2, beta 4; drops halve it, 100 ns apart; windows of 1000 ns.
private let vegas = try! AdaptiveConcurrency(
    maximumLimit: 20, initialLimit: 10, minimumLimit: 2, alpha: 2, beta: 4, decreasePercent: 50,
    coolDownNanoseconds: 100, baselineWindowNanoseconds: 1_000)

@Suite("Adaptive concurrency (Spec/AdaptiveLimits.md)")
struct AdaptiveConcurrencyTests {
    @Test("ADAPT-10 each bad field is refused by name, in the table's order, at its bounds")
    func validation() {
        func make(
            maximum: Int64 = 10, initial: Int64 = 5, minimum: Int64 = 2, alpha: Int64 = 2, beta: Int64 = 4,
            decrease: Int64 = 10, coolDown: Int64 = 0, window: Int64 = 1
        ) throws(RateLimitInputError) -> AdaptiveConcurrency {
            try AdaptiveConcurrency(
                maximumLimit: maximum, initialLimit: initial, minimumLimit: minimum, alpha: alpha, beta: beta,
                decreasePercent: decrease, coolDownNanoseconds: coolDown, baselineWindowNanoseconds: window)
        }
        expectBoundsRefused("Limit") { maximum, initial, minimum throws(RateLimitInputError) in
            try make(maximum: maximum, initial: initial, minimum: minimum)
        }
        expectRefused(field: "alpha", .mustNotBeNegative) { () throws(RateLimitInputError) in try make(alpha: -1) }
        expectRefused(field: "beta", .mustNotBeNegative) { () throws(RateLimitInputError) in try make(beta: -1) }
        #expect((try? make(alpha: 0, beta: 0)) != nil)
        expectRefused(field: "decreasePercent", .mustBePositive) { () throws(RateLimitInputError) in
            try make(decrease: 0)
        }
        expectRefused(field: "decreasePercent", .exceedsMaximum(99)) { () throws(RateLimitInputError) in
            try make(decrease: 100)
        }
        expectRefused(field: "coolDownNanoseconds", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try make(coolDown: -1)
        }
        expectRefused(field: "baselineWindowNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try make(window: 0)
        }
    }

    @Test("ADAPT-11 a new machine holds its initial limit and no baseline; windows roll to the event's instant")
    func stateAndBaseline() {
        let state = vegas.initialState(at: t(2_500))
        #expect(state.limit == 10 && state.window == 2 && state.baselineNanoseconds == nil)
        #expect(state.coolDownUntil == 2_500 && state.last == 2_500)
        var rolled = state
        _ = vegas.step(&rolled, served(40, 10), at: t(2_999))
        _ = vegas.step(&rolled, served(60, 10), at: t(3_000))  // the next window: 40 is the previous one's
        #expect(rolled.currentMinimum == 60 && rolled.previousMinimum == 40 && rolled.baselineNanoseconds == 40)
        _ = vegas.step(&rolled, .failure, at: t(5_000))  // two windows on: both forgotten
        #expect(rolled.currentMinimum == nil && rolled.previousMinimum == nil && rolled.window == 5)
    }

    @Test("ADAPT-11 windows roll at the end of the timeline without trapping (1 ns windows up to .max)")
    func lastWindow() throws {
        let machine = try AdaptiveConcurrency(
            maximumLimit: 20, initialLimit: 10, minimumLimit: 2, alpha: 2, beta: 4, decreasePercent: 50,
            coolDownNanoseconds: 100, baselineWindowNanoseconds: 1)
        var state = machine.initialState(at: t(.max - 2))
        _ = machine.step(&state, served(1, 10), at: t(.max - 1))
        _ = machine.step(&state, served(2, 10), at: t(.max))  // the next window: 1 is the previous one's
        #expect(state.window == .max && state.currentMinimum == 2 && state.previousMinimum == 1)
        _ = machine.step(&state, .failure, at: t(.max))  // the same window: found by generated scenarios
        _ = machine.step(&state, served(3, 10), at: t(.max - 5))  // ADAPT-1: still the last instant
        #expect(state.window == .max && state.currentMinimum == 2 && state.last == .max)
    }

    @Test(
        "ADAPT-12 the estimated queue ⌈N·(ℓ − base)/ℓ⌉ above beta lowers the limit by one, below alpha raises it when half of it is used, once per round trip"
    )
    func queueEstimate() {
        adaptiveStory(
            vegas,
            [
                (100, served(100, 10), limit(11, .increased)),  // the baseline 100: q = 0 < 2, 2·10 ≥ 10
                (150, served(100, 10), limit(11, .unchanged)),  // sent at 50, before the change at 100: a sample only
                (300, served(200, 11), limit(10, .decreased)),  // sent at 100: q = ⌈11·100/200⌉ = 6 > 4
                (450, served(150, 10), limit(10, .unchanged)),  // q = ⌈10·50/150⌉ = 4: not above beta
                (460, served(120, 4), limit(10, .unchanged)),  // q = ⌈10·20/120⌉ = 2: not below alpha
                (470, served(110, 4), limit(10, .unchanged)),  // q = 1 < 2, but 2·4 < 10: the limit is not used
                (480, served(110, 5), limit(11, .increased)),  // 2·5 ≥ 10
                (1_000, served(300, 11), limit(10, .decreased)),  // window 1: the baseline 100 is the previous window's
                (2_400, served(300, 10), limit(11, .increased)),  // window 2: 100 forgotten, the baseline 300: q = 0
                (3_500, served(250, 11), limit(12, .increased)),  // window 3: 250 < 300
                (5_000, served(400, 12), limit(13, .increased)),  // window 5: both windows forgotten, 400 alone
                (5_000, served(0, 13), limit(14, .increased)),  // a latency of 0: q = 0
                (5_010, served(10, 14), limit(13, .decreased)),  // the baseline 0: q = ⌈14·10/10⌉ = 14
                (5_015, served(10, 13), limit(13, .unchanged)),  // sent at 5,005, before the change at 5,010
            ])
    }

    @Test(
        "ADAPT-13 a rejection or a failure cuts the limit once per cool-down; server errors change nothing; reset restarts"
    )
    func drops() {
        adaptiveStory(
            vegas,
            [
                (60, .response(status: 429, latencyNanoseconds: 1, inFlight: 10), limit(5, .decreased)),  // ⌊10·0.5⌋
                (159, .failure, limit(5, .unchanged)),  // the cool-down lasts until 160
                (159, status(503), limit(5, .unchanged)),
                (160, .failure, limit(2, .decreased)),  // ⌊5·0.5⌋ = 2, the floor
                (300, status(500), limit(2, .unchanged)),
                (300, status(502), limit(2, .unchanged)),
                (300, status(600), limit(2, .unchanged)),
                (300, .failure, limit(2, .unchanged)),  // at the floor
                (250, .reset, limit(10, .reset)),  // evaluated at 300
                (299, status(429), limit(5, .decreased)),  // evaluated at 300 ≥ the reset's cool-down (300)
                // The 429's latency (1) was no sample: in window 1, the served 1,000 is the only one, q = 0.
                (1_400, served(1_000, 5), limit(6, .increased)),
            ])
        let fixed = try! AdaptiveConcurrency(
            maximumLimit: 3, initialLimit: 3, minimumLimit: 3, coolDownNanoseconds: 0, baselineWindowNanoseconds: 10)
        adaptiveStory(
            fixed, [(0, served(5, 3), limit(3, .unchanged)), (1, status(429), limit(3, .unchanged))])
    }

    @Test("ADAPT-1 malformed feedback to the concurrency is invalid, in order, and changes nothing")
    func invalidFeedback() {
        var state = vegas.initialState(at: t(0))
        let before = state
        #expect(
            vegas.step(&state, .response(status: 200, latencyNanoseconds: -5, inFlight: -1), at: t(3))
                == .invalid(RateLimitInputError(field: "latencyNanoseconds", value: -5, problem: .mustNotBeNegative)))
        #expect(
            vegas.step(&state, .response(status: 1_000, latencyNanoseconds: 0, inFlight: 0), at: t(3))
                == .invalid(
                    RateLimitInputError(
                        field: "status", value: 1_000, problem: .exceedsMaximum(999),
                        reason: "a status has three digits")))
        #expect(state == before)
    }

    @Test(
        "ADAPT-14 on random feedback the limit stays within its bounds, moves by at most one per served response, and drops are a cool-down apart"
    )
    func invariants() async {
        await offThePool {
            var spacing = DecreaseSpacing()
            forEachRandomFeedback("invariants", spread: 60, AdaptiveConcurrency.random) { step in
                let (machine, state, before) = (step.machine, step.after, step.before)
                guard
                    holds(
                        machine.minimumLimit <= step.limit && step.limit <= machine.maximumLimit
                            && step.limit == state.limit,
                        "ADAPT-14 out of bounds: \(step.description)", replay: step.replay),
                    spacing.holds(
                        step, coolDownUntil: \.coolDownUntil, latest: \.last, coolDown: machine.coolDownNanoseconds,
                        clause: "ADAPT-14")
                else { return false }
                guard case .response(let status, let latency, _, _) = step.feedback,
                    ResponseClass(status: status) == .served
                else { return true }
                return holds(
                    abs(state.limit - before.limit) <= 1 && (state.currentMinimum ?? .max) <= latency,
                    "ADAPT-14 a served response moved the limit by more than one, or the baseline is above it: \(step.description)",
                    replay: step.replay)
            }
        }
    }

    @Test(
        "ADAPT-16 against a server with C workers, from half or three times C, the standard adaptive concurrency settles at C to C + beta on average, never below C nor above C + 2 beta, never more than 3C in flight"
    )
    func convergence() async throws {
        try await offThePool {
            for trace in 0..<12 {
                var random = PropertySeed.generator("adaptive-concurrency convergence", trace: trace)
                let replay = PropertySeed.replay("convergence", trace: trace)
                let workers = Int64([4, 8, 16][trace % 3])
                let start = trace % 2 == 0 ? workers / 2 : 3 * workers
                let run = simulateQueueingServer(
                    workers: workers, serviceNanoseconds: 20_000_000, start: start, tasks: Int(6 * workers),
                    durationNanoseconds: 20_000_000_000, using: &random)
                let description = "\(workers) workers, from \(start): \(run)"
                let beta = try #require(AdaptiveConcurrency.standard(startingAt: start)).beta
                guard
                    holds(
                        workers * run.secondHalfResponses <= run.secondHalfSum
                            && run.secondHalfSum <= (workers + beta) * run.secondHalfResponses,
                        "ADAPT-16 the mean limit is not within C ... C + beta: \(description)", replay: replay),
                    holds(
                        run.secondHalfLowest >= workers && run.secondHalfHighest <= workers + 2 * beta,
                        "ADAPT-16 the limit left C ... C + 2 beta: \(description)", replay: replay),
                    holds(
                        run.mostInFlight <= 3 * workers, "ADAPT-16 more in flight than 3C: \(description)",
                        replay: replay)
                else { return }
            }
        }
    }
}

/// What ``simulateQueueingServer(workers:serviceNanoseconds:start:tasks:durationNanoseconds:using:)`` saw.
struct QueueingRun: CustomStringConvertible {
    var secondHalfLowest: Int64 = .max
    var secondHalfHighest: Int64 = 0
    /// The limit after each response of the second half, summed, and those responses.
    var secondHalfSum: Int64 = 0
    var secondHalfResponses: Int64 = 0
    var mostInFlight: Int64 = 0
    var served = 0
    var description: String {
        let mean = secondHalfResponses == 0 ? 0 : Double(secondHalfSum) / Double(secondHalfResponses)
        return
            "limit \(secondHalfLowest) … \(secondHalfHighest) over the second half (mean \(mean)), at most \(mostInFlight) in flight, \(served) served"
    }
}

/// A server with `workers` workers, each serving a request in `service` ns (plus up to 10%),
/// first come first served; `tasks` client tasks with a request always ready, sent while fewer
/// than the learned limit are in flight (the standard adaptive concurrency from `start`).
func simulateQueueingServer(
    workers: Int64, serviceNanoseconds service: Int64, start: Int64, tasks: Int, durationNanoseconds: Int64,
    using random: inout SeededGenerator
) -> QueueingRun {
    guard let machine = AdaptiveConcurrency.standard(startingAt: start) else { return QueueingRun() }
    var state = machine.initialState(at: t(0))
    var run = QueueingRun()
    // Requests in flight: when sent, how many were in flight then, and when their answer comes.
    var inFlight: [(sent: Int64, count: Int64, done: Int64)] = []
    var workerFree = Array(repeating: Int64(0), count: Int(workers))
    var now: Int64 = 0
    var waiting = tasks
    while now < durationNanoseconds {
        // Send while the limit allows: each request is served by the worker free first.
        while waiting > 0, Int64(inFlight.count) < state.limit {
            waiting -= 1
            let worker = workerFree.indices.min { workerFree[$0] < workerFree[$1] }!
            let begins = max(now, workerFree[worker])
            workerFree[worker] = begins + service + Int64.random(in: 0...(service / 10), using: &random)
            inFlight.append((now, Int64(inFlight.count) + 1, workerFree[worker]))
            run.mostInFlight = max(run.mostInFlight, Int64(inFlight.count))
        }
        guard let next = inFlight.indices.min(by: { inFlight[$0].done < inFlight[$1].done }) else { break }
        let request = inFlight.remove(at: next)
        now = request.done
        _ = machine.step(
            &state, .response(status: 200, latencyNanoseconds: now - request.sent, inFlight: request.count), at: t(now))
        run.served += 1
        waiting += 1
        if now >= durationNanoseconds / 2 {
            run.secondHalfLowest = min(run.secondHalfLowest, state.limit)
            run.secondHalfHighest = max(run.secondHalfHighest, state.limit)
            run.secondHalfSum += state.limit
            run.secondHalfResponses += 1
        }
    }
    return run
}

extension AdaptiveConcurrency {
    /// A random valid adaptive concurrency: small limits and windows, so that every rule is met.
    static func random(using random: inout SeededGenerator) -> AdaptiveConcurrency {
        let maximum = Int64.random(in: 1...30, using: &random)
        let initial = Int64.random(in: 1...maximum, using: &random)
        return try! AdaptiveConcurrency(  // every field drawn within its bounds
            maximumLimit: maximum, initialLimit: initial, minimumLimit: Int64.random(in: 1...initial, using: &random),
            alpha: Int64.random(in: 0...5, using: &random), beta: Int64.random(in: 0...8, using: &random),
            decreasePercent: Int64.random(in: 1...99, using: &random),
            coolDownNanoseconds: Int64.random(in: 0...100, using: &random),
            baselineWindowNanoseconds: Int64.random(in: 1...500, using: &random))
    }
}
