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

    /// A lazy engine with a disk cache, loaded with the 30-sheet track of `server`.
    static func engine(
        _ server: LoopbackServer, cache: TemporaryDirectory, prefetchConcurrency: Int? = nil
    ) async throws -> TrackThumbnails {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cache.url
        configuration.loadingMode = .lazy
        if let prefetchConcurrency { configuration.prefetchConcurrency = prefetchConcurrency }
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(track: try serve(server))
        return thumbnails
    }

    @Test("the sheet at t and the next, then a coarse wave over the whole timeline, then the sheets nearest t")
    func waves() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let cache = try TemporaryDirectory()
        defer { cache.remove() }
        // One download at a time, so the server sees the sheets in the order they are asked for.
        let thumbnails = try await Self.engine(server, cache: cache, prefetchConcurrency: 1)
        #expect(thumbnails.availability(at: 100) == .remote)
        #expect(thumbnails.availability(at: 1000) == .none)
        server.throttle(prefix: "/p/sheet-", bytesPerSecond: 40_000)
        thumbnails.prefetch(around: 200, direction: .forward)  // sheet 16
        try await Self.waitForAll(server, thumbnails)
        let order = Self.sheetNumbers(server)
        #expect(order.count == 30, "each sheet once: \(order)")
        let coarse = Set(stride(from: 1, to: 30, by: 3))
        // The sheet under the pointer and the one ahead of it, then the rest of the wave (16 was in it).
        #expect(Array(order.prefix(2)) == [16, 17], "\(order)")
        #expect(Set(order[2..<11]) == coarse.subtracting([16]), "\(order)")
        // Then nearest first: 15 and 18 (2), then 14 and 20 (4; behind counts double), the farthest behind last.
        let fill = order.dropFirst(11)
        #expect(Array(fill.prefix(4)) == [15, 18, 14, 20], "\(fill)")
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
        let thumbnails = try await Self.engine(server, cache: cache, prefetchConcurrency: 2)
        server.throttle(prefix: "/p/sheet-", bytesPerSecond: 40_000)
        thumbnails.prefetch(around: 0, direction: .forward)
        thumbnails.prefetch(around: 359, direction: .backward)  // the last sheet
        try await Self.waitForAll(server, thumbnails)
        let order = Self.sheetNumbers(server)
        #expect(order.count == 30 && Set(order).count == 30, "\(order)")
        let coarse = Set(stride(from: 1, to: 30, by: 3))
        // The earlier call may have started sheet 0 (and 1, in the wave) before the later one replaced its queue.
        let fill = order.filter { !coarse.contains($0) && $0 != 0 }
        // The last sheet and the one behind it (28, in the wave), the rest of the wave, then nearest the last sheet
        // first: 27, 26, 24 (25 is in the wave). Two downloads at a time may reach the server in either order when
        // their slots free together, so the order is checked that loosely; the earlier call's queue (around sheet 0)
        // is gone either way: 3 and 2, the farthest, come among the last four.
        #expect(fill.first == 29, "\(order)")
        #expect(Set(fill.dropFirst().prefix(2)).isSubset(of: [27, 26, 24]), "\(fill)")
        #expect(Set(fill.suffix(4)).isSuperset(of: [2, 3]), "\(fill)")
    }

    @Test("while a miss downloads, prefetching starts nothing; it goes on as the miss ends, and every sheet comes")
    func prefetchWaitsForMiss() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let cache = try TemporaryDirectory()
        defer { cache.remove() }
        let thumbnails = try await Self.engine(server, cache: cache)
        server.fail("/p/sheet-7.jpg", with: [.delay(0.4)])
        #expect(thumbnails.getThumbnail(atTimestamp: 7 * 12 + 1) == nil)
        #expect(await eventually { Self.sheetNumbers(server) == [7] })
        thumbnails.prefetch(around: 0)
        try await Self.waitForAll(server, thumbnails)
        // The miss's answer took 0.4 s (the server's delay): no prefetch request came before it was over.
        let sheets = server.requests.filter { $0.path.hasPrefix("/p/sheet-") }
        let miss = try #require(sheets.first)
        #expect(Self.sheetNumbers(server).first == 7 && Set(Self.sheetNumbers(server)).count == 30)
        #expect(sheets.dropFirst().allSatisfy { $0.time.timeIntervalSince(miss.time) >= 0.4 })
    }

    @Test("misses fetch one sheet at a time, the latest waiting miss first, and every miss in the end")
    func missesLatestFirst() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let cache = try TemporaryDirectory()
        defer { cache.remove() }
        let thumbnails = try await Self.engine(server, cache: cache)
        server.throttle(prefix: "/p/sheet-", bytesPerSecond: 40_000)
        // A scrub over sheets 0, 5, 10 and 15, then back to 5, while sheet 0 downloads.
        for sheet in [0, 5, 10, 15, 5] { #expect(thumbnails.getThumbnail(atTimestamp: Double(sheet * 12) + 1) == nil) }
        let done = await eventually {
            [0, 5, 10, 15].allSatisfy { thumbnails.availability(at: Double($0 * 12) + 1) != .remote }
        }
        #expect(done, "every missed sheet is fetched")
        #expect(Self.sheetNumbers(server) == [0, 5, 15, 10], "\(Self.sheetNumbers(server))")
        #expect(thumbnails.getThumbnail(atTimestamp: 121) != nil)
    }
}
