import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripPlayer

/// What one audio playback produced: the WAV written, the last statistics and the errors.
private struct Played {
    var track: AudioAnalysis.Track
    var stats: PlayerStats
    var errors: [PlayerError]
    /// Media seconds played, and the rate they were played at.
    var media: Double
    var rate: Double

    var frequency: Double { AudioAnalysis.dominantFrequency(track.samples, sampleRate: track.sampleRate) }

    /// The loudness of each 50 ms window, except the last (playback ends within a step of it).
    var levels: [Double] {
        Array(AudioAnalysis.levels(track.samples, sampleRate: track.sampleRate, window: 0.05).dropLast())
    }
}

/// Plays `url` from `start` to its end at `rate` with a WAV output, and reads the WAV.
private func playToEnd(
    _ url: URL, from start: Double = 0, rate: Double = 1, muted: Bool = false, volume: Double = 1,
    duration: Double = 10
) async throws -> Played {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let wav = try WAVFileOutput(url: directory.url.appendingPathComponent("played.wav"))
    let (virtual, player, recorder) = observedVirtualPlayer()
    player.attach(audio: wav)
    player.playbackRate = rate
    if muted { player.isMuted = true }
    player.volume = volume
    player.load(config: PlayerConfiguration(with: url))
    if start > 0 {
        player.seek(start)
        #expect(await virtual.run { player.state == .paused || player.state == .ready })
    }
    player.play()
    #expect(await virtual.run { player.state == .ended }, "\(recorder.states)")
    let stats = try #require(player.getStats())
    player.stop()
    wav.close()
    return Played(
        track: try AudioAnalysis.readWAV(wav.url), stats: stats, errors: recorder.errors, media: duration - start,
        rate: rate)
}

@Suite("Audio playback: PCM to an output, rates, sync")
struct AudioPlaybackTests {
    @Test("a file's tone is written as played: its length, its frequency, no gaps; stats count it")
    func fileAtRateOne() async throws {
        let played = try await playToEnd(try AudioFixtures.toneCounter(), from: 6)
        #expect(abs(played.track.duration - 4) < 0.12, "\(played.track.duration) s written for 4 s played")
        #expect(abs(played.frequency - AudioFixtures.english) < 3, "\(played.frequency) Hz")
        #expect(played.levels.allSatisfy { $0 > 0.05 }, "a quiet window: \(played.levels.map { ($0 * 100).rounded() })")
        #expect(abs(played.stats.audioPlayed - played.track.duration) < 0.01)
        #expect(played.stats.audioSilence == 0)
        #expect(played.errors.isEmpty, "\(played.errors)")
    }

    @Test("rate 1.5 keeps the pitch: the same frequency, two thirds of the length")
    func fasterKeepsPitch() async throws {
        let played = try await playToEnd(try AudioFixtures.toneCounter(), from: 4, rate: 1.5)
        #expect(abs(played.track.duration - 4) < 0.15, "\(played.track.duration) s for 6 media s at 1.5x")
        #expect(abs(played.frequency - AudioFixtures.english) < 3, "\(played.frequency) Hz")
        #expect(played.stats.audioSilence == 0)
    }

    @Test("rate 0.5 keeps the pitch too: twice the length")
    func slowerKeepsPitch() async throws {
        let played = try await playToEnd(try AudioFixtures.toneCounter(), from: 8, rate: 0.5)
        // Playback ends with the last frame, a frame's time (twice as long at 0.5x) before the media's end.
        #expect(abs(played.track.duration - 4) < 0.24, "\(played.track.duration) s for 2 media s at 0.5x")
        #expect(abs(played.frequency - AudioFixtures.english) < 3, "\(played.frequency) Hz")
    }

    @Test(
        "rate 4 is muted: silence as long as the time played, counted as silence")
    func fastIsSilent() async throws {
        let played = try await playToEnd(try AudioFixtures.toneCounter(), rate: 4)
        #expect(abs(played.track.duration - 2.5) < 0.1, "\(played.track.duration) s for 10 media s at 4x")
        #expect(played.track.samples.allSatisfy { $0 == 0 })
        #expect(abs(played.stats.audioSilence - played.stats.audioPlayed) < 0.001 && played.stats.audioPlayed > 2.4)
        #expect(played.stats.audioMuted)
    }

