import FilmstripMedia
import FilmstripPreviews
import FilmstripTesting
import Foundation
import Testing

/// Media as cameras, phones and other muxers write it, each judged against the ffmpeg CLI's decode of the same file
/// from its start: one test per kind of file that went wrong.
@Suite("Odd media: late starts, headers without a size, mirrored pictures, open GOPs in MPEG-TS, pre-roll")
struct OddMediaTests {
    /// A file whose video starts 1 s after its audio (the file's start is the audio's): made in Matroska, then
    /// copied into the other containers (the MPEG-PS muxer would line the streams up if it encoded them itself).
    static func lateVideo(_ name: String) throws -> URL {
        let source = try MediaFixtures.make(
            "odd/late-video.mkv",
            [
                "-f", "lavfi", "-i", "sine=frequency=440:duration=4", "-itsoffset", "1", "-f", "lavfi", "-i",
                "testsrc=s=320x240:r=25:d=3", "-map", "1:v", "-map", "0:a", "-c:v", "mpeg2video", "-q:v", "3",
                "-c:a", "mp2",
            ])
        guard name != "late-video.mkv" else { return source }
        let format = name.hasSuffix(".ts") ? "mpegts" : "mpeg"
        return try MediaFixtures.make("odd/" + name, ["-i", source.path, "-c", "copy", "-f", format])
    }

    @Test(
        "a video that starts after its audio: times count from the file's start; before the first frame, the first",
        arguments: ["late-video.mpg", "late-video.ts", "late-video.mkv"])
    func lateVideo(name: String) async throws {
        let url = try Self.lateVideo(name)
        // The references by the ffmpeg CLI's input seek, which counts from the file's start (an output seek, or a
        // filter's `t`, would count from the video's own start once only the video is mapped).
        let early = try await FrameExtractor(url: url, options: .exact).image(at: 0.05)
        #expect(abs(early.actualTime - 1) < 0.05, "\(name): \(early.actualTime)")
        #expect(try ReferenceFrames.psnr(of: early.image, against: url, at: 0) > 30)
        let later = try await FrameExtractor(url: url, options: .exact).image(at: 2.5)
        #expect(abs(later.actualTime - 2.5) < 0.041, "\(name): \(later.actualTime)")
        #expect(try ReferenceFrames.psnr(of: later.image, against: url, at: later.actualTime - 0.0005) > 30)
        let keyframe = try await FrameExtractor(url: url).image(at: 0)
        #expect(abs(keyframe.actualTime - 1) < 0.05, "\(name): \(keyframe.actualTime)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = PreviewTrackConfiguration()
        options.interval = 1
        let summary = try await PreviewTrackGenerator.generate(from: url, to: directory.url, options: options)
        // 4 s of file (a few milliseconds more where the audio's last packet ends later): from 0, one a second.
        #expect((4...5).contains(summary.thumbnails), "\(name): \(summary.thumbnails)")
    }

    /// H.263 in 3GP whose sample entry declares 0x0 (the decoder finds the size in the first picture), as some
    /// phones wrote it.
    @Test("a header that leaves the size out: the size comes from the pictures")
    func sizeLeftOut() async throws {
        let made = try MediaFixtures.make(
            "odd/h263.3gp",
            ["-f", "lavfi", "-i", "testsrc=s=176x144:r=15:d=3", "-c:v", "h263", "-q:v", "3", "-f", "3gp"])
        let url = try Self.patched(made, as: "h263-no-size.3gp") { bytes in
            let entry = try #require(Self.find("s263", in: bytes))
            // VisualSampleEntry: width and height 24 bytes after the type.
            for i in (entry + 28)..<(entry + 32) { bytes[i] = 0 }
        }
        let frame = try await FrameExtractor(url: url, options: .exact).image(at: 1)
        #expect(frame.image.height == 144)
        #expect(try ReferenceFrames.psnr(of: frame.image, against: made, at: frame.actualTime, fromStart: true) > 30)
    }

