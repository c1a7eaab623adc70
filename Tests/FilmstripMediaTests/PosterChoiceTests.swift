import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("Representative posters and skipped blanks")
struct PosterChoiceTests {
    @Test("the content measure tells black, uniform and blurred pictures from a sharp one")
    func measure() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.opening())
        var verdicts: [String] = []
        for t in [0.0, 2, 4, 6] {
            let content = try await extractor.image(at: t).image.content
            verdicts.append(
                content.isBlack ? "black" : content.isUniform ? "uniform" : content.isBlurred ? "blurred" : "sharp")
        }
        #expect(verdicts == ["black", "uniform", "blurred", "sharp"])
    }
}

@Suite("Representative posters and skipped blanks, end to end")
struct PosterChoiceEndToEndTests {
    @Test("the representative poster skips a black opening, a slate and a blurred shot")
    func representative() async throws {
        let cache = try TemporaryDirectory()
        defer { cache.remove() }
        var configuration = VideoThumbnailLoaderConfiguration()
        configuration.cacheDirectory = cache.url
        configuration.posterChoice = .representative
        let loader = VideoThumbnailLoader(configuration: configuration)
        let thumbnail = try await loader.thumbnail(for: try MediaFixtures.opening())
        #expect(thumbnail.time == 6)
        let (image, _) = try ImageCodec.decode(thumbnail.imageData)
        #expect(image.content.isInformative)
        var plain = VideoThumbnailLoaderConfiguration()
        plain.cacheDirectory = cache.url
        let first = try await VideoThumbnailLoader(configuration: plain).thumbnail(for: try MediaFixtures.opening())
        #expect(first.time == 0)
    }

    @Test("--skip-blank takes a later keyframe inside the cue over a black or uniform one")
    func skipBlank() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = PreviewTrackConfiguration()
        options.interval = 5  // cues [0, 5) and [5, 10): keyframes at 0, 2, 4 and 6, 8
        options.skipBlank = true
        _ = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.opening(), to: directory.url, options: options)
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(track: directory.file("thumbnails.vtt"))
        let first = try ImageCodec.decode(try #require(try await thumbnails.thumbnail(at: 1)).imageData).0.content
        #expect(!first.isBlack && !first.isUniform)  // the blurred pattern at 4 s, not the black at 0 s
        options.skipBlank = false
        let plain = try TemporaryDirectory()
        defer { plain.remove() }
        _ = try await PreviewTrackGenerator.generate(from: try MediaFixtures.opening(), to: plain.url, options: options)
        let unskipped = TrackThumbnails(configuration: configuration)
        try await unskipped.load(track: plain.file("thumbnails.vtt"))
        #expect(try ImageCodec.decode(try #require(try await unskipped.thumbnail(at: 1)).imageData).0.content.isBlack)
    }
}
