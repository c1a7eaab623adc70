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
