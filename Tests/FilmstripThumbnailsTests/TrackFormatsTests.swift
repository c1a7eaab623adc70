import Filmstrip
import FilmstripTesting
import Foundation
import Testing

func makeBIF(images: [[UInt8]], timestamps: [UInt32], multiplier: UInt32 = 1000) -> [UInt8] {
    BIFFixture.make(images: images, timestamps: timestamps, multiplier: multiplier)
}

/// Sheets of 4x3 tiles of 32x18 whose tiles are coloured by their global number (tile k of sheet s is cell 12·s+k).
struct TiledSheets {
    static let columns = 4
    static let rows = 3
    static func sheet(
        _ s: Int, format: ImageFormat = .jpeg, cellWidth: Int = 32, cellHeight: Int = 18
    ) throws -> [UInt8] {
        try SpriteSheetFixture.encoded(
            columns: columns, rows: rows, cellWidth: cellWidth, cellHeight: cellHeight, firstCell: s * 12,
            format: format, quality: 95)
    }
}

@Suite("Track formats: HLS image playlists, DASH tiles, BIF, storyboard JSON")
struct TrackFormatsTests {
    static func engine(
        _ cache: TemporaryDirectory? = nil, tileSize: PixelSize? = nil
    )
        -> TrackThumbnails
    {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cache?.url
        configuration.preferredTileSize = tileSize
        configuration.loading = LoadingConfiguration(requestTimeout: 5, resourceTimeout: 10, retry: .none)
        return TrackThumbnails(configuration: configuration)
    }

    static func cell(_ thumbnails: TrackThumbnails, at t: Double) async throws -> Int? {
        guard let thumbnail = try await thumbnails.thumbnail(at: t) else { return nil }
        return try cellShown(by: thumbnail)
    }

    /// Three sheets: 12 s, 12 s, and a partial one of 5 s (tiles past its end are empty).
    static func serveImagePlaylist(on server: LoopbackServer, byteRanges: Bool = false, gap: Bool = false) throws -> URL
    {
        let sheets = try (0..<3).map { try TiledSheets.sheet($0) }
        var text = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:10\n#EXT-X-IMAGES-ONLY\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        var offset = 0
        for (s, sheet) in sheets.enumerated() {
            text += "#EXT-X-TILES:RESOLUTION=32\u{D7}18,LAYOUT=4x3,DURATION=1\n"
            text += "#EXTINF:\(s == 2 ? 5 : 12),\n"
            if gap, s == 1 { text += "#EXT-X-GAP\n" }
            if byteRanges {
                text += "#EXT-X-BYTERANGE:\(sheet.count)\(s == 0 ? "@0" : "")\nsheets.jpg\n"
            } else {
                text += "sheet-\(s).jpg\n"
                server.serve("/hls/sheet-\(s).jpg", body: sheet, contentType: "image/jpeg")
            }
            offset += sheet.count
        }
        if byteRanges { server.serve("/hls/sheets.jpg", body: sheets.flatMap { $0 }, contentType: "image/jpeg") }
        text += "#EXT-X-ENDLIST\n"
        server.serve("/hls/images.m3u8", text: text, contentType: "application/vnd.apple.mpegurl")
        return server.url("/hls/images.m3u8")
    }

