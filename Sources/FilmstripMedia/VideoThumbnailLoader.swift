public import FilmstripFormats
import FilmstripImaging
public import FilmstripLoading
import FilmstripSync
public import Foundation
public import Logging

/// A thumbnail for one video in a list.
public struct VideoThumbnail: Sendable {
    /// The video it belongs to (compare it with the URL a reused cell now shows).
    public var videoURL: URL
    /// The thumbnail as JPEG.
    public var imageData: Data
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The time of the frame used, in seconds (`nil` for a poster image or an audio file's card).
    public var time: Double?
    /// Whether the file has audio alone and the image is its card (``AudioFileCard``: its cover picture, else a
    /// placeholder).
    public var isAudioOnly = false
}

/// How a ``VideoThumbnailLoader`` chooses a video's frame.
public enum PosterChoice: String, Sendable, Hashable {
    /// The keyframe at or before ``VideoThumbnailLoaderConfiguration/time``.
    case keyframe
    /// Among the first keyframes from ``VideoThumbnailLoaderConfiguration/time`` on (up to eight, within the first
    /// minute), the first that is neither black, uniform nor blurred (many videos open on black); if none is, the
    /// one that shows the most.
    case representative
}

/// Settings of a ``VideoThumbnailLoader``. Every property has a documented default.
public struct VideoThumbnailLoaderConfiguration: Sendable {
    /// Thumbnails fit inside this size, keeping the aspect ratio. Default 320x320.
    public var maximumSize = PixelSize(width: 320, height: 320)
    /// The moment to show: the keyframe at or before this time, clamped to the video. Default 0, the first
    /// keyframe (for HLS, the first keyframe of the first segment).
    public var time: Double = 0
    /// How the frame is chosen. Default ``PosterChoice/keyframe``.
    public var posterChoice = PosterChoice.keyframe
    /// The most thumbnails kept in memory. Default 100.
    public var countLimit = 100
    /// The most bytes of thumbnails kept in memory. Default 50 MB.
    public var memoryLimit = 50_000_000
    /// The disk cache directory; `nil` for none. Default `<default cache>/video-thumbnails`.
    public var cacheDirectory: URL? = DiskCache.defaultDirectory.appendingPathComponent(
        "video-thumbnails", isDirectory: true)
    /// The disk cache size limit in bytes. Default 256 MiB.
    public var diskCacheLimit = 256 << 20
    /// Videos decoded at once. Default 4.
    public var maximumConcurrentLoads = 4
    /// JPEG quality of the thumbnails. Default 85.
    public var jpegQuality = 85
    /// Timeouts, size limit, retries and headers for http(s) videos and posters.
    public var loading = LoadingConfiguration(maximumResponseSize: 16 << 20, requestTimeout: 15, resourceTimeout: 60)
    /// The HTTP transport; `nil` uses ``DefaultTransport/shared``.
    public var transport: (any DataLoading)?
    /// Where the loader logs; nothing by default.
    public var logger: Logger?

    /// The defaults.
    public init() {}
}

/// A request made with ``VideoThumbnailLoader/loadThumbnail(for:poster:completion:)``. Once ``cancel()`` has
/// returned, its completion is never called, so a reused table cell never receives the previous video's image.
public final class ThumbnailRequest: Sendable, Hashable {
    /// The video asked for.
    public let videoURL: URL
    private let state = Mutex<(cancelled: Bool, task: Task<Void, Never>?)>((false, nil))

    init(videoURL: URL) { self.videoURL = videoURL }

