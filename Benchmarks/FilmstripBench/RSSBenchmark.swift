import Filmstrip
import FilmstripTesting
import Foundation

/// Peak RSS of a separate process that eagerly loads the 10,800-thumbnail track (108 sheets) at default memory
/// limits and then asks for every thumbnail once. The server runs here, so its copy of the sheets is not counted.
enum RSSBenchmark {
    static func run(_ fixture: BenchFixture) throws {
        let cache = try TemporaryDirectory(prefix: "filmstrip-bench-rss")
        defer { cache.remove() }
        let server = try LoopbackServer()
        server.serve("/thumbnails.vtt", text: fixture.trackText)
        for (i, sheet) in fixture.sheets.enumerated() { server.serve("/sheets/sprite-\(i + 1).jpg", body: sheet) }
        let output = try FilmstripBench.run(
            CommandLine.arguments[0], ["rss-client", server.url("/thumbnails.vtt").absoluteString, cache.url.path])
        print("Memory: 10,800-thumbnail track, 108 sheets, default limits")
        print(output.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        print("")
    }
}

enum RSSClient {
    static func run(trackURL: URL, cacheDirectory: URL) async throws {
        let baseline = peakRSS() ?? 0
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = cacheDirectory
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: trackURL)
        let afterLoad = peakRSS() ?? 0
        var served = 0
        for k in 0..<BenchFixture.cueCount where thumbnails.getThumbnail(atTimestamp: Double(k) + 0.5) != nil {
            served += 1
        }
        let afterSweep = peakRSS() ?? 0
        func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        print("process start       peak RSS \(mb(baseline))")
        print("after eager load    peak RSS \(mb(afterLoad))")
        print("after \(served) lookups  peak RSS \(mb(afterSweep))  (engine caches \(mb(thumbnails.memoryUsage)))")
    }
}
