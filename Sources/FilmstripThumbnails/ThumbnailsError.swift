import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripStreaming
public import FilmstripSync
public import Foundation

/// Why a thumbnails operation failed: a kind, a message, and the underlying cause.
public struct ThumbnailsError: ChainedError, Sendable {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// Fetching failed: HTTP status, connection, timeout, size limit, truncated body.
        case network
        /// The track is malformed (``ThumbnailsError/line`` and ``ThumbnailsError/column`` say where).
        case parse
        /// An image could not be decoded or is too large.
        case decode
        /// The disk cache could not be read or written, or (offline) does not hold what is needed.
        case cacheIO
        /// The operation was cancelled (for example by `reset()`).
        case cancelled
        /// The input is of a kind Filmstrip does not handle (a URL scheme, a grid definition).
        case unsupported
        /// No track has been loaded.
        case notLoaded
    }

    /// The kind of failure.
    public var kind: Kind

    /// A human-readable explanation.
    public var message: String
    /// The URL concerned, if any.
    public var url: URL?
    /// For parse errors, the 1-based line.
    public var line: Int?
    /// For parse errors, the 1-based column.
    public var column: Int?
    /// The underlying error.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(
        _ kind: Kind, _ message: String, url: URL? = nil, line: Int? = nil, column: Int? = nil,
        underlying: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.url = url
        self.line = line
        self.column = column
        self.underlying = underlying
    }

    /// The underlying error.
    public var cause: (any Error)? { underlying }

    /// The message, with the position for parse errors and the URL for others; the description adds the causes.
    public var headline: String {
        if let line, let column { return "\(line):\(column): \(message)" }
        if let url { return "\(message) (\(url.absoluteString))" }
        return message
    }

    /// Whether the resource was read and is none of the track formats (it may be a media file), or was too large to
    /// be one.
    public var isNotATrack: Bool {
        if kind == .parse, message.hasPrefix(Self.notATrack) { return true }
        if let loading = underlying as? LoadingError, case .tooLarge = loading.kind { return true }
        return false
    }

    /// The start of the message of ``isNotATrack``.
    static let notATrack = "not a thumbnail track"

    /// Wraps any error from the lower layers into a ``ThumbnailsError``.
    static func wrap(_ error: any Error, url: URL? = nil) -> ThumbnailsError {
        switch error {
        case let error as ThumbnailsError:
            return error
        case let error as WebVTTParseError:
            return ThumbnailsError(
                .parse, error.message, url: url, line: error.line, column: error.column, underlying: error)
        case let error as LoadingError:
            let kind: Kind
            switch error.kind {
            case .cacheIO, .notCached: kind = .cacheIO
            case .cancelled: kind = .cancelled
            case .unsupportedURL: kind = .unsupported
            case .invalidContent: kind = .decode
            default: kind = .network
            }
            return ThumbnailsError(kind, error.message, url: error.url, underlying: error)
        case let error as ImagingError:
            return ThumbnailsError(.decode, error.message, url: url, underlying: error)
        case let error as HLSParseError:
            return ThumbnailsError(
                error.kind == .unsupported ? .unsupported : .parse, error.message, url: url, line: error.line,
                underlying: error)
        case let error as DASHParseError:
            return ThumbnailsError(
                error.kind == .unsupported ? .unsupported : .parse, error.description, url: url, line: error.line,
                underlying: error)
        case let error as BIFParser.ParseError:
            return ThumbnailsError(.parse, error.description, url: url, underlying: error)
        case let error as StoryboardParser.ParseError:
            return ThumbnailsError(.parse, error.description, url: url, underlying: error)
        case let error as StreamingError:
            // A manifest that does not parse: the parser's error, with its line.
            if let inner = error.underlying, inner is HLSParseError || inner is DASHParseError {
                return wrap(inner, url: error.url ?? url)
            }
            let kind: Kind =
                switch error.kind {
                case .manifest, .tooLarge, .invalidContent: .parse
                case .unsupported, .refused, .noTrack: .unsupported
                case .cancelled: .cancelled
                default: .network
                }
            return ThumbnailsError(kind, error.message, url: error.url ?? url, underlying: error)
        case let error as GridThumbnailError:
            return ThumbnailsError(.unsupported, error.description, url: url, underlying: error)
        case is CancellationError:
            return ThumbnailsError(.cancelled, "the operation was cancelled", url: url, underlying: error)
        default:
            return ThumbnailsError(.network, "\(error)", url: url, underlying: error)
        }
    }
}
