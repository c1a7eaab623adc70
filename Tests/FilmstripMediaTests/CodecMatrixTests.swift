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
        /// The coded size, for codecs that take only some (H.261, H.263, DV).
        var size = "320x240"
        /// The size shown (sample aspect ratio applied), when not the coded size.
        var shown: (Int, Int)? = nil
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
        // Phones, cameras, screen recorders and the desktop formats of the last 25 years.
        Video(name: "h263.3gp", codec: ["-c:v", "h263", "-q:v", "2"], size: "176x144", shown: (192, 144)),
        Video(name: "h263p.mov", codec: ["-c:v", "h263p", "-q:v", "2"]),
        Video(name: "h261.avi", codec: ["-c:v", "h261", "-q:v", "2"], size: "352x288"),
        Video(name: "mpeg4.3gp", codec: ["-c:v", "mpeg4", "-q:v", "2"], size: "176x144"),
        Video(name: "mpeg1.mpg", codec: ["-c:v", "mpeg1video", "-q:v", "2"]),
        Video(name: "msmpeg4v3.avi", codec: ["-c:v", "msmpeg4", "-q:v", "2"]),
        Video(name: "msmpeg4v2.avi", codec: ["-c:v", "msmpeg4v2", "-q:v", "2"]),
        Video(name: "wmv1.asf", codec: ["-c:v", "wmv1", "-q:v", "2"]),
        Video(name: "wmv2.wmv", codec: ["-c:v", "wmv2", "-q:v", "2"]),
        Video(name: "dv.dv", codec: ["-c:v", "dvvideo"], size: "720x576", shown: (768, 576)),
        Video(name: "mpeg2.mxf", codec: ["-c:v", "mpeg2video", "-q:v", "2", "-f", "mxf"], size: "720x576"),
        Video(
            name: "dnxhr.mov", codec: ["-c:v", "dnxhd", "-profile:v", "dnxhr_sq"], pixelFormat: "yuv422p"),
        Video(name: "ffv1.mkv", codec: ["-c:v", "ffv1"]),
        Video(name: "svq1.mov", codec: ["-c:v", "svq1"], pixelFormat: "yuv410p"),
        Video(name: "cinepak.avi", codec: ["-c:v", "cinepak"], pixelFormat: "rgb24"),
        Video(name: "qtrle.mov", codec: ["-c:v", "qtrle"], pixelFormat: "rgb24"),
        Video(name: "huffyuv.avi", codec: ["-c:v", "huffyuv"], pixelFormat: "yuv422p"),
        Video(name: "utvideo.avi", codec: ["-c:v", "utvideo"]),
        Video(name: "jpeg2000.mov", codec: ["-c:v", "jpeg2000"]),
        Video(name: "rawvideo.nut", codec: ["-c:v", "rawvideo"]),
        Video(name: "msvideo1.avi", codec: ["-c:v", "msvideo1"], pixelFormat: "rgb555le"),
        Video(name: "flashsv.flv", codec: ["-c:v", "flashsv"], pixelFormat: "bgr24"),
        Video(name: "zmbv.avi", codec: ["-c:v", "zmbv"], pixelFormat: "bgr24"),
        Video(name: "h264.flv", codec: ["-c:v", "libx264", "-preset", "veryfast"]),
    ]

    @Test("the exact frame at 1.4 s, and the keyframe at or before it at its own time", arguments: videoCases)
    func video(_ video: Video) async throws {
        let url = try Self.counter(video.name, video.codec, size: video.size, pixelFormat: video.pixelFormat)
        let exact = try await FrameExtractor(url: url, options: .exact).image(at: 1.4)
        #expect(frameNumber(exact.image) == 35, "\(video.name): \(exact.actualTime)")
        let sides = video.size.split(separator: "x").compactMap { Int($0) }
        let (width, height) = video.shown ?? (sides[0], sides[1])
        #expect(exact.image.width == width && exact.image.height == height, "\(video.name)")
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
        Audio(name: "mp2.mpg", codec: ["-c:a", "mp2", "-f", "mpeg"]),
        Audio(name: "wmav2.wma", codec: ["-c:a", "wmav2", "-b:a", "128k"]),
        Audio(name: "wmav1.asf", codec: ["-c:a", "wmav1", "-b:a", "128k"]),
        Audio(name: "dts.dts", codec: ["-c:a", "dca", "-strict", "-2"]),
        Audio(name: "truehd.mka", codec: ["-c:a", "truehd", "-strict", "-2"]),
        Audio(name: "adpcm_ms.wav", codec: ["-c:a", "adpcm_ms"]),
        Audio(name: "adpcm_ima.wav", codec: ["-c:a", "adpcm_ima_wav"]),
        Audio(name: "nellymoser.flv", codec: ["-c:a", "nellymoser", "-ar", "44100"]),
        Audio(name: "wavpack.wv", codec: ["-c:a", "wavpack"]),
        Audio(name: "pcm_s24be.aiff", codec: ["-c:a", "pcm_s24be"]),
        Audio(name: "pcm_s16be.au", codec: ["-c:a", "pcm_s16be"]),
        Audio(name: "alac.caf", codec: ["-c:a", "alac"]),
        Audio(name: "pcm.w64", codec: ["-c:a", "pcm_s16le"]),
        Audio(name: "s302m.ts", codec: ["-c:a", "s302m", "-strict", "-2", "-ac", "2", "-f", "mpegts"]),
        Audio(name: "gsm.wav", codec: ["-c:a", "libgsm_ms", "-ar", "8000"]),
        Audio(name: "g722.wav", codec: ["-c:a", "g722", "-ar", "16000"]),
    ]

    @Test("2 s of a 660 Hz tone, decoded as such", arguments: audioCases)
    func audio(_ audio: Audio) throws {
        let url = try MediaFixtures.make(
            audio.name, ["-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=2"] + audio.codec)
        // Through the file decoder a player and the audio-only paths use (WavPack, TTA and CAF need to seek).
        let decoder = try AudioFileDecoder(url: url, format: AudioFormat(sampleRate: 48_000, channels: 1))
        var samples: [Float] = []
        while let buffers = try decoder.nextBuffers() { for buffer in buffers { samples += buffer.samples } }
        let seconds = Double(samples.count) / 48_000
        #expect(abs(seconds - 2) < 0.1, "\(audio.name): \(seconds) s")
        let middle = Array(samples[samples.count / 4..<samples.count * 3 / 4])
        let frequency = AudioAnalysis.dominantFrequency(middle, sampleRate: 48_000)
        #expect(abs(frequency - 660) < 10, "\(audio.name): \(frequency) Hz")
    }
}