    @Test(
        "an HLS image playlist: tiles by EXT-X-TILES, one per second, a partial last sheet", arguments: [false, true])
    func hlsImagePlaylist(byteRanges: Bool) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let thumbnails = Self.engine()
        try await thumbnails.load(track: try Self.serveImagePlaylist(on: server, byteRanges: byteRanges))
        #expect(thumbnails.format == .hls)
        for t in [0.0, 0.99, 1.0, 5.5, 11.9, 12.0, 23.5, 24.2, 28.9] {
            #expect(try await Self.cell(thumbnails, at: t) == Int(t), "t=\(t)")
        }
        #expect(try await thumbnails.thumbnail(at: 29.1) == nil)  // past the partial sheet's 5 s
        let cue = try #require(try await thumbnails.thumbnail(at: 13.5))
        #expect(cue.timeStampStart == 13 && cue.timeStampEnd == 14)
        #expect(cue.region == PixelRect(x: 32, y: 0, width: 32, height: 18))
        if byteRanges {
            let ranges = server.requests.filter { $0.path == "/hls/sheets.jpg" }
            #expect(ranges.count == 3 && ranges.allSatisfy { $0.headers["range"] != nil })
        }
    }

    @Test("EXT-X-GAP holds no image but keeps the timeline")
    func gap() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let thumbnails = Self.engine()
        try await thumbnails.load(track: try Self.serveImagePlaylist(on: server, gap: true))
        #expect(try await Self.cell(thumbnails, at: 5) == 5)
        #expect(try await thumbnails.thumbnail(at: 15) == nil)
        #expect(try await Self.cell(thumbnails, at: 25) == 25)
        #expect(server.requestCount("/hls/sheet-1.jpg") == 0)
    }

    @Test("a master playlist: the image stream with the largest tiles, or the one closest to the preferred size")
    func master() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        _ = try Self.serveImagePlaylist(on: server)
        let small = try SpriteSheetFixture.encoded(
            columns: 1, rows: 1, cellWidth: 16, cellHeight: 9, firstCell: 99, format: .jpeg, quality: 95)
        server.serve("/hls/small.jpg", body: small, contentType: "image/jpeg")
        server.serve(
            "/hls/small.m3u8",
            text: "#EXTM3U\n#EXT-X-TARGETDURATION:30\n#EXT-X-IMAGES-ONLY\n#EXTINF:29,\nsmall.jpg\n#EXT-X-ENDLIST\n")
        let master = """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360
            video.m3u8
            #EXT-X-IMAGE-STREAM-INF:BANDWIDTH=1000,RESOLUTION=16x9,CODECS="jpeg",URI="small.m3u8"
            #EXT-X-IMAGE-STREAM-INF:BANDWIDTH=5000,RESOLUTION=32x18,CODECS="jpeg",URI="images.m3u8"

            """
        server.serve("/hls/master.m3u8", text: master)
        let largest = Self.engine()
        try await largest.load(track: server.url("/hls/master.m3u8"))
        #expect(try await Self.cell(largest, at: 3) == 3)
        let preferred = Self.engine(tileSize: .init(width: 20, height: 10))
        try await preferred.load(track: server.url("/hls/master.m3u8"))
        #expect(try await Self.cell(preferred, at: 3) == 99)
        #expect(server.requestCount("/hls/video.m3u8") == 0)
    }

    /// An MPD with a video set and a thumbnail-tile set of 4x3 tiles, 12 s per sheet.
    static func mpd(
        scheme: String = "http://dashif.org/thumbnail_tile", onRepresentation: Bool = false, png: Bool = false
    )
        -> String
    {
        let property = #"<EssentialProperty schemeIdUri="\#(scheme)" value="4x3"/>"#
        return """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT29S">
              <Period>
                <AdaptationSet contentType="video" mimeType="video/mp4">
                  <SegmentTemplate duration="2" media="v$Number$.m4s"/><Representation id="v" bandwidth="1" width="640" height="360"/>
                </AdaptationSet>
                <AdaptationSet contentType="image" mimeType="image/\(png ? "png" : "jpeg")">
                  \(onRepresentation ? "" : property)
                  <SegmentTemplate duration="12" startNumber="0" media="tiles/$RepresentationID$-$Number$.\(png ? "png" : "jpg")"/>
                  <Representation id="thumbs" bandwidth="2000" width="128" height="54">\(onRepresentation ? property : "")</Representation>
                </AdaptationSet>
              </Period>
            </MPD>
            """
    }

    @Test(
        "DASH thumbnail tiles: both scheme URIs, on the set or the representation, JPEG and PNG",
        arguments: [
            ("http://dashif.org/thumbnail_tile", false, false),
            ("http://dashif.org/guidelines/thumbnail_tile", true, true),
        ])
    func dashTiles(_ scheme: String, _ onRepresentation: Bool, _ png: Bool) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        for s in 0..<3 {
            server.serve(
                "/dash/tiles/thumbs-\(s).\(png ? "png" : "jpg")",
                body: try TiledSheets.sheet(s, format: png ? .png : .jpeg))
        }
        server.serve("/dash/manifest.mpd", text: Self.mpd(scheme: scheme, onRepresentation: onRepresentation, png: png))
        let thumbnails = Self.engine()
        try await thumbnails.load(track: server.url("/dash/manifest.mpd"))
        #expect(thumbnails.format == .dash)
        for t in [0.5, 11.5, 12.0, 27.9] {
            #expect(try await Self.cell(thumbnails, at: t) == Int(t), "t=\(t)")
        }
        #expect(try await thumbnails.thumbnail(at: 3)?.format == (png ? .png : .jpeg))
        #expect(server.requestCount("/dash/v1.m4s") == 0)
    }

    @Test(
        "Roku BIF: uneven gaps, multiplier 0 meaning 1000, images sliced from the file", arguments: [UInt32(0), 1000])
    func bif(_ multiplier: UInt32) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let images = try (0..<5).map {
            try SpriteSheetFixture.encoded(
                columns: 1, rows: 1, cellWidth: 40, cellHeight: 24, firstCell: $0 * 7, quality: 95)
        }
        server.serve("/thumbs.bif", body: makeBIF(images: images, timestamps: [0, 2, 3, 7, 9], multiplier: multiplier))
        let thumbnails = Self.engine()
        try await thumbnails.load(track: server.url("/thumbs.bif"))
        #expect(thumbnails.format == .bif)
        for (t, image) in [(0.0, 0), (1.9, 0), (2.0, 1), (6.5, 2), (7.0, 3), (9.5, 4)] {
            let thumbnail = try #require(try await thumbnails.thumbnail(at: t))
            #expect(try cellShown(by: thumbnail) == image * 7, "t=\(t)")
            #expect(thumbnail.region == nil && thumbnail.sourceURL == server.url("/thumbs.bif"))
        }
        #expect(server.requestCount("/thumbs.bif") == 1)
    }

    @Test("malformed BIFs are parse errors", arguments: ["truncated", "order", "range", "count"])
    func badBIF(_ damage: String) throws {
        let images = [[UInt8](repeating: 1, count: 10), [UInt8](repeating: 2, count: 10)]
        var bytes = makeBIF(images: images, timestamps: [0, 5])
        switch damage {
        case "truncated": bytes = Array(bytes.prefix(70))
        case "order": bytes[64 + 8 + 4] = 0  // image 1 starts before image 0
        case "range": bytes[64 + 16 + 5] = 0x10  // end offset far past the file
        default: bytes[12] = 3  // the header claims 3 images
        }
        #expect(throws: BIFParser.ParseError.self) { try BIFParser().parse(bytes, url: URL(fileURLWithPath: "/x.bif")) }
    }

    @Test("storyboard JSON: Mux's schema and the object array")
    func storyboards() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/sb/sheet-0.jpg", body: try TiledSheets.sheet(0))
        server.serve("/sb/sheet-1.jpg", body: try TiledSheets.sheet(1))
        var tiles: [String] = []
        for k in 0..<12 {
            tiles.append(
                #"{"start": \#(Double(k) * 2.5), "x": \#((k % 4) * 32), "y": \#((k / 4) * 18), "extra": true}"#)
        }
        server.serve(
            "/sb/mux.json",
            text:
                #"{"url": "sheet-0.jpg", "tile_width": 32, "tile_height": 18, "duration": 30, "unknown": 1, "tiles": [\#(tiles.joined(separator: ","))]}"#,
            contentType: "application/json")
        let mux = Self.engine()
        try await mux.load(track: server.url("/sb/mux.json"))
        #expect(mux.format == .json)
        #expect(try await Self.cell(mux, at: 2.4) == 0)
        #expect(try await Self.cell(mux, at: 27.6) == 11)
        #expect(try await mux.thumbnail(at: 29.9)?.timeStampEnd == 30)
        let array = """
            [{"url": "sheet-1.jpg", "startTime": 10, "endTime": 20, "width": 32, "height": 18, "coords": {"x": 32, "y": 18}},
             {"url": "sheet-0.jpg", "startTime": 0, "width": 32, "height": 18, "coords": {"x": 96, "y": 36}},
             {"url": "sheet-1.jpg", "startTime": 20, "endTime": 25}]
            """
        server.serve("/sb/array.json", text: array, contentType: "application/json")
        let objects = Self.engine()
        try await objects.load(track: server.url("/sb/array.json"))
        #expect(try await Self.cell(objects, at: 5) == 11)  // runs to the next startTime
        #expect(try await Self.cell(objects, at: 15) == 12 + 5)
        let whole = try #require(try await objects.thumbnail(at: 22))
        #expect(whole.region == nil && whole.width == 128)
    }

    @Test("detection is by content: a .vtt that holds a playlist is a playlist")
    func detection() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let playlist = try Self.serveImagePlaylist(on: server)
        server.serve("/hls/thumbs.vtt", body: Array(try Data(contentsOf: playlist.isFileURL ? playlist : playlist)))
        let text = try await URLSessionDataLoader().load(playlist, configuration: LoadingConfiguration()).data
        server.serve("/hls/thumbs.vtt", body: Array(text))
        let thumbnails = Self.engine()
        try await thumbnails.load(webVTTTrack: server.url("/hls/thumbs.vtt"))
        #expect(thumbnails.format == .hls)
        #expect(try await Self.cell(thumbnails, at: 7) == 7)
    }

    @Test(
        "bad sources are clear errors",
        arguments: [
            ("novideo", "no image track"), ("layout", "is not a resolution"), ("local", "may not refer"),
            ("missing", "404"), ("garbage", "not a thumbnail track"),
            ("iframes", "it has I-frame playlists: `--engine frames` (FrameThumbnails"),
            ("trickmode", "it has I-frame playlists: `--engine frames` (FrameThumbnails"),
        ])
    func badSources(_ kind: String, _ expected: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let path = "/bad/\(kind).m3u8"
        switch kind {
        case "novideo":
            server.serve(path, text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nv.ts\n#EXT-X-ENDLIST\n")
            let error = await thumbnailsError { try await Self.engine().load(track: server.url(path)) }
            #expect(error?.description.contains("I-frame") == false, "no I-frames, no such hint")
        case "iframes":
            server.serve(
                path,
                text: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\nv.m3u8\n"
                    + "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,RESOLUTION=640x360,URI=\"i.m3u8\"\n")
        case "trickmode":
            server.serve(
                path,
                text: """
                    <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT4S">
                      <Period><AdaptationSet id="1" contentType="video" mimeType="video/mp4">
                        <SegmentTemplate media="v$Number$.m4s" duration="2" startNumber="1"/>
                        <Representation id="v" bandwidth="800000" width="640" height="360"/>
                      </AdaptationSet><AdaptationSet id="2" contentType="video" mimeType="video/mp4">
                        <EssentialProperty schemeIdUri="http://dashif.org/guidelines/trickmode" value="1"/>
                        <SegmentTemplate media="t$Number$.m4s" duration="2" startNumber="1"/>
                        <Representation id="t" bandwidth="90000" width="640" height="360"/>
                      </AdaptationSet></Period>
                    </MPD>
                    """)
        case "layout":
            server.serve(
                path,
                text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-IMAGES-ONLY\n#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=0x0\n"
                    + "#EXTINF:2,\ns.jpg\n#EXT-X-ENDLIST\n")
        case "local":
            server.serve(
                path,
                text:
                    "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-IMAGES-ONLY\n#EXTINF:2,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n"
            )
        case "missing":
            server.serve(
                path,
                text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-IMAGES-ONLY\n#EXTINF:2,\ngone.jpg\n#EXT-X-ENDLIST\n")
        default:
            server.serve(path, text: "hello, world")
        }
        let error = await thumbnailsError { try await Self.engine().load(track: server.url(path)) }
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
        if kind == "missing" { #expect(error?.description.contains("gone.jpg") == true) }
    }

    @Test("the floor rule places tiles in sheets whose size is not a multiple of the layout")
    func floorRule() {
        let tile = TileCell(column: 2, row: 1, columns: 3, rows: 2)
        #expect(tile.rect(sheetWidth: 100, sheetHeight: 51) == PixelRect(x: 66, y: 25, width: 34, height: 26))
        #expect(
            TileCell(column: 0, row: 0, columns: 3, rows: 2).rect(sheetWidth: 100, sheetHeight: 51)
                == PixelRect(x: 0, y: 0, width: 33, height: 25))
        #expect(TileCell(column: 0, row: 0, columns: 200, rows: 1).rect(sheetWidth: 100, sheetHeight: 10) == nil)
    }
}

@Suite("Track formats from local files, and hostile MPDs")
struct LocalTrackFormatsTests {
    @Test("an HLS image playlist with byte ranges, a BIF and a storyboard from local files")
    func localFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sheets = try (0..<2).map { try TiledSheets.sheet($0) }
        try directory.write("sheets.jpg", sheets[0] + sheets[1])
        try directory.write(
            "images.m3u8",
            text: "#EXTM3U\n#EXT-X-TARGETDURATION:12\n#EXT-X-IMAGES-ONLY\n"
                + "#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=4x3,DURATION=1\n#EXTINF:12,\n#EXT-X-BYTERANGE:\(sheets[0].count)@0\nsheets.jpg\n"
                + "#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=4x3,DURATION=1\n#EXTINF:12,\n#EXT-X-BYTERANGE:\(sheets[1].count)\nsheets.jpg\n"
                + "#EXT-X-ENDLIST\n")
        let hls = TrackFormatsTests.engine()
        try await hls.load(track: directory.file("images.m3u8"))
        #expect(try await TrackFormatsTests.cell(hls, at: 17.5) == 17)
        let images = try (0..<3).map {
            try SpriteSheetFixture.encoded(columns: 1, rows: 1, cellWidth: 40, cellHeight: 24, firstCell: $0 * 5)
        }
        try directory.write("t.bif", makeBIF(images: images, timestamps: [0, 10, 20]))
        let bif = TrackFormatsTests.engine()
        try await bif.load(track: directory.file("t.bif"))
        let thumbnail = try #require(try await bif.thumbnail(at: 15))
        #expect(try cellShown(by: thumbnail) == 5)
        try directory.write(
            "sb.json",
            text: #"[{"url": "sheets.jpg", "startTime": 0, "endTime": 5}]"#)
        let json = TrackFormatsTests.engine()
        try await json.load(track: directory.file("sb.json"))
        #expect(json.format == .json && json.imageURLs.first == directory.file("sheets.jpg"))
    }

    @Test(
        "an MPD with a DTD, malformed XML, or protected content is a clear error",
        arguments: [
            ("<!DOCTYPE MPD [<!ENTITY x \"y\">]><MPD/>", "DTD"),
            ("<MPD type=\"static\"><Period></MPD>", "does not close"),
            (
                #"<MPD type="static"><Period><AdaptationSet contentType="image"><ContentProtection schemeIdUri="x"/><Representation id="t" bandwidth="1"/></AdaptationSet></Period></MPD>"#,
                "protected content"
            ),
        ])
    func hostileMPD(_ text: String, _ expected: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/m.mpd", text: text, contentType: "application/dash+xml")
        let error = await thumbnailsError { try await TrackFormatsTests.engine().load(track: server.url("/m.mpd")) }
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
    }
}
