public import FilmstripSync
import Foundation

/// Why a download stopped. What was stored and verified stays, and a later run of the same download resumes.
public struct DownloadError: ChainedError, Sendable {
    public enum Kind: String, Sendable, Hashable {
        /// A live stream (downloads take video on demand), or content the downloader cannot store.
        case unsupported
        /// Less free disk space than the download needs.
        case insufficientSpace
        /// The directory holds a download of another stream, or something that is not a download.
        case conflict
        /// A manifest, segment, key or image could not be fetched, or arrived with the wrong length.
        case fetch
        /// The disk refused a write.
        case storage
        /// A stored file no longer matches its journal entry.
        case corrupt
        /// ``Downloader/cancel()``.
        case cancelled
        /// The licence for a protected download could not be had.
        case license
    }

    /// The kind.
    public var kind: Kind
    /// What happened, naming the file or URL.
    public var message: String
    /// The error underneath.
    public var underlying: (any Error)?

    public init(_ kind: Kind, _ message: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    public var headline: String { message }

    public var cause: (any Error)? { underlying }
}
