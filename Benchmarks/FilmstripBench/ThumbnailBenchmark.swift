import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation

enum ThumbnailBenchmark {
    static func run(_ fixture: BenchFixture) async throws {
        let cache = try TemporaryDirectory(prefix: "filmstrip-bench-cache")
        defer { cache.remove() }
        let server = try LoopbackServer()
        server.serve("/thumbnails.vtt", text: fixture.trackText)
        for (i, sheet) in fixture.sheets.enumerated() { server.serve("/sheets/sprite-\(i + 1).jpg", body: sheet) }
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cache.url
        let thumbnails = TrackThumbnails(configuration: configuration)
        let loadStart = now()
        try await thumbnails.load(webVTTTrack: server.url("/thumbnails.vtt"))
        let loadSeconds = Double(now() - loadStart) / 1e9
        server.stop()
        print(
            "getThumbnail, 1600x900 JPEG sheets (\(format(Double(fixture.sheetBytes) / Double(fixture.sheets.count) / 1000, 0)) KB each), 160x90 crops"
        )
        print(
            "  eager load over loopback: \(BenchFixture.sheetCount) sheets, \(format(Double(fixture.sheetBytes) / 1e6, 1)) MB in \(format(loadSeconds, 2)) s"
        )

        // Cold: the sheet is on disk (page cache), not decoded; memory is purged before every call.
        var cold: [Double] = []
        for i in 0..<200 {
            thumbnails.purgeMemory()
            let t = Double((i * 5407) % BenchFixture.cueCount) + 0.5
            let start = now()
            guard thumbnails.getThumbnail(atTimestamp: t) != nil else { throw BenchError("cold miss at \(t)") }
            cold.append(Double(now() - start) / 1e3)
        }
        cold.sort()
        print(
            "  cold (disk, not decoded)  p50 \(format(percentile(cold, 50) / 1000, 2)) ms   p99 \(format(percentile(cold, 99) / 1000, 2)) ms"
        )

        // Warm: the thumbnail is in memory. Fill 1,000 thumbnails, then time random hits among them.
        thumbnails.purgeMemory()
        for k in 0..<1000 { _ = thumbnails.getThumbnail(atTimestamp: Double(k) + 0.5) }
        var warm: [Double] = []
        var seed: UInt64 = 42
        for _ in 0..<100_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1
            let t = Double(seed >> 33 % 1000) + 0.5
            let start = now()
            let thumbnail = thumbnails.getThumbnail(atTimestamp: t)
            warm.append(Double(now() - start) / 1e3)
            if thumbnail == nil { throw BenchError("warm miss at \(t)") }
        }
        warm.sort()
        print(
            "  warm (memory)             p50 \(format(percentile(warm, 50), 2)) µs   p99 \(format(percentile(warm, 99), 2)) µs"
        )

        // One engine, many callers at once: 10,000 lookups as child tasks of one group (all in flight together on
        // the cooperative pool), then the same from 8 threads. Contention would show as a p99 far above one caller's.
        let single = percentile(warm, 99)
        for (name, lookups) in [
            ("10,000 concurrent tasks", await concurrentLookups(thumbnails, count: 10_000)),
            ("8 threads x 10,000", threadedLookups(thumbnails, threads: 8, each: 10_000)),
        ] {
            let (latencies, seconds) = lookups
            print(
                "  \(name.padding(toLength: 25, withPad: " ", startingAt: 0)) p50 \(format(percentile(latencies, 50), 2)) µs   p99 \(format(percentile(latencies, 99), 2)) µs (\(format(percentile(latencies, 99) / single, 1))x one caller's)   \(format(Double(latencies.count) / seconds / 1e6, 2)) M lookups/s"
            )
        }

        // Decoded sheet in memory, thumbnail not yet encoded: crop + encode only.
        var crop: [Double] = []
        thumbnails.purgeMemory()
        _ = thumbnails.getThumbnail(atTimestamp: 0.5)
        for k in 1..<100 {
            let start = now()
            _ = thumbnails.getThumbnail(atTimestamp: Double(k) + 0.5)
            crop.append(Double(now() - start) / 1e3)
        }
        crop.sort()
        print(
            "  sheet decoded, crop+encode p50 \(format(percentile(crop, 50), 0)) µs   p99 \(format(percentile(crop, 99), 0)) µs"
        )
        print("")
    }
}

/// Warm lookups (among the 1,000 thumbnails in memory) from `count` child tasks of one group; latencies in µs,
/// sorted, and the wall time in seconds.
private func concurrentLookups(_ thumbnails: TrackThumbnails, count: Int) async -> ([Double], Double) {
    let start = now()
    var latencies = await withTaskGroup(of: Double.self) { group in
        for k in 0..<count {
            group.addTask {
                let t = Double((k * 7919) % 1000) + 0.5
                let begin = now()
                _ = thumbnails.getThumbnail(atTimestamp: t)
                return Double(now() - begin) / 1e3
            }
        }
        return await group.reduce(into: [Double]()) { $0.append($1) }
    }
    let seconds = Double(now() - start) / 1e9
    latencies.sort()
    return (latencies, seconds)
}

/// The same from `threads` threads of their own, `each` lookups apiece.
private func threadedLookups(_ thumbnails: TrackThumbnails, threads: Int, each: Int) -> ([Double], Double) {
    let results = Mutex<[Double]>([])
    let start = now()
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        var local: [Double] = []
        local.reserveCapacity(each)
        for k in 0..<each {
            let t = Double((k * 7919 + thread * 131) % 1000) + 0.5
            let begin = now()
            _ = thumbnails.getThumbnail(atTimestamp: t)
            local.append(Double(now() - begin) / 1e3)
        }
        results.withLock { $0 += local }
    }
    let seconds = Double(now() - start) / 1e9
    return (results.withLock { $0 }.sorted(), seconds)
}
