import RateLimitCore
import RateLimitHTTP

// What the client knows of its endpoints' servers (Spec/HTTP.md HTTP-9, HTTP-12), as a pure
// machine: each endpoint's quota (the waits and the quota the server reported), its attempts in
// flight, the client's holds on its key (ServerHolds.swift) and when to forget what no longer
// matters. Every decision the client takes between awaits is one call here, at an instant the
// actor read; the actor only awaits the registry, the server and the clock, and carries out what
// this answers (RateLimitedClient.swift).

/// The client's knowledge of its endpoints' servers, decided without an actor (HTTP-9, HTTP-12).
struct EndpointMachine: Sendable {
    /// An attempt on its way to the server: what its response is recorded against.
    struct Attempt: Sendable {
        /// The endpoint's attempts in flight once this one was sent, this one included.
        let inFlight: Int64
        /// The quota's rejection epoch when it was sent (HTTP-9: one burst of silent 429s is one signal).
        let epoch: Int
        /// When it was sent.
        let sentAt: RateLimitInstant
    }

    /// What a response changed.
    struct Received: Sendable {
        /// The wait the client honours before a retry: the server's, at most the ceiling (HTTP-12).
        let serverWait: Int64?
        /// The throttle of the endpoint's key to send to the registry, when the server's wait
        /// outlasts what the client holds (its `serverWait` event announces it).
        let hold: ServerHolds.Sent?
    }

    /// The quota every endpoint starts from: the configuration only.
    let newQuota: ServerQuota
    /// What each endpoint's server said that still matters.
    private(set) var quotas: [String: ServerQuota] = [:]
    /// Attempts in flight per endpoint; an entry lives only while there are some.
    private(set) var inFlight: [String: Int64] = [:]
    /// The client's holds on its endpoints' keys for the server, and the requests on their way to
    /// the registry (HTTP-12).
    private(set) var holds = ServerHolds()
    /// Quotas and holds remembered at which the next sweep forgets every expired one.
    private(set) var sweepAt = Self.firstSweep
    /// The first sweep's threshold, and the least of any later one.
    static var firstSweep: Int { 64 }

    /// A machine whose endpoints start from `serverQuota`'s configuration (what it remembers is dropped).
    init(serverQuota: ServerQuota) {
        var template = serverQuota
        template.forget()  // a quota's state belongs to its own endpoint and timeline
        newQuota = template
    }

    /// Quotas and holds remembered: what the sweep bounds.
    var remembered: Int { quotas.count + holds.count }

    // MARK: Reading

    /// How long the server's answers hold `endpoint`'s requests back at `now` (`nil`: none).
    func serverWait(_ endpoint: String, at now: RateLimitInstant) -> Int64? { quotas[endpoint]?.wait(at: now) }

    /// Until when the client holds `endpoint`'s key, if it does.
    func heldUntil(_ endpoint: String) -> RateLimitInstant? { holds.until(of: endpoint) }

    /// Until when `endpoint` is held when no request for its key is on its way to the registry.
    func settled(_ endpoint: String) -> RateLimitInstant? { holds.settled(endpoint) }

    /// Whether the registry just granted a request that the client's hold should have kept back:
    /// a hold none of whose throttles is still on its way, in force at `now`, and covering every
    /// wait the server asked for (a longer one not yet sent to the registry is the hold's
    /// business, not the app's).
    func liftedBeforeGrant(_ endpoint: String, at now: RateLimitInstant) -> Bool {
        guard let until = holds.settled(endpoint), until > now, let wait = serverWait(endpoint, at: now) else {
            return false
        }
        return (now.advanced(byNanoseconds: wait) ?? .end) <= until
    }

    // MARK: An attempt

    /// Takes from the server's reported quota for one attempt granted at `now` (HTTP-9): `nil`
    /// when it may go out, else how long a response that arrived meanwhile makes it wait.
    mutating func permit(_ endpoint: String, at now: RateLimitInstant) -> Int64? {
        guard case .wait(let wait) = quotas[endpoint, default: newQuota].permit(at: now) else { return nil }
        return wait
    }

