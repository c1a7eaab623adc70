import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@Suite("Prefetch waves and availability")
struct PrefetchTests {
    /// 30 sheets of 4x3 one-second tiles (12 s each), served slowly enough that order can be seen.
    static func serve(_ server: LoopbackServer) throws -> URL {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:12\n#EXT-X-IMAGES-ONLY\n"
        for s in 0..<30 {
            server.serve("/p/sheet-\(s).jpg", body: try TiledSheets.sheet(s), contentType: "image/jpeg")
            text += "#EXT-X-TILES:RESOLUTION=32x18,LAYOUT=4x3,DURATION=1\n#EXTINF:12,\nsheet-\(s).jpg\n"
        }
        server.serve("/p/images.m3u8", text: text + "#EXT-X-ENDLIST\n")
        return server.url("/p/images.m3u8")
    }

    static func sheetNumbers(_ server: LoopbackServer) -> [Int] {
        server.requests.compactMap { request -> Int? in
            guard request.path.hasPrefix("/p/sheet-") else { return nil }
            return Int(request.path.dropFirst("/p/sheet-".count).dropLast(".jpg".count))
        }
    }

    static func waitForAll(_ server: LoopbackServer, _ thumbnails: TrackThumbnails) async throws {
        let finished = await eventually {
            Set(sheetNumbers(server)).count == 30 && thumbnails.pendingPrefetches == 0
                && (0..<30).allSatisfy({ thumbnails.availability(at: Double($0 * 12) + 1) != .remote })
        }
        if !finished { Issue.record("prefetching did not finish") }
    }

    @Test("a coarse wave over the whole timeline first, then the sheets nearest t; each sheet fetched once")
    func waves() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let cache = try TemporaryDirectory()
        defer { cache.remove() }
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cache.url
        configuration.loadingMode = .lazy
        // One download at a time, so the server sees the sheets in the order they are asked for.
        configuration.prefetchConcurrency = 1
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(track: try Self.serve(server))
        #expect(thumbnails.availability(at: 100) == .remote)
        #expect(thumbnails.availability(at: 1000) == .none)
        server.throttle(prefix: "/p/sheet-", bytesPerSecond: 40_000)
        thumbnails.prefetch(around: 200, direction: .forward)  // sheet 16
        try await Self.waitForAll(server, thumbnails)
        let order = Self.sheetNumbers(server)
        #expect(order.count == 30, "each sheet once: \(order)")
        let coarse = Set(stride(from: 1, to: 30, by: 3))
        #expect(Set(order.prefix(6)).isSubset(of: coarse), "\(order)")
        // After the wave (16 is in it), nearest first: 17 (1), 15 and 18 (2), then 14 and 20 (4; behind counts
        // double), the farthest behind last.
        let fill = order.filter { !coarse.contains($0) }
        #expect(fill.first == 17, "\(fill)")
        #expect(Set(fill.prefix(5)) == [17, 15, 18, 14, 20], "\(fill)")
        #expect(fill.suffix(4).contains(0), "\(fill)")
        #expect(thumbnails.availability(at: 100) == .onDisk)
        _ = thumbnails.getThumbnail(atTimestamp: 100)
        #expect(thumbnails.availability(at: 100) == .inMemory)
    }

    @Test("the latest call wins: its queue replaces the earlier one; downloads under way finish into the cache")
    func latestWins() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let cache = try TemporaryDirectory()
        defer { cache.remove() }
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cache.url
        configuration.loadingMode = .lazy
        configuration.prefetchConcurrency = 2
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(track: try Self.serve(server))
        server.throttle(prefix: "/p/sheet-", bytesPerSecond: 40_000)
        thumbnails.prefetch(around: 0, direction: .forward)
        thumbnails.prefetch(around: 359, direction: .backward)  // the last sheet
        try await Self.waitForAll(server, thumbnails)
        let order = Self.sheetNumbers(server)
        #expect(order.count == 30 && Set(order).count == 30, "\(order)")
        let coarse = Set(stride(from: 1, to: 30, by: 3))
        let fill = order.filter { !coarse.contains($0) }
        // Nearest the last sheet first: 29, 27, 26, 24 (28 and 25 are in the wave). Two downloads at a time may reach
        // the server in either order when their slots free together, so the order is checked that loosely; the
        // earlier call's queue (around sheet 0) is gone either way.
        #expect(Set(fill.prefix(2)).isSubset(of: [29, 27, 26]), "\(fill)")
        #expect(Set(fill.prefix(3)).isSubset(of: [29, 27, 26, 24]) && fill.prefix(3).contains(29), "\(fill)")
        #expect(fill.suffix(2).contains(0), "\(fill)")
    }
}
