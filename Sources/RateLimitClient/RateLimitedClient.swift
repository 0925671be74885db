// The rate-limited client (Spec/HTTP.md HTTP-11): a thin shell around an operation that sends one
// request. Per attempt it takes the endpoint's permit from a registry (which rejects or queues as
// the endpoint's rule says), asks the endpoint's server quota (HTTP-9), sends, feeds the response
// back to the server quota (whose waits become throttles on the endpoint's key, so queued requests
// wait them out), and retries as the retry policy decides (HTTP-8). Every decision is the
// registry's, the endpoint machine's (EndpointMachine.swift: quotas, attempts in flight, holds,
// forgetting) or the retry policy's; this file only awaits and sequences them.

import Foundation
@_exported import RateLimitActor
@_exported import RateLimitHTTP
import RateLimitShell

/// What the client reads of a response: its status and its fields.
public protocol ServerResponse: Sendable {
    /// The HTTP status code.
    var status: Int { get }
    /// The response's header fields.
    var fields: HTTPFields { get }
}

/// Why a request of the rate-limited client did not produce a response (HTTP-11).
public enum RateLimitClientError: Error, CustomStringConvertible {
    /// The endpoint's own limit refused the request: its answer (with the exact retry-after, also
    /// while the server's wait holds the endpoint), a full queue, an unknown endpoint or too many.
    case limited(endpoint: String, WaitRejection)
    /// The request waited in the endpoint's queue past its timeout.
    case timedOut(endpoint: String)
    /// The server still refused when the retries ran out: a 429, or a 503 that named a wait
    /// (`retryAfterNanoseconds`, from when that response was received).
    case serverLimited(endpoint: String, status: Int, retryAfterNanoseconds: Int64?)
    /// No response when the retries ran out: the operation's last error.
    case transport(endpoint: String, any Error)
    /// The calling task was cancelled: waiting and retrying stopped at once.
    case cancelled
    /// The endpoint registry was closed.
    case closed

    /// How long until trying again could succeed, when known ("try again in 3 minutes").
    public var retryAfter: Duration? {
        switch self {
        case .limited(_, let reason): reason.retryAfter
        case .serverLimited(_, _, let nanoseconds): nanoseconds.map(Duration.nanoseconds)
        case .timedOut, .transport, .cancelled, .closed: nil
        }
    }

    public var description: String {
        switch self {
        case .limited(let endpoint, let reason): "\(endpoint): refused by the client's limit (\(reason))"
        case .timedOut(let endpoint): "\(endpoint): timed out waiting for the client's limit"
        case .serverLimited(let endpoint, let status, let wait):
            "\(endpoint): the server still refused (\(status))" + (wait.map { ", retry after \($0) ns" } ?? "")
        case .transport(let endpoint, let error): "\(endpoint): no response (\(error))"
        case .cancelled: "cancelled"
        case .closed: "the client's limiter is closed"
        }
    }
}

extension Error {
    /// How long until trying again could succeed, when this is a rate limiter's refusal that says
    /// (``RateLimitClientError``, `RateLimitAcquireError`): so that `error.retryAfter` reads the
    /// same in a `catch` of typed throws and in one where the error is `any Error`, such as inside
    /// a task group.
    public var retryAfter: Duration? {
        switch self {
        case let error as RateLimitClientError: error.retryAfter
        case let error as RateLimitAcquireError: error.retryAfter
        default: nil
        }
    }
}

/// What the client did, in order, with instants on its clock (nanoseconds since it was made).
public enum ClientEvent: Hashable, Sendable {
    /// Attempt `attempt` (1 for the first) of a request was handed to the operation (for
    /// `URLSessionRateLimitedClient`, to `URLSession`, which may still hold it back, for instance
    /// behind its limit of connections per host, before it goes on the wire).
    case sent(endpoint: String, attempt: Int, at: RateLimitInstant)
    /// A response came back.
    case received(endpoint: String, status: Int, at: RateLimitInstant)
    /// An attempt failed without a response.
    case failed(endpoint: String, at: RateLimitInstant)
    /// The server's quota holds the endpoint until `until` (its wait, or its reported quota spent);
    /// nothing is sent to the endpoint before then.
    case serverWait(endpoint: String, until: RateLimitInstant, at: RateLimitInstant)
    /// A retry will go out after `afterNanoseconds` (or later, when the limits say so).
    case retrying(endpoint: String, afterNanoseconds: Int64, at: RateLimitInstant)
    /// The caller's fallback answered instead of the server.
    case fellBack(endpoint: String, at: RateLimitInstant)
    /// The limit the client learned of the endpoint changed (HTTP-13); the registry enforces it
    /// from then on.
    case limitChanged(endpoint: String, LearnedLimit, at: RateLimitInstant)
}

