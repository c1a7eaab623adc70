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

    @Test("a missing segment is retried with backoff, then skipped with a warning; playback goes on to the end")
    func missingSegmentSkipped() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        server.remove("/vod/v0/segment-2.ts")
        let (virtual, player, recorder) = observedVirtualPlayer()
        var configuration = PlayerConfiguration(with: master)
        configuration.streaming.adaptiveBitrate = false
        player.playbackRate = 2
        player.open(config: configuration)
        await recorder.wait(for: .ended, on: virtual)
        #expect(recorder.errors.contains { $0.type == .segmentSkipped && $0.message.contains("segment 2") })
        #expect(server.requestCount("/vod/v0/segment-2.ts") == 4, "one try and three retries")
        #expect(!recorder.states.contains(.error))
    }

    @Test("with the fail policy a missing segment is fatal: source_unavailable, error state")
    func missingSegmentFatal() async throws {
        let server = try LoopbackServer()
        let master = try StreamFixtures.serveLadder(on: server)
        server.remove("/vod/v0/segment-1.ts")
        let (virtual, player, recorder) = observedVirtualPlayer()
        var configuration = PlayerConfiguration(with: master)
        configuration.streaming.adaptiveBitrate = false
        configuration.streaming.missingSegmentPolicy = .fail
        configuration.streaming.segmentRetries = 1
        player.open(config: configuration)
        await recorder.wait(for: .error, on: virtual)
        #expect(recorder.errors.contains { $0.type == .sourceUnavailable && $0.severity == .fatal })
    }

    /// The ladder served on `server`, played from one rendition with a 3 s forward buffer (so an outage shows soon).
    static func shortBufferLadder(on server: LoopbackServer) throws -> PlayerConfiguration {
        var configuration = PlayerConfiguration(with: try StreamFixtures.serveLadder(on: server))
        configuration.maxPrebufferTime = 3
        configuration.streaming.adaptiveBitrate = false
        return configuration
    }

    @Test("the server disappears: buffering, connection unavailable, state timeout; recovers when it returns")
    func serverDisappears() async throws {
        let server = try LoopbackServer()
        var configuration = try Self.shortBufferLadder(on: server)
        let (virtual, player, recorder) = observedVirtualPlayer()
        configuration.stateTimeouts?.buffering = 1
        // Requests wait for the server for up to 30 s.
        configuration.network = NetworkConfiguration(timeoutIntervalForResourceMs: 30000, waitsForConnectivity: true)
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        try server.setReachable(false)
        #expect(
            await virtual.run {
                recorder.errors.contains { $0.type == .internetConnectionUnavailable }
                    && player.state.kind == .buffering
            }, "\(recorder.states) \(recorder.errors)")
        #expect(await virtual.run { recorder.errors.contains { $0.type == .stateTimeoutBuffering } })
        #expect(recorder.errors.first { $0.type == .stateTimeoutBuffering }?.severity == .recoverable)
        try server.setReachable(true)
        #expect(
            await virtual.run {
                recorder.errors.contains { $0.type == .internetConnectionAvailable } && player.state.kind == .playing
            }, "\(recorder.states) \(recorder.errors)")
        #expect(!recorder.states.contains(.error))
    }

    @Test(
        "waitsForConnectivity false: a server that is gone fails the stream after the retries, not at the buffer's end")
    func connectivityNotAwaited() async throws {
        let server = try LoopbackServer()
        var configuration = try Self.shortBufferLadder(on: server)
        let (virtual, player, recorder) = observedVirtualPlayer()
        configuration.streaming.segmentRetries = 2
        configuration.network = NetworkConfiguration(waitsForConnectivity: false)
        player.open(config: configuration)
        await recorder.wait(for: .playing, on: virtual)
        try server.setReachable(false)
        await recorder.wait(for: .error, on: virtual)
        #expect(recorder.errors.contains { $0.type == .internetConnectionUnavailable })
        let fatal = try #require(recorder.errors.first { $0.severity == .fatal })
        #expect(fatal.type == .sourceUnavailable && fatal.underlying != nil, "\(fatal)")
        // The skip policy does not apply to a lost server: nothing was skipped.
        #expect(!recorder.errors.contains { $0.type == .segmentSkipped })
    }

    @Test("a live playlist that fails to reload is retried with a warning; playback goes on")
    func liveReloadFailure() async throws {
        let server = try LoopbackServer()
        let (virtual, player, recorder) = observedVirtualPlayer()
        let live = try SimulatedLiveStream(server: server, now: { virtual.now })
        player.open(config: PlayerConfiguration(with: live.url))
        await recorder.wait(for: .playing, on: virtual)
        let before = server.requestCount("/live/live.m3u8")
        server.fail("/live/live.m3u8", with: [.status(503), .status(503)])
        #expect(
            await virtual.run { recorder.errors.filter { $0.type == .playlistReloadFailed }.count >= 2 },
            "\(recorder.errors)")
        #expect(await virtual.run { server.requestCount("/live/live.m3u8") >= before + 3 })
        #expect(recorder.errors.allSatisfy { $0.severity == .warning })
        // Playback goes on: it may be buffering, or on its way back (`play`, between buffering and playing, which
        // the old check missed about once in twenty runs), but it plays again and never fails or ends.
        #expect(await virtual.run { player.state.kind == .playing }, "\(player.state) \(recorder.states)")
        #expect(!recorder.states.contains(.error) && !recorder.states.contains(.ended), "\(recorder.states)")
    }

    @Test("AES-128 segments are decrypted with the IV of the key tag; the key is fetched once; a missing key fails")
    func aes128() async throws {
        let server = try LoopbackServer()
        let url = try StreamFixtures.serveEncrypted(on: server)
        let playlist = try String(contentsOf: StreamFixtures.makeEncrypted(), encoding: .utf8)
        #expect(playlist.contains("METHOD=AES-128"))
        let (virtual, player, recorder) = observedVirtualPlayer()
        var configuration = PlayerConfiguration(with: url)
        configuration.cmcd = CmcdConfiguration(mode: .headers)
        player.playbackRate = 2
        player.open(config: configuration)
        await recorder.wait(for: .ended, on: virtual)
        #expect(recorder.errors.isEmpty, "\(recorder.errors)")
        #expect((player.getStats()?.presentedFrames ?? 0) + (player.getStats()?.droppedFrames ?? 0) >= 140)
        #expect(server.requestCount("/aes/key.bin") == 1)
        let keyRequest = try #require(server.requests.first { $0.path == "/aes/key.bin" })
        #expect(cmcdKeys(keyRequest)["ot"] == "k")

        server.remove("/aes/key.bin")
        let (failingClock, failing, failures) = observedVirtualPlayer()
        var strict = PlayerConfiguration(with: url)
        strict.streaming.missingSegmentPolicy = .fail
        strict.streaming.segmentRetries = 1
        failing.open(config: strict)
        await failures.wait(for: .error, on: failingClock)
        #expect(
            failures.errors.contains { $0.type == .sourceUnavailable && $0.message.contains("key.bin") },
            "\(failures.errors)")
    }

    @Test("timeoutIntervalForDrmAcquisitionMs bounds key requests: a slow key server fails them as timed out")
    func keyTimeout() async throws {
        let server = try LoopbackServer()
        let url = try StreamFixtures.serveEncrypted(on: server)
        // Every key answer comes 2 s late: well inside the default timeouts, past the key timeout.
        server.fail("/aes/key.bin", with: Array(repeating: .delay(2), count: 8))
        let (virtual, player, recorder) = observedVirtualPlayer()
        var configuration = PlayerConfiguration(with: url)
        configuration.network = NetworkConfiguration(timeoutIntervalForDrmAcquisitionMs: 300)
        configuration.streaming.missingSegmentPolicy = .fail
        configuration.streaming.segmentRetries = 1
        player.open(config: configuration)
        await recorder.wait(for: .error, on: virtual)
        #expect(
            recorder.errors.contains {
                $0.type == .sourceUnavailable && $0.message.contains("key.bin")
                    && $0.message.contains("timeoutIntervalForDrmAcquisitionMs")
            }, "\(recorder.errors)")
        #expect(server.requestCount("/aes/key.bin") >= 2, "tried and retried")
    }

    @Test("bad input: a malformed playlist is a fatal source_invalid with its line; a bad key is refused")
    func badInput() async throws {
        let server = try LoopbackServer()
        server.serve("/bad/master.m3u8", text: "#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=1x1\nv0.m3u8\n")
        let (virtual, player, recorder) = observedVirtualPlayer()
        player.open(config: PlayerConfiguration(with: server.url("/bad/master.m3u8")))
        await recorder.wait(for: .error, on: virtual)
        let fatal = try #require(recorder.errors.first { $0.severity == .fatal })
        #expect(
            fatal.type == .sourceInvalid && fatal.message.contains("line 3") && fatal.message.contains("BANDWIDTH"),
            "\(fatal)")

        let url = try StreamFixtures.serveEncrypted(on: server)
        server.serve("/aes/key.bin", body: Array(repeating: 7, count: 20))
        let (keyedClock, keyed, keyRecorder) = observedVirtualPlayer()
        var strict = PlayerConfiguration(with: url)
        strict.streaming.missingSegmentPolicy = .fail
        strict.streaming.segmentRetries = 0
        keyed.open(config: strict)
        await keyRecorder.wait(for: .error, on: keyedClock)
        #expect(keyRecorder.errors.contains { $0.severity == .fatal && $0.message.contains("16 bytes") })
    }

    @Test("nothing to play: an image playlist and a subtitles-only MPD are a fatal source_invalid that says why")
    func nothingToPlay() async throws {
        let server = try LoopbackServer()
        server.serve(
            "/img/thumbs.m3u8",
            text:
                "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:10\n#EXT-X-IMAGES-ONLY\n#EXTINF:10,\na.jpg\n#EXT-X-ENDLIST\n"
        )
        server.serve(
            "/text/t.mpd",
            text: """
                <?xml version="1.0"?>
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S" \
                profiles="urn:mpeg:dash:profile:isoff-live:2011">
                  <Period>
                    <AdaptationSet contentType="text" mimeType="application/mp4" lang="en">
                      <SegmentTemplate media="t$Number$.m4s" initialization="init.m4s" duration="2" timescale="1"/>
                      <Representation id="t" bandwidth="1000" codecs="wvtt"/>
                    </AdaptationSet>
                  </Period>
                </MPD>
                """, contentType: "application/dash+xml")
        for (path, reason) in [
            ("/img/thumbs.m3u8", "image playlist cannot be played"), ("/text/t.mpd", "no video or audio track"),
        ] {
            let (virtual, player, recorder) = observedVirtualPlayer()
            player.open(config: PlayerConfiguration(with: server.url(path)))
            await recorder.wait(for: .error, on: virtual)
            let fatal = try #require(recorder.errors.first { $0.severity == .fatal })
            #expect(fatal.type == .sourceInvalid && fatal.message.contains(reason), "\(path): \(fatal)")
            #expect(!server.requests.contains { $0.path.hasSuffix(".jpg") || $0.path.hasSuffix(".m4s") })
        }
    }

    @Test("a live reload that is not a playlist gives a playlist_reload_failed warning; playback goes on")
    func liveReloadGarbage() async throws {
        let server = try LoopbackServer()
        let (virtual, player, recorder) = observedVirtualPlayer()
        let live = try SimulatedLiveStream(server: server, now: { virtual.now })
        player.open(config: PlayerConfiguration(with: live.url))
        await recorder.wait(for: .playing, on: virtual)
        server.serve("/live/live.m3u8", text: "<html>maintenance</html>", contentType: "text/html")
        #expect(
            await virtual.run { recorder.errors.contains { $0.type == .playlistReloadFailed } },
            "\(recorder.errors)")
        #expect(recorder.errors.allSatisfy { $0.severity == .warning }, "\(recorder.errors)")
        #expect(!recorder.states.contains(.error))
    }
}