    @Test("muted: silence of the right length")
    func mutedIsSilent() async throws {
        let played = try await playToEnd(try AudioFixtures.toneCounter(), from: 8, muted: true)
        #expect(abs(played.track.duration - 2) < 0.1)
        #expect(played.track.samples.allSatisfy { $0 == 0 })
    }

    @Test("volume 0.3 scales every sample: the same tone at 0.3 of the level; volume is clamped to 0...1")
    func volumeScales() async throws {
        let full = try await playToEnd(try AudioFixtures.toneCounter(), from: 8)
        let quiet = try await playToEnd(try AudioFixtures.toneCounter(), from: 8, volume: 0.3)
        let ratio = quiet.levels.reduce(0, +) / max(1e-9, full.levels.reduce(0, +))
        #expect(abs(ratio - 0.3) < 0.02, "level ratio \(ratio)")
        #expect(abs(quiet.frequency - AudioFixtures.english) < 3, "\(quiet.frequency) Hz")
        let virtual = VirtualPlayer()
        let player = virtual.player
        player.volume = 7
        #expect(player.volume == 1)
        player.volume = -1
        #expect(player.volume == 0)
    }

    @Test(
        "HLS with muxed audio over loopback (fMP4 fragments, single-file TS byte ranges): the tone, whole",
        arguments: [true, false])
    func muxedHLS(fmp4: Bool) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        try StreamLayouts.serveDirectory(try AudioFixtures.muxedHLS(fmp4: fmp4), on: server, prefix: "/a")
        let played = try await playToEnd(server.url("/a/index.m3u8"), from: 6)
        #expect(abs(played.track.duration - 4) < 0.12, "\(played.track.duration) s")
        #expect(abs(played.frequency - AudioFixtures.english) < 3, "\(played.frequency) Hz")
        #expect(played.levels.allSatisfy { $0 > 0.05 }, "a gap: \(played.levels.map { ($0 * 100).rounded() })")
    }

    @Test(
        "audio FFmpeg cannot decode: the video plays with an audio_unavailable warning; the output gets silence")
    func undecodableAudio() async throws {
        let played = try await playToEnd(try AudioFixtures.undecodableAudio(), from: 8)
        #expect(played.errors.map(\.type) == [.audioUnavailable], "\(played.errors)")
        // The video's 2 s play through (50 frames): shown, or dropped as late on a loaded machine.
        #expect(played.stats.presentedFrames > 10, "\(played.stats)")
        #expect(played.stats.presentedFrames + played.stats.droppedFrames > 45, "\(played.stats)")
        #expect(abs(played.track.duration - 2) < 0.35)
        #expect(played.track.samples.allSatisfy { $0 == 0 })
    }
}

/// A simulated audio device that plays what it is given, in order, at `deviceSpeed` (1: as fast as the player's
/// clock runs), and records when (on that clock) flashes are shown and beeps are heard.
private final class SyncRecorder: VideoOutput, AudioOutput, @unchecked Sendable {
    let format = AudioFormat.standard
    private let lock = NSLock()
    private let clock: VirtualPlayer
    private var flashes: [Double] = []
    private var beeps: [Double] = []
    /// When the device has played everything it was given, and when it last heard a loud sample.
    private var freeAt = 0.0
    private var lastLoud = -1.0
    let deviceSpeed: Double
    /// The device keeps 100 ms queued.
    let preferredLead = 0.1

    init(deviceSpeed: Double = 1, on clock: VirtualPlayer) {
        self.deviceSpeed = deviceSpeed
        self.clock = clock
    }

    private var now: Double { clock.now }

    func display(_ image: PixelBuffer, at time: Double) {
        let (r, g, b) = image.meanColor(x: 0, y: 0, width: image.width, height: image.height)
        guard (r + g + b) / 3 > 128 else { return }
        let at = now
        lock.withLock { flashes.append(at) }
    }

    /// Seconds of audio given and not yet played.
    var latency: Double {
        let at = now
        return lock.withLock { max(0, freeAt - at) * deviceSpeed }
    }

