public import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
public import Foundation

extension TrackThumbnails {
    /// Loads a thumbnail source in any format Filmstrip reads, told by its content: a WebVTT track, an HLS image
    /// media playlist or a master that lists image streams, an MPD with thumbnail tiles, a Roku BIF, or storyboard
    /// JSON. From a master or an MPD the image track with the largest tiles is taken, or the one closest to
    /// ``ThumbnailsConfiguration/preferredTileSize``. In eager mode (the default) this returns after every image is
    /// in the local cache; in lazy mode, after the track is read.
    ///
    /// - Throws: ``ThumbnailsError``: `.parse` for a malformed source (with the line or element), `.unsupported`
    ///   for a presentation with no image track, `.network` for a failed fetch.
    public func load(track url: URL) async throws {
        let generation = beginLoad()
        do {
            let policy: ResourceLoader.CachePolicy = configuration.offline ? .cacheOnly : .networkFirst
            let bytes = try await loader.data(for: url, policy: policy)
            let read = try await readTrack(bytes, url: url, live: nil)
            for diagnostic in read.track.diagnostics {
                logger.notice("track diagnostic", metadata: ["url": "\(url)", "diagnostic": "\(diagnostic)"])
            }
            try await install(
                ThumbnailSource(
                    track: read.track, generation: generation, embedded: read.embedded, live: read.live != nil))
            if let live = read.live { startLiveRefresh(live, generation: generation) }
        } catch {
            throw ThumbnailsError.wrap(error, url: url)
        }
    }

    /// The format of the loaded source, if any.
    public var format: ThumbnailFormat? { sourceFormat }

    /// A track as read, with (for a BIF) the bytes its images live in and (for a live source) how to read it again.
    struct ReadTrack: Sendable {
        var track: ThumbnailTrack
        var embedded: Data?
        var live: LiveOrigin?
    }

    /// Reads `bytes` fetched from `url` into a track. `live` carries what an earlier read of the same live source
    /// knew (to keep an HLS playlist's timeline where it was).
    func readTrack(_ bytes: Data, url: URL, live: LiveOrigin?) async throws -> ReadTrack {
        switch ThumbnailContent.detect(bytes) {
        case .webVTT?:
            let track = try WebVTTThumbnailParser(mode: configuration.parsingMode).parse(bytes, trackURL: url)
            return ReadTrack(track: track)
        case .json?:
            return ReadTrack(track: try Self.checked(StoryboardParser().parse(bytes, url: url)))
        case .bif?:
            return ReadTrack(track: try BIFParser().parse(bytes, url: url), embedded: bytes)
        case .hlsPlaylist?:
            return try await readPlaylist(bytes, url: url, live: live)
        case .mpd?:
            return try await readMPD(bytes, url: url)
        case nil:
            throw ThumbnailsError(
                .parse, "not a thumbnail track: neither WebVTT, an HLS playlist, an MPD, a BIF nor JSON", url: url)
        }
    }

    private func readPlaylist(_ bytes: Data, url: URL, live: LiveOrigin?) async throws -> ReadTrack {
        switch try HLSPlaylistParser().parse(bytes, url: url) {
        case .media(let media):
            guard media.imagesOnly || media.segments.contains(where: { $0.tiles != nil }) else {
                throw Self.noImageTrack(url, hasIFrames: media.iFramesOnly)
            }
            return try Self.imageTrack(media, url: url, previous: live)
        case .master(let master):
            let streams = master.imageStreams.filter { $0.resolution != nil || master.imageStreams.count == 1 }
            guard
                let chosen = Self.closest(
                    streams, size: { ($0.resolution?.width ?? 0, $0.resolution?.height ?? 0) },
                    preferred: configuration.preferredTileSize)
            else { throw Self.noImageTrack(url, hasIFrames: !master.iFrameStreams.isEmpty) }
            try Self.refuseLocal(chosen.uri, from: url)
            let policy: ResourceLoader.CachePolicy = configuration.offline ? .cacheOnly : .networkFirst
            let data = try await loader.data(for: chosen.uri, policy: policy)
            guard case .media(let media) = try HLSPlaylistParser().parse(data, url: chosen.uri) else {
                throw ThumbnailsError(.parse, "an image stream must name a media playlist", url: chosen.uri)
            }
            return try Self.imageTrack(media, url: chosen.uri, previous: live)
        }
    }

    /// An image media playlist as a track; a live one (no `EXT-X-ENDLIST`) keeps its timeline across reloads by its
    /// media sequence numbers.
    private static func imageTrack(_ media: HLSMediaPlaylist, url: URL, previous: LiveOrigin?) throws -> ReadTrack {
        guard media.isLive else { return ReadTrack(track: try checked(media.thumbnailTrack(url: url))) }
        var known: [Int: Double] = [:]
        var lastEnd = 0.0
        if case .playlist(_, _, let starts, let end)? = previous {
            known = starts
            lastEnd = end
        }
        // The first segment's time: known from the last reload, else from a later segment that was known, else
        // where the last reload ended.
        var start = lastEnd
        var offset = 0.0
        for segment in media.segments {
            if let time = known[segment.sequenceNumber] {
                start = time - offset
                break
            }
            offset += segment.duration
        }
        let track = try checked(media.thumbnailTrack(url: url, startingAt: start))
        var starts: [Int: Double] = [:]
        var time = start
        for segment in media.segments {
            starts[segment.sequenceNumber] = time
            time += segment.duration
        }
        return ReadTrack(
            track: track, live: .playlist(url: url, targetDuration: media.targetDuration, starts: starts, end: time))
    }

