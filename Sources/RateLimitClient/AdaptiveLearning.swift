// The client learns each endpoint's limit from the server (Spec/HTTP.md HTTP-13, AdaptiveLimits.md):
// every response (and every attempt that got none) is fed to the endpoint's adaptive machines, and
// a limit they change is applied to the endpoint's key in the registry as the key's own
// configuration (REG-7), so that queued requests are served under it. What is learned is bounded:
// an endpoint with no request in progress is idle, and beyond the policy's number of idle
// endpoints the one idle longest is forgotten, its key given back to its rule. The machines
// decide; this file only feeds them, applies what they answer and forgets.

import RateLimitActor
import RateLimitHTTP

/// Whether, and how, a rate-limited client learns its endpoints' limits from the server (HTTP-13).
public struct AdaptivePolicy: Hashable, Sendable {
    /// One machine's part in a policy.
    public enum Machine<Limit: AdaptiveLimit>: Hashable, Sendable {
        /// This limit stays as the endpoint's rule says.
        case off
        /// The standard machine, starting from the limit the endpoint's rule enforces
        /// (`AdaptiveRate.standard(startingAt:)`, `AdaptiveConcurrency.standard(startingAt:)`).
        case standard
        /// This machine, for every endpoint whose rule enforces such a limit.
        case custom(Limit)
    }

    /// How the rate is learned.
    public var rate: Machine<AdaptiveRate>
    /// How the concurrency is learned.
    public var concurrency: Machine<AdaptiveConcurrency>
    /// The endpoints that learn (an exact key, a prefix, or every endpoint).
    public var endpoints: KeyPattern
    /// The most endpoints whose learned limit is kept while no request to them is in progress;
    /// beyond it, the one idle longest is forgotten and its key follows its rule again (HTTP-13).
    public let maximumIdleEndpoints: Int

    /// How many idle endpoints keep their learned limit unless a policy says otherwise.
    public static let defaultMaximumIdleEndpoints = 1_000

    /// A policy learning `rate` and `concurrency` for the endpoints `endpoints` matches, keeping
    /// what it learned for at most ``defaultMaximumIdleEndpoints`` idle endpoints.
    public init(rate: Machine<AdaptiveRate>, concurrency: Machine<AdaptiveConcurrency>, endpoints: KeyPattern = .anyKey)
    {
        self.rate = rate
        self.concurrency = concurrency
        self.endpoints = endpoints
        self.maximumIdleEndpoints = Self.defaultMaximumIdleEndpoints
    }

    /// A policy learning `rate` and `concurrency` for the endpoints `endpoints` matches, keeping
    /// what it learned for at most `maximumIdleEndpoints` endpoints with no request in progress
    /// (0: only while requests are in progress). Keep it below the registry's `maximumKeys`: each
    /// endpoint that learned holds a key with a configuration of its own (REG-8).
    ///
    /// - Throws: `RateLimitHTTPError` naming `maximumIdleEndpoints` when it is negative.
    public init(
        rate: Machine<AdaptiveRate>, concurrency: Machine<AdaptiveConcurrency>, endpoints: KeyPattern = .anyKey,
        maximumIdleEndpoints: Int
    ) throws(RateLimitHTTPError) {
        guard maximumIdleEndpoints >= 0 else {
            throw .invalid(field: "maximumIdleEndpoints", reason: "must not be negative")
        }
        self.rate = rate
        self.concurrency = concurrency
        self.endpoints = endpoints
        self.maximumIdleEndpoints = maximumIdleEndpoints
    }

    /// Fixed limits: nothing is learned (the default).
    public static let off = AdaptivePolicy(rate: .off, concurrency: .off)
    /// Every endpoint learns the rate and the concurrency its rule enforces, with the standard machines.
    public static let standard = AdaptivePolicy(rate: .standard, concurrency: .standard)

    /// Whether `endpoint` learns under this policy.
    func covers(_ endpoint: String) -> Bool {
        switch endpoints {
        case .exact(let key): endpoint == key
        case .prefix(let prefix): endpoint.hasPrefix(prefix)
        case .anyKey: true
        }
    }
}

