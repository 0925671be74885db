// The words of a request's life in a wait queue or a registry (Spec/WaitQueue.md WQ-2 ... WQ-4):
// its priority and ticket, its one outcome, and what an adapter's `acquire` returns or throws.

/// How urgent a request is. Higher priorities are served first; `critical` never waits (WQ-4).
public enum RateLimitPriority: Int, Comparable, CaseIterable, Hashable, Sendable {
    case low, normal, high, critical

    public static func < (lhs: RateLimitPriority, rhs: RateLimitPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The identity of one request in a wait queue.
public struct WaitTicket: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    @usableFromInline init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: WaitTicket, rhs: WaitTicket) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
    /// No request: tickets count from 1. A sharded shell's operation answers it when it must be
    /// retried after work on every shard (REG-13).
    package static let unissued = WaitTicket(rawValue: 0)
}

/// Why a request was refused without being served (WQ-2, WQ-4).
public enum WaitRejection: Hashable, Sendable {
    /// `tryAcquire` only: the strategy refused; with no other event the same request is admitted
    /// `retryAfterNanoseconds` later (CORE-6).
    case limited(retryAfterNanoseconds: Int64)
    /// `tryAcquire` only: the strategy refused until `shortfall` more permits are released
    /// (concurrency limiter); time alone does not help.
    case untilRelease(shortfall: Int64)
    /// `tryAcquire` only: waiters of the same or a higher priority are ahead.
    case waitersAhead
    /// The permits already waiting plus this request's exceed the queue limit.
    case queueFull
    /// No instant on the timeline admits it (CORE-7): do not retry the same request.
    case neverAllowed
    /// Malformed (CORE-9, CORE-11). Boxed, as ``RateLimitResult/invalid(_:)`` is: it keeps
    /// outcomes small enough to travel in registers.
    indirect case invalid(RateLimitInputError)
    /// Registry only: no rule matches the key and there is no default rule (REG-2).
    case unknownKey
    /// Registry only: the key is new, the registry holds its maximum of keys and none is idle (REG-8).
    case tooManyKeys

    /// The strategy's exact retry-after, when it refused with one (a throttle's included).
    public var retryAfter: Duration? {
        if case .limited(let nanoseconds) = self { return .nanoseconds(nanoseconds) }
        return nil
    }
}

/// The one outcome of a request (WQ-2).
public enum WaitOutcome: Hashable, Sendable {
    /// Permits taken: the strategy's `allowed` or `delayed` (proceed after its wait).
    case granted(RateLimitResult)
    /// A critical request the strategy refused, let through without taking permits.
    case bypassed
    /// Refused without being served.
    case rejected(WaitRejection)
    /// Its deadline passed while it waited; nothing was taken.
    case timedOut
    /// Cancelled while it waited; nothing was taken.
    case cancelled
    /// The limiter was shut down while it waited.
    case closed

    /// The outcome of a request that never waits when nobody waits ahead of it and the strategy
    /// answers `answer` (WQ-4): admitted answers are `granted`, refusals carry their reason.
    @inlinable
    public init(_ answer: RateLimitResult) {
        switch answer {
        case .allowed, .delayed: self = .granted(answer)
        case .rejected(let wait): self = .rejected(.limited(retryAfterNanoseconds: wait))
        case .rejectedUntilRelease(let shortfall): self = .rejected(.untilRelease(shortfall: shortfall))
        case .neverAllowed: self = .rejected(.neverAllowed)
        case .invalid(let error): self = .rejected(.invalid(error))
        }
    }

    /// True when the request may go ahead: granted, or bypassed.
    @inlinable
    public var isGranted: Bool {
        switch self {
        case .granted, .bypassed: true
        case .rejected, .timedOut, .cancelled, .closed: false
        }
    }

    /// How long until the same request could be admitted, when the refusal says (the strategy's
    /// exact retry-after, a throttle's included); `nil` otherwise.
    public var retryAfter: Duration? {
        if case .rejected(let reason) = self { return reason.retryAfter }
        return nil
    }
}

/// A ticket's outcome, for the adapter to deliver, and the instant it was decided at (a
/// scheduled start counts its wait from there, WQ-12).
public struct WaitCompletion: Hashable, Sendable {
    public let ticket: WaitTicket
    public let outcome: WaitOutcome
    public let at: RateLimitInstant

