import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@Suite("Trick play: keyframes only above 2x")
struct TrickPlayTests {
    @Test("at 8x only keyframes are decoded and presented, at their times; back at 1x every frame again")
    func keyframesAtEightTimes() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.playbackRate = 8
        // The counter has a keyframe every 2 s (50 frames); frame n shows number n.
        player.open(config: PlayerConfiguration(with: try MediaFixtures.counter()))
        #expect(await virtual.run { player.state == .ended }, "\(recorder.states)")
        let stats = try #require(player.getStats())
        #expect(stats.keyframesOnly)
        let shown = recorder.frames.map(\.frame)
        #expect(shown == [0, 50, 100, 150, 200], "\(shown)")
        #expect(stats.decodedFrames == 5 && stats.droppedFrames == 0)
        // Positions moved at the rate: each keyframe at its own time.
        #expect(recorder.frames.map(\.time) == [0, 2, 4, 6, 8])
        // Back to 1x from the start: every frame from the first keyframe on.
        player.playbackRate = 1
        player.seek(0)
        player.play()
        #expect(await virtual.run { recorder.frames.count >= 5 + 30 })
        // Frames in between are shown again, every one.
        let after = recorder.frames.dropFirst(5).prefix(30).compactMap(\.frame)
        #expect(after == Array(0..<30), "\(after)")
        #expect(player.getStats()?.keyframesOnly == false)
        player.stop()
    }

    @Test("an HLS stream at 8x: keyframes only, the end reached in an eighth of the time")
    func streamAtEightTimes() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsTS, on: server)
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player)
        player.playbackRate = 8
        player.open(config: PlayerConfiguration(with: url))
        #expect(await virtual.run { player.state == .ended }, "\(recorder.states)")
        #expect(recorder.frames.allSatisfy { $0.frame.map { $0 % 50 == 0 } ?? false }, "\(recorder.frames)")
        #expect(recorder.frames.count == 5)
        #expect(player.getStats()?.keyframesOnly == true)
    }
}

@Suite("Trick play: I-frame tracks and reverse playback")
struct TrickPlayTrackTests {
    /// The counter as HLS with MPEG-TS segments (the ffmpeg CLI's), plus an I-frame playlist and a master written
    /// by ``IFramePlaylistGenerator``, served under `/iframes`. Returns the master's URL and the segments' total size.
    static func hlsWithIFrames(
        on server: LoopbackServer
    ) async throws -> (url: URL, segmentBytes: Int, iFramePlaylist: String) {
        let source = try StreamLayouts.directory(.hlsTS)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iframes-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: source, to: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=300000,RESOLUTION=320x240\nindex.m3u8\n"
        let sourceMaster = directory.appendingPathComponent("source.m3u8")
        try Data(master.utf8).write(to: sourceMaster)
        let summary = try await IFramePlaylistGenerator.generate(from: sourceMaster, to: directory)
        try StreamLayouts.serveDirectory(directory, on: server, prefix: "/iframes")
        let playlist = "/iframes/" + (summary.playlists.first?.url.lastPathComponent ?? "")
        return (server.url("/iframes/master.m3u8"), try segmentBytes(in: source), playlist)
    }

