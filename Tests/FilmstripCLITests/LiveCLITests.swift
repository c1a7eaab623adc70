import FilmstripFormats
import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

/// `filmstrip generate --live` on live streams the `ffmpeg` CLI's own HLS and DASH muxers make while the test runs
/// (in real time; the verdicts read only what was published, never how fast).
@Suite("generate --live")
struct LiveCLITests {
    @Test("on ffmpeg's live HLS muxer: publishes as it goes, ends with the stream, every tile its frame")
    func ffmpegHLS() async throws {
        try await follow(.hls) { cueStart, origin in
            // Cue times are program dates; segment k starts at the first segment's date plus k seconds.
            let playlist = try String(contentsOf: origin.directory.file("live.m3u8"), encoding: .utf8)
            let line = try #require(playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") })
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
            let first = try #require(formatter.date(from: String(line.dropFirst("#EXT-X-PROGRAM-DATE-TIME:".count))))
            return cueStart - first.timeIntervalSince1970
        }
    }

    @Test("on ffmpeg's live DASH muxer: publishes as it goes, ends when the MPD turns static, every tile its frame")
    func ffmpegDASH() async throws {
        try await follow(.dash) { cueStart, _ in cueStart }
    }

    /// Runs `generate --live` on a 12 s stream of `muxer`; `mediaTime` maps a cue start to the source's media time.
    func follow(
        _ muxer: FFmpegLiveOrigin.Muxer, mediaTime: (Double, FFmpegLiveOrigin) throws -> Double
    ) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let origin = try FFmpegLiveOrigin(muxer, server: server, seconds: 12)
        defer { origin.stop() }
        #expect(origin.waitForManifest())
        let output = try TemporaryDirectory(prefix: "filmstrip-live-cli")
        defer { output.remove() }
        let result = try await filmstrip(
            "generate", origin.url.absoluteString, "--live", "--output", output.url.path, "--interval", "1",
            "--sheet-span", "2", "--columns", "2", "--rows", "1", "--formats", "vtt,json,hls,dash", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.count >= 3, "\(result.stdout)")
        #expect(events.last?["ended"] as? Bool == true)
        #expect(origin.wait() == 0)
        let playlist = try String(contentsOf: output.file("thumbnails.m3u8"), encoding: .utf8)
        #expect(playlist.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(try String(contentsOf: output.file("thumbnails.mpd"), encoding: .utf8).contains("type=\"static\""))
        // Filmstrip's own reader takes each track file.
        for track in ["thumbnails.vtt", "thumbnails.json", "thumbnails.m3u8", "thumbnails.mpd"] {
            let inspected = try await filmstrip("inspect", output.file(track).path)
            #expect(inspected.status == 0, "\(track): \(inspected.stderr)")
        }
        // Every tile shows the keyframe inside its cue: frame 25·k at media time k.
        let vtt = output.file("thumbnails.vtt")
        let track = try WebVTTThumbnailParser().parse(try Data(contentsOf: vtt), trackURL: vtt)
        #expect(track.cues.count >= 4, "\(track.cues.count) cues")
        for cue in track.cues {
            let sheet = track.images[Int(cue.imageIndex)]
            let (image, _) = try ImageCodec.decode(try Data(contentsOf: sheet))
            guard let rect = cue.region?.resolved(imageWidth: image.width, imageHeight: image.height) else {
                Issue.record("a cue without a region")
                continue
            }
            let tile = try image.cropped(x: rect.x, y: rect.y, width: rect.width, height: rect.height)
            let (r, g, b) = tile.meanColor(
                x: tile.width / 4, y: tile.height / 4, width: tile.width / 2, height: tile.height / 2)
            // The last cue, past the stream's last keyframe (11 s), shows the keyframe before it.
            let k = min(11, (try mediaTime(cue.start, origin) - 0.001).rounded(.up))
            #expect(MediaFixtures.frameNumber(r: r, g: g, b: b) == (25 * Int(k)) % 252, "cue at \(cue.start)")
        }
    }

    @Test("an input that is not live is refused with exit 2, saying so")
    func notLive() async throws {
        let output = try TemporaryDirectory(prefix: "filmstrip-live-cli")
        defer { output.remove() }
        let result = try await filmstrip(
            "generate", try MediaFixtures.counter().path, "--live", "--output", output.url.path)
        #expect(result.status == 2)
        #expect(result.stderr.contains("not a live stream"), "\(result.stderr)")
        let misuse = try await filmstrip(
            "generate", try MediaFixtures.counter().path, "--sheet-span", "4", "--output", output.url.path)
        #expect(misuse.status != 0 && misuse.stderr.contains("--live"), "\(misuse.stderr)")
        // Options a live run would not read are refused, not ignored.
        for option in [["--skip-blank"], ["--workers", "2"]] {
            let ignored = try await filmstripArguments(
                ["generate", "http://127.0.0.1:9/live.m3u8", "--live", "--output", output.url.path] + option)
            #expect(ignored.status != 0 && ignored.stderr.contains("do not go with --live"), "\(ignored.stderr)")
        }
    }
}
