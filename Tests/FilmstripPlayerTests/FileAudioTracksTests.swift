import Filmstrip
import FilmstripTesting
import Foundation
import Testing

/// A film with two audio languages in one file (the commonest case on disk): the player lists them as audio tracks
/// and switches between them as it does between a stream's renditions.
@Suite("Several audio streams in one file: listed, chosen by language, switched", .serialized)
struct FileAudioTracksTests {
    /// 6 s of the counter video with two audio streams: English at 440 Hz, French at 880 Hz.
    static func twoLanguages(_ container: String) throws -> URL {
        try MediaFixtures.make(
            "two-languages." + container,
            [
                "-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=6", "-f", "lavfi", "-i",
                "sine=frequency=440:sample_rate=48000:duration=6", "-f", "lavfi", "-i",
                "sine=frequency=880:sample_rate=48000:duration=6", "-map", "0:v", "-map", "1:a", "-map", "2:a",
                "-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-c:a", "aac", "-metadata:s:a:0", "language=eng",
                "-metadata:s:a:1", "language=fra",
            ])
    }

    /// The dominant frequency of the played audio between `from` and `to` seconds.
    static func frequency(_ track: AudioAnalysis.Track, from: Double, to: Double) -> Double {
        let lo = Int(from * 48_000)
        let hi = min(track.samples.count, Int(to * 48_000))
        guard hi > lo + 4_800 else { return 0 }
        return AudioAnalysis.dominantFrequency(Array(track.samples[lo..<hi]), sampleRate: 48_000)
    }

    @Test(
        "the tracks are listed with their languages; `fr` is chosen first; a switch is heard from the playhead",
        arguments: ["mkv", "mp4"])
    func switches(container: String) async throws {
        let url = try Self.twoLanguages(container)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let wav = try WAVFileOutput(url: directory.url.appendingPathComponent("played.wav"))
        let virtual = VirtualPlayer()
        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player, frames: false)
        player.attach(audio: wav)
        var configuration = PlayerConfiguration(with: url)
        configuration.preferredAudioLanguage = "fr"
        player.load(config: configuration)
        player.open(autoplay: false)
        #expect(await virtual.run { player.state == .paused })
        let tracks = player.audioTracks
        #expect(tracks.map(\.language) == ["eng", "fra"], "\(tracks)")
        #expect(tracks.map(\.isSelected) == [false, true], "\(tracks)")
        player.play()
        #expect(await virtual.run { player.currentTime >= 2 })
        let switchedAt = player.currentTime
        player.selectAudioTrack(tracks[0])
        #expect(await virtual.run { player.audioTracks.first?.isSelected == true })
        #expect(await virtual.run { player.state == .ended }, "\(recorder.states)")
        player.stop()
        wav.close()
        let played = try AudioAnalysis.readWAV(wav.url)
        // French (880 Hz) before the switch, English (440 Hz) from a little after it to the end.
        let before = Self.frequency(played, from: 0.3, to: max(0.5, switchedAt - 0.3))
        let after = Self.frequency(played, from: switchedAt + 0.8, to: played.duration - 0.2)
        #expect(abs(before - 880) < 15, "\(before) Hz before the switch at \(switchedAt) s")
        #expect(abs(after - 440) < 15, "\(after) Hz after the switch at \(switchedAt) s")
        #expect(abs(played.duration - 6) < 0.6, "\(played.duration) s played")
        #expect(recorder.errors.isEmpty, "\(recorder.errors)")
    }

    @Test("a file of one audio stream lists no tracks")
    func oneStream() async throws {
        let virtual = VirtualPlayer()
        let player = virtual.player
        player.load(config: PlayerConfiguration(with: try MediaFixtures.counter()))
        player.open(autoplay: false)
        #expect(await virtual.run { player.state == .paused })
        #expect(player.audioTracks.isEmpty)
        player.stop()
    }
}
