import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

@Suite("filmstrip CLI: generate and frame")
struct MediaCLITests {
    @Test("generate writes sheets and a track that the thumbnail command reads")
    func generate() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-generate")
        defer { directory.remove() }
        let output = directory.file("thumbs").path
        let result = try await filmstrip(
            "generate", try MediaFixtures.counter().path, "--output", output, "--interval", "2", "--width", "80",
            "--columns", "3", "--rows", "1", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["thumbnails"] as? Int == 5 && json["sheets"] as? Int == 2)
        #expect(json["duration"] as? Double == 10)
        #expect(json["tile"] as? [String: Int] == ["w": 80, "h": 60])
        #expect(json["seconds"] is Double && json["bytes_read"] is Int)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: output))
        #expect(files == ["sprite-1.jpg", "sprite-2.jpg", "thumbnails.vtt"])
        let lookup = try await filmstrip("thumbnail", output + "/thumbnails.vtt", "--at", "9", "--json")
        #expect(lookup.status == 0)
        let found = try lookup.json()
        #expect(found["start"] as? Double == 8 && found["end"] as? Double == 10)
        #expect((found["image"] as? String)?.hasSuffix("sprite-2.jpg") == true)
        #expect(found["region"] as? [String: Int] == ["x": 80, "y": 0, "w": 80, "h": 60])
    }

    @Test("generate --image-format webp: WebP sheets the thumbnail and frame commands read; Roku's limits said")
    func generateWebP() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-generate")
        defer { directory.remove() }
        let output = directory.file("thumbs").path
        let result = try await filmstrip(
            "generate", try MediaFixtures.counter().path, "--output", output, "--interval", "2", "--width", "80",
            "--image-format", "webp", "--formats", "vtt,hls,bif")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the BIF's images stay JPEG"))
        #expect(result.stderr.contains("not read by Roku"))
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: output))
        #expect(files == ["sprite-1.webp", "thumbnails.vtt", "thumbnails.m3u8", "thumbnails.bif"])
        let picture = directory.file("thumb.webp").path
        let lookup = try await filmstrip("thumbnail", output + "/thumbnails.m3u8", "--at", "9", "--output", picture)
        #expect(lookup.status == 0, "\(lookup.stderr)")
        #expect(ImageFormat.sniff(try Data(contentsOf: URL(fileURLWithPath: picture))) == .webp)
        let frame = directory.file("frame.webp").path
        let framed = try await filmstrip("frame", try MediaFixtures.counter().path, "--at", "3", "--output", frame)
        #expect(framed.status == 0, "\(framed.stderr)")
        #expect(try ImageCodec.info(try Data(contentsOf: URL(fileURLWithPath: frame))).format == .webp)
        // JPEG sheets with a BIF say nothing; an unknown format is refused.
        let quiet = try await filmstrip(
            "generate", try MediaFixtures.counter().path, "--output", directory.file("jpeg").path, "--formats", "bif")
        #expect(quiet.status == 0 && !quiet.stderr.contains("JPEG"), "\(quiet.stderr)")
        let gif = try await filmstrip("generate", "x.mp4", "--output", output, "--image-format", "gif")
        #expect(gif.status != 0 && gif.stderr.contains("--image-format must be jpeg or webp"))
    }

    @Test("generate: bad input exits 2 with a message")
    func generateBadInput() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-generate")
        defer { directory.remove() }
        let audio = try await filmstrip("generate", try MediaFixtures.audioOnly().path, "--output", directory.url.path)
        #expect(audio.status == 2)
        #expect(audio.stderr.contains("no video stream"))
        let mode = try await filmstrip("generate", "x.mp4", "--output", directory.url.path, "--mode", "fast")
        #expect(mode.status == 2)
    }

    @Test("inspect on media files: video or audio only, codecs, channels, duration; --version")
    func inspectMedia() async throws {
        let audio = try await filmstrip("inspect", try MediaFixtures.audioOnly().path, "--json")
        #expect(audio.status == 0, "\(audio.stderr)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(audio.stdout.utf8)) as? [String: Any])
        #expect(summary["kind"] as? String == "audio-only")
        #expect(summary["video"] is NSNull)
        let streams = try #require(summary["audio"] as? [[String: Any]])
        #expect(streams.first?["codec"] as? String == "aac" && streams.first?["channels"] as? Int == 1)
        #expect(abs((summary["duration"] as? Double ?? 0) - 3) < 0.1)
        let text = try await filmstrip("inspect", try MediaFixtures.audioOnly().path)
        #expect(text.stdout.hasPrefix("audio only, "), "\(text.stdout)")
        let video = try await filmstrip("inspect", try MediaFixtures.rotated().path)
        #expect(video.status == 0 && video.stdout.hasPrefix("video, "), "\(video.stdout)")
        #expect(video.stdout.contains("turned"), "\(video.stdout)")
        let version = try await filmstrip("--version")
        #expect(version.status == 0 && version.stdout.contains("FFmpeg"), "\(version.stdout)")
    }

    @Test("frame: keyframe by default, exact on request, bytes read over http")
    func frame() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-frame")
        defer { directory.remove() }
        let video = try MediaFixtures.counter().path
        let output = directory.file("f.png").path
        let keyframe = try await filmstrip(
            "frame", video, "--at", "5.3", "--json", "--output", output, "--max-size", "160x160")
        #expect(keyframe.status == 0, "\(keyframe.stderr)")
        let json = try keyframe.json()
        #expect(json["time"] as? Double == 4 && json["keyframe"] as? Bool == true)
        #expect(json["width"] as? Int == 160 && json["height"] as? Int == 120)
        let image = try ImageCodec.decode(try Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(image.1 == .png && image.0.width == 160)
        let exact = try await filmstrip("frame", video, "--at", "5.3", "--exact", "--json")
        #expect(try exact.json()["time"] as? Double == 5.28)

        let server = try LoopbackServer()
        server.serve("/counter.mp4", body: Array(try Data(contentsOf: try MediaFixtures.counter())))
        let remote = try await filmstrip("frame", server.url("/counter.mp4").absoluteString, "--at", "7", "--json")
        #expect(remote.status == 0, "\(remote.stderr)")
        #expect(try remote.json()["bytes_read"] as? Int == server.bytesSent("/counter.mp4"))
    }

    @Test("frame: past the end exits 1, a non-video exits 2")
    func frameErrors() async throws {
        let late = try await filmstrip("frame", try MediaFixtures.counter().path, "--at", "60")
        #expect(late.status == 1)
        #expect(late.stderr.contains("past the end"))
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-frame")
        defer { directory.remove() }
        let text = try directory.write("not-a-video.mp4", text: "hello")
        let bad = try await filmstrip("frame", text.path, "--at", "1")
        #expect(bad.status == 2)
        #expect(try await filmstrip("frame", text.path, "--at", "1", "--max-size", "big").status == 2)
    }
}

