import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@Suite("Track thumbnails: bad input and failures")
struct ThumbnailFailureTests {
    @Test("a malformed track fails with a parse error carrying line and column")
    func malformedTrack() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        fixture.server.serve("/bad.vtt", text: "WEBVTT\n\n00:00.000 --> 00:01.00\nsprite-1.jpg\n")
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        let error = await thumbnailsError { try await thumbnails.load(webVTTTrack: fixture.server.url("/bad.vtt")) }
        #expect(error?.kind == .parse)
        #expect(error?.line == 3 && error?.column == 21)
        #expect(!thumbnails.isLoaded)
    }

    @Test("a remote track pointing at local files: strict fails, lenient skips the cue")
    func remoteTrackLocalFile() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let text =
            "WEBVTT\n\n00:00.000 --> 00:01.000\nfile:///etc/hostname\n\n00:01.000 --> 00:02.000\n"
            + "/media/thumbs/sprite-1.jpg#xywh=32,0,32,18\n"
        fixture.server.serve("/evil.vtt", text: text)
        let strict = TrackThumbnails(configuration: fixture.configuration())
        let error = await thumbnailsError { try await strict.load(webVTTTrack: fixture.server.url("/evil.vtt")) }
        #expect(error?.kind == .parse)
        #expect(error?.message.contains("local file") == true)
        var configuration = fixture.configuration()
        configuration.parsingMode = .lenient
        let lenient = TrackThumbnails(configuration: configuration)
        try await lenient.load(webVTTTrack: fixture.server.url("/evil.vtt"))
        #expect(lenient.track?.cues.count == 1)
        #expect(lenient.track?.diagnostics.first?.kind == .localReferenceFromRemoteTrack)
        #expect(lenient.imageURLs.allSatisfy { !$0.isFileURL })
        #expect(lenient.getThumbnail(atTimestamp: 0.5) == nil)
        #expect(try cellShown(by: try #require(lenient.getThumbnail(atTimestamp: 1.5))) == 1)
    }

    @Test("a track that is 404 fails with a network error naming the URL")
    func missingTrack() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        let url = fixture.server.url("/nope.vtt")
        let error = await thumbnailsError { try await thumbnails.load(webVTTTrack: url) }
        #expect(error?.kind == .network)
        #expect(error?.url == url)
        #expect(error?.description.contains("404") == true)
    }

    @Test("a missing sprite fails an eager load; the completion reports it")
    func missingSprite() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        fixture.server.remove(fixture.sheetPath(2))
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        let error: (any Error)? = await withCheckedContinuation { continuation in
            thumbnails.loadThumbnailsFrom(webVTTtrack: fixture.trackURL) { continuation.resume(returning: $0) }
        }
        let wrapped = try #require(error as? ThumbnailsError)
        #expect(wrapped.kind == .network)
        #expect(wrapped.url?.lastPathComponent == "sprite-2.jpg")
        #expect(!thumbnails.isLoaded)
    }

    @Test("a sprite that is not an image fails the load and is never stored")
    func corruptSprite() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        fixture.server.serve(
            fixture.sheetPath(1), body: Array("<html>error page</html>".utf8), contentType: "text/html")
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        let error = await thumbnailsError { try await thumbnails.load(webVTTTrack: fixture.trackURL) }
        #expect(error?.kind == .decode)
        let cache = try #require(thumbnails.loader.diskCache)
        #expect(!cache.contains(fixture.server.url(fixture.sheetPath(1))))
    }

    @Test("a sprite whose header declares a huge image is refused before decoding")
    func hugeSprite() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        // A valid JPEG stream re-labelled as 40000x40000 (1.6 gigapixels).
        let bytes = try OversizedImageFixture.jpeg(declaringWidth: 40_000, height: 40_000)
        fixture.server.serve(fixture.sheetPath(1), body: bytes)
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        let error = await thumbnailsError { try await thumbnails.load(webVTTTrack: fixture.trackURL) }
        #expect(error?.kind == .decode)
        #expect(error?.message.contains("40000x40000") == true)
    }

    @Test("a damaged cached sprite is dropped from the cache and fetched again")
    func damagedCacheEntry() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        try await thumbnails.load(webVTTTrack: fixture.trackURL)
        let cache = try #require(thumbnails.loader.diskCache)
        let sheet = fixture.server.url(fixture.sheetPath(1))
        let file = cache.fileURL(for: sheet)
        let original = try Data(contentsOf: file)
        try Data(original.prefix(original.count / 3)).write(to: file)
        #expect(thumbnails.getThumbnail(atTimestamp: 4) == nil)
        // The damaged entry is gone: nothing is cached for the sheet, or (when the fetch the miss started has already
        // stored it again) the whole sheet.
        let cached = try cache.data(for: sheet)
        #expect(cached == nil || cached == original.prefix(original.count - DiskCache.trailerSize))
        let refetched = try #require(try await thumbnails.thumbnail(at: 4))
        #expect(try cellShown(by: refetched) == 4)
        #expect(fixture.server.requestCount(fixture.sheetPath(1)) == 2)
    }

    @Test("a slow sprite server fails the load within the timeout")
    func slowSprite() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        fixture.server.fail(fixture.sheetPath(3), with: [.delay(120)])
        var configuration = fixture.configuration()
        configuration.loading = LoadingConfiguration(requestTimeout: 0.5, resourceTimeout: 5, retry: .none)
        let thumbnails = TrackThumbnails(configuration: configuration)
        let started = Date()
        let error = await thumbnailsError { try await thumbnails.load(webVTTTrack: fixture.trackURL) }
        #expect(error?.kind == .network)
        #expect((error?.underlying as? LoadingError)?.kind == .timedOut)
        let elapsed = Date().timeIntervalSince(started)
        // Not before the request timeout (the timed-out kind says it was not the server's 120 s delay ending).
        #expect(elapsed >= 0.45, "failed after \(elapsed) s")
    }

    @Test("lookups before any load return nil; the async variant says nothing is loaded")
    func notLoaded() async {
        let thumbnails = TrackThumbnails()
        #expect(thumbnails.getThumbnail(atTimestamp: 1) == nil)
        let error = await thumbnailsError { _ = try await thumbnails.thumbnail(at: 1) }
        #expect(error?.kind == .notLoaded)
    }
}