/// What the client learned of an endpoint's limit (HTTP-13): the rate and the concurrency in force,
/// each `nil` when the endpoint does not learn it, and what the last change was.
public struct LearnedLimit: Hashable, Sendable {
    /// The rate and burst in force.
    public let rate: AdaptiveRate.Limit?
    /// The requests in flight allowed.
    public let concurrency: Int64?
    /// What the response that changed it did (`reset`: what was learned was forgotten, and the
    /// limit is the rule's again).
    public let change: AdaptiveChange
}

/// How a client whose strategy is an `AdaptableStrategy` reads and sets a learned limit.
struct Adaptation<Strategy: RateLimitStrategy>: Sendable {
    let policy: AdaptivePolicy
    let enforcedRate: @Sendable (Strategy) -> AdaptiveRate.Limit?
    let enforcedConcurrency: @Sendable (Strategy) -> Int64?
    let enforcingRate: @Sendable (Strategy, AdaptiveRate.Limit) -> Strategy?
    let enforcingConcurrency: @Sendable (Strategy, Int64) -> Strategy?
}

extension Adaptation where Strategy: AdaptableStrategy {
    init(_ policy: AdaptivePolicy) {
        self.init(
            policy: policy, enforcedRate: { $0.enforcedRate }, enforcedConcurrency: { $0.enforcedConcurrency },
            enforcingRate: { $0.enforcing($1) }, enforcingConcurrency: { $0.enforcing(concurrency: $1) })
    }
}

/// One endpoint's machines, the limit the client wants its key to enforce, and its requests.
struct Learner<Strategy: RateLimitStrategy>: Sendable {
    /// Tells this learner from one made later for the same endpoint.
    let id: UInt64
    /// The rule's configuration when learning started: the learned limits are applied to it.
    let rule: Strategy
    var rate: (machine: AdaptiveRate, state: AdaptiveRate.State)?
    var concurrency: (machine: AdaptiveConcurrency, state: AdaptiveConcurrency.State)?
    /// The configuration the key should enforce as its own; `nil` while the learned limit is the rule's.
    var enforced: Strategy?
    /// Requests to the endpoint in progress (from `send` until it returns or throws).
    var requests = 0
    /// What the last feedback that changed the learned limit did.
    var lastChange = AdaptiveChange.unchanged

    var learned: (rate: AdaptiveRate.Limit?, concurrency: Int64?) {
        (rate.map { $0.machine.limit(of: $0.state) }, concurrency.map { $0.machine.limit(of: $0.state) })
    }
}

/// The learning endpoints with no request in progress, the one idle longest first (HTTP-13): a
/// queue of (endpoint, stamp), an entry live while the endpoint's stamp is its own, so that an
/// endpoint going busy or forgotten costs O(1) and the queue is compacted as it goes.
struct IdleEndpoints: Sendable {
    private var queue: [(endpoint: String, stamp: UInt64)] = []
    private var start = 0
    private var stamps: [String: UInt64] = [:]
    private var issued: UInt64 = 0

    /// Endpoints idle now.
    var count: Int { stamps.count }

    /// Entries held, live, stale or already taken from the front (bounded by twice the live
    /// ones, plus a little).
    var storage: Int { queue.count }

    /// `endpoint` became idle now: it is the most recently used.
    mutating func insert(_ endpoint: String) {
        issued += 1
        stamps[endpoint] = issued
        queue.append((endpoint, issued))
        compact()
    }

    /// `endpoint` is busy again, or forgotten.
    mutating func remove(_ endpoint: String) {
        guard stamps.removeValue(forKey: endpoint) != nil else { return }
        compact()
    }

    /// Takes out the endpoint idle longest.
    mutating func removeOldest() -> String? {
        while start < queue.count {
            let (endpoint, stamp) = queue[start]
            start += 1
            if stamps[endpoint] == stamp {
                stamps[endpoint] = nil
                compact()
                return endpoint
            }
        }
        return nil
    }