@Suite("filmstrip CLI: gallery")
struct GalleryCLITests {
    @Test("one thumbnail per video and a contact sheet; failures reported, the rest written")
    func gallery() async throws {
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-gallery")
        defer { directory.remove() }
        let server = try LoopbackServer()
        server.serve("/v.mp4", body: Array(try Data(contentsOf: try MediaFixtures.counter())))
        let output = directory.file("gallery").path
        let result = try await filmstrip(
            "gallery", try MediaFixtures.counter().path, server.url("/v.mp4").absoluteString,
            try MediaFixtures.hls().path, "--output", output, "--max-size", "160x120", "--at", "2.5", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        let videos = try #require(json["videos"] as? [[String: Any]])
        #expect(videos.count == 3)
        #expect(videos.allSatisfy { $0["time"] as? Double == 2 && $0["width"] as? Int == 160 })
        #expect(json["failed"] as? Int == 0)
        let sheet = try ImageCodec.info(try Data(contentsOf: URL(fileURLWithPath: output + "/gallery.jpg")))
        #expect(sheet.width == 2 * 160 + 3 * 8 && sheet.height == 2 * 120 + 3 * 8)
        let files = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
        #expect(files.count == 4 && files.first?.hasPrefix("01-") == true && files.contains("gallery.jpg"))

        let partial = try await filmstrip(
            "gallery", try MediaFixtures.counter().path, "/nonexistent/x.mp4", "--output", output)
        #expect(partial.status == 2)
        #expect(partial.stderr.contains("x.mp4"))
    }
}

extension GalleryCLITests {
    @Test("over HTTP each stream costs at most 1.5x its manifests, its init data and the one segment at the time asked")
    func byteBudget() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let layouts: [StreamLayout] = [
            .hlsTS, .hlsFMP4, .hlsSingleFileTS, .hlsAES, .dashTimeline, .dashNumber, .dashOnDemand, .dashSegmentList,
        ]
        let urls = try layouts.map { try StreamLayouts.serve($0, on: server).absoluteString }
        let directory = try TemporaryDirectory(prefix: "filmstrip-cli-gallery")
        defer { directory.remove() }
        let result = try await filmstripArguments(
            ["gallery"] + urls + ["--output", directory.url.path, "--at", "5.1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try result.json()["failed"] as? Int == 0)
        for layout in layouts {
            let (sent, manifests) = StreamLayouts.bytesSent(by: server, under: "/\(layout.rawValue)/")
            let needed = try await StreamLayouts.segmentBytesNeeded(layout, at: 5.1).bytes + manifests
            #expect(Double(sent) <= 1.5 * Double(needed), "\(layout): \(sent) bytes sent for \(needed) needed")
        }
    }
}

@Suite("filmstrip CLI: play")
struct PlayCLITests {
    struct Event {
        var t: Double
        var event: String
        var fields: [String: Any]
    }

