public import FilmstripFormats
import FilmstripSync
public import Foundation

/// Streams in every layout the `ffmpeg` CLI's HLS and DASH muxers write, made at test time from counter videos (each
/// frame's colour encodes its number, see ``MediaFixtures/frameNumber(r:g:b:)``) and cached like ``MediaFixtures``.
///
/// Source A is ``MediaFixtures/counter()`` (10 s, 320x240, 25 fps, a keyframe every 2 s, B-frames). Source B is
/// 4 s of a 480x360 counter at 30 fps, spliced after A where a layout needs a second encode (a discontinuity, a
/// second period).
public enum StreamLayout: String, CaseIterable, Sendable, CustomStringConvertible {
    /// HLS, MPEG-TS segments.
    case hlsTS
    /// HLS, fMP4 (CMAF) segments with `EXT-X-MAP`.
    case hlsFMP4
    /// HLS, one TS file with `EXT-X-BYTERANGE` (`-hls_flags single_file`).
    case hlsSingleFileTS
    /// HLS, one fMP4 file with byte ranges and a byte-range `EXT-X-MAP`.
    case hlsSingleFileFMP4
    /// HLS, 4 s of A then 4 s of B, spliced with `EXT-X-DISCONTINUITY`.
    case hlsDiscontinuity
    /// HLS master from `-var_stream_map`: A at 320x240 and 160x120, audio in English (660 Hz) and French (880 Hz).
    case hlsVariants
    /// HLS, TS segments encrypted with AES-128 (`-hls_key_info_file`).
    case hlsAES
    /// DASH, `SegmentTemplate` with a `SegmentTimeline` (`-use_timeline 1`).
    case dashTimeline
    /// DASH, `SegmentTemplate` with `$Number$` and `duration` (`-use_timeline 0`).
    case dashNumber
    /// DASH on demand: one fMP4 file with a global `sidx` (`-global_sidx 1`), described by `SegmentBase@indexRange`.
    case dashOnDemand
    /// DASH, one fMP4 file with `SegmentList`/`SegmentURL@mediaRange` (`-single_file 1`).
    case dashSegmentList
    /// DASH, two periods: A (10 s), then B (4 s), each with its own `BaseURL`.
    case dashTwoPeriods
    /// DASH with `BaseURL` at MPD, Period and AdaptationSet level.
    case dashBaseURLs
    /// DASH (`SegmentTimeline`) with a DASH-IF trick-mode AdaptationSet: a keyframe every 2 s, one per segment.
    case dashTrickMode

    /// The manifest's path inside the layout's directory.
    public var manifest: String {
        switch self {
        case .hlsVariants: "master.m3u8"
        case .hlsDiscontinuity: "spliced.m3u8"
        case .hlsTS, .hlsFMP4, .hlsSingleFileTS, .hlsSingleFileFMP4, .hlsAES: "index.m3u8"
        case .dashOnDemand: "ondemand.mpd"
        case .dashTwoPeriods: "periods.mpd"
        case .dashBaseURLs: "baseurls.mpd"
        case .dashTimeline, .dashNumber, .dashSegmentList, .dashTrickMode: "manifest.mpd"
        }
    }

    /// Whether the layout is DASH.
    public var isDASH: Bool { rawValue.hasPrefix("dash") }

    /// The layout's duration in seconds.
    public var duration: Double {
        switch self {
        case .hlsDiscontinuity: 8
        case .dashTwoPeriods: 14
        default: 10
        }
    }

    /// Which source shows at presentation time `t`, and at what time of that source.
    public func source(at t: Double) -> (source: StreamLayouts.Source, time: Double) {
        switch self {
        case .hlsDiscontinuity: t < 4 ? (.a, t) : (.b, t - 4)
        case .dashTwoPeriods: t < 10 ? (.a, t) : (.b, t - 10)
        default: (.a, t)
        }
    }

    public var description: String { rawValue }
}

/// Making and serving ``StreamLayout``s.
public enum StreamLayouts {
    /// The two encodes streams are cut from.
    public enum Source: Sendable {
        /// ``MediaFixtures/counter()``: 10 s, 320x240, 25 fps.
        case a
        /// 4 s, 480x360, 30 fps.
        case b

        /// Frames per second.
        public var frameRate: Double { self == .a ? 25 : 30 }
        /// Width and height.
        public var size: PixelSize {
            self == .a ? PixelSize(width: 320, height: 240) : PixelSize(width: 480, height: 360)
        }
    }

