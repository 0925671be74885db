import Testing

@testable import RateLimitCore

/// Three permits of water, one leaking every 10 ns.
private let threePerTen = try! LeakyBucketMeter(capacity: 3, leakPermitsPerPeriod: 1, periodNanoseconds: 10)

@Suite("Leaky bucket as a meter (Spec/LeakyBucketMeter.md)")
struct LeakyBucketMeterTests {
    @Test("LBM-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "capacity", .mustBePositive) { () throws(RateLimitInputError) in
            try LeakyBucketMeter(capacity: 0, leakPermitsPerPeriod: 1, periodNanoseconds: 1)
        }
        expectRefused(field: "leakPermitsPerPeriod", .mustBePositive) { () throws(RateLimitInputError) in
            try LeakyBucketMeter(capacity: 1, leakPermitsPerPeriod: 0, periodNanoseconds: 1)
        }
        expectRefused(field: "periodNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try LeakyBucketMeter(capacity: 1, leakPermitsPerPeriod: 1, periodNanoseconds: 0)
        }
        expectRefused(field: "initialLevel", .exceedsMaximum(3)) { () throws(RateLimitInputError) in
            try LeakyBucketMeter(capacity: 3, leakPermitsPerPeriod: 1, periodNanoseconds: 1, initialLevel: 4)
        }
        expectRefused(field: "initialLevel", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try LeakyBucketMeter(capacity: 3, leakPermitsPerPeriod: 1, periodNanoseconds: 1, initialLevel: -1)
        }
        expectRefused(field: "periodNanoseconds", .exceedsMaximum(1)) { () throws(RateLimitInputError) in
            try LeakyBucketMeter(capacity: .max, leakPermitsPerPeriod: 1, periodNanoseconds: 2)
        }
    }

    @Test("LBM-2 a new bucket holds its initial level; the state is 24 bytes")
    func state() throws {
        let half = try LeakyBucketMeter(capacity: 4, leakPermitsPerPeriod: 1, periodNanoseconds: 10, initialLevel: 2)
        #expect(half.initialState(at: t(0)).level == Wide(20 as UInt64))  // 2 permits of 10 units
        #expect(MemoryLayout<LeakyBucketMeter.State>.size == 24)
    }

    @Test("LBM-11 no interval [t1, t2] admits more than capacity + leak × (t2 − t1)")
    func safetyBound() {
        forEachAdmission(LeakyBucketMeter.self, "safetyBound") { history, meter, step in
            intervalBoundHolds(history, replay: step.replay, describe: step.description) { lo, hi in
                floorMultiplyDivide(meter.leakPermitsPerPeriod, hi - lo, meter.periodNanoseconds)
                    .flatMap { $0 > Int64.max - meter.capacity ? nil : $0 + meter.capacity }
            }
        }
    }
}
