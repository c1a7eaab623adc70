public import Filmstrip
public import Foundation

/// The previews a seek bar shows, from the same thumbnails API an app uses: the player's own image track (an HLS
/// image playlist or DASH thumbnail tiles its manifest lists) or a sidecar track given by URL, through
/// `Filmstrip.thumbnails(for:)`; else the `.frames` engine over the stream's I-frame playlist or the file's keyframe
/// index, through `Filmstrip.thumbnails(for:engine: .frames)`.
///
/// ```swift
/// player.open(config: PlayerConfiguration(with: streamURL))
/// let previews = try await ScrubPreviews.load(for: player)
/// let preview = await previews.thumbnail(at: 754)       // the image and its cue
/// previews.prefetch(around: 754, direction: .forward)   // while the pointer is over the bar
/// ```
public final class ScrubPreviews: Sendable {
    /// Where the previews come from.
    public enum Source: String, Sendable, Hashable {
        /// A track given by URL (WebVTT, HLS image playlist, MPD tiles, BIF, storyboard JSON).
        case sidecar
        /// The image track the player's HLS master or MPD lists.
        case imageTrack = "image-track"
        /// Keyframes of the stream or file, decoded on demand (the `.frames` engine).
        case frames
    }

    /// Where the previews come from.
    public let source: Source
    /// The engine that answers: the `.tracks` engine for a track, the `.frames` engine for keyframes.
    public let provider: any PreviewProvider

    private init(_ source: Source, _ provider: any PreviewProvider) {
        self.source = source
        self.provider = provider
    }

    /// The previews for `player`'s content (load or open it first): `sidecar` when given, else the image track its
    /// manifest lists, else its keyframes. Tracks load lazily: sheets are fetched as previews are asked for and
    /// prefetched.
    ///
    /// - Throws: the track's load error for a sidecar; the `.frames` engine's load error when the content has no
    ///   image track and its keyframes cannot be found.
    public static func load(
        for player: Player, sidecar: URL? = nil, sdk: Filmstrip = .shared
    ) async throws
        -> ScrubPreviews
    {
        var configuration = sdk.thumbnailsConfiguration
        configuration.loadingMode = .lazy
        let tracks = configuration
        return try await load(
            content: player.contentURL, sidecar: sidecar,
            tracks: { sdk.thumbnails(for: player, configuration: tracks) },
            frames: { try await sdk.thumbnails(for: player, engine: .frames) })
    }

    /// The previews for `url` without a player (a file, an HLS master or media playlist, an MPD, local or remote):
    /// `sidecar` when given (a track, which may be `url` itself), else the image track `url` lists when it is a
    /// manifest, else its keyframes. Tracks load lazily, as ``load(for:sidecar:sdk:)``'s do.
    public static func load(
        url: URL, sidecar: URL? = nil, tracks: ThumbnailsConfiguration = ThumbnailsConfiguration(),
        frames: FrameThumbnailsConfiguration = FrameThumbnailsConfiguration()
    ) async throws -> ScrubPreviews {
        var lazy = tracks
        lazy.loadingMode = .lazy
        let configuration = lazy
        return try await load(
            content: url, sidecar: sidecar, tracks: { TrackThumbnails(configuration: configuration) },
            frames: {
                let engine = FrameThumbnails(configuration: frames)
                try await engine.load(url: url)
                return engine
            })
    }

    /// The choice both loads make: the sidecar (or a download's stored preview track), else the manifest's image track (a manifest that lists none fails
    /// its load with `unsupported` or `parse`), else the keyframes.
    private static func load(
        content: URL?, sidecar: URL?, tracks: () -> TrackThumbnails, frames: () async throws -> FrameThumbnails
    ) async throws -> ScrubPreviews {
        // A download's stored preview track stands for the sidecar.
        if let sidecar = sidecar ?? content.flatMap(Download.containing)?.previewTrackURL {
            let engine = tracks()
            try await engine.load(track: sidecar)
            return ScrubPreviews(.sidecar, engine)
        }
        if let content, ManifestDetection.isManifest(content) {
            let engine = tracks()
            do {
                try await engine.load(track: content)
                return ScrubPreviews(.imageTrack, engine)
            } catch let error as ThumbnailsError where error.kind == .unsupported || error.kind == .parse {
                // No image track: the keyframes below.
            }
        }
        return ScrubPreviews(.frames, try await frames())
    }

    /// The preview for time `t` (seconds on the player's timeline), decoded, with the cue it belongs to; nil when
    /// there is none or it cannot be had.
    public func thumbnail(at t: Double) async -> (image: PixelBuffer, cue: ClosedRange<Double>)? {
        guard let found = try? await provider.thumbnail(at: t), let (image, _) = try? ImageCodec.decode(found.imageData)
        else { return nil }
        let end = max(found.timeStampStart, found.timeStampEnd)
        return (image, found.timeStampStart...end)
    }

    /// Fetches the sheets around `t` and then the rest in waves (track sources; the `.frames` engine decodes on
    /// demand).
    public func prefetch(around t: Double, direction: ScrubDirection) {
        provider.prefetch(around: t, direction: direction)
    }
}
