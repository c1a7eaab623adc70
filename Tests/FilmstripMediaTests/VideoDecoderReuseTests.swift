import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("Playback decoder reuse")
struct VideoDecoderReuseTests {
    /// Every frame's counter number and time, decoded from `decoder`.
    private static func frames(_ decoder: VideoDecoder) throws -> [(time: Double, number: Int?)] {
        var frames: [(Double, Int?)] = []
        while let frame = try decoder.nextFrame() {
            let image = try frame.image()
            let (r, g, b) = image.meanColor(
                x: image.width / 4, y: image.height / 4, width: image.width / 2, height: image.height / 2)
            frames.append((frame.time, MediaFixtures.frameNumber(r: r, g: g, b: b)))
        }
        return frames
    }

    @Test("a decoder taken over mid-stream decodes the next video exactly as a new one; other parameters get a new one")
    func reuse() throws {
        let url = try MediaFixtures.shortCounter()
        let fresh = try Self.frames(try VideoDecoder(url: url))
        // The previous decoder stopped halfway, with frames still inside it.
        let previous = try VideoDecoder(url: url)
        for _ in 0..<10 { _ = try previous.nextFrame() }
        let reused = try VideoDecoder(url: url, reusing: previous)
        #expect(reused.reusedDecoder)
        let again = try Self.frames(reused)
        #expect(again.map(\.time) == fresh.map(\.time))
        #expect(again.map(\.number) == fresh.map(\.number))
        #expect(again.first?.number == 0)
        // A 64x48 video does not match: a decoder of its own.
        let other = try VideoDecoder(url: try MediaFixtures.tinyCounter(), reusing: reused)
        #expect(!other.reusedDecoder)
        #expect(try other.nextFrame() != nil)
    }
}
