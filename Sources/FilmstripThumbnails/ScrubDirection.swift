/// Which way a viewer is scrubbing.
public enum ScrubDirection: String, Sendable, Hashable {
    /// Towards later times.
    case forward
    /// Towards earlier times.
    case backward
}

/// Where the thumbnail for a time is now.
public enum ThumbnailAvailability: String, Sendable, Hashable {
    /// Decoded or encoded in memory: ``TrackThumbnails/getThumbnail(atTimestamp:)`` answers at once.
    case inMemory
    /// On disk (a local file or the disk cache): answered after a decode of a few milliseconds.
    case onDisk
    /// Only on the network.
    case remote
    /// No cue covers the time (or nothing is loaded).
    case none
}