    func events(_ result: CLIResult) throws -> [Event] {
        try result.stdout.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return Event(
                t: try #require(object["t"] as? Double), event: try #require(object["event"] as? String), fields: object
            )
        }
    }

    @Test("autoplay to the end: one JSON object per event, states in order, exit 0")
    func playToEnd() async throws {
        let result = try await filmstrip(
            "play", try MediaFixtures.shortCounter().path, "--autoplay", "--rate", "2", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let events = try events(result)
        var states = events.filter { $0.event == "state" }.map { "\($0.fields["from"]!)>\($0.fields["to"]!)" }
        // A loaded machine may not decode ahead fast enough at first: the player then rightly buffers.
        while let stall = states.firstIndex(of: "play>buffering"), states.indices.contains(stall + 1),
            states[stall + 1] == "buffering>play"
        {
            states.removeSubrange(stall...(stall + 1))
        }
        #expect(states == ["idle>opening", "opening>ready", "ready>play", "play>playing", "playing>ended"])
        #expect(events.contains { $0.event == "stats" && $0.fields["duration"] as? Double == 2 })
        #expect(events.map(\.t) == events.map(\.t).sorted())
        let ended = try #require(events.last { $0.event == "state" })
        #expect(ended.t >= 0.9 && ended.t < 5, "2 s at rate 2 ended at \(ended.t) s")
    }

    @Test("play --audio-out writes the audio played; --audio-language fr picks the French rendition")
    func playAudioOut() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let master = try StreamLayouts.serve(.hlsVariants, on: server)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for language in ["en", "fr"] {
            let wav = directory.url.appendingPathComponent("\(language).wav")
            let result = try await filmstrip(
                "play", master.absoluteString, "--autoplay", "--seek", "7", "--audio-out", wav.path,
                "--audio-language", language, "--json")
            #expect(result.status == 0, "\(result.stderr)")
            let events = try events(result)
            let tracks = try #require(events.first { $0.event == "audio_tracks" })
            #expect("\(tracks.fields["tracks"] ?? "")".contains("fra"))
            let played = try AudioAnalysis.readWAV(wav)
            // From 7 s to the end: 3 s.
            #expect(abs(played.duration - 3) < 0.15, "\(played.duration) s")
            let frequency = AudioAnalysis.dominantFrequency(played.samples, sampleRate: played.sampleRate)
            let wanted = language == "fr" ? AudioFixtures.french : AudioFixtures.english
            #expect(abs(frequency - wanted) < 3, "\(language): \(frequency) Hz")
            let stats = try #require(events.last { $0.event == "stats" })
            #expect(stats.fields["state"] as? String == "ended")
            #expect(abs((stats.fields["audio_played"] as? Double ?? 0) - played.duration) < 0.05)
        }
    }

