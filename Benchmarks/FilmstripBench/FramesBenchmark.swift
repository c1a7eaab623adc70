import Filmstrip
import FilmstripTesting
import Foundation

/// The `.frames` engine against `ffmpeg -ss T -i URL -frames:v 1` on the same HLS stream over loopback: bytes and
/// time cold (a new engine: manifests, I-frame playlist, one keyframe), and warm scrubbing (keyframes in memory).
enum FramesBenchmark {
    static func run(mediaDirectory: URL, source: URL, label: String) async throws {
        let directory = mediaDirectory.appendingPathComponent("\(label)-hls-ts", isDirectory: true)
        if !FileManager.default.fileExists(atPath: directory.appendingPathComponent("index.m3u8").path) {
            try? FileManager.default.removeItem(at: directory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try MediaFixtures.run(
                [
                    "-hide_banner", "-loglevel", "error", "-y", "-i", source.path, "-c", "copy", "-f", "hls",
                    "-hls_time", "4",
                    "-hls_playlist_type", "vod", "-hls_segment_filename", "seg_%04d.ts", "index.m3u8",
                ], in: directory)
        }
        let server = try LoopbackServer()
        defer { server.stop() }
        var total = 0
        for file in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) {
            let body = Array(try Data(contentsOf: file))
            total += body.count
            server.serve("/hls/\(file.lastPathComponent)", body: body)
        }
        let media = server.url("/hls/index.m3u8")
        // I-frame playlists for it, served beside it.
        let work = try TemporaryDirectory(prefix: "filmstrip-bench-iframes")
        defer { work.remove() }
        let summary = try await IFramePlaylistGenerator.generate(from: media, to: work.url)
        let iframes = summary.playlists[0].url
        let masterText =
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=3000000\nindex.m3u8\n"
            + "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=\(summary.playlists[0].bandwidth),URI=\"\(iframes.lastPathComponent)\"\n"
        server.serve("/hls/\(iframes.lastPathComponent)", body: Array(try Data(contentsOf: iframes)))
        server.serve("/hls/master.m3u8", text: masterText)
        let master = server.url("/hls/master.m3u8")
        func sent() -> Int { Set(server.requests.map(\.path)).reduce(0) { $0 + server.bytesSent($1) } }
        var cold: [Double] = []
        var coldBytes = 0
        for run in 0..<5 {
            let t = 301.0 + Double(run) * 17
            let before = sent()
            let start = now()
            let frames = FrameThumbnails()
            try await frames.load(url: master)
            guard try await frames.thumbnail(at: t) != nil else { throw BenchError("no keyframe at \(t)") }
            cold.append(Double(now() - start) / 1e9)
            coldBytes = sent() - before
        }
        var theirs: [Double] = []
        var theirsBytes = 0
        for run in 0..<3 {
            let before = sent()
            let start = now()
            _ = try FilmstripBench.run(
                "/usr/bin/env",
                [
                    "timeout", "120", "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-ss", "\(301 + run * 17)",
                    "-i",
                    media.absoluteString, "-frames:v", "1", "/tmp/filmstrip-bench-frames.jpg",
                ])
            theirs.append(Double(now() - start) / 1e9)
            theirsBytes = sent() - before
        }
        // Warm scrubbing: 600 lookups at random times over keyframes already decoded.
        var configuration = FrameThumbnailsConfiguration()
        configuration.memoryLimit = 256 << 20
        configuration.prefetchCount = 0
        let warm = FrameThumbnails(configuration: configuration)
        try await warm.load(url: master)
        let times = (0..<60).map { Double($0) * 10 + 1 }
        for t in times { _ = try await warm.thumbnail(at: t) }
        var lookups: [Double] = []
        var seed: UInt64 = 11
        for _ in 0..<600 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1
            let t = times[Int(seed >> 33) % times.count]
            let start = now()
            guard warm.getThumbnail(atTimestamp: t) != nil else { throw BenchError("warm miss at \(t)") }
            lookups.append(Double(now() - start) / 1e6)
        }
        lookups.sort()
        print(
            ".frames thumbnail, \(label) HLS (MPEG-TS, 4 s segments, \(format(Double(total) / 1e6, 1)) MB) over loopback"
        )
        print(
            "  cold (new engine: master, I-frame playlist, one keyframe)  \(format(median(cold) * 1000, 1)) ms   \(format(Double(coldBytes) / 1e3, 0)) KB"
        )
        print(
            "  ffmpeg -ss T -i URL -frames:v 1                            \(format(median(theirs) * 1000, 0)) ms   \(format(Double(theirsBytes) / 1e3, 0)) KB   (.frames \(format(median(theirs) / median(cold), 1))x faster, \(format(Double(theirsBytes) / Double(max(coldBytes, 1)), 0))x fewer bytes)"
        )
        print(
            "  warm scrub (keyframe in memory)  p50 \(format(percentile(lookups, 50), 3)) ms   p99 \(format(percentile(lookups, 99), 3)) ms"
        )
        print("")
    }
}
