import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripStreaming
import FilmstripSync
public import FilmstripThumbnails
public import Foundation

/// The `.frames` thumbnails engine: previews straight from a video's or stream's keyframes, for streams without a
/// preview track. For time *t* it shows the keyframe at or before *t* (``Thumbnail/timeStampStart`` its time,
/// ``Thumbnail/timeStampEnd`` the next keyframe's, or the end for the last one).
///
/// Sources, best first: an HLS I-frame playlist (only the keyframe's byte range and its map are fetched), the
/// presentation's segments (HLS or DASH: the one segment that holds *t*), a file's index (MP4 over http: the index and
/// the keyframe's bytes with `Range` requests).
///
/// ```swift
/// let frames = FrameThumbnails()
/// try await frames.load(url: URL(string: "https://cdn.example.com/show/master.m3u8")!)
/// let preview = try await frames.thumbnail(at: 754)        // the keyframe at or before 754 s, as JPEG
/// frames.getThumbnail(atTimestamp: 760, renderOn: scrubPreview) { _ in }  // latest request wins
/// ```
///
/// The latest request wins: a request superseded by a newer one completes as cancelled before it decodes. Decoded
/// keyframes live in a byte-bounded LRU; the next keyframe in the scrub direction is decoded ahead.
public final class FrameThumbnails: Sendable {
    /// The configuration.
    public let configuration: FrameThumbnailsConfiguration

    struct Keyframe: Sendable {
        var time: Double
        var end: Double?
        var image: PixelBuffer
        var thumbnail: Thumbnail
    }

    struct State {
        var url: URL?
        var source: KeyframeSource?
        var stream: StreamFrames?
        var extractor: FrameExtractor?
        var fileKeyframes: [Double] = []
        /// Stream keyframe times known so far (all of an I-frame playlist's; a segment's once it was opened), and
        /// the spans they are known for.
        var streamKeyframes: [Double] = []
        var knownSpans: [ClosedRange<Double>] = []
        var duration: Double = 0
        var latest = 0
        var lastTime: Double?
        /// Start times (ms) of keyframes known to be the last one.
        var lastKeyframes: Set<Int64> = []
    }

    let state = Mutex(State())
    let cache: MemoryCache<Int64, Keyframe>
    let decoded = Atomic<Int>(0)
    /// Requests without a caller to wait for them and prefetch chains under way.
    private let background = BackgroundTasks()

    /// Returns once no background request or prefetch chain is running.
    package func settled() async { await background.settled() }

    /// Creates an engine; ``load(url:)`` gives it a video.
    public init(configuration: FrameThumbnailsConfiguration = FrameThumbnailsConfiguration()) {
        self.configuration = configuration
        cache = MemoryCache(costLimit: configuration.memoryLimit)
    }

    /// Where keyframes come from, once loaded.
    public var source: KeyframeSource? { state.withLock { $0.source } }

    /// Bytes fetched so far (manifests, indexes and media).
    public var bytesRead: Int {
        let (stream, extractor) = state.withLock { ($0.stream, $0.extractor) }
        return (stream?.client.statistics.bytes ?? 0) + (extractor?.bytesRead ?? 0)
    }

    /// Keyframes decoded so far (requests served from memory decode nothing).
    public var decodedKeyframes: Int { decoded.load(ordering: .relaxed) }

    /// Bytes of decoded keyframes held in memory.
    public var memoryUsage: Int { cache.totalCost }

    /// Loads a video or stream: an HLS master (its I-frame playlist when it has one) or media playlist, an MPD, or a
    /// video file, local or http(s).
    public func load(url: URL) async throws {
        var options = FrameExtractorConfiguration()
        options.maximumSize = configuration.maximumSize
        options.loading = configuration.loading
        options.transport = configuration.transport
        cache.removeAll()
        if StreamFrames.isManifest(url) {
            let iFrames = StreamFrames(url: url, options: options, kind: .iFrame)
            if let timeline = try? await iFrames.timeline(), !timeline.segments.isEmpty {
                state.withLock {
                    $0 = State(
                        url: url, source: .iFramePlaylist, stream: iFrames,
                        streamKeyframes: timeline.segments.map(\.start),
                        knownSpans: [timeline.start...timeline.end], duration: timeline.end)
                }
                return
            }
            // The manifest the I-frame look loaded serves the segments too.
            let segments = StreamFrames(url: url, options: options, kind: .video, client: iFrames.client)
            let timeline = try await segments.timeline()
            state.withLock {
                $0 = State(url: url, source: .segments, stream: segments, duration: timeline.end)
            }
            return
        }
        let extractor = FrameExtractor(url: url, options: options)
        let duration = try await extractor.duration()
        let keyframes = try await extractor.keyframeTimes()
        state.withLock {
            $0 = State(url: url, source: .fileIndex, extractor: extractor, fileKeyframes: keyframes, duration: duration)
        }
    }

