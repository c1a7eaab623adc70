public import FilmstripImaging
public import Foundation

/// Frames decoded independently by the `ffmpeg` CLI, to compare Filmstrip's output with.
public enum ReferenceFrames {
    /// The PSNR in dB between `image` and the frame the ffmpeg CLI shows at `seconds` of `video` (an accurate seek,
    /// scaled to the image's size).
    public static func psnr(of image: PixelBuffer, against video: URL, at seconds: Double) throws -> Double {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("reference-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: file) }
        try MediaFixtures.run([
            "-hide_banner", "-loglevel", "error", "-y", "-ss", String(format: "%.6f", seconds), "-i", video.path,
            "-frames:v", "1", "-vf", "scale=\(image.width):\(image.height)", "-pix_fmt", "rgb24", "-f", "rawvideo",
            file.path,
        ])
        let theirs = Array(try Data(contentsOf: file))
        guard let psnr = image.psnr(againstBytes: theirs, layout: .rgb, width: image.width, height: image.height)
        else {
            throw FixtureError("the reference frame has \(theirs.count) bytes, not \(image.width)x\(image.height)x3")
        }
        return min(psnr, 99)
    }
}
