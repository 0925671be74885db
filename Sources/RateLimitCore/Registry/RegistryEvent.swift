// What the registry reports as it happens (Spec/Registry.md, REG-10).

/// Something that happened to a key (REG-10), stamped with the instant it happened at.
public enum RegistryEvent: Hashable, Sendable {
    /// A request refused at once (any reason) or timed out.
    case rejected(key: String, permits: Int64, outcome: WaitOutcome, at: RateLimitInstant)
    /// The key's state changed.
    case stateChanged(key: String, from: KeyState, to: KeyState, at: RateLimitInstant)
    /// The key's quota status changed; `remaining` is the quota at that instant.
    case statusChanged(key: String, from: QuotaStatus, to: QuotaStatus, remaining: Int64, at: RateLimitInstant)
}
