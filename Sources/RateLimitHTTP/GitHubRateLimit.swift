// GitHub's X-RateLimit-* fields (Spec/HTTP.md HTTP-5).

/// What GitHub (and the many APIs that copy it) reports: the window's limit, what remains, when it
/// resets (an absolute time, in epoch seconds), what was used, and which resource counted.
public struct GitHubRateLimit: Hashable, Sendable {
    /// `X-RateLimit-Limit`: requests allowed per window.
    public var limit: Int64?
    /// `X-RateLimit-Remaining`: requests left in the current window.
    public var remaining: Int64?
    /// `X-RateLimit-Reset`: when the window resets, in UTC epoch seconds.
    public var reset: HTTPDate?
    /// `X-RateLimit-Used`: requests made in the current window.
    public var used: Int64?
    /// `X-RateLimit-Resource`: the resource the request counted against (`core`, `search`, ...).
    public var resource: String?

    /// Whether any of the fields was present and well formed.
    public var isEmpty: Bool { limit == nil && remaining == nil && reset == nil && used == nil && resource == nil }
}
