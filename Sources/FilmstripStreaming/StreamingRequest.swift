public import FilmstripFormats
public import Foundation

/// One request a ``StreamingClient`` is about to send, handed to its request decorator, which may add headers or
/// change the URL (a player adds CMCD data here, in headers or in the query).
///
/// ```swift
/// let client = StreamingClient(url: manifestURL, decorate: { request in
///     if request.object == .media { request.headers["X-Session"] = sessionID }
/// })
/// ```
public struct StreamingRequest: Sendable {
    /// What the request is for.
    public enum Object: String, Sendable, Hashable, CaseIterable {
        /// The manifest the client was made for (an HLS master or media playlist, or an MPD).
        case manifest
        /// An HLS media playlist named by a master playlist.
        case mediaPlaylist
        /// A DASH `sidx` read through `SegmentBase@indexRange`.
        case segmentIndex
        /// An initialisation section (`EXT-X-MAP`, DASH `Initialization`).
        case initialization
        /// A media segment.
        case media
        /// An AES-128 key.
        case key
        /// A `UTCTiming` time source.
        case clock
    }

    /// What the request is for.
    public let object: Object
    /// The URL to request; a decorator may change it (its query, for example).
    public var url: URL
    /// The byte range asked for, if any (sent as one `Range` header).
    public let byteRange: Range<Int64>?
    /// The segment, for ``Object/media``, ``Object/initialization`` and ``Object/key`` requests.
    public let segment: SegmentReference?
    /// The rendition the segment belongs to, when the caller said.
    public let rendition: Presentation.Rendition?
    /// Headers to send besides the client's configured ones; a decorator may add to them.
    public var headers: [String: String]

    /// Creates a request description.
    public init(
        object: Object, url: URL, byteRange: Range<Int64>? = nil, segment: SegmentReference? = nil,
        rendition: Presentation.Rendition? = nil, headers: [String: String] = [:]
    ) {
        self.object = object
        self.url = url
        self.byteRange = byteRange
        self.segment = segment
        self.rendition = rendition
        self.headers = headers
    }

    /// How the object is named in errors.
    var noun: String {
        switch object {
        case .manifest: "manifest"
        case .mediaPlaylist: "media playlist"
        case .segmentIndex: "segment index"
        case .initialization: "initialization section"
        case .media: "segment"
        case .key: "AES-128 key"
        case .clock: "UTCTiming time"
        }
    }
}

/// Adds to or changes a request before it is sent, once per attempt (the first on the requesting task, a retry on
/// the retry timer's thread).
public typealias StreamingRequestDecorator = @Sendable (inout StreamingRequest) -> Void
