// What the limiters need from a Redis client: two commands. The app implements them with the
// client it already uses (the article "Shared limits with Redis" shows RediStack and valkey-swift),
// so this package depends on no Redis client.

/// Sends a script to Redis: `EVALSHA`, and `EVAL` when the server does not know the script.
///
/// Implement it with your Redis client. Send every argument as a bulk string, with `1` key. Return
/// the script's reply (every script of this package answers an array of bulk strings) or, when the
/// server answers an error, its message (``RedisScriptReply/error(_:)``); throw only when no reply
/// came (the connection failed or closed). The limiters bound each call by their own timeout, so a
/// client without one cannot hang them.
public protocol RedisScriptRunner: Sendable {
    /// Sends `EVALSHA <sha1> 1 <key> <arguments...>` and returns the reply.
    func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply

    /// Sends `EVAL <script> 1 <key> <arguments...>` and returns the reply (the server then keeps the
    /// script, so the next `EVALSHA` finds it).
    func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply
}

/// What the server answered to a script.
public enum RedisScriptReply: Hashable, Sendable {
    /// The array of bulk strings the script returned.
    case values([String])
    /// An error reply, with the server's message (`NOSCRIPT No matching script...`, `OOM ...`); a
    /// prefix a client adds, such as RediStack's `(Redis) `, may stay.
    case error(String)

    /// Whether this is the server's `NOSCRIPT` error: it does not know the script (its cache was
    /// flushed, or it restarted), so the script must be sent with `EVAL`.
    var isNoScript: Bool {
        guard case .error(let message) = self else { return false }
        return message.split(separator: " ", maxSplits: 2).prefix(2).contains("NOSCRIPT")
    }
}

/// Why a shared limiter has no answer from the store (Spec/SharedLimits.md, SHARED-10).
public enum RedisLimitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No reply within the limiter's timeout: the server is slow or unreachable. The script may
    /// still run: the limit may count permits that were never used, never the reverse.
    case timedOut(Duration)
    /// The client threw instead of replying (the connection was refused or closed): its description.
    case connectionFailed(String)
    /// The server answered an error: out of memory under `noeviction`, a script error, a cluster
    /// redirection... Its message.
    case serverError(String)
    /// A reply that is not one of the script's answers: its description.
    case unexpectedReply(String)
    /// The calling task was cancelled before an answer came.
    case cancelled

    public var description: String {
        switch self {
        case .timedOut(let timeout): "no reply from Redis within \(timeout)"
        case .connectionFailed(let reason): "the Redis client failed: \(reason)"
        case .serverError(let message): "Redis answered an error: \(message)"
        case .unexpectedReply(let reply): "Redis answered what no script answers: \(reply)"
        case .cancelled: "cancelled before Redis answered"
        }
    }
}
