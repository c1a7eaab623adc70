import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

/// A stream with an English (660 Hz) and a French (880 Hz) audio track, served over loopback.
enum TwoLanguageStream: String, CaseIterable, Sendable {
    case hlsMaster, dashTemplate, dashOnDemand

    /// Serves it; returns the manifest URL and the path fragment only the French track's requests contain.
    func serve(on server: LoopbackServer) throws -> (url: URL, frenchPath: String) {
        switch self {
        case .hlsMaster:
            return (try StreamLayouts.serve(.hlsVariants, on: server), "/fra/")
        case .dashTemplate:
            try StreamLayouts.serveDirectory(
                try AudioFixtures.dashTwoLanguages(onDemand: false), on: server, prefix: "/d")
            return (server.url("/d/manifest.mpd"), "stream2")
        case .dashOnDemand:
            try StreamLayouts.serveDirectory(
                try AudioFixtures.dashTwoLanguages(onDemand: true), on: server, prefix: "/o")
            return (server.url("/o/manifest.mpd"), "stream2")
        }
    }
}

/// Plays from `start` to the end with a WAV output, on a test clock; returns the WAV, the tracks listed and the errors.
private func play(
    _ configuration: PlayerConfiguration, from start: Double,
    during: ((VirtualPlayer) async throws -> Void)? = nil
) async throws -> (track: AudioAnalysis.Track, tracks: [AudioTrack], errors: [PlayerError]) {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let wav = try WAVFileOutput(url: directory.url.appendingPathComponent("played.wav"))
    let virtual = VirtualPlayer()
    let player = virtual.player
    let recorder = PlayerRecorder()
    recorder.observe(player, frames: false)
    player.attach(audio: wav)
    let listed = Mutex<[[AudioTrack]]>([])
    player.onAudioTracks = { tracks in listed.withLock { $0.append(tracks) } }
    player.load(config: configuration)
    player.seek(start)
    #expect(await virtual.run { player.state == .paused })
    player.play()
    try await during?(virtual)
    #expect(await virtual.run { player.state == .ended }, "\(recorder.states) \(recorder.errors)")
    let tracks = player.audioTracks
    player.stop()
    wav.close()
    #expect(listed.withLock { $0.first } != nil)
    return (try AudioAnalysis.readWAV(wav.url), tracks, recorder.errors)
}

private func frequency(_ track: AudioAnalysis.Track, from: Double = 0, to: Double = .infinity) -> Double {
    let rate = Double(track.sampleRate)
    let samples = Array(
        track.samples[Int(from * rate)..<min(track.samples.count, Int(min(to, track.duration) * rate))])
    return AudioAnalysis.dominantFrequency(samples, sampleRate: track.sampleRate)
}

@Suite("Audio renditions: HLS EXT-X-MEDIA groups and DASH audio AdaptationSets")
struct AudioRenditionTests {
    @Test(
        "the default track plays unless a preferred language picks another; only its segments are fetched",
        arguments: TwoLanguageStream.allCases)
    func chooseByLanguage(stream: TwoLanguageStream) async throws {
        for preferred in [nil, "fr"] as [String?] {
            let server = try LoopbackServer()
            defer { server.stop() }
            let (url, frenchPath) = try stream.serve(on: server)
            var configuration = PlayerConfiguration(with: url)
            configuration.preferredAudioLanguage = preferred
            configuration.cmcd = CmcdConfiguration(mode: .headers)
            let played = try await play(configuration, from: 6)
            let wanted = preferred == nil ? AudioFixtures.english : AudioFixtures.french
            #expect(abs(frequency(played.track) - wanted) < 3, "\(stream) \(preferred ?? "default")")
            #expect(abs(played.track.duration - 4) < 0.15, "\(played.track.duration) s")
            let levels = AudioAnalysis.levels(played.track.samples, sampleRate: 48_000, window: 0.05).dropLast()
            #expect(levels.allSatisfy { $0 > 0.05 }, "a gap: \(levels.map { ($0 * 100).rounded() })")
            #expect(played.tracks.map(\.language) == ["eng", "fra"])
            #expect(played.tracks.map(\.isSelected) == [preferred == nil, preferred != nil])
            #expect(played.errors.isEmpty, "\(played.errors)")
            // Bytes are a budget: the other language is never fetched; audio requests say so in CMCD.
            let french = server.requests.filter { $0.path.contains(frenchPath) }
            #expect(preferred == nil ? french.isEmpty : !french.isEmpty, "\(french.map(\.path))")
            let audioRequests = server.requests.filter { $0.headers["cmcd-object"]?.contains("ot=a") == true }
            #expect(!audioRequests.isEmpty)
        }
    }

