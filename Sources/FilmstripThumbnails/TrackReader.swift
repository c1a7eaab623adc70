import FilmstripFormats
import FilmstripLoading
import FilmstripStreaming
import Foundation

/// Reads a thumbnail source's bytes into a track, told by their content: WebVTT, storyboard JSON, a Roku BIF, or an
/// HLS playlist or MPD whose image track is read through the streaming client (with the engine's loader, so offline
/// mode reads what a master names from the cache).
struct TrackReader: Sendable {
    let loader: ResourceLoader
    let configuration: ThumbnailsConfiguration

    /// The reader of `thumbnails`' sources (its loader and settings).
    init(_ thumbnails: TrackThumbnails) {
        (loader, configuration) = (thumbnails.loader, thumbnails.configuration)
    }

    /// A track as read, with (for a BIF) the bytes its images live in and (for a live source) how to read it again.
    struct Read: Sendable {
        var track: ThumbnailTrack
        var embedded: Data?
        var live: LiveOrigin?
    }

    /// Reads `bytes` fetched from `url` into a track. `live` carries what an earlier read of the same live source
    /// knew (to keep an HLS playlist's timeline where it was).
    func read(_ bytes: Data, url: URL, live: LiveOrigin?) async throws -> Read {
        switch ContentKind.detect(bytes) {
        case .webVTT?:
            let track = try WebVTTThumbnailParser(mode: configuration.parsingMode).parse(bytes, trackURL: url)
            return Read(track: track)
        case .json?:
            return Read(track: try StoryboardParser().parse(bytes, url: url).refusingLocalImages())
        case .bif?:
            return Read(track: try BIFParser().parse(bytes, url: url), embedded: bytes)
        case .hlsPlaylist?, .mpd?:
            return try await readManifest(bytes, url: url, live: live)
        case nil:
            throw ThumbnailsError(
                .parse, ThumbnailsError.notATrack + ": neither WebVTT, an HLS playlist, an MPD, a BIF nor JSON",
                url: url)
        }
    }

    /// Reads the image track of an HLS playlist or an MPD through the streaming client (a master's image playlist
    /// comes through the loader, so offline mode reads it from the cache).
    private func readManifest(_ bytes: Data, url: URL, live: LiveOrigin?) async throws -> Read {
        let client = StreamingClient(
            url: url, transport: loader.transport, configuration: loader.configuration, now: configuration.wallClock)
        let loader = loader
        let policy: ResourceLoader.CachePolicy = configuration.offline ? .cacheOnly : .networkFirst
        var previous: ImageTrackRefresh?
        if case .stream(let refresh)? = live { previous = refresh }
        let read = try await client.imageTrack(
            manifest: bytes, preferredTileSize: configuration.preferredTileSize, previous: previous
        ) { try await loader.data(for: $0, policy: policy) }
        return Read(track: read.track, live: read.refresh.map(LiveOrigin.stream))
    }
}
