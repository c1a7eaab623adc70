import FilmstripTesting
import Foundation
import Testing

@Suite("filmstrip CLI on HLS and DASH")
struct StreamCLITests {
    @Test("inspect prints the presentation model of every layout", arguments: StreamLayout.allCases)
    func inspect(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let result = try await filmstrip("inspect", url.absoluteString, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["protocol"] as? String == (layout.isDASH ? "dash" : "hls"))
        #expect(json["live"] as? Bool == false)
        #expect(abs((json["duration"] as? Double ?? 0) - layout.duration) < 0.05)
        let periods = try #require(json["periods"] as? [[String: Any]])
        #expect(periods.count == (layout == .dashTwoPeriods ? 2 : 1))
        let tracks = try #require(periods.first?["tracks"] as? [[String: Any]])
        let video = try #require(tracks.first { $0["kind"] as? String == "video" })
        let renditions = try #require(video["renditions"] as? [[String: Any]])
        #expect(renditions.count == (layout == .hlsVariants ? 2 : 1))
        let segments = try #require(renditions.first?["segments"] as? [String: Any])
        #expect(segments["count"] as? Int == (layout == .hlsDiscontinuity ? 4 : 5))
        if layout == .hlsVariants {
            let languages = tracks.filter { $0["kind"] as? String == "audio" }.compactMap { $0["language"] as? String }
            #expect(languages == ["eng", "fra"])
        }
        let text = try await filmstrip("inspect", url.absoluteString)
        #expect(text.status == 0 && text.stdout.contains("video track"))
    }

    @Test("frame and generate work on a DASH MPD from the command line")
    func frameAndGenerate() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.dashTimeline, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-stream")
        defer { directory.remove() }
        let frame = try await filmstrip(
            "frame", url.absoluteString, "--at", "5.1", "--exact", "--output", directory.file("f.png").path, "--json")
        #expect(frame.status == 0, "\(frame.stderr)")
        #expect(try frame.json()["time"] as? Double == 5.08)
        let generate = try await filmstrip(
            "generate", url.absoluteString, "--output", directory.file("track").path, "--interval", "2", "--json")
        #expect(generate.status == 0, "\(generate.stderr)")
        #expect(try generate.json()["thumbnails"] as? Int == 5)
    }

    @Test("inspect shows a live DASH presentation's window; gallery takes an MPD")
    func liveAndGallery() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let live = try SimulatedLiveDASH(server: server)
        let result = try await filmstrip("inspect", live.url.absoluteString, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["live"] as? Bool == true)
        #expect(json["time_shift_buffer_depth"] as? Double == 30)
        let window = try #require(json["live_window"] as? [String: Double])
        #expect((window["end"] ?? 0) - (window["start"] ?? 0) >= 10)
        let vod = try StreamLayouts.serve(.dashNumber, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-gallery")
        defer { directory.remove() }
        let gallery = try await filmstrip("gallery", vod.absoluteString, "--output", directory.url.path, "--json")
        #expect(gallery.status == 0, "\(gallery.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.file("gallery.jpg").path))
    }

    @Test(
        "a bad MPD or a missing segment exits 2 with a message",
        arguments: [
            (
                #"<MPD type="static" mediaPresentationDuration="PT1S"><Period><AdaptationSet><Representation id="v" bandwidth="x"/></AdaptationSet></Period></MPD>"#,
                "Representation@bandwidth"
            ),
            ("<!DOCTYPE MPD [<!ENTITY e \"e\">]><MPD/>", "DTD"),
            (
                #"<MPD type="static" mediaPresentationDuration="PT4S"><Period><AdaptationSet mimeType="video/mp4"><SegmentTemplate duration="2" media="gone-$Number$.m4s"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period></MPD>"#,
                "gone-1.m4s"
            ),
        ])
    func badInput(_ text: String, _ expected: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/bad.mpd", text: text, contentType: "application/dash+xml")
        for command in ["frame", "inspect"] {
            let arguments = command == "frame" ? ["--at", "1"] : []
            let result = try await filmstripArguments([command, server.url("/bad.mpd").absoluteString] + arguments)
            if command == "inspect", expected.hasSuffix(".m4s") { continue }  // inspect does not fetch media
            #expect(result.status == 2, "\(command): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains(expected), "\(command): \(result.stderr)")
        }
    }
}

