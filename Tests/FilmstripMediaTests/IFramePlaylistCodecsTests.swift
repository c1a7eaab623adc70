import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("I-frame playlists: CODECS from the stream")
struct IFramePlaylistCodecsTests {
    /// `ffmpeg` writes an HLS master over `encoder`'s video and AAC in `segments` (`mpegts` or `fmp4`), and the
    /// `CODECS` it wrote: then the attribute is taken out, as some packagers leave it.
    static func masterWithoutCodecs(
        encoder: String, segments: String, in directory: TemporaryDirectory
    ) throws -> (master: URL, written: String?) {
        let folder = directory.url.appendingPathComponent("\(encoder)-\(segments)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let x265 = encoder == "libx265" ? ["-tag:v", "hvc1", "-x265-params", "log-level=error"] : []
        try MediaFixtures.run(
            [
                "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=4",
                "-f", "lavfi", "-i", "sine=d=4", "-c:v", encoder,
            ] + x265 + [
                "-c:a", "aac", "-g", "25", "-pix_fmt", "yuv420p", "-f", "hls", "-hls_time", "2",
                "-hls_segment_type", segments, "-hls_playlist_type", "vod", "-master_pl_name", "master.m3u8",
                folder.appendingPathComponent("video.m3u8").path,
            ])
        let master = folder.appendingPathComponent("master.m3u8")
        let text = try String(contentsOf: master, encoding: .utf8)
        let written = text.firstMatch(of: /CODECS="([^",]*)/).map { String($0.1) }
        try Data(text.replacing(/,CODECS="[^"]*"/, with: "").utf8).write(to: master)
        return (master, written)
    }

    static func iFrameCodecs(_ master: URL, in directory: TemporaryDirectory) async throws -> String? {
        let output = directory.url.appendingPathComponent("out-\(UUID().uuidString)", isDirectory: true)
        let summary = try await IFramePlaylistGenerator.generate(from: master, to: output)
        let text = try String(contentsOf: try #require(summary.master), encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:") })
        return line.firstMatch(of: /CODECS="([^"]*)"/).map { String($0.1) }
    }

    @Test("a master without CODECS: H.264 spelled as ffmpeg's own master spells it, on TS and fMP4")
    func h264() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for segments in ["mpegts", "fmp4"] {
            let (master, written) = try Self.masterWithoutCodecs(
                encoder: "libx264", segments: segments, in: directory)
            let expected = try #require(written, "ffmpeg wrote no CODECS")
            #expect(expected.hasPrefix("avc1."))
            #expect(try await Self.iFrameCodecs(master, in: directory) == expected, "\(segments)")
        }
    }

    @Test("HEVC: the parameter sets of a TS stream and the hvcC of an fMP4 one give the same full string")
    func hevc() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // ffmpeg's master spells HEVC with fixed compatibility flags and constraints ("hvc1.1.4.L60.B01" for this
        // Main-profile stream, level 2), so the reference here is the stream's own fields: Main (1), compatible
        // with profiles 1 and 2 (0x60000000 bit-reversed: 6), Main tier, level 60, progressive and frame-only (90).
        var found: [String?] = []
        for segments in ["mpegts", "fmp4"] {
            let (master, _) = try Self.masterWithoutCodecs(encoder: "libx265", segments: segments, in: directory)
            found.append(try await Self.iFrameCodecs(master, in: directory))
        }
        #expect(found == ["hvc1.1.6.L60.90", "hvc1.1.6.L60.90"])
    }
}
