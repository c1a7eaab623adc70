public import FilmstripSync
public import Foundation

/// Why a media operation failed.
public struct MediaError: ChainedError, Sendable {
    /// The kind of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The input could not be opened or read (missing file, connection failure, HTTP error).
        case inputUnavailable
        /// The input is not a media file FFmpeg understands, or it is damaged or cut short.
        case invalidMedia
        /// The input has no video stream.
        case noVideoStream
        /// No decoder is available for the video codec.
        case unsupportedCodec
        /// Decoding failed.
        case decodeFailed
        /// The requested time lies outside the video.
        case timeOutOfRange
        /// The operation took longer than its timeout.
        case timedOut
        /// The operation was cancelled.
        case cancelled
        /// Writing output (images, tracks) failed.
        case outputFailed
        /// A remote playlist referred to a local file, or an argument is invalid.
        case invalidArgument
        /// The video is encrypted and no key that opens it was given (or its protection scheme is not read).
        case protectedContent
    }

    /// The kind of failure.
    public var kind: Kind
    /// A human-readable explanation.
    public var message: String
    /// The input concerned.
    public var url: URL?
    /// The FFmpeg error code, when FFmpeg reported one.
    public var ffmpegCode: Int32?
    /// The underlying error.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(
        _ kind: Kind, _ message: String, url: URL? = nil, ffmpegCode: Int32? = nil, underlying: (any Error)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.url = url
        self.ffmpegCode = ffmpegCode
        self.underlying = underlying
    }

    /// The message and, when known, the input; the description adds the causes.
    public var headline: String {
        guard let url else { return message }
        return "\(message) (\(url.isFileURL ? url.path : url.absoluteString))"
    }

    /// The underlying error.
    public var cause: (any Error)? { underlying }
}
