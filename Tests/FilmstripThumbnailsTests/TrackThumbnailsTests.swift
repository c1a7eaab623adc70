import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("Track thumbnails engine")
struct TrackThumbnailsTests {
    @Test(
        "eager load stores every sprite before completing; crops show the right cell",
        arguments: [ImageFormat.jpeg, .png])
    func eager(format: ImageFormat) async throws {
        let fixture = try SpriteServer(format: format)
        defer { fixture.cache.remove() }
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        try await thumbnails.load(webVTTTrack: fixture.trackURL)
        for sheet in 1...3 { #expect(fixture.server.requestCount(fixture.sheetPath(sheet)) == 1) }
        let cache = try #require(thumbnails.loader.diskCache)
        #expect(cache.entryCount == 4)  // track + 3 sheets
        for t in [0.0, 0.5, 7.2, 19.99, 20.0, 33.3, 59.5] {
            let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: t), "t=\(t)")
            let k = Int(t)
            #expect(thumbnail.timeStampStart == Double(k) && thumbnail.timeStampEnd == Double(k + 1))
            #expect(thumbnail.format == format)
            #expect(ImageFormat.sniff(thumbnail.imageData) == format)
            #expect(thumbnail.width == SpriteServer.cellWidth && thumbnail.height == SpriteServer.cellHeight)
            #expect(thumbnail.sourceURL.lastPathComponent == "sprite-\(k / 20 + 1).\(format.fileExtension)")
            #expect(
                thumbnail.region
                    == PixelRect(
                        x: (k % 20 % 5) * SpriteServer.cellWidth, y: (k % 20 / 5) * SpriteServer.cellHeight,
                        width: SpriteServer.cellWidth, height: SpriteServer.cellHeight))
            #expect(try cellShown(by: thumbnail) == k % 20, "t=\(t)")
        }
        #expect(thumbnails.getThumbnail(atTimestamp: 60) == nil)
        #expect(thumbnails.getThumbnail(atTimestamp: -1) == nil)
    }

    @Test("the completion handler is called exactly once: with nil on success, with the error on failure")
    func completionHandler() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        for track in [fixture.trackURL, fixture.server.url("/missing.vtt")] {
            let thumbnails = TrackThumbnails(configuration: fixture.configuration())
            let calls = Mutex<[String?]>([])
            thumbnails.loadThumbnailsFrom(webVTTtrack: track) { error in
                calls.withLock { $0.append(error.map { "\($0)" }) }
            }
            // The first call, however long a loaded machine takes to load the track (the verdict is the count).
            _ = await eventually { calls.withLock { !$0.isEmpty } }
            // A second call would come from the engine's own work: once that is over, the count is final.
            await thumbnails.settled()
            let made = calls.withLock { $0 }
            #expect(made.count == 1, "\(track.lastPathComponent): \(made)")
            if track == fixture.trackURL {
                #expect(made.first == .some(nil))
                #expect(thumbnails.getThumbnail(atTimestamp: 12) != nil)
            } else {
                #expect(made.first??.contains("404") == true, "\(made)")
            }
        }
    }

    @Test("lazy mode returns after parsing; images come on demand")
    func lazy() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let thumbnails = TrackThumbnails(configuration: fixture.configuration(.lazy))
        try await thumbnails.load(webVTTTrack: fixture.trackURL)
        #expect(fixture.server.requestCount(fixture.sheetPath(1)) == 0)
        let waited = try #require(try await thumbnails.thumbnail(at: 41.5))
        #expect(try cellShown(by: waited) == 1)
        #expect(fixture.server.requestCount(fixture.sheetPath(3)) == 1)
        #expect(fixture.server.requestCount(fixture.sheetPath(1)) == 0)
        // The synchronous call misses while the image is remote, and starts its download (once, however often it
        // is asked while the download is under way).
        fixture.server.fail(fixture.sheetPath(1), with: [.delay(1)])
        for _ in 0..<50 { #expect(thumbnails.getThumbnail(atTimestamp: 2) == nil) }
        var found: Thumbnail?
        _ = await eventually {
            found = thumbnails.getThumbnail(atTimestamp: 2)
            return found != nil
        }
        #expect(try cellShown(by: try #require(found)) == 2)
        #expect(fixture.server.requestCount(fixture.sheetPath(1)) == 1)
    }

    @Test("grid templates load in both forms and cross sheet boundaries")
    func grid() async throws {
        let fixture = try SpriteServer(count: 40, columns: 5, rows: 4, path: "/grid")
        defer { fixture.cache.remove() }
        fixture.server.serve(
            "/grid/2_2.jpg",
            body: try SpriteSheetFixture.encoded(columns: 5, rows: 4, cellWidth: 32, cellHeight: 18, firstCell: 50))
        fixture.server.serve(
            "/grid/1_2.jpg", body: try SpriteSheetFixture.encoded(columns: 5, rows: 4, cellWidth: 32, cellHeight: 18))
        let single = try GridThumbnail(
            baseUrl: fixture.server.url("/grid/$index$_2.jpg"), gridHeight: 4, gridWidth: 5, durationMs: 2000)
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        try await thumbnails.load(gridThumbnail: single)
        #expect(fixture.server.requestCount("/grid/2_2.jpg") == 1)
        let lastOfFirst = try #require(thumbnails.getThumbnail(atTimestamp: 39.9))
        #expect(try cellShown(by: lastOfFirst) == 19)
        #expect(lastOfFirst.timeStampStart == 38 && lastOfFirst.timeStampEnd == 40)
        let firstOfSecond = try #require(thumbnails.getThumbnail(atTimestamp: 40))
        #expect(try cellShown(by: firstOfSecond) == 50)
        #expect(firstOfSecond.sourceURL.lastPathComponent == "2_2.jpg")
        #expect(thumbnails.getThumbnail(atTimestamp: 80) == nil)

        let explicit = try GridThumbnail(
            baseUrl: fixture.server.url("/grid"), pathTemplate: "$index$_2.jpg", gridHeight: 4, gridWidth: 5,
            durationMs: 2000, maxIndex: 2)
        try await thumbnails.load(gridThumbnail: explicit)
        #expect(try cellShown(by: try #require(thumbnails.getThumbnail(atTimestamp: 45))) == 52)
        #expect(fixture.server.requestCount("/grid/2_2.jpg") == 1)  // served from the disk cache
    }

    @Test("whole-image cues hand over the image file unchanged")
    func wholeImages() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let a = try ImageCodec.encode(PixelBuffer(width: 8, height: 6, fill: (255, 0, 0, 255)), as: .png)
        try directory.write("images/a.png", a)
        try directory.write("track.vtt", text: "WEBVTT\n\n00:00.000 --> 00:05.000\nimages/a.png\n")
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = directory.file("cache")
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: directory.file("track.vtt"))
        let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: 1))
        #expect(Array(thumbnail.imageData) == a)
        #expect(thumbnail.region == nil && thumbnail.width == 8 && thumbnail.height == 6)
        // A local track needs no cache: nothing was copied.
        #expect(!FileManager.default.fileExists(atPath: directory.file("cache").path))
    }

    @Test("percent regions and regions that overflow the sheet are clamped")
    func percentAndClamping() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("s.jpg", try SpriteSheetFixture.encoded(columns: 2, rows: 2, cellWidth: 40, cellHeight: 20))
        try directory.write(
            "track.vtt",
            text: "WEBVTT\n\n00:00.000 --> 00:01.000\ns.jpg#xywh=percent:50,50,50,50\n\n"
                + "00:01.000 --> 00:02.000\ns.jpg#xywh=40,0,400,20\n\n00:02.000 --> 00:03.000\ns.jpg#xywh=500,0,10,10\n"
        )
        let thumbnails = TrackThumbnails(
            configuration: {
                var c = ThumbnailsConfiguration()
                c.cacheDirectory = nil
                return c
            }())
        try await thumbnails.load(webVTTTrack: directory.file("track.vtt"))
        let percent = try #require(thumbnails.getThumbnail(atTimestamp: 0.5))
        #expect(percent.region == PixelRect(x: 40, y: 20, width: 40, height: 20))
        #expect(try cellShown(by: percent) == 3)
        let clamped = try #require(thumbnails.getThumbnail(atTimestamp: 1.5))
        #expect(clamped.region == PixelRect(x: 40, y: 0, width: 40, height: 20))
        #expect(thumbnails.getThumbnail(atTimestamp: 2.5) == nil)  // wholly outside the sheet
        await #expect(throws: ThumbnailsError.self) { _ = try await thumbnails.thumbnail(at: 2.5) }
    }

    @Test("lookup policies apply to the engine")
    func policies() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("s.jpg", try SpriteSheetFixture.encoded(columns: 2, rows: 1, cellWidth: 16, cellHeight: 16))
        try directory.write(
            "track.vtt",
            text: "WEBVTT\n\n00:00.000 --> 00:10.000\ns.jpg#0,0,16,16\n\n00:20.000 --> 00:30.000\ns.jpg#16,0,16,16\n")
        let thumbnails = TrackThumbnails()
        try await thumbnails.load(webVTTTrack: directory.file("track.vtt"))
        #expect(thumbnails.getThumbnail(atTimestamp: 12) == nil)
        thumbnails.lookupPolicy = .nextCue
        #expect(thumbnails.getThumbnail(atTimestamp: 5)?.timeStampStart == 20)
        thumbnails.lookupPolicy = .nearest
        #expect(thumbnails.getThumbnail(atTimestamp: 12)?.timeStampStart == 0)
        #expect(thumbnails.getThumbnail(atTimestamp: 18)?.timeStampStart == 20)
    }

    @Test("many concurrent getThumbnail calls all get the right image")
    func concurrentLookups() async throws {
        let fixture = try SpriteServer(count: 100, columns: 5, rows: 4)
        defer { fixture.cache.remove() }
        var configuration = fixture.configuration()
        configuration.decodedSheetMemoryLimit = 40_000  // fewer than all sheets: evictions under load
        configuration.thumbnailMemoryLimit = 20_000
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: fixture.trackURL)
        let wrong = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    var wrong = 0
                    for i in 0..<150 {
                        let k = (i * 37 + worker * 11) % 100
                        guard let thumbnail = thumbnails.getThumbnail(atTimestamp: Double(k) + 0.25),
                            (try? cellShown(by: thumbnail)) == k % 20
                        else {
                            wrong += 1
                            continue
                        }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        #expect(thumbnails.memoryUsage <= 60_000)
    }

    @Test("purgeMemory frees decoded sheets and thumbnails; lookups still work from disk")
    func purge() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        try await thumbnails.load(webVTTTrack: fixture.trackURL)
        _ = thumbnails.getThumbnail(atTimestamp: 3)
        #expect(thumbnails.memoryUsage > 0)
        thumbnails.purgeMemory()
        #expect(thumbnails.memoryUsage == 0)
        #expect(try cellShown(by: try #require(thumbnails.getThumbnail(atTimestamp: 3))) == 3)
    }

    @Test("an eager load without a disk cache downloads each sheet once, and lookups use those bytes")
    func eagerWithoutDiskCache() async throws {
        let fixture = try SpriteServer(count: 60, columns: 5, rows: 4)
        defer { fixture.cache.remove() }
        var configuration = fixture.configuration(.eager)
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: fixture.trackURL)
        for t in stride(from: 0.0, to: 60, by: 7) {
            #expect(thumbnails.getThumbnail(atTimestamp: t) != nil, "t=\(t)")
        }
        for sheet in 1...3 {
            #expect(fixture.server.requestCount(fixture.sheetPath(sheet)) == 1, "sheet \(sheet)")
        }
    }
}