    private mutating func compact() {
        // Stale entries are dropped once they outnumber the live ones; the entries taken from the
        // front are dropped too, or the array would keep every endpoint ever idle (the soak found
        // it: 6 MB more after 140,000 endpoints, `make soak`).
        guard queue.count > 2 * stamps.count + 16 else { return }
        queue = queue[start...].filter { stamps[$0.endpoint] == $0.stamp }
        start = 0
    }
}

extension RateLimitedClient {
    /// A request to `endpoint` begins: its learner (made on first use from the endpoint's rule,
    /// HTTP-13) counts it as in progress. Returns the learner's id, `nil` when the endpoint does
    /// not learn (no policy, not covered, no rule, or a limit with nothing to learn).
    func beginLearning(_ endpoint: String) async -> UInt64? {
        guard let adaptation, adaptation.policy.covers(endpoint) else { return nil }
        if learners[endpoint] == nil {
            guard let rule = await limiter.rule(for: endpoint) else { return nil }
            if learners[endpoint] == nil {  // not made while this one waited
                guard let learner = makeLearner(endpoint, from: rule.strategy, adaptation) else { return nil }
                learners[endpoint] = learner
                learners[endpoint]?.requests = 1
                // A custom machine may start elsewhere than the rule: its initial limit applies at once.
                if learner.enforced != nil { await enforce(endpoint) }
                return learner.id
            }
        }
        guard var learner = learners[endpoint] else { return nil }  // forgotten meanwhile: not this time
        if learner.requests == 0 { idle.remove(endpoint) }
        learner.requests += 1
        learners[endpoint] = learner
        return learner.id
    }

    /// A request to `endpoint` of learner `id` ended: an endpoint left with none in progress is
    /// idle, and the endpoints idle longest beyond the policy's bound are forgotten (HTTP-13).
    func endLearning(_ endpoint: String, _ id: UInt64) async {
        guard let adaptation, var learner = learners[endpoint], learner.id == id else { return }
        learner.requests -= 1
        learners[endpoint] = learner
        if learner.requests == 0 { idle.insert(endpoint) }
        while idle.count > adaptation.policy.maximumIdleEndpoints, let oldest = idle.removeOldest() {
            await forget(oldest, at: timeline.now())
        }
    }

    /// The machines for `endpoint` from its rule's configuration `rule`, or `nil` when the policy
    /// makes none for it.
    private func makeLearner(_ endpoint: String, from rule: Strategy, _ adaptation: Adaptation<Strategy>)
        -> Learner<Strategy>?
    {
        let now = timeline.now()
        let rate: AdaptiveRate? =
            switch adaptation.policy.rate {
            case .off: nil
            case .standard: adaptation.enforcedRate(rule).flatMap(AdaptiveRate.standard(startingAt:))
            case .custom(let machine): adaptation.enforcedRate(rule) == nil ? nil : machine
            }
        let concurrency: AdaptiveConcurrency? =
            switch adaptation.policy.concurrency {
            case .off: nil
            case .standard: adaptation.enforcedConcurrency(rule).flatMap(AdaptiveConcurrency.standard(startingAt:))
            case .custom(let machine): adaptation.enforcedConcurrency(rule) == nil ? nil : machine
            }
        guard rate != nil || concurrency != nil else { return nil }
        learnersMade += 1
        var learner = Learner<Strategy>(id: learnersMade, rule: rule)
        learner.rate = rate.map { ($0, $0.initialState(at: now)) }
        learner.concurrency = concurrency.map { ($0, $0.initialState(at: now)) }
        learner.enforced = enforcing(learner, adaptation)
        return learner
    }

