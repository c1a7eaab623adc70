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
        switch ContentKind.detect(bytes) {
        case .webVTT?:
            let track = try WebVTTThumbnailParser(mode: configuration.parsingMode).parse(bytes, trackURL: url)
            return ReadTrack(track: track)
        case .json?:
            return ReadTrack(track: try StoryboardParser().parse(bytes, url: url).refusingLocalImages())
        case .bif?:
            return ReadTrack(track: try BIFParser().parse(bytes, url: url), embedded: bytes)
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
    private func readManifest(_ bytes: Data, url: URL, live: LiveOrigin?) async throws -> ReadTrack {
        let client = StreamingClient(
            url: url, transport: loader.transport, configuration: loader.configuration, now: configuration.wallClock)
        let loader = self.loader
        let policy: ResourceLoader.CachePolicy = configuration.offline ? .cacheOnly : .networkFirst
        var previous: ImageTrackRefresh?
        if case .stream(let refresh)? = live { previous = refresh }
        let read = try await client.imageTrack(
            manifest: bytes, preferredTileSize: configuration.preferredTileSize, previous: previous
        ) { try await loader.data(for: $0, policy: policy) }
        return ReadTrack(track: read.track, live: read.refresh.map(LiveOrigin.stream))
    }
}
