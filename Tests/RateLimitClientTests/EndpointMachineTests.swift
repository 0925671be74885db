import RateLimitConformance
import RateLimitCore
import RateLimitHTTP
import Testing

@testable import RateLimitClient

// What the client knows of its endpoints' servers, as a pure machine (Sources/RateLimitClient/
// EndpointMachine.swift), without an actor: attempts go out and come back in any order, servers
// answer with waits and quotas, throttles land, the app forgets, and the sweep bounds memory.

@Suite("The client's endpoint machine, without an actor (Spec/HTTP.md HTTP-9, HTTP-12)")
struct EndpointMachineTests {
    private static let reference = HTTPDate(secondsSinceEpoch: 1_700_000_000)

    private func instant(_ nanoseconds: Int64) -> RateLimitInstant {
        (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin
    }

    private func feedback(_ status: Int, _ fields: HTTPFields = [:]) -> ServerFeedback {
        ServerFeedback(status: status, fields: fields, receivedAt: Self.reference)
    }

    /// A server's answer drawn at random: silent 429s, waits, reported quotas, plain successes.
    private func randomFeedback(using rng: inout SeededGenerator) -> ServerFeedback {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: feedback(429)
        case 1: feedback(429, ["Retry-After": "\(Int.random(in: 1...20, using: &rng))"])
        case 2: feedback(503, ["Retry-After": "\(Int.random(in: 1...5, using: &rng))"])
        case 3:
            feedback(
                200,
                [
                    "RateLimit":
                        #""q";r=\#(Int.random(in: 0...3, using: &rng));t=\#(Int.random(in: 1...10, using: &rng))"#
                ])
        default: feedback(200)
        }
    }

