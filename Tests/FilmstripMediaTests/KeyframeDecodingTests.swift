@_spi(Benchmarks) import FilmstripPreviews
import FilmstripTesting
import Foundation
import Testing

@_spi(Benchmarks) @testable import FilmstripMedia

@Suite("Keyframes decoded for previews skip the deblocking, and the picture does not show it")
struct KeyframeDecodingTests {
    @Test("an image shrunk 4x or more is a preview; a larger one, or none, is decoded in full")
    func rule() {
        let geometry = FrameGeometry(codedWidth: 640, codedHeight: 360, sampleAspect: (0, 0), quarterTurns: 0)
        #expect(KeyframeDecoding.forImage(width: 160, of: geometry) == .preview)
        #expect(KeyframeDecoding.forImage(width: 161, of: geometry) == .full)
        #expect(KeyframeDecoding.forImage(width: 640, of: geometry) == .full)
        #expect(KeyframeDecoding.forImage(width: 0, of: geometry) == .full)
        // The display width decides: a quarter-turned 640x360 picture is 360 wide.
        let turned = FrameGeometry(codedWidth: 640, codedHeight: 360, sampleAspect: (0, 0), quarterTurns: 1)
        #expect(KeyframeDecoding.forImage(width: 90, of: turned) == .preview)
        #expect(KeyframeDecoding.forImage(width: 160, of: turned) == .full)
    }

    @Test("160 px tiles from unfiltered keyframes differ from the full decode's, and stay above 40 dB PSNR")
    func quality() throws {
        let video = try MediaFixtures.large()
        let starts = stride(from: 0.0, to: 60, by: 10).map { $0 }
        let quality = try MediaBenchmarks.previewQuality(url: video, starts: starts, interval: 10, width: 160)
        #expect(quality.minimum >= 40, "\(quality)")
        // Identical tiles (99 dB) would mean the filter was never skipped.
        #expect(quality.mean < 99, "\(quality)")
        // Both decodes give a picture for every keyframe.
        let full = try MediaBenchmarks.decodeKeyframes(url: video, starts: starts, interval: 10)
        let preview = try MediaBenchmarks.decodeKeyframes(
            url: video, starts: starts, interval: 10, skippingDeblocking: true)
        #expect(full.0 == starts.count && preview.0 == starts.count)
    }
}
