import Testing

@testable import RateLimitCore

/// One token at every multiple of 10 ns, three at most.
private let oneEveryTen = try! IntervalTokenBucket(capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 10)

@Suite("Token bucket, interval refill (Spec/IntervalTokenBucket.md)")
struct IntervalTokenBucketTests {
    @Test("TBI-1 each bad field is refused by name")
    func validation() {
        expectRefused(field: "capacity", .mustBePositive) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 0, tokensPerInterval: 1, intervalNanoseconds: 1)
        }
        expectRefused(field: "tokensPerInterval", .mustBePositive) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 1, tokensPerInterval: 0, intervalNanoseconds: 1)
        }
        expectRefused(field: "intervalNanoseconds", .mustBePositive) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 1, tokensPerInterval: 1, intervalNanoseconds: -5)
        }
        expectRefused(field: "initialTokens", .exceedsMaximum(3)) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 1, initialTokens: 4)
        }
        expectRefused(field: "initialTokens", .mustNotBeNegative) { () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 1, initialTokens: -1)
        }
        // 10 tokens by 3 need ⌈10/3⌉ = 4 boundaries: the interval may be at most ⌊Int64.max / 4⌋.
        expectRefused(field: "intervalNanoseconds", .exceedsMaximum(2_305_843_009_213_693_951)) {
            () throws(RateLimitInputError) in
            try IntervalTokenBucket(capacity: 10, tokensPerInterval: 3, intervalNanoseconds: 2_305_843_009_213_693_952)
        }
        #expect(throws: Never.self) {
            try IntervalTokenBucket(capacity: 10, tokensPerInterval: 3, intervalNanoseconds: 2_305_843_009_213_693_951)
        }
    }

    @Test("TBI-2 a new bucket holds its initial tokens; the state is 16 bytes")
    func initialState() throws {
        let empty = try IntervalTokenBucket(
            capacity: 3, tokensPerInterval: 1, intervalNanoseconds: 10, initialTokens: 0)
        #expect(empty.initialState(at: t(7)) == IntervalTokenBucket.State(tokens: 0, lastNanoseconds: 7))
        #expect(MemoryLayout<IntervalTokenBucket.State>.size == 16)
    }

    @Test("TBI-11 no interval admits more than capacity + tokensPerInterval × boundaries crossed")
    func safetyBound() {
        forEachAdmission(IntervalTokenBucket.self, "safetyBound") { history, bucket, step in
            intervalBoundHolds(history, replay: step.replay, describe: step.description) { lo, hi in
                let boundaries = hi / bucket.intervalNanoseconds - lo / bucket.intervalNanoseconds
                return floorMultiplyDivide(boundaries, bucket.tokensPerInterval, 1)
                    .flatMap { $0 > Int64.max - bucket.capacity ? nil : $0 + bucket.capacity }
            }
        }
    }
}
