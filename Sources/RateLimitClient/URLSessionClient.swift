// The rate-limited client over URLSession (Spec/HTTP.md HTTP-11): the operation is one
// `URLSession.data(for:)`; FoundationNetworking provides it on Linux.

import Foundation
import RateLimitActor
import RateLimitCore
import RateLimitHTTP

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A URLSession response: the body and the HTTP response.
public struct URLSessionResponse: ServerResponse {
    public let data: Data
    public let response: HTTPURLResponse

    public init(data: Data, response: HTTPURLResponse) {
        self.data = data
        self.response = response
    }

    public var status: Int { response.statusCode }

    public var fields: HTTPFields {
        HTTPFields(
            response.allHeaderFields.compactMap { name, value in
                guard let name = name as? String else { return nil }
                return (name: name, value: "\(value)")
            })
    }
}

/// A rate-limited client sending `URLRequest`s with a `URLSession`.
public typealias URLSessionRateLimitedClient<Strategy: RateLimitStrategy, C: Clock> =
    RateLimitedClient<URLRequest, URLSessionResponse, Strategy, C> where C.Duration == Duration

extension RateLimitedClient where Request == URLRequest, Response == URLSessionResponse {
    /// A client sending with `session` through `limiter` (HTTP-11); a response that is not HTTP is
    /// a transport failure (`URLError.badServerResponse`).
    public init(
        session: URLSession = .shared, limiter: ActorRateLimitRegistry<Strategy, C>,
        retryPolicy: RetryPolicy = .standard,
        serverQuota: ServerQuota = .standard, seed: UInt64 = .random(in: .min ... .max)
    ) {
        self.init(limiter: limiter, retryPolicy: retryPolicy, serverQuota: serverQuota, seed: seed) { request in
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            return URLSessionResponse(data: data, response: http)
        }
    }
}

extension RateLimitedClient where Request == URLRequest, Response == URLSessionResponse, Strategy: AdaptableStrategy {
    /// A client sending with `session` through `limiter` that learns its endpoints' limits from the
    /// server as `adaptive` says (HTTP-13).
    public init(
        session: URLSession = .shared, limiter: ActorRateLimitRegistry<Strategy, C>, adaptive: AdaptivePolicy,
        retryPolicy: RetryPolicy = .standard, serverQuota: ServerQuota = .standard,
        seed: UInt64 = .random(in: .min ... .max)
    ) {
        self.init(
            limiter: limiter, adaptive: adaptive, retryPolicy: retryPolicy, serverQuota: serverQuota, seed: seed
        ) { request in
            let (data, response) = try await session.data(for: request)
            guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            return URLSessionResponse(data: data, response: http)
        }
    }
}
