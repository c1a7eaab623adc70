import Foundation

/// Settings set on the player itself, as other player SDKs expose them. Each one wins over the value in the
/// configurations the player opens; unset, the current configuration's value (or its default) is read.
struct PlayerOverrides: Sendable, Hashable {
    var liveEdgeDelay: Double?
    var chaseLiveEdge: LiveConfiguration.Chase?
    var chaseLiveEdgeCatchupThreshold: Double?
    var chaseLiveEdgeCutoffThreshold: Double?
    var chaseLiveEdgeHLSSegmentDuration: Double?
    var chaseLiveEdgeSpeedupRatio: Double?
    var minPrebufferTime: Double?
    var maxPrebufferTime: Double?
    var minRebufferTime: Double?

    /// `configuration` with every setting made here.
    func applied(to configuration: PlayerConfiguration) -> PlayerConfiguration {
        var result = configuration
        result.live.liveEdgeDelay = liveEdgeDelay ?? result.live.liveEdgeDelay
        result.live.chaseLiveEdge = chaseLiveEdge ?? result.live.chaseLiveEdge
        result.live.chaseLiveEdgeCatchupThreshold =
            chaseLiveEdgeCatchupThreshold ?? result.live.chaseLiveEdgeCatchupThreshold
        result.live.chaseLiveEdgeCutoffThreshold =
            chaseLiveEdgeCutoffThreshold ?? result.live.chaseLiveEdgeCutoffThreshold
        result.live.chaseLiveEdgeHLSSegmentDuration =
            chaseLiveEdgeHLSSegmentDuration ?? result.live.chaseLiveEdgeHLSSegmentDuration
        result.live.chaseLiveEdgeSpeedupRatio = chaseLiveEdgeSpeedupRatio ?? result.live.chaseLiveEdgeSpeedupRatio
        result.minPrebufferTime = minPrebufferTime ?? result.minPrebufferTime
        result.maxPrebufferTime = maxPrebufferTime ?? result.maxPrebufferTime
        result.minRebufferTime = minRebufferTime ?? result.minRebufferTime
        return result
    }
}

/// Live-edge and buffer settings on the player (SPEC 4.2, 4.3). Set before `open(config:)`, they apply to what is
/// opened; set while playing, they apply at once (``liveEdgeDelay`` at the next live start, as it is where playback
/// starts). They win over the configuration's ``PlayerConfiguration/live`` and buffer settings.
///
/// ```swift
/// let player = Filmstrip.shared.player()
/// player.liveEdgeDelay = 10
/// player.chaseLiveEdge = .speedupPlayback
/// player.minPrebufferTime = 6
/// player.open(config: PlayerConfiguration(with: liveURL))
/// ```
extension Player {
    /// Initial distance behind the live edge, seconds (``LiveConfiguration/liveEdgeDelay``).
    public var liveEdgeDelay: Double {
        get { setting(\.live.liveEdgeDelay) }
        set { override(\.liveEdgeDelay, newValue) }
    }

    /// How the player catches up with the live edge (``LiveConfiguration/chaseLiveEdge``).
    public var chaseLiveEdge: LiveConfiguration.Chase {
        get { setting(\.live.chaseLiveEdge) }
        set { override(\.chaseLiveEdge, newValue) }
    }

    /// The largest tolerated distance from the edge before catching up, seconds.
    public var chaseLiveEdgeCatchupThreshold: Double {
        get { setting(\.live.chaseLiveEdgeCatchupThreshold) }
        set { override(\.chaseLiveEdgeCatchupThreshold, newValue) }
    }

    /// The distance from the edge catching up settles at, seconds.
    public var chaseLiveEdgeCutoffThreshold: Double {
        get { setting(\.live.chaseLiveEdgeCutoffThreshold) }
        set { override(\.chaseLiveEdgeCutoffThreshold, newValue) }
    }

    /// The segment-duration hint for ``LiveConfiguration/Chase/skipFrames``, seconds (0: none).
    public var chaseLiveEdgeHLSSegmentDuration: Double {
        get { setting(\.live.chaseLiveEdgeHLSSegmentDuration) }
        set { override(\.chaseLiveEdgeHLSSegmentDuration, newValue) }
    }

    /// The playback rate while catching up with ``LiveConfiguration/Chase/speedupPlayback``.
    public var chaseLiveEdgeSpeedupRatio: Double {
        get { setting(\.live.chaseLiveEdgeSpeedupRatio) }
        set { override(\.chaseLiveEdgeSpeedupRatio, newValue) }
    }

    /// Seconds buffered before playback starts (``PlayerConfiguration/minPrebufferTime``).
    public var minPrebufferTime: Double {
        get { setting(\.minPrebufferTime) }
        set { override(\.minPrebufferTime, newValue) }
    }

    /// Seconds buffered ahead at most (``PlayerConfiguration/maxPrebufferTime``).
    public var maxPrebufferTime: Double {
        get { setting(\.maxPrebufferTime) }
        set { override(\.maxPrebufferTime, newValue) }
    }

    /// Seconds buffered before playback resumes after a stall (``PlayerConfiguration/minRebufferTime``).
    public var minRebufferTime: Double {
        get { setting(\.minRebufferTime) }
        set { override(\.minRebufferTime, newValue) }
    }

    /// A setting of the current configuration (or the defaults) with the player's settings applied.
    private func setting<Value>(_ path: KeyPath<PlayerConfiguration, Value>) -> Value {
        shared.withLock { shared in
            shared.overrides.applied(to: shared.content ?? PlayerConfiguration(with: URL(fileURLWithPath: "/")))
        }[keyPath: path]
    }

    /// Sets a player-level setting and has the engine apply it.
    private func override<Value>(_ path: WritableKeyPath<PlayerOverrides, Value?>, _ value: Value) {
        shared.withLock { $0.overrides[keyPath: path] = value }
        send(.reconfigure)
    }
}
