import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

@Suite("filmstrip CLI")
struct CLITests {
    let directory: TemporaryDirectory
    let server: LoopbackServer

    init() throws {
        directory = try TemporaryDirectory(prefix: "filmstrip-cli")
        server = try LoopbackServer()
        for sheet in 1...2 {
            server.serve(
                "/t/sprite-\(sheet).jpg",
                body: try SpriteSheetFixture.encoded(columns: 5, rows: 4, cellWidth: 32, cellHeight: 18, quality: 95))
        }
        server.serve(
            "/t/track.vtt",
            text: TrackFixture.sprites(count: 40, interval: 10, columns: 5, rows: 4, cellWidth: 32, cellHeight: 18))
    }

    var cacheDir: String { directory.file("cache").path }

    @Test("thumbnail --json prints exactly one object and writes the image")
    func thumbnailJSON() async throws {
        let output = directory.file("out.jpg").path
        let result = try await filmstrip(
            "thumbnail", server.url("/t/track.vtt").absoluteString, "--at", "125", "--json", "--output", output,
            "--cache-dir", cacheDir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 1)
        let json = try result.json()
        #expect(json["start"] as? Double == 120 && json["end"] as? Double == 130)
        #expect(json["image"] as? String == server.url("/t/sprite-1.jpg").absoluteString)
        let region = try #require(json["region"] as? [String: Int])
        #expect(region == ["x": 64, "y": 36, "w": 32, "h": 18])
        #expect(json["output"] as? String == output)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(json["bytes"] as? Int == bytes.count)
        let (pixels, format) = try ImageCodec.decode(bytes)
        #expect(format == .jpeg && pixels.width == 32 && pixels.height == 18)
        #expect(SpriteSheetFixture.cell(matching: pixels.meanColor(x: 4, y: 4, width: 24, height: 10)) == 12)
        #expect(Set(json.keys) == ["format", "start", "end", "image", "region", "bytes", "output"])
        #expect(json["format"] as? String == "webvtt")
    }

    @Test("exit 1 with a message when no thumbnail covers the time")
    func noThumbnail() async throws {
        let result = try await filmstrip(
            "thumbnail", server.url("/t/track.vtt").absoluteString, "--at", "400", "--cache-dir", cacheDir)
        #expect(result.status == 1)
        #expect(result.stderr.contains("no thumbnail covers 400"))
        #expect(result.stdout.isEmpty)
    }

    @Test("policies: next and nearest find a cue past the end")
    func policy() async throws {
        let result = try await filmstrip(
            "thumbnail", server.url("/t/track.vtt").absoluteString, "--at", "400", "--policy", "nearest", "--json",
            "--cache-dir", cacheDir)
        #expect(result.status == 0)
        #expect(try result.json()["start"] as? Double == 390)
        let bad = try await filmstrip("thumbnail", "x.vtt", "--at", "1", "--policy", "closest")
        #expect(bad.status == 2)
    }

