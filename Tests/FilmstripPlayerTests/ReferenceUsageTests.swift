import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import ReferenceUsage
import Testing

/// Runs the `ReferenceUsage` example target against real content over loopback HTTP.
@Suite("The reference usage, run")
struct ReferenceUsageTests {
    /// An SDK instance of the test's own, with no disk cache.
    private static func sdk() -> Filmstrip {
        let sdk = Filmstrip()
        var thumbnails = ThumbnailsConfiguration()
        thumbnails.cacheDirectory = nil
        sdk.thumbnailsConfiguration = thumbnails
        ReferenceUsage.configure(sdk)
        return sdk
    }

    @Test("on demand: plays to the end at 1.5x with the SDK's and the player's headers; thumbnails found later")
    func onDemand() async throws {
        let sdk = Self.sdk()
        #expect(sdk.playbackRateRange(of: .filmstrip) == 0...4)
        #expect(sdk.networkConfiguration?.timeoutIntervalForResourceMs == 20_000)
        let server = try LoopbackServer()
        server.serve("/clip.mp4", body: Array(try Data(contentsOf: try MediaFixtures.shortCounter())))
        let track = try TemporaryDirectory()
        defer { track.remove() }
        server.serve(
            "/sprite-1.jpg",
            body: Array(try SpriteSheetFixture.encoded(columns: 2, rows: 1, cellWidth: 32, cellHeight: 18)))
        server.serve(
            "/track.vtt", text: TrackFixture.sprites(count: 2, columns: 2, rows: 1, cellWidth: 32, cellHeight: 18))

        let events = Mutex<[String]>([])
        let clock = TestClock()
        sdk.setPlayerClock(clock, date: clock.wallClock(from: VirtualPlayer.origin))
        let player = ReferenceUsage.playOnDemand(server.url("/clip.mp4"), sdk: sdk) { event in
            events.withLock { $0.append(event) }
        }
        let virtual = VirtualPlayer(player, clock: clock, date: clock.wallClock(from: VirtualPlayer.origin))
        #expect(await virtual.run { events.withLock { $0.contains("state playing -> ended") } })
        let log = events.withLock { $0 }
        #expect(
            log.prefix(3) == ["state idle -> opening", "seekable [ClosedRange(0.0...2.0)]", "state opening -> ready"])
        #expect(log.contains { $0.hasPrefix("stats position") })
        #expect(!log.contains { $0.hasPrefix("error") })
        #expect(player.getStats()?.playbackRate == 1.5)
        let media = server.requests.filter { $0.path == "/clip.mp4" }
        #expect(!media.isEmpty)
        #expect(media.allSatisfy { $0.headers["x-app"] == "reference" && $0.headers["x-player"] == "vod" })

        let scrubbed = ReferenceUsage.scrub(player, to: 1)
        #expect(scrubbed.stats != nil)
        #expect(await virtual.run { player.state == .paused && player.currentTime == 1 })

        let loaded = Mutex<(done: Bool, error: String?)>((false, nil))
        ReferenceUsage.loadThumbnails(for: player, track: server.url("/track.vtt"), sdk: sdk) { error in
            loaded.withLock { $0 = (true, error.map { "\($0)" }) }
        }
        #expect(await virtual.run { loaded.withLock { $0.done } })
        #expect(loaded.withLock { $0.error } == nil)
        let preview = try #require(ReferenceUsage.thumbnail(for: player, at: 1.5, sdk: sdk))
        #expect(preview.start == 1 && preview.end == 2 && !preview.imageData.isEmpty)
        player.stop()
    }

    @Test("live: the player-level settings are taken, the latency target sets the start, an optimized start plays soon")
    func live() async throws {
        let sdk = Self.sdk()
        let server = try LoopbackServer()
        let clock = TestClock()
        let date = clock.wallClock(from: VirtualPlayer.origin)
        sdk.setPlayerClock(clock, date: date)
        let stream = try SimulatedLiveStream(server: server, now: { clock.now.offset.seconds })
        let player = ReferenceUsage.playLive(stream.url, sdk: sdk)
        let virtual = VirtualPlayer(player, clock: clock, date: date)
        // Where playback starts, taken when it first plays (a stall later, on a busy machine, would add to it).
        let startBehind = Mutex<Double?>(nil)
        player.onState = { [weak player] _, state in
            guard state.kind == .playing, let player, startBehind.withLock({ $0 == nil }) else { return }
            let behind = player.seekableTimeRanges.first.map { $0.upperBound - player.currentTime }
            startBehind.withLock { $0 = behind }
        }
        #expect(player.liveEdgeDelay == 10 && player.chaseLiveEdge == .speedupPlayback)
        #expect(player.chaseLiveEdgeCatchupThreshold == 10 && player.chaseLiveEdgeCutoffThreshold == 5)
        #expect(player.chaseLiveEdgeHLSSegmentDuration == 10 && player.chaseLiveEdgeSpeedupRatio == 1.1)
        #expect(player.minPrebufferTime == 6 && player.maxPrebufferTime == 60 && player.minRebufferTime == 12)
        // 6 s of start buffer would need segments that do not exist yet; the optimized start needs one.
        #expect(await virtual.run { player.state == .playing }, "\(player.state)")
        let stats = try #require(player.getStats())
        #expect(stats.isLive)
        // The latency target (3 s) sets where playback starts; liveEdgeDelay applies when there is none.
        let behind = try #require(startBehind.withLock { $0 })
        #expect(behind > 2 && behind < 5, "\(behind) s behind the edge")
        player.stop()
    }

    @Test("player-level buffer settings apply while playing: a smaller maxPrebufferTime bounds decoding at once")
    func reconfigured() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player, frames: false)
        player.load(config: PlayerConfiguration(with: try MediaFixtures.counter()))
        player.open(autoplay: false)
        await recorder.wait(for: .paused, on: virtual)
        #expect(await virtual.run { (player.getStats()?.bufferLength ?? 0) > 5 })
        player.maxPrebufferTime = 1
        player.seek(5)
        #expect(await virtual.run { recorder.states.filter { $0 == .paused }.count == 2 })
        // The statistics (published once a second) show the buffer down to the new bound.
        #expect(await virtual.run { (player.getStats()?.bufferLength ?? .infinity) <= 1.1 })
        let stats = try #require(player.getStats())
        #expect(stats.bufferLength <= 1.1, "buffered \(stats.bufferLength) s")
        player.stop()
    }
}
