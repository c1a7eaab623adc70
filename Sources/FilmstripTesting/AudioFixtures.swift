public import Foundation

/// Test media with sound, made with the `ffmpeg` CLI at test time and cached like ``MediaFixtures``: counter videos
/// with a sine tone (its frequency tells which track plays), streams with muxed audio, and a clip whose flashes and
/// beeps coincide.
public enum AudioFixtures {
    /// The English tone (Hz).
    public static let english = 660.0
    /// The French tone (Hz).
    public static let french = 880.0

    /// The 10 s counter video (see ``MediaFixtures/counter()``) with a 660 Hz stereo AAC tone, MP4.
    public static func toneCounter() throws -> URL {
        try MediaFixtures.make(
            "audio/tone-counter.mp4",
            ["-f", "lavfi", "-i", MediaFixtures.counterSource, "-f", "lavfi", "-i", Self.sine(english, seconds: 10)]
                + MediaFixtures.h264 + [
                    "-c:a", "aac", "-b:a", "96k", "-ac", "2", "-shortest", "-movflags", "+faststart",
                ])
    }

    /// 6 s, 160x120 at 25 fps: black, with one white frame at each whole second from 1 to 5; the audio is silent but
    /// for a 40 ms 1 kHz beep starting at the same instants (48 kHz AAC, stereo).
    public static func flashesAndBeeps() throws -> URL {
        let flash = "lt(mod(t\\,1)\\,0.04)*gte(t\\,1)"
        return try MediaFixtures.make(
            "audio/flash-beep.mp4",
            [
                "-f", "lavfi", "-i",
                "color=c=black:s=160x120:r=25:d=6,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='\(flash)'",
                "-f", "lavfi", "-i", "aevalsrc='if(\(flash)\\,0.8*sin(2*PI*1000*t)\\,0)':s=48000:d=6",
            ] + MediaFixtures.h264 + ["-c:a", "aac", "-b:a", "128k", "-ac", "2", "-movflags", "+faststart"])
    }

    /// ``toneCounter()`` with its audio sample entry renamed to a codec nobody decodes (`mp4a` -> `xa4a`, and the
    /// `esds` object type 0x40 -> 0xFF, "none"): the video plays, the audio cannot.
    public static func undecodableAudio() throws -> URL {
        let source = try toneCounter()
        let target = try MediaFixtures.directory(for: "audio/undecodable.mp4").appendingPathComponent(
            "undecodable-esds-" + source.deletingPathExtension().lastPathComponent + ".mp4")
        if FileManager.default.fileExists(atPath: target.path) { return target }
        var data = try Data(contentsOf: source)
        guard let range = data.range(of: Data("mp4a".utf8)) else { throw FixtureError("no mp4a sample entry") }
        data.replaceSubrange(range, with: Data("xa4a".utf8))
        // The DecoderConfigDescriptor (tag 4, a four-byte length as ffmpeg writes it), then the object type.
        guard let esds = data.range(of: Data("esds".utf8), in: range.upperBound..<data.endIndex),
            let config = data.range(of: Data([4, 0x80, 0x80, 0x80]), in: esds.upperBound..<data.endIndex)
        else { throw FixtureError("no esds decoder configuration") }
        data[config.upperBound + 1] = 0xFF
        try data.write(to: target, options: .atomic)
        return target
    }

