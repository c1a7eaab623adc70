import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

/// What an audio-only playback produced: the WAV written (or nil without an output), the last statistics, the
/// errors, the states and the frames shown.
private struct Played {
    var track: AudioAnalysis.Track?
    var stats: PlayerStats
    var errors: [PlayerError]
    var states: [PlayerState.Kind]
    var framesShown: Int
}

/// Plays `url` from `start` to its end (with a WAV output unless `output` is false), at `rate`.
private func play(
    _ configuration: PlayerConfiguration, from start: Double = 0, rate: Double = 1, output: Bool = true,
    seconds: Double = 6
) async throws -> Played {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let wav = try WAVFileOutput(url: directory.url.appendingPathComponent("played.wav"))
    let virtual = VirtualPlayer()
    let player = virtual.player
    let recorder = PlayerRecorder()
    recorder.observe(player)
    if output { player.attach(audio: wav) }
    player.load(config: configuration)
    if start > 0 {
        player.seek(start)
        #expect(await virtual.run { player.state == .paused })
    }
    if rate != 1 { player.playbackRate = rate }
    player.play()
    #expect(await virtual.run { player.state == .ended }, "\(recorder.states)")
    let stats = try #require(player.getStats())
    player.stop()
    wav.close()
    return Played(
        track: output ? try AudioAnalysis.readWAV(wav.url) : nil, stats: stats, errors: recorder.errors,
        states: recorder.states, framesShown: recorder.frames.count)
}

// One stream at a time: seven playbacks and their reference decodes at once would starve the real-time suites
// running beside them.
@Suite("Audio-only streams: HLS and DASH without video play their sound", .serialized)
struct AudioOnlyPlaybackTests {
    @Test(
        "each packaging plays to its end, sample for sample what the ffmpeg CLI decodes, with no frame decoded",
        arguments: AudioFixtures.AudioOnlyLayout.allCases)
    func playsLikeTheReference(layout: AudioFixtures.AudioOnlyLayout) async throws {
        let directory = try AudioFixtures.audioOnly(layout)
        let server = try LoopbackServer()
        defer { server.stop() }
        try StreamLayouts.serveDirectory(directory, on: server, prefix: "/a")
        var configuration = PlayerConfiguration(with: server.url("/a/" + layout.manifest))
        configuration.cmcd = CmcdConfiguration(mode: .headers)
        // A short forward buffer: the later segments are fetched while playing, after the content is known audio
        // (otherwise a fast fetch may have every segment before the first is decoded).
        configuration.maxPrebufferTime = 2
        let played = try await play(configuration)
        let track = try #require(played.track)
        let reference = try AudioFixtures.referenceDecode(of: directory.appendingPathComponent(layout.manifest))
        let match = AudioAnalysis.match(track.samples, reference: reference.samples, at: 96_000)
        // The ffmpeg CLI keeps the AAC encoder's priming (1,024 samples) that a DASH stream's edit list trims.
        #expect(abs(match.lag) <= (layout == .dash ? 1_024 : 0), "\(layout): \(match.lag) samples off")
        #expect(match.snr > 60, "\(layout): \(match.snr) dB against the reference")
        #expect(abs(track.duration - reference.duration) < 0.05, "\(track.duration) s, reference \(reference.duration)")
        #expect(played.stats.audioOnly && played.stats.decodedFrames == 0 && played.stats.presentedFrames == 0)
        #expect(played.framesShown == 0)
        #expect(abs(played.stats.position - played.stats.duration) < 0.05 && played.stats.duration > 5.9)
        #expect(played.stats.audioSilence == 0)
        #expect(played.errors.isEmpty, "\(played.errors)")
        #expect(played.states.prefix { $0 != .stopping }.suffix(2) == [.playing, .ended], "\(played.states)")
        // CMCD names the media requests audio (`ot=a`). An HLS media playlist of TS or fragmented MP4 segments
        // announces no codecs: its content is found audio by decoding the first segment, and the requests from then
        // on say so.
        let media = server.requests.filter { request in
            [".ts", ".aac", ".mp3", ".m4s"].contains { request.path.hasSuffix($0) } && !request.path.contains("init")
        }
        let audio = media.map { $0.headers["cmcd-object"]?.contains("ot=a") == true }
        let announced = [.hlsPackedAAC, .hlsPackedMP3, .dash].contains(layout)
        #expect(media.count >= 3 && audio.last == true, "\(media.map(\.path)) \(audio)")
        #expect(announced ? !audio.contains(false) : !audio.drop { !$0 }.contains(false), "\(audio)")
    }

