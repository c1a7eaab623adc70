public import FilmstripFormats
public import FilmstripLoading
import FilmstripSync
public import Foundation

/// One presentation over the network (or from disk): loads its manifest (an HLS master or media playlist, or an
/// MPD), lists the segments of a rendition (loading a media playlist or a `sidx` when needed, or, live, asking a
/// template what is available on a clock corrected by `UTCTiming`), and fetches exactly the bytes that answer a
/// question: one `Range` request per byte-range segment, each initialisation section once.
///
/// ```swift
/// let client = StreamingClient(url: URL(string: "https://example.com/stream.mpd")!)
/// let timeline = try await client.timeline(maximumSize: PixelSize(width: 320, height: 180))
/// if let i = timeline.segmentIndex(containing: 42) {
///     let segment = timeline.segments[i]
///     let bytes = try await client.initialization(for: segment) + client.media(segment)
/// }
/// ```
public final class StreamingClient: Sendable {
    /// The manifest's URL.
    public let url: URL
    /// The bounds.
    public let limits: StreamingLimits
    let fetcher: ByteFetcher
    private let wallClock: @Sendable () -> Date
    let state = Mutex(State())

    struct State {
        var presentation: Task<Presentation, any Error>?
        var manifestBytes: Data?
        var playlists: [URL: Task<LoadedPlaylist, any Error>] = [:]
        var indexes: [SegmentBaseIndex: Task<[SegmentReference], any Error>] = [:]
        var initialization: [InitializationSection: Task<Data, any Error>] = [:]
        var keys: [URL: Task<Data, any Error>] = [:]
        var programTables: [URL: Task<Data, any Error>] = [:]
        var clockOffset: Task<Double, Never>?
    }

    /// Creates a client; nothing is fetched until asked.
    ///
    /// - Parameters:
    ///   - transport: the HTTP transport (default: a shared `URLSessionDataLoader`).
    ///   - configuration: timeouts, retries and headers for every request.
    ///   - now: the local wall clock (tests inject their own); `UTCTiming` corrects it for live DASH.
    ///   - decorate: called before every http(s) request is sent, to add headers or change the URL (its retries carry
    ///     the same headers).
    public init(
        url: URL, transport: (any DataLoading)? = nil,
        configuration: LoadingConfiguration = LoadingConfiguration(maximumResponseSize: 256 << 20),
        limits: StreamingLimits = StreamingLimits(), now: @escaping @Sendable () -> Date = { Date() },
        decorate: StreamingRequestDecorator? = nil
    ) {
        self.url = url
        self.limits = limits
        let scheme = url.scheme?.lowercased()
        fetcher = ByteFetcher(
            transport: transport ?? DefaultTransport.shared, configuration: configuration,
            isRemote: scheme == "http" || scheme == "https", decorate: decorate)
        wallClock = now
    }

    /// Requests made and body bytes received so far (disk reads count for local presentations).
    public var statistics: (requests: Int, bytes: Int) { fetcher.statistics }

    /// Cancels every load in flight (manifest, playlists, indexes, init sections, keys) and forgets it, so those
    /// waiting for one get a cancellation error at once and a later call loads afresh. For an owner that stops.
    public func cancel() {
        let running = state.withLock { state -> [any CancellableTask] in
            var tasks: [any CancellableTask] = []
            if let presentation = state.presentation { tasks.append(presentation) }
            tasks += state.playlists.values.map { $0 as any CancellableTask }
            tasks += state.indexes.values.map { $0 as any CancellableTask }
            tasks += state.initialization.values.map { $0 as any CancellableTask }
            tasks += state.keys.values.map { $0 as any CancellableTask }
            tasks += state.programTables.values.map { $0 as any CancellableTask }
            if let clockOffset = state.clockOffset { tasks.append(clockOffset) }
            state = State()
            return tasks
        }
        for task in running { task.cancel() }
    }

    // MARK: Manifest