    @Test("play --rate -2 plays backwards from --seek (keyframes only) and exits paused at the start; --rate 8 ends")
    func playReverse() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsTS, on: server)
        let back = try await filmstrip(
            "play", url.absoluteString, "--autoplay", "--seek", "9", "--rate", "-2", "--json")
        #expect(back.status == 0, "\(back.stderr)")
        let last = try #require(try events(back).last { $0.event == "stats" })
        #expect(last.fields["state"] as? String == "paused" && last.fields["position"] as? Double == 0)
        #expect(last.fields["rate"] as? Double == -2 && last.fields["keyframes_only"] as? Bool == true)
        // The frames shown: the 1x start's first one at 9 s... then each keyframe from 8 s down to 0.
        #expect((last.fields["presented_frames"] as? Int ?? 0) >= 5, "\(last.fields)")
        let forward = try await filmstrip("play", url.absoluteString, "--autoplay", "--rate", "8", "--json")
        let end = try #require(try events(forward).last { $0.event == "stats" })
        #expect(end.fields["state"] as? String == "ended" && end.fields["presented_frames"] as? Int == 5)
    }

    @Test("--seek T@AT and --duration; a fatal error exits non-zero")
    func seekAndDuration() async throws {
        let result = try await filmstrip(
            "play", try MediaFixtures.counter().path, "--autoplay", "--seek", "8@0.3", "--duration", "1", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let events = try events(result)
        let seeking = try #require(events.first { $0.event == "state" && $0.fields["to"] as? String == "seeking" })
        #expect(seeking.t >= 0.3)
        #expect(events.last { $0.event == "state" }?.fields["to"] as? String == "idle")
        let failed = try await filmstrip("play", "/nonexistent/video.mp4", "--autoplay", "--json")
        #expect(failed.status != 0)
        let errors = try self.events(failed).filter { $0.event == "error" }
        #expect(
            errors.contains {
                $0.fields["severity"] as? String == "fatal" && $0.fields["type"] as? String == "source_unavailable"
            })
    }

    @Test(
        "an HLS stream: --cmcd query, --session-id, --content-id, --header, --max-prebuffer; stats carry stream fields")
    func playStream() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        let result = try await filmstrip(
            "play", master.absoluteString, "--autoplay", "--cmcd", "query", "--session-id", "cli-session",
            "--content-id", "ladder", "--header", "X-Test: yes", "--max-prebuffer", "6", "--min-prebuffer", "1",
            "--duration", "2.5", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let events = try events(result)
        #expect(events.contains { $0.event == "state" && $0.fields["to"] as? String == "playing" })
        let stats = try #require(events.last { $0.event == "stats" }?.fields)
        #expect(stats["bitrate"] is Int && stats["segments"] as? Int ?? 0 >= 2, "\(stats)")
        #expect(stats["live"] as? Bool == false && stats["buffer"] is Double && stats["rebuffers"] is Int)
        let requests = server.requests.filter { $0.path.hasPrefix("/vod/") }
        #expect(!requests.isEmpty)
        for request in requests {
            #expect(request.headers["x-test"] == "yes")
            let cmcd = try #require(request.query("CMCD"), "\(request.target)")
            #expect(cmcd.contains("sid=\"cli-session\"") && cmcd.contains("cid=\"ladder\""))
        }
        let bad = try await filmstrip("play", master.absoluteString, "--header", "no colon")
        #expect(bad.status != 0 && bad.stderr.contains("--header"))
    }
}
