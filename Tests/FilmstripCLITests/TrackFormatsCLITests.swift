import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

@Suite("filmstrip thumbnail on every track format")
struct TrackFormatsCLITests {
    @Test(
        "thumbnail --json names the format, the sheet (without fragment) and the region",
        arguments: [
            "hls", "dash", "bif", "json",
        ])
    func formats(_ format: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let sheet = try SpriteSheetFixture.encoded(columns: 4, rows: 3, cellWidth: 32, cellHeight: 18, quality: 95)
        server.serve("/t/sheet.jpg", body: sheet, contentType: "image/jpeg")
        let path: String
        switch format {
        case "hls":
            path = "/t/images.m3u8"
            server.serve(
                path,
                text: "#EXTM3U\n#EXT-X-TARGETDURATION:12\n#EXT-X-IMAGES-ONLY\n"
                    + "#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=4x3,DURATION=1\n#EXTINF:12,\nsheet.jpg\n#EXT-X-ENDLIST\n")
        case "dash":
            path = "/t/manifest.mpd"
            server.serve(
                path,
                text: """
                    <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT12S"><Period>
                    <AdaptationSet contentType="image" mimeType="image/jpeg">
                    <EssentialProperty schemeIdUri="http://dashif.org/thumbnail_tile" value="4x3"/>
                    <SegmentTemplate duration="12" media="sheet.jpg"/>
                    <Representation id="t" bandwidth="1000" width="128" height="54"/></AdaptationSet></Period></MPD>
                    """)
        case "bif":
            path = "/t/thumbs.bif"
            let images = try (0..<12).map {
                try SpriteSheetFixture.encoded(columns: 1, rows: 1, cellWidth: 32, cellHeight: 18, firstCell: $0)
            }
            server.serve(path, body: BIFFixture.make(images: images, timestamps: (0..<12).map { UInt32($0) }))
        default:
            path = "/t/storyboard.json"
            let tiles = (0..<12).map { k in #"{"start": \#(k), "x": \#((k % 4) * 32), "y": \#((k / 4) * 18)}"# }
            server.serve(
                path,
                text:
                    #"{"url": "sheet.jpg", "tile_width": 32, "tile_height": 18, "duration": 12, "tiles": [\#(tiles.joined(separator: ","))]}"#,
                contentType: "application/json")
        }
        let cache = try TemporaryDirectory(prefix: "filmstrip-cli-formats")
        defer { cache.remove() }
        let output = cache.file("t.jpg").path
        let result = try await filmstrip(
            "thumbnail", server.url(path).absoluteString, "--at", "5.5", "--json", "--output", output, "--cache-dir",
            cache.url.path)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["format"] as? String == format)
        #expect(json["start"] as? Double == 5 && json["end"] as? Double == 6)
        let image = try #require(json["image"] as? String)
        #expect(image == server.url(format == "bif" ? path : "/t/sheet.jpg").absoluteString)
        if format == "bif" {
            #expect(json["region"] is NSNull)
        } else {
            #expect(json["region"] as? [String: Int] == ["x": 32, "y": 18, "w": 32, "h": 18])
        }
        let (pixels, _) = try ImageCodec.decode(try Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(SpriteSheetFixture.cell(matching: pixels.meanColor(x: 4, y: 4, width: 24, height: 10)) == 5)
    }

    @Test("a presentation without an image track exits 2 and points at generate")
    func noImageTrack() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/v.m3u8", text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nv.ts\n#EXT-X-ENDLIST\n")
        let result = try await filmstrip("thumbnail", server.url("/v.m3u8").absoluteString, "--at", "1")
        #expect(result.status == 2)
        #expect(result.stderr.contains("no image track") && result.stderr.contains("filmstrip generate"))
    }
}