    /// The configuration `learner`'s key should enforce as its own: the rule's with the learned
    /// limits (ADAPT-15), `nil` when that is the rule's.
    private func enforcing(_ learner: Learner<Strategy>, _ adaptation: Adaptation<Strategy>) -> Strategy? {
        let (rate, concurrency) = learner.learned
        var strategy = learner.rule
        if let rate, let enforced = adaptation.enforcingRate(strategy, rate) { strategy = enforced }
        if let concurrency, let enforced = adaptation.enforcingConcurrency(strategy, concurrency) {
            strategy = enforced
        }
        return strategy == learner.rule ? nil : strategy
    }

    /// Feeds what one attempt got to the endpoint's machines (ADAPT-1), reports a new limit and
    /// has the key enforce it.
    func learn(_ endpoint: String, _ feedback: AdaptiveFeedback, at now: RateLimitInstant) async {
        guard let adaptation, var learner = learners[endpoint] else { return }
        let before = learner.learned
        var change = AdaptiveChange.unchanged
        if var rate = learner.rate, case .limit(_, let answered) = rate.machine.step(&rate.state, feedback, at: now) {
            learner.rate = rate
            change = answered
        }
        if var concurrency = learner.concurrency,
            case .limit(_, let answered) = concurrency.machine.step(&concurrency.state, feedback, at: now)
        {
            learner.concurrency = concurrency
            if change == .unchanged || answered == .decreased { change = answered }
        }
        guard learner.learned != before else {
            learners[endpoint] = learner
            return
        }
        learner.lastChange = change
        let (rate, concurrency) = learner.learned
        emit(
            .limitChanged(
                endpoint: endpoint, LearnedLimit(rate: rate, concurrency: concurrency, change: change), at: now))
        let enforced = enforcing(learner, adaptation)
        let changed = enforced != learner.enforced
        learner.enforced = enforced
        learners[endpoint] = learner
        if changed { await enforce(endpoint) }
    }

    /// Brings `endpoint`'s key to what the client wants of it now: the learned limit as the key's
    /// own configuration, or its rule's (REG-7) when the learned limit is the rule's or the
    /// endpoint learns nothing any more. Asked several times with answers landing out of order,
    /// the last to land makes sure the latest is in force.
    private func enforce(_ endpoint: String) async {
        let wanted = learners[endpoint]?.enforced
        keyWrites[endpoint, default: 0] += 1
        if let wanted {
            _ = await limiter.reconfigure(endpoint, to: wanted)
        } else {
            await limiter.restoreRule(endpoint)
        }
        keyWrites[endpoint, default: 1] -= 1
        guard keyWrites[endpoint] == 0 else { return }
        keyWrites[endpoint] = nil
        if learners[endpoint]?.enforced != wanted { await enforce(endpoint) }
    }

    /// Forgets what the client learned of `endpoint` (HTTP-13): its machines go, its key follows
    /// its rule again, and the change is reported with the rule's limit.
    private func forget(_ endpoint: String, at now: RateLimitInstant) async {
        guard let adaptation, let learner = learners.removeValue(forKey: endpoint) else { return }
        idle.remove(endpoint)
        let rule = LearnedLimit(
            rate: learner.rate == nil ? nil : adaptation.enforcedRate(learner.rule),
            concurrency: learner.concurrency == nil ? nil : adaptation.enforcedConcurrency(learner.rule),
            change: .reset)
        emit(.limitChanged(endpoint: endpoint, rule, at: now))
        if learner.enforced != nil || keyWrites[endpoint] != nil { await enforce(endpoint) }
    }

    /// What the client learned of `endpoint`'s limit (HTTP-13), `nil` when it learns nothing there.
    public func learnedLimit(for endpoint: String) -> LearnedLimit? {
        guard let learner = learners[endpoint] else { return nil }
        let (rate, concurrency) = learner.learned
        return LearnedLimit(rate: rate, concurrency: concurrency, change: learner.lastChange)
    }

    /// Forgets what the client learned of `endpoint`'s limit: its machines start over from the
    /// rule's limit at its next request, and its key follows its rule again (HTTP-13). Reported as
    /// `limitChanged` with the rule's limit and the change `reset`.
    public func forgetLearnedLimit(for endpoint: String) async {
        await forget(endpoint, at: timeline.now())
    }
}
