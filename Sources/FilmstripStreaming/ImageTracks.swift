public import FilmstripFormats
public import Foundation

/// How a live image track is read again: what a reload needs from the last one.
public enum ImageTrackRefresh: Sendable, Hashable {
    /// An HLS image playlist without `EXT-X-ENDLIST`: the start time of each media sequence number seen, and where
    /// the last read ended.
    case playlist(url: URL, targetDuration: Double, starts: [Int: Double], end: Double)
    /// A dynamic MPD.
    case manifest(url: URL, minimumUpdatePeriod: Double)

    /// What is read again.
    public var url: URL {
        switch self {
        case .playlist(let url, _, _, _), .manifest(let url, _): url
        }
    }

    /// When it is read again.
    public var cadence: LiveRefreshSchedule.Cadence {
        switch self {
        case .playlist(_, let target, _, _): .playlist(targetDuration: target)
        case .manifest(_, let period): .manifest(minimumUpdatePeriod: period)
        }
    }
}

/// An image track read from a manifest, and how to read it again when it is live.
public struct ImageTrackReading: Sendable {
    /// The track.
    public var track: ThumbnailTrack
    /// `nil` for a track that does not change.
    public var refresh: ImageTrackRefresh?
}

extension StreamingClient {
    /// The image track of this client's manifest (`bytes`, as fetched from ``url``): an HLS image media playlist,
    /// the image stream of a master, or the thumbnail tiles of an MPD; from several, the one whose tile size is
    /// closest to `preferredTileSize`, else the one with the largest tiles. `previous` is the last read of the same
    /// live track (an HLS playlist keeps its timeline by media sequence numbers). `fetch` gives the bytes of a
    /// playlist the master names (a caller's cache); without it, the client fetches them.
    ///
    /// - Throws: ``StreamingError``: `.noTrack` when there is no image track (the message says when I-frame tracks
    ///   could show previews instead), `.refused` for a remote manifest that names a local file, `.manifest` for
    ///   one that does not parse.
    public func imageTrack(
        manifest bytes: Data, preferredTileSize: PixelSize? = nil, previous: ImageTrackRefresh? = nil,
        fetch: (@Sendable (URL) async throws -> Data)? = nil
    ) async throws -> ImageTrackReading {
        switch try parseManifestPlaylist(bytes) {
        case .media(let media)?:
            // A live sequence read again: its map was seen to describe images at the first read (a video I-frame
            // playlist gives no reading to refresh), so it is not fetched again.
            let readBefore = previous.map { $0.url == url } ?? false
            if media.iFramesOnly, readBefore ? true : try await isImageSequence(media) {
                return try Self.imageSequenceTrack(media, url: url, previous: previous)
            }
            guard media.imagesOnly || media.segments.contains(where: { $0.tiles != nil }) else {
                throw Self.noImageTrack(url, hasIFrames: media.iFramesOnly)
            }
            return try Self.imageTrack(media, url: url, previous: previous)
        case .master(let master)?:
            // Image playlists first (a sheet serves many thumbnails); else the I-frame image sequences.
            let sequences = master.iFrameStreams.filter(\.isImageSequence)
            let listed = master.imageStreams.isEmpty ? sequences : master.imageStreams
            let streams = listed.filter { $0.resolution != nil || listed.count == 1 }
            let chosen = Self.closest(
                streams, size: { PixelSize(width: $0.resolution?.width ?? 0, height: $0.resolution?.height ?? 0) },
                preferred: preferredTileSize)
            guard let chosen else { throw Self.noImageTrack(url, hasIFrames: !master.iFrameStreams.isEmpty) }
            try Self.refuseLocal(chosen.uri, from: url)
            let data =
                if let fetch { try await fetch(chosen.uri) } else {
                    try await fetcher.fetch(chosen.uri, limit: limits.maximumManifestBytes, object: .mediaPlaylist)
                }
            guard case .media(let media) = try HLSPlaylistParser().parse(data, url: chosen.uri) else {
                throw StreamingError(.manifest, "an image stream must name a media playlist", url: chosen.uri)
            }
            if master.imageStreams.isEmpty {
                guard media.iFramesOnly else {
                    throw StreamingError(
                        .manifest, "an I-frame stream must name an EXT-X-I-FRAMES-ONLY playlist", url: chosen.uri)
                }
                return try Self.imageSequenceTrack(media, url: chosen.uri, previous: previous)
            }
            return try Self.imageTrack(media, url: chosen.uri, previous: previous)
        case nil:
            return try await dashImageTrack(try parseManifest(bytes, url: url), preferredTileSize: preferredTileSize)
        }
    }

    /// Whether an I-frame playlist is an image sequence: its `EXT-X-MAP` (one small range) describes `mjpg` samples.
    /// A playlist without a map is video (MPEG-TS I-frames).
    private func isImageSequence(_ media: HLSMediaPlaylist) async throws -> Bool {
        guard let map = media.segments.first?.map else { return false }
        try Self.refuseLocal(map.uri, from: url)
        let bytes = try await fetcher.fetch(
            map.uri, range: map.byteRange, limit: limits.maximumManifestBytes, object: .initialization)
        return ImageIFrameSequence.describesImages(initialization: bytes)
    }

