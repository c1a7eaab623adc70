import FilmstripFormats

/// What the engine learns when a stream opens.
struct StreamOpening: Sendable {
    var isLive: Bool
    /// Total duration for VOD, 0 for live.
    var duration: Double
    /// First segment start to last segment end, on the player's timeline.
    var window: ClosedRange<Double>
    /// An HLS playlist's target duration (0 for DASH).
    var targetDuration: Double
    /// A DASH MPD's `suggestedPresentationDelay`.
    var suggestedDelay: Double?
    /// The bandwidth of each level (lowest first) and the level the first segment comes from.
    var bandwidths: [Int] = []
    var level = 0
    /// The segments the opening listed (for where a live start begins).
    var segments: [SegmentReference] = []
}
