import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import Foundation

/// Durations and frames taken straight from videos (posters, and thumbnails before a track exists), kept in
/// memory by video version. Decoding runs at most `limit` at a time.
final class MediaInfo: Sendable {
    private struct FrameKey: Hashable, Sendable {
        var video: String
        var millisecond: Int64
    }

    private let durations = MemoryCache<String, Double>(costLimit: .max, countLimit: 100_000)
    private let frames = MemoryCache<FrameKey, Data>(costLimit: 64 << 20)
    let decoding: AsyncLimiter
    /// Whether each stream is live, by video version.
    let live = MemoryCache<String, Bool>(costLimit: .max, countLimit: 100_000)
    private let width: Int
    /// Where fetches may go: remote streams, and what local manifests name.
    let addressPolicy: AddressPolicy
    /// Representative posters' times.
    let posters: VideoThumbnailLoader

    init(width: Int, limit: Int, addressPolicy: AddressPolicy = .any) {
        self.width = width
        self.decoding = AsyncLimiter(limit: limit)
        self.addressPolicy = addressPolicy
        posters = Self.posterLoader(addressPolicy)
    }

    /// Frame extraction options under the address policy.
    func options(_ change: (inout FrameExtractorConfiguration) -> Void = { _ in }) -> FrameExtractorConfiguration {
        var options = FrameExtractorConfiguration()
        options.loading.addressPolicy = addressPolicy
        change(&options)
        return options
    }

    /// The video's duration in seconds. A video that cannot be read is remembered as such (as NaN) until it
    /// changes, so a library page does not open it again on every view.
    func duration(of video: VideoLibrary.Video) async throws -> Double {
        let key = Self.key(video)
        if let known = durations.value(for: key) {
            guard known.isFinite else { throw ServerError(status: 422, "\(video.name) cannot be read") }
            return known
        }
        let url = video.file
        let options = self.options()
        do {
            let duration = try await decoding.run {
                do {
                    return try await FrameExtractor(url: url, options: options).duration()
                } catch let error as MediaError where error.kind == .noVideoStream {
                    // A file of audio alone: its length all the same (its poster is its card).
                    return try MediaSummary.probe(url: url).duration
                }
            }
            durations.insert(duration.isFinite ? duration : .nan, for: key, cost: 1)
            return duration
        } catch let error as MediaError where error.kind != .cancelled && error.kind != .timedOut {
            durations.insert(.nan, for: key, cost: 1)
            throw error
        }
    }

    /// A JPEG of the keyframe at or before `time`, at most ``width`` pixels wide.
    func frame(of video: VideoLibrary.Video, at time: Double) async throws -> Data {
        let key = FrameKey(video: Self.key(video), millisecond: Int64(exactly: (time * 1000).rounded()) ?? .max)
        if let kept = frames.value(for: key) { return kept }
        let options = self.options { $0.maximumSize = PixelSize(width: width, height: width) }
        let url = video.file
        let maximum = PixelSize(width: width, height: width)
        let jpeg = try await decoding.run {
            do {
                let frame = try await FrameExtractor(url: url, options: options).image(at: time)
                return Data(try JPEGCodec.encode(frame.image, quality: 85))
            } catch let error as MediaError where error.kind == .noVideoStream {
                // A file of audio alone: its cover picture, else a placeholder card.
                return Data(try JPEGCodec.encode(AudioFileCard.image(for: url, maximumSize: maximum), quality: 85))
            }
        }
        frames.insert(jpeg, for: key, cost: jpeg.count)
        return jpeg
    }

    static func key(_ video: VideoLibrary.Video) -> String { video.version }
}
