import FilmstripFormats
import FilmstripImaging
import FilmstripLoading
import FilmstripMedia
import FilmstripPreviews
import Foundation

/// The storyboards of image URLs: Mux's storyboard (every tile on one sheet, `storyboard.json` and its image),
/// generated once per video version into the cache folder (identical requests share the generation) and kept there.
final class StoryboardStore: Sendable {
    /// A generated storyboard: its image, its tiles (their times and regions) and the key of its settings.
    struct Storyboard: Sendable {
        var image: URL
        var cues: [ThumbnailCue]
        var key: String

        var duration: Double { cues.last?.end ?? 0 }
        var tileSize: (width: Int, height: Int) {
            (Int(cues.first?.region?.width ?? 0), Int(cues.first?.region?.height ?? 0))
        }
    }

    private let flights = RequestCoalescer<String, Storyboard>()
    /// The storyboard images in PNG and WebP, made from the JPEG once.
    private let converted = MemoryCache<String, Data>(costLimit: 32 << 20)
    private let folder: URL
    private let options: PreviewTrackConfiguration
    private let generations: AsyncLimiter
    /// Generations that failed, by key, with when: a video that cannot be read is not generated again on every
    /// request, for ``failureMemory`` seconds (a stream's outage passes).
    private let failures = MemoryCache<String, Failure>(costLimit: .max, countLimit: 10_000)
    private let now: @Sendable () -> Date
    static let failureMemory = 60.0

    private struct Failure: Sendable {
        var error: any Error
        var at: Date
    }

    init(
        cacheDirectory: URL, trackOptions: PreviewTrackConfiguration, parallel: Int,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.now = now
        folder = cacheDirectory.appendingPathComponent("storyboards", isDirectory: true)
        var options = trackOptions
        options.formats = [.storyboard]
        options.imageFormat = .jpeg
        self.options = options
        generations = AsyncLimiter(limit: parallel)
    }

    /// Storyboards generated so far (a shared or a kept one counts once).
    var generationCount: Int { flights.startedCount }

    func storyboard(of video: VideoLibrary.Video) async throws -> Storyboard {
        let key = TrackStore.versionKey(video, options: options)
        let place = folder.appendingPathComponent(key, isDirectory: true)
        if let kept = try? Self.read(place, key: key) { return kept }
        if let failed = failures.value(for: key), now().timeIntervalSince(failed.at) < Self.failureMemory {
            throw failed.error
        }
        let options = self.options
        return try await flights.value(for: key) { [generations, failures, now] in
            do {
                try await generations.run {
                    try await TrackStore.generate(video, into: place, options: options, channel: nil)
                }
                return try Self.read(place, key: key)
            } catch {
                let cancelled = error is CancellationError || (error as? MediaError)?.kind == .cancelled
                if !cancelled { failures.insert(Failure(error: error, at: now()), for: key, cost: 1) }
                throw error
            }
        }
    }

    /// The storyboard's image in `format` (the JPEG the generator wrote, or that converted once and kept).
    func image(of board: Storyboard, as format: ImageFormat) throws -> Data {
        let jpeg = try Data(contentsOf: board.image)
        guard format != .jpeg else { return jpeg }
        let key = board.key + "\n" + format.fileExtension
        if let kept = converted.value(for: key) { return kept }
        let (pixels, _) = try ImageCodec.decode(jpeg)
        let data = Data(try ImageCodec.encode(pixels, as: format, quality: 80))
        converted.insert(data, for: key, cost: data.count)
        return data
    }

    /// The storyboard in `place`, as the generator wrote it (read back by the storyboard reader).
    static func read(_ place: URL, key: String) throws -> Storyboard {
        let file = place.appendingPathComponent("storyboard.json")
        let track = try StoryboardParser().parse(try Data(contentsOf: file), url: file)
        guard let image = track.images.first, track.cues.allSatisfy({ $0.region != nil }) else {
            throw ServerError(status: 500, "the storyboard in \(place.path) has no image regions")
        }
        return Storyboard(image: image, cues: track.cues, key: key)
    }
}
