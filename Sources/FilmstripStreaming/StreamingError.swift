public import FilmstripSync
public import Foundation

/// Why a presentation, or a part of it, could not be loaded.
public struct StreamingError: ChainedError, Sendable {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// A manifest or playlist could not be fetched, or a segment, key or index answered with an error.
        case network
        /// A manifest or playlist is malformed (the underlying error carries the line, element or attribute).
        case manifest
        /// A feature Filmstrip does not handle (protected content, a hierarchical index).
        case unsupported
        /// Refused on principle: a remote manifest that refers to a local file, a scheme other than http(s) and file.
        case refused
        /// A manifest over its size or entry bound.
        case tooLarge
        /// The time asked for is outside what the presentation has (or has made available yet).
        case unavailable
        /// Bytes that arrived are unusable (a bad segment index, a key that is not 16 bytes, a segment that does not
        /// decrypt).
        case invalidContent
        /// The presentation has no track of the kind asked for.
        case noTrack
        /// The work was cancelled.
        case cancelled
    }

    /// The kind of failure.
    public var kind: Kind
    /// A human-readable explanation.
    public var message: String
    /// The URL concerned.
    public var url: URL?
    /// The underlying error (a ``FilmstripLoading/LoadingError``, an `HLSParseError`, a `DASHParseError`, …).
    public var underlying: (any Error)?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, url: URL? = nil, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
        self.underlying = underlying
    }

    /// `message (url)`; the description adds the causes.
    public var headline: String { url.map { "\(message) (\($0.absoluteString))" } ?? message }

    /// The underlying error.
    public var cause: (any Error)? { underlying }
}
