import FilmstripMedia
import FilmstripPreviews
import FilmstripTesting
import Foundation
import Logging
import Testing

@testable import FilmstripServer

@Suite("Server parts: byte ranges, progress fan-out, escaping")
struct ServerPartsTests {
    @Test("Range headers: one range as asked, suffixes, open ends, the unsatisfiable and the ignored")
    func ranges() {
        #expect(ByteRange.parse(nil, size: 100) == .whole)
        #expect(ByteRange.parse("bytes=0-9", size: 100) == .part(0...9))
        #expect(ByteRange.parse("bytes=90-", size: 100) == .part(90...99))
        #expect(ByteRange.parse("bytes=90-500", size: 100) == .part(90...99))
        #expect(ByteRange.parse("bytes=-10", size: 100) == .part(90...99))
        #expect(ByteRange.parse("bytes=-500", size: 100) == .part(0...99))
        #expect(ByteRange.parse("bytes=100-", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0", size: 100) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 100) == .whole)
        #expect(ByteRange.parse("bytes=9-2", size: 100) == .whole)
        #expect(ByteRange.parse("items=0-1", size: 100) == .whole)
        #expect(ByteRange.parse("bytes=abc", size: 100) == .whole)
        #expect(ByteRange.parse("Bytes=0-9", size: 100) == .part(0...9))
        #expect(ByteRange.parse("bytes=+5-9", size: 100) == .whole)
        #expect(ByteRange.parse("bytes=-+5", size: 100) == .whole)
    }

    @Test("a listener that joins late gets the latest event first; the final event ends every stream")
    func progressFanOut() async {
        let channel = ProgressChannel()
        let early = channel.listen()
        channel.publish(.progress(done: 1, total: 4))
        channel.publish(.progress(done: 2, total: 4))
        let late = channel.listen()
        channel.finish(.ready(cues: 4, origin: "generated"))
        channel.publish(.progress(done: 3, total: 4))
        var seenEarly: [ProgressEvent] = []
        for await event in early { seenEarly.append(event) }
        var seenLate: [ProgressEvent] = []
        for await event in late { seenLate.append(event) }
        #expect(
            seenEarly == [
                .progress(done: 1, total: 4), .progress(done: 2, total: 4), .ready(cues: 4, origin: "generated"),
            ])
        #expect(seenLate == [.progress(done: 2, total: 4), .ready(cues: 4, origin: "generated")])
        var after: [ProgressEvent] = []
        for await event in channel.listen() { after.append(event) }
        #expect(after == [.ready(cues: 4, origin: "generated")])
    }

    @Test("names and paths are escaped for HTML, URLs and inline JSON")
    func escaping() {
        #expect(HTML.escape("<a href='x'>&\"</a>") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;")
        // A quote with a combining mark is one Character, but its quote must still be escaped.
        #expect(HTML.escape("q\"\u{301}'\u{301}") == "q&quot;\u{301}&#39;\u{301}")
        #expect(HTML.path("sub dir/Ünï #1?.mp4") == "sub%20dir/%C3%9Cn%C3%AF%20%231%3F.mp4")
        #expect(HTML.component("a/b&c=d") == "a%2Fb%26c%3Dd")
        let json = HTML.scriptJSON(["name": "</script><script>alert(1)</script>\u{2028}"])
        #expect(!json.contains("<"))
        #expect(!json.contains("\u{2028}"))
        #expect(HTML.duration(59.9) == "0:59")
        #expect(HTML.duration(3725) == "1:02:05")
        #expect(HTML.duration(.nan) == "–")
    }

    @Test("loopback is localhost, ::1 (bracketed or not) and all of 127.0.0.0/8; nothing else")
    func loopback() {
        for host in ["127.0.0.1", "127.0.0.2", "127.255.0.9", "localhost", "LOCALHOST", "::1", "[::1]"] {
            #expect(ServerConfiguration.isLoopback(host), "\(host)")
        }
        for host in ["0.0.0.0", "::", "10.0.0.1", "127.0.0", "127.0.0.256", "127.0.0.1.evil.example", "evil", ""] {
            #expect(!ServerConfiguration.isLoopback(host), "\(host)")
        }
    }

    @Test("the page's inline script and style are allowed by the policy's hashes, and nothing else is")
    func contentSecurityPolicy() {
        let policy = PageAssets.contentSecurityPolicy
        #expect(policy.contains("default-src 'none'"))
        #expect(policy.contains("script-src 'sha256-"))
        #expect(!policy.contains("unsafe-inline"))
        let page = Pages.watch(title: "t", subtitle: "s", videoURL: "/media/t.mp4", config: [:])
        #expect(page.contains("<script>\(PageAssets.script)</script>"))
        #expect(page.contains("<style>\(PageAssets.style)</style>"))
    }
}

@Suite("Track store: one preparation per video, bounded generations, tracks beside videos")
struct TrackStoreTests {
    private static func store(_ library: URL, cache: URL, parallel: Int = 1) throws -> (VideoLibrary, TrackStore) {
        var configuration = ServerConfiguration(libraries: [library])
        configuration.cacheDirectory = cache
        configuration.maximumParallelGenerations = parallel
        configuration.trackOptions.interval = 1
        let videos = try VideoLibrary(directories: [library])
        return (videos, TrackStore(library: videos, configuration: configuration, logger: Logger(label: "test")))
    }

