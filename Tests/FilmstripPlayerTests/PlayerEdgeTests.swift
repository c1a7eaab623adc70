import FilmstripPlayer
import FilmstripTesting
import Foundation
import Testing

/// The less travelled edges of the state graph (SPEC 4.1), end to end on real players.
@Suite("Player state graph edges")
struct PlayerEdgeTests {
    @Test("autoplay denied: play -> pausing, the first frame shown, paused with a warning; play() plays")
    func autoplayDenied() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        var configuration = PlayerConfiguration(with: try MediaFixtures.shortCounter())
        configuration.autoplayPolicy = .denied
        player.open(config: configuration)
        await recorder.wait(for: .paused, on: virtual)
        #expect(recorder.states == [.opening, .ready, .play, .pausing, .buffering, .paused])
        #expect(recorder.errors.map(\.type) == [.autoplayRefused])
        #expect(recorder.frames.map(\.frame) == [0])
        player.play()
        await recorder.wait(for: .ended, on: virtual)
        #expect(recorder.frames.count > 10)
    }

    @Test("autoplay muted only: plays, and the player and its statistics say muted")
    func autoplayMuted() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player, frames: false)
        var configuration = PlayerConfiguration(with: try MediaFixtures.shortCounter())
        configuration.autoplayPolicy = .mutedOnly
        #expect(!player.isMuted)
        player.open(config: configuration)
        await recorder.wait(for: .ended, on: virtual)
        #expect(player.isMuted)
        #expect(player.getStats()?.audioMuted == true)
        #expect(recorder.errors.isEmpty)
    }

    @Test("ended -> seeking back, paused on the target; ended -> new content, reusing the decoder when it can")
    func fromEnded() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.open(config: PlayerConfiguration(with: try MediaFixtures.shortCounter()))
        await recorder.wait(for: .ended, on: virtual)
        let shown = recorder.frames.count
        player.seek(1)
        #expect(await virtual.run { player.state == .paused })
        #expect(Array(recorder.states.drop { $0 != .ended }.prefix(2)) == [.ended, .seeking])
        let landed = try #require(recorder.frames.last)
        #expect(recorder.frames.count == shown + 1 && landed.frame == 25, "\(landed)")
        #expect(player.currentTime == 1)
        // New content from the paused player needs a stop; from ended it opens directly.
        player.play()
        #expect(await virtual.run { recorder.states.filter { $0 == .ended }.count == 2 })
        #expect(player.getStats()?.decodersCreated == 1)
        // The same video again: its decoder is reused (flushed), and playback starts from its first frame.
        let framesBefore = recorder.frames.count
        player.open(config: PlayerConfiguration(with: try MediaFixtures.shortCounter()))
        #expect(await virtual.run { recorder.states.filter { $0 == .ended }.count == 3 })
        #expect(recorder.frames.dropFirst(framesBefore).first?.frame == 0)
        #expect(player.getStats()?.decodersCreated == 1)
        // Different codec parameters (64x48): a new decoder.
        let before = recorder.states.count
        player.open(config: PlayerConfiguration(with: try MediaFixtures.tinyCounter()))
        #expect(await virtual.run { recorder.states[before...].contains(.playing) })
        #expect(Array(recorder.states[before...].prefix(4)) == [.opening, .ready, .play, .playing])
        // The new content (40 s) plays to its own end.
        player.seek(39.5)
        #expect(await virtual.run { recorder.states.filter { $0 == .ended }.count == 4 }, "\(recorder.states)")
        #expect(player.contentURL == (try MediaFixtures.tinyCounter()))
        #expect(player.getStats()?.decodersCreated == 2)
        #expect(recorder.errors.isEmpty)
    }

    @Test("a seek while buffering: seeking from buffering, then playback from the target")
    func seekWhileBuffering() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        // Segments trickle in, so the player sits in buffering at the start.
        server.throttle(prefix: "/vod/v0/", bytesPerSecond: 5_000)
        // On the system's clock: buffering here comes from a slow network, whose time a test clock does not see.
        let player = Player()
        let recorder = PlayerRecorder()
        recorder.observe(player)
        var configuration = PlayerConfiguration(with: master)
        configuration.streaming.adaptiveBitrate = false
        player.open(config: configuration)
        try await recorder.wait(for: .buffering)
        player.seek(8)
        #expect(await eventually { recorder.states.contains(.seeking) })
        server.throttle(prefix: "/vod/v0/", bytesPerSecond: nil)
        #expect(await eventually { recorder.states.last == .playing })
        let states = recorder.states
        let seeking = try #require(states.firstIndex(of: .seeking))
        #expect(states[seeking - 1] == .buffering, "\(states)")
        #expect(!states[..<seeking].contains(.playing))
        let first = try #require(recorder.frames.first { $0.time >= 7.9 })
        #expect(abs(first.time - 8) < 0.05, "first frame after the seek at \(first.time)")
        player.stop()
    }

    @Test("stop while the manifest loads: opening -> stopping -> idle at once, no error, the request cancelled")
    func stopWhileOpening() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        server.fail("/vod/master.m3u8", with: [.delay(30)])
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.open(config: PlayerConfiguration(with: master))
        await recorder.wait(for: .opening, on: virtual)
        #expect(await virtual.run { server.requestCount("/vod/master.m3u8") == 1 })
        player.stop()
        #expect(await virtual.run { player.state == .idle })
        // At once: the manifest's 30 s delay would have let the opening finish (ready) first.
        #expect(recorder.states == [.opening, .stopping, .idle])
        #expect(recorder.errors.isEmpty, "\(recorder.errors)")
        #expect(server.requestCount("/vod/v0/index.m3u8") == 0)
    }

    @Test("a seek at or past the end goes to ended; before the start (from ready) it lands on the first frame")
    func seekPastTheEnd() async throws {
        // The 10 s counter: a slow machine still finds it playing (a 2 s video may have ended before the seek).
        for target in [10.0, 13.0, 1e9] {
            let virtual = VirtualPlayer()
            let player = virtual.player
            let recorder = PlayerRecorder()
            recorder.observe(player)
            player.open(config: PlayerConfiguration(with: try MediaFixtures.counter()))
            await recorder.wait(for: .playing, on: virtual)
            player.seek(target)
            #expect(await virtual.run { player.state == .ended }, "\(target): \(recorder.states)")
            #expect(recorder.states.contains(.seeking), "\(target): \(recorder.states)")
            #expect(player.currentTime == 10, "\(target): \(player.currentTime)")
            player.stop()
        }
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.load(config: PlayerConfiguration(with: try MediaFixtures.shortCounter()))
        #expect(await virtual.run { player.state == .ready })
        player.seek(-5)
        #expect(await virtual.run { player.state == .paused })
        #expect(player.currentTime == 0 && recorder.frames.last?.frame == 0)
        // A seek before open: ready -> seeking, then paused on the target.
        #expect(Array(recorder.states.drop { $0 != .ready }.prefix(2)) == [.ready, .seeking], "\(recorder.states)")
    }

    @Test("getStats() is nil before the first statistics and after stop()")
    func statsLifetime() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        #expect(player.getStats() == nil)
        player.open(config: PlayerConfiguration(with: try MediaFixtures.shortCounter()))
        #expect(await virtual.run { player.getStats() != nil })
        player.stop()
        #expect(await virtual.run { player.state == .idle })
        #expect(player.getStats() == nil)
    }

    @Test("a configuration names its engine: the player's own plays")
    func preferredEngine() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player, frames: false)
        var configuration = PlayerConfiguration(with: try MediaFixtures.shortCounter())
        configuration.preferredEngine = .filmstrip
        player.open(config: configuration)
        await recorder.wait(for: .ended, on: virtual)
        #expect(recorder.errors.isEmpty)
    }
}
