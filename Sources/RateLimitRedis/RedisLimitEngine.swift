// What both shared limiters hold (Spec/SharedLimits.md): the key, the script, the app's runner,
// the configuration in force, and the failure policy with its local fallback limiter.
//
// Each event is one script call (SHARED-1): the arguments are built under the lock, the call runs
// outside it, bounded by the timeout (SHARED-10), and its reply becomes the limiter's answer. When
// the call fails, the policy decides (SHARED-11): fail closed throws the typed error; a fallback
// answers acquires (and releases of what it granted) from a local limiter of its own
// configuration, without calling the store again until `retryAfter` has passed on the limiter's
// clock. Answers that need no store are given here, from the pure model, exactly as an in-process
// limiter gives them: negative permits (CORE-9), a release to a strategy without one (CORE-11).

import Foundation

/// An event as a script operation (ARGV[1] and the arguments after the configuration).
enum ScriptOperation<Strategy: RateLimitStrategy>: Sendable {
    /// An acquire; `lease` is the concurrency limiter's lease duration in nanoseconds (1 ... 2^63).
    case acquire(Int64, lease: String?)
    /// A release; `lease` names one (SHARED-7), "" none.
    case release(Int64, lease: String?)
    case reset
    case reconfigure(Strategy)

    /// The same event for the pure model (local answers and the fallback).
    var event: RateLimitEvent<Strategy> {
        switch self {
        case .acquire(let permits, _): .acquire(permits)
        case .release(let permits, _): .release(permits)
        case .reset: .reset
        case .reconfigure(let strategy): .reconfigure(strategy)
        }
    }

    /// Whether the local fallback may answer it: acquires only. A release gives back what the
    /// store granted (the fallback's own grants are released to it, ``RedisLimitEngine/releaseLocally(_:)``),
    /// and a reset or a reconfigure changes the shared state: only the store can apply them.
    var fallsBack: Bool {
        switch self {
        case .acquire: true
        case .release, .reset, .reconfigure: false
        }
    }
}

/// A script's answer: the result, and what a concurrency limiter's acquire adds.
struct ScriptAnswer: Hashable, Sendable {
    var result: RateLimitResult
    /// The new lease's handle (SHARED-8).
    var lease: String?
    /// Whether the local fallback gave the answer.
    var isLocal = false
}

/// How a limiter reads `now` (SHARED-2).
public enum RedisClockSource: Sendable {
    /// The server's clock (`TIME`): one clock for every client of the server, and keys that expire
    /// once idle (SHARED-4). The default.
    case server
    /// Instants the app gives, on one timeline that every user of the key shares: a test's clock,
    /// or one process. Keys then never expire by themselves (SHARED-5).
    case caller(@Sendable () -> RateLimitInstant)
}

/// What a shared limiter answers while the store cannot be reached (SHARED-11).
public struct RedisFailurePolicy<Strategy: RateLimitStrategy>: Sendable {
    enum Kind: Sendable {
        case failClosed
        case fallback(Strategy, retryAfter: Duration)
    }

    let kind: Kind

    /// Every call the store does not answer throws its ``RedisLimitError``: the caller refuses the
    /// work (or decides otherwise). The next call tries the store again.
    public static var failClosed: Self { Self(kind: .failClosed) }

    /// Acquires the store does not answer are decided by a local limiter of configuration
    /// `strategy` (this process's share of the limit, say the limit divided by the number of
    /// processes), created at the first failure and kept across outages; calls go to the store
    /// again once `retryAfter` has passed since the last failure. Resets and reconfigures still
    /// throw: they change the shared state.
    public static func fallback(_ strategy: Strategy, retryAfter: Duration = .seconds(1)) -> Self {
        Self(kind: .fallback(strategy, retryAfter: retryAfter))
    }
}

/// The shared limiters' common part.
// @unchecked: the `let`s are immutable and Sendable (the runner and the clock source are Sendable
// by their protocols); every `var` is read and written only while `lock` is held (each method
// takes it around its accesses and releases it before awaiting).
final class RedisLimitEngine<Strategy: RateLimitStrategy, C: Clock>: @unchecked Sendable where C.Duration == Duration {
    let key: String
    let script: RedisScript
    let runner: any RedisScriptRunner
    let clockSource: RedisClockSource
    let timeout: Duration
    let clock: C
    let policy: RedisFailurePolicy<Strategy>
    /// The local timeline's origin (the fallback's instants count from here).
    private let origin: C.Instant
    /// Expires calls that outlive the timeout.
    private let deadlines: DeadlineWatch<C>

