import FilmstripTesting
import Foundation
import Testing

/// `filmstrip generate --attach` on every layout the ffmpeg muxers write (served over http), read back by Filmstrip's
/// own readers; the real players' side is in Tests/Interop. One process at a time: the player suites running beside it
/// time real playback.
@Suite("filmstrip generate --attach", .serialized)
struct AttachCLITests {
    @Test(
        "every layout: the attached manifest names the stream and the track; lookups match the WebVTT track",
        arguments: StreamLayout.allCases)
    func everyLayout(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-attach")
        defer { directory.remove() }
        let out = directory.file("out")
        let result = try await filmstrip(
            "generate", url.absoluteString, "--output", out.path, "--interval", "1", "--attach", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let name = layout.isDASH ? "manifest.mpd" : "master.m3u8"
        let attached = out.appendingPathComponent(name)
        #expect(try result.json()["attached"] as? String == attached.path)
        let text = try String(contentsOf: attached, encoding: .utf8)
        // A remote stream: its references become absolute URLs on the origin.
        #expect(text.contains(server.url("/").absoluteString), "\(text)")
        #expect(text.contains(layout.isDASH ? "thumbnail_tile" : #"URI="thumbnails.m3u8""#))
        let inspect = try await filmstrip("inspect", attached.path, "--json")
        #expect(inspect.status == 0, "\(inspect.stderr)")
        for t in [3.5, layout.duration - 0.5] {
            let answer = try await filmstrip("thumbnail", attached.path, "--at", String(t), "--json")
            #expect(answer.status == 0, "\(layout) t=\(t): \(answer.stderr)")
            let json = try answer.json()
            #expect(json["start"] as? Double == t.rounded(.down), "\(layout) t=\(t): \(json)")
        }
    }

    @Test(
        "a track attached to a two-Period MPD and to an HLS master with audio plays to the end in filmstrip play",
        arguments: [StreamLayout.dashTwoPeriods, .hlsVariants])
    func plays(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-attach-play")
        defer { directory.remove() }
        let out = directory.file("out")
        let made = try await filmstrip(
            "generate", url.absoluteString, "--output", out.path, "--interval", "2", "--attach")
        #expect(made.status == 0, "\(made.stderr)")
        let attached = out.appendingPathComponent(layout.isDASH ? "manifest.mpd" : "master.m3u8")
        let play = try await filmstrip("play", attached.path, "--autoplay", "--rate", "2", "--json")
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stdout.contains(#""state": "ended""#))
    }

    @Test("refused: a plain file, a live stream, and an output that would overwrite the stream's own manifest")
    func refused() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-attach-refused")
        defer { directory.remove() }
        let file = try await filmstrip(
            "generate", try MediaFixtures.counter().path, "--output", directory.file("a").path, "--attach")
        #expect(file.status == 2 && file.stderr.contains("needs a stream"), "\(file.stderr)")

        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/live.m3u8", text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n")
        let live = try await filmstrip(
            "generate", server.url("/live.m3u8").absoluteString, "--output", directory.file("b").path, "--attach")
        #expect(live.status != 0 && live.stderr.contains("live"), "\(live.stderr)")

        // The stream's master sits where --attach would write: refused before anything is written over it.
        let stream = directory.file("stream")
        try FileManager.default.createDirectory(at: stream, withIntermediateDirectories: true)
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\ns.ts\n#EXT-X-ENDLIST\n".utf8)
            .write(to: stream.appendingPathComponent("master.m3u8"))
        let before = try Data(contentsOf: stream.appendingPathComponent("master.m3u8"))
        let same = try await filmstrip(
            "generate", stream.appendingPathComponent("master.m3u8").path, "--output", stream.path, "--attach")
        #expect(same.status == 2 && same.stderr.contains("holds the stream's own master.m3u8"), "\(same.stderr)")
        #expect(try Data(contentsOf: stream.appendingPathComponent("master.m3u8")) == before)

        // A stream whose own files bear the names the tracks are written under: a media playlist called
        // thumbnails.m3u8, an MPD whose image set is sprite-$Number$.jpg. Refused before anything is written.
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\ns.ts\n#EXT-X-ENDLIST\n".utf8)
            .write(to: stream.appendingPathComponent("thumbnails.m3u8"))
        let own = try await filmstrip(
            "generate", stream.appendingPathComponent("thumbnails.m3u8").path, "--output", stream.path, "--attach")
        #expect(own.status == 2 && own.stderr.contains("holds the stream's own thumbnails.m3u8"), "\(own.stderr)")
        let dash = directory.file("dash")
        try FileManager.default.createDirectory(at: dash, withIntermediateDirectories: true)
        let mpd = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S"><Period>
            <AdaptationSet contentType="video" mimeType="video/mp4"><SegmentTemplate media="v$Number$.m4s" duration="2"/>
            <Representation id="v" bandwidth="1"/></AdaptationSet>
            <AdaptationSet contentType="image" mimeType="image/jpeg"><SegmentTemplate media="sprite-$Number$.jpg" duration="4"/>
            <Representation id="t" bandwidth="1" width="320" height="180"/></AdaptationSet></Period></MPD>
            """
        try Data(mpd.utf8).write(to: dash.appendingPathComponent("stream.mpd"))
        let sprites = try await filmstrip(
            "generate", dash.appendingPathComponent("stream.mpd").path, "--output", dash.path, "--attach")
        #expect(
            sprites.status == 2 && sprites.stderr.contains("holds the stream's own sprite-1.jpg"), "\(sprites.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dash.path) == ["stream.mpd"])
    }
}