/// The FFmpeg build's coverage as a list: every decoder, parser and demuxer real files need (Scripts/build-ffmpeg.sh
/// enables each; a name dropped there fails here, whether or not a test above makes such a file).
@Suite("FFmpeg coverage: the decoders, parsers and demuxers real files need are linked")
struct FFmpegCoverageTests {
    /// Video: phones (H.263, MPEG-4 Part 2, H.264, HEVC), cameras (DV, MJPEG, ProRes, DNxHD, MPEG-2), the web (VP6
    /// in Flash, VP8, VP9, AV1, Theora), Windows (WMV 7-9, VC-1, MS-MPEG-4), QuickTime (SVQ1/3, Cinepak,
    /// Animation), screen recorders (Flash Screen Video, TSCC, ZMBV, Fraps) and archives (FFV1, Huffyuv, Ut Video,
    /// JPEG 2000, RealVideo, Indeo).
    static let videoDecoders = [
        "h261", "h263", "h263i", "h263p", "flv", "mpeg1video", "mpeg2video", "mpeg4", "msmpeg4v1", "msmpeg4v2",
        "msmpeg4", "h264", "hevc", "vp6", "vp6a", "vp6f", "vp8", "vp9", "libdav1d", "theora", "vp3", "wmv1", "wmv2",
        "wmv3", "vc1", "mjpeg", "mjpegb", "dvvideo", "prores", "dnxhd", "ffv1", "huffyuv", "ffvhuff", "utvideo",
        "jpeg2000", "rawvideo", "svq1", "svq3", "cinepak", "qtrle", "msvideo1", "flashsv", "flashsv2", "camtasia",
        "tscc2",
        "fraps", "zmbv", "rv10", "rv20", "rv30", "rv40", "indeo3", "indeo4", "indeo5",
    ]
    static let audioDecoders = [
        "aac", "aac_latm", "mp1", "mp2", "mp3", "ac3", "eac3", "dca", "truehd", "mlp", "opus", "vorbis", "flac", "alac",
        "wavpack", "ape", "tta", "wmav1", "wmav2", "wmapro", "wmalossless", "amrnb", "amrwb", "pcm_s16le",
        "pcm_s16be", "pcm_s24le", "pcm_s24be", "pcm_f32le", "pcm_alaw", "pcm_mulaw", "pcm_dvd", "pcm_bluray", "s302m",
        "adpcm_ima_wav", "adpcm_ima_qt", "adpcm_ms", "adpcm_swf", "g722", "g726", "nellymoser", "gsm", "gsm_ms",
        "qdm2", "qdmc", "cook", "real_144", "real_288", "atrac3",
    ]
    /// Cover art and still images.
    static let imageDecoders = ["png", "bmp", "gif", "webp"]
    /// Containers: MP4/MOV/3GP, Matroska/WebM, AVI, FLV, ASF (WMV/WMA), MXF, DV, MPEG-PS/TS, Ogg, RealMedia, GXF,
    /// NUT, the raw elementary streams, and the audio files.
    static let demuxers = [
        "mov", "matroska", "avi", "flv", "asf", "mxf", "dv", "mpeg", "mpegts", "ogg", "rm", "gxf", "nut",
        "yuv4mpegpipe", "h261", "h263", "h264", "hevc", "m4v", "mpegvideo", "vc1", "vc1test", "ivf", "obu", "mjpeg",
        "hls", "wav", "w64", "aiff", "au", "caf", "aac", "mp3", "ac3", "eac3", "dts", "truehd", "mlp", "flac", "wv",
        "ape", "amr", "loas",
    ]
    /// Parsers split raw, MPEG-TS and MPEG-PS streams into frames (named by a decoder of the codec: FFmpeg's names,
    /// so `msmpeg4` is MS-MPEG-4 v3, `camtasia` TSCC, `libdav1d` AV1).
    static let parsed = [
        "h261", "h263", "mpeg4", "mpeg2video", "h264", "hevc", "vc1", "vp8", "vp9", "libdav1d", "mjpeg", "dnxhd",
        "theora",
        "rv30", "rv40", "aac", "aac_latm", "mp3", "ac3", "dca", "mlp", "opus", "vorbis", "flac", "gsm", "cook", "amrnb",
        "amrwb",
    ]

    @Test("every decoder on the list")
    func decoders() {
        let missing = (Self.videoDecoders + Self.audioDecoders + Self.imageDecoders).filter {
            !MediaLibraries.hasDecoder(named: $0)
        }
        #expect(missing.isEmpty, "missing decoders: \(missing)")
    }

    @Test("every demuxer on the list")
    func demuxers() {
        let missing = Self.demuxers.filter { !MediaLibraries.hasDemuxer(named: $0) }
        #expect(missing.isEmpty, "missing demuxers: \(missing)")
    }

    @Test("every parser on the list")
    func parsers() {
        let missing = Self.parsed.filter { !MediaLibraries.hasParser(forDecoder: $0) }
        #expect(missing.isEmpty, "missing parsers: \(missing)")
    }
}