    private let lock = NSLock()
    private var current: Strategy
    private var configurationArguments: [String]
    private var fallback: RateLimiter<Strategy>?
    private var failedAt: C.Instant?
    private var failure: RedisLimitError?
    /// Set once the server showed that it cannot run the library (no Functions before Redis 7.0,
    /// `NOPERM`, a `FUNCTION LOAD` refused): the calls are scripts from then on.
    private var scriptsOnly = false

    init(
        _ strategy: Strategy, script: RedisScript, key: String, runner: any RedisScriptRunner,
        clockSource: RedisClockSource, timeout: Duration, policy: RedisFailurePolicy<Strategy>, clock: C
    ) {
        self.key = key
        self.script = script
        self.runner = runner
        self.clockSource = clockSource
        self.timeout = timeout
        self.policy = policy
        self.clock = clock
        self.origin = clock.now
        self.deadlines = DeadlineWatch(clock: clock, timeout: timeout)
        self.current = strategy
        self.configurationArguments = strategy.scriptArguments
    }

    var strategy: Strategy { lock.withLock { current } }

    var lastFailure: RedisLimitError? { lock.withLock { failure } }

    /// Whether the next call goes through the Functions library (``RedisFunctionRunner``).
    var callsFunctions: Bool { lock.withLock { !scriptsOnly } && runner is any RedisFunctionRunner }

    /// Applies `operation`: locally when the model answers without the store or the fallback is in
    /// force, otherwise by the script, then by the policy when the store does not answer.
    func apply(_ operation: ScriptOperation<Strategy>) async throws(RedisLimitError) -> ScriptAnswer {
        let (strategy, configuration, local) = lock.withLock { () -> (Strategy, [String], Bool) in
            var local = false
            if operation.fallsBack, case .fallback(_, let retryAfter) = policy.kind, let failedAt {
                local = clock.now < failedAt.advanced(by: retryAfter)
            }
            return (current, configurationArguments, local)
        }
        if let answer = Self.answerWithoutStore(operation, strategy: strategy) { return answer }
        if local, let answer = fallbackAnswer(operation) { return answer }
        do throws(RedisLimitError) {
            let answer = try await call(operation, configuration: configuration)
            lock.withLock {
                failedAt = nil
                failure = nil
                if case .reconfigure(let replacement) = operation, case .allowed = answer.result {
                    current = replacement
                    configurationArguments = replacement.scriptArguments
                }
            }
            return answer
        } catch {
            if case .cancelled = error { throw error }
            lock.withLock {
                failure = error
                if case .fallback = policy.kind, operation.fallsBack { failedAt = clock.now }
            }
            if operation.fallsBack, let answer = fallbackAnswer(operation) { return answer }
            throw error
        }
    }

    /// The answers the model gives before any state is read, exactly as an in-process limiter's:
    /// negative permits (CORE-9) and a release to a strategy that holds no permits (CORE-11).
    static func answerWithoutStore(_ operation: ScriptOperation<Strategy>, strategy: Strategy) -> ScriptAnswer? {
        // The scripts implement the Spec's design only: a fixed window aligned otherwise (FW-13)
        // is refused by name at every call, rather than run on the origin grid.
        var asked = strategy
        if case .reconfigure(let replacement) = operation { asked = replacement }
        for candidate in [strategy, asked] {
            // A composite's concurrency limit would hold leases no call of RedisRateLimiter names
            // (SHARED-6): refused by name, as the leaky bucket queue is (COMP-2).
            if let composite = candidate as? CompositeLimit,
                let index = composite.limits.firstIndex(where: { $0.kind == ConcurrencyLimiter.identifier })
            {
                return ScriptAnswer(
                    result: .invalid(
                        RateLimitInputError(
                            field: "limits[\(index)]", value: nil, problem: .notSupported,
                            reason:
                                "a shared composite's limits are the time-based strategies; use RedisConcurrencyLimiter"
                        )))
            }
            let windows: [FixedWindow] =
                if let composite = candidate as? CompositeLimit {
                    composite.limits.compactMap { if case .fixedWindow(let window) = $0 { window } else { nil } }
                } else {
                    (candidate as? FixedWindow).map { [$0] } ?? []
                }
            if let window = windows.first(where: { $0.alignment != .origin }) {
                return ScriptAnswer(
                    result: .invalid(
                        RateLimitInputError(
                            field: "alignment", value: nil, problem: .notSupported,
                            reason:
                                "the Redis script aligns windows to the origin only, not to \(window.alignment.rawValue)"
                        )))
            }
        }
        let needsNoState: Bool
        switch operation {
        case .acquire(let permits, _): needsNoState = permits < 0
        case .release(let permits, _): needsNoState = permits < 0 || Strategy.self != ConcurrencyLimiter.self
        case .reset, .reconfigure: needsNoState = false
        }
        guard needsNoState else { return nil }
        var scratch = strategy.initialState(at: .origin)
        return ScriptAnswer(result: strategy.step(&scratch, operation.event, at: .origin))
    }