    static func segmentBytes(in directory: URL) throws -> Int {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey])
            .filter { $0.pathExtension == "ts" }
            .reduce(0) { $0 + (try $1.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) }
    }

    /// Bytes asked for by a request's `Range` header.
    static func rangeLength(_ request: LoopbackServer.Request) -> Int? {
        guard let value = request.headers["range"], value.hasPrefix("bytes=") else { return nil }
        let bounds = value.dropFirst(6).split(separator: "-").compactMap { Int($0) }
        return bounds.count == 2 ? bounds[1] - bounds[0] + 1 : nil
    }

    /// A player (on a test clock) whose engine plays backwards, recording frames and states.
    static func player() -> (VirtualPlayer, Player, PlayerRecorder) {
        let virtual = VirtualPlayer(ratePolicy: PlaybackRatePolicy(engine: .filmstrip, range: -16...16))
        let recorder = PlayerRecorder()
        recorder.observe(virtual.player)
        return (virtual, virtual.player, recorder)
    }

    /// Plays `url` backwards at `rate` from `from` until the start pauses it; returns the frame numbers shown.
    static func reverse(
        _ url: URL, rate: Double, from: Double, configure: (inout PlayerConfiguration) -> Void = { _ in }
    )
        async throws -> (frames: [Int?], player: Player, recorder: PlayerRecorder)
    {
        let (virtual, player, recorder) = player()
        var configuration = PlayerConfiguration(with: url)
        configure(&configuration)
        player.load(config: configuration)
        player.open(autoplay: false)
        #expect(await virtual.run { player.state == .paused }, "\(recorder.states)")
        player.seek(from)
        #expect(await virtual.run { player.state == .paused && recorder.frames.count >= 2 })
        let before = recorder.frames.count
        player.playbackRate = rate
        let started = virtual.now
        player.play()
        // Reverse playback pauses at the start.
        #expect(
            await virtual.run {
                player.state == .paused && player.currentTime == 0 && recorder.frames.count > before
            },
            "\(recorder.states) at \(player.currentTime)")
        // The position moved at the rate: the way back took its length over the rate, on the player's clock.
        let first = recorder.frames.dropFirst(before).first?.time ?? 0
        let took = virtual.now - started
        #expect(abs(took - first / abs(rate)) < 0.15, "from \(first) s in \(took) s")
        return (recorder.frames.dropFirst(before).map(\.frame), player, recorder)
    }

    @Test("HLS with an I-frame playlist at 8x: its I-frames only, each fetched as a byte range (CMCD ot=v, maps ot=i)")
    func hlsIFramesForward() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, total, _) = try await Self.hlsWithIFrames(on: server)
        let (virtual, player, recorder) = Self.player()
        player.playbackRate = 8
        var configuration = PlayerConfiguration(with: url)
        configuration.cmcd = CmcdConfiguration()
        let started = virtual.now
        player.open(config: configuration)
        #expect(await virtual.run { player.state == .ended }, "\(recorder.states)")
        // 10 s at 8x: 1.25 s of the clock.
        #expect(virtual.now - started >= 1.2 && virtual.now - started < 1.5, "\(virtual.now - started) s")
        #expect(recorder.frames.map(\.frame) == [0, 50, 100, 150, 200], "\(recorder.frames)")
        #expect(recorder.frames.map(\.time) == [0, 2, 4, 6, 8])
        #expect(player.getStats()?.keyframesOnly == true)
        // Only byte ranges of the segments (a PAT/PMT map, one keyframe), never a whole segment.
        let segments = server.requests.filter { $0.path.hasSuffix(".ts") }
        #expect(!segments.isEmpty && segments.allSatisfy { Self.rangeLength($0) != nil }, "\(segments)")
        let fetched = segments.compactMap(Self.rangeLength).reduce(0, +)
        #expect(fetched * 2 < total, "\(fetched) of \(total) bytes")
        // Each I-frame is video media (`ot=v`, with its duration); each PAT/PMT map an init section (`ot=i`).
        let objects = segments.map { $0.headers["cmcd-object"] ?? "" }
        #expect(objects.filter { $0.contains("ot=v") && $0.contains("d=") }.count == 5, "\(objects)")
        #expect(objects.allSatisfy { $0.contains("ot=v") || $0.contains("ot=i") }, "\(objects)")
    }

    @Test("HLS with an I-frame playlist at -2x: its I-frames backwards, paused at the start")
    func hlsIFramesBackward() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _, _) = try await Self.hlsWithIFrames(on: server)
        let (frames, player, _) = try await Self.reverse(url, rate: -2, from: 9)
        #expect(frames == [200, 150, 100, 50, 0], "\(frames)")
        #expect(player.getStats()?.keyframesOnly == true)
        // The segments were fetched whole only for the first frames at 1x; the way back is I-frame ranges.
        let ranged = server.requests.filter { $0.path.hasSuffix(".ts") && Self.rangeLength($0) != nil }
        #expect(ranged.count >= 5)
        player.stop()
    }

    @Test("an I-frame playlist that cannot be loaded: a warning, and 8x shows the segments' keyframes instead")
    func hlsIFramePlaylistMissing() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _, playlist) = try await Self.hlsWithIFrames(on: server)
        server.remove(playlist)
        let (virtual, player, recorder) = Self.player()
        player.playbackRate = 8
        player.open(config: PlayerConfiguration(with: url))
        #expect(await virtual.run { player.state == .ended }, "\(recorder.states) \(recorder.errors)")
        #expect(recorder.frames.map(\.frame) == [0, 50, 100, 150, 200], "\(recorder.frames)")
        #expect(recorder.errors.contains { $0.severity == .warning && $0.message.contains("I-frame track") })
        #expect(!recorder.errors.contains { $0.severity == .fatal })
    }

    @Test("an I-frame that cannot be fetched is retried, then skipped with a warning; trick play goes on")
    func hlsIFrameMissing() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _, _) = try await Self.hlsWithIFrames(on: server)
        server.remove("/iframes/seg_002.ts")
        let (virtual, player, recorder) = Self.player()
        player.playbackRate = 8
        player.open(config: PlayerConfiguration(with: url))
        #expect(await virtual.run { player.state == .ended }, "\(recorder.states) \(recorder.errors)")
        #expect(recorder.frames.map(\.frame) == [0, 50, 150, 200], "\(recorder.frames)")
        #expect(recorder.errors.contains { $0.type == .segmentSkipped && $0.message.contains("I-frame at 4") })
        #expect(server.requestCount("/iframes/seg_002.ts") > 1)
    }

    @Test("a live stream does not play backwards: a negative rate pauses it in place, with a warning")
    func liveReverse() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let stream = try SimulatedLiveStream(server: server)
        let (virtual, player, recorder) = Self.player()
        player.open(config: PlayerConfiguration(with: stream.url))
        #expect(await virtual.run { player.state == .playing }, "\(recorder.states)")
        player.playbackRate = -2
        #expect(await virtual.run { player.playbackRate == 0 })
        #expect(recorder.errors.contains { $0.type == .playbackRateClamped && $0.message.contains("live") })
        #expect(player.getStats()?.keyframesOnly == false)
        player.stop()
    }

    @Test("HLS without an I-frame playlist: -2x shows each segment's keyframe backwards, -1x every frame backwards")
    func hlsSegmentsBackward() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsTS, on: server)
        let fast = try await Self.reverse(url, rate: -2, from: 9)
        #expect(fast.frames == [200, 150, 100, 50, 0], "\(fast.frames)")
        fast.player.stop()
        let slow = try await Self.reverse(url, rate: -1, from: 3.9)
        let shown = slow.frames.compactMap { $0 }
        // Every frame from the one the seek to 3.9 s lands on (98, at 3.92 s) down to 0, in reverse order.
        #expect(shown == Array((0...98).reversed()), "\(shown)")
        #expect(slow.player.getStats()?.keyframesOnly == false)
        slow.player.stop()
    }

    @Test("DASH with a trick-mode AdaptationSet: 8x and -2x play its frames; the main set is never fetched")
    func dashTrickMode() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.dashTrickMode, on: server)
        let (virtual, player, recorder) = Self.player()
        player.playbackRate = 8
        player.open(config: PlayerConfiguration(with: url))
        #expect(await virtual.run { player.state == .ended }, "\(recorder.states)")
        #expect(recorder.frames.map(\.frame) == [0, 50, 100, 150, 200], "\(recorder.frames)")
        #expect(recorder.frames.map(\.time) == [0, 2, 4, 6, 8])
        #expect(!server.requests.contains { $0.path.contains("chunk-") }, "\(server.requests.map(\.path))")
        #expect(server.requests.contains { $0.path.contains("trick-0") })
        player.stop()
        let back = try await Self.reverse(url, rate: -2, from: 9)
        #expect(back.frames == [200, 150, 100, 50, 0], "\(back.frames)")
        back.player.stop()
    }

    @Test("a file backwards: -1.5x every frame, -4x keyframes only; the position stays at or above 0")
    func fileBackward() async throws {
        let url = try MediaFixtures.counter()
        let slow = try await Self.reverse(url, rate: -1.5, from: 3.9)
        let shown = slow.frames.compactMap { $0 }
        #expect(shown == Array((0...98).reversed()), "\(shown)")
        slow.player.stop()
        let fast = try await Self.reverse(url, rate: -4, from: 9.9)
        #expect(fast.frames == [200, 150, 100, 50, 0], "\(fast.frames)")
        #expect(fast.player.getStats()?.keyframesOnly == true)
        #expect(fast.recorder.frames.allSatisfy { $0.time >= 0 })
        fast.player.stop()
    }
}
