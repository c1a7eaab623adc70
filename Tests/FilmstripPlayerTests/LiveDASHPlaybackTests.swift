import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripPlayer

/// Live DASH on the player: a dynamic MPD whose segments exist only inside their availability window (a strict
/// origin answers 404 otherwise), with the server's clock on time or an hour ahead (then read from `UTCTiming`).
@Suite("Live DASH playback", .serialized)
struct LiveDASHPlaybackTests {
    @Test(
        "starts suggestedPresentationDelay behind the edge, follows it, and never asks for a segment too early",
        arguments: [0.0, 3600.0])
    func followsTheEdge(skew: Double) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let virtual = VirtualPlayer()
        let live = try SimulatedLiveDASH(server: server, clockSkew: skew, utcTiming: skew != 0, now: virtual.date)
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        // The window the start was chosen in: the first one published (later ones move on with the edge).
        let opened = Mutex<ClosedRange<Double>?>(nil)
        player.onSeekableTimeRanges = { ranges in
            opened.withLock { first in if first == nil { first = ranges.first } }
        }
        var configuration = PlayerConfiguration(with: live.url)
        configuration.cmcd = CmcdConfiguration(sessionID: "live", mode: .query)
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        let window = try #require(player.seekableTimeRanges.first)
        // The MPD's suggestedPresentationDelay is 3 s; the window ends at the newest complete segment.
        let newest = Double(live.newestSegment)
        // Never past what exists; at most a few segments behind it (the window read here may be a refresh old).
        #expect(
            window.upperBound <= newest + 0.5 && window.upperBound >= newest - 4,
            "window \(window), newest segment ends at \(newest)")
        #expect(await virtual.run { !recorder.frames.isEmpty })
        let start = try #require(recorder.frames.first?.time)
        let first = try #require(opened.withLock { $0 })
        #expect(first.upperBound - start >= 2.5 && first.upperBound - start <= 5, "started at \(start) in \(first)")
        // The window follows the edge, and the MPD is read again (minimumUpdatePeriod 2 s).
        let follows = await virtual.run {
            (player.seekableTimeRanges.first?.upperBound ?? 0) >= window.upperBound + 2
                && server.requestCount("/dash-live/live.mpd") >= 2
        }
        #expect(follows, "the window follows the edge: \(window) -> \(player.seekableTimeRanges)")
        player.stop()

        #expect(recorder.errors.isEmpty, "\(recorder.errors)")
        let statuses = server.responseStatuses.filter { $0.target.contains("chunk-") }
        #expect(
            !statuses.isEmpty && statuses.allSatisfy { $0.status == 200 }, "\(statuses.filter { $0.status != 200 })")
        // Every frame is the source's frame at its time ((t mod 10) at 25 fps).
        let wrong = recorder.frames.filter { time, number in
            let expected = Int(((time.truncatingRemainder(dividingBy: 10)) * 25 + 1e-3).rounded(.down))
            return number.map { abs($0 - expected) > 1 && abs($0 - expected) < 249 } ?? true
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        // The MPD is refreshed per minimumUpdatePeriod (2 s). Every request carried CMCD with sf=d, and st=l once
        // the first MPD said the stream is live.
        #expect(server.requestCount("/dash-live/live.mpd") >= 2)
        for (index, request) in server.requests.enumerated() {
            let keys = cmcdKeys(request)
            #expect(keys["sf"] == "d" && keys["sid"] == "\"live\"", "\(request.target)")
            if index > 0, !request.path.hasSuffix("/time") { #expect(keys["st"] == "l", "\(request.target)") }
        }
    }
}

@Suite("Live latency target")
struct LiveLatencyTests {
    @Test(
        "liveEdgeLatencyMs: starts at the target, takes drift back at the speed-up ratio down to it, never against a user's seek"
    )
    func settles() {
        var configuration = LiveConfiguration(liveEdgeLatencyMs: 6000)
        configuration.liveEdgeDelay = 20  // the target wins
        var controller = LiveEdgeController(configuration: configuration)
        #expect(controller.startPosition(window: 0...100) == 94)
        #expect(controller.startPosition(window: 0...100, targetDuration: 4) == 88, "never closer than 3 targets")
        #expect(controller.startPosition(window: 0...100, suggestedDelay: 10) == 94)
        // A slow start: the first look while playing jumps to the target.
        var slow = LiveEdgeController(configuration: configuration)
        #expect(slow.observe(position: 90, window: 0...100, isPlaying: false).decision == .none)
        #expect(slow.observe(position: 90, window: 0...100, isPlaying: true).decision == .seek(to: 94))
        #expect(controller.observe(position: 94, window: 0...100, isPlaying: true).decision == .none)
        // Within the band (2 s segments: 2.5 s): nothing. Past it (a stall): speed up until the target.
        #expect(
            controller.observe(position: 92, window: 0...100, isPlaying: true, segmentDuration: 2).decision == .none)
        #expect(
            controller.observe(position: 91, window: 0...100, isPlaying: true, segmentDuration: 2).decision
                == .setRate(1.1))
        #expect(
            controller.observe(position: 93, window: 0...100, isPlaying: true, segmentDuration: 2).decision == .none)
        #expect(
            controller.observe(position: 94, window: 0...100, isPlaying: true, segmentDuration: 2).decision
                == .setRate(1))
        // Longer segments widen the band: the window's own steps are not drift.
        var hls = LiveEdgeController(configuration: configuration)
        #expect(hls.observe(position: 88, window: 0...100, isPlaying: true, segmentDuration: 6).decision == .none)
        // A user who seeks 30 s back is left there.
        _ = controller.userSought(to: 70, window: 0...100)
        #expect(controller.observe(position: 71, window: 0...101, isPlaying: true).decision == .none)
    }

    /// The two settle 4 s apart (within a segment). Without the setting both would sit at the MPD's 3 s delay.
    @Test(
        "a higher latency target plays further behind the edge (6000 vs 10000 ms), as the stats report")
    func twoPlayers() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let date = clock.wallClock(from: VirtualPlayer.origin)
        let live = try SimulatedLiveDASH(server: server, now: date)
        var latencies: [Double] = []
        for target in [6000, 10000] {
            let virtual = VirtualPlayer(clock: clock, date: date)
            let player = virtual.player
            let recorder = PlayerRecorder()
            recorder.observe(player, frames: false)
            var configuration = PlayerConfiguration(with: live.url)
            configuration.live = LiveConfiguration(liveEdgeLatencyMs: target)
            player.open(config: configuration)
            await recorder.wait(for: .playing, on: virtual)
            // The window grows a segment (1 s) at a time, so the distance to its end moves within a segment of the
            // target; stats come once a second, so average two seconds' worth, after five seconds of playing.
            await virtual.run(for: .seconds(5))
            var samples: [Double] = []
            for _ in 0..<20 {
                await virtual.run(for: .milliseconds(100))
                if let latency = player.getStats()?.liveLatency { samples.append(latency) }
            }
            latencies.append(samples.reduce(0, +) / Double(max(1, samples.count)))
            player.stop()
        }
        // Each settles at its target, within a segment and a frame (an MPD reload and the engine's step fall on the
        // same instant of the clock, and run in the order the machine runs them: the window the engine saw then may
        // be the one before the reload, a segment earlier, and the controller leaves drift of a segment alone);
        // 4 s apart, far from the MPD's 3 s delay.
        #expect(abs(latencies[0] - 6) <= 1.05, "\(latencies)")
        #expect(abs(latencies[1] - 10) <= 1.05, "\(latencies)")
        #expect(latencies[1] > latencies[0] + 2.9, "\(latencies)")
    }
}
