import RateLimitConformance
import RateLimitCore
import Testing

@testable import RateLimitClient

// The client's holds as a pure machine (Sources/RateLimitClient/ServerHolds.swift), without an
// actor: requests to the registry land in any order, holds grow, end, are forgotten by the client
// or by the app, and the registry must end up holding each key as the client wants.

@Suite("The client's holds on keys, without an actor (Spec/HTTP.md HTTP-12)")
struct ServerHoldsTests {
    /// The registry as the requests leave it: the last to land wins (REG-4), `nil` never asked.
    private struct Registry {
        var keys: [String: ServerHolds.Request] = [:]

        func accepting(_ endpoint: String, at now: RateLimitInstant) -> Bool {
            switch keys[endpoint] {
            case nil, .resume?: true
            case .throttle(let until)?: until <= now
            }
        }
    }

    private func instant(_ nanoseconds: Int64) -> RateLimitInstant {
        (try? RateLimitInstant(nanoseconds: nanoseconds)) ?? .origin
    }

    @Test(
        "HTTP-12 whatever order requests land in, once none is on its way the registry holds every key exactly as the client does, and a key the client no longer holds accepts"
    )
    func registryEndsAsTheClientWants() {
        let seed = TestSeed.base
        var rng = SeededGenerator(seed: seed)
        let endpoints = ["a", "b", "c"]
        for trial in 0..<300 {
            var holds = ServerHolds()
            var registry = Registry()
            var onTheirWay: [ServerHolds.Sent] = []
            var now: Int64 = 0
            var log: [String] = []
            for _ in 0..<Int.random(in: 1...60, using: &rng) {
                let endpoint = endpoints.randomElement(using: &rng)!
                switch Int.random(in: 0..<100, using: &rng) {
                case 0..<35:
                    let requested = now + Int64.random(in: 1...100, using: &rng)
                    let before = holds.until(of: endpoint)
                    let sent = holds.hold(endpoint, until: instant(requested), at: instant(now))
                    onTheirWay.append(sent)
                    log.append("hold \(endpoint) until \(requested) at \(now) -> \(sent.request)")
                    // A hold only grows while it lasts.
                    if let before, before > instant(now) {
                        #expect(holds.until(of: endpoint)! >= before, "seed \(seed) trial \(trial): \(log)")
                    }
                case 35..<70 where !onTheirWay.isEmpty:
                    let sent = onTheirWay.remove(at: Int.random(in: 0..<onTheirWay.count, using: &rng))
                    registry.keys[sent.endpoint] = sent.request
                    let next = holds.landed(sent)
                    log.append("landed \(sent.endpoint) \(sent.request) -> \(String(describing: next?.request))")
                    if let next { onTheirWay.append(next) }
                case 70..<78:
                    // The app resumes the key itself; the client then forgets its hold (HTTP-12).
                    registry.keys[endpoint] = .resume
                    holds.forget(endpoint)
                    log.append("the app resumed \(endpoint)")
                case 78..<84:
                    if let sent = holds.release(endpoint, at: instant(now)) { onTheirWay.append(sent) }
                    log.append("release \(endpoint) at \(now)")
                case 84..<90:
                    holds.dropIfEnded(endpoint, at: instant(now))
                default:
                    now += Int64.random(in: 0...40, using: &rng)
                }
            }
            // Everything lands, follow-ups included.
            while !onTheirWay.isEmpty {
                let sent = onTheirWay.remove(at: Int.random(in: 0..<onTheirWay.count, using: &rng))
                registry.keys[sent.endpoint] = sent.request
                if let next = holds.landed(sent) { onTheirWay.append(next) }
            }
            #expect(holds.inFlight == 0, "seed \(seed) trial \(trial)")
            for endpoint in endpoints {
                if let until = holds.until(of: endpoint) {
                    #expect(
                        registry.keys[endpoint] == .throttle(until: until),
                        "seed \(seed) trial \(trial) \(endpoint): the registry has \(String(describing: registry.keys[endpoint])), the client holds until \(until); \(log)"
                    )
                } else {
                    #expect(
                        registry.accepting(endpoint, at: instant(now)),
                        "seed \(seed) trial \(trial) \(endpoint): not held, yet the registry has \(String(describing: registry.keys[endpoint])) at \(now); \(log)"
                    )
                }
            }
        }
    }

    @Test("HTTP-12 a throttle that lands after a longer one asked later is followed by the longer one")
    func outOfOrder() {
        var holds = ServerHolds()
        let first = holds.hold("a", until: instant(100), at: .origin)
        let second = holds.hold("a", until: instant(300), at: instant(10))
        #expect(second.request == .throttle(until: instant(300)))
        // The longer lands first, then the shorter: the registry holds 100 until told again.
        #expect(holds.landed(second) == nil)
        let next = holds.landed(first)
        #expect(next?.request == .throttle(until: instant(300)))
        #expect(holds.settled("a") == nil, "a request is still on its way")
        #expect(holds.landed(next!) == nil)
        #expect(holds.settled("a") == instant(300))
    }

    @Test(
        "HTTP-12 a correction still on its way when a longer hold lands is itself corrected (the actor once left the registry with the shorter one)"
    )
    func correctionOvertaken() {
        var holds = ServerHolds()
        let first = holds.hold("a", until: instant(100), at: .origin)
        let second = holds.hold("a", until: instant(300), at: instant(10))
        #expect(holds.landed(second) == nil)
        let correction = holds.landed(first)  // the registry has 100; the client holds 300
        #expect(correction?.request == .throttle(until: instant(300)))
        let third = holds.hold("a", until: instant(500), at: instant(20))
        #expect(holds.landed(third) == nil, "the correction is still on its way")
        // The correction lands last: the registry has 300, the client holds 500.
        let again = holds.landed(correction!)
        #expect(again?.request == .throttle(until: instant(500)))
        #expect(holds.landed(again!) == nil)
        #expect(holds.settled("a") == instant(500))
    }

    @Test("HTTP-12 a hold forgotten while its throttle is on its way leaves the key accepting when it lands")
    func forgottenOnItsWay() {
        var holds = ServerHolds()
        let throttle = holds.hold("a", until: instant(100), at: .origin)
        holds.forget("a")
        #expect(holds.landed(throttle)?.request == .resume)
        #expect(holds.count == 0)
    }
}
