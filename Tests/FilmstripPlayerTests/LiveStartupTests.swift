import FilmstripPlayer
import FilmstripTesting
import Foundation
import Testing

@Suite("Optimized live startup")
struct LiveStartupTests {
    /// A live master with two renditions (the higher listed first), each a simulated live stream.
    private static func liveLadder(
        on server: LoopbackServer, prefix: String, now: @escaping @Sendable () -> Double
    ) throws -> URL {
        _ = try SimulatedLiveStream(server: server, prefix: "\(prefix)/hi", now: now)
        _ = try SimulatedLiveStream(server: server, prefix: "\(prefix)/lo", now: now)
        server.serve(
            "\(prefix)/master.m3u8",
            text: """
                #EXTM3U
                #EXT-X-STREAM-INF:BANDWIDTH=3000000,RESOLUTION=320x180
                hi/live.m3u8
                #EXT-X-STREAM-INF:BANDWIDTH=300000,RESOLUTION=320x180
                lo/live.m3u8

                """, contentType: "application/vnd.apple.mpegurl")
        return server.url("\(prefix)/master.m3u8")
    }

    /// Plays the live ladder from the higher rendition with a 4 s start buffer (more than the 3 s the start rule
    /// leaves), with or without the optimization; returns the first media request's path and the statistics.
    private static func start(optimized: Bool) async throws -> (firstSegment: String?, stats: PlayerStats?) {
        let server = try LoopbackServer()
        let prefix = optimized ? "/fast" : "/usual"
        let (virtual, player, recorder) = observedVirtualPlayer()
        let master = try liveLadder(on: server, prefix: prefix) { virtual.now }
        var configuration = PlayerConfiguration(with: master)
        configuration.streaming.startRendition = 1
        configuration.minPrebufferTime = 4
        configuration.live.optimizeLiveStartup = optimized
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        #expect(await virtual.run { player.getStats()?.startupTime != nil })
        let stats = player.getStats()
        player.stop()
        let first = server.requests.map(\.path).first { $0.hasSuffix(".ts") }
        #expect(recorder.errors.allSatisfy { $0.severity == .warning }, "\(recorder.errors)")
        return (first, stats)
    }

    @Test("the first segment comes from the lowest rendition, playback starts on it, and the saving is reported")
    func optimized() async throws {
        let usual = try await Self.start(optimized: false)
        let fast = try await Self.start(optimized: true)
        #expect(usual.firstSegment?.hasPrefix("/usual/hi/") == true, "\(usual.firstSegment ?? "-")")
        #expect(fast.firstSegment?.hasPrefix("/fast/lo/") == true, "\(fast.firstSegment ?? "-")")
        // The usual start waits for a fourth second of stream to appear; the optimized one starts on one segment.
        let usualStartup = try #require(usual.stats?.startupTime)
        let fastStartup = try #require(fast.stats?.startupTime)
        #expect(fastStartup < usualStartup, "optimized \(fastStartup) s, usual \(usualStartup) s")
        #expect(usual.stats?.startupTimeSaved == nil)
        let saved = try #require(fast.stats?.startupTimeSaved)
        #expect(saved > 0)
    }
}
