public import FilmstripFormats
import FilmstripImaging
public import FilmstripLoading
import FilmstripSync
public import Foundation
import Logging

/// The `.tracks` thumbnails engine: loads WebVTT thumbnail tracks and grid templates, keeps their images in a disk
/// cache, and answers "which thumbnail at second t" from memory in microseconds.
///
/// ```swift
/// let thumbnails = Filmstrip.shared.thumbnails()
/// try await thumbnails.load(webVTTTrack: URL(string: "https://cdn.example/movie/thumbs.vtt")!)
/// if let thumbnail = thumbnails.getThumbnail(atTimestamp: 12.0) {
///     show(thumbnail.imageData, from: thumbnail.timeStampStart, to: thumbnail.timeStampEnd)
/// }
/// ```
///
/// Memory is bounded by bytes, not by a thumbnail count: decoded sheets and encoded thumbnails live in
/// least-recently-used caches (``ThumbnailsConfiguration/decodedSheetMemoryLimit`` and
/// ``ThumbnailsConfiguration/thumbnailMemoryLimit``); ``purgeMemory()`` empties them.
public final class TrackThumbnails: Sendable {
    /// The configuration the engine was made with.
    public let configuration: ThumbnailsConfiguration
    /// The loader used for tracks and images.
    public let loader: ResourceLoader

    struct State {
        var source: ThumbnailSource?
        var loadGeneration = 0
        var policy: ThumbnailLookupPolicy
        var completionTasks: [Int: Task<Void, Never>] = [:]
        /// Sheets with a background fetch under way (lazy misses), so repeated misses start one fetch.
        var pendingFetches: Set<SheetKey> = []
        /// Background fetches of misses under way, at most ``TrackThumbnails/missConcurrency``.
        var missFetches = 0
        /// Misses that found the slot taken, the latest last: each is fetched in turn, newest first.
        var waitingMisses: [(url: URL, source: ThumbnailSource, sheet: Int)] = []
        /// Prefetches waiting for the misses' fetches to end (``TrackThumbnails/missesSettled()``).
        var missWaiters = Waiters()
    }

    /// Background fetches of `getThumbnail` misses at a time. A scrub misses one sheet after another; fetching each
    /// at once splits the link between sheets the pointer has already left, so one runs at a time and the misses
    /// waiting for it are taken newest first: the sheet under the pointer now is the next one fetched
    /// (`FilmstripBench scrub`).
    static let missConcurrency = 1

    let state: Mutex<State>
    /// The images: fetched, decoded and cut into thumbnails, in memory caches bounded by bytes.
    let store: SheetStore
    /// Sheets queued by ``prefetch(around:direction:)``.
    let prefetchQueue = PrefetchQueue()
    /// A live source's reload loop and change streams.
    let liveTracking = LiveTracking()
    /// Loads with a completion handler, prefetch workers and misses' fetches under way.
    let background = BackgroundTasks()
    let logger: Logger

    /// Creates an engine. Without a `loader`, one is made from the configuration (its disk cache in
    /// ``ThumbnailsConfiguration/cacheDirectory``, its interceptor ``ThumbnailsConfiguration/requestInterceptor``).
    public init(configuration: ThumbnailsConfiguration = ThumbnailsConfiguration(), loader: ResourceLoader? = nil) {
        self.configuration = configuration
        let logger =
            configuration.logger ?? Logger(label: "filmstrip.thumbnails", factory: { _ in SwiftLogNoOpLogHandler() })
        self.logger = logger
        self.loader =
            loader
            ?? ResourceLoader(
                configuration: configuration.loading,
                diskCache: configuration.cacheDirectory.map {
                    DiskCache(directory: $0, sizeLimit: configuration.diskCacheLimit)
                },
                logger: logger, interceptor: configuration.requestInterceptor)
        state = Mutex(State(policy: configuration.lookupPolicy))
        store = SheetStore(configuration: configuration, loader: self.loader)
    }

    // MARK: State

    /// How a time maps to a cue; starts as ``ThumbnailsConfiguration/lookupPolicy``.
    public var lookupPolicy: ThumbnailLookupPolicy {
        get { state.withLock { $0.policy } }
        set { state.withLock { $0.policy = newValue } }
    }

    /// Whether a track or grid is loaded.
    public var isLoaded: Bool { state.withLock { $0.source != nil } }

    /// The loaded WebVTT track, if the source is a track.
    public var track: ThumbnailTrack? {
        guard case .track(let track, _)? = state.withLock({ $0.source?.kind }) else { return nil }
        return track
    }

    /// The loaded grid, if the source is a grid.
    public var grid: GridThumbnail? {
        guard case .grid(let grid)? = state.withLock({ $0.source?.kind }) else { return nil }
        return grid
    }

    /// The format of the loaded source.
    var sourceFormat: ThumbnailFormat? { state.withLock { $0.source?.format } }

    /// The loaded source.
    var currentSource: ThumbnailSource? { state.withLock { $0.source } }

    /// Swaps in a live source's next version, unless a newer load or a reset replaced its load; returns whether it
    /// did.
    func replaceSource(_ source: ThumbnailSource) -> Bool {
        state.withLock { s in
            guard s.loadGeneration == source.generation, s.source?.generation == source.generation else { return false }
            s.source = source
            return true
        }
    }

    /// Identifies the loaded source; changes with every load and reset.
    var sourceGeneration: Int? { state.withLock { $0.source?.generation } }

