public import Filmstrip
public import Foundation

/// The player and thumbnails usage of a typical streaming app, written with Filmstrip's names. This target is
/// compiled with the package, and `ReferenceUsageTests` runs it against real content over loopback HTTP.
///
/// Each function takes the SDK instance to use (apps pass `Filmstrip.shared`).
public enum ReferenceUsage {
    /// SDK-wide settings: network settings for every player (a player's own win field by field) and the playback
    /// rate range of Filmstrip's engine.
    public static func configure(_ sdk: Filmstrip = .shared) {
        var network = NetworkConfiguration(
            httpAdditionalHeaders: ["X-App": "reference"], allowsCellularAccess: true,
            timeoutIntervalForResourceMs: 30_000, timeoutIntervalForDrmAcquisitionMs: 10_000,
            waitsForConnectivity: true)
        network.timeoutIntervalForResourceMs = 20_000
        sdk.networkConfiguration = network
        sdk.setPlaybackRateRange(of: .filmstrip, to: 0...4)
    }

    /// Video on demand: load, then open with autoplay; state, seekable ranges and statistics reported through
    /// `events`; a faster rate once playing.
    public static func playOnDemand(
        _ contentURL: URL, sdk: Filmstrip = .shared, events: @escaping @Sendable (String) -> Void
    ) -> Player {
        let player = sdk.player()
        var config = PlayerConfiguration(with: contentURL)
        config.preferredEngine = .filmstrip
        config.stateTimeoutConfiguration = StateTimeoutConfiguration(
            openingSeconds: 15, bufferingSeconds: 30, seekingSeconds: 20)
        config.networkConfiguration = NetworkConfiguration(httpAdditionalHeaders: ["X-Player": "vod"])
        config.liveConfiguration = LiveConfiguration(behindLiveWindowTolerance: 3.0)
        player.onState = { previous, state in
            events("state \(previous) -> \(state)")
            if let error = state.playerError { events("error \(error.type.rawValue): \(error.message)") }
        }
        player.onSeekableTimeRanges = { ranges in events("seekable \(ranges)") }
        player.onStats = { stats in events("stats position \(stats.position)") }
        player.load(config: config)
        player.open(autoplay: true)
        player.playbackRate = 1.5
        return player
    }

    /// Seeks, reads statistics and the playhead.
    public static func scrub(_ player: Player, to seconds: Double) -> (position: Double, stats: PlayerStats?) {
        player.seek(seconds)
        return (player.currentTime, player.getStats())
    }

    /// Live: a latency target with an optimized start, the player's live-edge controls and buffer settings; state
    /// timeouts switched off.
    public static func playLive(_ liveURL: URL, sdk: Filmstrip = .shared) -> Player {
        var config = PlayerConfiguration(with: liveURL)
        config.preferredEngine = .filmstrip
        config.liveConfiguration = LiveConfiguration(
            liveEdgeLatencyMs: 3000, optimizeLiveStartup: true, behindLiveWindowTolerance: 3.0)
        config.stateTimeoutConfiguration = nil

        let player = sdk.player()
        player.liveEdgeDelay = 10.0
        player.chaseLiveEdge = .speedupPlayback
        player.chaseLiveEdgeCatchupThreshold = 10.0
        player.chaseLiveEdgeCutoffThreshold = 5.0
        player.chaseLiveEdgeHLSSegmentDuration = 10.0
        player.chaseLiveEdgeSpeedupRatio = 1.1
        player.minPrebufferTime = 6.0
        player.maxPrebufferTime = 60.0
        player.minRebufferTime = 12.0
        player.open(config: config)
        return player
    }

    /// Thumbnails for a player: the track is loaded through one call, and `thumbnail(for:at:)` finds it later
    /// through another, because the SDK keeps one engine per player.
    public static func loadThumbnails(
        for player: Player, track: URL, sdk: Filmstrip = .shared,
        completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        let thumbnails = sdk.thumbnails(for: player, engine: .tracks)
        thumbnails.loadThumbnailsFrom(webVTTtrack: track) { error in completion(error) }
    }

    /// The preview at a scrub position: image bytes and the span it covers.
    public static func thumbnail(
        for player: Player, at timestamp: Double, sdk: Filmstrip = .shared
    ) -> (imageData: Data, start: Double, end: Double)? {
        guard let thumbnail = sdk.thumbnails(for: player, engine: .tracks).getThumbnail(atTimestamp: timestamp)
        else { return nil }
        return (thumbnail.imageData, thumbnail.timeStampStart, thumbnail.timeStampEnd)
    }
}
