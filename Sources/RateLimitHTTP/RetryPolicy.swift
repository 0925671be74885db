// Which attempts are retried, and after how long (Spec/HTTP.md HTTP-8).

/// The decision after one attempt of a request (HTTP-8).
public enum RetryDecision: Hashable, Sendable {
    /// Hand this outcome to the caller: a success, or an error that retrying cannot fix.
    case deliver
    /// Try again after this many nanoseconds.
    case retry(afterNanoseconds: Int64)
    /// Retrying could help, but the retries or the time budget are spent.
    case stop
}

/// What one attempt produced.
public enum AttemptOutcome: Hashable, Sendable {
    /// The server answered with this status.
    case response(status: Int)
    /// No response: the connection failed, timed out or was refused.
    case networkFailure
}

/// Retries with backoff (HTTP-8): network failures and 5xx are retried with backoff; 429 and 503
/// wait for the server's retry-after (backoff when it gives none); other 4xx are never retried.
public struct RetryPolicy: Hashable, Sendable {
    public let backoff: Backoff
    /// No retry waits longer than this, in nanoseconds: a server asking for more stops the
    /// request instead (the caller's fallback can answer; HTTP-8).
    public let maximumWaitNanoseconds: Int64

    /// Retries with `backoff`, none waiting longer than `maximumWait` (default 60 s).
    ///
    /// - Throws: `RateLimitHTTPError` naming `maximumWait` when it is negative or finer than 1 ns.
    public init(backoff: Backoff = .default, maximumWait: Duration = .seconds(60)) throws(RateLimitHTTPError) {
        self.backoff = backoff
        maximumWaitNanoseconds = try nanoseconds(maximumWait, "maximumWait")
    }

    /// The default backoff, waits of at most 60 s.
    public static let standard = try! RetryPolicy()  // constant, valid

    /// The decision after an attempt (HTTP-8). `retries` is how many retries came before it,
    /// `elapsedNanoseconds` the time since the first attempt, `serverWaitNanoseconds` the wait the
    /// response asked for (HTTP-6), `previousDelay` the last backoff wait (decorrelated jitter).
    /// Negative counts, times and waits count as 0; a retry waits `0 ... maximumWait`.
    public func decide(
        _ outcome: AttemptOutcome, retries: Int, elapsedNanoseconds: Int64, serverWaitNanoseconds: Int64?,
        previousDelay: Int64?,
        using random: inout some RandomNumberGenerator
    ) -> RetryDecision {
        let (retries, elapsedNanoseconds) = (max(0, retries), max(0, elapsedNanoseconds))
        let serverWaitNanoseconds = serverWaitNanoseconds.map { max(0, $0) }
        let wait: Int64
        switch outcome {
        case .response(let status) where status < 400:
            return .deliver
        case .response(let status) where status == 429 || status == 503:
            wait = serverWaitNanoseconds ?? backoff.delay(retry: retries, previous: previousDelay, using: &random)
        case .response(let status) where status >= 500:
            wait = max(
                serverWaitNanoseconds ?? 0, backoff.delay(retry: retries, previous: previousDelay, using: &random))
        case .response:
            return .deliver  // other 4xx: the request itself is wrong
        case .networkFailure:
            wait = backoff.delay(retry: retries, previous: previousDelay, using: &random)
        }
        guard retries < backoff.maximumRetries, wait <= maximumWaitNanoseconds else { return .stop }
        if let budget = backoff.budgetNanoseconds, elapsedNanoseconds > budget - min(wait, budget) { return .stop }
        return .retry(afterNanoseconds: wait)
    }
}
