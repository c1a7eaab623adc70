/// Bounds on what a ``StreamingClient`` accepts from a server.
public struct StreamingLimits: Sendable, Hashable {
    /// The largest manifest or playlist, in bytes. Default 16 MiB.
    public var maximumManifestBytes: Int
    /// The most segments (and, for MPDs, elements) one manifest may list. Default 1,000,000.
    public var maximumEntries: Int
    /// The largest segment, in bytes. Default 256 MiB.
    public var maximumSegmentBytes: Int

    /// Creates limits; every argument has the documented default.
    public init(
        maximumManifestBytes: Int = 16 << 20, maximumEntries: Int = 1_000_000, maximumSegmentBytes: Int = 256 << 20
    ) {
        self.maximumManifestBytes = maximumManifestBytes
        self.maximumEntries = maximumEntries
        self.maximumSegmentBytes = maximumSegmentBytes
    }
}
