import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import FilmstripStreaming
import Foundation

extension MediaInfo {
    /// The exact frame shown at `time` (not the keyframe before it), fitted inside `box` (at most
    /// ``ImageParameters/largestSide`` pixels a side), handed to `then` (rendering and encoding) while
    /// the decoder slot is still held, so no more large canvases exist at once than there are decoders.
    func picture<T: Sendable>(
        of video: VideoLibrary.Video, at time: Double,
        fitting box: (width: Int, height: Int) = (ImageParameters.largestSide, ImageParameters.largestSide),
        _ then: @escaping @Sendable (PixelBuffer) throws -> T
    ) async throws -> T {
        let largest = PixelSize(width: box.width, height: box.height)
        let options = self.options {
            $0.toleranceBefore = 0
            $0.maximumSize = largest
            // Frame threads: a lone request's decode from its keyframe takes half as long; under load the decoder
            // slots (one per core) keep the cores busy either way.
            $0.decoderThreads = 2
        }
        let url = video.file
        return try await decoding.run {
            let picture: PixelBuffer
            do {
                picture = try await FrameExtractor(url: url, options: options).image(at: time).image
            } catch let error as MediaError where error.kind == .noVideoStream {
                // A file of audio alone: its cover picture, else a placeholder card, at any time.
                picture = try AudioFileCard.image(for: url, maximumSize: largest)
            }
            return try then(picture)
        }
    }

    /// Where a live stream ends now: the end of its last segment, in seconds on the stream's timeline (one fetch of
    /// its playlist or MPD).
    func liveEdge(of video: VideoLibrary.Video) async throws -> Double {
        try await FrameExtractor(url: video.file, options: options()).duration()
    }

    /// The last frame before `edge` (a live stream's edge when it was asked): the exact frame, decoded on from the
    /// keyframe of the last segment.
    func latestPicture<T: Sendable>(
        of video: VideoLibrary.Video, edge: Double, fitting box: (width: Int, height: Int),
        _ then: @escaping @Sendable (PixelBuffer) throws -> T
    ) async throws -> T {
        try await picture(of: video, at: max(0, edge - 0.001), fitting: box, then)
    }

    /// The time of the video's representative poster: among its first keyframes, the first that is neither black,
    /// uniform nor blurred (``PosterChoice/representative``); `nil` for a file of audio alone.
    func posterTime(of video: VideoLibrary.Video) async throws -> Double? {
        try await posters.thumbnail(for: video.file).time
    }

    /// Whether the video is a live stream (a playlist or MPD that is still being written).
    func isLive(_ video: VideoLibrary.Video) async -> Bool {
        guard video.isStream else { return false }
        let key = Self.key(video)
        if let known = live.value(for: key) { return known }
        var loading = LoadingConfiguration(maximumResponseSize: 256 << 20)
        loading.addressPolicy = addressPolicy
        let found = (try? await StreamingClient(url: video.file, configuration: loading).presentation().isLive) ?? false
        live.insert(found, for: key, cost: 1)
        return found
    }

    /// Chooses posters: small pictures (only their time is used), no disk cache.
    static func posterLoader(_ policy: AddressPolicy) -> VideoThumbnailLoader {
        var configuration = VideoThumbnailLoaderConfiguration()
        configuration.loading.addressPolicy = policy
        configuration.posterChoice = .representative
        configuration.maximumSize = PixelSize(width: 64, height: 64)
        configuration.cacheDirectory = nil
        configuration.countLimit = 10_000
        return VideoThumbnailLoader(configuration: configuration)
    }
}
