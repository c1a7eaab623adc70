public import FilmstripSync
public import Foundation

/// Why bytes could not be loaded from a URL, or stored in or read from a cache.
public struct LoadingError: ChainedError, Sendable {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The server answered with a non-success HTTP status.
        case httpStatus(Int)
        /// The connection failed, was refused or was reset.
        case transport
        /// No byte arrived within the request timeout, or the whole transfer took longer than the resource timeout.
        case timedOut
        /// The body is larger than the configured limit; the transfer was stopped.
        case tooLarge(limit: Int)
        /// The body ended before the length the server announced.
        case truncated(expected: Int, received: Int)
        /// A local file does not exist or cannot be read.
        case fileUnreadable
        /// Offline mode: the URL is not in the disk cache.
        case notCached
        /// The URL's scheme is not http, https or file.
        case unsupportedURL
        /// Reading or writing the disk cache failed.
        case cacheIO
        /// The loaded bytes were rejected by the caller's validation (for example, not an image).
        case invalidContent
        /// The request was cancelled.
        case cancelled
        /// The request was refused before it was made or a redirect was followed: a header with CR, LF or NUL, an
        /// address the ``AddressPolicy`` excludes, a redirect out of http and https, a redirect loop, or more
        /// redirects than ``LoadingConfiguration/maximumRedirects``.
        case refused
    }

    /// The kind of failure.
    public var kind: Kind
    /// The URL concerned.
    public var url: URL
    /// A human-readable explanation.
    public var message: String
    /// The underlying error, when there is one.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ kind: Kind, url: URL, _ message: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.url = url
        self.message = message
        self.underlying = underlying
    }

    /// Whether retrying the same request may succeed: 408, 429, 5xx, resets and truncated bodies.
    public var isTransient: Bool {
        switch kind {
        case .httpStatus(let status): status == 408 || status == 429 || (500...599).contains(status)
        case .transport, .truncated: true
        default: false
        }
    }

    /// Whether a cached copy may stand in for the network after this failure (used by network-first loads).
    public var allowsCacheFallback: Bool {
        switch kind {
        case .transport, .timedOut, .truncated: true
        case .httpStatus(let status): status >= 500
        default: false
        }
    }

    /// `message (url)`; the description adds the causes.
    public var headline: String { "\(message) (\(url.absoluteString))" }

    /// The underlying error.
    public var cause: (any Error)? { underlying }
}
