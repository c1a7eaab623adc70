import FilmstripImaging
import FilmstripMedia
import FilmstripPlayer
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

/// The states with stall detours removed: `buffering` followed by `play` after playback started (a busy machine
/// may not decode ahead fast enough, and the player then rightly buffers). Every other state stays.
func withoutStalls(_ states: [PlayerState.Kind]) -> [PlayerState.Kind] {
    var out: [PlayerState.Kind] = []
    var i = 0
    while i < states.count {
        if states[i] == .buffering, i + 1 < states.count, states[i + 1] == .play,
            out.last == .play || out.last == .playing
        {
            i += 2
            continue
        }
        out.append(states[i])
        i += 1
    }
    return out
}

/// Records what a player reports.
final class PlayerRecorder: VideoOutput, @unchecked Sendable {
    // Guarded by `lock`; written on the player's thread, read by the test.
    private let lock = NSLock()
    private var _states: [PlayerState.Kind] = []
    private var _frames: [(time: Double, frame: Int?)] = []
    private var _errors: [PlayerError] = []

    var states: [PlayerState.Kind] { lock.withLock { _states } }
    var frames: [(time: Double, frame: Int?)] { lock.withLock { _frames } }
    var errors: [PlayerError] { lock.withLock { _errors } }

    /// Records states and errors, and (with `frames`) every frame shown.
    func observe(_ player: Player, frames: Bool = true) {
        player.onState = { [self] _, state in lock.withLock { _states.append(state.kind) } }
        player.onError = { [self] error in lock.withLock { _errors.append(error) } }
        if frames { player.attach(to: self) }
    }

    func display(_ image: PixelBuffer, at time: Double) {
        let (r, g, b) = image.meanColor(
            x: image.width / 4, y: image.height / 4, width: image.width / 2, height: image.height / 2)
        let number = MediaFixtures.frameNumber(r: r, g: g, b: b)
        lock.withLock { _frames.append((time, number)) }
    }

    /// Waits (up to `seconds`) until `state` has been entered.
    /// Waits until the player has been in `state` (as long as a loaded machine needs; the verdict is whether it
    /// comes).
    func wait(for state: PlayerState.Kind) async throws {
        if await !eventually({ states.contains(state) }) {
            Issue.record("timed out waiting for \(state); states: \(states)")
        }
    }
}

