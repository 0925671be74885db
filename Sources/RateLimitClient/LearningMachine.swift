import RateLimitCore

// What the client learns of its endpoints' limits (Spec/HTTP.md HTTP-13, AdaptiveLimits.md), as a
// pure machine: each learning endpoint's adaptive machines, the configuration its key should
// enforce, its requests in progress, the endpoints idle (the one idle longest forgotten beyond the
// policy's bound) and the writes of keys on their way to the registry. The actor awaits the
// registry and carries out what this answers (AdaptiveLearning.swift).

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

/// What the client learns of its endpoints' limits, decided without an actor (HTTP-13).
struct LearningMachine<Strategy: RateLimitStrategy>: Sendable {
    /// What a learner's change asks of the actor: an event to report, and whether the endpoint's
    /// key must be brought to what the machine wants (``write(_:)``).
    struct Change: Sendable {
        let endpoint: String
        /// The limit to report as `limitChanged`, if it changed.
        let learned: LearnedLimit?
        /// Whether the key's configuration must be written.
        let writesKey: Bool
    }

    /// A write of an endpoint's key to send to the registry: the configuration it should enforce
    /// as its own, `nil` for its rule's (REG-7). Report it with ``wrote(_:)`` once it has landed.
    struct KeyWrite: Sendable {
        let endpoint: String
        let configuration: Strategy?
    }

    let adaptation: Adaptation<Strategy>
    /// Each learning endpoint's machines.
    private(set) var learners: [String: Learner<Strategy>] = [:]
    /// The learning endpoints with no request in progress, the one idle longest first.
    private(set) var idle = IdleEndpoints()
    /// Learners made so far (each one's id).
    private(set) var learnersMade: UInt64 = 0
    /// Writes of each endpoint's key sent to the registry that have not landed yet.
    private(set) var keyWrites: [String: Int] = [:]

    init(_ adaptation: Adaptation<Strategy>) { self.adaptation = adaptation }

    /// Whether requests to `endpoint` learn under the policy.
    func covers(_ endpoint: String) -> Bool { adaptation.policy.covers(endpoint) }

    /// Whether `endpoint` has a learner now (else ``begin(_:rule:at:)`` needs its rule).
    func isLearning(_ endpoint: String) -> Bool { learners[endpoint] != nil }

    /// What the client learned of `endpoint`'s limit, `nil` when it learns nothing there.
    func learnedLimit(for endpoint: String) -> LearnedLimit? {
        guard let learner = learners[endpoint] else { return nil }
        let (rate, concurrency) = learner.learned
        return LearnedLimit(rate: rate, concurrency: concurrency, change: learner.lastChange)
    }

    // MARK: Requests

    /// A request to `endpoint` begins at `now`: its learner counts it in progress, made first from
    /// `rule` (the configuration of the endpoint's rule) when there is none. Returns the learner's
    /// id, `nil` when the endpoint does not learn (no learner and no rule, or a limit with nothing
    /// to learn), and whether the key must be written (a custom machine may start elsewhere than
    /// the rule: its initial limit applies at once).
    mutating func begin(_ endpoint: String, rule: Strategy?, at now: RateLimitInstant) -> (
        id: UInt64?, writesKey: Bool
    ) {
        if var learner = learners[endpoint] {
            if learner.requests == 0 { idle.remove(endpoint) }
            learner.requests += 1
            learners[endpoint] = learner
            return (learner.id, false)
        }
        guard let rule, var learner = makeLearner(from: rule, at: now) else { return (nil, false) }
        learner.requests = 1
        learners[endpoint] = learner
        return (learner.id, learner.enforced != nil)
    }

