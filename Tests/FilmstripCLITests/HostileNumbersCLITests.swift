import FilmstripTesting
import Foundation
import Testing

/// Playlists and MPDs with numbers at the edge of `Int64`, through every command that reads them, local and over
/// HTTP: each run ends with an exit status (0, or a typed error with a short message), never a signal or a hang.
@Suite("CLI: hostile numbers")
struct HostileNumbersCLITests {
    static let max = "9223372036854775807"

    /// Manifests (name, text) built on a real stream's segment names, each with one hostile number.
    static func manifests() -> [(String, String)] {
        let head = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n"
        let segments = "#EXTINF:2,\nseg0.ts\n#EXTINF:2,\nseg1.ts\n#EXT-X-ENDLIST\n"
        let mpd = { (template: String) in
            """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S">
              <Period><AdaptationSet contentType="video" mimeType="video/mp4">
                \(template)
                <Representation id="v" bandwidth="100000" width="320" height="240"/>
              </AdaptationSet></Period>
            </MPD>
            """
        }
        return [
            ("media-sequence.m3u8", head + "#EXT-X-MEDIA-SEQUENCE:\(max)\n" + segments),
            (
                "discontinuity-sequence.m3u8",
                head + "#EXT-X-DISCONTINUITY-SEQUENCE:\(max)\n#EXT-X-DISCONTINUITY\n" + segments
            ),
            ("byterange.m3u8", head + "#EXT-X-BYTERANGE:\(max)@\(max)\n#EXTINF:2,\nall.ts\n#EXT-X-ENDLIST\n"),
            (
                "byterange-chain.m3u8",
                head + "#EXT-X-BYTERANGE:4611686018427387904@4611686018427387904\n#EXTINF:2,\nall.ts\n"
                    + "#EXT-X-BYTERANGE:4611686018427387904\n#EXTINF:2,\nall.ts\n#EXT-X-ENDLIST\n"
            ),
            (
                "key-map.m3u8",
                head + "#EXT-X-KEY:METHOD=AES-128,URI=\"k.key\"\n#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"\(max)@\(max)\"\n"
                    + segments
            ),
            (
                "images.m3u8",
                head + "#EXT-X-IMAGES-ONLY\n#EXT-X-MEDIA-SEQUENCE:\(max)\n#EXTINF:2,\n#EXT-X-TILES:RESOLUTION=32x18,"
                    + "LAYOUT=2x1,DURATION=1\n#EXT-X-BYTERANGE:\(max)@1\ns.jpg\n#EXT-X-ENDLIST\n"
            ),
            ("start-number.mpd", mpd(#"<SegmentTemplate media="v$Number$.m4s" duration="2" startNumber="\#(max)"/>"#)),
            ("timescale.mpd", mpd(#"<SegmentTemplate media="v$Number$.m4s" duration="2.5" timescale="\#(max)"/>"#)),
            (
                "timeline.mpd",
                mpd(
                    #"<SegmentTemplate media="v$Time$.m4s" timescale="1"><SegmentTimeline><S t="\#(max)" d="\#(max)" r="\#(max)"/>"#
                        + "</SegmentTimeline></SegmentTemplate>")
            ),
            ("index-range.mpd", mpd(#"<BaseURL>v.mp4</BaseURL><SegmentBase indexRange="\#(max)-\#(max)"/>"#)),
        ]
    }

    @Test("frame, generate, play, inspect and thumbnail end in an exit status on every hostile manifest")
    func everyCommand() async throws {
        let binary = try cliExecutable().path
        let server = try LoopbackServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-numbers")
        defer { directory.remove() }
        var runs: [(String, [String])] = []
        for (name, text) in Self.manifests() {
            server.serve("/n/" + name, text: text)
            let local = directory.file(name)
            try Data(text.utf8).write(to: local)
            for source in [local.path, server.url("/n/" + name).absoluteString] {
                let out = directory.file("out-\(runs.count)").path
                runs += [
                    ("frame", ["frame", source, "--at", "1", "--output", out + ".jpg"]),
                    ("generate", ["generate", source, "--output", out]),
                    ("play", ["play", source, "--autoplay", "--duration", "2"]),
                    ("inspect", ["inspect", source]),
                    ("thumbnail", ["thumbnail", source, "--at", "1"]),
                    ("thumbnail-frames", ["thumbnail", "--engine", "frames", source, "--at", "1"]),
                ].map { ("\($0.0) \(name) \(source.hasPrefix("http") ? "http" : "local")", $0.1) }
            }
        }
        let all = runs
        let root = directory.url.path
        let results = await onThreads(all.count, threads: 2) { i in
            let folder = root + "/run-\(i)"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            return probe(binary, all[i].1, timeout: 60, directory: folder)
        }
        for (run, result) in zip(all, results) {
            #expect(result.signal == nil && !result.timedOut, "\(run.0): signal \(result.signal ?? 0) \(result.stderr)")
            #expect([0, 1, 2].contains(result.status ?? -1), "\(run.0): \(result.status ?? -1) \(result.stderr)")
            if result.status != 0 {
                #expect(!result.stderr.isEmpty && result.stderr.utf8.count < 2000, "\(run.0): \(result.stderr)")
            }
        }
        #expect(results.count == 10 * 2 * 6)
    }
}