    /// The distinct images of the loaded source.
    public var imageURLs: [URL] { state.withLock { $0.source?.sheets ?? [] } }

    /// Bytes held in memory by decoded sheets and encoded thumbnails.
    public var memoryUsage: Int { store.memoryUsage }

    // MARK: Loading

    /// Loads a WebVTT thumbnail track; since sources are told by content, this is ``load(track:)``, and a `.vtt`
    /// that holds a playlist loads as a playlist.
    ///
    /// A track fetched over http(s) may not refer to `file:` URLs: strict parsing fails, lenient parsing skips the
    /// cue with a diagnostic (see ``track``).
    public func load(webVTTTrack url: URL) async throws {
        try await load(track: url)
    }

    /// Loads a grid template. In eager mode every sheet from the first index to `maxIndex` is fetched first.
    public func load(gridThumbnail grid: GridThumbnail) async throws {
        let generation = beginLoad()
        do {
            try await install(ThumbnailSource(grid: grid, generation: generation))
        } catch {
            throw ThumbnailsError.wrap(error, url: grid.baseUrl)
        }
    }

    /// Loads a WebVTT thumbnail track and calls `completion` once: with `nil` when ready, or with the error.
    public func loadThumbnailsFrom(webVTTtrack url: URL, completion: @escaping @Sendable ((any Error)?) -> Void) {
        runWithCompletion(completion) { try await $0.load(webVTTTrack: url) }
    }

    /// Loads a grid template and calls `completion` once: with `nil` when ready, or with the error.
    public func loadThumbnailsFrom(
        gridThumbnail grid: GridThumbnail, completion: @escaping @Sendable ((any Error)?) -> Void
    ) {
        runWithCompletion(completion) { try await $0.load(gridThumbnail: grid) }
    }

    private func runWithCompletion(
        _ completion: @escaping @Sendable ((any Error)?) -> Void,
        _ body: @escaping @Sendable (TrackThumbnails) async throws -> Void
    ) {
        let id = state.withLock { $0.loadGeneration + 1 }
        let task = background.start { [self] in
            defer { _ = state.withLock { $0.completionTasks.removeValue(forKey: id) } }
            do {
                try await body(self)
                completion(nil)
            } catch {
                completion(error)
            }
        }
        state.withLock { $0.completionTasks[id] = task }
    }

    func beginLoad() -> Int {
        liveTracking.replace(nil)
        prefetchQueue.clear()
        return state.withLock { s in
            s.loadGeneration += 1
            s.waitingMisses.removeAll()
            return s.loadGeneration
        }
    }

    private func ensureCurrent(_ generation: Int) throws {
        let current = state.withLock { $0.loadGeneration }
        guard current == generation else {
            throw ThumbnailsError(.cancelled, "a newer load or reset() replaced this load")
        }
        try Task.checkCancellation()
    }

    func install(_ source: ThumbnailSource) async throws {
        try ensureCurrent(source.generation)
        store.encodedSheets.removeAll()
        if configuration.loadingMode == .eager {
            try await store.fetchAll(source, width: configuration.maximumConcurrentDownloads) { [self] in
                try ensureCurrent(source.generation)
            }
        }
        try ensureCurrent(source.generation)
        state.withLock { $0.source = source }
        store.sheets.removeAll()
        store.thumbnails.removeAll()
    }

    // MARK: Lookup

    /// The thumbnail for `timestamp` (seconds) under ``lookupPolicy``, from memory or the local cache.
    ///
    /// Returns `nil` when no cue applies, when nothing is loaded, or (lazy mode) when the image is not local yet;
    /// in that case its download starts, and ``thumbnail(at:)`` waits for it.
    public func getThumbnail(atTimestamp timestamp: Double) -> Thumbnail? {
        let (source, policy) = state.withLock { ($0.source, $0.policy) }
        guard let source, let entry = source.entry(at: timestamp, policy: policy) else { return nil }
        if let cached = store.thumbnails.value(for: source.thumbnailKey(entry)) {
            return cached
        }
        do {
            if let thumbnail = try store.render(entry, source: source, data: nil) { return thumbnail }
        } catch {
            logger.warning(
                "thumbnail unavailable", metadata: ["time": "\(timestamp)", "error": "\(error)"])
            return nil
        }
        startBackgroundFetch(source.sheets[entry.sheet], source: source, sheet: entry.sheet)
        return nil
    }

    /// The thumbnail for `timestamp`, fetching its image first if it is not local.
    ///
    /// - Returns: `nil` when no cue applies.
    /// - Throws: ``ThumbnailsError`` when nothing is loaded or the image cannot be fetched or decoded.
    public func thumbnail(at timestamp: Double) async throws -> Thumbnail? {
        let (source, policy) = state.withLock { ($0.source, $0.policy) }
        guard let source else { throw ThumbnailsError(.notLoaded, "no thumbnail track or grid is loaded") }
        guard let entry = source.entry(at: timestamp, policy: policy) else { return nil }
        let url = source.sheets[entry.sheet]
        do {
            if let thumbnail = try store.render(entry, source: source, data: nil) { return thumbnail }
            let data = try await store.fetch(source, sheet: entry.sheet)
            return try store.render(entry, source: source, data: data)
        } catch {
            throw ThumbnailsError.wrap(error, url: url)
        }
    }
}
