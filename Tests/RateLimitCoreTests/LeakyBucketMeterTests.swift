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
        story(half, [(0, .acquire(0), .allowed(remaining: 2))])
    }

    @Test(
        "LBM-3 LBM-5 one permit of room appears exactly one period after the bucket filled (one before, at, one after)")
    func leakEdge() {
        story(
            threePerTen,
            [
                (0, .acquire(3), .allowed(remaining: 0)),
                (9, .acquire(0), .allowed(remaining: 0)),
                (10, .acquire(0), .allowed(remaining: 1)),
                (11, .acquire(0), .allowed(remaining: 1)),
                (30, .acquire(0), .allowed(remaining: 3)),
                (1_000, .acquire(0), .allowed(remaining: 3)),
            ])
    }

    @Test("LBM-4 LBM-6 a weighted acquire waits until the whole overflow has leaked, rounded up")
    func weightedRetryAfter() throws {
        // 0.3 permits leak per ns from a full bucket of 5: 2 permits need 20 units at 3 per ns, ⌈20/3⌉ = 7.
        let meter = try LeakyBucketMeter(capacity: 5, leakPermitsPerPeriod: 3, periodNanoseconds: 10, initialLevel: 5)
        story(
            meter,
            [
                (0, .acquire(2), .rejected(retryAfterNanoseconds: 7)),
                (6, .acquire(2), .rejected(retryAfterNanoseconds: 1)),
                (7, .acquire(2), .allowed(remaining: 0)),
            ])
    }

    @Test("LBM-7 more than capacity, or an admission past the end of the timeline, is never allowed")
    func neverAllowed() throws {
        let one = try LeakyBucketMeter(capacity: 1, leakPermitsPerPeriod: 1, periodNanoseconds: 10)
        story(threePerTen, [(0, .acquire(4), .neverAllowed)])
        story(
            one, createdAt: .max - 10,
            [
                (.max - 10, .acquire(1), .allowed(remaining: 0)),
                (.max - 10, .acquire(1), .rejected(retryAfterNanoseconds: 10)),
                (.max, .acquire(1), .allowed(remaining: 0)),
                (.max, .acquire(1), .neverAllowed),
            ])
    }

    @Test("LBM-8 acquire(0) reads the room; release and negative permits are invalid")
    func zeroReleaseInvalid() {
        story(
            threePerTen,
            [
                (0, .acquire(1), .allowed(remaining: 2)),
                (0, .acquire(0), .allowed(remaining: 2)),
                (0, .release(1), .invalid(.releaseNotSupported)),
                (0, .acquire(-1), .invalid(.negativePermits(-1))),
            ])
    }

    @Test("LBM-9 reset restores the initial level at the latest instant")
    func reset() throws {
        let half = try LeakyBucketMeter(capacity: 2, leakPermitsPerPeriod: 1, periodNanoseconds: 10, initialLevel: 1)
        story(
            half,
            [
                (0, .acquire(1), .allowed(remaining: 0)),
                (50, .reset, .allowed(remaining: 1)),
                (40, .acquire(1), .allowed(remaining: 0)),  // evaluated at 50
                (59, .acquire(1), .rejected(retryAfterNanoseconds: 1)),
            ])
    }

    @Test("LBM-10 reconfigure keeps the room (the token bucket's tokens), capped at the new capacity")
    func reconfigure() throws {
        let ten = try LeakyBucketMeter(capacity: 10, leakPermitsPerPeriod: 1, periodNanoseconds: 10)
        let four = try LeakyBucketMeter(capacity: 4, leakPermitsPerPeriod: 1, periodNanoseconds: 20)
        story(
            ten,
            [
                (0, .acquire(4), .allowed(remaining: 6)),
                (5, .reconfigure(four), .allowed(remaining: 4)),  // 6.5 permits of room, capped at 4
                (5, .reconfigure(ten), .allowed(remaining: 4)),  // room 4: water 6
                (14, .acquire(0), .allowed(remaining: 4)),
                (15, .acquire(0), .allowed(remaining: 5)),
            ])
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
