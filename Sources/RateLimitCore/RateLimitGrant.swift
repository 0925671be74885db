/// Permits granted to a request by an adapter's `acquire`.
public struct RateLimitGrant: Hashable, Sendable {
    /// The permits granted.
    public let permits: Int64
    /// The strategy's answer (`allowed` or `delayed`), or `nil` for a critical request let
    /// through without taking permits (WQ-4).
    public let answer: RateLimitResult?

    public init(permits: Int64, answer: RateLimitResult?) {
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

extension WaitRejection {
    /// The strategy's exact retry-after, when it refused with one.
    public var retryAfter: Duration? {
        if case .limited(let answer) = self { return answer.retryAfter }
        return nil
    }
}

extension WaitOutcome {
    /// The grant for a request of `permits`, or the error that ends it.
    public func grant(permits: Int64) -> Result<RateLimitGrant, RateLimitAcquireError> {
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
