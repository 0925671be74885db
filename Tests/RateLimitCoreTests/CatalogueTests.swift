import RateLimitConformance
import RateLimitCore
import Testing

/// Runs the hand-written stories of the vector catalogue (Sources/RateLimitConformance/Stories)
/// against the model: every answer there was worked out by hand from the Spec, and each one the
/// model does not give is an issue naming the story and the step. The traces live in the catalogue
/// alone (they become Spec/vectors), so this is the one place they run against the core.
///
/// Each test's name cites exactly the clauses the strategy's stories were written for (their
/// `clauses`), and the test checks that it does, so the names cannot drift from the stories.
@Suite("The hand-worked stories of the vector catalogue, against the model")
struct CatalogueTests {
    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-12 CORE-13 TB-1 TB-2 TB-3 TB-4 TB-5 TB-6 TB-7 TB-8 TB-9 TB-10 TB-11 TB-12 the token bucket's stories get the answers worked out by hand"
    )
    func tokenBucket() throws { try checkCatalogue(of: TokenBucket.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-12 CORE-13 TBI-1 TBI-3 TBI-4 TBI-5 TBI-6 TBI-7 TBI-8 TBI-9 TBI-10 TBI-11 TBI-12 the interval token bucket's stories get the answers worked out by hand"
    )
    func intervalTokenBucket() throws { try checkCatalogue(of: IntervalTokenBucket.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 GCRA-1 GCRA-2 GCRA-3 GCRA-4 GCRA-5 GCRA-6 GCRA-7 GCRA-8 GCRA-9 GCRA-10 GCRA-11 GCRA-12 the GCRA's stories get the answers worked out by hand"
    )
    func gcra() throws { try checkCatalogue(of: GCRA.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 PL-1 PL-2 PL-3 PL-4 PL-5 PL-6 PL-7 PL-8 PL-9 PL-10 PL-11 PL-12 the pay-later limiter's stories get the answers worked out by hand"
    )
    func payLater() throws { try checkCatalogue(of: PayLater.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 WU-1 WU-2 WU-3 WU-4 WU-5 WU-6 WU-7 WU-8 WU-9 WU-10 WU-11 WU-12 the warm-up limiter's stories get the answers worked out by hand"
    )
    func warmUp() throws { try checkCatalogue(of: WarmUp.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 FW-1 FW-3 FW-4 FW-5 FW-6 FW-7 FW-8 FW-9 FW-10 FW-11 FW-12 FW-13 the fixed window's stories get the answers worked out by hand"
    )
    func fixedWindow() throws { try checkCatalogue(of: FixedWindow.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 SWL-1 SWL-2 SWL-3 SWL-4 SWL-5 SWL-6 SWL-7 SWL-8 SWL-9 SWL-10 SWL-11 SWL-12 the sliding window log's stories get the answers worked out by hand"
    )
    func slidingWindowLog() throws { try checkCatalogue(of: SlidingWindowLog.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 SWC-1 SWC-3 SWC-4 SWC-5 SWC-6 SWC-7 SWC-8 SWC-9 SWC-10 SWC-11 SWC-12 the sliding window counter's stories get the answers worked out by hand"
    )
    func slidingWindowCounter() throws { try checkCatalogue(of: SlidingWindowCounter.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 SWS-1 SWS-3 SWS-4 SWS-5 SWS-6 SWS-7 SWS-8 SWS-9 SWS-10 SWS-11 SWS-12 SWS-13 the segmented sliding window's stories get the answers worked out by hand"
    )
    func slidingWindowSegments() throws { try checkCatalogue(of: SlidingWindowSegments.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 LBM-1 LBM-2 LBM-3 LBM-4 LBM-5 LBM-6 LBM-7 LBM-8 LBM-9 LBM-10 LBM-11 LBM-12 the leaky bucket meter's stories get the answers worked out by hand"
    )
    func leakyBucketMeter() throws { try checkCatalogue(of: LeakyBucketMeter.identifier) }

    @Test(
        "CORE-7 CORE-8 CORE-10 CORE-13 LBQ-1 LBQ-3 LBQ-4 LBQ-5 LBQ-6 LBQ-7 LBQ-8 LBQ-9 LBQ-10 LBQ-11 LBQ-12 the leaky bucket queue's stories get the answers worked out by hand"
    )
    func leakyBucketQueue() throws { try checkCatalogue(of: LeakyBucketQueue.identifier) }

    @Test(
        "CORE-13 CL-1 CL-3 CL-4 CL-5 CL-6 CL-7 CL-8 CL-9 CL-10 CL-11 CL-12 the concurrency limiter's stories get the answers worked out by hand"
    )
    func concurrency() throws { try checkCatalogue(of: ConcurrencyLimiter.identifier) }
}

/// Runs `strategy`'s hand-written stories and refusals against the model (one issue per answer it
/// does not give), and checks that the running test's name cites the clauses they were written for.
private func checkCatalogue(of strategy: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let (file, disagreements) = try VectorGenerator.checked(strategy)
    for disagreement in disagreements { Issue.record(Comment(rawValue: disagreement), sourceLocation: sourceLocation) }
    let handWritten = file.stories.filter { !$0.isRandom }
    #expect(handWritten.count >= 8, "only \(handWritten.count) hand-written stories", sourceLocation: sourceLocation)
    #expect(
        handWritten.allSatisfy { $0.steps.allSatisfy { $0.comment?.isEmpty == false } },
        "a hand-written step without a comment", sourceLocation: sourceLocation)
    let writtenFor = Set(handWritten.flatMap(\.clauses))
    let name = Test.current?.displayName ?? ""
    let cited = Set(
        name.split(separator: " ").map(String.init).filter {
            let parts = $0.split(separator: "-")
            return parts.count == 2 && parts[0].allSatisfy(\.isUppercase) && parts[1].allSatisfy(\.isNumber)
        })
    #expect(
        cited == writtenFor,
        "the name cites \(cited.subtracting(writtenFor).sorted()) that no story was written for, and leaves out \(writtenFor.subtracting(cited).sorted())",
        sourceLocation: sourceLocation)
}
