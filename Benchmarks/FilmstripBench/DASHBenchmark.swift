import Filmstrip
import FilmstripTesting
import Foundation

/// The streaming layer: MPD parsing against Python's mpegdash, and one frame from HLS fMP4 and DASH over loopback
/// against `ffmpeg -ss T -i URL -frames:v 1` (time and bytes the server sent).
enum DASHBenchmark {
    static func run(mediaDirectory: URL, filmstrip: String, source: URL) throws {
        print("Streams (HLS fMP4 and DASH)")
        try parse()
        try frames(mediaDirectory: mediaDirectory, filmstrip: filmstrip, source: source)
        print("")
    }

    /// A 12-hour on-demand MPD: two video and one audio Representation, each a SegmentList of 21,600 byte ranges.
    static func largeMPD() -> String {
        var text = """
            <?xml version="1.0" encoding="utf-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" \
            type="static" mediaPresentationDuration="PT12H" minBufferTime="PT2S">
              <Period id="0">

            """
        for (set, representations) in [
            ("video", [("720p", 3_000_000), ("360p", 800_000)]), ("audio", [("aac", 128_000)]),
        ] {
            text += "    <AdaptationSet contentType=\"\(set)\" mimeType=\"\(set)/mp4\">\n"
            for (id, bandwidth) in representations {
                text += "      <Representation id=\"\(id)\" bandwidth=\"\(bandwidth)\" codecs=\"avc1.64001f\">\n"
                text += "        <BaseURL>\(id).mp4</BaseURL>\n"
                text += "        <SegmentList timescale=\"1000\" duration=\"2000\"><Initialization range=\"0-999\"/>\n"
                var offset = 1000
                let size = bandwidth / 4
                for _ in 0..<21_600 {
                    text += "          <SegmentURL mediaRange=\"\(offset)-\(offset + size - 1)\"/>\n"
                    offset += size
                }
                text += "        </SegmentList>\n      </Representation>\n"
            }
            text += "    </AdaptationSet>\n"
        }
        return text + "  </Period>\n</MPD>\n"
    }

    static func parse() throws {
        let bytes = Array(largeMPD().utf8)
        let url = URL(string: "https://cdn.example.com/vod/title-1234/manifest.mpd")!
        let parser = DASHManifestParser()
        var times: [Double] = []
        var segments = 0
        for _ in 0..<10 {
            let start = now()
            let presentation = try parser.parse(bytes, url: url)
            times.append(Double(now() - start) / 1e9)
            segments = presentation.periods[0].tracks.flatMap(\.renditions).reduce(0) {
                $0 + ($1.segments.references?.count ?? 0)
            }
        }
        let seconds = median(times)
        let megabytes = Double(bytes.count) / 1e6
        print("  MPD parse: 12-hour on-demand, 3 SegmentLists, \(segments) segments, \(format(megabytes, 2)) MB")
        print("    Filmstrip     \(format(seconds * 1000, 1)) ms/parse  \(format(megabytes / seconds)) MB/s")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("filmstrip-bench-12h.mpd")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("mpegdash_parse.py").path
        let output = try FilmstripBench.run("/usr/bin/env", ["python3", script, file.path, "3"])
        let parts = output.split(separator: " ")
        guard parts.count == 2, let theirs = Double(parts[0]) else { throw BenchError("mpegdash: \(output)") }
        print(
            "    Python mpegdash \(format(theirs * 1000, 0)) ms/parse (\(parts[1].trimmingCharacters(in: .whitespacesAndNewlines)) SegmentURLs)  Filmstrip \(format(theirs / seconds, 0))x faster"
        )
    }

    /// One frame at 301 s of the 10-minute 720p source, packaged as HLS fMP4 and as DASH ($Number$, 4 s segments)
    /// with the ffmpeg CLI.
    static func frames(mediaDirectory: URL, filmstrip: String, source: URL) throws {
        let server = try LoopbackServer()
        for (name, arguments, manifest) in [
            (
                "hls-fmp4",
                [
                    "-f", "hls", "-hls_time", "4", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
                    "-hls_segment_filename", "seg_%04d.m4s", "index.m3u8",
                ], "index.m3u8"
            ),
            (
                "dash",
                ["-f", "dash", "-seg_duration", "4", "-use_timeline", "0", "-use_template", "1", "manifest.mpd"],
                "manifest.mpd"
            ),
        ] {
            let directory = mediaDirectory.appendingPathComponent("720p-\(name)", isDirectory: true)
            if !FileManager.default.fileExists(atPath: directory.appendingPathComponent(manifest).path) {
                try? FileManager.default.removeItem(at: directory)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try MediaFixtures.run(
                    ["-hide_banner", "-loglevel", "error", "-y", "-i", source.path, "-c", "copy"] + arguments,
                    in: directory)
            }
            var total = 0
            for file in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
                let body = Array(try Data(contentsOf: file))
                total += body.count
                server.serve("/\(name)/\(file.lastPathComponent)", body: body)
            }
            let url = server.url("/\(name)/\(manifest)").absoluteString
            func sent() -> Int { Set(server.requests.map(\.path)).reduce(0) { $0 + server.bytesSent($1) } }
            var ours: [Double] = []
            var theirs: [Double] = []
            var oursBytes = 0
            var theirsBytes = 0
            for _ in 0..<5 {
                let before = sent()
                let start = now()
                _ = try FilmstripBench.run(
                    "/usr/bin/env",
                    [filmstrip, "frame", url, "--at", "301", "--output", "/tmp/filmstrip-bench-ours.jpg"])
                ours.append(Double(now() - start) / 1e9)
                oursBytes = sent() - before
                let middle = sent()
                let start2 = now()
                _ = try FilmstripBench.run(
                    "/usr/bin/env",
                    [
                        "timeout", "60", "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-ss", "301", "-i", url,
                        "-frames:v", "1", "/tmp/filmstrip-bench-theirs.jpg",
                    ])
                theirs.append(Double(now() - start2) / 1e9)
                theirsBytes = sent() - middle
            }
            print("  One frame at 301 s, 10 min 720p as \(name) (\(format(Double(total) / 1e6, 1)) MB in all)")
            print(
                "    filmstrip frame                  \(format(median(ours) * 1000, 0)) ms   \(format(Double(oursBytes) / 1e3, 0)) KB from the server"
            )
            print(
                "    ffmpeg -ss T -i URL -frames:v 1  \(format(median(theirs) * 1000, 0)) ms   \(format(Double(theirsBytes) / 1e3, 0)) KB from the server   (filmstrip \(format(median(theirs) / median(ours), 1))x faster, \(format(Double(theirsBytes) / Double(max(oursBytes, 1)), 1))x fewer bytes)"
            )
        }
    }
}