    /// The thumbnail for `t` when its keyframe is decoded already; otherwise `nil`, and the work starts (a newer
    /// request supersedes it).
    public func getThumbnail(atTimestamp t: Double) -> Thumbnail? {
        if let cached = cachedKeyframe(at: t) { return cached.thumbnail }
        let ticket = nextTicket(t)
        background.start(priority: .userInitiated, detached: true) { [self] in _ = try? await serve(t, ticket: ticket) }
        return nil
    }

    /// The thumbnail for `t`, fetching and decoding its keyframe if needed. A newer request supersedes this one:
    /// it then throws a ``ThumbnailsError`` of kind `.cancelled` before decoding.
    ///
    /// - Returns: `nil` when `t` is outside the video.
    public func thumbnail(at t: Double) async throws -> Thumbnail? {
        if let cached = cachedKeyframe(at: t) { return cached.thumbnail }
        return try await serve(t, ticket: nextTicket(t))
    }

    /// Renders the thumbnail for `t` into `output` (aspect-fit to its size) and calls `completion` with it: at once
    /// from memory, else after fetching and decoding. A request superseded before it decodes completes with a
    /// `.cancelled` error.
    public func getThumbnail(
        atTimestamp t: Double, renderOn output: any ThumbnailOutput,
        completion: @escaping @Sendable (Result<Thumbnail?, any Error>) -> Void
    ) {
        let ticket = cachedKeyframe(at: t) == nil ? nextTicket(t) : nil
        background.start(priority: .userInitiated, detached: true) { [self] in
            do {
                let keyframe: Keyframe?
                if let ticket {
                    keyframe = try await serveKeyframe(t, ticket: ticket)
                } else {
                    keyframe = cachedKeyframe(at: t)
                }
                if let keyframe {
                    let size = output.size
                    let fitted = keyframe.image.size.fitted(within: size)
                    let (w, h) = (fitted.width, fitted.height)
                    output.render(
                        w == keyframe.image.width && h == keyframe.image.height
                            ? keyframe.image : try keyframe.image.scaled(width: w, height: h),
                        thumbnail: keyframe.thumbnail)
                }
                completion(.success(keyframe?.thumbnail))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Whether `thumbnail` shows the video's last keyframe (its ``Thumbnail/timeStampEnd`` is the video's end).
    public func isLastKeyframe(_ thumbnail: Thumbnail) -> Bool {
        let start = Int64((thumbnail.timeStampStart * 1000).rounded())
        return state.withLock { $0.lastKeyframes.contains(start) }
    }

    /// Frees the decoded keyframes.
    public func purgeMemory() { cache.removeAll() }

    // MARK: Work

    private func nextTicket(_ t: Double) -> Int {
        state.withLock {
            $0.latest += 1
            return $0.latest
        }
    }

    func isLatest(_ ticket: Int) -> Bool { state.withLock { $0.latest == ticket } }

    private func cachedKeyframe(at t: Double) -> Keyframe? {
        guard let key = keyframeTime(at: t) else { return nil }
        return cache.value(for: Int64((key * 1000).rounded()))
    }

    /// The keyframe time for `t` when it is known without I/O (a file's index, an I-frame playlist, a segment
    /// already opened).
    private func keyframeTime(at t: Double) -> Double? {
        state.withLock { s in
            if s.source == .fileIndex {
                return s.fileKeyframes.last { $0 <= t + MediaTime.tolerance } ?? s.fileKeyframes.first
            }
            guard s.knownSpans.contains(where: { $0.contains(t) }) else { return nil }
            return s.streamKeyframes.last { $0 <= t + MediaTime.tolerance }
        }
    }

    private func serve(_ t: Double, ticket: Int) async throws -> Thumbnail? {
        try await serveKeyframe(t, ticket: ticket)?.thumbnail
    }

    private func serveKeyframe(_ t: Double, ticket: Int) async throws -> Keyframe? {
        let (source, stream, extractor, files, duration, previous) = state.withLock {
            ($0.source, $0.stream, $0.extractor, $0.fileKeyframes, $0.duration, $0.lastTime)
        }
        state.withLock { $0.lastTime = t }
        guard let source else { throw ThumbnailsError(.notLoaded, "no video is loaded") }
        let superseded = { @Sendable [self] () throws -> Void in
            guard isLatest(ticket) else {
                throw ThumbnailsError(.cancelled, "a newer request superseded this one")
            }
        }
        let keyframe: Keyframe?
        switch source {
        case .iFramePlaylist, .segments:
            guard let stream else { return nil }
            keyframe = try await streamKeyframe(t, stream: stream, source: source, superseded: superseded)
        case .fileIndex:
            guard let extractor, t >= 0, t <= duration + 0.001 else { return nil }
            keyframe = try await fileKeyframe(
                t, extractor: extractor, keyframes: files, duration: duration, superseded: superseded)
        }
        // Decode the next `prefetchCount` keyframes in the scrub direction ahead, one after the other, while the
        // viewer looks at this one; a newer request stops the chain.
        if let keyframe, configuration.prefetchCount > 0 {
            let forward = previous.map { t >= $0 } ?? true
            let count = configuration.prefetchCount
            background.start(priority: .utility, detached: true) { [self] in
                var current = keyframe
                var found = 0
                // A segment read in part answers the same keyframe again, seen further: that step does not count
                // (bounded, so a long GOP read in parts cannot keep the chain going).
                var repeats = 0
                while found < count, repeats < 16 {
                    guard isLatest(ticket), let end = current.end else { return }
                    let next = forward ? end : current.time - 0.001
                    guard next >= 0 else { return }
                    if source == .fileIndex, let cached = cachedKeyframe(at: next) {
                        current = cached
                        found += 1
                        continue
                    }
                    guard
                        let fetched = try? await prefetch(
                            next, source: source, stream: stream, extractor: extractor, keyframes: files,
                            duration: duration)
                    else { return }
                    if abs(fetched.time - current.time) < MediaTime.tolerance, forward {
                        repeats += 1
                    } else {
                        found += 1
                    }
                    current = fetched
                }
            }
        }
        return keyframe
    }

    private func prefetch(
        _ t: Double, source: KeyframeSource, stream: StreamFrames?, extractor: FrameExtractor?, keyframes: [Double],
        duration: Double
    ) async throws -> Keyframe? {
        let never = { @Sendable () throws -> Void in }
        switch source {
        case .iFramePlaylist, .segments:
            guard let stream else { return nil }
            return try await streamKeyframe(t, stream: stream, source: source, superseded: never)
        case .fileIndex:
            guard let extractor, t <= duration else { return nil }
            return try await fileKeyframe(
                t, extractor: extractor, keyframes: keyframes, duration: duration, superseded: never)
        }
    }

    private func fileKeyframe(
        _ t: Double, extractor: FrameExtractor, keyframes: [Double], duration: Double,
        superseded: @escaping @Sendable () throws -> Void
    ) async throws -> Keyframe? {
        if let cached = cachedKeyframe(at: t) { return cached }
        try superseded()
        let frame = try await extractor.image(at: max(0, t))
        decoded.add(1, ordering: .relaxed)
        // The index's times are decode times: the offset to the picture's time carries to the next keyframe.
        let indexTime = keyframes.last { $0 <= t + MediaTime.tolerance } ?? frame.actualTime
        let nextIndex = keyframes.first { $0 > indexTime + MediaTime.tolerance }
        let end = nextIndex.map { $0 + (frame.actualTime - indexTime) }
        let keyframe = try makeKeyframe(frame.image, time: frame.actualTime, end: end ?? duration, isLast: end == nil)
        cache.insert(keyframe, for: Int64((indexTime * 1000).rounded()), cost: keyframe.image.byteCount)
        return keyframe
    }

    func makeKeyframe(
        _ image: PixelBuffer, time: Double, end: Double, isLast: Bool, url: URL? = nil
    ) throws
        -> Keyframe
    {
        let data = Data(try JPEGCodec.encode(image, quality: configuration.jpegQuality, subsampling: .s444))
        let source = url ?? state.withLock { $0.url } ?? URL(fileURLWithPath: "/")
        let thumbnail = Thumbnail(
            imageData: data, format: .jpeg, timeStampStart: time, timeStampEnd: max(time, end), sourceURL: source,
            region: nil, width: image.width, height: image.height)
        if isLast { _ = state.withLock { $0.lastKeyframes.insert(Int64((time * 1000).rounded())) } }
        return Keyframe(time: time, end: isLast ? nil : end, image: image, thumbnail: thumbnail)
    }
}

/// Keyframes are decoded on demand: there is nothing to prefetch by time.
extension FrameThumbnails: PreviewProvider {}
