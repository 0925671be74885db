import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import Testing

@testable import RateLimitClient

// What the client learns of its endpoints' limits, as a pure machine (Sources/RateLimitClient/
// LearningMachine.swift), without an actor: requests begin and end in any order, responses teach
// the adaptive machines, idle endpoints are forgotten beyond the policy's bound, and key writes
// land in the registry in any order.

@Suite("The client's learning machine, without an actor (Spec/HTTP.md HTTP-13)")
struct LearningMachineTests {
    private typealias Machine = LearningMachine<AnyRateLimitStrategy>

    private func instant(_ nanoseconds: Int64) -> RateLimitInstant {
        (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin
    }

    private func randomFeedback(using rng: inout SeededGenerator) -> AdaptiveFeedback {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: .failure
        case 1: .response(status: 429, latencyNanoseconds: 10_000_000, inFlight: 1)
        case 2: .response(status: 503, latencyNanoseconds: 2_000_000_000, inFlight: 3)
        default:
            .response(
                status: 200, latencyNanoseconds: Int64.random(in: 1_000_000...50_000_000, using: &rng),
                inFlight: Int64.random(in: 1...4, using: &rng))
        }
    }

    @Test(
        "HTTP-13 over random requests to 40 endpoints, an endpoint with a request in progress is never forgotten, at most maximumIdleEndpoints idle ones keep what they learned, and once every key write has landed, in any order, each key enforces what the machine wants"
    )
    func boundedAndKeysEndAsWanted() throws {
        let seed = TestSeed.base
        var rng = SeededGenerator(seed: seed)
        let rule = AnyRateLimitStrategy.tokenBucket(
            try TokenBucket(capacity: 10, permitsPerPeriod: 5, period: .seconds(1)))
        for trial in 0..<40 {
            let bound = Int.random(in: 0...6, using: &rng)
            var machine = Machine(
                Adaptation(try AdaptivePolicy(rate: .standard, concurrency: .off, maximumIdleEndpoints: bound)))
            var requests: [(endpoint: String, id: UInt64)] = []
            var writes: [Machine.KeyWrite] = []
            var registry: [String: AnyRateLimitStrategy] = [:]  // a key's own configuration; none: its rule's
            var now: Int64 = 0
            var forgotten = 0
            var dropped: Set<UInt64> = []  // learners the app forgot
            func write(_ endpoint: String) { writes.append(machine.write(endpoint)) }
            for step in 0..<400 {
                let context = "seed \(seed) trial \(trial) step \(step)"
                now += Int64.random(in: 0...300_000_000, using: &rng)
                let endpoint = "api/\(Int.random(in: 0..<40, using: &rng))"
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<3:
                    let begun = machine.begin(
                        endpoint, rule: machine.isLearning(endpoint) ? nil : rule, at: instant(now))
                    let id = try #require(begun.id, "\(context): a token bucket learns its rate")
                    requests.append((endpoint, id))
                    if begun.writesKey { write(endpoint) }
                case 3..<6 where !requests.isEmpty:
                    let (ended, id) = requests.remove(at: Int.random(in: 0..<requests.count, using: &rng))
                    for change in machine.end(ended, learner: id) {
                        forgotten += 1
                        #expect(change.learned?.change == .reset, "\(context)")
                        #expect(change.learned?.rate == rule.enforcedRate, "\(context): the rule's limit again")
                        #expect(
                            !requests.contains { $0.endpoint == change.endpoint && !dropped.contains($0.id) },
                            "\(context): \(change.endpoint) forgotten with a request in progress")
                        if change.writesKey { write(change.endpoint) }
                    }
                    #expect(machine.idle.count <= bound, "\(context)")
                case 6..<8 where !requests.isEmpty:
                    let learning = requests[Int.random(in: 0..<requests.count, using: &rng)].endpoint
                    let feedback = randomFeedback(using: &rng)
                    if let change = machine.learn(learning, feedback, at: instant(now)) {
                        #expect(
                            change.learned?.rate == machine.learnedLimit(for: learning)?.rate, "\(context): reported")
                        if change.writesKey { write(learning) }
                    }
                case 8 where !writes.isEmpty:
                    let landed = writes.remove(at: Int.random(in: 0..<writes.count, using: &rng))
                    registry[landed.endpoint] = landed.configuration
                    if let next = machine.wrote(landed) { writes.append(next) }
                default:
                    if let id = machine.learners[endpoint]?.id { dropped.insert(id) }
                    if let change = machine.forget(endpoint) {
                        forgotten += 1
                        if change.writesKey { write(endpoint) }
                    }
                    #expect(machine.learnedLimit(for: endpoint) == nil, "\(context)")
                }
                // Each learner counts exactly its requests in progress; only the app's forget drops
                // a learner with one in progress.
                for (endpoint, id) in requests where !dropped.contains(id) {
                    let learner = machine.learners[endpoint]
                    #expect(learner?.id == id, "\(context): \(endpoint)'s learner \(id) is kept")
                    #expect(learner?.requests == requests.count { $0.id == id }, "\(context)")
                }
            }
            // Every write lands, in a random order.
            while !writes.isEmpty {
                let landed = writes.remove(at: Int.random(in: 0..<writes.count, using: &rng))
                registry[landed.endpoint] = landed.configuration
                if let next = machine.wrote(landed) { writes.append(next) }
            }
            #expect(machine.keyWrites.isEmpty, "seed \(seed) trial \(trial)")
            for index in 0..<40 {
                let endpoint = "api/\(index)"
                #expect(
                    registry[endpoint] == machine.learners[endpoint]?.enforced,
                    "seed \(seed) trial \(trial): \(endpoint)'s key enforces what the machine wants")
            }
            #expect(forgotten > 0 || bound >= 40, "seed \(seed) trial \(trial): endpoints were forgotten")
        }
    }

    @Test("HTTP-13 an endpoint whose rule has nothing to learn, or that no rule governs, does not learn")
    func nothingToLearn() throws {
        var machine = Machine(
            Adaptation(AdaptivePolicy(rate: .standard, concurrency: .off, endpoints: .prefix("api/"))))
        let concurrency = AnyRateLimitStrategy.concurrency(try ConcurrencyLimiter(limit: 4))
        #expect(machine.begin("api/a", rule: concurrency, at: .origin).id == nil, "no rate to learn")
        #expect(machine.begin("api/b", rule: nil, at: .origin).id == nil, "no rule")
        #expect(!machine.covers("other/c"))
        #expect(machine.learners.isEmpty && machine.learnersMade == 0)
    }

    @Test("HTTP-13 a learner made while another request read the rule is used as it is, not made again")
    func madeMeanwhileIsShared() throws {
        var machine = Machine(Adaptation(AdaptivePolicy.standard))
        let rule = AnyRateLimitStrategy.gcra(try GCRA(burst: 5, emissionInterval: .milliseconds(100)))
        // Both requests found no learner and read the rule; the second to resume finds the first's.
        let first = machine.begin("api/a", rule: rule, at: .origin)
        let second = machine.begin("api/a", rule: rule, at: .origin)
        #expect(first.id == 1 && second.id == 1 && !second.writesKey)
        #expect(machine.learners["api/a"]?.requests == 2 && machine.learnersMade == 1)
        #expect(machine.end("api/a", learner: 1).isEmpty)
        #expect(machine.idle.count == 0, "a request is still in progress")
        // A request of a learner since forgotten changes nothing when it ends.
        _ = machine.forget("api/a")
        #expect(machine.end("api/a", learner: 1).isEmpty && machine.idle.count == 0)
    }
}
