import FilmstripMedia
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

/// Every codec and container the package handles, written by the `ffmpeg` CLI's encoders and muxers and read back
/// through the FFmpeg that Filmstrip links: the guard that its build (its own static one, or the system's) leaves
/// nothing out.
@Suite("Codec matrix: every video and audio codec in its usual containers")
struct CodecMatrixTests {
    /// A 2 s counter video (frame numbers in the colour; 25 fps, a keyframe at least every second).
    private static func counter(
        _ name: String, _ codec: [String], size: String = "320x240", pixelFormat: String = "yuv420p"
    ) throws -> URL {
        try MediaFixtures.make(
            name,
            [
                "-f", "lavfi", "-i",
                "nullsrc=s=\(size):r=25:d=2,format=rgb24,geq=r='20+mod(N,6)*40':g='20+mod(floor(N/6),6)*40':b='20+mod(floor(N/36),7)*33'",
                "-pix_fmt", pixelFormat, "-g", "25",
            ] + codec)
    }

    struct Video: Sendable, CustomTestStringConvertible {
        var name: String
        var codec: [String]
        var pixelFormat = "yuv420p"
        var testDescription: String { name }
    }

    static let videoCases: [Video] = [
        Video(name: "h264.mp4", codec: ["-c:v", "libx264", "-preset", "veryfast", "-bf", "2"]),
        Video(
            name: "h264-10bit.mkv", codec: ["-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high10"],
            pixelFormat: "yuv420p10le"),
        Video(
            name: "h264-interlaced.ts",
            codec: ["-c:v", "libx264", "-preset", "veryfast", "-flags", "+ildct+ilme", "-x264opts", "tff=1"]),
        Video(
            name: "hevc.mp4",
            codec: ["-c:v", "libx265", "-preset", "ultrafast", "-tag:v", "hvc1", "-x265-params", "log-level=error"]),
        Video(
            name: "hevc-10bit.mkv",
            codec: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error"],
            pixelFormat: "yuv420p10le"),
        Video(name: "vp8.webm", codec: ["-c:v", "libvpx", "-b:v", "1M", "-deadline", "realtime", "-cpu-used", "8"]),
        Video(
            name: "vp9.webm", codec: ["-c:v", "libvpx-vp9", "-b:v", "1M", "-deadline", "realtime", "-cpu-used", "8"]),
        Video(name: "av1.mkv", codec: ["-c:v", "libaom-av1", "-cpu-used", "8", "-crf", "30", "-b:v", "0"]),
        Video(name: "mpeg2.mpg", codec: ["-c:v", "mpeg2video", "-q:v", "2"]),
        Video(name: "mpeg2.ts", codec: ["-c:v", "mpeg2video", "-q:v", "2"]),
        Video(name: "mpeg4.avi", codec: ["-c:v", "mpeg4", "-q:v", "2"]),
        Video(name: "prores.mov", codec: ["-c:v", "prores_ks", "-profile:v", "2"], pixelFormat: "yuv422p10le"),
        Video(name: "mjpeg.avi", codec: ["-c:v", "mjpeg", "-q:v", "2"], pixelFormat: "yuvj420p"),
        Video(name: "theora.ogv", codec: ["-c:v", "libtheora", "-q:v", "8"]),
        Video(name: "flv1.flv", codec: ["-c:v", "flv", "-q:v", "2"]),
    ]

    @Test("the exact frame at 1.4 s, and the keyframe at or before it at its own time", arguments: videoCases)
    func video(_ video: Video) async throws {
        let url = try Self.counter(video.name, video.codec, pixelFormat: video.pixelFormat)
        let exact = try await FrameExtractor(url: url, options: .exact).image(at: 1.4)
        #expect(frameNumber(exact.image) == 35, "\(video.name): \(exact.actualTime)")
        #expect(exact.image.width == 320 && exact.image.height == 240)
        // The keyframe at or before 1.4 s (all-intra codecs: the frame itself), its picture at its time.
        let keyframe = try await FrameExtractor(url: url).image(at: 1.4)
        let shown = try #require(frameNumber(keyframe.image), "\(video.name)")
        #expect(keyframe.isKeyframe && shown <= 35, "\(video.name): frame \(shown)")
        #expect(abs(keyframe.actualTime - Double(shown) / 25) < 0.001, "\(video.name): frame \(shown)")
    }

    struct Audio: Sendable, CustomTestStringConvertible {
        var name: String
        var codec: [String]
        var testDescription: String { name }
    }

    static let audioCases: [Audio] = [
        Audio(name: "aac.m4a", codec: ["-c:a", "aac", "-movflags", "+faststart"]),
        Audio(name: "aac-adts.aac", codec: ["-c:a", "aac"]),
        Audio(name: "mp3.mp3", codec: ["-c:a", "libmp3lame"]),
        Audio(name: "ac3.ac3", codec: ["-c:a", "ac3"]),
        Audio(name: "eac3.ec3", codec: ["-c:a", "eac3", "-f", "eac3"]),
        Audio(name: "opus.ogg", codec: ["-c:a", "libopus"]),
        Audio(name: "vorbis.ogg", codec: ["-c:a", "libvorbis"]),
        Audio(name: "flac.flac", codec: ["-c:a", "flac"]),
        Audio(name: "alac.m4a", codec: ["-c:a", "alac", "-movflags", "+faststart"]),
        Audio(name: "pcm.wav", codec: ["-c:a", "pcm_s16le"]),
        Audio(name: "aac.ts", codec: ["-c:a", "aac", "-f", "mpegts"]),
        Audio(name: "mp3.mkv", codec: ["-c:a", "libmp3lame"]),
    ]

    @Test("2 s of a 660 Hz tone, decoded as such", arguments: audioCases)
    func audio(_ audio: Audio) throws {
        let url = try MediaFixtures.make(
            audio.name, ["-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=2"] + audio.codec)
        let bytes = [UInt8](try Data(contentsOf: url))
        let offset = Mutex(0)
        let decoder = try AudioStreamDecoder(label: url, format: AudioFormat(sampleRate: 48_000, channels: 1)) {
            buffer in
            offset.withLock { at in
                let count = min(buffer.count, bytes.count - at)
                bytes[at..<(at + count)].withUnsafeBytes { buffer.copyMemory(from: $0) }
                at += count
                return count
            }
        }
        var samples: [Float] = []
        while let buffers = try decoder.nextBuffers() { for buffer in buffers { samples += buffer.samples } }
        let seconds = Double(samples.count) / 48_000
        #expect(abs(seconds - 2) < 0.1, "\(audio.name): \(seconds) s")
        let middle = Array(samples[samples.count / 4..<samples.count * 3 / 4])
        let frequency = AudioAnalysis.dominantFrequency(middle, sampleRate: 48_000)
        #expect(abs(frequency - 660) < 10, "\(audio.name): \(frequency) Hz")
    }
}