@Suite("Track thumbnails: disk cache and offline reuse")
struct OfflineTests {
    @Test("a track loaded once loads again with the server gone, online or offline")
    func offlineReuse() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let first = TrackThumbnails(configuration: fixture.configuration())
        try await first.load(webVTTTrack: fixture.trackURL)
        let expected = try #require(first.getThumbnail(atTimestamp: 45)).imageData
        fixture.server.setReachable(false)

        let fallback = TrackThumbnails(configuration: fixture.configuration())
        try await fallback.load(webVTTTrack: fixture.trackURL)
        #expect(fallback.getThumbnail(atTimestamp: 45)?.imageData == expected)

        var offline = fixture.configuration()
        offline.offline = true
        let offlineEngine = TrackThumbnails(configuration: offline)
        try await offlineEngine.load(webVTTTrack: fixture.trackURL)
        #expect(offlineEngine.getThumbnail(atTimestamp: 45)?.imageData == expected)
    }

    @Test("deleteLocalCache removes every stored track and image; offline then names what is missing")
    func deleteLocalCache() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let thumbnails = TrackThumbnails(configuration: fixture.configuration())
        try await thumbnails.load(webVTTTrack: fixture.trackURL)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.cache.url.path).count == 4)
        thumbnails.deleteLocalCache()
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.cache.url.path).isEmpty)
        #expect(thumbnails.memoryUsage == 0)
        var offline = fixture.configuration()
        offline.offline = true
        let error = await thumbnailsError {
            try await TrackThumbnails(configuration: offline).load(webVTTTrack: fixture.trackURL)
        }
        #expect(error?.kind == .cacheIO)
        #expect(error?.description.contains("track.vtt") == true)
    }

    @Test("offline with the track cached but a sprite missing names the sprite")
    func offlineMissingSprite() async throws {
        let fixture = try SpriteServer()
        defer { fixture.cache.remove() }
        let lazy = TrackThumbnails(configuration: fixture.configuration(.lazy))
        try await lazy.load(webVTTTrack: fixture.trackURL)  // caches only the track
        var offline = fixture.configuration()
        offline.offline = true
        let error = await thumbnailsError {
            try await TrackThumbnails(configuration: offline).load(webVTTTrack: fixture.trackURL)
        }
        #expect(error?.kind == .cacheIO)
        #expect(error?.url?.lastPathComponent.hasPrefix("sprite-") == true)
    }
}

@Suite("Track thumbnails: a three-hour track")
struct LargeTrackTests {
    @Test("10,800 thumbnails on 108 sheets load and serve lookups in bounded memory")
    func tenThousandCues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for sheet in 1...108 {
            try directory.write(
                "sprites/sprite-\(sheet).jpg",
                try SpriteSheetFixture.encoded(columns: 10, rows: 10, cellWidth: 16, cellHeight: 16, quality: 95))
        }
        try directory.write(
            "track.vtt",
            text: TrackFixture.sprites(
                count: 10_800, cellWidth: 16, cellHeight: 16, sheetName: { "sprites/sprite-\($0).jpg" }))
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        configuration.decodedSheetMemoryLimit = 100_000  // a few 160x160 sheets
        configuration.thumbnailMemoryLimit = 50_000
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: directory.file("track.vtt"))
        #expect(thumbnails.track?.cues.count == 10_800)
        #expect(thumbnails.imageURLs.count == 108)
        for k in stride(from: 0, to: 10_800, by: 97) {
            let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: Double(k) + 0.5))
            #expect(thumbnail.timeStampStart == Double(k))
            #expect(thumbnail.sourceURL.lastPathComponent == "sprite-\(k / 100 + 1).jpg")
            #expect(try cellShown(by: thumbnail) == k % 100 % 125)
            #expect(thumbnails.memoryUsage <= 150_000)
        }
    }
}