    private func readMPD(_ bytes: Data, url: URL) async throws -> ReadTrack {
        let presentation = try DASHManifestParser().parse(bytes, url: url)
        let client = StreamingClient(
            url: url, transport: loader.transport, configuration: loader.configuration, now: configuration.wallClock)
        var sheets: [ThumbnailTrack.Sheet] = []
        var found = false
        for period in presentation.periods {
            let candidates = period.tracks.filter { $0.kind == .image }.flatMap { track in
                track.renditions.map { (track, $0) }
            }
            let preferred = configuration.preferredTileSize
            guard
                let (track, rendition) = Self.closest(
                    candidates,
                    size: { pair in
                        let layout =
                            pair.1.tileLayout ?? pair.0.tileLayout ?? Presentation.TileLayout(columns: 1, rows: 1)
                        return ((pair.1.width ?? 0) / layout.columns, (pair.1.height ?? 0) / layout.rows)
                    }, preferred: preferred)
            else { continue }
            found = true
            let layout = rendition.tileLayout ?? track.tileLayout ?? Presentation.TileLayout(columns: 1, rows: 1)
            let segments = try await client.segments(of: rendition, in: presentation)
            for segment in segments {
                // A sheet cut short by the period's end keeps its tiles' time; the tiles past the end are empty.
                let tileDuration = segment.fullDuration.map { $0 / Double(layout.columns * layout.rows) }
                sheets.append(
                    ThumbnailTrack.Sheet(
                        url: segment.url, byteRange: segment.byteRange, start: segment.start,
                        duration: segment.duration, layout: layout, tileDuration: tileDuration,
                        declaredSize: rendition.width.flatMap { w in
                            rendition.height.map { PixelSize(width: w, height: $0) }
                        }))
            }
        }
        guard found else {
            let trickMode = presentation.periods.contains { $0.tracks.contains { $0.kind == .iFrame } }
            throw Self.noImageTrack(url, hasIFrames: trickMode)
        }
        let track = try Self.checked(ThumbnailTrack(sheets: sheets, sourceURL: url, format: .dash))
        guard presentation.isLive else { return ReadTrack(track: track) }
        return ReadTrack(
            track: track, live: .manifest(url: url, minimumUpdatePeriod: presentation.minimumUpdatePeriod ?? 2))
    }

    /// The candidate whose tile size is closest to `preferred`, else the one with the largest tiles.
    static func closest<T>(
        _ candidates: [T], size: (T) -> (Int, Int), preferred: ThumbnailsConfiguration.TileSize?
    ) -> T? {
        if let preferred {
            return candidates.min { a, b in
                let (aw, ah) = size(a)
                let (bw, bh) = size(b)
                return abs(aw - preferred.width) + abs(ah - preferred.height)
                    < abs(bw - preferred.width) + abs(bh - preferred.height)
            }
        }
        return candidates.max { size($0).0 * size($0).1 < size($1).0 * size($1).1 }
    }

    /// The presentation has no image track. One with I-frame playlists (or DASH trick-mode sets) can still show
    /// previews through the `.frames` engine, which decodes those keyframes: the message says so first.
    private static func noImageTrack(_ url: URL, hasIFrames: Bool) -> ThumbnailsError {
        let none =
            "the presentation has no image track (no EXT-X-IMAGE-STREAM-INF, EXT-X-IMAGES-ONLY or DASH thumbnail tiles)"
        let generate = "make a preview track from its video with `filmstrip generate` (PreviewTrackGenerator)"
        guard hasIFrames else { return ThumbnailsError(.unsupported, "\(none); \(generate)", url: url) }
        return ThumbnailsError(
            .unsupported,
            "\(none), but it has I-frame playlists: `--engine frames` (FrameThumbnails, the .frames engine) shows "
                + "previews decoded from them; or \(generate)", url: url)
    }

    /// A remote source may not refer to local files.
    private static func refuseLocal(_ target: URL, from source: URL) throws {
        let scheme = source.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", !["http", "https"].contains(target.scheme?.lowercased() ?? "")
        else { return }
        throw ThumbnailsError(
            .unsupported, "a remote track may not refer to '\(target.absoluteString)' (only http and https)",
            url: source)
    }

    /// Refuses a track fetched over the network whose images are not on the network.
    private static func checked(_ track: ThumbnailTrack) throws -> ThumbnailTrack {
        for image in track.images { try refuseLocal(image, from: track.sourceURL) }
        return track
    }
}