    /// The source video file.
    public static func file(_ source: Source) throws -> URL {
        switch source {
        case .a: return try MediaFixtures.counter()
        case .b:
            return try MediaFixtures.make(
                "counter-b.mp4",
                [
                    "-f", "lavfi", "-i",
                    "nullsrc=s=480x360:r=30:d=4,format=rgb24,geq=r='20+mod(N,6)*40':g='20+mod(floor(N/6),6)*40'"
                        + ":b='20+mod(floor(N/36),7)*33'",
                    "-c:v", "libx264", "-preset", "veryfast", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0",
                    "-bf", "2", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
                ])
        }
    }

    /// The directory of `layout`, made once.
    public static func directory(_ layout: StreamLayout) throws -> URL {
        let a = try file(.a)
        let b = try file(.b)
        return try MediaFixtures.makeDirectory("streams/\(layout.rawValue)", recipe: recipe(layout, a: a, b: b)) {
            staging in try build(layout, in: staging, a: a, b: b)
        }
    }

    /// The local manifest of `layout`.
    public static func manifest(_ layout: StreamLayout) throws -> URL {
        try directory(layout).appendingPathComponent(layout.manifest)
    }

    /// Serves every file of `layout` under `prefix`; returns the manifest's URL.
    @discardableResult
    public static func serve(_ layout: StreamLayout, on server: LoopbackServer, prefix: String? = nil) throws -> URL {
        let prefix = prefix ?? "/\(layout.rawValue)"
        try serveDirectory(try directory(layout), on: server, prefix: prefix)
        return server.url(prefix + "/" + layout.manifest)
    }

    /// Serves every file under `root` at `prefix` + its relative path, with the content type its extension names.
    public static func serveDirectory(_ root: URL, on server: LoopbackServer, prefix: String) throws {
        let root = root.standardizedFileURL
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let file = enumerator?.nextObject() as? URL {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            let relative = String(file.standardizedFileURL.path.dropFirst(root.path.count))
            let type: String
            switch file.pathExtension {
            case "m3u8": type = "application/vnd.apple.mpegurl"
            case "mpd": type = "application/dash+xml"
            case "ts": type = "video/mp2t"
            default: type = "video/mp4"
            }
            server.serve(prefix + relative, body: Array(try Data(contentsOf: file)), contentType: type)
        }
    }

    /// Makes every layout, and the live DASH source (in parallel).
    public static func makeAll() throws {
        let failures = Mutex<[String]>([])
        let makers: [@Sendable () throws -> URL] =
            StreamLayout.allCases.map { layout in { try directory(layout) } } + [SimulatedLiveDASH.makeSource]
        DispatchQueue.concurrentPerform(iterations: makers.count) { i in
            do { _ = try makers[i]() } catch { failures.withLock { $0.append("\(error)") } }
        }
        if let first = failures.withLock({ $0.first }) { throw FixtureError(first) }
    }

    // MARK: Recipes

