import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

/// Widths that are not a multiple of the converter's SIMD step (180 and 182 px): swscale's unscaled YUV-to-RGB path
/// left the last 4 or 6 columns black at the frame's own size, in files and streams alike.
@Suite("Odd widths")
struct OddWidthTests {
    /// A white video `width` px wide, and the same packaged by the ffmpeg DASH muxer.
    static func white(_ width: Int) throws -> (file: URL, mpd: URL) {
        let file = try MediaFixtures.make(
            "white-\(width).mp4",
            [
                "-f", "lavfi", "-i", "color=c=white:s=\(width)x100:r=25:d=4", "-c:v", "libx264", "-g", "25", "-pix_fmt",
                "yuv420p",
            ])
        let folder = file.deletingLastPathComponent().appendingPathComponent("white-\(width)-dash", isDirectory: true)
        let mpd = folder.appendingPathComponent("m.mpd")
        if !FileManager.default.fileExists(atPath: mpd.path) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try MediaFixtures.run(["-v", "error", "-y", "-i", file.path, "-c", "copy", "-f", "dash", mpd.path])
        }
        return (file, mpd)
    }

    @Test("every column of a frame at its own size is the picture's", arguments: [180, 182, 178])
    func lastColumns(_ width: Int) async throws {
        let (file, mpd) = try Self.white(width)
        for source in [file, mpd] {
            let frame = try await FrameExtractor(url: source).image(at: 1)
            let image = frame.image
            #expect(image.width == width, "\(source.lastPathComponent)")
            let row = image.height / 2
            for x in (width - 8)..<width {
                let red = image.bytes[row * image.bytesPerRow + x * 3]
                #expect(red > 240, "\(source.lastPathComponent): column \(x) is \(red), not white")
            }
        }
    }
}
