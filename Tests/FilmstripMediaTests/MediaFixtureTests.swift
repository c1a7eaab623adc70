import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

/// Runs first in `make test` (its own step) so the parallel run finds every fixture made.
@Suite("Test media fixtures")
struct MediaFixtureTests {
    @Test("every fixture is made by the ffmpeg CLI and opens")
    func makeAll() async throws {
        try MediaFixtures.makeAll()
        #expect(try await FrameExtractor(url: try MediaFixtures.counter()).duration() == 10)
        #expect(try await FrameExtractor(url: try MediaFixtures.large()).duration() == 60)
        #expect(frameNumber(try await FrameExtractor(url: try MediaFixtures.hls()).image(at: 0).image) == 0)
    }
}
