import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripPlayer

/// An output that takes planar Y′CbCr and says how large it shows pictures, as a window does.
private final class PlanarRecorder: VideoOutput, @unchecked Sendable {
    let maximum: PixelSize?
    private let lock = NSLock()
    private var _planar: [(time: Double, frame: PlanarYUVFrame)] = []
    private var _rgb: [(time: Double, image: PixelBuffer)] = []

    init(maximum: PixelSize?) { self.maximum = maximum }

    var planar: [(time: Double, frame: PlanarYUVFrame)] { lock.withLock { _planar } }
    var rgb: [(time: Double, image: PixelBuffer)] { lock.withLock { _rgb } }

    var acceptsPlanarYUV: Bool { true }
    var preferredMaximumSize: PixelSize? { maximum }
    func display(_ frame: PlanarYUVFrame, at time: Double) { lock.withLock { _planar.append((time, frame)) } }
    func display(_ image: PixelBuffer, at time: Double) { lock.withLock { _rgb.append((time, image)) } }
}

@Suite("Video outputs: planar Y′CbCr frames, and RGB at the output's size")
struct VideoOutputTests {
    @Test("8-bit 4:2:0 reaches a planar output as its own planes: luma and chroma of the frame its time says")
    func planarFrames() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let output = PlanarRecorder(maximum: nil)
        player.attach(to: output)
        player.open(config: PlayerConfiguration(with: try MediaFixtures.shortCounter()))
        #expect(await virtual.run { player.state == .ended })
        let frames = output.planar
        #expect(frames.count > 40, "\(frames.count) planar frames")
        #expect(output.rgb.isEmpty)
        for (time, frame) in frames.prefix(60) {
            #expect(frame.width == 320 && frame.height == 240 && frame.chromaWidth == 160)
            #expect(frame.displaySize == PixelSize(width: 320, height: 240))
            #expect(frame.matrix == .bt601 && !frame.fullRange)
            // The counter's colour, through the BT.601 video-range matrix the frame carries.
            let (r, g, b) = MediaFixtures.color(ofFrame: Int((time * 25).rounded()))
            let y = 16 + (65.481 * Double(r) + 128.553 * Double(g) + 24.966 * Double(b)) / 255
            let u = 128 + (-37.797 * Double(r) - 74.203 * Double(g) + 112 * Double(b)) / 255
            let shownY = Double(frame.luma(x: 160, y: 120))
            let shownU = Double(frame.planes[1][60 * frame.strides[1] + 80])
            #expect(abs(shownY - y) < 4 && abs(shownU - u) < 4, "at \(time): Y \(shownY) U \(shownU), not \(y) \(u)")
        }
    }

    @Test("HDR (10-bit PQ) reaches a planar output as RGB, tone-mapped and fitted into its preferred size")
    func hdrComesAsRGB() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let output = PlanarRecorder(maximum: PixelSize(width: 160, height: 160))
        player.attach(to: output)
        player.load(config: PlayerConfiguration(with: try MediaFixtures.hdrPattern(transfer: "smpte2084")))
        player.open(autoplay: false)
        #expect(await virtual.run { !output.rgb.isEmpty })
        player.stop()
        #expect(output.planar.isEmpty)
        let image = try #require(output.rgb.first?.image)
        #expect(image.width == 160 && image.height == 120)
        // The SDR pattern comes back: its mean brightness, not the dim, washed-out PQ code values.
        let decoder = try VideoDecoder(url: try MediaFixtures.pattern())
        let sdr = try #require(try decoder.nextFrame()).image(maximumSize: image.size)
        let mapped = image.meanColor(x: 0, y: 0, width: 160, height: 120)
        let reference = sdr.meanColor(x: 0, y: 0, width: 160, height: 120)
        #expect(abs(mapped.0 - reference.0) < 20 && abs(mapped.1 - reference.1) < 20, "\(mapped) against \(reference)")
    }
}