    @Test(
        "HTTP-9 HTTP-12 over random attempts to 300 endpoints, attempts in flight are counted exactly, a sweep forgets exactly what no longer matters of idle endpoints, and what is remembered stays within the sweep's bound"
    )
    func sweepKeepsWhatMatters() throws {
        let seed = TestSeed.base
        var rng = SeededGenerator(seed: seed)
        for trial in 0..<20 {
            var machine = EndpointMachine(serverQuota: try ServerQuota())
            var attempts: [(endpoint: String, attempt: EndpointMachine.Attempt)] = []
            var onTheirWay: [ServerHolds.Sent] = []
            var busy: [String: Int64] = [:]
            var now: Int64 = 0
            var sweeps = 0
            for step in 0..<3_000 {
                let context = "seed \(seed) trial \(trial) step \(step)"
                now += Int64.random(in: 0...20_000_000, using: &rng)
                let at = instant(now)
                let endpoint = "api/\(Int.random(in: 0..<300, using: &rng))"
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<4:
                    _ = machine.permit(endpoint, at: at)
                    attempts.append((endpoint, machine.send(endpoint, at: at)))
                    busy[endpoint, default: 0] += 1
                    #expect(attempts.last?.attempt.inFlight == busy[endpoint], "\(context)")
                case 4..<8 where !attempts.isEmpty:
                    let (back, attempt) = attempts.remove(at: Int.random(in: 0..<attempts.count, using: &rng))
                    machine.returned(back)
                    busy[back]! -= 1
                    if busy[back] == 0 { busy[back] = nil }
                    let received = machine.received(randomFeedback(using: &rng), from: back, to: attempt, at: at)
                    if let hold = received.hold { onTheirWay.append(hold) }
                    let before = machine
                    let swept = machine.forgetIfIdle(back, at: at)
                    if busy[back] == nil {
                        // After an idle endpoint's attempt, what is remembered is within the bound.
                        #expect(machine.remembered <= machine.sweepAt, "\(context)")
                    } else {
                        #expect(!swept, "\(context): a busy endpoint's attempt never sweeps")
                    }
                    if swept {
                        sweeps += 1
                        try checkSweep(before: before, after: machine, busy: busy, at: at, context)
                    }
                case 8 where !onTheirWay.isEmpty:
                    let sent = onTheirWay.remove(at: Int.random(in: 0..<onTheirWay.count, using: &rng))
                    if let next = machine.landed(sent) { onTheirWay.append(next) }
                default:
                    if Bool.random(using: &rng) {
                        machine.forget(endpoint)
                    } else if let resume = machine.release(endpoint, at: at) {
                        onTheirWay.append(resume)
                    }
                    #expect(machine.quotas[endpoint] == nil && machine.heldUntil(endpoint) == nil, "\(context)")
                }
                #expect(machine.inFlight == busy, "\(context): attempts in flight, counted exactly")
            }
            #expect(sweeps > 0, "seed \(seed) trial \(trial): the sweep ran")
        }
    }

    /// A sweep at `now` forgot, of endpoints with no attempt in flight, exactly the quotas that are
    /// idle and the holds that have ended and landed; everything else is as it was.
    private func checkSweep(
        before: EndpointMachine, after: EndpointMachine, busy: [String: Int64], at now: RateLimitInstant,
        _ context: String
    ) throws {
        for (endpoint, quota) in before.quotas {
            let kept = busy[endpoint] != nil || !quota.isIdle(at: now)
            #expect(
                (after.quotas[endpoint] != nil) == kept,
                "\(context): \(endpoint)'s quota \(kept ? "kept" : "forgotten") by the sweep")
        }
        for endpoint in before.holds.endpoints {
            let until = try #require(before.heldUntil(endpoint))
            let kept = busy[endpoint] != nil || until > now || before.settled(endpoint) == nil
            #expect(
                (after.heldUntil(endpoint) != nil) == kept,
                "\(context): \(endpoint)'s hold \(kept ? "kept" : "forgotten") by the sweep")
        }
        #expect(after.sweepAt == max(EndpointMachine.firstSweep, 2 * after.remembered), "\(context)")
    }

    @Test("HTTP-9 a reported quota counts the endpoint's other attempts still in flight")
    func reportedQuotaCountsOthersInFlight() throws {
        var machine = EndpointMachine(serverQuota: try ServerQuota())
        let first = machine.send("a", at: .origin)
        _ = machine.send("a", at: .origin)
        _ = machine.send("a", at: .origin)
        #expect(machine.inFlight["a"] == 3)
        machine.returned("a")
        _ = machine.received(feedback(200, ["RateLimit": #""q";r=5;t=10"#]), from: "a", to: first, at: instant(1))
        // Two attempts the server may not have counted yet: 5 - 2.
        #expect(machine.quotas["a"]?.budget?.remaining == 3)
        var permits: [Int64?] = []
        for _ in 0..<4 { permits.append(machine.permit("a", at: instant(2))) }
        // Three go out; the fourth waits for the reset, 10 s after the response.
        #expect(permits == [nil, nil, nil, 10_000_000_000 - 1])
    }

    @Test(
        "HTTP-12 a server's wait holds the key once: the same wait again sends nothing, a longer one a longer throttle, and the ceiling bounds both"
    )
    func waitsHoldTheKeyOnce() throws {
        var machine = EndpointMachine(serverQuota: try ServerQuota(longestWait: .seconds(60)))
        let second: Int64 = 1_000_000_000
        let attempt = machine.send("a", at: .origin)
        machine.returned("a")
        let first = machine.received(feedback(429, ["Retry-After": "5"]), from: "a", to: attempt, at: .origin)
        #expect(first.serverWait == 5 * second)
        let throttle = try #require(first.hold)
        #expect(throttle == ServerHolds.Sent(endpoint: "a", request: .throttle(until: instant(5 * second))))
        #expect(machine.settled("a") == nil, "the throttle is on its way")
        #expect(machine.landed(throttle) == nil)
        #expect(machine.settled("a") == instant(5 * second))

        let again = machine.received(feedback(429, ["Retry-After": "5"]), from: "a", to: attempt, at: .origin)
        #expect(again.hold == nil, "the same wait: the key is already held until then")
        let longer = machine.received(feedback(429, ["Retry-After": "7200"]), from: "a", to: attempt, at: .origin)
        #expect(longer.serverWait == 60 * second, "at most the ceiling")
        #expect(longer.hold?.request == .throttle(until: instant(60 * second)))
    }

    @Test(
        "HTTP-12 a grant is taken for the app's resume only while the client's hold has landed, is in force and covers the server's wait"
    )
    func liftedBeforeGrant() throws {
        var machine = EndpointMachine(serverQuota: try ServerQuota())
        let second: Int64 = 1_000_000_000
        let attempt = machine.send("a", at: .origin)
        machine.returned("a")
        let throttle = try #require(
            machine.received(feedback(429, ["Retry-After": "5"]), from: "a", to: attempt, at: .origin).hold)
        #expect(!machine.liftedBeforeGrant("a", at: instant(second)), "the throttle is still on its way")
        _ = machine.landed(throttle)
        #expect(machine.liftedBeforeGrant("a", at: instant(second)), "the registry granted inside the hold")
        #expect(!machine.liftedBeforeGrant("a", at: instant(5 * second)), "the hold has ended")

        // A longer wait recorded but not yet sent to the registry is the hold's business.
        let later = machine.send("a", at: instant(second))
        machine.returned("a")
        let longer = try #require(
            machine.received(feedback(429, ["Retry-After": "9"]), from: "a", to: later, at: instant(second)).hold)
        #expect(!machine.liftedBeforeGrant("a", at: instant(2 * second)))
        _ = machine.landed(longer)
        #expect(machine.liftedBeforeGrant("a", at: instant(2 * second)))

        // Forgotten once the app resumed the key: nothing is held, nothing waits.
        machine.forget("a")
        #expect(!machine.liftedBeforeGrant("a", at: instant(2 * second)))
        #expect(machine.serverWait("a", at: instant(2 * second)) == nil)
        #expect(machine.release("a", at: instant(2 * second)) == nil, "nothing to resume")
    }
}