    @usableFromInline
    package init(ticket: WaitTicket, outcome: WaitOutcome, at: RateLimitInstant) {
        self.ticket = ticket
        self.outcome = outcome
        self.at = at
    }
}

/// Permits granted to a request by an adapter's `acquire`.
public struct RateLimitGrant: Hashable, Sendable {
    /// The permits granted.
    public let permits: Int64
    /// The strategy's answer (`allowed` or `delayed`), or `nil` for a critical request let
    /// through without taking permits (WQ-4).
    public let answer: RateLimitResult?

    @usableFromInline
    package init(permits: Int64, answer: RateLimitResult?) {
        self.permits = permits
        self.answer = answer
    }

    /// True when a critical request passed without taking permits (nothing to release later).
    public var bypassedLimit: Bool { answer == nil }

    /// The quota left right after the grant, when the strategy reported one.
    public var remaining: Int64? { answer?.remaining }
}

/// Why an adapter's `acquire` gave no permits (WQ-2).
public enum RateLimitAcquireError: Error, Hashable, Sendable {
    /// Refused without waiting: queue full, never allowed, or malformed.
    case rejected(WaitRejection)
    /// The timeout passed while waiting; nothing was taken.
    case timedOut
    /// The caller was cancelled while waiting; nothing was taken (or, for a scheduled start,
    /// the slot stays consumed: a schedule cannot give it back).
    case cancelled
    /// The limiter was closed or released from memory while the request waited.
    case closed

    /// How long until the same request could be admitted, when the refusal says (the strategy's
    /// exact retry-after, a throttle's included).
    public var retryAfter: Duration? {
        if case .rejected(let reason) = self { return reason.retryAfter }
        return nil
    }
}

extension RateLimitAcquireError: CustomStringConvertible {
    /// What happened, and for a refusal which limit refused and what to change.
    public var description: String {
        switch self {
        case .rejected(.queueFull):
            "rejected: the queue is full: the permits already waiting plus these exceed the queue limit (a limiter's `queueLimit`, by default \(WaitQueue<ConcurrencyLimiter>.defaultQueueLimit); a registry rule's `.queue(limit:)`); raise it, or call `tryAcquire` to never wait"
        case .rejected(.neverAllowed):
            "rejected: no instant admits this many permits (CORE-7); do not retry the same request"
        case .rejected(.limited(let nanoseconds)): "rejected: limited, retry after \(nanoseconds) ns"
        case .rejected(.untilRelease(let shortfall)): "rejected: \(shortfall) more permits must be released first"
        case .rejected(.waitersAhead): "rejected: waiters of the same or a higher priority are ahead"
        case .rejected(.invalid(let error)): "rejected: \(error)"
        case .rejected(.unknownKey): "rejected: no rule of the registry matches the key and there is no default rule"
        case .rejected(.tooManyKeys):
            "rejected: the registry holds its maximumKeys and none is idle; raise maximumKeys or remove keys"
        case .timedOut: "timed out while waiting; nothing was taken"
        case .cancelled: "cancelled while waiting; nothing was taken"
        case .closed: "the limiter was closed while the request waited"
        }
    }
}

extension WaitOutcome {
    /// The grant for a request of `permits`, or the error that ends it.
    package func grant(permits: Int64) -> Result<RateLimitGrant, RateLimitAcquireError> {
        switch self {
        case .granted(let answer): .success(RateLimitGrant(permits: permits, answer: answer))
        case .bypassed: .success(RateLimitGrant(permits: permits, answer: nil))
        case .rejected(let reason): .failure(.rejected(reason))
        case .timedOut: .failure(.timedOut)
        case .cancelled: .failure(.cancelled)
        case .closed: .failure(.closed)
        }
    }
}

extension WaitOutcome {
    /// A refusal after which a request that may wait joins the queue (WQ-4 step 5): the strategy
    /// refused, or waiters are ahead.
    @inlinable
    var mayWait: Bool {
        switch self {
        case .rejected(.limited), .rejected(.untilRelease), .rejected(.waitersAhead): true
        case .rejected(.queueFull), .rejected(.neverAllowed), .rejected(.invalid), .rejected(.unknownKey),
            .rejected(.tooManyKeys):
            false
        case .granted, .bypassed, .timedOut, .cancelled, .closed: false
        }
    }
}
