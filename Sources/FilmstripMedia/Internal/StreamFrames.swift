package import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
package import FilmstripStreaming
import FilmstripSync
package import Foundation

/// Frames from an HLS or DASH presentation through the streaming layer: the manifest (and, for a master, the one
/// chosen media playlist), the chosen rendition's initialisation data once, and only the segments that hold the
/// times asked for, each demuxed from memory.
package final class StreamFrames: Sendable {
    package let client: StreamingClient
    package let url: URL
    private let maximumSize: PixelSize?
    /// Keys for protected segments.
    private let contentKeys: ContentKeySource
    private let state = Mutex(TimelineState())

    /// The timeline being loaded or loaded, when, and (live) after how many seconds it is stale.
    private struct TimelineState {
        var task: Task<MediaTimeline, any Error>?
        var loadedAt = Date.distantPast
        var refreshAfter: Double?
    }
    private let decoded = Mutex(0)
    /// The media bytes read of the last segments opened in parts, newest first, and whether each is whole.
    private let heads = Mutex<[(key: String, data: Data, whole: Bool)]>([])
    /// The bytes the last segment's head took up to its first keyframe's end.
    private let firstKeyframeBytes = Mutex<Int?>(nil)

    /// The kind of track to read (video, or an HLS I-frame playlist).
    let kind: Presentation.TrackKind

    /// - Parameter client: the presentation's client when another reader of it has one (its manifest, playlists and
    ///   tables are then fetched once for both); else one of its own.
    package init(
        url: URL, options: FrameExtractorConfiguration, kind: Presentation.TrackKind = .video,
        client: StreamingClient? = nil
    ) {
        self.url = url
        self.kind = kind
        maximumSize = options.maximumSize
        contentKeys = ContentKeySource(keys: options.contentKeys, license: options.license)
        wallClock = options.wallClock
        self.client =
            client
            ?? StreamingClient(
                url: url, transport: options.transport, configuration: options.loading, now: options.wallClock)
    }

    /// The local wall clock (``FrameExtractorConfiguration/wallClock``).
    private let wallClock: @Sendable () -> Date

    /// Whether `url` names a streaming manifest (see ``ManifestDetection``).
    package static func isManifest(_ url: URL) -> Bool { ManifestDetection.isManifest(url) }

    var framesDecoded: Int { decoded.withLock { $0 } }

    /// The timeline of the chosen video rendition, loaded once; a live presentation's is loaded again (the manifest
    /// refreshed) once it is older than the manifest's `minimumUpdatePeriod` (or its target duration).
    package func timeline() async throws(MediaError) -> MediaTimeline {
        let now = wallClock()
        let task = state.withLock { state -> Task<MediaTimeline, any Error> in
            if let current = state.task {
                let stale = state.refreshAfter.map { now.timeIntervalSince(state.loadedAt) >= $0 } ?? false
                if !stale { return current }
            }
            let refresh = state.task != nil
            let made = Task { [client, maximumSize, kind] in
                if refresh { try await client.refresh() }
                return try await client.timeline(of: kind, maximumSize: maximumSize)
            }
            state.task = made
            state.loadedAt = now
            state.refreshAfter = nil
            return made
        }
        do {
            let timeline = try await task.value
            if timeline.presentation.isLive {
                let period = max(0.5, timeline.presentation.minimumUpdatePeriod ?? 2)
                state.withLock { if $0.task == task { $0.refreshAfter = period } }
            }
            return timeline
        } catch {
            state.withLock { if $0.task == task { $0.task = nil } }
            throw Self.mediaError(error, url: url)
        }
    }

    /// The duration: the presentation's, else the end of the timeline.
    func duration() async throws(MediaError) -> Double {
        let timeline = try await timeline()
        return timeline.presentation.duration ?? timeline.end
    }

    /// The bytes a demuxer needs for `segment`: its initialisation section (or the program tables an MPEG-TS range
    /// lacks), then its media.
    func bytes(of segment: SegmentReference) async throws(MediaError) -> Data {
        try await Self.bytes(of: segment, client: client, url: url)
    }

    /// The bytes a demuxer needs for `segment` of `client`'s presentation at `url`.
    package static func bytes(
        of segment: SegmentReference, client: StreamingClient, url: URL
    ) async throws(MediaError) -> Data {
        do {
            async let initialization = client.initialization(for: segment)
            let media = try await client.media(segment)
            var head = try await initialization
            if head.isEmpty { head = try await client.programTables(for: segment, media: media) }
            return head.isEmpty ? media : head + media
        } catch {
            throw Self.mediaError(error, url: url)
        }
    }

    /// Opens segment `index` of `timeline` (fetching it).
    package func open(
        _ index: Int, of timeline: MediaTimeline, cancellation: CancellationFlag
    ) async throws -> StreamSegment {
        guard timeline.segments.indices.contains(index) else {
            throw MediaError(
                timeline.presentation.isLive ? .timeOutOfRange : .invalidMedia,
                timeline.segments.isEmpty ? "the stream has no segments available" : "no segment \(index)", url: url)
        }
        let reference = timeline.segments[index]
        let data = try await bytes(of: reference)
        return try await runBlocking { [contentKeys] in
            Handoff(
                try StreamSegment(
                    reference: reference, bytes: data, cancellation: cancellation, contentKeys: contentKeys))
        }.value
    }

    /// Opens segment `index` of `timeline` with only the bytes a keyframe at or before `t` needs (`nil`: its first
    /// keyframe, read up to the first video PES that follows it in presentation order). A remote MPEG-TS
    /// segment is read in parts (one `Range` request each, the first sized from the rendition's bandwidth) until a
    /// video PES starts more than ``reorderMargin`` after `t`: every frame at or before `t`, and so the keyframe that
    /// answers it, is then whole. Anything else (local, encrypted, fragmented MP4) is read whole, as is a segment
    /// whose parts reach its end. The bytes read of the last two segments are kept, so a later time in the same
    /// segment (the prefetched next keyframe) reads only what follows.
    package func open(
        _ index: Int, of timeline: MediaTimeline, through t: Double?, cancellation: CancellationFlag
    ) async throws -> StreamSegment {
        guard timeline.segments.indices.contains(index), timeline.segments[index].key == nil,
            !timeline.segments[index].url.isFileURL
        else { return try await open(index, of: timeline, cancellation: cancellation) }
        let reference = timeline.segments[index]
        let key = "\(reference.url.absoluteString)#\(reference.byteRange.map { "\($0)" } ?? "")"
        var (media, whole) =
            heads.withLock { $0.first { $0.key == key }.map { ($0.data, $0.whole) } } ?? (Data(), false)
        let needed = t.map { max(0, $0 - reference.start) + Self.reorderMargin } ?? 0
        var cut: Int?
        do {
            async let initialization = client.initialization(for: reference)
            let bytesPerSecond = Double(timeline.renditions.first?.bandwidth ?? 0) / 8
            // For the first keyframe alone: a quarter more than the last segment's first keyframe took, else about
            // half a second of the rate.
            let seconds = t == nil ? Self.reorderMargin : needed
            let learned = t == nil ? firstKeyframeBytes.withLock { $0 } : nil
            var want =
                Int64(media.count)
                + (learned.map { Int64($0) * 5 / 4 }
                    ?? Int64(bytesPerSecond > 0 ? bytesPerSecond * seconds * 1.25 : 0) + 65_536)
            while !whole {
                if !media.isEmpty {
                    guard TransportStreamTables.isTransportStream(media) else {
                        // Not MPEG-TS: the rest in one request.
                        want = Int64(client.limits.maximumSegmentBytes)
                        let (rest, _) = try await client.media(reference, part: Int64(media.count)..<want)
                        media += rest
                        whole = true
                        break
                    }
                    cut = TransportStreamTables.videoStart(after: needed, in: media)
                    if cut != nil { break }
                }
                let (part, reachesEnd) = try await client.media(reference, part: Int64(media.count)..<want)
                media += part
                whole = reachesEnd
                want = Int64(media.count) * 2
            }
            if whole { cut = nil }
            if t == nil, let cut { firstKeyframeBytes.withLock { $0 = cut } }
            var head = try await initialization
            let kept = (key: key, data: media, whole: whole)
            heads.withLock { heads in
                heads.removeAll { $0.key == key }
                heads.insert(kept, at: 0)
                if heads.count > 2 { heads.removeLast() }
            }
            let read = cut.map { media.prefix($0) } ?? media
            if head.isEmpty { head = try await client.programTables(for: reference, media: read) }
            let bytes = head.isEmpty ? read : head + read
            return try await runBlocking { [whole, contentKeys] in
                Handoff(
                    try StreamSegment(
                        reference: reference, bytes: bytes, cancellation: cancellation, isComplete: whole,
                        contentKeys: contentKeys))
            }.value
        } catch let error as MediaError {
            throw error
        } catch {
            throw Self.mediaError(error, url: url)
        }
    }

    /// How far past a time a segment's head is read: frames reordered for B-frames (a few frames) come within it.
    static let reorderMargin = 0.5

    /// Checks that `t` is a time of the timeline.
    func check(_ t: Double, in timeline: MediaTimeline) throws(MediaError) -> Int {
        guard t.isFinite else {
            throw MediaError(.timeOutOfRange, "the time \(t) s is not a position in the stream", url: url)
        }
        guard !timeline.segments.isEmpty else {
            throw MediaError(
                timeline.presentation.isLive ? .timeOutOfRange : .invalidMedia,
                timeline.presentation.isLive
                    ? "no segment of the live stream is available yet" : "the stream lists no segments", url: url)
        }
        if timeline.presentation.isLive {
            if t < timeline.start - MediaTime.tolerance {
                throw MediaError(
                    .timeOutOfRange,
                    "the time \(Self.format(t)) s is before the live window (\(Self.format(timeline.start))–"
                        + "\(Self.format(timeline.end)) s)", url: url)
            }
            if t > timeline.end + MediaTime.tolerance {
                throw MediaError(
                    .timeOutOfRange,
                    "the time \(Self.format(t)) s is not available yet: the live edge is at \(Self.format(timeline.end)) s",
                    url: url)
            }
        } else if t < 0 || t > timeline.end + 0.001 {
            throw MediaError(
                .timeOutOfRange,
                "the time \(Self.format(t)) s is past the end of the stream (\(Self.format(timeline.end)) s)", url: url)
        }
        return timeline.segmentIndex(containing: min(max(t, timeline.start), timeline.end - MediaTime.tolerance)) ?? 0
    }

    /// Frames for `times` in the order asked; times are visited in ascending order, so each segment is fetched
    /// once and each keyframe decoded once.
    func frames(
        at times: [Double], options: FrameExtractorConfiguration, cancellation: CancellationFlag,
        yield: (VideoFrame) -> Void
    ) async throws {
        let timeline = try await timeline()
        var open: (index: Int, segment: StreamSegment)?
        var previous: (index: Int, segment: StreamSegment)?
        var lastKey: (time: Double, image: PixelBuffer)?
        let converter = FrameConverter()
        var ready: [Int: VideoFrame] = [:]
        var next = 0
        let order = times.indices.sorted { (times[$0], $0) < (times[$1], $1) }
        func segment(_ index: Int) async throws -> StreamSegment {
            if let open, open.index == index { return open.segment }
            if let previous, previous.index == index { return previous.segment }
            let made = try await self.open(index, of: timeline, cancellation: cancellation)
            previous = open
            open = (index, made)
            return made
        }
        for position in order {
            try Task.checkCancellation()
            let t = times[position]
            let index = try check(t, in: timeline)
            let locator = KeyframeLocator(options)
            var frame: VideoFrame?
            if !locator.decodesExactly {
                var before: (owner: StreamSegment, packet: OwnedPacket)?
                if let found = try await KeyframeLocator.keyframe(atOrBefore: t, inSegment: index, open: segment) {
                    before = (found.segment, found.packet)
                } else {
                    // t precedes every keyframe: the first one.
                    let first = try await segment(index)
                    before = first.firstKeyPacket.map { (first, $0) }
                }
                var after: (owner: StreamSegment, packet: OwnedPacket)?
                if locator.looksAfter {
                    let here = try await segment(index)
                    after = here.keyPacket(from: t, before: t + options.toleranceAfter + KeyframeLocator.epsilon)
                        .map { (here, $0) }
                }
                let pick = locator.pick(
                    at: t, before: before.map { $0.owner.time(of: $0.packet) },
                    after: after.map { $0.owner.time(of: $0.packet) })
                if let (owner, packet) = pick == .before ? before : pick == .after ? after : nil {
                    let time = owner.time(of: packet)
                    if let lastKey, abs(lastKey.time - time) < 1e-9 {
                        frame = VideoFrame(image: lastKey.image, requestedTime: t, actualTime: time, isKeyframe: true)
                    } else {
                        let work = Handoff((owner, packet, converter))
                        let image = try await runBlocking { [self] () throws -> PixelBuffer in
                            let (owner, packet, converter) = work.value
                            let (decodedFrame, count) = try owner.decode(packet)
                            decoded.withLock { $0 += count }
                            return try Self.render(
                                decodedFrame, input: owner.input, options: options, converter: converter)
                        }
                        lastKey = (time, image)
                        frame = VideoFrame(image: image, requestedTime: t, actualTime: time, isKeyframe: true)
                    }
                }
            }
            if frame == nil {
                let work = Handoff((try await segment(index), converter))
                frame = try await runBlocking { [self] () throws -> VideoFrame in
                    let (owner, converter) = work.value
                    let (found, count) = try owner.exactFrame(at: t)
                    decoded.withLock { $0 += count }
                    guard let decodedFrame = found else {
                        throw MediaError(.decodeFailed, "no frame decoded near \(t) s", url: owner.reference.url)
                    }
                    let image = try Self.render(
                        decodedFrame, input: owner.input, options: options, converter: converter)
                    return VideoFrame(
                        image: image, requestedTime: t, actualTime: decodedFrame.time, isKeyframe: decodedFrame.isKey)
                }
            }
            ready[position] = frame
            while let done = ready.removeValue(forKey: next) {
                yield(done)
                next += 1
            }
        }
    }

    private static func render(
        _ frame: OwnedFrame, input: MediaInput, options: FrameExtractorConfiguration, converter: FrameConverter
    ) throws(MediaError) -> PixelBuffer {
        try input.geometry.image(
            frame, fittingIn: options.maximumSize, turning: options.appliesPreferredTrackTransform, converter: converter
        )
    }

    static func format(_ t: Double) -> String { String(format: "%.3f", t) }

    /// A streaming-layer failure as a media error.
    package static func mediaError(_ error: any Error, url: URL) -> MediaError {
        if let media = error as? MediaError { return media }
        if error is CancellationError { return MediaError(.cancelled, "cancelled", url: url) }
        guard let streaming = error as? StreamingError else {
            return MediaError(.inputUnavailable, "cannot read the stream", url: url, underlying: error)
        }
        let kind: MediaError.Kind
        switch streaming.kind {
        case .network:
            if let loading = streaming.underlying as? LoadingError, loading.kind == .timedOut {
                kind = .timedOut
            } else {
                kind = .inputUnavailable
            }
        case .manifest, .tooLarge, .unsupported, .invalidContent: kind = .invalidMedia
        case .refused: kind = .invalidArgument
        case .unavailable: kind = .timeOutOfRange
        case .noTrack: kind = .noVideoStream
        case .cancelled: kind = .cancelled
        }
        return MediaError(kind, streaming.message, url: streaming.url ?? url, underlying: streaming)
    }
}