    /// Cancels the request: its completion will not be called. The shared load continues if others want it.
    public func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    func attach(_ task: Task<Void, Never>) {
        let cancelled = state.withLock { state -> Bool in
            state.task = task
            return state.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Calls `completion` unless cancelled; holds the lock while doing so, so `cancel()` either happens before
    /// (and the completion is skipped) or waits until the completion has returned.
    func deliver(_ body: () -> Void) {
        state.withLock { state in
            if !state.cancelled { body() }
        }
    }

    public static func == (a: ThumbnailRequest, b: ThumbnailRequest) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Loads a thumbnail for each of many videos (a gallery or a table of videos) off the caller's thread.
///
/// ```swift
/// let loader = VideoThumbnailLoader()
/// cell.request?.cancel()                       // the cell is being reused
/// cell.request = loader.loadThumbnail(for: video.url) { result in
///     if case .success(let thumbnail) = result { show(thumbnail.imageData) }   // never another video's image
/// }
/// loader.prefetch(upcomingURLs)                // and cancelPrefetch(_:) when they scroll away
/// ```
///
/// Memory holds at most ``VideoThumbnailLoaderConfiguration/countLimit`` thumbnails and
/// ``VideoThumbnailLoaderConfiguration/memoryLimit`` bytes, least recently used out first; the disk cache keeps
/// them across launches. Identical requests share one load, and at most
/// ``VideoThumbnailLoaderConfiguration/maximumConcurrentLoads`` videos are opened at once. Works for files,
/// progressive http(s) videos and HLS playlists; a poster image, when given, is used instead of decoding.
public final class VideoThumbnailLoader: Sendable {
    /// The configuration.
    public let configuration: VideoThumbnailLoaderConfiguration
    private let memory: MemoryCache<String, VideoThumbnail>
    private let disk: DiskCache?
    private let coalescer = RequestCoalescer<String, VideoThumbnail>()
    private let limiter: AsyncLimiter
    private let posters: ResourceLoader
    private let prefetches = Mutex<[URL: Task<Void, Never>]>([:])
    /// Requests with a completion handler and prefetches under way.
    private let background = BackgroundTasks()
    private let counters = Mutex((decoded: 0, fromDisk: 0))
    private let logger: Logger

    /// Creates a loader.
    public init(configuration: VideoThumbnailLoaderConfiguration = VideoThumbnailLoaderConfiguration()) {
        self.configuration = configuration
        memory = MemoryCache(costLimit: configuration.memoryLimit, countLimit: configuration.countLimit)
        disk = configuration.cacheDirectory.map { DiskCache(directory: $0, sizeLimit: configuration.diskCacheLimit) }
        limiter = AsyncLimiter(limit: configuration.maximumConcurrentLoads)
        logger =
            configuration.logger
            ?? Logger(label: "filmstrip.video-thumbnails", factory: { _ in SwiftLogNoOpLogHandler() })
        posters = ResourceLoader(
            configuration: configuration.loading, transport: configuration.transport ?? DefaultTransport.shared,
            diskCache: nil, logger: logger)
    }

    /// Thumbnails made by decoding and thumbnails read from the disk cache, so far.
    public var statistics: (decoded: Int, fromDisk: Int, inMemory: Int, memoryBytes: Int) {
        let (decoded, fromDisk) = counters.withLock { ($0.decoded, $0.fromDisk) }
        return (decoded, fromDisk, memory.count, memory.totalCost)
    }

    /// The thumbnail if it is in memory (no I/O; safe on the main thread).
    public func cachedThumbnail(for videoURL: URL, poster: URL? = nil) -> VideoThumbnail? {
        memory.value(for: key(videoURL, poster))
    }

    /// The thumbnail for a video: from memory, else the disk cache, else decoded (or from `poster`).
    public func thumbnail(for videoURL: URL, poster: URL? = nil) async throws -> VideoThumbnail {
        let key = key(videoURL, poster)
        if let cached = memory.value(for: key) { return cached }
        return try await coalescer.value(for: key) { [self] in
            if let stored = try readDisk(key, videoURL: videoURL) { return stored }
            let made = try await limiter.run { try await make(videoURL, poster: poster) }
            memory.insert(made, for: key, cost: made.imageData.count + 512)
            if let disk {
                do { try disk.store(made.imageData, for: diskKey(key)) } catch {
                    logger.warning("cannot store a thumbnail", metadata: ["error": "\(error)"])
                }
            }
            return made
        }
    }

    /// Loads the thumbnail and calls `completion` on a background task, unless the returned request is cancelled
    /// first.
    @discardableResult
    public func loadThumbnail(
        for videoURL: URL, poster: URL? = nil,
        completion: @escaping @Sendable (Result<VideoThumbnail, any Error>) -> Void
    ) -> ThumbnailRequest {
        let request = ThumbnailRequest(videoURL: videoURL)
        let task = background.start { [self] in
            let result: Result<VideoThumbnail, any Error>
            do { result = .success(try await thumbnail(for: videoURL, poster: poster)) } catch {
                result = .failure(error)
            }
            request.deliver { completion(result) }
        }
        request.attach(task)
        return request
    }

    /// Starts loading thumbnails that will be needed soon (rows about to scroll in).
    public func prefetch(_ videoURLs: [URL]) {
        for url in videoURLs {
            guard memory.value(for: key(url, nil)) == nil else { continue }
            prefetches.withLock { tasks in
                guard tasks[url] == nil else { return }
                tasks[url] = background.start { [self] in
                    _ = try? await thumbnail(for: url)
                    _ = prefetches.withLock { $0.removeValue(forKey: url) }
                }
            }
        }
    }

    /// Stops prefetching these videos; a load that someone else also waits for goes on.
    public func cancelPrefetch(_ videoURLs: [URL]) {
        let tasks = prefetches.withLock { tasks in videoURLs.compactMap { tasks.removeValue(forKey: $0) } }
        for task in tasks { task.cancel() }
    }

    /// Returns once no request, prefetch or shared load is running, including loads every caller has left.
    package func settled() async {
        await background.settled()
        await coalescer.settled()
    }

    /// Empties the memory cache (call on memory pressure).
    public func removeAllFromMemory() { memory.removeAll() }

    /// Empties the disk cache and the memory cache.
    public func removeAll() throws {
        memory.removeAll()
        try disk?.removeAll()
    }

    // MARK: Internals

    private func key(_ videoURL: URL, _ poster: URL?) -> String {
        let size = configuration.maximumSize
        var key = "\(DiskCache.normalizedKey(for: videoURL))|\(size.width)x\(size.height)|t=\(configuration.time)"
        key += "|q=\(configuration.jpegQuality)"
        if configuration.posterChoice != .keyframe { key += "|choice=\(configuration.posterChoice.rawValue)" }
        if let poster { key += "|poster=\(DiskCache.normalizedKey(for: poster))" }
        return key
    }

    private func diskKey(_ key: String) -> URL {
        var components = URLComponents()
        components.scheme = "filmstrip-video-thumbnail"
        components.path = "/"
        components.queryItems = [URLQueryItem(name: "k", value: key)]
        return components.url!
    }

    private func readDisk(_ key: String, videoURL: URL) throws -> VideoThumbnail? {
        guard let disk, let data = try? disk.data(for: diskKey(key)) else { return nil }
        guard let info = try? ImageCodec.info(data) else {
            disk.remove(diskKey(key))
            return nil
        }
        let thumbnail = VideoThumbnail(
            videoURL: videoURL, imageData: data, width: info.width, height: info.height, time: nil)
        memory.insert(thumbnail, for: key, cost: data.count + 512)
        counters.withLock { $0.fromDisk += 1 }
        return thumbnail
    }

    /// The first informative keyframe after `first` (see ``PosterChoice/representative``), else the one that shows
    /// the most.
    private func representative(
        _ videoURL: URL, after first: VideoFrame, duration: Double, options: FrameExtractorConfiguration
    ) async throws -> (PixelBuffer, Double) {
        var next = options
        next.toleranceBefore = 0
        next.toleranceAfter = .infinity
        let extractor = FrameExtractor(url: videoURL, options: next)
        func score(_ content: ImageContent) -> Double { content.contrast * content.sharpness.squareRoot() }
        var best = (first.image, first.actualTime, score(first.image.content))
        var t = first.actualTime + 0.001
        for _ in 0..<7 {
            guard t < min(duration, first.actualTime + 60) else { break }
            let frame = try await extractor.image(at: t)
            guard frame.actualTime >= t - 0.001 else { break }  // no later keyframe
            let content = frame.image.content
            if content.isInformative { return (frame.image, frame.actualTime) }
            if score(content) > best.2 { best = (frame.image, frame.actualTime, score(content)) }
            t = frame.actualTime + 0.001
        }
        return (best.0, best.1)
    }

    private func make(_ videoURL: URL, poster: URL?) async throws -> VideoThumbnail {
        try Task.checkCancellation()
        var image: PixelBuffer
        var time: Double?
        if let poster {
            let data = try await posters.data(for: poster, policy: .cacheFirst)
            let (decoded, _) = try ImageCodec.decode(data)
            let fitted = decoded.size.fitted(within: configuration.maximumSize)
            image = try decoded.scaled(width: fitted.width, height: fitted.height)
        } else {
            var options = FrameExtractorConfiguration()
            options.maximumSize = configuration.maximumSize
            options.loading = configuration.loading
            options.transport = configuration.transport
            let extractor = FrameExtractor(url: videoURL, options: options)
            let duration: Double
            do {
                duration = try await extractor.duration()
            } catch let error as MediaError where error.kind == .noVideoStream {
                // A file of audio alone: its card, not an error (its header and cover picture: a short read). A file
                // without audio either fails as before.
                let card = try AudioFileCard.image(
                    for: videoURL, options: options, maximumSize: configuration.maximumSize)
                let data = Data(try JPEGCodec.encode(card, quality: configuration.jpegQuality, subsampling: .s444))
                counters.withLock { $0.decoded += 1 }
                var thumbnail = VideoThumbnail(
                    videoURL: videoURL, imageData: data, width: card.width, height: card.height, time: nil)
                thumbnail.isAudioOnly = true
                return thumbnail
            }
            let frame = try await extractor.image(at: max(0, min(configuration.time, duration)))
            image = frame.image
            time = frame.actualTime
            if configuration.posterChoice == .representative, !frame.image.content.isInformative {
                let chosen = try await representative(videoURL, after: frame, duration: duration, options: options)
                image = chosen.0
                time = chosen.1
            }
        }
        let data = Data(try JPEGCodec.encode(image, quality: configuration.jpegQuality, subsampling: .s444))
        counters.withLock { $0.decoded += 1 }
        return VideoThumbnail(videoURL: videoURL, imageData: data, width: image.width, height: image.height, time: time)
    }
}