/// Sends requests through per-endpoint limits, respects what the server says, retries with
/// backoff and falls back to a cached value when rate-limited (Spec/HTTP.md HTTP-11).
///
/// The endpoint registry decides, per endpoint key, how many requests go out and whether a refused
/// one is rejected or queued (its rules, REG-5); the server's waits throttle the endpoint's key.
public actor RateLimitedClient<Request: Sendable, Response: ServerResponse, Strategy: RateLimitStrategy, C: Clock>
where C.Duration == Duration {
    /// The limits per endpoint key; the server's waits are applied to it as throttles (REG-4).
    public nonisolated let limiter: ActorRateLimitRegistry<Strategy, C>
    public nonisolated let retryPolicy: RetryPolicy
    private let operation: @Sendable (Request) async throws -> Response
    let timeline: ClockTimeline<C>
    private let wallClock: @Sendable () -> HTTPDate
    /// What the client knows of its endpoints' servers: quotas, attempts in flight, holds on their
    /// keys (HTTP-9, HTTP-12; a pure machine, EndpointMachine.swift).
    var machine: EndpointMachine
    /// What the client learns of its endpoints' limits, when it learns (HTTP-13; a pure machine,
    /// LearningMachine.swift).
    var learning: LearningMachine<Strategy>?
    private var random: SeededGenerator
    private var subscribers: [Int: AsyncStream<ClientEvent>.Continuation] = [:]
    private var nextSubscriber = 0

    /// A client sending with `operation` through `limiter` (whose clock it reads).
    ///
    /// - Parameters:
    ///   - limiter: the registry of limiters by endpoint that every request waits in first.
    ///   - retryPolicy: when and how long to wait before retrying a refused or failed attempt.
    ///   - operation: sends one request and returns the server's response (or throws when none came).
    ///   - serverQuota: the waits after a 429 that names none (HTTP-9), for every endpoint.
    ///   - seed: the backoff jitter's seed (HTTP-7): a seed replays the waits of a sequence.
    ///   - wallClock: the time of day, the reference for HTTP-dates of responses without `Date`.
    public init(
        limiter: ActorRateLimitRegistry<Strategy, C>,
        retryPolicy: RetryPolicy = .standard,
        serverQuota: ServerQuota = .standard,
        seed: UInt64 = .random(in: .min ... .max),
        wallClock: @escaping @Sendable () -> HTTPDate = {
            HTTPDate(secondsSinceEpoch: Int64(Date().timeIntervalSince1970.rounded(.down)))
        },
        operation: @escaping @Sendable (Request) async throws -> Response
    ) {
        self.init(
            limiter: limiter, retryPolicy: retryPolicy, serverQuota: serverQuota, seed: seed, wallClock: wallClock,
            adaptation: nil, operation: operation)
    }

    init(
        limiter: ActorRateLimitRegistry<Strategy, C>, retryPolicy: RetryPolicy, serverQuota: ServerQuota,
        seed: UInt64, wallClock: @escaping @Sendable () -> HTTPDate, adaptation: Adaptation<Strategy>?,
        operation: @escaping @Sendable (Request) async throws -> Response
    ) {
        self.limiter = limiter
        self.retryPolicy = retryPolicy
        self.operation = operation
        self.timeline = limiter.timeline
        self.wallClock = wallClock
        self.machine = EndpointMachine(serverQuota: serverQuota)
        self.random = SeededGenerator(seed: seed)
        self.learning = adaptation.map(LearningMachine.init)
    }

    deinit {
        for continuation in subscribers.values { continuation.finish() }
    }

    /// Sends `request` to `endpoint` (the key of its limit) and returns the server's response
    /// (HTTP-11): a success, another 4xx, or the last 5xx when the retries ran out.
    ///
    /// When the request cannot get a response (the client's limit refused it, the server still
    /// refuses, or no response came), `fallback` is asked for a value with the reason; it returns
    /// `nil` to let the error be thrown. Cancelling the task stops waiting and retrying at once.
    ///
    /// - Throws: ``RateLimitClientError``.
    public func send(
        _ request: Request, to endpoint: String, permits: Int64 = 1, priority: RateLimitPriority = .normal,
        fallback: (@Sendable (RateLimitClientError) async -> Response?)? = nil
    ) async throws(RateLimitClientError) -> Response {
        let learner = learning != nil ? await beginLearning(endpoint) : nil
        let result: Result<Response, RateLimitClientError>
        do {
            result = .success(try await attempts(request, endpoint, permits, priority, learning: learner != nil))
        } catch {
            result = .failure(error)
        }
        if let learner { await endLearning(endpoint, learner) }
        switch result {
        case .success(let response):
            return response
        case .failure(let error):
            switch error {
            case .cancelled, .closed: throw error
            case .limited, .timedOut, .serverLimited, .transport: break
            }
            guard let fallback, let cached = await fallback(error) else { throw error }
            emit(.fellBack(endpoint: endpoint, at: timeline.now()))
            return cached
        }
    }

    /// What the server has told the client about `endpoint` so far (HTTP-9), `nil` when nothing
    /// it said still matters, and once the app resumed the endpoint's key or forgot it (HTTP-12).
    public func serverQuota(for endpoint: String) async -> ServerQuota? {
        await forgetIfLifted(endpoint)
        return machine.quotas[endpoint]
    }

    /// Forgets what the server said about `endpoint` (its waits, its reported quota, its silent
    /// 429s) and lifts the hold the client put on the endpoint's key (HTTP-12). Resuming the key
    /// on ``limiter`` does the same: the client then no longer holds the endpoint for the server.
    public func forgetServerState(for endpoint: String) async {
        if let resume = machine.release(endpoint, at: timeline.now()) { await send(resume) }
    }

    /// A new stream of the client's events from now on, in order.
    public func events() -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream<ClientEvent>.makeStream()
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: Int) { subscribers[id] = nil }

    func emit(_ event: ClientEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    // MARK: The shell

    /// Attempts until a response is delivered, the retries stop, or the task is cancelled (HTTP-8);
    /// when `learning`, each attempt is fed to the endpoint's machines (HTTP-13).
    private func attempts(
        _ request: Request, _ endpoint: String, _ permits: Int64, _ priority: RateLimitPriority, learning: Bool
    ) async throws(RateLimitClientError) -> Response {
        let first = timeline.now()
        var retries = 0
        var previousDelay: Int64?
        while true {
            let taken = try await admit(endpoint, permits, priority, arrival: first)
            // Granted, but cancelled meanwhile: nothing more is sent.
            guard !Task.isCancelled else {
                if taken { await giveBack(endpoint, permits) }
                throw .cancelled
            }
            let attempt = machine.send(endpoint, at: timeline.now())
            emit(.sent(endpoint: endpoint, attempt: retries + 1, at: attempt.sentAt))
            let result: Result<Response, any Error>
            do { result = .success(try await operation(request)) } catch { result = .failure(error) }
            machine.returned(endpoint)  // on every path out: a cancelled failure throws below
            if taken { await giveBack(endpoint, permits) }
            let now = timeline.now()
            var serverWait: Int64?
            let outcome: AttemptOutcome
            switch result {
            case .success(let response):
                outcome = .response(status: response.status)
                let feedback = ServerFeedback(status: response.status, fields: response.fields, receivedAt: wallClock())
                emit(.received(endpoint: endpoint, status: response.status, at: now))
                let received = machine.received(feedback, from: endpoint, to: attempt, at: now)
                serverWait = received.serverWait
                if let throttle = received.hold { await announce(throttle, at: now) }
                if learning {
                    await learn(
                        endpoint,
                        .response(
                            status: Int64(response.status), latencyNanoseconds: now.nanoseconds(since: attempt.sentAt),
                            inFlight: attempt.inFlight, stated: feedback.statedRate), at: now)
                }
            case .failure:
                if Task.isCancelled { throw .cancelled }
                outcome = .networkFailure
                emit(.failed(endpoint: endpoint, at: now))
                if learning { await learn(endpoint, .failure, at: now) }
            }
            machine.forgetIfIdle(endpoint, at: now)
            let decision = retryPolicy.decide(
                outcome, retries: retries, elapsedNanoseconds: now.nanoseconds(since: first),
                serverWaitNanoseconds: serverWait,
                previousDelay: previousDelay, using: &random)
            switch (decision, result) {
            case (.deliver, .success(let response)):
                return response
            case (.stop, .success(let response)):
                // A refusal the server still insists on is an error (the fallback's case); any
                // other last response is the caller's to read.
                guard response.status == 429 || (response.status == 503 && serverWait != nil) else { return response }
                // The wait the client honours, a silent 429's included (HTTP-12).
                throw .serverLimited(
                    endpoint: endpoint, status: response.status,
                    retryAfterNanoseconds: serverWait ?? machine.serverWait(endpoint, at: now))
            case (.stop, .failure(let error)), (.deliver, .failure(let error)):
                throw .transport(endpoint: endpoint, error)
            case (.retry(let wait), _):
                guard !Task.isCancelled else { throw .cancelled }
                retries += 1
                previousDelay = wait
                emit(.retrying(endpoint: endpoint, afterNanoseconds: wait, at: now))
                let until = now.advanced(byNanoseconds: wait) ?? .end
                // A retry keeps its place (HTTP-11): when the endpoint's queue holds it until the
                // server's wait ends anyway, it waits there from now, ordered by its first arrival,
                // rather than asleep outside and then behind every request that came meanwhile.
                if await waitsInQueue(endpoint, until: until, priority) { continue }
                try await sleep(until: until)
            }
        }
    }

    /// Waits until both the endpoint's limit and the server's quota let one attempt go out;
    /// returns whether permits were taken (a critical request or a disabled key takes none).
    private func admit(
        _ endpoint: String, _ permits: Int64, _ priority: RateLimitPriority, arrival: RateLimitInstant
    )
        async throws(RateLimitClientError) -> Bool
    {
        while true {
            guard !Task.isCancelled else { throw .cancelled }
            // The server's wait first, so that no permit is taken only to be wasted: the endpoint
            // is held, and the acquire below waits (or is refused) until it ends.
            await forgetIfLifted(endpoint)
            let now = timeline.now()
            if let wait = machine.serverWait(endpoint, at: now) {
                try await waitOut(
                    endpoint, until: now.advanced(byNanoseconds: wait) ?? .end, bypassing: priority == .critical)
                if priority == .critical { continue }
            }
            let grant: RateLimitGrant
            do {
                grant = try await limiter.acquire(endpoint, permits: permits, priority: priority, arrival: arrival)
            } catch {
                switch error {
                case .rejected(let reason): throw .limited(endpoint: endpoint, reason)
                case .timedOut: throw .timedOut(endpoint: endpoint)
                case .cancelled: throw .cancelled
                case .closed: throw .closed
                }
            }
            let taken = grant.answer != nil
            // The same settled hold before and after asking the registry: a longer hold asked and
            // landed meanwhile is the registry's throttle, not the app's resume.
            let settled = machine.settled(endpoint)
            if taken, machine.liftedBeforeGrant(endpoint, at: timeline.now()), await registryAccepts(endpoint),
                machine.settled(endpoint) == settled, machine.liftedBeforeGrant(endpoint, at: timeline.now())
            {
                machine.forget(endpoint)
            }
            let granted = timeline.now()
            guard let wait = machine.permit(endpoint, at: granted) else { return taken }
            // A response that arrived while this request waited spent the server's quota. Its wait
            // ends at an instant, fixed now: the time giving the permits back takes is not added
            // to it (the hold is the server's wait, no longer, HTTP-12).
            let until = granted.advanced(byNanoseconds: wait) ?? .end
            if taken { await giveBack(endpoint, permits) }
            try await waitOut(endpoint, until: until, bypassing: !taken)
        }
    }

    /// Whether a retry due at `until` can wait for it in `endpoint`'s queue: the client holds the
    /// endpoint at least that long for the server, the rule queues, and the request is not one the
    /// registry lets through anyway (critical).
    private func waitsInQueue(_ endpoint: String, until: RateLimitInstant, _ priority: RateLimitPriority) async -> Bool
    {
        guard priority != .critical, let held = machine.heldUntil(endpoint), held >= until else { return false }
        guard case .queue? = await limiter.rule(for: endpoint)?.overflow else { return false }
        return true
    }

    /// Waits out the server's wait, which ends at `until`: by holding the endpoint (the registry
    /// then queues or refuses the request, like any other), or, for a request the registry lets
    /// through anyway (critical, or a disabled key), by sleeping here.
    private func waitOut(_ endpoint: String, until: RateLimitInstant, bypassing: Bool)
        async throws(RateLimitClientError)
    {
        if bypassing {
            try await sleep(until: until)
        } else {
            await hold(endpoint, until: until, at: timeline.now())
        }
    }

    /// Throttles the endpoint's key until `until` on the registry's timeline, the instant the
    /// server's quota returns (REG-4); a hold only ever grows while it lasts. The hold is recorded
    /// before the registry is asked, so that a grant or an accepting key in the meantime is never
    /// taken for the app's resume; ServerHolds decides what the registry must be asked next when
    /// requests land out of order or the client forgot the endpoint meanwhile.
    private func hold(_ endpoint: String, until requested: RateLimitInstant, at now: RateLimitInstant) async {
        await announce(machine.hold(endpoint, until: requested, at: now), at: now)
    }

    /// Announces a throttle the machine decided (its `serverWait` event) and sends it.
    private func announce(_ throttle: ServerHolds.Sent, at now: RateLimitInstant) async {
        if case .throttle(let until) = throttle.request {
            emit(.serverWait(endpoint: throttle.endpoint, until: until, at: now))
        }
        await send(throttle)
    }

    /// Sends `request` to the registry, then each request ServerHolds asks for as it lands, until
    /// the registry holds the key as the client wants.
    private func send(_ request: ServerHolds.Sent) async {
        var next: ServerHolds.Sent? = request
        while let sent = next {
            switch sent.request {
            case .throttle(let until): await limiter.throttle(sent.endpoint, until: until)
            case .resume: await limiter.resume(sent.endpoint)
            }
            next = machine.landed(sent)
        }
    }

    /// When the app resumed the endpoint's key while the client held it for the server, the app
    /// meant it: the client forgets what the server said, instead of holding the key again
    /// (HTTP-12). The registry answers for its own instant; the client's clock, read after that
    /// answer, shows whether the hold should still have been in force then.
    private func forgetIfLifted(_ endpoint: String) async {
        guard let until = machine.settled(endpoint), until > timeline.now() else { return }
        guard case .accepting? = await limiter.quota(of: endpoint)?.state else { return }
        guard let again = machine.settled(endpoint), again == until, timeline.now() < until else { return }
        machine.forget(endpoint)
    }

    /// Whether the registry decides `endpoint`'s requests by its limit now. A grant that reaches
    /// the client after a hold landed was decided either before the hold landed (the registry is
    /// still throttled: the hold stands) or after the app resumed the key (accepting).
    private func registryAccepts(_ endpoint: String) async -> Bool {
        guard case .accepting? = await limiter.quota(of: endpoint)?.state else { return false }
        return true
    }

    /// Gives back an attempt's permits: a concurrency limit frees them; limits that hold no
    /// permits answer that release is not supported and are unchanged (CORE-11).
    private func giveBack(_ endpoint: String, _ permits: Int64) async {
        _ = await limiter.release(endpoint, permits: permits)
    }

    /// Sleeps on the registry's clock until `instant` on its timeline; cancellation ends it at once.
    private func sleep(until instant: RateLimitInstant) async throws(RateLimitClientError) {
        do {
            try await timeline.clock.sleep(until: timeline.reading(of: instant), tolerance: nil)
        } catch {
            throw .cancelled
        }
    }
}