    /// ``toneCounter()`` as HLS with audio and video muxed in each segment: fMP4 (`fmp4/index.m3u8`) or one TS file
    /// with byte ranges (`single/index.m3u8`). Returns the directory.
    public static func muxedHLS(fmp4: Bool) throws -> URL {
        let source = try toneCounter()
        let name = fmp4 ? "audio/hls-fmp4" : "audio/hls-single-ts"
        let options =
            fmp4
            ? ["-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4"]
            : ["-hls_flags", "single_file"]
        let arguments =
            ["-i", source.path, "-c", "copy", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod"] + options
            + ["index.m3u8"]
        return try MediaFixtures.makeDirectory(name, recipe: [(source.lastPathComponent, arguments)]) { directory in
            try MediaFixtures.run(["-hide_banner", "-loglevel", "error", "-y"] + arguments, in: directory)
        }
    }

    /// The 10 s counter video with two audio AdaptationSets, English (660 Hz, Role main) and French (880 Hz), as DASH
    /// written by the `ffmpeg` CLI: `SegmentTemplate` segments, or on demand (one file per representation with a
    /// global `sidx`, `SegmentBase@indexRange`). Returns the directory (`manifest.mpd`).
    public static func dashTwoLanguages(onDemand: Bool) throws -> URL {
        let video = try MediaFixtures.counter()
        let name = onDemand ? "audio/dash-ondemand" : "audio/dash-template"
        let layout =
            onDemand
            ? ["-single_file", "1", "-global_sidx", "1", "-use_template", "0", "-use_timeline", "0"]
            : ["-use_template", "1", "-use_timeline", "1"]
        let arguments =
            [
                "-i", video.path, "-f", "lavfi", "-i", sine(english, seconds: 10), "-f", "lavfi", "-i",
                sine(french, seconds: 10), "-map", "0:v", "-map", "1:a", "-map", "2:a", "-c:v", "copy", "-c:a", "aac",
                "-b:a", "96k", "-ac", "2", "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra",
                "-adaptation_sets", "id=0,streams=0 id=1,streams=1 id=2,streams=2", "-seg_duration", "2", "-f",
                "dash",
            ] + layout + ["manifest.mpd"]
        return try MediaFixtures.makeDirectory(name, recipe: [(video.lastPathComponent, arguments)]) { directory in
            try MediaFixtures.run(["-hide_banner", "-loglevel", "error", "-y"] + arguments, in: directory)
        }
    }

    /// Two chirps (left 200 Hz rising, right 300 Hz rising), 48 kHz: no stretch of it repeats, so a played copy
    /// aligns with a reference decode at one lag only.
    public static func chirp(seconds: Double) -> String {
        "aevalsrc=0.3*sin(2*PI*(200*t+40*t*t))|0.3*sin(2*PI*(300*t+25*t*t)):s=48000:d=\(Int(seconds))"
    }

    /// How an audio-only stream is packaged (``audioOnly(_:)``).
    public enum AudioOnlyLayout: String, CaseIterable, Sendable {
        /// HLS, AAC in MPEG-TS segments.
        case hlsTS
        /// HLS packed audio: raw AAC (ADTS) segments.
        case hlsPackedAAC
        /// HLS packed audio: raw MP3 segments (no Xing header or ID3 tag in each, as packagers write them).
        case hlsPackedMP3
        /// HLS, AAC in fragmented MP4.
        case hlsFMP4
        /// HLS, AC-3 in MPEG-TS segments.
        case hlsAC3
        /// HLS, E-AC-3 in fragmented MP4.
        case hlsEAC3
        /// DASH, AAC with `SegmentTemplate` and a `SegmentTimeline`.
        case dash

        /// The playlist or MPD in the directory.
        public var manifest: String { self == .dash ? "manifest.mpd" : "index.m3u8" }
    }

    /// A 6 s audio-only stream of ``chirp(seconds:)`` in 2 s segments, written by the `ffmpeg` CLI (its `hls`,
    /// `segment` and `dash` muxers). Returns the directory; the manifest is ``AudioOnlyLayout/manifest``.
    public static func audioOnly(_ layout: AudioOnlyLayout) throws -> URL {
        let input = ["-f", "lavfi", "-i", chirp(seconds: 6)]
        let hls = ["-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod"]
        let packed = [
            "-f", "segment", "-segment_time", "2", "-segment_list", "index.m3u8", "-segment_list_type", "m3u8",
        ]
        let arguments: [String]
        switch layout {
        case .hlsTS:
            arguments =
                input + ["-c:a", "aac", "-b:a", "128k"] + hls + ["-hls_segment_filename", "a%d.ts", "index.m3u8"]
        case .hlsPackedAAC:
            arguments = input + ["-c:a", "aac", "-b:a", "128k"] + packed + ["-segment_format", "adts", "a%d.aac"]
        case .hlsPackedMP3:
            arguments =
                input + ["-c:a", "libmp3lame", "-b:a", "128k"] + packed
                + ["-segment_format", "mp3", "-segment_format_options", "write_xing=0:id3v2_version=0", "a%d.mp3"]
        case .hlsFMP4:
            arguments =
                input + ["-c:a", "aac", "-b:a", "128k"] + hls
                + ["-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4", "index.m3u8"]
        case .hlsAC3:
            arguments =
                input + ["-c:a", "ac3", "-b:a", "192k"] + hls + ["-hls_segment_filename", "a%d.ts", "index.m3u8"]
        case .hlsEAC3:
            arguments =
                input + ["-c:a", "eac3", "-b:a", "192k"] + hls
                + ["-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4", "index.m3u8"]
        case .dash:
            arguments =
                input + ["-c:a", "aac", "-b:a", "128k", "-f", "dash", "-seg_duration", "2", "-use_template", "1"]
                + ["-use_timeline", "1", "manifest.mpd"]
        }
        return try MediaFixtures.makeDirectory("audio/only-\(layout.rawValue)", recipe: [("", arguments)]) {
            directory in
            try MediaFixtures.run(["-hide_banner", "-loglevel", "error", "-y"] + arguments, in: directory)
        }
    }

    /// An HLS master of audio-only variants (AAC in TS, 64 and 128 kb/s, `CODECS="mp4a.40.2"`, no `RESOLUTION`),
    /// `audio-master.m3u8`; with `video`, the master also lists ``muxedHLS(fmp4:)``'s video with audio first, as
    /// masters that offer an audio-only variant for poor networks do (`mixed-master.m3u8`). Returns the directory.
    public static func audioOnlyMaster() throws -> URL {
        let muxed = try muxedHLS(fmp4: false)
        let bitrates = [64, 128]
        let recipe = bitrates.map { rate in
            (
                "\(rate)k",
                ["-f", "lavfi", "-i", chirp(seconds: 6), "-c:a", "aac", "-b:a", "\(rate)k"]
                    + ["-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "\(rate)k/index.m3u8"]
            )
        }
        return try MediaFixtures.makeDirectory("audio/only-master", recipe: recipe + [(muxed.path, [])]) { directory in
            for (name, arguments) in recipe {
                try FileManager.default.createDirectory(
                    at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
                try MediaFixtures.run(["-hide_banner", "-loglevel", "error", "-y"] + arguments, in: directory)
            }
            try FileManager.default.copyItem(at: muxed, to: directory.appendingPathComponent("video"))
            let variants = bitrates.map { rate in
                "#EXT-X-STREAM-INF:BANDWIDTH=\(rate * 1100),CODECS=\"mp4a.40.2\"\n\(rate)k/index.m3u8\n"
            }
            try ("#EXTM3U\n" + variants.joined()).write(
                to: directory.appendingPathComponent("audio-master.m3u8"), atomically: true, encoding: .utf8)
            let mixed =
                "#EXTM3U\n" + variants[0]
                + "#EXT-X-STREAM-INF:BANDWIDTH=900000,RESOLUTION=320x240,CODECS=\"avc1.64000d,mp4a.40.2\"\n"
                + "video/index.m3u8\n"
            try mixed.write(
                to: directory.appendingPathComponent("mixed-master.m3u8"), atomically: true, encoding: .utf8)
        }
    }

    /// DASH with two audio AdaptationSets and no video: English (660 Hz, the first) and French (880 Hz), 6 s,
    /// `SegmentTemplate`. Returns the directory (`manifest.mpd`).
    public static func dashAudioOnlyTwoLanguages() throws -> URL {
        let arguments = [
            "-f", "lavfi", "-i", sine(english, seconds: 6), "-f", "lavfi", "-i", sine(french, seconds: 6), "-map",
            "0:a",
            "-map", "1:a", "-c:a", "aac", "-b:a", "96k", "-ac", "2", "-metadata:s:a:0", "language=eng",
            "-metadata:s:a:1", "language=fra", "-adaptation_sets", "id=0,streams=0 id=1,streams=1", "-seg_duration",
            "2", "-use_template", "1", "-use_timeline", "1", "-f", "dash", "manifest.mpd",
        ]
        return try MediaFixtures.makeDirectory("audio/only-dash-languages", recipe: [("", arguments)]) { directory in
            try MediaFixtures.run(["-hide_banner", "-loglevel", "error", "-y"] + arguments, in: directory)
        }
    }

    /// The ffmpeg CLI's decode of `url` (a file, playlist or MPD) as 48 kHz stereo: the reference a player's output
    /// is compared with.
    public static func referenceDecode(of url: URL) throws -> AudioAnalysis.Track {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let wav = directory.url.appendingPathComponent("reference.wav")
        try MediaFixtures.run([
            "-hide_banner", "-loglevel", "error", "-y", "-i", url.path, "-ar", "48000", "-ac", "2", "-c:a", "pcm_s16le",
            wav.path,
        ])
        return try AudioAnalysis.readWAV(wav)
    }

    static func sine(_ frequency: Double, seconds: Double) -> String {
        "sine=frequency=\(Int(frequency)):sample_rate=48000:duration=\(Int(seconds))"
    }
}
