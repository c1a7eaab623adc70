@_exported public import FilmstripFormats
@_exported public import FilmstripImaging
@_exported public import FilmstripLoading
@_exported public import FilmstripMedia
@_exported public import FilmstripPlayer
@_exported public import FilmstripPreviews
@_exported public import FilmstripStreaming
import FilmstripSync
@_exported public import FilmstripThumbnails
public import Foundation

/// The Filmstrip SDK entry point.
///
/// ```swift
/// import Filmstrip
///
/// let thumbnails = Filmstrip.shared.thumbnails()
/// thumbnails.loadThumbnailsFrom(webVTTtrack: trackURL) { error in
///     guard error == nil else { return }
///     let thumbnail = thumbnails.getThumbnail(atTimestamp: 12.0)   // imageData, timeStampStart, timeStampEnd
/// }
/// ```
public final class Filmstrip: Sendable {
    /// The shared SDK instance.
    public static let shared = Filmstrip()

    /// The thumbnail engines.
    public enum ThumbnailEngine: String, Sendable, Hashable, CaseIterable {
        /// Preview tracks in every format (WebVTT, grids, HLS image playlists, DASH tiles, BIF, storyboard JSON), with
        /// disk cache and offline reuse.
        case tracks
    }

    /// The `.frames` engine: previews from a video's or stream's own keyframes (see ``FrameThumbnails``).
    public struct FrameEngine: Sendable, Hashable {
        /// Selects the `.frames` engine: `Filmstrip.shared.thumbnails(engine: .frames)`.
        public static let frames = FrameEngine()
    }

    /// A `.frames` thumbnails engine; ``FrameThumbnails/load(url:)`` gives it a video or stream.
    ///
    /// ```swift
    /// let frames = Filmstrip.shared.thumbnails(engine: .frames)
    /// try await frames.load(url: streamURL)
    /// let preview = try await frames.thumbnail(at: 754)
    /// ```
    public func thumbnails(engine: FrameEngine, configuration: FrameThumbnailsConfiguration? = nil) -> FrameThumbnails {
        FrameThumbnails(configuration: frameSettings(configuration))
    }

    /// `configuration`, or the defaults with the SDK's loading settings.
    private func frameSettings(_ configuration: FrameThumbnailsConfiguration?) -> FrameThumbnailsConfiguration {
        guard let configuration else {
            var settings = FrameThumbnailsConfiguration()
            settings.loading = thumbnailsConfiguration.loading
            return settings
        }
        return configuration
    }

    /// A `.frames` engine loaded with the player's content (the URL of its last `load` or `open(config:)`), whose
    /// requests carry the player's network settings (``Player/networkSettings``: headers, resource timeout, address
    /// policy; headers set in an explicit `configuration` win over the player's).
    ///
    /// ```swift
    /// player.open(config: PlayerConfiguration(with: streamURL))
    /// let frames = try await Filmstrip.shared.thumbnails(for: player, engine: .frames)
    /// let preview = try await frames.thumbnail(at: scrubTime)
    /// ```
    ///
    /// Throws ``MediaError/Kind/invalidArgument`` when the player has no content yet, and the engine's load errors.
    public func thumbnails(
        for player: Player, engine: FrameEngine, configuration: FrameThumbnailsConfiguration? = nil
    ) async throws -> FrameThumbnails {
        guard let content = player.currentContent else {
            throw MediaError(.invalidArgument, "the player has no content: load or open a configuration first")
        }
        var settings = frameSettings(configuration)
        settings.loading = content.network.applied(to: settings.loading, headersWin: configuration == nil)
        let frames = FrameThumbnails(configuration: settings)
        try await frames.load(url: content.url)
        return frames
    }

    private let defaults = Mutex(ThumbnailsConfiguration())
    private let playerSettings = Mutex(PlayerSettings())
    /// What players made from now on get.
    private struct PlayerSettings {
        var rateRanges: [PlayerEngine: ClosedRange<Double>] = [:]
        var network: NetworkConfiguration?
        var onError: (@Sendable (PlayerError) -> Void)?
        /// The clock set with ``setPlayerClock(_:date:)``, if any.
        var clock: PlayerClock?
    }
    /// A clock for players and the wall clock that goes with it. (A class: a tuple holding the existential, copied
    /// out of the mutex, crashed the compiler under `-sanitize=thread`.)
    private final class PlayerClock: Sendable {
        let clock: any Clock<Duration>
        let date: @Sendable () -> Date

        init(_ clock: any Clock<Duration>, date: @escaping @Sendable () -> Date) {
            (self.clock, self.date) = (clock, date)
        }
    }
    /// Loaders are shared by engines whose cache and loading settings are equal.
    private struct LoaderKey: Hashable {
        var cacheDirectory: URL?
        var diskCacheLimit: Int
        var loading: LoadingConfiguration
    }

    private let loaders = Mutex([LoaderKey: ResourceLoader]())

    /// Creates an SDK instance; most apps use ``shared``.
    public init() {}

    // MARK: Players

    /// A new player. Its playback-rate range and network settings come from the SDK-wide settings, and its errors
    /// also reach ``onError``.
    public func player(engine: PlayerEngine = .filmstrip) -> Player {
        let (range, network, clock) = playerSettings.withLock { ($0.rateRanges[engine], $0.network, $0.clock) }
        let policy = PlaybackRatePolicy(engine: engine, range: range)
        let errors: @Sendable (PlayerError) -> Void = { [weak self] error in self?.onError?(error) }
        guard let clock else { return Player(ratePolicy: policy, network: network, errors: errors) }
        return Player(ratePolicy: policy, network: network, errors: errors, clock: clock.clock, date: clock.date)
    }

