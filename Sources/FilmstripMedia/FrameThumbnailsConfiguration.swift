public import FilmstripFormats
public import FilmstripImaging
public import FilmstripLoading
public import FilmstripThumbnails

/// Where a ``FrameThumbnails`` engine finds its keyframes, best first.
public enum KeyframeSource: String, Sendable, Hashable {
    /// An HLS I-frame playlist: only the keyframe's byte range and its map are fetched.
    case iFramePlaylist = "iframe-playlist"
    /// The presentation's segments (HLS or DASH): the segment that holds the time.
    case segments
    /// A video file's own index (MP4): only the index and the keyframe's bytes, with `Range` requests.
    case fileIndex = "file-index"
}

/// A picture sink for ``FrameThumbnails/getThumbnail(atTimestamp:renderOn:completion:)``: the keyframe is scaled to
/// fit ``size`` (aspect kept) and handed over.
public protocol ThumbnailOutput: AnyObject, Sendable {
    /// The largest picture the output shows.
    var size: PixelSize { get }
    /// Shows a picture (called off the main thread).
    func render(_ image: PixelBuffer, thumbnail: Thumbnail)
}

/// Which keyframe of a segment shows a time inside it, for a stream without an I-frame playlist.
public enum SegmentKeyframe: String, Sendable, Hashable, CaseIterable {
    /// The keyframe at or before the time: the segment is read up to the time (every frame before it, to be sure
    /// no later keyframe precedes it).
    case atOrBefore = "at-or-before"
    /// The segment's first keyframe, as a player that seeks by keyframes shows it: only that keyframe's bytes are
    /// read. The picture may be up to a segment earlier than the time; the thumbnail's start says which it is, and
    /// it answers for the whole segment.
    case first
}

/// Settings of a ``FrameThumbnails`` engine. Every property has a documented default.
public struct FrameThumbnailsConfiguration: Sendable {
    /// Thumbnails fit inside this size (aspect kept, never enlarged); the rendition is the smallest at least this
    /// large. Default 320x320.
    public var maximumSize = PixelSize(width: 320, height: 320)
    /// Bytes of decoded keyframes kept in memory (least recently used first out). Default 32 MiB.
    public var memoryLimit = 32 << 20
    /// JPEG quality of the thumbnails. Default 80.
    public var jpegQuality = 80
    /// Keyframes decoded ahead in the scrub direction after each request, one after the other (0: none).
    /// Default 1.
    public var prefetchCount = 1
    /// Which keyframe shows a time inside a segment when the stream has no I-frame playlist. Default
    /// ``SegmentKeyframe/atOrBefore``.
    public var segmentKeyframe = SegmentKeyframe.atOrBefore
    /// Timeouts, size limit, retries and headers.
    public var loading = LoadingConfiguration(maximumResponseSize: 64 << 20, requestTimeout: 15, resourceTimeout: 60)
    /// The HTTP transport; `nil` uses ``DefaultTransport/shared``.
    public var transport: (any DataLoading)?

    /// The defaults.
    public init() {}
}
