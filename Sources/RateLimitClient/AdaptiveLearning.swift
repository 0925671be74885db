// The client learns each endpoint's limit from the server (Spec/HTTP.md HTTP-13, AdaptiveLimits.md):
// every response (and every attempt that got none) is fed to the endpoint's adaptive machines, and
// a limit they change is applied to the endpoint's key in the registry as the key's own
// configuration (REG-7), so that queued requests are served under it. The machines decide; this
// file only feeds them and applies what they answer.

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

    /// A policy learning `rate` and `concurrency` for the endpoints `endpoints` matches.
    public init(rate: Machine<AdaptiveRate>, concurrency: Machine<AdaptiveConcurrency>, endpoints: KeyPattern = .anyKey)
    {
        self.rate = rate
        self.concurrency = concurrency
        self.endpoints = endpoints
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
    /// What the response that changed it did.
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

/// One endpoint's machines and the limit last applied to its key.
struct Learner<Strategy: RateLimitStrategy>: Sendable {
    var rate: (machine: AdaptiveRate, state: AdaptiveRate.State)?
    var concurrency: (machine: AdaptiveConcurrency, state: AdaptiveConcurrency.State)?
    /// The endpoint's limit as the client last asked the registry to enforce it.
    var strategy: Strategy
    /// Reconfigurations asked of the registry that have not landed yet.
    var pending = 0
    /// What the last feedback that changed the learned limit did.
    var lastChange = AdaptiveChange.unchanged

    var learned: (rate: AdaptiveRate.Limit?, concurrency: Int64?) {
        (rate.map { $0.machine.limit(of: $0.state) }, concurrency.map { $0.machine.limit(of: $0.state) })
    }
}

extension RateLimitedClient {
    /// The endpoint's learner, made on first use from its rule (HTTP-13); `nil` when the endpoint
    /// does not learn (no policy, not covered, no rule, or a limit with nothing to learn).
    func learner(for endpoint: String) async -> Learner<Strategy>? {
        guard let adaptation, adaptation.policy.covers(endpoint) else { return nil }
        if let learner = learners[endpoint] { return learner }
        guard let rule = await limiter.rule(for: endpoint) else { return nil }
        if let learner = learners[endpoint] { return learner }  // made while this one waited
        let now = timeline.now()
        var learner = Learner<Strategy>(strategy: rule.strategy)
        let rate: AdaptiveRate? =
            switch adaptation.policy.rate {
            case .off: nil
            case .standard: adaptation.enforcedRate(rule.strategy).flatMap(AdaptiveRate.standard(startingAt:))
            case .custom(let machine): adaptation.enforcedRate(rule.strategy) == nil ? nil : machine
            }
        let concurrency: AdaptiveConcurrency? =
            switch adaptation.policy.concurrency {
            case .off: nil
            case .standard:
                adaptation.enforcedConcurrency(rule.strategy).flatMap(AdaptiveConcurrency.standard(startingAt:))
            case .custom(let machine): adaptation.enforcedConcurrency(rule.strategy) == nil ? nil : machine
            }
        learner.rate = rate.map { ($0, $0.initialState(at: now)) }
        learner.concurrency = concurrency.map { ($0, $0.initialState(at: now)) }
        guard learner.rate != nil || learner.concurrency != nil else { return nil }
        learners[endpoint] = learner
        // A custom machine may start elsewhere than the rule: its initial limit applies at once.
        await apply(endpoint, change: .reset, at: now, reporting: false)
        return learners[endpoint]
    }

    /// Feeds what one attempt got to the endpoint's machines (ADAPT-1) and applies a new limit.
    func learn(_ endpoint: String, _ feedback: AdaptiveFeedback, at now: RateLimitInstant) async {
        guard var learner = learners[endpoint] else { return }
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
        learners[endpoint] = learner
        await apply(endpoint, change: change, at: now, reporting: true)
    }

    /// Asks the registry to enforce the endpoint's learned limit as its key's own configuration
    /// (REG-7; CORE-13 keeps its tokens or what is in flight) and reports the change. Asked
    /// out of order, the last to land puts the latest limit in force.
    private func apply(_ endpoint: String, change: AdaptiveChange, at now: RateLimitInstant, reporting: Bool) async {
        guard let adaptation, var learner = learners[endpoint] else { return }
        let (rate, concurrency) = learner.learned
        var strategy = learner.strategy
        if let rate, let enforced = adaptation.enforcingRate(strategy, rate) { strategy = enforced }
        if let concurrency, let enforced = adaptation.enforcingConcurrency(strategy, concurrency) {
            strategy = enforced
        }
        if reporting {
            emit(
                .limitChanged(
                    endpoint: endpoint, LearnedLimit(rate: rate, concurrency: concurrency, change: change), at: now))
        }
        guard strategy != learner.strategy else { return }
        learner.strategy = strategy
        learner.pending += 1
        learners[endpoint] = learner
        _ = await limiter.reconfigure(endpoint, to: strategy)
        learners[endpoint]?.pending -= 1
        guard let latest = learners[endpoint], latest.pending == 0, latest.strategy != strategy else { return }
        _ = await limiter.reconfigure(endpoint, to: latest.strategy)
    }

    /// What the client learned of `endpoint`'s limit (HTTP-13), `nil` when it learns nothing there.
    public func learnedLimit(for endpoint: String) -> LearnedLimit? {
        guard let learner = learners[endpoint] else { return nil }
        let (rate, concurrency) = learner.learned
        return LearnedLimit(rate: rate, concurrency: concurrency, change: learner.lastChange)
    }

    /// Forgets what the client learned of `endpoint`'s limit: its machines start over from the
    /// rule's limit, which the key enforces again (HTTP-13).
    public func forgetLearnedLimit(for endpoint: String) async {
        guard let learner = learners[endpoint] else { return }
        learners[endpoint] = nil
        if let rule = await limiter.rule(for: endpoint), learner.strategy != rule.strategy {
            _ = await limiter.reconfigure(endpoint, to: rule.strategy)
        }
    }
}