    /// Gives back to the local fallback `permits` it granted (a concurrency limiter's local lease).
    func releaseLocally(_ permits: Int64) -> RateLimitResult {
        lock.withLock {
            let now = Self.instant(offset: origin.duration(to: clock.now))
            guard fallback != nil else {
                return .invalid(RateLimitInputError(field: "permits", value: permits, problem: .exceedsMaximum(0)))
            }
            return fallback!.step(.release(permits), at: now)
        }
    }

    /// The local fallback's answer, or nil when the policy has none.
    private func fallbackAnswer(_ operation: ScriptOperation<Strategy>) -> ScriptAnswer? {
        guard case .fallback(let local, _) = policy.kind else { return nil }
        return lock.withLock {
            let now = Self.instant(offset: origin.duration(to: clock.now))
            if fallback == nil { fallback = RateLimiter(local, at: now) }
            return ScriptAnswer(result: fallback!.step(operation.event, at: now), isLocal: true)
        }
    }

    /// One script call within the timeout, the reply parsed: FCALL through a runner that has it
    /// (loading the library when the server does not have it), until the server shows it cannot run
    /// Functions; otherwise EVALSHA, then EVAL when the server does not know the script.
    private func call(_ operation: ScriptOperation<Strategy>, configuration: [String]) async throws(RedisLimitError)
        -> ScriptAnswer
    {
        var arguments: [String]
        let now: String
        switch clockSource {
        case .server: now = ""
        case .caller(let read): now = String(read().nanoseconds)
        }
        switch operation {
        case .acquire(let permits, let lease):
            arguments = ["acquire", now] + configuration + [String(permits)]
            if let lease { arguments.append(lease) }
        case .release(let permits, let lease):
            arguments = ["release", now] + configuration + [String(permits), lease ?? ""]
        case .reset:
            arguments = ["reset", now] + configuration
        case .reconfigure(let replacement):
            arguments = ["reconfigure", now] + configuration + replacement.scriptArguments
        }
        let (runner, script, keys, sent) = (self.runner, self.script, strategy.scriptKeys(key), arguments)
        let functions = lock.withLock { scriptsOnly } ? nil : runner as? any RedisFunctionRunner
        let reply = try await firstOutcome(within: timeout, watch: deadlines) { () async throws(RedisLimitError) in
            do {
                if let functions {
                    if let reply = try await Self.callFunction(functions, script, keys: keys, arguments: sent) {
                        return reply
                    }
                    self.lock.withLock { self.scriptsOnly = true }
                }
                let first = try await runner.evalSHA(script.sha1, keys: keys, arguments: sent)
                guard first.isNoScript else { return first }
                return try await runner.eval(script.source, keys: keys, arguments: sent)
            } catch {
                throw .connectionFailed(String(describing: error))
            }
        }
        switch reply {
        case .values(let values): return try Self.answer(values, to: operation)
        case .error(let message): throw .serverError(message)
        }
    }

