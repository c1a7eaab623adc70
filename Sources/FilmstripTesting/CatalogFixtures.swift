public import Foundation

/// Short videos for catalog tests, made with the `ffmpeg` CLI on first use (see ``MediaFixtures``).
public enum CatalogFixtures {
    /// How many clips ``clips()`` makes.
    public static let count = 12

    /// Twelve 320x180 H.264 clips of 3 to 8 s, each with its own picture, and a keyframe every second.
    public static func clips() throws -> [URL] {
        try (0..<count).map { k in
            try MediaFixtures.make(
                "catalog/clip-\(k).mp4",
                [
                    "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=\(3 + k % 6),hue=h=\(k * 30)", "-c:v", "libx264",
                    "-preset", "veryfast", "-g", "25", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
                ])
        }
    }

    /// Copies the clips into `folder` (as `clip-K.mp4`) and adds `broken.mp4`, the first 3 KB of a clip: what a
    /// catalog test works on, so that it may touch and change its inputs.
    @discardableResult
    public static func copy(into folder: URL, broken: Bool = true) throws -> [URL] {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var copies: [URL] = []
        for (k, clip) in try clips().enumerated() {
            let copy = folder.appendingPathComponent("clip-\(k).mp4")
            try FileManager.default.copyItem(at: clip, to: copy)
            copies.append(copy)
        }
        if broken {
            let copy = folder.appendingPathComponent("broken.mp4")
            try Data(try Data(contentsOf: copies[0]).prefix(3_000)).write(to: copy)
            copies.append(copy)
        }
        return copies
    }
}