    private static let quiet = ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]

    private static func hls(_ input: URL, type: String, singleFile: Bool, segment: String) -> [String] {
        [
            "-i", input.path, "-c", "copy", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
            "-hls_segment_type", type,
        ]
            + (singleFile ? ["-hls_flags", "single_file"] : [])
            + (type == "fmp4" && !singleFile ? ["-hls_fmp4_init_filename", "init.mp4"] : [])
            + ["-hls_segment_filename", segment, "index.m3u8"]
    }

    private static func dash(
        _ input: URL, timeline: Bool, template: Bool, singleFile: Bool, globalIndex: Bool = false
    )
        -> [String]
    {
        [
            "-i", input.path, "-c", "copy", "-f", "dash", "-seg_duration", "2",
            "-use_timeline", timeline ? "1" : "0", "-use_template", template ? "1" : "0",
        ]
            + (singleFile ? ["-single_file", "1", "-single_file_name", "stream$RepresentationID$.mp4"] : [])
            + (globalIndex ? ["-global_sidx", "1"] : [])
            + (singleFile
                ? []
                : [
                    "-init_seg_name", "init-$RepresentationID$.m4s",
                    "-media_seg_name", "chunk-$RepresentationID$-$Number%05d$.m4s",
                ])
            + ["manifest.mpd"]
    }

    /// Every ffmpeg run of a layout, as (subdirectory, arguments).
    private static func recipe(_ layout: StreamLayout, a: URL, b: URL) -> [(String, [String])] {
        switch layout {
        case .hlsTS: return [("", hls(a, type: "mpegts", singleFile: false, segment: "seg_%03d.ts"))]
        case .hlsFMP4: return [("", hls(a, type: "fmp4", singleFile: false, segment: "seg_%03d.m4s"))]
        case .hlsSingleFileTS: return [("", hls(a, type: "mpegts", singleFile: true, segment: "all.ts"))]
        case .hlsSingleFileFMP4: return [("", hls(a, type: "fmp4", singleFile: true, segment: "all.mp4"))]
        case .hlsAES:
            return [
                (
                    "",
                    [
                        "-i", a.path, "-c", "copy", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
                        "-hls_key_info_file", "enc.keyinfo", "-hls_segment_filename", "seg_%03d.ts", "index.m3u8",
                    ]
                )
            ]
        case .hlsDiscontinuity:
            return [
                ("a", hls(a, type: "mpegts", singleFile: false, segment: "seg_%03d.ts")),
                ("b", hls(b, type: "mpegts", singleFile: false, segment: "seg_%03d.ts")),
            ]
        case .hlsVariants:
            return [
                (
                    "",
                    [
                        "-i", a.path, "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=10",
                        "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000:duration=10",
                        "-filter_complex", "[0:v]split=2[v1][v2];[v2]scale=160:120[v2s]",
                        "-map", "[v1]", "-map", "[v2s]", "-map", "1:a", "-map", "2:a",
                        "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0",
                        "-bf", "2", "-pix_fmt", "yuv420p", "-b:v:0", "400k", "-b:v:1", "150k",
                        "-c:a", "aac", "-b:a", "64k", "-ac", "2",
                        "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra",
                        "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "-master_pl_name", "master.m3u8",
                        "-var_stream_map",
                        "v:0,agroup:aud,name:v320 v:1,agroup:aud,name:v160 a:0,agroup:aud,language:eng,name:eng,default:yes "
                            + "a:1,agroup:aud,language:fra,name:fra",
                        "-hls_segment_filename", "%v/seg_%03d.ts", "%v/index.m3u8",
                    ]
                )
            ]
        case .dashTimeline: return [("", dash(a, timeline: true, template: true, singleFile: false))]
        case .dashNumber: return [("", dash(a, timeline: false, template: true, singleFile: false))]
        case .dashSegmentList: return [("", dash(a, timeline: false, template: false, singleFile: true))]
        case .dashOnDemand:
            return [("", dash(a, timeline: false, template: false, singleFile: true, globalIndex: true))]
        case .dashTwoPeriods:
            return [
                ("p1", dash(a, timeline: false, template: true, singleFile: false)),
                ("p2", dash(b, timeline: false, template: true, singleFile: false)),
            ]
        case .dashBaseURLs:
            return [("content/period/video", dash(a, timeline: false, template: true, singleFile: false))]
        case .dashTrickMode:
            return [
                ("", dash(a, timeline: true, template: true, singleFile: false)),
                (
                    "",
                    [
                        "-i", a.path, "-vf", "fps=0.5:round=up", "-c:v", "libx264", "-preset", "veryfast", "-g", "1",
                        "-pix_fmt", "yuv420p", "-f", "dash", "-seg_duration", "2", "-use_timeline", "1",
                        "-use_template", "1", "-init_seg_name", "trick-init.m4s",
                        "-media_seg_name", "trick-$Number%05d$.m4s", "trick-source.mpd",
                    ]
                ),
            ]
        }
    }

    private static func build(_ layout: StreamLayout, in staging: URL, a: URL, b: URL) throws {
        if layout == .hlsAES {
            try StreamFixtures.encryptionKey.write(to: staging.appendingPathComponent("enc.key"))
            let info = "enc.key\n\(staging.appendingPathComponent("enc.key").path)\n"
            try Data(info.utf8).write(to: staging.appendingPathComponent("enc.keyinfo"))
        }
        for (subdirectory, arguments) in recipe(layout, a: a, b: b) {
            let directory = subdirectory.isEmpty ? staging : staging.appendingPathComponent(subdirectory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try MediaFixtures.run(quiet + arguments, in: directory)
        }
        switch layout {
        case .hlsAES:
            try FileManager.default.removeItem(at: staging.appendingPathComponent("enc.keyinfo"))
        case .hlsDiscontinuity:
            var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n"
            text += "#EXTINF:2.000000,\na/seg_000.ts\n#EXTINF:2.000000,\na/seg_001.ts\n#EXT-X-DISCONTINUITY\n"
            text += "#EXTINF:2.000000,\nb/seg_000.ts\n#EXTINF:2.000000,\nb/seg_001.ts\n#EXT-X-ENDLIST\n"
            try Data(text.utf8).write(to: staging.appendingPathComponent(layout.manifest))
        case .dashOnDemand:
            try Data(try onDemandMPD(staging).utf8).write(to: staging.appendingPathComponent(layout.manifest))
            try FileManager.default.removeItem(at: staging.appendingPathComponent("manifest.mpd"))
        case .dashTwoPeriods:
            let period = { (id: Int, start: Int, duration: Int, base: String, size: (Int, Int), rate: Int) in
                """
                  <Period id="\(id)" start="PT\(start)S" duration="PT\(duration)S">
                    <BaseURL>\(base)</BaseURL>
                    <AdaptationSet contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">
                      <SegmentTemplate timescale="1000" duration="2000" startNumber="1" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s"/>
                      <Representation id="0" codecs="avc1.64000d" bandwidth="300000" width="\(size.0)" height="\(size.1)" frameRate="\(rate)"/>
                    </AdaptationSet>
                  </Period>

                """
            }
            let text =
                """
                <?xml version="1.0" encoding="utf-8"?>
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" mediaPresentationDuration="PT14S" minBufferTime="PT2S">

                """ + period(1, 0, 10, "p1/", (320, 240), 25) + period(2, 10, 4, "p2/", (480, 360), 30) + "</MPD>\n"
            try Data(text.utf8).write(to: staging.appendingPathComponent(layout.manifest))
        case .dashBaseURLs:
            let text = """
                <?xml version="1.0" encoding="utf-8"?>
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" mediaPresentationDuration="PT10S" minBufferTime="PT2S">
                  <BaseURL>content/</BaseURL>
                  <Period id="1">
                    <BaseURL>period/</BaseURL>
                    <AdaptationSet contentType="video" mimeType="video/mp4">
                      <BaseURL>video/</BaseURL>
                      <SegmentTemplate timescale="1" duration="2" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s"/>
                      <Representation id="0" codecs="avc1.64000d" bandwidth="300000" width="320" height="240"/>
                    </AdaptationSet>
                  </Period>
                </MPD>

                """
            try Data(text.utf8).write(to: staging.appendingPathComponent(layout.manifest))
        case .dashTrickMode:
            // The keyframe encode's AdaptationSet joins the main MPD as its trick-mode set.
            let source = staging.appendingPathComponent("trick-source.mpd")
            let trick = String(decoding: try Data(contentsOf: source), as: UTF8.self)
            guard let open = trick.range(of: "<AdaptationSet"), let close = trick.range(of: "</AdaptationSet>"),
                let tagEnd = trick[open.upperBound...].firstIndex(of: ">")
            else { throw FixtureError("the dash muxer wrote no AdaptationSet") }
            let property =
                "<EssentialProperty schemeIdUri=\"http://dashif.org/guidelines/trickmode\" value=\"0\"/>"
            let set =
                (trick[open.lowerBound...tagEnd] + property + trick[trick.index(after: tagEnd)..<close.upperBound])
                .replacingOccurrences(of: "<AdaptationSet id=\"0\"", with: "<AdaptationSet id=\"1\"")
                .replacingOccurrences(of: "<Representation id=\"0\"", with: "<Representation id=\"trick\"")
            let manifest = staging.appendingPathComponent(layout.manifest)
            let main = String(decoding: try Data(contentsOf: manifest), as: UTF8.self)
            guard let end = main.range(of: "</Period>") else { throw FixtureError("the dash muxer wrote no Period") }
            try Data(main.replacingCharacters(in: end.lowerBound..<end.lowerBound, with: set + "\n").utf8)
                .write(to: manifest)
            try FileManager.default.removeItem(at: source)
        default:
            break
        }
    }

    /// An on-demand MPD over the single file the dash muxer wrote with a global `sidx`: `SegmentBase` with the
    /// `sidx` box's byte range as `indexRange` and the `ftyp`+`moov` before it as the initialisation range.
    private static func onDemandMPD(_ directory: URL) throws -> String {
        let media = directory.appendingPathComponent("stream0.mp4")
        let bytes = Array(try Data(contentsOf: media))
        var offset = 0
        var initEnd: Int?
        var index: Range<Int>?
        while offset + 8 <= bytes.count {
            var size = 0
            for k in 0..<4 { size = size << 8 | Int(bytes[offset + k]) }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            guard size >= 8 else { break }
            if type == "sidx", index == nil {
                index = offset..<(offset + size)
                initEnd = initEnd ?? offset
            }
            if type == "moof", initEnd == nil { initEnd = offset }
            offset += size
        }
        guard let index, let initEnd else { throw FixtureError("no sidx in \(media.path)") }
        return """
            <?xml version="1.0" encoding="utf-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" type="static" mediaPresentationDuration="PT10S" minBufferTime="PT2S">
              <Period id="0">
                <AdaptationSet contentType="video" mimeType="video/mp4" subsegmentAlignment="true" subsegmentStartsWithSAP="1">
                  <Representation id="0" codecs="avc1.64000d" bandwidth="300000" width="320" height="240" frameRate="25">
                    <BaseURL>stream0.mp4</BaseURL>
                    <SegmentBase indexRange="\(index.lowerBound)-\(index.upperBound - 1)">
                      <Initialization range="0-\(initEnd - 1)"/>
                    </SegmentBase>
                  </Representation>
                </AdaptationSet>
              </Period>
            </MPD>

            """
    }
}