    @Test(
        "a seek lands on its second of sound; no output attached still plays to the end by the audio")
    func seekAndNoOutput() async throws {
        let directory = try AudioFixtures.audioOnly(.hlsTS)
        let server = try LoopbackServer()
        defer { server.stop() }
        try StreamLayouts.serveDirectory(directory, on: server, prefix: "/a")
        let url = server.url("/a/index.m3u8")
        let played = try await play(PlayerConfiguration(with: url), from: 3.5)
        let track = try #require(played.track)
        let reference = try AudioFixtures.referenceDecode(of: directory.appendingPathComponent("index.m3u8"))
        // What was heard first is the reference from 3.5 s on.
        let tail = Array(reference.samples[168_000...])
        let match = AudioAnalysis.match(track.samples, reference: tail, at: 24_000)
        #expect(abs(match.lag) <= 2, "\(match.lag) samples from 3.5 s")
        #expect(match.snr > 60, "\(match.snr) dB")
        #expect(abs(track.duration - 2.5) < 0.05, "\(track.duration) s")

        let silent = try await play(PlayerConfiguration(with: url), output: false)
        #expect(silent.stats.audioOnly && abs(silent.stats.position - silent.stats.duration) < 0.05)
        #expect(silent.errors.isEmpty, "\(silent.errors)")
    }

    @Test(
        "an HLS master of audio-only variants plays them; a master with video never plays its audio-only variant")
    func masters() async throws {
        let directory = try AudioFixtures.audioOnlyMaster()
        let server = try LoopbackServer()
        defer { server.stop() }
        try StreamLayouts.serveDirectory(directory, on: server, prefix: "/m")
        var configuration = PlayerConfiguration(with: server.url("/m/audio-master.m3u8"))
        configuration.streaming.startRendition = 1
        let audioOnly = try await play(configuration)
        #expect(audioOnly.stats.audioOnly && audioOnly.stats.bitrate == 128 * 1100)
        #expect(abs((audioOnly.track?.duration ?? 0) - 6) < 0.05)
        #expect(audioOnly.errors.isEmpty, "\(audioOnly.errors)")

        let before = server.requests.count
        let mixed = try await play(PlayerConfiguration(with: server.url("/m/mixed-master.m3u8")), from: 8)
        #expect(!mixed.stats.audioOnly && mixed.stats.decodedFrames > 0 && mixed.framesShown > 0)
        let audioVariant = server.requests.dropFirst(before).filter { $0.path.contains("/64k/") }
        #expect(audioVariant.isEmpty, "\(audioVariant.map(\.path))")
    }

    @Test(
        "DASH audio-only in two languages: the preferred one plays",
        arguments: [nil, "fr"] as [String?])
    func languages(preferred: String?) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        try StreamLayouts.serveDirectory(try AudioFixtures.dashAudioOnlyTwoLanguages(), on: server, prefix: "/d")
        var configuration = PlayerConfiguration(with: server.url("/d/manifest.mpd"))
        configuration.preferredAudioLanguage = preferred
        let played = try await play(configuration, from: 3)
        let track = try #require(played.track)
        let frequency = AudioAnalysis.dominantFrequency(track.samples, sampleRate: track.sampleRate)
        let wanted = preferred == nil ? AudioFixtures.english : AudioFixtures.french
        #expect(abs(frequency - wanted) < 3, "\(frequency) Hz")
        // Bytes are a budget: the other language's segments are never fetched.
        let other = preferred == nil ? "stream1" : "stream0"
        #expect(!server.requests.contains { $0.path.contains("chunk-\(other)") })
    }

    @Test(
        "rates: 1.5 plays every sample in two thirds of the time, 8 plays muted, a reverse rate is clamped to 0")
    func rates() async throws {
        let directory = try AudioFixtures.audioOnly(.hlsPackedAAC)
        let server = try LoopbackServer()
        defer { server.stop() }
        try StreamLayouts.serveDirectory(directory, on: server, prefix: "/a")
        let configuration = PlayerConfiguration(with: server.url("/a/index.m3u8"))
        let faster = try await play(configuration, rate: 1.5)
        #expect(abs((faster.track?.duration ?? 0) - 4) < 0.1, "\(faster.track?.duration ?? 0) s at 1.5x")
        #expect(faster.stats.audioSilence == 0)

        let fast = try await play(configuration, rate: 8)
        #expect(fast.stats.audioOnly && !fast.stats.keyframesOnly && fast.stats.audioMuted)
        #expect(abs(fast.stats.audioSilence - fast.stats.audioPlayed) < 0.01 && fast.stats.audioPlayed > 0.5)

        let virtual = VirtualPlayer()

        let player = virtual.player
        let recorder = PlayerRecorder()
        recorder.observe(player, frames: false)
        player.load(config: configuration)
        player.play()
        #expect(await virtual.run { player.state == .playing && player.currentTime > 1 })
        player.playbackRate = -1
        #expect(await virtual.run { recorder.errors.contains { $0.type == .playbackRateClamped } })
        #expect(player.playbackRate == 0)
        let position = player.currentTime
        await virtual.run(for: .milliseconds(300))
        #expect(abs(player.currentTime - position) < 0.05)
        player.stop()
    }
}

