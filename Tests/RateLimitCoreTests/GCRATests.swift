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