@Suite("Player engine (files and progressive MP4)")
struct PlayerEngineTests {
    @Test("autoplay: opening -> ready -> play -> playing -> ended, frames in order at their times")
    func autoplay() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        let started = virtual.now
        player.open(config: PlayerConfiguration(with: try MediaFixtures.shortCounter()))
        await recorder.wait(for: .ended, on: virtual)
        let elapsed = virtual.now - started
        #expect(recorder.states == [.opening, .ready, .play, .playing, .ended], "\(recorder.states)")
        #expect(abs(elapsed - 2) < 0.1, "2 s of video took \(elapsed) s of the clock")
        let frames = recorder.frames
        // Every frame shown, none dropped.
        #expect(frames.count == 50 && player.getStats()?.droppedFrames == 0)
        #expect(frames.map(\.time) == frames.map(\.time).sorted())
        #expect(frames.first?.frame == 0)
        // Each frame is the one its presentation time says (the counter video's colour is its frame number).
        for frame in frames {
            let shown = try #require(frame.frame, "unrecognised frame at \(frame.time)")
            #expect(abs(Double(shown) / 25 - frame.time) < 1e-6)
        }
        #expect(player.seekableTimeRanges == [0...2])
        #expect(recorder.errors.isEmpty)
    }

    @Test("an accurate seek lands within one frame of the target, paused or playing")
    func seek() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.load(config: PlayerConfiguration(with: try MediaFixtures.counter()))
        player.open(autoplay: false)
        await recorder.wait(for: .paused, on: virtual)
        #expect(recorder.frames.first?.frame == 0)
        player.seek(6.13)
        await recorder.wait(for: .seeking, on: virtual)
        _ = await virtual.run { recorder.frames.count >= 2 && player.state == .paused }
        let landed = try #require(recorder.frames.last)
        #expect(abs(landed.time - 6.13) <= 0.04, "landed at \(landed.time)")
        #expect(landed.frame == Int((landed.time * 25).rounded()))
        #expect(player.state == .paused)
        // Seeking while paused ends paused: through pausing, or through buffering when the frame was slow.
        let afterSeek = Array(recorder.states.drop { $0 != .seeking })
        #expect(Array(recorder.states.prefix(4)) == [.opening, .ready, .buffering, .paused])
        #expect(
            afterSeek == [.seeking, .pausing, .paused] || afterSeek == [.seeking, .buffering, .paused],
            "\(recorder.states)")
        player.play()
        await recorder.wait(for: .playing, on: virtual)
        // Some frames played past the seek target.
        let shownBeforePlay = recorder.frames.count
        _ = await virtual.run { recorder.frames.count >= shownBeforePlay + 5 }
        player.pause()
        _ = await virtual.run { !(player.state != .paused) }
        #expect(player.state == .paused)
        // Playback went on from the seek target, and stops while paused.
        let shownAtPause = recorder.frames.count
        let last = try #require(recorder.frames.last?.time)
        #expect(last > 6.13)
        let paused = player.currentTime
        #expect(paused >= last - 0.001 && paused - last < 1, "paused at \(paused), last frame \(last)")
        await virtual.run(for: .nanoseconds(300_000_000))
        #expect(recorder.frames.count == shownAtPause)
    }

    @Test("at rate 2.0 twice the media time passes per second of the clock")
    func rate() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player, frames: false)
        player.playbackRate = 2
        player.open(config: PlayerConfiguration(with: try MediaFixtures.tinyCounter()))
        await recorder.wait(for: .playing, on: virtual)
        let mediaStart = player.currentTime
        await virtual.run(for: .seconds(1))
        let advanced = player.currentTime - mediaStart
        #expect(abs(advanced - 2) <= 0.01, "media advanced \(advanced) s in a second")
        #expect(!recorder.states.contains(.buffering), "\(recorder.states)")
        #expect(player.playbackRate == 2)
        #expect(player.getStats()?.playbackRate == 2)
        player.stop()
        await recorder.wait(for: .idle, on: virtual)
    }

    @Test("a negative rate is clamped on this engine and reported")
    func negativeRate() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.playbackRate = -1
        _ = await virtual.run { !(recorder.errors.isEmpty) }
        #expect(recorder.errors.first?.type == .playbackRateClamped)
        #expect(player.playbackRate == 0)
    }

    @Test("a missing file and a 404 end in the error state with playerError")
    func failures() async throws {
        for url in [URL(fileURLWithPath: "/nonexistent/clip.mp4"), try LoopbackServer().url("/missing.mp4")] {
            let virtual = VirtualPlayer()
            let player = virtual.player
            let recorder = PlayerRecorder()
            recorder.observe(player)
            player.open(config: PlayerConfiguration(with: url))
            await recorder.wait(for: .error, on: virtual)
            #expect(recorder.states == [.opening, .error])
            #expect(player.state.playerError?.severity == .fatal)
            #expect(player.state.playerError?.type == .sourceUnavailable)
            #expect(recorder.errors.contains { $0.severity == .fatal })
            player.stop()
            await recorder.wait(for: .idle, on: virtual)
            #expect(recorder.states.suffix(2) == [.stopping, .idle])
        }
    }

    @Test("a progressive source whose server is gone: a connectivity warning, then a fatal source_unavailable")
    func unreachable() async throws {
        let server = try LoopbackServer()
        let url = server.url("/clip.mp4")
        server.setReachable(false)
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.open(config: PlayerConfiguration(with: url))
        await recorder.wait(for: .error, on: virtual)
        #expect(recorder.errors.map(\.type) == [.internetConnectionUnavailable, .sourceUnavailable])
        // A 404 is an answer, not a lost connection.
        let answering = try LoopbackServer()
        let otherClock = VirtualPlayer()
        let other = otherClock.player
        let quiet = PlayerRecorder()
        quiet.observe(other)
        other.open(config: PlayerConfiguration(with: answering.url("/missing.mp4")))
        await quiet.wait(for: .error, on: otherClock)
        #expect(quiet.errors.map(\.type) == [.sourceUnavailable])
    }

    @Test("progressive MP4 over http plays too")
    func remote() async throws {
        let server = try LoopbackServer()
        server.serve("/short.mp4", body: Array(try Data(contentsOf: try MediaFixtures.shortCounter())))
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.playbackRate = 2
        player.open(config: PlayerConfiguration(with: server.url("/short.mp4")))
        await recorder.wait(for: .ended, on: virtual)
        #expect(
            withoutStalls(recorder.states) == [.opening, .ready, .play, .playing, .ended],
            "\(recorder.states) \(recorder.errors)")
        #expect((player.getStats()?.bytesRead ?? 0) > 0)
    }
}

@Suite("Player engine: the forward buffer")
struct PlayerBufferTests {
    @Test("a source slower than the bitrate stalls into buffering and resumes; stalls are counted")
    func stall() async throws {
        let server = try LoopbackServer()
        let data = Array(try Data(contentsOf: try MediaFixtures.large()))  // 60 s at about 600 kbps
        server.serve("/large.mp4", body: data)
        // About 40 KB/s for every request: slower than the 75 KB/s the video needs.
        server.fail("/large.mp4", with: Array(repeating: .throttle(bytesPerSecond: 40_000), count: 200))
        let player = Player()
        let recorder = PlayerRecorder()
        recorder.observe(player)
        var configuration = PlayerConfiguration(with: server.url("/large.mp4"))
        configuration.minPrebufferTime = 0.5
        configuration.minRebufferTime = 0.5
        player.open(config: configuration)
        func stalledAndResumed() -> Bool {
            let states = recorder.states
            guard let first = states.firstIndex(of: .playing) else { return false }
            let after = states[first...]
            guard let stall = after.firstIndex(of: .buffering) else { return false }
            return states[stall...].contains(.playing)
        }
        #expect(await eventually(stalledAndResumed), "states: \(recorder.states) \(recorder.errors)")
        #expect(await eventually { (player.getStats()?.rebufferCount ?? 0) >= 1 })
        #expect(recorder.errors.allSatisfy { $0.severity != .fatal })
        player.stop()
    }

    @Test("decoding runs at most maxPrebufferTime ahead")
    func bounded() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        var configuration = PlayerConfiguration(with: try MediaFixtures.counter())
        configuration.maxPrebufferTime = 1
        player.load(config: configuration)
        player.open(autoplay: false)
        await recorder.wait(for: .paused, on: virtual)
        // The statistics (published once a second) show the buffer filled to its bound.
        #expect(await virtual.run { (player.getStats()?.bufferLength ?? 0) >= 0.9 })
        let stats = try #require(player.getStats())
        #expect(stats.bufferLength <= 1.1, "buffered \(stats.bufferLength) s")
        #expect(stats.decodedFrames <= 30, "decoded \(stats.decodedFrames) frames while paused")
        player.stop()
    }
}
