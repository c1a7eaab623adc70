public import Foundation

/// Fetches the bytes of one URL in one attempt: no retries and no caching (``ResourceLoader`` adds those).
///
/// ``URLSessionDataLoader`` is the default implementation; tests and apps can supply their own.
public protocol DataLoading: Sendable {
    /// Loads the body of `url`, failing with a ``LoadingError`` for HTTP errors, limits and timeouts.
    func load(_ url: URL, configuration: LoadingConfiguration) async throws -> LoadResponse
}

/// A successful response.
public struct LoadResponse: Sendable {
    /// The body.
    public var data: Data
    /// The HTTP status (200 for file URLs).
    public var statusCode: Int
    /// Response headers, names lower-cased.
    public var headers: [String: String]

    /// Creates a response.
    public init(data: Data, statusCode: Int = 200, headers: [String: String] = [:]) {
        self.data = data
        self.statusCode = statusCode
        self.headers = headers
    }
}