    /// A request to `endpoint` of learner `id` ended: an endpoint left with none in progress is
    /// idle, and the endpoints idle longest beyond the policy's bound are forgotten (HTTP-13): the
    /// changes to carry out, in order.
    mutating func end(_ endpoint: String, learner id: UInt64) -> [Change] {
        guard var learner = learners[endpoint], learner.id == id else { return [] }
        learner.requests -= 1
        learners[endpoint] = learner
        if learner.requests == 0 { idle.insert(endpoint) }
        var forgotten: [Change] = []
        while idle.count > adaptation.policy.maximumIdleEndpoints, let oldest = idle.removeOldest() {
            if let change = forget(oldest) { forgotten.append(change) }
        }
        return forgotten
    }

    /// Feeds what one attempt got to `endpoint`'s machines at `now` (ADAPT-1): the change to
    /// report and carry out, `nil` when the learned limit stayed.
    mutating func learn(_ endpoint: String, _ feedback: AdaptiveFeedback, at now: RateLimitInstant) -> Change? {
        guard var learner = learners[endpoint] else { return nil }
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
            return nil
        }
        learner.lastChange = change
        let (rate, concurrency) = learner.learned
        let enforced = enforcing(learner)
        let writesKey = enforced != learner.enforced
        learner.enforced = enforced
        learners[endpoint] = learner
        return Change(
            endpoint: endpoint, learned: LearnedLimit(rate: rate, concurrency: concurrency, change: change),
            writesKey: writesKey)
    }

    /// Forgets what the client learned of `endpoint` (HTTP-13): its machines go, its key follows
    /// its rule again, and the change is reported with the rule's limit. `nil` when it learned nothing.
    mutating func forget(_ endpoint: String) -> Change? {
        guard let learner = learners.removeValue(forKey: endpoint) else { return nil }
        idle.remove(endpoint)
        let rule = LearnedLimit(
            rate: learner.rate == nil ? nil : adaptation.enforcedRate(learner.rule),
            concurrency: learner.concurrency == nil ? nil : adaptation.enforcedConcurrency(learner.rule),
            change: .reset)
        return Change(
            endpoint: endpoint, learned: rule, writesKey: learner.enforced != nil || keyWrites[endpoint] != nil)
    }

    // MARK: Writing keys

    /// The write that brings `endpoint`'s key to what the client wants of it now: the learned
    /// limit as the key's own configuration, or its rule's when the learned limit is the rule's
    /// or the endpoint learns nothing any more.
    mutating func write(_ endpoint: String) -> KeyWrite {
        keyWrites[endpoint, default: 0] += 1
        return KeyWrite(endpoint: endpoint, configuration: learners[endpoint]?.enforced)
    }

    /// `written` landed in the registry. When it was the last of its endpoint on its way, the next
    /// write to send if the client wants something else of the key now (writes landing out of
    /// order: the last to land makes sure the latest is in force); `nil` when nothing more is needed.
    mutating func wrote(_ written: KeyWrite) -> KeyWrite? {
        keyWrites[written.endpoint, default: 1] -= 1
        guard keyWrites[written.endpoint] == 0 else { return nil }
        keyWrites[written.endpoint] = nil
        guard learners[written.endpoint]?.enforced != written.configuration else { return nil }
        return write(written.endpoint)
    }

    // MARK: Learners

    /// The machines for an endpoint whose rule's configuration is `rule`, or `nil` when the policy
    /// makes none for it.
    private mutating func makeLearner(from rule: Strategy, at now: RateLimitInstant) -> Learner<Strategy>? {
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
        learner.enforced = enforcing(learner)
        return learner
    }

    /// The configuration `learner`'s key should enforce as its own: the rule's with the learned
    /// limits (ADAPT-15), `nil` when that is the rule's.
    private func enforcing(_ learner: Learner<Strategy>) -> Strategy? {
        let (rate, concurrency) = learner.learned
        var strategy = learner.rule
        if let rate, let enforced = adaptation.enforcingRate(strategy, rate) { strategy = enforced }
        if let concurrency, let enforced = adaptation.enforcingConcurrency(strategy, concurrency) {
            strategy = enforced
        }
        return strategy == learner.rule ? nil : strategy
    }
}
