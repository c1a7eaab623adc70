import FilmstripFormats
import FilmstripImaging
import FilmstripPlayer
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

/// CMCD data a request carried, by header or query, as key -> value.
func cmcdKeys(_ request: LoopbackServer.Request) -> [String: String] {
    var text: [String] = []
    for name in ["cmcd-object", "cmcd-request", "cmcd-session", "cmcd-status"] {
        if let value = request.headers[name] { text.append(value) }
    }
    if let query = request.query("CMCD") { text.append(query) }
    var keys: [String: String] = [:]
    for field in text.joined(separator: ",").split(separator: ",") {
        let parts = field.split(separator: "=", maxSplits: 1)
        keys[String(parts[0])] = parts.count > 1 ? String(parts[1]) : "true"
    }
    return keys
}

/// Polls `condition` until it holds or `seconds` pass.

/// A headless player whose states and errors are recorded.
func observedPlayer(network: NetworkConfiguration? = nil) -> (Player, PlayerRecorder) {
    let player = Player(network: network)
    let recorder = PlayerRecorder()
    recorder.observe(player, frames: false)
    return (player, recorder)
}

/// A live configuration starting 9 s behind the edge and catching up from 6 s to `cutoff`.
func chasing(_ url: URL, _ mode: LiveConfiguration.Chase, cutoff: Double) -> PlayerConfiguration {
    var configuration = PlayerConfiguration(with: url)
    configuration.live.liveEdgeDelay = 9
    configuration.live.chaseLiveEdge = mode
    configuration.live.chaseLiveEdgeCatchupThreshold = 6
    configuration.live.chaseLiveEdgeCutoffThreshold = cutoff
    return configuration
}

