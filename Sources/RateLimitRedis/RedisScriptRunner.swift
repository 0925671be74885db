// What the limiters need from a Redis client: two commands. The app implements them with the
// client it already uses (the article "Shared limits with Redis" shows RediStack and valkey-swift),
// so this package depends on no Redis client.

/// Sends a script to Redis: `EVALSHA`, and `EVAL` when the server does not know the script.
///
/// Implement it with your Redis client. Send every argument as a bulk string, with the keys given:
/// one for a strategy's limiter, one per limit for a composite limit (the `keys:` requirements,
/// which by default send one key and refuse more). Return the script's reply (every script of this package answers an array of bulk strings) or, when the
/// server answers an error, its message (``RedisScriptReply/error(_:)``); throw only when no reply
/// came (the connection failed or closed). The limiters bound each call by their own timeout, so a
/// client without one cannot hang them.
public protocol RedisScriptRunner: Sendable {
    /// Sends `EVALSHA <sha1> 1 <key> <arguments...>` and returns the reply.
    func evalSHA(_ sha1: String, key: String, arguments: [String]) async throws -> RedisScriptReply

    /// Sends `EVAL <script> 1 <key> <arguments...>` and returns the reply (the server then keeps the
    /// script, so the next `EVALSHA` finds it).
    func eval(_ script: String, key: String, arguments: [String]) async throws -> RedisScriptReply

    /// Sends `EVALSHA <sha1> <keys.count> <keys...> <arguments...>` and returns the reply: a
    /// composite limit declares the key of each of its limits, so that a Redis Cluster moving
    /// their slot answers `TRYAGAIN` rather than running the call on some of them (SHARED-9).
    /// The default sends one key with ``evalSHA(_:key:arguments:)`` and answers more with an error,
    /// which the limiter throws as ``RedisLimitError/serverError(_:)``.
    func evalSHA(_ sha1: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply

    /// Sends `EVAL <script> <keys.count> <keys...> <arguments...>`, as
    /// ``evalSHA(_:keys:arguments:)`` does `EVALSHA`.
    func eval(_ script: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply
}

extension RedisScriptRunner {
    public func evalSHA(_ sha1: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        guard keys.count == 1 else { return .oneKeyOnly(keys, "evalSHA(_:keys:arguments:)") }
        return try await evalSHA(sha1, key: keys[0], arguments: arguments)
    }

    public func eval(_ script: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        guard keys.count == 1 else { return .oneKeyOnly(keys, "eval(_:keys:arguments:)") }
        return try await eval(script, key: keys[0], arguments: arguments)
    }
}

/// A ``RedisScriptRunner`` that also calls Redis Functions (Redis 7.0 and later).
///
/// A limiter whose runner is one calls its strategy's function of the package's library
/// (``RedisScript/library``) with `FCALL`, loading the library with `FUNCTION LOAD` when the
/// server does not have it. The scripts' Lua functions are then made once per server rather than at
/// every call. A server that has no Functions (before 7.0), or does not let the connection's user
/// run them (`NOPERM`), makes the limiter use `EVALSHA` and `EVAL` instead from then on.
/// ``RedisConnection`` is one; implement it with your client as its script calls are.
public protocol RedisFunctionRunner: RedisScriptRunner {
    /// Sends `FCALL <function> 1 <key> <arguments...>` and returns the reply.
    func fcall(_ function: String, key: String, arguments: [String]) async throws -> RedisScriptReply

    /// Sends `FCALL <function> <keys.count> <keys...> <arguments...>`, as
    /// ``RedisScriptRunner/evalSHA(_:keys:arguments:)`` does `EVALSHA` (one key by default).
    func fcall(_ function: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply

    /// Sends `FUNCTION LOAD <library>` and returns the reply: the library's name as one value, or
    /// the server's error (the library already loaded is one).
    func functionLoad(_ library: String) async throws -> RedisScriptReply
}

extension RedisFunctionRunner {
    public func fcall(_ function: String, keys: [String], arguments: [String]) async throws -> RedisScriptReply {
        guard keys.count == 1 else { return .oneKeyOnly(keys, "fcall(_:keys:arguments:)") }
        return try await fcall(function, key: keys[0], arguments: arguments)
    }
}

/// What the server answered to a script.
public enum RedisScriptReply: Hashable, Sendable {
    /// The array of bulk strings the script returned.
    case values([String])
    /// An error reply, with the server's message (`NOSCRIPT No matching script...`, `OOM ...`); a
    /// prefix a client adds, such as RediStack's `(Redis) `, may stay.
    case error(String)

    /// The default `keys:` requirements' answer to a call of several keys.
    static func oneKeyOnly(_ keys: [String], _ requirement: String) -> RedisScriptReply {
        .error(
            "ERR this runner sends one key per call and the call declares \(keys.count): implement \(requirement) "
                + "(a composite limit declares the key of each limit, SHARED-9)")
    }

    /// Whether this is the server's `NOSCRIPT` error: it does not know the script (its cache was
    /// flushed, or it restarted), so the script must be sent with `EVAL`.
    var isNoScript: Bool { errorCode == "NOSCRIPT" }

    /// Whether the server does not have the function called: the library is not loaded (a server
    /// that restarted, a `FUNCTION FLUSH`, or the first call).
    var isFunctionNotFound: Bool { errorCode == "ERR" && message.contains("Function not found") }

    /// Whether `FUNCTION LOAD` found the library already loaded (another client loaded it first).
    var isLibraryLoaded: Bool { errorCode == "ERR" && message.contains("already exists") }

    /// Whether `FUNCTION LOAD` refused the library's code (it does not compile, or its load failed).
    var isLibraryRefused: Bool {
        errorCode == "ERR"
            && (message.contains("Error registering functions") || message.contains("Error compiling function"))
    }

    /// Whether the server answered that it has no such command (a Redis before 7.0 to `FCALL` or
    /// `FUNCTION`) or that the user may not run it (`NOPERM`).
    var isCommandUnavailable: Bool {
        errorCode == "NOPERM" || (errorCode == "ERR" && message.lowercased().contains("unknown command"))
    }

    /// The error's code, its first word (after a prefix a client adds, such as `(Redis)`), or nil.
    private var errorCode: Substring? {
        guard case .error(let text) = self else { return nil }
        return text.split(separator: " ", maxSplits: 2).prefix(2).first { $0.allSatisfy(\.isUppercase) }
    }

    private var message: String {
        guard case .error(let text) = self else { return "" }
        return text
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
