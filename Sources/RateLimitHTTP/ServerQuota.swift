// The server's side of a limit, learned from its responses (Spec/HTTP.md HTTP-9): a pure state
// machine per endpoint. A request goes out only when both the client's own limit and this allow it.

@_exported import RateLimitCore

/// What the server's responses allow now (HTTP-9).
public enum ServerPermit: Hashable, Sendable {
    /// Send; `remaining` is what the server's last report leaves after this request (`nil`: unknown).
    case allowed(remaining: Int64?)
    /// Do not send before this many nanoseconds have passed.
    case wait(nanoseconds: Int64)
}

/// The limits a server has told the client about: when it asked to wait until, and the quota it
/// reported left, counted down as requests go out (HTTP-9).
public struct ServerQuota: Hashable, Sendable {
    /// The wait after a 429 that names none: the first time (HTTP-9).
    public let defaultWaitNanoseconds: Int64
    /// The longest wait after such 429s (each new signal doubles the previous wait).
    public let maximumWaitNanoseconds: Int64
    /// The longest any server makes the client wait, however long it asks for (its
    /// `Retry-After`, its `t`, its reset): one reply never locks an endpoint out (HTTP-9).
    public let longestWaitNanoseconds: Int64
    /// Until when the server asked the client to wait (`nil`: it has not).
    public private(set) var blockedUntil: RateLimitInstant?
    /// The quota the server reported left, and until when that report holds.
    public private(set) var budget: ReportedQuota?
    /// 429s that named no wait, counted as signals: in a row, and one per group of requests that
    /// were in flight together (the current wait is the default doubled this many times less one).
    public private(set) var silentRejections = 0
    /// Counts the signals so far: a request records it when sent (``record(_:at:othersInFlight:sentInEpoch:)``).
    public private(set) var rejectionEpoch = 0

    /// A server quota (HTTP-9): after a 429 that names no wait, wait `defaultWait`, doubling for
    /// each such signal in a row up to `maximumWait`; no server wait longer than `longestWait`.
    ///
    /// - Throws: `RateLimitHTTPError` naming `defaultWait` (not positive), `maximumWait` (below it)
    ///   or `longestWait` (below `maximumWait`), or a duration finer than a nanosecond.
    public init(
        defaultWait: Duration = .seconds(1), maximumWait: Duration = .seconds(60),
        longestWait: Duration = .seconds(3_600)
    ) throws(RateLimitHTTPError) {
        defaultWaitNanoseconds = try nanoseconds(defaultWait, "defaultWait")
        maximumWaitNanoseconds = try nanoseconds(maximumWait, "maximumWait")
        longestWaitNanoseconds = try nanoseconds(longestWait, "longestWait")
        guard defaultWaitNanoseconds > 0 else { throw .invalid(field: "defaultWait", reason: "must be positive") }
        guard maximumWaitNanoseconds >= defaultWaitNanoseconds else {
            throw .invalid(field: "maximumWait", reason: "must be at least defaultWait")
        }
        guard longestWaitNanoseconds >= maximumWaitNanoseconds else {
            throw .invalid(field: "longestWait", reason: "must be at least maximumWait")
        }
    }

    /// After a 429 that names no wait: 1 s, doubling for each such signal, up to 60 s; no server
    /// wait longer than an hour (a quota that resets hourly is the longest usual one).
    public static let standard = try! ServerQuota()  // constant, valid

    /// Learns from a response received at `now` (HTTP-9); returns until when the server now asks
    /// the client to wait, if it does (never longer than ``longestWaitNanoseconds``).
    /// `othersInFlight` counts the other requests sent to this endpoint whose responses have not
    /// come back: the server's report may not count them yet, so they are taken from the quota it
    /// reports (never below 0). `sentInEpoch` is ``rejectionEpoch`` when the request was sent: a
    /// 429 naming no wait escalates the wait only when no such 429 escalated it since (requests in
    /// flight together that meet one server burst are one signal), or when no silent 429 is in a
    /// row any more (an answer in between ended the run); `nil` counts as sent after.
    @discardableResult
    public mutating func record(
        _ feedback: ServerFeedback, at now: RateLimitInstant, othersInFlight: Int64 = 0, sentInEpoch: Int? = nil
    ) -> RateLimitInstant? {
        var wait = feedback.requestedWaitNanoseconds.map { min($0, longestWaitNanoseconds) }
        if wait == nil, feedback.status == 429 {
            if sentInEpoch.map({ $0 == rejectionEpoch }) ?? true || silentRejections == 0 {
                silentRejections += 1
                rejectionEpoch += 1
            }
            // No time given: the default, doubled for each signal before this one, capped.
            let doublings = silentRejections - 1
            wait =
                doublings >= 62 || defaultWaitNanoseconds > maximumWaitNanoseconds >> doublings
                ? maximumWaitNanoseconds : min(defaultWaitNanoseconds << doublings, maximumWaitNanoseconds)
        } else {
            silentRejections = 0
        }
        let ceiling = now.advanced(byNanoseconds: longestWaitNanoseconds) ?? .end
        if let wait, wait > 0 {
            // A later-arriving response never shortens a wait already asked for.
            let until = now.advanced(byNanoseconds: wait) ?? .end
            blockedUntil = max(blockedUntil ?? until, until)
        }
        if let quota = feedback.remainingQuota, quota.resetNanoseconds > 0 {
            let remaining = quota.remaining > othersInFlight ? quota.remaining - max(0, othersInFlight) : 0
            let until = min(now.advanced(byNanoseconds: quota.resetNanoseconds) ?? .end, ceiling)
            budget = ReportedQuota(remaining: remaining, until: until)
        }
        return blockedUntil.flatMap { $0 > now ? $0 : nil }
    }

    /// Forgets what the server said, keeping the configuration (HTTP-12: an app that resumes an
    /// endpoint, or clears what the client learned of it).
    public mutating func forget() {
        blockedUntil = nil
        budget = nil
        silentRejections = 0
        rejectionEpoch = 0
    }

    /// How long the server's answers hold requests back at `now`, without taking from the
    /// reported quota (`nil`: a request may go out).
    public func wait(at now: RateLimitInstant) -> Int64? {
        if let blockedUntil, blockedUntil > now { return blockedUntil.nanoseconds(since: now) }
        if let budget, budget.until > now, budget.remaining <= 0 { return budget.until.nanoseconds(since: now) }
        return nil
    }

    /// Whether the quota remembers nothing that matters at `now` or later: no wait ahead, no
    /// reported quota still in force, no silent 429 in a row (a client may then forget it).
    public func isIdle(at now: RateLimitInstant) -> Bool {
        (blockedUntil.map { $0 <= now } ?? true) && (budget.map { $0.until <= now } ?? true) && silentRejections == 0
    }

    /// Asks to send one request at `now` (HTTP-9): allowed (taking one from a reported quota), or
    /// how long to wait.
    public mutating func permit(at now: RateLimitInstant) -> ServerPermit {
        if let blockedUntil, blockedUntil > now { return .wait(nanoseconds: blockedUntil.nanoseconds(since: now)) }
        guard let current = budget, current.until > now else {
            budget = nil
            return .allowed(remaining: nil)
        }
        guard current.remaining > 0 else { return .wait(nanoseconds: current.until.nanoseconds(since: now)) }
        budget = ReportedQuota(remaining: current.remaining - 1, until: current.until)
        return .allowed(remaining: current.remaining - 1)
    }
}

/// Quota a server reported left, and until when the report holds (its reset).
public struct ReportedQuota: Hashable, Sendable {
    public let remaining: Int64
    public let until: RateLimitInstant
}