    /// The presentation, loaded on first use and kept.
    public func presentation() async throws -> Presentation {
        try await shared(\.presentation, url: url) { [self] in try await loadManifest() }
    }

    /// Loads the manifest again (a live presentation's next version) and keeps it.
    @discardableResult
    public func refresh() async throws -> Presentation {
        let task = Task { [self] in try await loadManifest() }
        state.withLock {
            $0.presentation = task
            $0.playlists = [:]
        }
        return try await Self.value(of: task, url: url)
    }

    private func loadManifest() async throws -> Presentation {
        let data = try await fetcher.fetch(url, limit: limits.maximumManifestBytes, object: .manifest)
        let presentation = try parseManifest(data, url: url)
        state.withLock { $0.manifestBytes = data }
        return presentation
    }

    /// The manifest's bytes as last loaded (loading the presentation first when it is not yet): for a writer that
    /// rewrites the manifest, without fetching it again.
    public func manifestBytes() async throws -> Data {
        _ = try await presentation()
        return state.withLock { $0.manifestBytes } ?? Data()
    }

    /// Parses manifest bytes, telling HLS from DASH by their content.
    func parseManifest(_ data: Data, url: URL) throws(StreamingError) -> Presentation {
        try ParsedManifest(data, url: url, limits: limits).presentation(url: url)
    }

    // MARK: Segments

    /// The segments of `rendition` (of the period at `periodIndex`): listed ones as they are; an HLS media playlist
    /// loaded (once); a `sidx` read with one `Range` request (once); a live template's segments that are available
    /// now, on the clock corrected by `UTCTiming`.
    public func segments(
        of rendition: Presentation.Rendition, in presentation: Presentation
    ) async throws -> [SegmentReference] {
        try await segmentList(of: rendition, in: presentation).references
    }

    /// The segments of `rendition` as ``segments(of:in:)`` lists them, with what a live reader needs to follow
    /// them. With `reload`, an HLS media playlist is fetched again (the next version of a live playlist); a live
    /// template is always computed for now; listed segments change only with ``refresh()``.
    public func segmentList(
        of rendition: Presentation.Rendition, in presentation: Presentation, reload: Bool = false
    ) async throws -> SegmentList {
        switch rendition.segments {
        case .list(let references):
            return SegmentList(
                references: references, isLive: presentation.isLive,
                targetDuration: presentation.streamingProtocol == .hls ? presentation.minimumUpdatePeriod : nil)
        case .mediaPlaylist(let playlistURL):
            if reload { state.withLock { _ = $0.playlists.removeValue(forKey: playlistURL) } }
            let loaded = try await mediaPlaylist(playlistURL)
            return SegmentList(
                references: loaded.references, isLive: loaded.isLive, targetDuration: loaded.targetDuration)
        case .segmentBase(let index):
            return SegmentList(references: try await segmentBase(index), isLive: false, targetDuration: nil)
        case .template(let template):
            guard let start = presentation.availabilityStartTime else {
                throw StreamingError(.manifest, "a live template needs availabilityStartTime", url: url)
            }
            let now = await self.now(presentation)
            let periodNow = now.timeIntervalSince(start) - template.periodStart
            var end = periodNow
            if let length = template.periodDuration { end = min(end, length) }
            let from = presentation.timeShiftBufferDepth.map { periodNow - $0 } ?? -.infinity
            do {
                return SegmentList(
                    references: try template.references(
                        periodTimeFrom: from, to: end, completeOnly: true, limit: limits.maximumEntries),
                    isLive: presentation.isLive, targetDuration: nil)
            } catch {
                throw StreamingError(.manifest, "the MPD cannot be used: \(error)", url: url, underlying: error)
            }
        }
    }