    @Test("exit 2 with line:column: message on a parse error")
    func parseError() async throws {
        let track = try directory.write("bad.vtt", text: "WEBVTT\n\n00:00.000 --> 00:01.00\na.jpg\n")
        let result = try await filmstrip("thumbnail", track.path, "--at", "0")
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("3:21: end time: the fraction must have exactly three digits"), "\(result.stderr)")
        let lenient = try await filmstrip("inspect", track.path, "--lenient", "--json")
        #expect(lenient.status == 0)
        #expect((try lenient.json()["diagnostics"] as? [Any])?.count == 1)
    }

    @Test("exit 2 for bad input: a missing file, a 404, a usage error")
    func badInput() async throws {
        #expect(try await filmstrip("thumbnail", directory.file("none.vtt").path, "--at", "0").status == 2)
        let notFound = try await filmstrip(
            "thumbnail", server.url("/t/none.vtt").absoluteString, "--at", "0", "--cache-dir", cacheDir)
        #expect(notFound.status == 2)
        #expect(notFound.stderr.contains("404"))
        #expect(try await filmstrip("thumbnail", "--at", "0").status == 2)
        #expect(try await filmstrip("thumbnail", "a.vtt").status == 2)
    }

    @Test("grid templates from the command line")
    func grid() async throws {
        let result = try await filmstrip(
            "thumbnail", "--grid", server.url("/t/sprite-$index$.jpg").absoluteString, "--columns", "5", "--rows", "4",
            "--duration-ms", "10000", "--max-index", "2", "--at", "205", "--json", "--cache-dir", cacheDir)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["image"] as? String == server.url("/t/sprite-2.jpg").absoluteString)
        #expect(json["start"] as? Double == 200)
        #expect(json["region"] as? [String: Int] == ["x": 0, "y": 0, "w": 32, "h": 18])
        let missingGrid = try await filmstrip("thumbnail", "--grid", "https://x/$index$.jpg", "--at", "1")
        #expect(missingGrid.status == 2)
    }

    @Test("offline: cached tracks work with the server gone; a missing entry names the URL")
    func offline() async throws {
        let url = server.url("/t/track.vtt").absoluteString
        #expect(try await filmstrip("thumbnail", url, "--at", "5", "--cache-dir", cacheDir).status == 0)
        server.stop()
        let offline = try await filmstrip("thumbnail", url, "--at", "5", "--offline", "--json", "--cache-dir", cacheDir)
        #expect(offline.status == 0, "\(offline.stderr)")
        let missing = try await filmstrip("thumbnail", url, "--at", "250", "--offline", "--cache-dir", cacheDir)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("sprite-2.jpg"), "\(missing.stderr)")
        #expect(missing.stderr.contains("offline"))
    }

    @Test("inspect reports cues, covered time, gaps, overlaps and images")
    func inspect() async throws {
        try directory.write("s.png", try ImageCodec.encode(PixelBuffer(width: 64, height: 32), as: .png))
        let track = try directory.write(
            "t.vtt",
            text:
                "WEBVTT\n\n00:00.000 --> 00:10.000\ns.png#xywh=0,0,32,32\n\n00:05.000 --> 00:15.000\ns.png#xywh=32,0,32,32\n\n"
                + "00:20.000 --> 00:30.000\ns.png#xywh=0,0,32,32\n")
        let result = try await filmstrip("inspect", track.path, "--json", "--check")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["cues"] as? Int == 3 && json["images"] as? Int == 1)
        #expect(json["covered"] as? Double == 25)
        #expect((json["gaps"] as? [[String: Double]]) == [["start": 15, "end": 20]])
        #expect((json["overlaps"] as? [[String: Any]])?.count == 1)
        #expect((json["check"] as? [String: Any])?["ok"] as? Bool == true)
        let text = try await filmstrip("inspect", track.path)
        #expect(text.stdout.contains("gaps         1") && text.stdout.contains("overlaps     1"))
    }

    @Test("inspect --check finds regions outside their image and unreadable images")
    func inspectCheck() async throws {
        try directory.write("s.png", try ImageCodec.encode(PixelBuffer(width: 64, height: 32), as: .png))
        try directory.write("broken.jpg", Array("not a jpeg".utf8))
        let track = try directory.write(
            "t.vtt",
            text: "WEBVTT\n\n00:00.000 --> 00:10.000\ns.png#xywh=40,0,32,32\n\n00:10.000 --> 00:20.000\nbroken.jpg\n")
        let result = try await filmstrip("inspect", track.path, "--check", "--json")
        #expect(result.status == 1)
        let problems = try #require((try result.json()["check"] as? [String: Any])?["problems"] as? [[String: Any]])
        #expect(problems.count == 2)
        #expect(problems.contains { ($0["message"] as? String)?.contains("exceeds the 64x32 image") == true })
        #expect(problems.contains { ($0["image"] as? String)?.hasSuffix("broken.jpg") == true })
    }

    @Test("cache clear empties the cache directory")
    func cacheClear() async throws {
        #expect(
            try await filmstrip(
                "thumbnail", server.url("/t/track.vtt").absoluteString, "--at", "5", "--cache-dir", cacheDir
            ).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDir).count == 2)
        let result = try await filmstrip("cache", "clear", "--cache-dir", cacheDir)
        #expect(result.status == 0)
        #expect(result.stdout.contains("removed 2 entries"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDir).isEmpty)
    }

    @Test("the cache directory defaults to $XDG_CACHE_HOME/filmstrip")
    func defaultCacheDirectory() async throws {
        let xdg = directory.file("xdg").path
        let result = try await filmstrip(
            "thumbnail", server.url("/t/track.vtt").absoluteString, "--at", "5", environment: ["XDG_CACHE_HOME": xdg])
        #expect(result.status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: xdg + "/filmstrip").count == 2)
    }

    @Test(
        "--help works on every command",
        arguments: [
            ["--help"], ["thumbnail", "--help"], ["inspect", "--help"], ["cache", "--help"],
            ["cache", "clear", "--help"],
        ])
    func help(_ arguments: [String]) async throws {
        let process = try await run(arguments)
        #expect(process.status == 0)
        #expect(process.stdout.contains("USAGE") || process.stdout.contains("Usage"))
    }

    private func run(_ arguments: [String]) async throws -> CLIResult {
        switch arguments.count {
        case 1: try await filmstrip(arguments[0])
        case 2: try await filmstrip(arguments[0], arguments[1])
        default: try await filmstrip(arguments[0], arguments[1], arguments[2])
        }
    }
}
