/// Live playback settings (SPEC 4.3). Every property has a documented default.
public struct LiveConfiguration: Sendable, Hashable, Codable {
    /// How the player catches up with the live edge when it falls behind.
    public enum Chase: String, Sendable, Hashable, Codable, CaseIterable {
        /// Never.
        case disabled
        /// Jump forward to the edge minus the cutoff distance, aligned to a segment boundary.
        case skipFrames
        /// Play faster (``LiveConfiguration/chaseLiveEdgeSpeedupRatio``) until the cutoff distance is reached.
        case speedupPlayback
    }

    /// The latency behind the live edge to settle at, in milliseconds; `nil` (the default) for none. Playback
    /// starts this far behind the edge (instead of ``liveEdgeDelay``, and never closer than three HLS target
    /// durations), and with ``chaseLiveEdge`` disabled, drift beyond it by more than a segment and a half-second
    /// (at least 1.5 s, or ``chaseLiveEdgeHLSSegmentDuration``) is taken back at ``chaseLiveEdgeSpeedupRatio`` down
    /// to the target; drift already there when playback starts (a slow start) is a jump to the target instead.
    /// `PlayerStats/liveLatency` reports where the player is.
    public var liveEdgeLatencyMs: Int?
    /// Start live playback as soon as possible. Default `false`. The first segment is the one the start rule picks
    /// (the newest that keeps the configured distance from the edge), fetched from the lowest rendition (the
    /// smallest first fetch; adaptive bitrate climbs from there), and playback starts once that one segment is in
    /// rather than after `minPrebufferTime`. `PlayerStats/startupTimeSaved` reports the time saved.
    public var optimizeLiveStartup = false
    /// Seconds before the start of the seekable window that still count as inside it. Default 3.
    public var behindLiveWindowTolerance: Double = 3
    /// Initial distance behind the live edge, in seconds. Default 0 (as close as the stream allows).
    public var liveEdgeDelay: Double = 0
    /// Catch-up behaviour. Default ``Chase/disabled``.
    public var chaseLiveEdge: Chase = .disabled
    /// The largest tolerated distance from the edge before catching up, in seconds. Default 10.
    public var chaseLiveEdgeCatchupThreshold: Double = 10
    /// The distance from the edge to settle at, in seconds. Default 5.
    public var chaseLiveEdgeCutoffThreshold: Double = 5
    /// Segment duration hint for ``Chase/skipFrames``, in seconds; 0 for none. Default 0.
    public var chaseLiveEdgeHLSSegmentDuration: Double = 0
    /// Playback rate while catching up with ``Chase/speedupPlayback``. Default 1.1.
    public var chaseLiveEdgeSpeedupRatio: Double = 1.1

    /// Creates a configuration.
    public init(
        liveEdgeLatencyMs: Int? = nil, optimizeLiveStartup: Bool = false, behindLiveWindowTolerance: Double = 3
    ) {
        self.liveEdgeLatencyMs = liveEdgeLatencyMs
        self.optimizeLiveStartup = optimizeLiveStartup
        self.behindLiveWindowTolerance = behindLiveWindowTolerance
    }
}