    /// An HLS media playlist's segments and whether it is live, loaded once (a failed load is tried again by the next
    /// caller).
    func mediaPlaylist(_ playlistURL: URL) async throws -> LoadedPlaylist {
        try await shared(playlistURL, in: \.playlists, url: playlistURL) { [self] () async throws -> LoadedPlaylist in
            let data = try await fetcher.fetch(
                playlistURL, limit: limits.maximumManifestBytes, object: .mediaPlaylist)
            let presentation = try parseManifest(data, url: playlistURL)
            guard presentation.streamingProtocol == .hls,
                let rendition = presentation.periods.first?.tracks.first?.renditions.first,
                let references = rendition.segments.references
            else {
                throw StreamingError(.manifest, "a variant must name a media playlist", url: playlistURL)
            }
            return LoadedPlaylist(
                references: references, isLive: presentation.isLive,
                targetDuration: presentation.minimumUpdatePeriod)
        }
    }

    private func segmentBase(_ index: SegmentBaseIndex) async throws -> [SegmentReference] {
        try await shared(index, in: \.indexes, url: index.url) { [self] () async throws -> [SegmentReference] in
            let bytes = try await fetcher.fetch(
                index.url, range: index.indexRange, limit: limits.maximumManifestBytes, object: .segmentIndex)
            // A WebM Representation's index is its Cues (the WebM DASH profile), not a sidx.
            if WebMCues.isCues(bytes) { return try await webMSegments(index, cues: bytes) }
            let sidx: SegmentIndexBox
            do {
                sidx = try SegmentIndexBox.parse(bytes, offset: index.indexRange.lowerBound)
            } catch {
                let unsupported = (error as? SegmentIndexBox.ParseError)?.isUnsupported == true
                let kind: StreamingError.Kind = unsupported ? .unsupported : .invalidContent
                throw StreamingError(
                    kind, "the segment index is unusable: \(error)", url: index.url, underlying: error)
            }
            return SegmentBaseReferences.make(sidx, index: index)
        }
    }

    // MARK: Bytes

    /// The initialisation section of `segment` (empty when it has none), fetched once per section. `rendition`
    /// only describes the request to the decorator.
    public func initialization(
        for segment: SegmentReference, of rendition: Presentation.Rendition? = nil
    ) async throws -> Data {
        guard let section = segment.initialization else { return Data() }
        return try await shared(section, in: \.initialization, url: section.url) { [self] () async throws -> Data in
            try await fetcher.fetch(
                section.url, range: section.byteRange, limit: limits.maximumSegmentBytes, object: .initialization,
                segment: segment, rendition: rendition)
        }
    }

    /// The media bytes of `segment` (one `Range` request for a byte-range segment), decrypted when it has an
    /// AES-128 key (fetched once per key URI). `rendition` only describes the requests to the decorator; a
    /// `keyTimeout` bounds the key request on its own.
    public func media(
        _ segment: SegmentReference, of rendition: Presentation.Rendition? = nil, keyTimeout: Double? = nil
    ) async throws -> Data {
        let bytes = try await fetcher.fetch(
            segment.url, range: segment.byteRange, limit: limits.maximumSegmentBytes, object: .media,
            segment: segment, rendition: rendition)
        guard let key = segment.key else { return bytes }
        let keyData = try await fetchKey(key.uri, for: segment, rendition: rendition, timeout: keyTimeout)
        do {
            return try SegmentDecryption.decryptAES128(bytes, key: keyData, iv: key.iv, sequenceNumber: segment.number)
        } catch {
            throw StreamingError(
                .invalidContent, "segment \(segment.number) does not decrypt with its AES-128 key: \(error)",
                url: segment.url, underlying: error)
        }
    }

    /// Part of the media bytes of `segment`: `part` counted from the segment's first byte, cut where the segment
    /// (its byte range, or its resource when it has none) ends; `reachesEnd` says whether it does. One `Range`
    /// request. An encrypted segment cannot be read in parts (`.unsupported`).
    public func media(
        _ segment: SegmentReference, part: Range<Int64>, of rendition: Presentation.Rendition? = nil
    ) async throws -> (data: Data, reachesEnd: Bool) {
        guard segment.key == nil else {
            throw StreamingError(.unsupported, "an encrypted segment is read whole", url: segment.url)
        }
        return try await fetcher.fetch(part, of: segment, rendition: rendition, limit: limits.maximumSegmentBytes)
    }