    /// An attempt goes out to `endpoint` at `now`.
    mutating func send(_ endpoint: String, at now: RateLimitInstant) -> Attempt {
        inFlight[endpoint, default: 0] += 1
        return Attempt(
            inFlight: inFlight[endpoint] ?? 1, epoch: quotas[endpoint]?.rejectionEpoch ?? 0, sentAt: now)
    }

    /// An attempt to `endpoint` came back, with a response or without, or was cancelled: dropped
    /// at 0 on every path, since the sweep counts an endpoint with an entry as busy.
    mutating func returned(_ endpoint: String) {
        if let count = inFlight[endpoint], count > 1 {
            inFlight[endpoint] = count - 1
        } else {
            inFlight[endpoint] = nil
        }
    }

    /// Records what the server answered to `attempt` at `now` (after ``returned(_:)``): its wait
    /// and reported quota, and the hold on the endpoint's key when the wait is new or the key is
    /// not held (HTTP-9, HTTP-12).
    mutating func received(
        _ feedback: ServerFeedback, from endpoint: String, to attempt: Attempt, at now: RateLimitInstant
    ) -> Received {
        let serverWait = feedback.requestedWaitNanoseconds.map { min($0, newQuota.longestWaitNanoseconds) }
        let asked = quotas[endpoint]?.blockedUntil
        let recorded = quotas[endpoint, default: newQuota].record(
            feedback, at: now, othersInFlight: inFlight[endpoint] ?? 0, sentInEpoch: attempt.epoch)
        guard let until = recorded, until != asked || holds.until(of: endpoint) == nil else {
            return Received(serverWait: serverWait, hold: nil)
        }
        return Received(serverWait: serverWait, hold: holds.hold(endpoint, until: until, at: now))
    }

    // MARK: Holds (ServerHolds.swift)

    /// Holds `endpoint`'s key until `until` at least: the throttle to send.
    mutating func hold(_ endpoint: String, until: RateLimitInstant, at now: RateLimitInstant) -> ServerHolds.Sent {
        holds.hold(endpoint, until: until, at: now)
    }

    /// `sent` landed in the registry: the request to send next, if any (``ServerHolds/landed(_:)``).
    mutating func landed(_ sent: ServerHolds.Sent) -> ServerHolds.Sent? { holds.landed(sent) }

    // MARK: Forgetting

    /// Forgets everything the client learned of `endpoint`'s server and its hold on the key, which
    /// the app resumed (nothing to send: the registry already accepts).
    mutating func forget(_ endpoint: String) {
        quotas[endpoint] = nil  // a new quota is `newQuota`, which has forgotten everything
        holds.forget(endpoint)
    }

    /// Forgets what the server said of `endpoint` and lifts the client's hold: the resume to send,
    /// `nil` when the key was not held (HTTP-12).
    mutating func release(_ endpoint: String, at now: RateLimitInstant) -> ServerHolds.Sent? {
        quotas[endpoint] = nil
        return holds.release(endpoint, at: now)
    }

    /// Forgets what the server said of `endpoint` once it no longer matters, and, each time the
    /// endpoints remembered have doubled since the last sweep, of every endpoint with no attempt
    /// in flight: what the client remembers is then at most twice what still matters, whatever
    /// the number of endpoints it ever sent to (bounded memory). Answers whether a sweep ran.
    @discardableResult
    mutating func forgetIfIdle(_ endpoint: String, at now: RateLimitInstant) -> Bool {
        guard inFlight[endpoint] == nil else { return false }
        forgetExpired(endpoint, at: now)
        guard remembered >= sweepAt else { return false }
        for other in Set(quotas.keys).union(holds.endpoints) where inFlight[other] == nil {
            forgetExpired(other, at: now)
        }
        sweepAt = max(Self.firstSweep, 2 * remembered)
        return true
    }

    /// Drops `endpoint`'s hold once it has ended and landed, and its quota once it is idle.
    private mutating func forgetExpired(_ endpoint: String, at now: RateLimitInstant) {
        holds.dropIfEnded(endpoint, at: now)
        if quotas[endpoint]?.isIdle(at: now) ?? false { quotas[endpoint] = nil }
    }
}