    /// An I-frame image sequence as a track: each entry one whole image, the JPEG inside its byte range's fragment
    /// (`EXT-X-GAP` entries have none). A live one is read again as a live image playlist is.
    private static func imageSequenceTrack(
        _ media: HLSMediaPlaylist, url: URL, previous: ImageTrackRefresh?
    ) throws -> ImageTrackReading {
        var reading = try imageTrack(media, url: url, previous: previous)
        reading.track.format = .iFrameImages
        return reading
    }

    /// The playlist when `bytes` hold one (an HLS playlist that does not parse throws).
    private func parseManifestPlaylist(_ bytes: Data) throws -> HLSPlaylist? {
        guard ContentKind.detect(bytes) == .hlsPlaylist else { return nil }
        return try HLSPlaylistParser(maximumEntries: limits.maximumEntries).parse(bytes, url: url)
    }

    /// An image media playlist as a track; a live one (no `EXT-X-ENDLIST`) keeps its timeline across reloads by its
    /// media sequence numbers.
    private static func imageTrack(
        _ media: HLSMediaPlaylist, url: URL, previous: ImageTrackRefresh?
    ) throws -> ImageTrackReading {
        guard media.isLive else {
            return ImageTrackReading(track: try media.thumbnailTrack(url: url).refusingLocalImages())
        }
        var known: [Int: Double] = [:]
        var lastEnd = 0.0
        if case .playlist(_, _, let starts, let end)? = previous {
            known = starts
            lastEnd = end
        }
        // The first segment's time: known from the last read, else from a later segment that was known, else where
        // the last read ended.
        var start = lastEnd
        var offset = 0.0
        for segment in media.segments {
            if let time = known[segment.sequenceNumber] {
                start = time - offset
                break
            }
            offset += segment.duration
        }
        let track = try media.thumbnailTrack(url: url, startingAt: start).refusingLocalImages()
        var starts: [Int: Double] = [:]
        var time = start
        for segment in media.segments {
            starts[segment.sequenceNumber] = time
            time += segment.duration
        }
        return ImageTrackReading(
            track: track,
            refresh: .playlist(url: url, targetDuration: media.targetDuration, starts: starts, end: time))
    }

    private func dashImageTrack(
        _ presentation: Presentation, preferredTileSize: PixelSize?
    ) async throws -> ImageTrackReading {
        var sheets: [ThumbnailTrack.Sheet] = []
        var found = false
        for period in presentation.periods {
            let candidates = period.tracks.filter { $0.kind == .image }.flatMap { track in
                track.renditions.map { (track, $0) }
            }
            let chosen = Self.closest(
                candidates,
                size: { pair in
                    let layout = pair.1.tileLayout ?? pair.0.tileLayout ?? Presentation.TileLayout(columns: 1, rows: 1)
                    return PixelSize(
                        width: (pair.1.width ?? 0) / layout.columns, height: (pair.1.height ?? 0) / layout.rows)
                }, preferred: preferredTileSize)
            guard let (track, rendition) = chosen else { continue }
            found = true
            let layout = rendition.tileLayout ?? track.tileLayout ?? Presentation.TileLayout(columns: 1, rows: 1)
            for segment in try await segments(of: rendition, in: presentation) {
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
        let track = try ThumbnailTrack(sheets: sheets, sourceURL: url, format: .dash).refusingLocalImages()
        guard presentation.isLive else { return ImageTrackReading(track: track) }
        return ImageTrackReading(
            track: track, refresh: .manifest(url: url, minimumUpdatePeriod: presentation.minimumUpdatePeriod ?? 2))
    }

    /// The candidate whose tile size is closest to `preferred`, else the one with the largest tiles.
    static func closest<T>(_ candidates: [T], size: (T) -> PixelSize, preferred: PixelSize?) -> T? {
        if let preferred {
            return candidates.min { a, b in
                let (sa, sb) = (size(a), size(b))
                return abs(sa.width - preferred.width) + abs(sa.height - preferred.height)
                    < abs(sb.width - preferred.width) + abs(sb.height - preferred.height)
            }
        }
        return candidates.max { size($0).width * size($0).height < size($1).width * size($1).height }
    }

    /// The presentation has no image track. One with I-frame playlists (or DASH trick-mode sets) can still show
    /// previews through the `.frames` engine, which decodes those keyframes: the message says so first.
    private static func noImageTrack(_ url: URL, hasIFrames: Bool) -> StreamingError {
        let none =
            "the presentation has no image track (no EXT-X-IMAGE-STREAM-INF, EXT-X-IMAGES-ONLY or DASH thumbnail tiles)"
        let generate = "make a preview track from its video with `filmstrip generate` (PreviewTrackGenerator)"
        guard hasIFrames else { return StreamingError(.noTrack, "\(none); \(generate)", url: url) }
        return StreamingError(
            .noTrack,
            "\(none), but it has I-frame playlists: `--engine frames` (FrameThumbnails, the .frames engine) shows "
                + "previews decoded from them; or \(generate)", url: url)
    }

    /// A remote source may not refer to local files.
    static func refuseLocal(_ target: URL, from source: URL) throws(StreamingError) {
        let scheme = source.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", !["http", "https"].contains(target.scheme?.lowercased() ?? "")
        else { return }
        throw StreamingError(
            .refused, "a remote track may not refer to '\(target.absoluteString)' (only http and https)", url: source)
    }
}

extension ThumbnailTrack {
    /// The track, refused when it was read over the network and names an image that is not (a `file:` URL).
    public func refusingLocalImages() throws(StreamingError) -> ThumbnailTrack {
        for image in images { try StreamingClient.refuseLocal(image, from: sourceURL) }
        return self
    }
}
