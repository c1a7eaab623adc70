import Crypto
import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import Foundation

/// The images of image URLs: rendered once per video version and parameters (identical requests at the same time
/// share one decode), the bytes kept in memory up to a byte budget.
final class ImageStore: Sendable {
    private let rendered = MemoryCache<String, Data>(costLimit: 64 << 20)
    private let flights = RequestCoalescer<String, Data>()
    private let media: MediaInfo

    init(media: MediaInfo) {
        self.media = media
    }

    /// Images decoded and encoded so far (a shared or a cached answer counts once).
    var renderCount: Int { flights.startedCount }

    /// The image's key: the video's version and the parameters that change the image.
    static func key(_ video: VideoLibrary.Video, _ parameters: ImageParameters) -> String {
        MediaInfo.key(video) + "\n" + parameters.canonical
    }

    /// A strong `ETag` for the image: a digest of its key.
    static func entityTag(_ key: String) -> String {
        let digest = SHA256.hash(data: Data(key.utf8))
        return "\"" + digest.prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// The encoded image.
    func image(of video: VideoLibrary.Video, _ parameters: ImageParameters) async throws -> Data {
        let key = Self.key(video, parameters)
        if let kept = rendered.value(for: key) { return kept }
        let media = self.media
        let data = try await flights.value(for: key) {
            let picture: PixelBuffer
            if let time = parameters.time {
                picture = try await media.picture(of: video, at: time)
            } else {
                picture = try await media.picture(of: video, at: try await media.posterTime(of: video) ?? 0)
            }
            let image = try ImageRendering.render(picture, parameters)
            let quality = parameters.format == .webp ? 80 : 85
            return Data(try ImageCodec.encode(image, as: parameters.format, quality: quality))
        }
        rendered.insert(data, for: key, cost: data.count)
        return data
    }
}
