public import FilmstripStreaming
public import Foundation

/// Which engine plays the content. This build has one: Filmstrip's own (HLS and DASH over the streaming layer,
/// files and progressive MP4 through FFmpeg). A platform engine would be added only where the platform has one.
public enum PlayerEngine: String, Sendable, Hashable, Codable, CaseIterable {
    /// Filmstrip's own engine (FFmpeg-based): rates from 0 upwards by default; widened with
    /// `Filmstrip.setPlaybackRateRange(of:to:)`, it plays backwards too (see ``TrickPlayMode``).
    case filmstrip

    /// The default playback-rate range (SPEC 4.2): Filmstrip's own engine, 0 and up.
    public var defaultRateRange: ClosedRange<Double> { 0...Double.greatestFiniteMagnitude }
}

/// CMCD settings for a player (SPEC 4.6).
public struct CmcdConfiguration: Sendable, Hashable {
    /// How the data travels.
    public enum Mode: String, Sendable, Hashable, Codable {
        /// `CMCD-Object`, `CMCD-Request`, `CMCD-Session` and `CMCD-Status` headers.
        case headers
        /// One `CMCD=` query parameter.
        case query
    }

    /// The session id (`sid`); a UUID by default.
    public var sessionID: String
    /// The content id (`cid`), if any.
    public var contentID: String?
    /// Headers or query. Default headers.
    public var mode: Mode
    /// The keys to send; `nil` sends every key that has a value.
    public var keys: Set<String>?

    /// Creates a configuration.
    public init(
        sessionID: String = UUID().uuidString.lowercased(), contentID: String? = nil, mode: Mode = .headers,
        keys: Set<String>? = nil
    ) {
        self.sessionID = sessionID
        self.contentID = contentID
        self.mode = mode
        self.keys = keys
    }
}

/// What a player plays and how (SPEC 4.2–4.6).
public struct PlayerConfiguration: Sendable, Hashable {
    /// The content: a file URL, a progressive http(s) video, an HLS playlist or a DASH MPD.
    public var url: URL
    /// Live settings (used when the content is live).
    public var live = LiveConfiguration()
    /// State timeouts; `nil` disables all. Default: the SPEC 4.4 table.
    public var stateTimeouts: StateTimeoutConfiguration? = StateTimeoutConfiguration()
    /// The player's network settings (they win over the SDK-wide ones).
    public var network: NetworkConfiguration?
    /// CMCD; `nil` (the default) sends none.
    public var cmcd: CmcdConfiguration?
    /// Seconds to buffer before starting. Default 2.
    public var minPrebufferTime: Double = 2
    /// Seconds to buffer ahead at most. Default 30.
    public var maxPrebufferTime: Double = 30
    /// Seconds to buffer before resuming after a stall. Default 2.
    public var minRebufferTime: Double = 2
    /// Whether `open(autoplay: true)` may start playback. Default ``AutoplayPolicy/allowed``.
    public var autoplayPolicy = AutoplayPolicy.allowed
    /// The audio language to play (a BCP 47 tag such as `fr` or `en-US`; `eng` also matches `en`), chosen among a
    /// stream's audio renditions; without a match, the default track (HLS `DEFAULT=YES`, DASH Role `main`), else an
    /// `AUTOSELECT` one, else the first. See ``AudioTrackSelection``.
    public var preferredAudioLanguage: String?
    /// How HLS streams are fetched: retries, the missing-segment policy, adaptive bitrate.
    public var streaming = StreamingConfiguration()
    /// The engine to play with, as other player SDKs select it (`config.preferredEngine = …`). One choice today,
    /// Filmstrip's own; a player opened with a configuration that names another engine than its own
    /// (``Filmstrip/player(engine:)``) fails with `source_invalid` and says which.
    public var preferredEngine = PlayerEngine.filmstrip
    /// Keys of content protected with Common Encryption (`cenc` or `cbcs` in fMP4, ClearKey), by key id; held in
    /// memory only. Protected samples are decrypted before decoding; without their key the player fails with
    /// `drm_failed` and shows no picture.
    public var contentKeys = ContentKeys()
    /// A W3C ClearKey licence server, asked once per key id ``contentKeys`` does not hold. Its requests carry the
    /// network configuration's headers, are held to its address policy, and time out after
    /// `timeoutIntervalForDrmAcquisitionMs` (10 s when unset); a refused, malformed or late licence is `drm_failed`.
    public var licenseURL: URL?