    /// Runs players made from now on on `clock`, with `date` for their wall clock (see
    /// `Player.init(ratePolicy:network:errors:clock:date:)`); `nil` goes back to the system's clocks. Tests of an app
    /// hand in a test clock here.
    public func setPlayerClock(_ clock: (any Clock<Duration>)?, date: @escaping @Sendable () -> Date = { Date() }) {
        playerSettings.withLock { $0.clock = clock.map { PlayerClock($0, date: date) } }
    }

    /// Sets the playback-rate range of an engine for players made from now on (a negative lower bound allows reverse
    /// playback, see `TrickPlayMode`).
    public func setPlaybackRateRange(of engine: PlayerEngine, to range: ClosedRange<Double>) {
        playerSettings.withLock { $0.rateRanges[engine] = range }
    }

    /// The playback-rate range of an engine for new players.
    public func playbackRateRange(of engine: PlayerEngine) -> ClosedRange<Double> {
        PlaybackRatePolicy(engine: engine, range: playerSettings.withLock { $0.rateRanges[engine] }).range
    }

    /// Network settings for every player; a player's own configuration wins field by field.
    public var networkConfiguration: NetworkConfiguration? {
        get { playerSettings.withLock { $0.network } }
        set { playerSettings.withLock { $0.network = newValue } }
    }

    /// The SDK-level error handler: warnings, recoverable errors (state timeouts) and fatal errors of every player
    /// made with ``player(engine:)``.
    public var onError: (@Sendable (PlayerError) -> Void)? {
        get { playerSettings.withLock { $0.onError } }
        set { playerSettings.withLock { $0.onError = newValue } }
    }

    /// The player's thumbnails API (the `.tracks` engine): one engine per player, so a track loaded through one call
    /// is found through a later one, for as long as the player lives.
    ///
    /// ```swift
    /// Filmstrip.shared.thumbnails(for: player).loadThumbnailsFrom(webVTTtrack: url) { error in … }
    /// // later, elsewhere:
    /// let preview = Filmstrip.shared.thumbnails(for: player).getThumbnail(atTimestamp: 12)
    /// ```
    ///
    /// The first call makes the engine (with `configuration`, or the SDK-wide ``thumbnailsConfiguration``); later
    /// calls without a configuration return it. A call with a configuration makes a new engine, which becomes the
    /// player's from then on. The engine's requests carry the player's network settings as they are when it is made
    /// (``Player/networkSettings``: headers, resource timeout, address policy); headers set in an explicit
    /// `configuration` win over the player's.
    public func thumbnails(
        for player: Player, engine: ThumbnailEngine = .tracks, configuration: ThumbnailsConfiguration? = nil
    ) -> TrackThumbnails {
        let key = ObjectIdentifier(player)
        if configuration == nil, let existing = playerThumbnails.withLock({ $0[key] }), existing.player === player {
            return existing.engine
        }
        var settings = configuration ?? thumbnailsConfiguration
        settings.loading = player.networkSettings.applied(to: settings.loading, headersWin: configuration == nil)
        let made = thumbnails(engine: engine, configuration: settings)
        playerThumbnails.withLock { table in
            // Entries of players that are gone are dropped (an identifier can be reused by a later player).
            table = table.filter { $0.value.player != nil }
            table[key] = PlayerThumbnails(player: player, engine: made)
        }
        return made
    }

    /// A player's thumbnails engine, held while the player lives.
    private final class PlayerThumbnails: Sendable {
        weak let player: Player?
        let engine: TrackThumbnails

        init(player: Player, engine: TrackThumbnails) {
            self.player = player
            self.engine = engine
        }
    }

    private let playerThumbnails = Mutex([ObjectIdentifier: PlayerThumbnails]())

    /// SDK-wide defaults for new thumbnails APIs.
    public var thumbnailsConfiguration: ThumbnailsConfiguration {
        get { defaults.withLock { $0 } }
        set { defaults.withLock { $0 = newValue } }
    }

    /// A thumbnails API. Engines made with the same cache directory and loading settings share one loader (one
    /// URL session, one disk cache index, one set of in-flight downloads).
    public func thumbnails(
        engine: ThumbnailEngine = .tracks, configuration: ThumbnailsConfiguration? = nil
    )
        -> TrackThumbnails
    {
        let configuration = configuration ?? thumbnailsConfiguration
        let key = LoaderKey(
            cacheDirectory: configuration.cacheDirectory?.standardizedFileURL,
            diskCacheLimit: configuration.diskCacheLimit, loading: configuration.loading)
        // An interceptor is the caller's own: such an engine gets a loader of its own.
        if configuration.requestInterceptor != nil {
            return TrackThumbnails(configuration: configuration)
        }
        let loader = loaders.withLock { loaders -> ResourceLoader in
            if let existing = loaders[key] { return existing }
            let made = ResourceLoader(
                configuration: configuration.loading,
                diskCache: configuration.cacheDirectory.map {
                    DiskCache(directory: $0, sizeLimit: configuration.diskCacheLimit)
                },
                logger: configuration.logger)
            loaders[key] = made
            return made
        }
        switch engine {
        case .tracks: return TrackThumbnails(configuration: configuration, loader: loader)
        }
    }
}