    private func fetchKey(
        _ keyURL: URL, for segment: SegmentReference, rendition: Presentation.Rendition?, timeout: Double?
    ) async throws -> Data {
        // A failed key is not kept: the next segment (or a retry) asks again.
        return try await shared(keyURL, in: \.keys, url: keyURL) { [self] () async throws -> Data in
            let request = StreamingRequest(object: .key, url: keyURL, segment: segment, rendition: rendition)
            let data = try await fetcher.fetch(request, limit: 1024, timeout: timeout)
            guard data.count == 16 else {
                throw StreamingError(
                    .invalidContent, "an AES-128 key must be 16 bytes (got \(data.count))", url: keyURL)
            }
            return data
        }
    }

    // MARK: Clock

    /// The current time, corrected by the presentation's `UTCTiming` (measured once) when it has one.
    public func now(_ presentation: Presentation) async -> Date {
        guard !presentation.utcTiming.isEmpty else { return wallClock() }
        let task = state.withLock { state -> Task<Double, Never> in
            if let task = state.clockOffset { return task }
            let task = Task { [self] in await UTCTimingClock.offset(for: presentation, fetcher: fetcher, now: wallClock)
            }
            state.clockOffset = task
            return task
        }
        return wallClock().addingTimeInterval(await task.value)
    }

    // MARK: Helpers

    /// The value of the load `key` names in `cache`: started once and shared by every caller while it runs and
    /// after it succeeds; a failed load is not kept, so the next caller (a retry) starts it again.
    func shared<Key: Hashable, Value: Sendable>(
        _ key: Key, in cache: WritableKeyPath<State, [Key: Task<Value, any Error>]>, url: URL,
        _ load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await shared(cache.appending(path: \.[key]), url: url, load)
    }

    /// The value of the load kept in `slot`, shared as ``shared(_:in:url:_:)`` shares one of a cache's.
    func shared<Value: Sendable>(
        _ slot: WritableKeyPath<State, Task<Value, any Error>?>, url: URL,
        _ load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let task = state.withLock { state -> Task<Value, any Error> in
            if let task = state[keyPath: slot] { return task }
            let task = Task { try await load() }
            state[keyPath: slot] = task
            return task
        }
        do {
            return try await Self.value(of: task, url: url)
        } catch {
            state.withLock { if $0[keyPath: slot] == task { $0[keyPath: slot] = nil } }
            throw error
        }
    }

    static func value<T: Sendable>(of task: Task<T, any Error>, url: URL) async throws -> T {
        do {
            return try await task.value
        } catch let error as StreamingError {
            throw error
        } catch {
            throw StreamingError(.network, "\(error)", url: url, underlying: error)
        }
    }
}

/// An HLS media playlist as loaded.
struct LoadedPlaylist: Sendable {
    var references: [SegmentReference]
    var isLive: Bool
    var targetDuration: Double?
}

/// The segments of one rendition as loaded now.
public struct SegmentList: Sendable {
    /// The segments, in order.
    public var references: [SegmentReference]
    /// Whether more segments may come (a live playlist or a dynamic MPD).
    public var isLive: Bool
    /// An HLS playlist's target duration, which sets its reload cadence (RFC 8216, 6.3.4).
    public var targetDuration: Double?

    /// Creates a list.
    public init(references: [SegmentReference], isLive: Bool, targetDuration: Double?) {
        self.references = references
        self.isLive = isLive
        self.targetDuration = targetDuration
    }
}

/// A task of any result type, for cancelling a mixed set.
protocol CancellableTask: Sendable {
    func cancel()
}

extension Task: CancellableTask {}