    /// Creates a configuration for `url` with the defaults. When `url` is a ``Download`` (its folder or its master
    /// playlist), the configuration plays its local master and restores its stored licence's keys, as
    /// ``init(with:)-(Download)`` does.
    public init(with url: URL) {
        guard let download = Download.containing(url) else {
            self.url = url
            return
        }
        self.url = download.manifestURL
        contentKeys = (try? download.contentKeys()) ?? ContentKeys()
    }

    /// Creates a configuration that plays `download` offline: its local master playlist, with the keys of its stored
    /// licence (a protected download made without keys needs ``contentKeys`` or ``licenseURL`` set; one whose
    /// licence no longer reads plays as if it had none and fails with `drm_failed`).
    public init(with download: Download) {
        self.init(with: download.manifestURL)
    }
}

/// The playback-rate policy of one engine: its range (set SDK-wide) and what a requested rate becomes.
public struct PlaybackRatePolicy: Sendable, Hashable {
    /// The engine.
    public let engine: PlayerEngine
    /// The allowed range.
    public let range: ClosedRange<Double>

    /// A policy over `range` (by default the engine's); a negative lower bound allows reverse playback.
    public init(engine: PlayerEngine, range: ClosedRange<Double>? = nil) {
        self.engine = engine
        self.range = range ?? engine.defaultRateRange
    }

    /// The rate the engine will use for `requested`, whether audio plays at it, and a warning when it was clamped.
    public func resolve(_ requested: Double) -> (rate: Double, audioMuted: Bool, warning: PlayerError?) {
        guard requested.isFinite else {
            return (
                1, false,
                PlayerError(
                    .playbackRateClamped, severity: .warning, "the rate \(requested) is not a number; 1 is used")
            )
        }
        let rate = min(max(requested, range.lowerBound), range.upperBound)
        var warning: PlayerError?
        if rate != requested {
            warning = PlayerError(
                .playbackRateClamped, severity: .warning,
                "the rate \(requested) was clamped to \(rate): the \(engine.rawValue) engine allows \(range)")
        }
        return (rate, rate < 0 || rate > 2, warning)
    }
}

/// How the streaming engine fetches an HLS or DASH stream (SPEC 4.7).
public struct StreamingConfiguration: Sendable, Hashable {
    /// What happens to a segment the server keeps refusing (an HTTP error status after every retry).
    public enum MissingSegmentPolicy: String, Sendable, Hashable, Codable {
        /// Skip it with a `segment_skipped` warning; playback jumps over its time (the default, as broadcast
        /// players do: a hole of one segment beats a stopped stream).
        case skip
        /// Stop with a fatal `source_unavailable` error.
        case fail
    }

    /// Attempts after the first failed request of a segment, with exponential backoff from 0.25 s. Default 3.
    public var segmentRetries = 3
    /// What to do with a segment that still fails. Default ``MissingSegmentPolicy/skip``.
    public var missingSegmentPolicy = MissingSegmentPolicy.skip
    /// Whether to switch renditions by the measured bandwidth. Default true; false stays on ``startRendition``.
    public var adaptiveBitrate = true
    /// The rendition to start with, as an index into the renditions ordered by bandwidth. Default 0, the lowest
    /// (the first segment comes soonest).
    public var startRendition = 0

    /// The defaults.
    public init() {}
}
