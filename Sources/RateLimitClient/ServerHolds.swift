import RateLimitCore

// The client's holds on its endpoints' keys for the server (Spec/HTTP.md HTTP-12), as a pure
// machine: the client asks the registry to throttle an endpoint's key until the server's wait ends,
// and those requests land in the registry in any order, while the client may extend a hold or
// forget it meanwhile. This value decides what to ask and, when the last request on its way lands,
// what to ask next so that the registry ends up holding exactly what the client wants. The actor
// only sends what it returns and reports each landing (RateLimitedClient.swift).

/// The client's holds on endpoints' keys and the requests on their way to the registry (HTTP-12).
struct ServerHolds: Sendable {
    /// What the client asks of the registry for an endpoint's key.
    enum Request: Hashable, Sendable {
        /// Throttle the key until this instant (REG-4; an instant already past ends the throttle).
        case throttle(until: RateLimitInstant)
        /// Return the key to accepting (REG-4).
        case resume
    }

    /// A request for `endpoint`'s key, to send; report it with ``landed(_:)`` once the registry has it.
    struct Sent: Hashable, Sendable {
        let endpoint: String
        let request: Request
    }

    /// The requests of an endpoint on their way, and whether the hold was forgotten meanwhile.
    private struct Flight: Sendable {
        var count = 0
        var forgotten = false
    }

    /// Until when the client holds each endpoint (the longest wait asked while the hold lasts).
    private var holds: [String: RateLimitInstant] = [:]
    /// Endpoints with requests on their way; an entry lives only while there are some.
    private var flights: [String: Flight] = [:]

    /// The endpoints held.
    var endpoints: Dictionary<String, RateLimitInstant>.Keys { holds.keys }
    /// How many endpoints are held.
    var count: Int { holds.count }
    /// How many endpoints have requests on their way.
    var inFlight: Int { flights.count }

    /// Until when `endpoint` is held, if it is.
    func until(of endpoint: String) -> RateLimitInstant? { holds[endpoint] }

    /// Until when `endpoint` is held, when no request for it is on its way: the registry then holds
    /// the key as the client wants, so its state can be read as the app's.
    func settled(_ endpoint: String) -> RateLimitInstant? {
        flights[endpoint] == nil ? holds[endpoint] : nil
    }

    /// Holds `endpoint` until `requested` at least (a hold only grows while it lasts, or while a
    /// request for it is on its way): the throttle to send.
    mutating func hold(_ endpoint: String, until requested: RateLimitInstant, at now: RateLimitInstant) -> Sent {
        let current = holds[endpoint].flatMap { $0 > now || flights[endpoint] != nil ? $0 : nil }
        let until = max(current ?? requested, requested)
        holds[endpoint] = until
        flights[endpoint, default: Flight()].count += 1
        return Sent(endpoint: endpoint, request: .throttle(until: until))
    }

    /// Forgets `endpoint`'s hold once the key is seen accepting (the app resumed it): nothing is
    /// sent, since the registry already accepts; a request still on its way then leaves the key
    /// accepting once the last one lands. To lift a hold the registry still has, ``release(_:at:)``.
    mutating func forget(_ endpoint: String) {
        holds[endpoint] = nil
        flights[endpoint]?.forgotten = true
    }

    /// Forgets `endpoint`'s hold and returns the key to accepting: the request to send, `nil`
    /// when the key was not held (nothing to undo).
    mutating func release(_ endpoint: String, at now: RateLimitInstant) -> Sent? {
        let held = holds[endpoint].map { $0 > now || flights[endpoint] != nil } ?? false
        forget(endpoint)
        guard held else { return nil }
        flights[endpoint, default: Flight()].count += 1
        return Sent(endpoint: endpoint, request: .resume)
    }

    /// Drops `endpoint`'s hold once it has ended and nothing for it is on its way (bounded memory).
    mutating func dropIfEnded(_ endpoint: String, at now: RateLimitInstant) {
        if let until = holds[endpoint], until <= now, flights[endpoint] == nil { holds[endpoint] = nil }
    }

    /// `sent` landed in the registry. When it was the last of its endpoint on its way, the registry
    /// holds the key as `sent` says: the last applied wins, and landings are reported in the order
    /// the registry applied them as long as the tasks that sent them have the same priority (an
    /// actor runs jobs of one priority in order). Tasks of different priorities may be reported
    /// in the other order; a request reported last but applied first then leaves the registry with
    /// the other one until the next hold of the endpoint (not handled). Returns the request that
    /// brings the key to what the client wants now, if it differs, to send in turn; `nil` when
    /// nothing more is needed.
    mutating func landed(_ sent: Sent) -> Sent? {
        guard var flight = flights[sent.endpoint] else { return nil }
        flight.count -= 1
        guard flight.count == 0 else {
            flights[sent.endpoint] = flight
            return nil
        }
        flights[sent.endpoint] = nil
        let wanted = holds[sent.endpoint].map { Request.throttle(until: $0) } ?? (flight.forgotten ? .resume : nil)
        guard let wanted, wanted != sent.request else { return nil }
        flights[sent.endpoint] = Flight(count: 1)
        return Sent(endpoint: sent.endpoint, request: wanted)
    }
}