/// Files without video, as users have them on disk: each codec in its usual container.
@Suite(
    "Audio-only files: MP3, AAC, FLAC, Opus, Vorbis, AC-3, WAV, MPEG audio in TS and PS play their sound", .serialized)
struct AudioOnlyFileTests {
    struct File: Sendable, CustomTestStringConvertible {
        var name: String
        var codec: [String]
        var testDescription: String { name }
    }

    static let files: [File] = [
        File(name: "song.mp3", codec: ["-c:a", "libmp3lame", "-b:a", "192k"]),
        File(name: "song.m4a", codec: ["-c:a", "aac"]),
        File(name: "song.flac", codec: ["-c:a", "flac"]),
        File(name: "song.opus", codec: ["-c:a", "libopus"]),
        File(name: "song.ogg", codec: ["-c:a", "libvorbis"]),
        File(name: "song.ac3", codec: ["-c:a", "ac3"]),
        File(name: "song.wav", codec: ["-c:a", "pcm_s16le"]),
        File(name: "song-mp2.ts", codec: ["-c:a", "mp2", "-f", "mpegts"]),
        File(name: "song-mp2.mpg", codec: ["-c:a", "mp2", "-f", "mpeg"]),
        File(name: "song-with-cover.mp3", codec: ["-c:a", "libmp3lame"]),
    ]

    /// 4 s of a 440 Hz tone, then 2 s of 880 Hz (a seek lands in a known part), in `file`'s codec and container;
    /// the cover version carries a PNG picture (one colour, 0x3080C0) as MP3s from music stores do.
    static func make(_ file: File) throws -> URL {
        let tone = "sine=frequency=440:sample_rate=48000:duration=4"
        let high = "sine=frequency=880:sample_rate=48000:duration=2"
        var inputs = ["-f", "lavfi", "-i", tone, "-f", "lavfi", "-i", high]
        var maps = ["-filter_complex", "[0][1]concat=n=2:v=0:a=1[a]", "-map", "[a]"]
        if file.name.contains("cover") {
            inputs += ["-f", "lavfi", "-i", "color=c=0x3080C0:s=64x64:d=1", "-frames:v", "1"]
            maps += ["-map", "2:v", "-c:v", "png", "-disposition:v", "attached_pic"]
        }
        return try MediaFixtures.make("audio-files/" + file.name, inputs + maps + file.codec)
    }

