// The client learns each endpoint's limit from the server (Spec/HTTP.md HTTP-13, AdaptiveLimits.md):
// every response (and every attempt that got none) is fed to the endpoint's adaptive machines, and
// a limit they change is applied to the endpoint's key in the registry as the key's own
// configuration (REG-7), so that queued requests are served under it. What is learned is bounded:
// an endpoint with no request in progress is idle, and beyond the policy's number of idle
// endpoints the one idle longest is forgotten, its key given back to its rule. The machines
// decide (LearningMachine.swift); this file only feeds them and carries out what they answer.

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

extension RateLimitedClient {
    /// A request to `endpoint` begins: its learner (made on first use from the endpoint's rule,
    /// HTTP-13) counts it as in progress. Returns the learner's id, `nil` when the endpoint does
    /// not learn.
    func beginLearning(_ endpoint: String) async -> UInt64? {
        guard let learning, learning.covers(endpoint) else { return nil }
        // Read before the await: a learner made meanwhile is used as it is, the rule unread.
        let rule = learning.isLearning(endpoint) ? nil : await limiter.rule(for: endpoint)?.strategy
        let begun = self.learning?.begin(endpoint, rule: rule, at: timeline.now())
        if begun?.writesKey == true { await writeKey(endpoint) }
        return begun?.id
    }

    /// A request to `endpoint` of learner `id` ended: the endpoints idle longest beyond the
    /// policy's bound are forgotten (HTTP-13).
    func endLearning(_ endpoint: String, _ id: UInt64) async {
        for change in learning?.end(endpoint, learner: id) ?? [] { await carryOut(change, at: timeline.now()) }
    }

    /// Feeds what one attempt got to the endpoint's machines (ADAPT-1), reports a new limit and
    /// has the key enforce it.
    func learn(_ endpoint: String, _ feedback: AdaptiveFeedback, at now: RateLimitInstant) async {
        if let change = learning?.learn(endpoint, feedback, at: now) { await carryOut(change, at: now) }
    }

    /// Reports a change of what the client learned and writes the key when it asks to.
    private func carryOut(_ change: LearningMachine<Strategy>.Change, at now: RateLimitInstant) async {
        if let learned = change.learned { emit(.limitChanged(endpoint: change.endpoint, learned, at: now)) }
        if change.writesKey { await writeKey(change.endpoint) }
    }

    /// Brings `endpoint`'s key to what the machine wants of it (REG-7), then each write the machine
    /// asks for as one lands, until the key enforces what the client wants.
    private func writeKey(_ endpoint: String) async {
        var next = learning?.write(endpoint)
        while let write = next {
            if let configuration = write.configuration {
                _ = await limiter.reconfigure(endpoint, to: configuration)
            } else {
                await limiter.restoreRule(endpoint)
            }
            next = learning?.wrote(write)
        }
    }

    /// What the client learned of `endpoint`'s limit (HTTP-13), `nil` when it learns nothing there.
    public func learnedLimit(for endpoint: String) -> LearnedLimit? { learning?.learnedLimit(for: endpoint) }

    /// Forgets what the client learned of `endpoint`'s limit: its machines start over from the
    /// rule's limit at its next request, and its key follows its rule again (HTTP-13). Reported as
    /// `limitChanged` with the rule's limit and the change `reset`.
    public func forgetLearnedLimit(for endpoint: String) async {
        if let change = learning?.forget(endpoint) { await carryOut(change, at: timeline.now()) }
    }
}
