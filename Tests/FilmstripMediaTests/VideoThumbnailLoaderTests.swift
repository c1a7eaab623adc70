import Filmstrip
import FilmstripMedia
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("Thumbnails for lists of videos")
struct VideoThumbnailLoaderTests {
    let server: LoopbackServer
    let cache: TemporaryDirectory

    init() throws {
        server = try LoopbackServer()
        cache = try TemporaryDirectory()
        let counter = Array(try Data(contentsOf: try MediaFixtures.counter()))
        for i in 0..<6 { server.serve("/videos/\(i).mp4", body: counter) }
        try serve(try MediaFixtures.hls().deletingLastPathComponent(), on: server, prefix: "/hls")
    }

    func configuration(countLimit: Int = 100, memoryLimit: Int = 50_000_000) -> VideoThumbnailLoaderConfiguration {
        var configuration = VideoThumbnailLoaderConfiguration()
        configuration.cacheDirectory = cache.url
        configuration.maximumSize = PixelSize(width: 160, height: 160)
        configuration.countLimit = countLimit
        configuration.memoryLimit = memoryLimit
        return configuration
    }

    func frame(_ thumbnail: VideoThumbnail) throws -> Int? { frameNumber(try ImageCodec.decode(thumbnail.imageData).0) }

    @Test("files, http videos and HLS playlists, with a time")
    func sources() async throws {
        defer { cache.remove() }
        var configuration = configuration()
        configuration.time = 4.5
        let loader = VideoThumbnailLoader(configuration: configuration)
        let file = try await loader.thumbnail(for: try MediaFixtures.counter())
        #expect(try frame(file) == 100 && file.time == 4)
        #expect(file.width == 160 && file.height == 120)
        #expect(try frame(try await loader.thumbnail(for: server.url("/videos/0.mp4"))) == 100)
        let hls = try await loader.thumbnail(for: server.url("/hls/" + (try MediaFixtures.hls().lastPathComponent)))
        #expect(try frame(hls) == 100)
    }

    @Test("memory holds at most countLimit thumbnails, least recently used out first")
    func countLimit() async throws {
        defer { cache.remove() }
        let loader = VideoThumbnailLoader(configuration: configuration(countLimit: 2))
        let urls = (0..<3).map { server.url("/videos/\($0).mp4") }
        _ = try await loader.thumbnail(for: urls[0])
        _ = try await loader.thumbnail(for: urls[1])
        #expect(loader.cachedThumbnail(for: urls[0]) != nil)  // 0 is now the most recent
        _ = try await loader.thumbnail(for: urls[2])
        #expect(loader.cachedThumbnail(for: urls[1]) == nil)
        #expect(loader.cachedThumbnail(for: urls[0]) != nil && loader.cachedThumbnail(for: urls[2]) != nil)
        #expect(loader.statistics.inMemory == 2)
    }

    @Test("memory holds at most memoryLimit bytes")
    func byteLimit() async throws {
        defer { cache.remove() }
        let one = try await VideoThumbnailLoader(configuration: configuration()).thumbnail(
            for: server.url("/videos/0.mp4"))
        let limit = (one.imageData.count + 512) * 2 + 100
        let loader = VideoThumbnailLoader(configuration: configuration(memoryLimit: limit))
        for i in 0..<5 { _ = try await loader.thumbnail(for: server.url("/videos/\(i).mp4")) }
        #expect(loader.statistics.inMemory == 2)
        #expect(loader.statistics.memoryBytes <= limit)
    }

    @Test("the disk cache serves a new loader without decoding, with the server gone")
    func diskCache() async throws {
        defer { cache.remove() }
        let first = VideoThumbnailLoader(configuration: configuration())
        let original = try await first.thumbnail(for: server.url("/videos/0.mp4"))
        server.setReachable(false)
        let second = VideoThumbnailLoader(configuration: configuration())
        let again = try await second.thumbnail(for: server.url("/videos/0.mp4"))
        #expect(again.imageData == original.imageData)
        #expect(second.statistics.decoded == 0 && second.statistics.fromDisk == 1)
    }

