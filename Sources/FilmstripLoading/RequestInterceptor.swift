public import Foundation

/// A request the loader is about to send: its URL and headers, which an interceptor may rewrite (sign the URL, add
/// credentials).
public struct InterceptedRequest: Sendable, Hashable {
    /// The URL to fetch.
    public var url: URL
    /// The headers to send (the configured headers, and `Range` for a byte range).
    public var headers: [String: String]

    /// Creates a request.
    public init(url: URL, headers: [String: String]) {
        self.url = url
        self.headers = headers
    }
}

/// Why an interceptor is asked.
public enum InterceptionReason: Sendable, Hashable {
    /// Before the first attempt.
    case initial
    /// The server answered 401 or 403: refresh the credentials; the request is sent once more.
    case authenticationFailed(status: Int)
}

/// Rewrites every request a loader makes: called with the request as configured (never with an earlier rewrite),
/// before it is sent, and once more after a 401 or 403. Throwing fails the request with that error. The disk cache
/// keeps the original URL, so signed URLs that change do not defeat it.
///
/// ```swift
/// let interceptor: RequestInterceptor = { request, reason in
///     var request = request
///     let token = reason == .initial ? await tokens.current() : await tokens.refresh()
///     request.headers["Authorization"] = "Bearer \(token)"
///     return request
/// }
/// ```
public typealias RequestInterceptor =
    @Sendable (InterceptedRequest, InterceptionReason) async throws ->
    InterceptedRequest
