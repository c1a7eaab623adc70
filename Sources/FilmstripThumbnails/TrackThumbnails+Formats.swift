public import FilmstripFormats
import FilmstripLoading
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
            let read = try await TrackReader(self).read(bytes, url: url, live: nil)
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
}
