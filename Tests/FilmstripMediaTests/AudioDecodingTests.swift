import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("Audio decoding with the video (libswresample)")
struct AudioDecodingTests {
    @Test("a file's audio comes with its frames: 48 kHz stereo float, on the video's timeline, the tone's frequency")
    func decodesBesideVideo() throws {
        let decoder = try VideoDecoder(url: try AudioFixtures.toneCounter(), audio: .standard)
        #expect(decoder.hasAudio && decoder.audioProblem == nil)
        var buffers: [AudioBuffer] = []
        var frames = 0
        while try decoder.nextFrame() != nil {
            frames += 1
            buffers += decoder.takeAudio()
        }
        buffers += decoder.takeAudio()
        #expect(frames == 250)
        let first = try #require(buffers.first)
        #expect(first.format == .standard && abs(first.time) < 0.03, "first audio at \(first.time)")
        // Contiguous, and as long as the video.
        for (a, b) in zip(buffers, buffers.dropFirst()) { #expect(abs(a.end - b.time) < 0.001) }
        let total = buffers.reduce(0) { $0 + $1.duration }
        #expect(abs(total - 10) < 0.05, "\(total) s of audio")
        let left = buffers.flatMap { buffer in
            stride(from: 0, to: buffer.samples.count, by: 2).map { buffer.samples[$0] }
        }
        #expect(abs(AudioAnalysis.dominantFrequency(left, sampleRate: 48_000) - AudioFixtures.english) < 3)
    }

    @Test("other formats: mono at 22,050 Hz; without the option no audio is decoded; a seek restarts the audio")
    func formatsAndSeek() throws {
        let url = try AudioFixtures.toneCounter()
        let mono = try VideoDecoder(url: url, audio: AudioFormat(sampleRate: 22_050, channels: 1))
        try mono.seek(to: 5)
        _ = try mono.nextFrame()
        let audio = mono.takeAudio()
        let first = try #require(audio.first)
        #expect(first.format.channels == 1 && first.format.sampleRate == 22_050)
        // From the keyframe at or before the target (4 s here: a keyframe every 2 s).
        #expect(first.time >= 3.9 && first.time <= 5.01, "\(first.time)")
        let silent = try VideoDecoder(url: url)
        _ = try silent.nextFrame()
        #expect(!silent.hasAudio && silent.takeAudio().isEmpty)
    }

    @Test("audio FFmpeg cannot decode: the video decodes, the problem is named")
    func undecodable() throws {
        let decoder = try VideoDecoder(url: try AudioFixtures.undecodableAudio(), audio: .standard)
        #expect(!decoder.hasAudio)
        #expect(decoder.audioProblem?.kind == .unsupportedCodec, "\(String(describing: decoder.audioProblem))")
        #expect(try decoder.nextFrame() != nil)
    }
}