    /// An MP4 whose display matrix is a transposition (a reflection, as some front cameras record): the picture is
    /// shown as the ffmpeg CLI shows it (mirrored and turned), not only turned.
    @Test(
        "a display matrix with a reflection", arguments: [(0, 1, 1, 0), (0, -1, -1, 0), (-1, 0, 0, 1), (1, 0, 0, -1)])
    func reflection(a: Int32, b: Int32, c: Int32, d: Int32) async throws {
        let made = try MediaFixtures.make(
            "odd/asymmetric.mp4",
            ["-f", "lavfi", "-i", "testsrc=s=320x180:r=25:d=2", "-c:v", "libx264", "-preset", "veryfast"])
        let url = try Self.patched(made, as: "mirrored-\(a)\(b)\(c)\(d).mp4") { bytes in
            let header = try #require(Self.find("tkhd", in: bytes))
            // tkhd version 0: the matrix is 40 bytes after the type; a, b, (u), c, d as 16.16 fixed point.
            let matrix = header + 4 + 40
            for (slot, value) in [(0, a), (1, b), (3, c), (4, d)] {
                let fixed = UInt32(bitPattern: value << 16)
                for k in 0..<4 { bytes[matrix + slot * 4 + k] = UInt8(truncatingIfNeeded: fixed >> (24 - 8 * k)) }
            }
        }
        let frame = try await FrameExtractor(url: url).image(at: 0)
        let upright = abs(b) == 1
        #expect(frame.image.width == (upright ? 180 : 320))
        #expect(try ReferenceFrames.psnr(of: frame.image, against: url, at: 0, fromStart: true) > 30)
    }

    /// HEVC with open GOPs (CRA pictures with leading pictures) in MPEG-TS: an exact frame is decoded from a key
    /// picture, never from wherever the timestamp seek landed.
    @Test("HEVC with open GOPs in MPEG-TS: exact frames decoded from a key picture", arguments: ["ts", "mkv"])
    func openGOPs(container: String) async throws {
        let url = try MediaFixtures.make(
            "odd/hevc-open-gop.\(container)",
            [
                "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=4", "-c:v", "libx265", "-x265-params",
                "keyint=25:min-keyint=25:open-gop=1:bframes=4:log-level=error",
            ])
        let extractor = FrameExtractor(url: url, options: .exact)
        for t in [0.5, 1.1, 1.97, 2.5, 3.3] {
            let frame = try await extractor.image(at: t)
            #expect(abs(frame.actualTime - t) < 0.041, "\(t): \(frame.actualTime)")
            let psnr = try ReferenceFrames.psnr(of: frame.image, against: url, at: frame.actualTime, fromStart: true)
            #expect(psnr > 30, "\(container) at \(t): \(psnr) dB")
        }
    }

    /// An MP4 cut with `-c copy` at 1 s: its edit list starts 1 s after the keyframe it needs (pre-roll).
    @Test("an edit list that starts after its first sync sample")
    func preRoll() async throws {
        let source = try MediaFixtures.make(
            "odd/preroll-source.mp4",
            ["-f", "lavfi", "-i", "testsrc=s=320x240:r=30:d=6", "-c:v", "libx264", "-g", "60", "-bf", "2"])
        let url = try MediaFixtures.make("odd/preroll.mp4", ["-ss", "1", "-i", source.path, "-c", "copy"])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = PreviewTrackConfiguration()
        options.interval = 1
        let summary = try await PreviewTrackGenerator.generate(from: url, to: directory.url, options: options)
        #expect(summary.thumbnails == 5, "\(summary.thumbnails)")
        let first = try await FrameExtractor(url: url, options: .exact).image(at: 0)
        #expect(abs(first.actualTime) < 0.02, "\(first.actualTime)")
        #expect(try ReferenceFrames.psnr(of: first.image, against: url, at: 0, fromStart: true) > 30)
    }

    // MARK: Helpers

    static func find(_ type: String, in bytes: [UInt8]) -> Int? {
        let pattern = Array(type.utf8)
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    /// A copy of `file` named `name`, changed by `change`.
    static func patched(_ file: URL, as name: String, _ change: (inout [UInt8]) throws -> Void) throws -> URL {
        var bytes = Array(try Data(contentsOf: file))
        try change(&bytes)
        let url = file.deletingLastPathComponent().appendingPathComponent(name)
        try Data(bytes).write(to: url, options: .atomic)
        return url
    }
}