    @Test(
        "switching the track while playing: English, then French from the playhead on; the event reports it")
    func switchWhilePlaying() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _) = try TwoLanguageStream.hlsMaster.serve(on: server)
        let played = try await play(PlayerConfiguration(with: url), from: 4) { virtual in
            let player = virtual.player
            #expect(await virtual.run { player.currentTime >= 6.5 })
            let french = try #require(player.audioTracks.first { $0.language == "fra" })
            player.selectAudioTrack(french)
        }
        #expect(played.tracks.first { $0.isSelected }?.language == "fra")
        // The first two seconds are English, the last two French (the switch lands within a fraction of a second).
        #expect(abs(frequency(played.track, from: 0.2, to: 2.2) - AudioFixtures.english) < 3)
        #expect(abs(frequency(played.track, from: 3.3) - AudioFixtures.french) < 3)
        #expect(abs(played.track.duration - 6) < 0.2)
    }

    @Test(
        "a switch to a track whose playlist fails at first: a warning, then that track plays once it can be listed")
    func switchToFailingTrack() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _) = try TwoLanguageStream.hlsMaster.serve(on: server)
        var configuration = PlayerConfiguration(with: url)
        configuration.streaming.segmentRetries = 0
        let played = try await play(configuration, from: 0) { virtual in
            let player = virtual.player
            #expect(await virtual.run { player.currentTime >= 2.5 })
            server.fail("/hlsVariants/fra/index.m3u8", with: [.status(503)])
            player.selectAudioTrack(try #require(player.audioTracks.first { $0.language == "fra" }))
        }
        #expect(played.errors.map(\.type) == [.audioUnavailable], "\(played.errors)")
        #expect(server.requestCount("/hlsVariants/fra/index.m3u8") == 2, "\(server.requests.map(\.path))")
        // The lane lists the track again 2 s after the failure and fetches from the switch's position: French from
        // then on (the switch's restart waited for the listing instead of being lost with it).
        #expect(abs(frequency(played.track, from: 5.5, to: 9.5) - AudioFixtures.french) < 3)
    }

    @Test(
        "a missing audio segment is retried, then skipped with a warning: silence for its span, never a stall")
    func missingAudioSegment() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _) = try TwoLanguageStream.hlsMaster.serve(on: server)
        server.remove("/hlsVariants/eng/seg_003.ts")
        var configuration = PlayerConfiguration(with: url)
        configuration.streaming.segmentRetries = 1
        let played = try await play(configuration, from: 4)
        let skipped = played.errors.filter { $0.type == .segmentSkipped }
        #expect(skipped.count == 1 && skipped.allSatisfy { $0.severity == .warning }, "\(played.errors)")
        #expect(server.requestCount("/hlsVariants/eng/seg_003.ts") == 2)
        // 6 s played: tone, about 2 s of silence where segment 3 (6.0-8.0) was, tone.
        #expect(abs(played.track.duration - 6) < 0.2)
        let levels = AudioAnalysis.levels(played.track.samples, sampleRate: 48_000, window: 0.1)
        let quiet = levels.filter { $0 < 0.01 }.count
        #expect(quiet >= 17 && quiet <= 22, "\(quiet) quiet windows of 0.1 s")
        #expect(abs(frequency(played.track, from: 0, to: 1.8) - AudioFixtures.english) < 3)
    }

    @Test(
        "an audio playlist that cannot be had: one audio_unavailable warning, the video plays to the end at once")
    func missingAudioPlaylist() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _) = try TwoLanguageStream.hlsMaster.serve(on: server)
        server.remove("/hlsVariants/eng/index.m3u8")
        var configuration = PlayerConfiguration(with: url)
        configuration.streaming.segmentRetries = 1
        let times = Mutex<(play: Double?, end: Double?)>((nil, nil))
        let played = try await play(configuration, from: 7) { virtual in
            times.withLock { $0.play = virtual.now }
            await virtual.run { virtual.player.state == .ended }
            times.withLock { $0.end = virtual.now }
        }
        #expect(played.errors.map(\.type) == [.audioUnavailable], "\(played.errors)")
        // 3 s of the clock from play() to the end: no wait for audio that will not come (the start would otherwise
        // wait 8 s).
        let (play, end) = times.withLock { $0 }
        let elapsed = try #require(end) - (try #require(play))
        #expect(elapsed >= 2.9 && elapsed < 3.5, "\(elapsed)")
        #expect(abs(played.track.duration - 3) < 0.35 && played.track.samples.allSatisfy { $0 == 0 })
    }
}

@Suite("Seeks back to back")
struct BackToBackSeekTests {
    @Test(
        "two seeks at once (a click's press and release), over and over, while paused: each lands, none fails the stream",
        arguments: [TwoLanguageStream.hlsMaster, .dashTemplate, .dashOnDemand])
    func doubleSeeks(_ stream: TwoLanguageStream) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (url, _) = try stream.serve(on: server)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let wav = try WAVFileOutput(url: directory.url.appendingPathComponent("played.wav"))
        let (virtual, player, recorder) = observedVirtualPlayer()
        player.attach(audio: wav)
        player.load(config: PlayerConfiguration(with: url))
        player.open(autoplay: false)
        #expect(await virtual.run { player.state == .paused })
        for step in 0..<24 {
            let target = Double((step * 7) % 9) + 0.5
            player.seek(target)
            // The release comes a moment after the press, while the engine thread carries out the first seek: a real
            // pause (0 to 14 ms), as the race is between threads, not on the player's clock.
            try await Task.sleep(nanoseconds: UInt64(step % 8) * 2_000_000)
            player.seek(target)
            let landed = await virtual.run {
                player.state.kind == .error || (player.state == .paused && abs(player.currentTime - target) < 0.1)
            }
            #expect(
                landed && player.state == .paused,
                "\(player.state) at \(player.currentTime) for \(target): \(recorder.errors)")
            guard player.state == .paused else { break }
        }
        player.stop()
        #expect(recorder.errors.filter { $0.severity == .fatal }.isEmpty, "\(recorder.errors)")
    }
}