    func play(_ buffer: AudioBuffer) {
        let at = now
        lock.withLock {
            let begins = max(at, freeAt)
            let step = 1 / (Double(buffer.format.sampleRate) * deviceSpeed)
            let channels = buffer.format.channels
            for frame in 0..<buffer.frameCount where abs(buffer.samples[frame * channels]) > 0.3 {
                let heard = begins + Double(frame) * step
                if heard - lastLoud > 0.2 { beeps.append(heard) }
                lastLoud = heard
            }
            freeAt = begins + Double(buffer.frameCount) * step
        }
    }

    var onsets: (flashes: [Double], beeps: [Double]) { lock.withLock { (flashes, beeps) } }
}

@Suite("Audio master clock")
struct AudioSyncTests {
    @Test("flashes and beeps that coincide in the media are shown and heard within one frame of each other")
    func flashesMeetBeeps() async throws {
        let virtual = VirtualPlayer()
        let recorder = SyncRecorder(on: virtual)
        let player = virtual.player
        player.attach(to: recorder)
        player.attach(audio: recorder)
        player.open(config: PlayerConfiguration(with: try AudioFixtures.flashesAndBeeps()))
        #expect(await virtual.run { player.state == .ended })
        let stats = try #require(player.getStats())
        player.stop()
        let (flashes, beeps) = recorder.onsets
        #expect(flashes.count == 5 && beeps.count == 5, "flashes \(flashes), beeps \(beeps)")
        // In sync: the typical flash is within one frame (0.04 s) of its beep. Each one is within the lateness the
        // player tolerates before it drops a frame (a loaded machine may run the display thread that late; a
        // frame later than that is dropped, never shown), so an offset the player itself makes (an uncompensated
        // device lead of 0.1 s, say) fails both.
        let offsets = zip(flashes, beeps).map { abs($0 - $1) }
        #expect(
            (offsets.sorted().dropFirst(offsets.count / 2).first ?? 1) <= 0.04, "flashes \(flashes), beeps \(beeps)")
        for (flash, beep) in zip(flashes, beeps) {
            #expect(abs(flash - beep) <= PlaybackMachine.lateness + 0.01, "flash at \(flash) s, beep at \(beep) s")
        }
        // Any frame is shown within the lateness the machine tolerates before it drops one (a loaded machine can
        // present a frame that late); the flashes above are the sync measure.
        #expect(abs(try #require(stats.maxAVDrift)) <= PlaybackMachine.lateness + 0.01, "\(stats)")
    }

    @Test("content without audio runs on the system clock, not on the silence a slow device plays")
    func videoOnlyIgnoresTheDevice() async throws {
        // At half speed, the 2 s of silence that keep the device's time would take 4 s.
        let virtual = VirtualPlayer()
        let recorder = SyncRecorder(deviceSpeed: 0.5, on: virtual)
        let player = virtual.player
        player.attach(to: recorder)
        player.attach(audio: recorder)
        let started = virtual.now
        player.open(config: PlayerConfiguration(with: try MediaFixtures.shortCounter()))
        #expect(await virtual.run { player.state == .ended })
        let elapsed = virtual.now - started
        player.stop()
        #expect(abs(elapsed - 2) < 0.1, "2 s of video took \(elapsed) s of the clock")
        #expect(player.getStats()?.avDrift == nil)
    }

    @Test("an output that plays slower than the clock holds the audio back, and the picture follows the sound")
    func pictureFollowsSlowDevice() async throws {
        let virtual = VirtualPlayer()
        let recorder = SyncRecorder(deviceSpeed: 0.8, on: virtual)
        let player = virtual.player
        player.attach(to: recorder)
        player.attach(audio: recorder)
        player.open(config: PlayerConfiguration(with: try AudioFixtures.flashesAndBeeps()))
        #expect(await virtual.run { player.state == .ended })
        player.stop()
        let (flashes, beeps) = recorder.onsets
        #expect(flashes.count == 5 && beeps.count == 5, "flashes \(flashes), beeps \(beeps)")
        for (flash, beep) in zip(flashes, beeps) {
            #expect(abs(flash - beep) <= 0.06, "flash at \(flash) s, beep at \(beep) s")
        }
        // Four media seconds between the first and last flash take 5 s on a device at 0.8x.
        let span = try #require(flashes.last) - (try #require(flashes.first))
        #expect(abs(span - 5) < 0.3, "flashes \(span) s apart")
    }
}
