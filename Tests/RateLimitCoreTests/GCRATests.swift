import Testing

@testable import RateLimitCore

/// Bursts of 3, one permit per 10 ns sustained: τ = 30 ns.
private let burstThree = try! GCRA(burst: 3, emissionIntervalNanoseconds: 10)

@Suite("GCRA (Spec/GCRA.md)")
struct GCRATests {
    @Test("GCRA-1 each bad field is refused by name; the tolerance must fit in Int64")
    func validation() {
        expectRefused(field: "burst", .mustBePositive) { () throws(RateLimitInputError) in
            try GCRA(burst: 0, emissionIntervalNanoseconds: 1)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try GCRA(burst: 1, emissionIntervalNanoseconds: 0)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)) {
            () throws(RateLimitInputError) in
            try GCRA(burst: 2, emissionIntervalNanoseconds: .max)
        }
        expectRefused(field: "emissionIntervalNanoseconds", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try GCRA(burst: 1, emissionInterval: .nanoseconds(1) / 2)
        }
    }

    @Test("GCRA-2 the state is the theoretical arrival time and the last instant, both starting at creation")
    func state() {
        #expect(
            burstThree.initialState(at: t(42)) == GCRA.State(theoreticalArrivalNanoseconds: 42, lastNanoseconds: 42))
        #expect(MemoryLayout<GCRA.State>.size == 16)
    }

    @Test("GCRA-3 an earlier now is evaluated at the last instant, so a stale reset cannot grant twice")
    func backwardTime() throws {
        let single = try GCRA(burst: 1, emissionIntervalNanoseconds: 10)
        let pair = try GCRA(burst: 2, emissionIntervalNanoseconds: 10)
        story(
            single,
            [
                (100, .acquire(1), .allowed(remaining: 0)),  // tat = 110
                (95, .acquire(1), .rejected(retryAfterNanoseconds: 15)),
                (95, .reset, .allowed(remaining: 1)),  // a new limiter at 100
                (90, .acquire(1), .allowed(remaining: 0)),  // evaluated at 100
                (109, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
            ])
        // The review's counterexample to a one-word GCRA: with the reset evaluated at 90, 4 permits fit.
        story(
            pair,
            [
                (100, .acquire(1), .allowed(remaining: 1)),
                (90, .reset, .allowed(remaining: 2)),
                (90, .acquire(2), .allowed(remaining: 0)),
                (100, .acquire(1), .rejected(retryAfterNanoseconds: 10)),
            ])
    }

    @Test("GCRA-4 the boundary now = tat + cost − τ conforms (one before, at, one after)")
    func boundaryConforms() {
        story(
            burstThree,
            [
                (0, .acquire(3), .allowed(remaining: 0)),  // tat = 30
                (9, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (10, .acquire(1), .allowed(remaining: 0)),  // 30 + 10 − 10 = 30 = τ: conforms; tat = 40
                (19, .acquire(0), .allowed(remaining: 0)),
                (20, .acquire(0), .allowed(remaining: 1)),
                (21, .acquire(0), .allowed(remaining: 1)),
            ])
    }

    @Test("GCRA-5 remaining counts whole emission intervals of slack")
    func remaining() {
        story(
            burstThree,
            [
                (0, .acquire(1), .allowed(remaining: 2)),  // tat = 10
                (5, .acquire(0), .allowed(remaining: 2)),
                (10, .acquire(0), .allowed(remaining: 3)),
            ])
    }

    @Test("GCRA-6 a weighted acquire is admitted when its whole cost fits the tolerance")
    func weightedRetryAfter() {
        story(
            burstThree,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (0, .acquire(2), .rejected(retryAfterNanoseconds: 20)),
                (19, .acquire(2), .rejected(retryAfterNanoseconds: 1)),
                (20, .acquire(2), .allowed(remaining: 0)),
            ])
    }

    @Test("GCRA-7 more than the burst, or an admission past the end of the timeline, is never allowed")
    func neverAllowed() throws {
        let single = try GCRA(burst: 1, emissionIntervalNanoseconds: 10)
        story(burstThree, [(0, .acquire(4), .neverAllowed)])
        story(
            single, createdAt: .max - 5,
            [
                (.max - 5, .acquire(1), .allowed(remaining: 0)),  // tat = Int64.max + 5, held in a UInt64
                (.max - 5, .acquire(1), .neverAllowed),
                (.max, .acquire(1), .neverAllowed),
                (.max, .acquire(0), .allowed(remaining: 0)),
            ])
    }

    @Test("GCRA-8 acquire(0) reads the quota; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            burstThree,
            [
                (0, .acquire(0), .allowed(remaining: 3)),
                (0, .release(1), .invalid(.releaseNotSupported)),
                (0, .acquire(-1), .invalid(.negativePermits(-1))),
            ])
    }

    @Test("GCRA-9 reset gives a full burst at the reset instant")
    func reset() {
        story(
            burstThree,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (5, .reset, .allowed(remaining: 3)),
                (5, .acquire(3), .allowed(remaining: 0)),
            ])
    }

    @Test("GCRA-10 reconfigure keeps the available tokens, rounded down and capped")
    func reconfigure() throws {
        let wider = try GCRA(burst: 5, emissionIntervalNanoseconds: 4)
        let single = try GCRA(burst: 1, emissionIntervalNanoseconds: 10)
        story(
            burstThree,
            [
                (0, .acquire(1), .allowed(remaining: 2)),  // 2 tokens = 20 units of 10
                (0, .reconfigure(wider), .allowed(remaining: 2)),  // 8 units of 4: tat = 0 + 20 − 8 = 12
                (0, .acquire(2), .allowed(remaining: 0)),
                (3, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
                (4, .acquire(1), .allowed(remaining: 0)),
            ])
        story(burstThree, [(0, .reconfigure(single), .allowed(remaining: 1))])
    }

    @Test("GCRA-11 no interval admits more than burst + ⌊(t2 − t1) / T⌋")
    func safetyBound() {
        forEachAdmission(GCRA.self, "safetyBound") { history, gcra, step in
            intervalBoundHolds(history, replay: step.replay, describe: step.description) { lo, hi in
                let slots = (hi - lo) / gcra.emissionIntervalNanoseconds
                return slots > Int64.max - gcra.burst ? nil : slots + gcra.burst
            }
        }
    }
}