extension RateLimitedClient where Strategy: AdaptableStrategy {
    /// A client sending with `operation` through `limiter` that learns its endpoints' limits from
    /// the server as `adaptive` says (HTTP-13): each endpoint's key then enforces the learned limit.
    ///
    /// - Parameters:
    ///   - limiter: the registry of limiters by endpoint; its rules' limits are where learning starts.
    ///   - adaptive: what to learn, and for which endpoints (`.standard`: the rate and the
    ///     concurrency of every endpoint; `.off`: fixed limits, as the other initializer).
    ///   - retryPolicy: when and how long to wait before retrying a refused or failed attempt.
    ///   - serverQuota: the waits after a 429 that names none (HTTP-9), for every endpoint.
    ///   - seed: the backoff jitter's seed (HTTP-7): a seed replays the waits of a sequence.
    ///   - wallClock: the time of day, the reference for HTTP-dates of responses without `Date`.
    ///   - operation: sends one request and returns the server's response (or throws when none came).
    public init(
        limiter: ActorRateLimitRegistry<Strategy, C>,
        adaptive: AdaptivePolicy,
        retryPolicy: RetryPolicy = .standard,
        serverQuota: ServerQuota = .standard,
        seed: UInt64 = .random(in: .min ... .max),
        wallClock: @escaping @Sendable () -> HTTPDate = {
            HTTPDate(secondsSinceEpoch: Int64(Date().timeIntervalSince1970.rounded(.down)))
        },
        operation: @escaping @Sendable (Request) async throws -> Response
    ) {
        self.init(
            limiter: limiter, retryPolicy: retryPolicy, serverQuota: serverQuota, seed: seed, wallClock: wallClock,
            adaptation: adaptive == .off ? nil : Adaptation(adaptive), operation: operation)
    }
}
