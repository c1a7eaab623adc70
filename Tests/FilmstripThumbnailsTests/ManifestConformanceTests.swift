import Filmstrip
import FilmstripTesting
import Foundation
import Testing

/// Real thumbnail manifests from public players and packagers (see Conformance/manifests/README.md), served from
/// `/path/` on the loopback server and read in lazy mode (no image is fetched).
@Suite("Thumbnail manifests from public sources")
struct ManifestConformanceTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Conformance/manifests")

    static func serve(_ file: String, as path: String, on server: LoopbackServer) throws -> URL {
        server.serve(path, body: Array(try Data(contentsOf: directory.appendingPathComponent(file))))
        return server.url(path)
    }

    static func engine(tileSize: PixelSize? = nil) -> TrackThumbnails {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        configuration.loadingMode = .lazy
        configuration.preferredTileSize = tileSize
        return TrackThumbnails(configuration: configuration)
    }

    @Test("livesim2: 1x1 tiles, 2 s sheets numbered 1 to 4")
    func livesim2() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let thumbnails = Self.engine()
        try await thumbnails.load(
            track: try Self.serve("livesim2-testpic_2s-thumbs.mpd", as: "/path/manifest.mpd", on: server))
        let track = try #require(thumbnails.track)
        #expect(track.format == .dash)
        #expect(track.images.map(\.path) == (1...4).map { "/path/thumbs/\($0).jpg" })
        #expect(track.cues.map(\.start) == [0, 2, 4, 6] && track.cues.allSatisfy { $0.tile == nil })
        #expect(track.declaredImageSizes.first == PixelSize(width: 160, height: 90))
    }

    @Test("Shaka's DASH image sets: 15 sheets of 2 s over 30 s, 10x20 or 20x20 tiles")
    func shakaDASH() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let thumbnails = Self.engine()
        try await thumbnails.load(
            track: try Self.serve("shaka-dash-image-adaptationsets.mpd", as: "/path/manifest.mpd", on: server))
        let track = try #require(thumbnails.track)
        #expect(track.images.count == 15 && track.images.first?.path == "/path/1.jpg")
        let tile = try #require(track.cues.first?.tile)
        #expect([10, 20].contains(tile.columns) && tile.rows == 20)
        #expect(track.cues.count == 15 * Int(tile.columns * tile.rows))
        #expect(track.cues.last.map { $0.end } == 30)
    }

    @Test("Shaka's HLS image stream: RESOLUTION with ×, tiles on the second segment only, DURATION past its end")
    func shakaHLS() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        _ = try Self.serve("shaka-hls-image-playlist.m3u8", as: "/path/image", on: server)
        let master = try Self.serve("shaka-hls-image-master.m3u8", as: "/path/master.m3u8", on: server)
        let thumbnails = Self.engine()
        try await thumbnails.load(track: master)
        let track = try #require(thumbnails.track)
        #expect(track.format == .hls && !thumbnails.isLive)
        #expect(track.cues.map(\.start) == [0, 5, 10] && track.cues.map(\.end) == [5, 10, 15])
        #expect(track.cues.map(\.tile) == [nil, TileCell(column: 0, row: 0, columns: 5, rows: 2), nil])
        #expect(track.images.map(\.path) == ["/path/image.jpg"])
        let findings = track.findings.map(\.message)
        #expect(findings.contains { $0.contains("no EXT-X-TARGETDURATION") })
        #expect(findings.contains { $0.contains("only 1 of 10 are shown") }, "\(findings)")
        guard
            case .master(let parsed) = try HLSPlaylistParser().parse(
                Data(contentsOf: Self.directory.appendingPathComponent("shaka-hls-image-master.m3u8")), url: master)
        else {
            Issue.record("not a master playlist")
            return
        }
        #expect(parsed.imageStreams.first?.resolution == PixelSize(width: 240, height: 135))
    }

    @Test("Roku's DASH master: an absolute BaseURL, one sheet per layout, the largest tiles or the preferred ones")
    func rokuDASH() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try Self.serve("roku-dash-master-withthumbs.mpd", as: "/path/manifest.mpd", on: server)
        let largest = Self.engine()
        try await largest.load(track: url)
        let track = try #require(largest.track)
        #expect(
            track.images.map(\.absoluteString) == [
                "http://dash.edgesuite.net/akamai/bbb_30fps/thumbnails_256x144/tile_1.jpg"
            ])
        #expect(track.cues.count == 64)
        #expect(abs((track.cues.first?.end ?? 0) - 9.915) < 0.002)
        let small = Self.engine(tileSize: .init(width: 102, height: 58))
        try await small.load(track: url)
        #expect(small.track?.images.first?.lastPathComponent == "tile_1.jpg")
        #expect(small.track?.images.first?.deletingLastPathComponent().lastPathComponent == "thumbnails_102x58")
        #expect(small.track?.cues.count == 200)
    }

    @Test("Roku's multi-period DASH: a sheet cut by its period keeps 1 s tiles; numbering restarts per period")
    func rokuMultiPeriod() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let thumbnails = Self.engine()
        try await thumbnails.load(
            track: try Self.serve("roku-dash-master-multi.mpd", as: "/path/manifest.mpd", on: server))
        let track = try #require(thumbnails.track)
        #expect(
            track.images.map(\.path) == [
                "/path/thumbnails_256x144/ad_1.jpg", "/path/thumbnails_256x144/tile_1.jpg",
                "/path/thumbnails_256x144/tile_2.jpg", "/path/thumbnails_256x144/tile_3.jpg",
            ])
        let first = track.cues.filter { $0.imageIndex == 0 }
        #expect(first.count == 9 && first.allSatisfy { $0.end - $0.start == 1 })  // 20 tiles of 1 s, cut at 9 s
        let second = track.cues.filter { $0.imageIndex == 1 }
        #expect(second.first?.start == 9 && second.count == 10 && second.first.map { $0.end - $0.start } == 4)
        #expect(track.cues.last?.end == 129)
    }

    @Test("Roku's HLS master: two image streams; the largest by default, the closest to a preferred size")
    func rokuHLS() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try Self.serve("roku-hls-master-withthumbs.m3u8", as: "/path/master.m3u8", on: server)
        // The image playlists themselves are not published; which one is asked for shows the choice.
        _ = await thumbnailsError { try await Self.engine().load(track: url) }
        #expect(server.requests.last?.path == "/path/5x2_640x360/640x360-5x2.m3u8")
        _ = await thumbnailsError { try await Self.engine(tileSize: .init(width: 300, height: 170)).load(track: url) }
        #expect(server.requests.last?.path == "/path/5x2_320x180/320x180-5x2.m3u8")
    }

    @Test("dash.js tile maths: each asserted time maps to the same sheet and tile position (floor rule)")
    func dashjs() throws {
        struct Fixture: Decodable {
            struct Case: Decodable {
                struct Representation: Decodable {
                    var id: String
                    var width: Int
                    var height: Int
                    var startNumber: Int
                    var segmentDuration: Double
                    var media: String
                    var essentialProperty: [String: String]?
                }
                struct Expected: Decodable {
                    var time: Double
                    var x: Double
                    var y: Double
                    var url: String
                }
                var name: String
                var representation: Representation
                var expectedThumbnails: [Expected]?
            }
            var cases: [Case]
        }
        let data = try Data(contentsOf: Self.directory.appendingPathComponent("dashjs-thumbnail-fixtures.json"))
        let fixture = try JSONDecoder().decode(Fixture.self, from: data)
        var checked = 0
        for testCase in fixture.cases {
            let r = testCase.representation
            let layout = (r.essentialProperty?["value"] ?? "1x1").split(separator: "x").compactMap { Int($0) }
            guard layout.count == 2, let expectations = testCase.expectedThumbnails else { continue }
            let sheets = (0..<3).map { k in
                ThumbnailTrack.Sheet(
                    url: URL(
                        string: try! DASHTemplate.expand(
                            r.media, representationID: r.id, number: r.startNumber + k, time: nil, bandwidth: 0))!,
                    byteRange: nil, start: Double(k) * r.segmentDuration, duration: r.segmentDuration,
                    layout: .init(columns: layout[0], rows: layout[1]), tileDuration: nil)
            }
            let track = ThumbnailTrack(
                sheets: sheets, sourceURL: URL(string: "http://media/manifest.mpd")!, format: .dash)
            let index = ThumbnailIndex(cues: track.cues)
            for expected in expectations {
                let cue = track.cues[try #require(index.lookup(expected.time))]
                #expect(track.imageURL(of: cue).absoluteString == expected.url, "\(testCase.name) t=\(expected.time)")
                let rect = try #require(cue.tile?.rect(sheetWidth: r.width, sheetHeight: r.height))
                #expect(
                    rect.x == Int(expected.x.rounded(.down)) && rect.y == Int(expected.y.rounded(.down)),
                    "\(testCase.name) t=\(expected.time): \(rect)")
                checked += 1
            }
        }
        #expect(checked >= 4)
    }
}
