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
        guard theirs.count == image.width * image.height * 3 else {
            throw FixtureError("the reference frame has \(theirs.count) bytes, not \(image.width)x\(image.height)x3")
        }
        var squared = 0.0
        image.bytes.withUnsafeBytes { ours in
            for y in 0..<image.height {
                for x in 0..<(image.width * 3) {
                    let d = Double(ours[y * image.bytesPerRow + x]) - Double(theirs[y * image.width * 3 + x])
                    squared += d * d
                }
            }
        }
        return 10 * log10(255 * 255 / max(squared / Double(theirs.count), 1e-9))
    }
}