    @Test(
        "plays to its end with its sound, as the ffmpeg CLI decodes it, with one still picture",
        arguments: files)
    func plays(_ file: File) async throws {
        let url = try Self.make(file)
        let played = try await play(PlayerConfiguration(with: url))
        let track = try #require(played.track)
        let reference = try AudioFixtures.referenceDecode(of: url)
        #expect(abs(track.duration - reference.duration) < 0.1, "\(track.duration) s, reference \(reference.duration)")
        // Sample for sample what the ffmpeg CLI decodes (the same decoders), with no shift: the middle three
        // quarters, across the change of tone (Vorbis switches block sizes there, and Ogg's stamps wander).
        let count = min(track.samples.count, reference.samples.count)
        let middle = (count / 8)..<(count * 7 / 8)
        let signal = middle.reduce(0.0) { $0 + Double(reference.samples[$1] * reference.samples[$1]) }
        let noise = middle.reduce(0.0) { sum, i in
            let d = Double(track.samples[i] - reference.samples[i])
            return sum + d * d
        }
        let snr = 10 * log10(signal / max(noise, 1e-12))
        #expect(snr > 60, "\(file.name): \(snr) dB against the ffmpeg CLI's decode")
        // The tone where it is: 440 Hz in the first part, 880 Hz after 4 s.
        for (range, expected) in [(48_000..<144_000, 440.0), (216_000..<264_000, 880.0)] {
            guard track.samples.count >= range.upperBound else { continue }
            let heard = AudioAnalysis.dominantFrequency(Array(track.samples[range]), sampleRate: 48_000)
            #expect(abs(heard - expected) < 10, "\(file.name): \(heard) Hz where \(expected) Hz plays")
        }
        // No frame presented; the one picture handed to the video output is the card (checked in `card`).
        #expect(played.stats.audioOnly && played.stats.presentedFrames == 0 && played.framesShown == 1)
        #expect(abs(played.stats.duration - 6) < 0.1, "\(played.stats.duration)")
        #expect(played.errors.isEmpty, "\(played.errors)")
        #expect(played.states.prefix { $0 != .stopping }.suffix(2) == [.playing, .ended], "\(played.states)")
    }

    @Test("the video output shows the file's cover picture, else a plain card, once at load")
    func card() async throws {
        for (file, expected) in [(Self.files[9], (48.0, 128.0, 192.0)), (Self.files[0], (34.0, 38.0, 46.0))] {
            let output = StillRecorder()
            let virtual = VirtualPlayer()
            let player = virtual.player
            player.attach(to: output)
            player.load(config: PlayerConfiguration(with: try Self.make(file)))
            #expect(await virtual.run { !output.pictures.isEmpty && player.state != .opening })
            let pictures = output.pictures
            player.stop()
            let picture = try #require(pictures.first, "\(file.name): no picture")
            #expect(pictures.count == 1, "\(file.name): \(pictures.count) pictures")
            // The cover's colour fills the card; the placeholder's dark ground is at its top left.
            let (r, g, b) =
                file.name.contains("cover")
                ? picture.image.meanColor(
                    x: picture.image.width / 4, y: picture.image.height / 4, width: picture.image.width / 2,
                    height: picture.image.height / 2)
                : picture.image.meanColor(x: 0, y: 0, width: 4, height: 4)
            #expect(
                abs(r - expected.0) < 6 && abs(g - expected.1) < 6 && abs(b - expected.2) < 6,
                "\(file.name): \(r), \(g), \(b)")
            #expect(picture.time == 0)
            if !file.name.contains("cover") {
                #expect(picture.image.size == PixelSize(width: 960, height: 540), "\(picture.image.size)")
            }
        }
    }

    @Test(
        "a seek into the file plays from there: 880 Hz after 4.5 s")
    func seeks() async throws {
        let url = try Self.make(Self.files[1])
        let played = try await play(PlayerConfiguration(with: url), from: 4.5)
        let track = try #require(played.track)
        #expect(abs(track.duration - 1.5) < 0.15, "\(track.duration) s heard after the seek")
        let middle = Array(track.samples[track.samples.count / 4..<track.samples.count * 3 / 4])
        let frequency = AudioAnalysis.dominantFrequency(middle, sampleRate: 48_000)
        #expect(abs(frequency - 880) < 10, "\(frequency) Hz")
        #expect(played.errors.isEmpty, "\(played.errors)")
    }

    @Test(
        "with no audio output the file still plays to its end on the clock")
    func playsWithoutOutput() async throws {
        let url = try Self.make(Self.files[0])
        let played = try await play(PlayerConfiguration(with: url), rate: 2, output: false)
        #expect(played.stats.audioOnly && abs(played.stats.position - played.stats.duration) < 0.1)
        #expect(played.errors.isEmpty, "\(played.errors)")
    }
}

/// Keeps every picture a player hands over.
private final class StillRecorder: VideoOutput, @unchecked Sendable {
    private let kept = Mutex<[(image: PixelBuffer, time: Double)]>([])
    var pictures: [(image: PixelBuffer, time: Double)] { kept.withLock { $0 } }
    func display(_ image: PixelBuffer, at time: Double) { kept.withLock { $0.append((image, time)) } }
}