    /// FCALL of the script's function, and when the server does not have the library, FUNCTION
    /// LOAD and FCALL again (a library another client loaded meanwhile is as good). Nil when the
    /// server cannot run it: no such command, no permission, or the library's code refused. Any
    /// other error of the load (out of memory, a read-only replica) is the call's answer, and the
    /// next call tries again.
    private static func callFunction(
        _ runner: any RedisFunctionRunner, _ script: RedisScript, keys: [String], arguments: [String]
    ) async throws -> RedisScriptReply? {
        let first = try await runner.fcall(script.function, keys: keys, arguments: arguments)
        if first.isCommandUnavailable { return nil }
        guard first.isFunctionNotFound else { return first }
        let loaded = try await runner.functionLoad(RedisScript.library)
        if case .error = loaded, !loaded.isLibraryLoaded {
            return loaded.isCommandUnavailable || loaded.isLibraryRefused ? nil : loaded
        }
        return try await runner.fcall(script.function, keys: keys, arguments: arguments)
    }

    /// A script's reply (a flat array of names and values, Sources/RateLimitRedis/Scripts/README.md) as
    /// the result the in-process limiters give.
    static func answer(_ values: [String], to operation: ScriptOperation<Strategy>) throws(RedisLimitError)
        -> ScriptAnswer
    {
        var fields: [String: String] = [:]
        var index = 0
        while index + 1 < values.count {
            fields[values[index]] = values[index + 1]
            index += 2
        }
        let unexpected = RedisLimitError.unexpectedReply("\(values)")
        func number(_ name: String) throws(RedisLimitError) -> Int64 {
            guard let text = fields[name], let value = Int64(text) else { throw unexpected }
            return value
        }
        guard values.count % 2 == 0, let kind = fields["kind"] else { throw unexpected }
        let result: RateLimitResult
        switch kind {
        case "allowed": result = .allowed(remaining: try number("remaining"))
        case "rejected": result = .rejected(retryAfterNanoseconds: try number("retryAfterNanoseconds"))
        case "rejectedUntilRelease": result = .rejectedUntilRelease(shortfall: try number("shortfall"))
        case "neverAllowed": result = .neverAllowed
        case "invalid":
            guard let field = fields["field"], let problem = fields["problem"] else { throw unexpected }
            result = .invalid(try inputError(field: field, problem: problem, maximum: fields["maximum"], operation))
        default: throw unexpected
        }
        return ScriptAnswer(result: result, lease: fields["lease"])
    }

    /// The error an in-process limiter gives for the invalid event the script named. The one a
    /// script finds from the state is a release above the permits held (CL-8, SHARED-7): the
    /// in-process concurrency limiter's answer when `maximum` permits are in flight.
    private static func inputError(
        field: String, problem: String, maximum: String?, _ operation: ScriptOperation<Strategy>
    ) throws(RedisLimitError) -> RateLimitInputError {
        let unexpected = RedisLimitError.unexpectedReply("invalid \(field) \(problem) \(maximum ?? "")")
        switch (problem, operation) {
        case ("exceedsMaximum", .release(let permits, _)):
            guard field == "permits", let text = maximum, let held = Int64(text) else { throw unexpected }
            // The concurrency limiter's own answer: a limiter of `held` permits with all of them
            // in flight, asked to release more.
            if let limiter = try? ConcurrencyLimiter(limit: max(held, 1)) {
                var state = limiter.initialState(at: .origin)
                _ = limiter.step(&state, .acquire(held), at: .origin)
                if case .invalid(let error) = limiter.step(&state, .release(permits), at: .origin) { return error }
            }
            throw unexpected
        case ("mustBePositive", _): return RateLimitInputError(field: field, value: nil, problem: .mustBePositive)
        case ("mustNotBeNegative", _): return RateLimitInputError(field: field, value: nil, problem: .mustNotBeNegative)
        case ("exceedsMaximum", _):
            guard let text = maximum, let value = Int64(text) else { throw unexpected }
            return RateLimitInputError(field: field, value: nil, problem: .exceedsMaximum(value))
        case ("notSupported", _): return RateLimitInputError(field: field, value: nil, problem: .notSupported)
        default: throw unexpected
        }
    }

    /// The local timeline instant `offset` after the origin: whole nanoseconds, the origin for a
    /// clock that went back, the end of the timeline past `Int64.max` ns.
    static func instant(offset: Duration) -> RateLimitInstant {
        guard offset > .zero else { return .origin }
        guard offset < .nanoseconds(Int64.max) else { return .end }
        let (seconds, attoseconds) = offset.components
        return (try? RateLimitInstant(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)) ?? .end
    }
}
