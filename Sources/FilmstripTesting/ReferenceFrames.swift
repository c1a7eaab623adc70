public import FilmstripImaging
public import Foundation

/// Frames decoded independently by the `ffmpeg` CLI, to compare Filmstrip's output with.
public enum ReferenceFrames {
    /// The PSNR in dB between `image` and the frame the ffmpeg CLI shows at `seconds` of `video` (an accurate seek,
    /// scaled to the image's size).
    ///
    /// With `fromStart`, ffmpeg decodes the file from its first byte and takes the first frame at or after `seconds`
    /// (an output seek): every reference of that frame is present however the file is muxed.
    public static func psnr(
        of image: PixelBuffer, against video: URL, at seconds: Double, fromStart: Bool = false
    ) throws -> Double {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("reference-\(UUID().uuidString).rgb")
        defer { try? FileManager.default.removeItem(at: file) }
        let time = String(format: "%.6f", seconds)
        let input = fromStart ? ["-i", video.path, "-ss", time] : ["-ss", time, "-i", video.path]
        try MediaFixtures.run(
            ["-hide_banner", "-loglevel", "error", "-y"] + input + [
                "-frames:v", "1", "-vf", "scale=\(image.width):\(image.height)", "-pix_fmt", "rgb24", "-f",
                "rawvideo", file.path,
            ])
        let theirs = Array(try Data(contentsOf: file))
        guard let psnr = image.psnr(againstBytes: theirs, layout: .rgb, width: image.width, height: image.height)
        else {
            throw FixtureError("the reference frame has \(theirs.count) bytes, not \(image.width)x\(image.height)x3")
        }
        return min(psnr, 99)
    }
}
