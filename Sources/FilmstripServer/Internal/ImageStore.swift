import Crypto
import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import FilmstripSync
import Foundation

/// The images of image URLs: rendered once per video version and parameters (identical requests at the same time
/// share one decode), the bytes kept in memory up to a byte budget and on disk in a byte-bounded cache (which
/// outlives the process). At most `queueLimit` different images are being made at once, counting those waiting for
/// a decoder; a request for yet another is refused (``Busy``) rather than queued without end.
final class ImageStore: Sendable {
    /// Makes an image's bytes.
    typealias Render = @Sendable (VideoLibrary.Video, ImageParameters) async throws -> Data

    /// Too many images are being made: try again shortly (HTTP 503 with `Retry-After`).
    struct Busy: Error {}

    private let memory = MemoryCache<String, Data>(costLimit: 64 << 20)
    private let disk: DiskCache?
    private let flights = RequestCoalescer<String, Data>()
    private let making = Mutex<Set<String>>([])
    private let queueLimit: Int
    private let render: Render

    init(disk: DiskCache?, queueLimit: Int, render: @escaping Render) {
        self.disk = disk
        self.queueLimit = max(1, queueLimit)
        self.render = render
    }

    /// The store of a server: images made from `media`'s pictures.
    convenience init(media: MediaInfo, disk: DiskCache?, queueLimit: Int) {
        self.init(disk: disk, queueLimit: queueLimit) { video, parameters in
            try await Self.make(video, parameters, media: media)
        }
    }

    /// Images decoded and encoded so far (a shared or a cached answer counts once).
    var renderCount: Int { flights.startedCount }

    /// The image's key: the video's version and the parameters that change the image.
    static func key(_ video: VideoLibrary.Video, _ parameters: ImageParameters) -> String {
        MediaInfo.key(video) + "\n" + parameters.canonical
    }

    /// A strong `ETag` for the image: a digest of its key.
    static func entityTag(_ key: String) -> String {
        "\"" + digest(key).prefix(32) + "\""
    }

    private static func digest(_ key: String) -> String {
        SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// The encoded image.
    ///
    /// - Throws: ``Busy`` when `queueLimit` other images are being made.
    func image(of video: VideoLibrary.Video, _ parameters: ImageParameters) async throws -> Data {
        try await image(key: Self.key(video, parameters)) { [render] in try await render(video, parameters) }
    }

    /// The image `key` stands for (a video's version and every parameter that changes the image), made by `make`
    /// when it is neither in memory nor on disk.
    ///
    /// - Throws: ``Busy`` when `queueLimit` other images are being made.
    func image(key: String, _ make: @escaping @Sendable () async throws -> Data) async throws -> Data {
        if let kept = memory.value(for: key) { return kept }
        // The disk cache's entries are named by URL: this one stands for the image's key.
        let entry = URL(string: "filmstrip-image:///" + Self.digest(key))!
        if let disk, let stored = try? disk.data(for: entry) {
            memory.insert(stored, for: key, cost: stored.count)
            return stored
        }
        // The caller that takes an image's slot gives it back however its wait ends (answered, failed, cancelled).
        let admitted = making.withLock { keys -> Bool? in
            if keys.contains(key) { return false }
            guard keys.count < queueLimit else { return nil }
            keys.insert(key)
            return true
        }
        guard let took = admitted else { throw Busy() }
        defer { if took { making.withLock { _ = $0.remove(key) } } }
        let data = try await flights.value(for: key) { [disk] in
            let data = try await make()
            // A disk that cannot take it (full, read-only) costs only the next process a decode.
            try? disk?.store(data, for: entry)
            return data
        }
        memory.insert(data, for: key, cost: data.count)
        return data
    }

    /// Decodes the picture the parameters ask for, renders and encodes it.
    static func make(_ video: VideoLibrary.Video, _ parameters: ImageParameters, media: MediaInfo) async throws -> Data
    {
        var time = parameters.time ?? 0
        if parameters.time == nil { time = try await media.posterTime(of: video) ?? 0 }
        return try await media.picture(of: video, at: time, fitting: parameters.decodeBox) {
            try encode($0, parameters)
        }
    }

    /// Renders a picture as the parameters ask and encodes it.
    static func encode(_ picture: PixelBuffer, _ parameters: ImageParameters) throws -> Data {
        let image = try ImageRendering.render(picture, parameters)
        let quality = parameters.format == .webp ? 80 : 85
        return Data(try ImageCodec.encode(image, as: parameters.format, quality: quality))
    }
}
