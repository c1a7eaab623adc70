/// One cue of a thumbnail track: a time range and the image (or image region) shown for it.
public struct ThumbnailCue: Sendable, Hashable {
    /// Start of the cue in milliseconds (inclusive).
    public var startMilliseconds: Int64
    /// End of the cue in milliseconds (exclusive).
    public var endMilliseconds: Int64
    /// Index into ``ThumbnailTrack/images`` of the image this cue shows.
    public var imageIndex: Int32
    /// The part of the image this cue shows; `nil` for the whole image.
    public var region: SpatialRegion?
    /// The cue identifier, when the track gives one.
    public var identifier: String?
    /// The 1-based line of the cue's timing line in the source.
    public var line: Int32

    /// Creates a cue.
    public init(
        startMilliseconds: Int64, endMilliseconds: Int64, imageIndex: Int32,
        region: SpatialRegion? = nil, identifier: String? = nil, line: Int32 = 0
    ) {
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
        self.imageIndex = imageIndex
        self.region = region
        self.identifier = identifier
        self.line = line
    }

    /// Start of the cue in seconds.
    public var start: Double { Double(startMilliseconds) / 1000 }
    /// End of the cue in seconds.
    public var end: Double { Double(endMilliseconds) / 1000 }
}