@Suite("filmstrip CLI: manifests over the size bound")
struct ManifestBoundCLITests {
    @Test("a playlist or MPD over 16 MiB exits 2, remote or local")
    func oversized() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let padding = String(repeating: "# padding to push the playlist past the manifest bound\n", count: 320_000)
        server.serve("/huge.m3u8", text: "#EXTM3U\n" + padding, contentType: "application/vnd.apple.mpegurl")
        let remote = try await filmstrip("inspect", server.url("/huge.m3u8").absoluteString)
        #expect(remote.status == 2, "\(remote.stderr)")
        #expect(remote.stderr.contains("limit"), "\(remote.stderr)")
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-huge")
        defer { directory.remove() }
        let local = directory.file("huge.mpd")
        try Data(
            ("<MPD type=\"static\">" + String(repeating: "<!-- padding padding padding -->\n", count: 520_000)).utf8
        )
        .write(to: local)
        let result = try await filmstrip("frame", local.path, "--at", "1")
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("limit"), "\(result.stderr)")
    }
}

@Suite("filmstrip generate --formats")
struct GenerateFormatsCLITests {
    @Test("every output passes inspect --check with no warning; --json lists the files and the snippets to paste")
    func allFormats() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-formats")
        defer { directory.remove() }
        let out = directory.file("out").path
        let result = try await filmstrip(
            "generate", try MediaFixtures.counter().path, "--output", out, "--interval", "1",
            "--formats", "vtt,hls,dash,bif,json,storyboard", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        // Ten 160 px thumbnails on one sheet of 6 columns (Roku's 1080 px limit with HLS and DASH outputs).
        #expect((json["files"] as? [String])?.count == 8)
        #expect((json["image_stream_inf"] as? String)?.contains(#"URI="thumbnails.m3u8""#) == true)
        #expect((json["dash_adaptation_set"] as? String)?.contains("thumbnail_tile") == true)
        for name in [
            "thumbnails.vtt", "thumbnails.m3u8", "thumbnails.mpd", "thumbnails.bif", "thumbnails.json",
            "storyboard.json",
        ] {
            let check = try await filmstrip(
                "inspect", out + "/" + name, "--check", "--json", "--cache-dir", directory.file("cache").path)
            #expect(check.status == 0, "\(name): \(check.stdout) \(check.stderr)")
            let report = try #require(try check.json()["check"] as? [String: Any])
            #expect((report["problems"] as? [Any])?.isEmpty == true, "\(name): \(report)")
            #expect((report["warnings"] as? [Any])?.isEmpty == true, "\(name): \(report)")
        }
        let bad = try await filmstrip("generate", "x.mp4", "--output", out, "--formats", "vtt,gif")
        #expect(bad.status != 0)
    }
}

@Suite("filmstrip iframes")
struct IFramesCLITests {
    @Test("iframes on a master writes a master and one I-frame playlist per rendition; --json lists them")
    func master() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-iframes")
        defer { directory.remove() }
        let result = try await filmstrip(
            "iframes", try StreamLayouts.manifest(.hlsVariants).path, "--output", directory.url.path, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect((json["files"] as? [String])?.count == 3)
        #expect((json["master"] as? String)?.hasSuffix("master.m3u8") == true)
        let playlists = try #require(json["playlists"] as? [[String: Any]])
        #expect(playlists.allSatisfy { $0["entries"] as? Int == 5 })
        let bad = try await filmstrip(
            "iframes", try StreamLayouts.manifest(.dashNumber).path, "--output", directory.url.path)
        #expect(bad.status == 2 && bad.stderr.contains("HLS"))
    }
}

@Suite("filmstrip thumbnail --engine frames")
struct FramesEngineCLITests {
    @Test("prints format, source, image, start, end (null for the last keyframe), bytes and bytes read")
    func fields() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsFMP4, on: server)
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-frames")
        defer { directory.remove() }
        let result = try await filmstrip(
            "thumbnail", url.absoluteString, "--engine", "frames", "--at", "5.1", "--max-size", "160x120", "--output",
            directory.file("k.jpg").path, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["format"] as? String == "frames" && json["source"] as? String == "segments")
        #expect((json["image"] as? String)?.hasSuffix("seg_002.m4s") == true)
        #expect(json["start"] as? Double == 4 && json["end"] as? Double == 6 && json["region"] is NSNull)
        #expect((json["bytes_read"] as? Int ?? 0) > 0 && json["output"] as? String == directory.file("k.jpg").path)
        let last = try await filmstrip("thumbnail", url.absoluteString, "--engine", "frames", "--at", "9.9", "--json")
        #expect(try last.json()["end"] is NSNull)
        let past = try await filmstrip("thumbnail", url.absoluteString, "--engine", "frames", "--at", "99")
        #expect(past.status == 1)
    }
}
