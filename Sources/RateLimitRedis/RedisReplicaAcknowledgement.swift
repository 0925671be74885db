// How many replicas must have a decision before the limiter gives it (Spec/SharedLimits.md,
// SHARED-15). Replication is asynchronous: a master that fails before its replica has a decision
// loses it, and the promoted replica admits those permits again. `WAIT` after each call, on the same
// connection, closes that gap at the cost of one more round trip and the replication's delay.

/// The replicas a shared limiter's decision must reach before it is given (SHARED-15): `WAIT`
/// after each script or function call, on the same connection.
///
/// ```swift
/// let redis = try RedisConnection(
///     url: "redis://10.0.0.1:6379", acknowledgement: try RedisReplicaAcknowledgement(replicas: 1, within: .milliseconds(50)))
/// ```
///
/// Only a decision that gives something (an admission, a release, a reset, a reconfigure) waits:
/// a refusal changes no state and is answered as the store gave it. A decision that fewer replicas
/// acknowledged within the time is answered as a `NOREPLICAS`
/// error, which the limiter's failure policy handles as any error of the store (SHARED-11: fail
/// closed, or the local fallback): the permits stay counted on the master but are not given, so a
/// failover can lose only permits nobody used. With `replicas` equal to every replica of the
/// master, a failover loses no admission that was given; a master with fewer replicas than that
/// gives none.
public struct RedisReplicaAcknowledgement: Hashable, Sendable {
    /// How many replicas must acknowledge each decision.
    public let replicas: Int
    /// How long `WAIT` waits for them, in whole milliseconds (rounded up from the time given).
    public let milliseconds: Int64

    /// Each decision waits at most `timeout` (rounded up to whole milliseconds) for `replicas`
    /// replicas to acknowledge it.
    ///
    /// - Throws: ``RedisConnectionError`` when `replicas` is not positive, or `timeout` is not
    ///   positive (`WAIT` with 0 would wait forever) or longer than a day.
    public init(replicas: Int, within timeout: Duration) throws(RedisConnectionError) {
        guard replicas >= 1 else {
            throw RedisConnectionError("an acknowledgement needs at least 1 replica: \(replicas)")
        }
        guard timeout > .zero, timeout <= .seconds(86_400) else {
            throw RedisConnectionError("an acknowledgement's timeout is more than 0 and at most a day: \(timeout)")
        }
        let (seconds, attoseconds) = timeout.components
        self.replicas = replicas
        milliseconds = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    /// `WAIT <replicas> <milliseconds>`.
    var command: [String] { ["WAIT", String(replicas), String(milliseconds)] }

    /// The error that replaces a decision `WAIT` answered `reply` to, or nil when enough replicas
    /// acknowledged it.
    func verdict(on reply: RedisReply) -> RedisScriptReply? {
        switch reply {
        case .integer(let acknowledged) where acknowledged >= replicas: nil
        case .integer(let acknowledged):
            .error(
                "NOREPLICAS \(acknowledged) of \(replicas) replicas acknowledged the decision within "
                    + "\(milliseconds) ms (WAIT): not given")
        case .error(let message): .error(message)
        default: .error("NOREPLICAS WAIT answered \(reply), not a count: not given")
        }
    }
}
