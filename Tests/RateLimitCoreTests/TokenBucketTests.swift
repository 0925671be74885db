import Testing

@testable import RateLimitCore

/// One token per 10 ns, three at most: the bucket most stories use.
private let threePerTen = try! TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10)

@Suite("Token bucket, continuous refill (Spec/TokenBucket.md)")
struct TokenBucketTests {
    @Test("TB-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "capacity", .mustBePositive) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 0, permitsPerPeriod: 1, periodNanoseconds: 1)
        }
        expectRefused(field: "permitsPerPeriod", .mustBePositive) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: -3, periodNanoseconds: 1)
        }
        expectRefused(field: "periodNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, periodNanoseconds: 0)
        }
        expectRefused(field: "initialTokens", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 1, initialTokens: -1)
        }
        expectRefused(field: "initialTokens", .exceedsMaximum(3)) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 1, initialTokens: 4)
        }
        // Refilling Int64.max tokens at 1 per 2 ns would take 2 × Int64.max ns.
        expectRefused(field: "periodNanoseconds", .exceedsMaximum(1)) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: .max, permitsPerPeriod: 1, periodNanoseconds: 2)
        }
        expectRefused(field: "periodNanoseconds", .exceedsMaximum(4_611_686_018_427_387_903)) {
            () throws(RateLimitInputError) in
            try TokenBucket(capacity: 2, permitsPerPeriod: 1, periodNanoseconds: .max)
        }
        expectRefused(field: "periodNanoseconds", .notWholeNanoseconds) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: .seconds(1) / 3_000_000_000)
        }
        expectRefused(field: "periodNanoseconds", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try TokenBucket(capacity: 1, permitsPerPeriod: 1, period: .seconds(-1))
        }
    }

    @Test("TB-2 a new bucket holds its initial tokens and records its creation instant")
    func initialState() throws {
        let bucket = try TokenBucket(capacity: 3, permitsPerPeriod: 1, periodNanoseconds: 10, initialTokens: 1)
        #expect(bucket.initialState(at: t(5)) == TokenBucket.State(tokens: 1, fraction: 0, lastNanoseconds: 5))
        #expect(threePerTen.initialState(at: t(0)).tokens == 3)
        #expect(MemoryLayout<TokenBucket.State>.size == 24)
    }

    @Test("TB-11 no interval [t1, t2] admits more than capacity + rate × (t2 − t1)")
    func safetyBound() {
        forEachAdmission(TokenBucket.self, "safetyBound") { history, bucket, step in
            intervalBoundHolds(history, replay: step.replay, describe: step.description) { lo, hi in
                floorMultiplyDivide(bucket.permitsPerPeriod, hi - lo, bucket.periodNanoseconds)
                    .flatMap { $0 > Int64.max - bucket.capacity ? nil : $0 + bucket.capacity }
            }
        }
    }

}
