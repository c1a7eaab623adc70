import Filmstrip
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