@Suite("filmstrip inspect --check and --cues on every format")
struct TrackCheckCLITests {
    @Test(
        "warnings: EXTINF above the target duration, tiles past the segment's end, a sheet over 1080 px, JSON served as text"
    )
    func warnings() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let wide = try SpriteSheetFixture.encoded(columns: 4, rows: 1, cellWidth: 300, cellHeight: 18)
        server.serve("/w/wide.jpg", body: wide, contentType: "image/jpeg")
        server.serve(
            "/w/images.m3u8",
            text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-IMAGES-ONLY\n"
                + "#EXT-X-TILES:RESOLUTION=300x18,LAYOUT=4x1,DURATION=2\n#EXTINF:6,\nwide.jpg\n"
                + "#EXT-X-TILES:RESOLUTION=300x18,LAYOUT=4x1,DURATION=2\n#EXTINF:6,\nwide.jpg\n#EXT-X-ENDLIST\n")
        let cache = try TemporaryDirectory(prefix: "filmstrip-cli-check")
        defer { cache.remove() }
        let hls = try await filmstrip(
            "inspect", server.url("/w/images.m3u8").absoluteString, "--check", "--json", "--cache-dir", cache.url.path)
        #expect(hls.status == 0, "\(hls.stderr)")
        let check = try #require(try hls.json()["check"] as? [String: Any])
        #expect(check["ok"] as? Bool == true)
        let warnings = (check["warnings"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(warnings.contains { $0.contains("above EXT-X-TARGETDURATION") }, "\(warnings)")
        #expect(warnings.contains { $0.contains("run past the segment") }, "\(warnings)")
        #expect(warnings.contains { $0.contains("1080 px") }, "\(warnings)")
        server.serve(
            "/w/storyboard.json",
            text:
                #"[{"url": "wide.jpg", "startTime": 0, "endTime": 1}, {"url": "wide.jpg", "startTime": 3, "endTime": 4}]"#,
            contentType: "text/plain")
        let json = try await filmstrip(
            "inspect", server.url("/w/storyboard.json").absoluteString, "--check", "--json", "--cache-dir",
            cache.url.path)
        let jsonWarnings = ((try json.json()["check"] as? [String: Any])?["warnings"] as? [[String: Any]] ?? [])
            .compactMap { $0["message"] as? String }
        #expect(jsonWarnings.contains { $0.contains("not application/json") }, "\(jsonWarnings)")
        #expect(jsonWarnings.contains { $0.contains("a gap from 1.000 to 3.000 s") }, "\(jsonWarnings)")
    }

    @Test("an image that contradicts its track exits 1: a layout larger than the sheet")
    func contradiction() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let small = try SpriteSheetFixture.encoded(columns: 2, rows: 1, cellWidth: 16, cellHeight: 9)
        server.serve("/c/small.jpg", body: small, contentType: "image/jpeg")
        server.serve(
            "/c/images.m3u8",
            text: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-IMAGES-ONLY\n"
                + "#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=4x1,DURATION=1\n#EXTINF:4,\nsmall.jpg\n#EXT-X-ENDLIST\n")
        let cache = try TemporaryDirectory(prefix: "filmstrip-cli-check")
        defer { cache.remove() }
        let result = try await filmstrip(
            "inspect", server.url("/c/images.m3u8").absoluteString, "--check", "--json", "--cache-dir", cache.url.path)
        #expect(result.status == 1, "\(result.stdout)")
        let problems = ((try result.json()["check"] as? [String: Any])?["problems"] as? [[String: Any]] ?? [])
        #expect(
            problems.contains {
                ($0["message"] as? String)?.contains("declares a 128x18 sheet; the image is 32x9") == true
            })
    }

    @Test("inspect --cues --json lists every cue with its id, times, image and region")
    func cues() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve(
            "/q/images.m3u8",
            text: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-IMAGES-ONLY\n"
                + "#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=2x2,DURATION=1\n#EXTINF:4,\nsheet.jpg\n#EXT-X-ENDLIST\n")
        let cache = try TemporaryDirectory(prefix: "filmstrip-cli-cues")
        defer { cache.remove() }
        let result = try await filmstrip(
            "inspect", server.url("/q/images.m3u8").absoluteString, "--cues", "--json", "--cache-dir", cache.url.path)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        #expect(json["format"] as? String == "hls")
        let cues = try #require(json["cues"] as? [[String: Any]])
        #expect(cues.count == 4)
        #expect(cues[3]["start"] as? Double == 3 && cues[3]["end"] as? Double == 4)
        #expect((cues[3]["image"] as? String)?.hasSuffix("/q/sheet.jpg") == true)
        #expect(cues[3]["region"] as? [String: Int] == ["column": 1, "row": 1, "columns": 2, "rows": 2])
    }
}