    @Test("a generated track's cache key changes with every setting that changes its bytes, and with the video")
    func versionKey() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let library = temp.url.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: MediaFixtures.counter(), to: library.appendingPathComponent("c.mp4"))
        let video = try #require(try VideoLibrary(directories: [library]).videos().first)
        let base = PreviewTrackConfiguration()
        let key = TrackStore.versionKey(video, options: base)
        var changes: [(String, (inout PreviewTrackConfiguration) -> Void)] = [
            ("chroma", { $0.chromaSubsampling = base.chromaSubsampling == .s420 ? .s444 : .s420 }),
            ("formats", { $0.formats.insert(.bif) }), ("extra widths", { $0.additionalWidths = [320] }),
            ("blank skipping", { $0.skipBlank.toggle() }), ("track name", { $0.trackName = "previews.vtt" }),
            ("interval", { $0.interval += 1 }), ("mode", { $0.mode = $0.mode == .accurate ? .keyframe : .accurate }),
        ]
        changes.append(("nothing", { _ in }))
        for (name, change) in changes {
            var options = base
            change(&options)
            #expect((TrackStore.versionKey(video, options: options) == key) == (name == "nothing"), "\(name)")
        }
        // The same settings under the same video version give the catalog's content key for that version.
        #expect(key == PreviewOutputSettings(base).contentKey(of: video.version))
        var touched = video
        touched.modified = video.modified.addingTimeInterval(1)
        #expect(TrackStore.versionKey(touched, options: base) != key)
    }

    @Test("concurrent requests for one video share one generation, kept in the cache for the next server")
    func oneGeneration() async throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let library = temp.url.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: MediaFixtures.counter(), to: library.appendingPathComponent("c.mp4"))
        let cache = temp.url.appendingPathComponent("cache")
        let (videos, store) = try Self.store(library, cache: cache)
        let video = try videos.resolve("c.mp4")
        let progress = await store.progress(for: video)
        let tracks = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 { group.addTask { try await store.track(for: video).placements.count } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(tracks == Array(repeating: 10, count: 6))
        #expect(store.statistics.started == 1)
        #expect(store.statistics.completed == 1)
        var events: [ProgressEvent] = []
        for await event in progress { events.append(event) }
        #expect(events.last == .ready(cues: 10, origin: "generated"))
        // Workers finish out of order, yet progress never goes back.
        let done = events.compactMap { event -> Int? in
            if case .progress(let done, _) = event { return done }
            return nil
        }
        #expect(done == done.sorted())
        #expect(await store.readyTrack(for: video)?.origin == "generated")
        let entries = try FileManager.default.contentsOfDirectory(atPath: cache.path)
        #expect(entries.count == 1 && !entries[0].hasPrefix("."))
        // A new server finds it in the cache and generates nothing.
        let (_, again) = try Self.store(library, cache: cache)
        #expect(try await again.track(for: video).origin == "cached")
        #expect(again.statistics.started == 0)
        // The library itself is never written to.
        #expect(try FileManager.default.contentsOfDirectory(atPath: library.path) == ["c.mp4"])
    }

    @Test("a track beside the video wins; a broken video fails once, clearly, and is not retried")
    func besideAndBroken() async throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let library = temp.url.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: MediaFixtures.counter(), to: library.appendingPathComponent("c.mp4"))
        var options = PreviewTrackConfiguration()
        options.interval = 5
        _ = try await PreviewTrackGenerator.generate(
            from: library.appendingPathComponent("c.mp4"), to: library, options: options)
        try FileManager.default.moveItem(
            at: library.appendingPathComponent("thumbnails.vtt"), to: library.appendingPathComponent("c.vtt"))
        try Data(repeating: 7, count: 5000).write(to: library.appendingPathComponent("broken.mp4"))
        let (videos, store) = try Self.store(library, cache: temp.url.appendingPathComponent("cache"))
        let beside = try await store.track(for: try videos.resolve("c.mp4"))
        #expect(beside.origin == "beside")
        #expect(beside.placements.map(\.start) == [0, 5])
        let broken = try videos.resolve("broken.mp4")
        for _ in 0..<2 {
            await #expect {
                try await store.track(for: broken)
            } throws: { error in
                (error as? FilmstripServer.ServerError)?.status == 422 && "\(error)".contains("broken.mp4")
            }
        }
        #expect(store.statistics.started == 1)
        #expect(store.statistics.failed == 1)
    }

    @Test("a track beside a video fetches nothing from any network: it is ignored and a track generated")
    func besideTrackIsOffline() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve("/images.m3u8", text: "#EXTM3U\n#EXT-X-IMAGES-ONLY\n#EXTINF:10,\na.jpg\n#EXT-X-ENDLIST\n")
        server.serve("/a.jpg", body: try SpriteSheetFixture.encoded(columns: 1, rows: 1, cellWidth: 16, cellHeight: 9))
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let library = temp.url.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: MediaFixtures.counter(), to: library.appendingPathComponent("c.mp4"))
        let master = """
            #EXTM3U
            #EXT-X-IMAGE-STREAM-INF:BANDWIDTH=1000,RESOLUTION=16x9,CODECS="jpeg",URI="\(server.url("/images.m3u8"))"

            """
        try Data(master.utf8).write(to: library.appendingPathComponent("c.m3u8"))
        let (videos, store) = try Self.store(library, cache: temp.url.appendingPathComponent("cache"))
        #expect(try await store.track(for: try videos.resolve("c.mp4")).origin == "generated")
        #expect(server.requests.isEmpty)
    }
}