    @Test("identical requests share one load")
    func sharing() async throws {
        defer { cache.remove() }
        server.fail("/videos/3.mp4", with: [.delay(0.3)])
        let loader = VideoThumbnailLoader(configuration: configuration())
        let url = server.url("/videos/3.mp4")
        try await withThrowingTaskGroup(of: Int?.self) { group in
            for _ in 0..<8 {
                group.addTask { try frameNumber(ImageCodec.decode(await loader.thumbnail(for: url).imageData).0) }
            }
            for try await shown in group { #expect(shown == 0) }
        }
        #expect(loader.statistics.decoded == 1)
    }

    @Test("a cancelled request never calls back; a reused cell gets only its new video")
    func requestTokens() async throws {
        defer { cache.remove() }
        server.fail("/videos/4.mp4", with: [.delay(0.5)])
        let loader = VideoThumbnailLoader(configuration: configuration())
        let delivered = Mutex<[URL]>([])
        let old = loader.loadThumbnail(for: server.url("/videos/4.mp4")) { result in
            delivered.withLock { $0.append((try? result.get())?.videoURL ?? URL(fileURLWithPath: "/error")) }
        }
        old.cancel()  // the cell is reused for another video
        let done = Mutex<CheckedContinuation<Void, Never>?>(nil)
        await withCheckedContinuation { continuation in
            done.withLock { $0 = continuation }
            _ = loader.loadThumbnail(for: server.url("/videos/5.mp4")) { result in
                delivered.withLock { $0.append((try? result.get())?.videoURL ?? URL(fileURLWithPath: "/error")) }
                done.withLock {
                    $0?.resume(); $0 = nil
                }
            }
        }
        // Once the cancelled request's task is over too, nothing more can be delivered.
        await loader.settled()
        #expect(delivered.withLock { $0 } == [server.url("/videos/5.mp4")])
        #expect(old.isCancelled)
    }

    @Test("prefetch fills the cache; cancelPrefetch stops a load nobody else wants")
    func prefetch() async throws {
        defer { cache.remove() }
        var configuration = configuration()
        configuration.cacheDirectory = nil
        let loader = VideoThumbnailLoader(configuration: configuration)
        let urls = (0..<3).map { server.url("/videos/\($0).mp4") }
        loader.prefetch(urls)
        _ = await eventually { urls.allSatisfy { loader.cachedThumbnail(for: $0) != nil } }
        #expect(urls.allSatisfy { loader.cachedThumbnail(for: $0) != nil })
        server.fail("/videos/5.mp4", with: [.delay(1.5)])
        let slow = server.url("/videos/5.mp4")
        loader.prefetch([slow])
        _ = await eventually { server.requestCount("/videos/5.mp4") > 0 }
        loader.cancelPrefetch([slow])
        // Once the prefetch and its shared load are over (a load that ignored the cancel would finish and be cached).
        await loader.settled()
        #expect(loader.cachedThumbnail(for: slow) == nil)
        #expect(loader.statistics.decoded == 3)
    }

    @Test("a poster image is used instead of decoding")
    func poster() async throws {
        defer { cache.remove() }
        server.serve(
            "/posters/p.png",
            body: try ImageCodec.encode(PixelBuffer(width: 640, height: 360, fill: (200, 10, 10, 255)), as: .png))
        let loader = VideoThumbnailLoader(configuration: configuration())
        let thumbnail = try await loader.thumbnail(
            for: server.url("/videos/0.mp4"), poster: server.url("/posters/p.png"))
        #expect(thumbnail.width == 160 && thumbnail.height == 90)
        #expect(thumbnail.time == nil)
        #expect(try ImageCodec.decode(thumbnail.imageData).0.meanColor().0 > 180)
        #expect(server.requestCount("/videos/0.mp4") == 0)
    }

    @Test("the defaults hold memory to 100 thumbnails and to 50 MB, least recently used out first")
    func defaultLimits() async throws {
        defer { cache.remove() }
        server.serve(
            "/posters/red.png",
            body: try ImageCodec.encode(PixelBuffer(width: 640, height: 360, fill: (200, 10, 10, 255)), as: .png))
        // Noise compresses badly: at 1,600x1,600 each thumbnail is megabytes.
        var noise = PixelBuffer(width: 1_600, height: 1_600)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in noise.bytes.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            noise.bytes[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        server.serve("/posters/noise.png", body: try ImageCodec.encode(noise, as: .png))
        var configuration = VideoThumbnailLoaderConfiguration()
        configuration.cacheDirectory = nil
        let byCount = VideoThumbnailLoader(configuration: configuration)
        let red = server.url("/posters/red.png")
        for i in 0...100 {
            _ = try await byCount.thumbnail(for: server.url("/videos/\(i).mp4"), poster: red)
        }
        #expect(byCount.statistics.inMemory == 100)
        #expect(byCount.cachedThumbnail(for: server.url("/videos/0.mp4"), poster: red) == nil)
        #expect(byCount.cachedThumbnail(for: server.url("/videos/100.mp4"), poster: red) != nil)

        configuration.maximumSize = PixelSize(width: 1_600, height: 1_600)
        let byBytes = VideoThumbnailLoader(configuration: configuration)
        let noisy = server.url("/posters/noise.png")
        var made = 0
        while made < 30 {
            let thumbnail = try await byBytes.thumbnail(for: server.url("/videos/n\(made).mp4"), poster: noisy)
            made += 1
            if made * thumbnail.imageData.count > 60_000_000 { break }
        }
        let held = byBytes.statistics
        #expect(held.memoryBytes <= 50_000_000 && held.memoryBytes > 40_000_000, "\(held)")
        #expect(held.inMemory < made, "\(held), \(made) made")
    }

    @Test("a video that cannot be read fails through the completion, not a crash")
    func failure() async throws {
        defer { cache.remove() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let broken = directory.url.appendingPathComponent("broken.mp4")
        try Data(repeating: 7, count: 4096).write(to: broken)
        let loader = VideoThumbnailLoader(configuration: configuration())
        let error: (any Error)? = await withCheckedContinuation { continuation in
            loader.loadThumbnail(for: broken) { result in
                if case .failure(let error) = result {
                    continuation.resume(returning: error)
                } else {
                    continuation.resume(returning: nil)
                }
            }
        }
        #expect((error as? MediaError)?.kind == .invalidMedia, "\(String(describing: error))")
    }

    @Test("a file of audio alone gets its card: its cover picture, else a placeholder")
    func audioOnlyCards() async throws {
        defer { cache.remove() }
        let loader = VideoThumbnailLoader(configuration: configuration())
        let plain = try await loader.thumbnail(for: try MediaFixtures.audioOnly())
        #expect(plain.isAudioOnly && plain.time == nil)
        #expect(plain.width * 9 == plain.height * 16, "\(plain.width)x\(plain.height)")
        // An MP3 whose cover is a red square.
        let covered = try MediaFixtures.make(
            "audio-with-red-cover.mp3",
            [
                "-f", "lavfi", "-i", "sine=duration=2", "-f", "lavfi", "-i", "color=c=red:s=64x64:d=1", "-map", "0:a",
                "-map", "1:v", "-frames:v", "1", "-c:v", "png", "-disposition:v", "attached_pic", "-c:a", "libmp3lame",
            ])
        let cover = try await loader.thumbnail(for: covered)
        #expect(cover.isAudioOnly && cover.width == cover.height, "\(cover.width)x\(cover.height)")
        let (image, _) = try ImageCodec.decode(cover.imageData)
        let (r, g, b) = image.meanColor()
        #expect(r > 200 && g < 60 && b < 60, "\(r), \(g), \(b)")
    }
}