@Suite("HLS streaming engine", .serialized)
struct StreamingTests {
    @Test("VOD: opening -> ready -> play -> playing -> ended at rate 2; frames cover the stream")
    func vodToEnd() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        let (virtual, player, recorder) = observedVirtualPlayer()
        player.playbackRate = 2
        // The lowest rendition: decoding at twice real time stays light beside the other suites.
        var configuration = PlayerConfiguration(with: master)
        configuration.streaming.adaptiveBitrate = false
        player.open(config: configuration)
        await recorder.wait(for: .ended, on: virtual)
        // Stall detours (buffering -> play) on a loaded machine are allowed; nothing else is.
        let states = withoutStalls(recorder.states).reduce(into: [PlayerState.Kind]()) {
            if $0.last != $1 { $0.append($1) }
        }
        #expect(states == [.opening, .ready, .play, .playing, .ended], "\(recorder.states)")
        let stats = try #require(player.getStats())
        #expect(abs(stats.duration - 20) < 0.5, "\(stats)")
        #expect(stats.presentedFrames + stats.droppedFrames >= 480, "\(stats) \(recorder.errors) \(recorder.states)")
        #expect(stats.segmentsLoaded >= 10)
        #expect(recorder.errors.filter { $0.severity != .warning }.isEmpty, "\(recorder.errors)")
    }

    @Test(
        "VOD seek lands on the target; rate 2 moves the playhead twice as fast as the clock")
    func seekAndRate() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        let (virtual, player, recorder) = observedVirtualPlayer()
        player.open(config: PlayerConfiguration(with: master))
        await recorder.wait(for: .playing, on: virtual)
        player.seek(13)
        await recorder.wait(for: .seeking, on: virtual)
        #expect(await virtual.run { player.state.kind == .playing })
        #expect(player.currentTime >= 13 && player.currentTime < 15, "\(player.currentTime)")
        player.playbackRate = 2
        // Measured once the statistics say the rate is in force.
        _ = await virtual.run { player.getStats()?.playbackRate == 2 }
        let before = player.currentTime
        await virtual.run(for: .seconds(2))
        let advanced = player.currentTime - before
        #expect(player.state.kind == .playing)
        #expect(abs(advanced - 4) < 0.05, "advanced \(advanced) s in 2 s")
        #expect(recorder.errors.filter { $0.severity != .warning }.isEmpty, "\(recorder.errors)")
    }

    @Test("live: starts liveEdgeDelay behind the edge; the seekable window slides with the playlist")
    func liveStartAndWindow() async throws {
        let server = try LoopbackServer()
        let (virtual, player, recorder) = observedVirtualPlayer()
        let live = try SimulatedLiveStream(server: server, windowSize: 8, initialSegments: 12, now: { virtual.now })
        var configuration = PlayerConfiguration(with: live.url)
        configuration.live.liveEdgeDelay = 5
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        let window = try #require(player.seekableTimeRanges.first)
        let latency = window.upperBound - player.currentTime
        // Five seconds behind the edge, rounded back to the start of a one-second segment.
        #expect(latency >= 4.5 && latency <= 6.8, "latency \(latency), window \(window)")
        #expect(abs(window.upperBound - window.lowerBound - 8) < 0.01)
        #expect(await virtual.run { (player.seekableTimeRanges.first?.lowerBound ?? 0) >= window.lowerBound + 2 })
        let stats = try #require(player.getStats())
        #expect(stats.isLive && stats.duration == 0)
        #expect(server.requestCount("/live/live.m3u8") >= 3, "the playlist is reloaded")
    }

    @Test("live: a long pause falls behind the window and warns player_behind_live_window")
    func behindLiveWindow() async throws {
        let server = try LoopbackServer()
        let (virtual, player, recorder) = observedVirtualPlayer()
        let live = try SimulatedLiveStream(server: server, windowSize: 4, initialSegments: 8, now: { virtual.now })
        var configuration = PlayerConfiguration(with: live.url)
        configuration.live.behindLiveWindowTolerance = 0.5
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        player.pause()
        let warned = await virtual.run {
            recorder.errors.contains { $0.type == .playerBehindLiveWindow && $0.severity == .warning }
        }
        #expect(warned, "\(recorder.errors)")
        #expect(player.state.kind == .paused)
    }

    @Test("live catch-up by speed-up: the clock runs faster until the cutoff distance")
    func catchUpBySpeedup() async throws {
        let server = try LoopbackServer()
        let (virtual, player, recorder) = observedVirtualPlayer()
        let live = try SimulatedLiveStream(server: server, windowSize: 12, initialSegments: 14, now: { virtual.now })
        var configuration = chasing(live.url, .speedupPlayback, cutoff: 4)
        configuration.live.chaseLiveEdgeSpeedupRatio = 2
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        func latency() -> Double { (player.seekableTimeRanges.first?.upperBound ?? 0) - player.currentTime }
        let start = latency()
        #expect(start > 6, "\(start)")
        #expect(await virtual.run { latency() < 5 }, "latency stayed at \(latency())")
        // It settles: back to normal speed near the cutoff, not racing into the edge.
        await virtual.run(for: .milliseconds(1500))
        #expect(latency() > 2, "\(latency())")
        #expect(!recorder.states.contains(.seeking))
    }

    @Test("live catch-up by skipping: one jump to the cutoff distance, on a segment boundary")
    func catchUpBySkipping() async throws {
        let server = try LoopbackServer()
        let (virtual, player, recorder) = observedVirtualPlayer()
        let live = try SimulatedLiveStream(server: server, windowSize: 12, initialSegments: 14, now: { virtual.now })
        var configuration = chasing(live.url, .skipFrames, cutoff: 3)
        configuration.live.chaseLiveEdgeHLSSegmentDuration = 1
        player.open(config: configuration)
        await recorder.wait(for: .seeking, on: virtual)
        #expect(await virtual.run { player.state.kind == .playing })
        let latency = (player.seekableTimeRanges.first?.upperBound ?? 0) - player.currentTime
        #expect(latency >= 2.5 && latency < 5.5, "\(latency)")
    }

    @Test("CMCD headers on every request: ot=m playlists, ot=v segments, su, bl, br, d, mtp, sid, cid, st=v, sf=h")
    func cmcdHeaders() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        let (virtual, player, recorder) = observedVirtualPlayer()
        var configuration = PlayerConfiguration(with: master)
        configuration.cmcd = CmcdConfiguration(sessionID: "s-1", contentID: "vod-ladder", mode: .headers)
        configuration.streaming.adaptiveBitrate = false
        // A short forward buffer, so segments are also fetched while playing (not only at start-up).
        configuration.maxPrebufferTime = 4
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        // Segments fetched while playing, beyond the start-up ones.
        let fetched = { server.requests.filter { $0.path.hasPrefix("/vod/") && $0.path.hasSuffix(".ts") }.count }
        let atStart = fetched()
        #expect(await virtual.run { fetched() >= atStart + 2 })
        let requests = server.requests.filter { $0.path.hasPrefix("/vod/") }
        #expect(requests.count >= 4)
        for (index, request) in requests.enumerated() {
            let keys = cmcdKeys(request)
            #expect(request.query("CMCD") == nil)
            #expect(keys["sid"] == "\"s-1\"" && keys["cid"] == "\"vod-ladder\"", "\(request.target)")
            // The stream type is known once a media playlist was read: not while fetching the first two playlists.
            #expect(keys["sf"] == "h" && keys["st"] == (index < 2 ? nil : "v"), "\(keys)")
            if request.path.hasSuffix(".m3u8") {
                #expect(keys["ot"] == "m", "\(request.target): \(keys)")
                #expect(keys["br"] == nil && keys["d"] == nil)
            } else {
                #expect(keys["ot"] == "v", "\(request.target): \(keys)")
                #expect(keys["br"] == "200" && keys["d"] == "2000" && keys["tb"] == "1200", "\(keys)")
                #expect(keys["bl"] != nil, "\(keys)")
            }
        }
        let segments = requests.filter { $0.path.hasSuffix(".ts") }
        #expect(cmcdKeys(segments[0])["su"] == "true", "start-up is flagged")
        #expect(cmcdKeys(segments[0])["mtp"] == nil, "no throughput is known before the first segment")
        #expect(segments.dropFirst().contains { cmcdKeys($0)["mtp"] != nil })
        #expect(segments.dropFirst().contains { cmcdKeys($0)["su"] == nil }, "start-up ends once playing")
        #expect(segments.contains { (cmcdKeys($0)["nor"] ?? "").contains("segment-") })
        // Shards: object keys in CMCD-Object, session keys in CMCD-Session.
        #expect(segments[0].headers["cmcd-object"]?.contains("ot=v") == true)
        #expect(segments[0].headers["cmcd-session"]?.contains("sid=") == true)
    }

    @Test("CMCD in query mode (st=l for live); configured headers on every request, SDK and player merged")
    func cmcdQueryAndHeaders() async throws {
        let server = try LoopbackServer()
        let sdk = NetworkConfiguration(httpAdditionalHeaders: ["X-App": "filmstrip-tests", "X-Token": "sdk"])
        let (virtual, player, recorder) = observedVirtualPlayer(network: sdk)
        let live = try SimulatedLiveStream(server: server, now: { virtual.now })
        var configuration = PlayerConfiguration(with: live.url)
        configuration.cmcd = CmcdConfiguration(sessionID: "live-session", mode: .query)
        configuration.network = NetworkConfiguration(httpAdditionalHeaders: ["X-Token": "player"])
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        #expect(
            await virtual.run { server.requests.contains { $0.path.hasPrefix("/live/") && $0.path.hasSuffix(".ts") } })
        let requests = server.requests.filter { $0.path.hasPrefix("/live/") }
        #expect(requests.contains { $0.path.hasSuffix(".ts") })
        // The first request cannot know the stream is live yet.
        #expect(cmcdKeys(requests[0])["st"] == nil)
        for request in requests.dropFirst() {
            #expect(request.headers["x-app"] == "filmstrip-tests" && request.headers["x-token"] == "player")
            #expect(request.headers["cmcd-session"] == nil && request.headers["cmcd-object"] == nil)
            let keys = cmcdKeys(request)
            #expect(keys["sid"] == "\"live-session\"" && keys["st"] == "l" && keys["sf"] == "h", "\(request.target)")
            #expect(keys["ot"] == (request.path.hasSuffix(".m3u8") ? "m" : "v"), "\(request.target)")
        }
    }

    @Test("ABR: starts on the lowest rendition and switches up on a fast link")
    func switchesUp() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        let (virtual, player, recorder) = observedVirtualPlayer()
        player.open(config: PlayerConfiguration(with: master))
        await recorder.wait(for: .playing, on: virtual)
        let segments = { server.requests.filter { $0.path.hasSuffix(".ts") }.map(\.path) }
        #expect(segments().first?.hasPrefix("/vod/v0/") == true, "\(segments())")
        #expect(await virtual.run { segments().contains { $0.hasPrefix("/vod/v2/") } }, "\(segments())")
        #expect(await virtual.run { player.getStats()?.bitrate == 1_200_000 })
        #expect((player.getStats()?.bandwidthEstimate ?? 0) > 1_200_000)
    }

    @Test("ABR: switches down when the server throttles")
    func switchesDown() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        server.throttle(prefix: "/vod/v2/", bytesPerSecond: 100_000)
        server.throttle(prefix: "/vod/v1/", bytesPerSecond: 100_000)
        let (player, _) = observedPlayer()
        var configuration = PlayerConfiguration(with: master)
        configuration.streaming.startRendition = 2
        player.open(config: configuration)
        let segments = { server.requests.filter { $0.path.hasSuffix(".ts") }.map(\.path) }
        let switched = await eventually {
            guard let top = segments().firstIndex(where: { $0.hasPrefix("/vod/v2/") }) else { return false }
            return segments()[(top + 1)...].contains { !$0.hasPrefix("/vod/v2/") }
        }
        #expect(switched, "\(segments())")
        let after = segments().drop { $0.hasPrefix("/vod/v2/") }
        #expect(!after.contains { $0.hasPrefix("/vod/v2/") }, "no flapping back up: \(segments())")
        #expect(await eventually { (player.getStats()?.bandwidthEstimate ?? .infinity) < 1_200_000 })
    }

    @Test("ABR: a switch whose segments fail is abandoned; the segment comes from the committed rendition")
    func failedSwitchIsAbandoned() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        for n in 0..<100 { server.remove("/vod/v2/segment-\(n).ts") }
        let (virtual, player, recorder) = observedVirtualPlayer()
        player.playbackRate = 2
        player.open(config: PlayerConfiguration(with: master))
        await recorder.wait(for: .ended, on: virtual)
        let segments = server.requests.filter { $0.path.hasSuffix(".ts") }.map(\.path)
        #expect(segments.contains { $0.hasPrefix("/vod/v2/") }, "the top was tried: \(segments)")
        #expect(recorder.errors.contains { $0.type == .renditionSwitchFailed })
        #expect(!recorder.errors.contains { $0.type == .segmentSkipped }, "nothing skipped: \(recorder.errors)")
        #expect(!recorder.states.contains(.error))
        #expect(player.getStats()?.bitrate != 1_200_000, "the failed rendition was never committed")
        // Every segment number was played from a rendition that had it.
        let played = Set(segments.filter { !$0.hasPrefix("/vod/v2/") }.map { $0.split(separator: "/").last! })
        let all = Set(segments.map { $0.split(separator: "/").last! })
        #expect(played == all, "\(segments)")
    }
}
