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
    }

    /// Background fetches of `getThumbnail` misses at a time. A scrub misses one sheet after another; fetching each
    /// at once splits the link between sheets the pointer has already left, so one runs at a time and the misses
    /// waiting for it are taken newest first: the sheet under the pointer now is the next one fetched
    /// (`FilmstripBench scrub`).
    static let missConcurrency = 1

    let state: Mutex<State>
    let sheets: MemoryCache<SheetKey, DecodedSheet>
    /// Downloaded sheet bytes, kept only when there is no disk cache (see
    /// ``ThumbnailsConfiguration/encodedSheetMemoryLimit``).
    let encodedSheets: MemoryCache<SheetKey, Data>
    let thumbnails: MemoryCache<ThumbnailKey, Thumbnail>
    /// Sheets queued by ``prefetch(around:direction:)``.
    let prefetchQueue = PrefetchQueue()
    /// A live source's reload loop and change streams.
    let liveTracking = LiveTracking()
    /// Loads with a completion handler, prefetch workers and misses' fetches under way.
    let background = BackgroundTasks()
    /// Striped locks so two callers never decode the same sheet at once (the second waits and finds it cached).
    private let sheetLocks: [NSLock] = (0..<64).map { _ in NSLock() }
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
        sheets = MemoryCache(costLimit: configuration.decodedSheetMemoryLimit)
        encodedSheets = MemoryCache(costLimit: configuration.encodedSheetMemoryLimit)
        thumbnails = MemoryCache(costLimit: configuration.thumbnailMemoryLimit)
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

    /// Whether sheet `sheet` can be had without the network (inside the track, kept in memory, or on disk).
    func isLocal(_ source: ThumbnailSource, sheet: Int) -> Bool {
        let key = source.sheetKey(sheet)
        if source.embedded != nil || sheets.value(for: key) != nil || encodedSheets.value(for: key) != nil {
            return true
        }
        return loader.hasLocalCopy(of: source.sheets[sheet], range: source.sheetRanges[sheet])
    }

    /// Whether the entry's thumbnail or its decoded sheet is in memory.
    func hasInMemory(_ source: ThumbnailSource, entry: ThumbnailEntry) -> Bool {
        thumbnails.value(for: source.thumbnailKey(entry)) != nil
            || sheets.value(for: source.sheetKey(entry.sheet)) != nil
            || encodedSheets.value(for: source.sheetKey(entry.sheet)) != nil
    }

    /// Identifies the loaded source; changes with every load and reset.
    var sourceGeneration: Int? { state.withLock { $0.source?.generation } }

    /// The distinct images of the loaded source.
    public var imageURLs: [URL] { state.withLock { $0.source?.sheets ?? [] } }

    /// Bytes held in memory by decoded sheets and encoded thumbnails.
    public var memoryUsage: Int { sheets.totalCost + thumbnails.totalCost + encodedSheets.totalCost }

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
        encodedSheets.removeAll()
        if configuration.loadingMode == .eager {
            try await fetchAllSheets(source)
        }
        try ensureCurrent(source.generation)
        state.withLock { $0.source = source }
        sheets.removeAll()
        thumbnails.removeAll()
    }

    /// Fetches every sheet into the local cache with bounded concurrency; the first failure fails the load.
    private func fetchAllSheets(_ source: ThumbnailSource) async throws {
        let urls = source.sheets
        let width = max(1, configuration.maximumConcurrentDownloads)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func addNext() {
                guard next < urls.count else { return }
                let sheet = next
                next += 1
                group.addTask { [self] in
                    try ensureCurrent(source.generation)
                    _ = try await fetchSheet(source, sheet: sheet)
                }
            }
            for _ in 0..<width { addNext() }
            while try await group.next() != nil { addNext() }
        }
    }

    /// The bytes of a sheet: from disk for `file:` URLs, otherwise through the cache (or only the cache offline).
    /// Bytes that are not a JPEG or PNG within the size limit are refused and never stored. Without a disk cache,
    /// remote bytes are kept in memory under `key`, so the sheet is not downloaded again.
    func fetchSheet(_ source: ThumbnailSource, sheet: Int) async throws -> Data {
        if let inside = source.embeddedBytes(ofSheet: sheet) { return inside }
        let key = source.sheetKey(sheet)
        if let kept = encodedSheets.value(for: key) { return kept }
        let url = source.sheets[sheet]
        let limits = configuration.imageLimits
        let policy: ResourceLoader.CachePolicy = configuration.offline ? .cacheOnly : .cacheFirst
        let data = try await loader.data(for: url, range: source.sheetRanges[sheet], policy: policy) { data in
            try limits.validateHeader(ImageCodec.info(data))
        }
        if loader.diskCache == nil, !url.isFileURL { encodedSheets.insert(data, for: key, cost: data.count) }
        return data
    }

    // MARK: Lookup

    /// The thumbnail for `timestamp` (seconds) under ``lookupPolicy``, from memory or the local cache.
    ///
    /// Returns `nil` when no cue applies, when nothing is loaded, or (lazy mode) when the image is not local yet;
    /// in that case its download starts, and ``thumbnail(at:)`` waits for it.
    public func getThumbnail(atTimestamp timestamp: Double) -> Thumbnail? {
        let (source, policy) = state.withLock { ($0.source, $0.policy) }
        guard let source, let entry = source.entry(at: timestamp, policy: policy) else { return nil }
        if let cached = thumbnails.value(for: source.thumbnailKey(entry)) {
            return cached
        }
        do {
            if let thumbnail = try render(entry, source: source, data: nil) { return thumbnail }
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
            if let thumbnail = try render(entry, source: source, data: nil) { return thumbnail }
            let data = try await fetchSheet(source, sheet: entry.sheet)
            return try render(entry, source: source, data: data)
        } catch {
            throw ThumbnailsError.wrap(error, url: url)
        }
    }

    /// Crops and encodes the entry's thumbnail; `nil` when the sheet is neither decoded, nor local, nor given.
    private func render(_ entry: ThumbnailEntry, source: ThumbnailSource, data: Data?) throws -> Thumbnail? {
        let key = source.thumbnailKey(entry)
        if let cached = thumbnails.value(for: key) { return cached }
        let url = source.sheets[entry.sheet]
        let start = Double(entry.startMilliseconds) / 1000
        let end = Double(entry.endMilliseconds) / 1000
        let thumbnail: Thumbnail
        if case .whole = entry.placement {
            // A whole-image cue: hand over the file as it is, no decode and re-encode.
            guard let bytes = try data ?? localBytes(source, sheet: entry.sheet) else { return nil }
            let info = try ImageCodec.info(bytes)
            try configuration.imageLimits.validateHeader(info)
            thumbnail = Thumbnail(
                imageData: bytes, format: info.format, timeStampStart: start, timeStampEnd: end, sourceURL: url,
                region: nil, width: info.width, height: info.height)
        } else {
            guard let sheet = try decodedSheet(source: source, sheet: entry.sheet, data: data) else { return nil }
            let rect = try entry.rect(sheetWidth: sheet.pixels.width, sheetHeight: sheet.pixels.height)!
            let crop = try sheet.pixels.cropped(x: rect.x, y: rect.y, width: rect.width, height: rect.height)
            let encoded =
                switch sheet.format {
                case .jpeg:
                    try JPEGCodec.encode(
                        crop, quality: configuration.jpegQuality, subsampling: configuration.jpegChromaSubsampling)
                case .webp: try WebPCodec.encode(crop, quality: configuration.jpegQuality)
                case .png: try ImageCodec.encode(crop, as: .png)
                }
            thumbnail = Thumbnail(
                imageData: Data(encoded), format: sheet.format, timeStampStart: start, timeStampEnd: end,
                sourceURL: url, region: rect, width: rect.width, height: rect.height)
        }
        thumbnails.insert(thumbnail, for: key, cost: thumbnail.imageData.count + 256)
        return thumbnail
    }

    /// The sheet's bytes without the network: inside the track (BIF), kept in memory (no disk cache), or the
    /// local file or cache entry.
    private func localBytes(_ source: ThumbnailSource, sheet: Int) throws -> Data? {
        if let inside = source.embeddedBytes(ofSheet: sheet) { return inside }
        if let kept = encodedSheets.value(for: source.sheetKey(sheet)) { return kept }
        return loader.localData(for: source.sheets[sheet], range: source.sheetRanges[sheet])
    }

    /// The decoded sheet from memory, else decoded from `data` or the local file; `nil` when there are no bytes.
    func decodedSheet(source: ThumbnailSource, sheet: Int, data: Data?) throws -> DecodedSheet? {
        let key = source.sheetKey(sheet)
        if let decoded = sheets.value(for: key) { return decoded }
        let lock = sheetLocks[abs(key.hashValue % 64)]
        lock.lock()
        defer { lock.unlock() }
        if let decoded = sheets.value(for: key) { return decoded }
        let url = source.sheets[sheet]
        guard let bytes = try data ?? localBytes(source, sheet: sheet) else { return nil }
        let decoded: DecodedSheet
        do {
            let (pixels, format) = try ImageCodec.decode(bytes, limits: configuration.imageLimits)
            decoded = DecodedSheet(pixels: pixels, format: format)
        } catch {
            // A damaged cache entry is dropped so the next request fetches the image again.
            if !url.isFileURL { loader.diskCache?.remove(url, range: source.sheetRanges[sheet]) }
            throw ThumbnailsError.wrap(error, url: url)
        }
        sheets.insert(decoded, for: key, cost: decoded.pixels.byteCount)
        return decoded
    }
}
