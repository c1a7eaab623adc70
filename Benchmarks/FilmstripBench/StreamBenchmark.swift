import Filmstrip
import FilmstripTesting
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The streaming player: playlist parsing against Python's m3u8, CPU per minute of 720p playback (HLS and DASH)
/// against `ffmpeg -re -i URL -f null -`, and startup time to the first frame (VOD HLS and DASH; live with and
/// without `optimizeLiveStartup`), all over a loopback server in this process.
enum StreamBenchmark {
    static func run(mediaDirectory: URL, filmstrip: String) throws {
        print("HLS and DASH streaming")
        try parse()
        let server = try LoopbackServer()
        for (prefix, stream) in [
            ("/720p", try make720p(in: mediaDirectory)), ("/720p-dash", try make720pDASH(in: mediaDirectory)),
        ] {
            for file in try FileManager.default.contentsOfDirectory(at: stream, includingPropertiesForKeys: nil) {
                server.serve("\(prefix)/\(file.lastPathComponent)", body: Array(try Data(contentsOf: file)))
            }
        }
        let hls = server.url("/720p/index.m3u8")
        let dash = server.url("/720p-dash/manifest.mpd")
        print("  Startup to first frame (loopback, default 2 s min prebuffer), median of 7:")
        try startup("VOD HLS, 720p", PlayerConfiguration(with: hls))
        try startup("VOD DASH, 720p", PlayerConfiguration(with: dash))
        let live = try liveLadder(on: server)
        var usual = PlayerConfiguration(with: live)
        usual.streaming.startRendition = 1
        var optimized = usual
        optimized.live.optimizeLiveStartup = true
        // Live over a 2 Mbit/s link, where what a start fetches first shows.
        server.limitLink(bytesPerSecond: 250_000)
        try startup("live HLS (2 Mbit/s link)", usual)
        try startup("live HLS, optimizeLiveStartup", optimized)
        server.limitLink(bytesPerSecond: nil)
        try cpu(hls, label: "HLS", filmstrip: filmstrip)
        try cpu(dash, label: "DASH", filmstrip: filmstrip)
        print("")
    }

    /// A live master over two simulated live streams (320x180 at about 200 kbit/s in 1 s segments, declared as
    /// such).
    static func liveLadder(on server: LoopbackServer) throws -> URL {
        _ = try SimulatedLiveStream(server: server, prefix: "/live/hi")
        _ = try SimulatedLiveStream(server: server, prefix: "/live/lo")
        server.serve(
            "/live/master.m3u8",
            text: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=210000\nhi/live.m3u8\n"
                + "#EXT-X-STREAM-INF:BANDWIDTH=200000\nlo/live.m3u8\n",
            contentType: "application/vnd.apple.mpegurl")
        return server.url("/live/master.m3u8")
    }

    // MARK: Parse

    /// A 12-hour VOD playlist of 2 s segments with an ad-break discontinuity every hour.
    static func twelveHourPlaylist() -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n"
        text += "#EXT-X-PLAYLIST-TYPE:VOD\n"
        for n in 0..<(12 * 3600 / 2) {
            if n > 0, n % 1800 == 0 { text += "#EXT-X-DISCONTINUITY\n" }
            text += "#EXTINF:2.000000,\nhttps://cdn.example.com/vod/title-1234/720p/segment-\(n).ts\n"
        }
        return text + "#EXT-X-ENDLIST\n"
    }

    static func parse() throws {
        let text = twelveHourPlaylist()
        let bytes = Array(text.utf8)
        let url = URL(string: "https://cdn.example.com/vod/title-1234/720p/index.m3u8")!
        let parser = HLSPlaylistParser()
        var times: [Double] = []
        var segments = 0
        for _ in 0..<30 {
            let start = now()
            guard case .media(let playlist) = try parser.parse(bytes, url: url) else { throw BenchError("not media") }
            times.append(Double(now() - start) / 1e9)
            segments = playlist.segments.count
        }
        let seconds = median(times)
        let megabytes = Double(bytes.count) / 1e6
        print("  Playlist parse: 12-hour VOD, \(segments) segments, \(format(megabytes, 2)) MB")
        print("    Filmstrip     \(format(seconds * 1000, 2)) ms/parse  \(format(megabytes / seconds)) MB/s")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("filmstrip-bench-12h.m3u8")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("m3u8_parse.py").path
        do {
            let output = try FilmstripBench.run(
                "/usr/bin/env", ["python3", script, file.path, url.absoluteString, "3"])
            let fields = output.split(separator: " ")
            guard let python = Double(fields.first ?? "") else { throw BenchError("unexpected output: \(output)") }
            print(
                "    Python m3u8   \(format(python * 1000, 1)) ms/parse  \(format(megabytes / python, 2)) MB/s  (\(fields.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?") segments)"
            )
            print("    ratio         \(format(python / seconds, 0))x faster than m3u8")
        } catch {
            print("    Python m3u8   not run: \(error) (make bench installs it)")
        }
    }

    // MARK: Playback

    /// 60 s of 1280x720 25 fps H.264 at 3 Mbit/s in 2 s MPEG-TS segments, made once; with `audio`, AAC stereo at
    /// 128 kbit/s (a 660 Hz tone) muxed in.
    static func make720p(in directory: URL, audio: Bool = false) throws -> URL {
        let name = audio ? "hls-720p-aac" : "hls-720p"
        let stream = directory.appendingPathComponent(name, isDirectory: true)
        let playlist = stream.appendingPathComponent("index.m3u8")
        if FileManager.default.fileExists(atPath: playlist.path) { return stream }
        print("  making \(name) (once; kept in \(directory.path)) …")
        try FileManager.default.createDirectory(at: stream, withIntermediateDirectories: true)
        let partial = stream.appendingPathComponent(".partial.m3u8")
        let tone = ["-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=60", "-ac", "2"]
        try MediaFixtures.run(
            ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=1280x720:r=25:d=60"]
                + (audio ? tone : []) + [
                    "-c:v", "libx264", "-preset", "veryfast", "-b:v", "3000k", "-maxrate", "3000k", "-bufsize",
                    "6000k", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
                ] + (audio ? ["-c:a", "aac", "-b:a", "128k"] : []) + [
                    "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_segment_filename",
                    stream.appendingPathComponent("segment-%d.ts").path, partial.path,
                ])
        try FileManager.default.moveItem(at: partial, to: playlist)
        return stream
    }

    /// Seconds from `open` to the first frame (the player's own startup-time statistic), median of 7; with the
    /// saving an optimized live start reports.
    static func startup(_ label: String, _ configuration: PlayerConfiguration) throws {
        var times: [Double] = []
        var saved: [Double] = []
        for _ in 0..<7 {
            let player = Player()
            let first = DispatchSemaphore(value: 0)
            player.onState = { _, state in if state.kind == .playing { first.signal() } }
            player.open(config: configuration)
            guard first.wait(timeout: .now() + 20) == .success else { throw BenchError("the stream did not start") }
            Thread.sleep(forTimeInterval: 1.1)  // the next statistics carry the startup time
            guard let stats = player.getStats(), let startup = stats.startupTime else {
                throw BenchError("no startup time")
            }
            times.append(startup)
            if let estimate = stats.startupTimeSaved { saved.append(estimate) }
            player.stop()
        }
        let estimate = saved.isEmpty ? "" : "  (startupTimeSaved: \(format(median(saved) * 1000, 1)) ms)"
        print(
            "    \(label.padding(toLength: 40, withPad: " ", startingAt: 0)) \(format(median(times) * 1000, 0)) ms\(estimate)"
        )
    }

    /// The same 60 s of 720p as ``make720p(in:)``, packaged by the `ffmpeg` CLI as DASH ($Number$, 2 s segments).
    static func make720pDASH(in directory: URL) throws -> URL {
        let stream = directory.appendingPathComponent("dash-720p", isDirectory: true)
        let manifest = stream.appendingPathComponent("manifest.mpd")
        if FileManager.default.fileExists(atPath: manifest.path) { return stream }
        print("  making dash-720p (once; kept in \(directory.path)) …")
        let partial = directory.appendingPathComponent(".dash-720p-partial", isDirectory: true)
        try? FileManager.default.removeItem(at: partial)
        try FileManager.default.createDirectory(at: partial, withIntermediateDirectories: true)
        try MediaFixtures.run(
            [
                "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=1280x720:r=25:d=60",
                "-c:v", "libx264", "-preset", "veryfast", "-b:v", "3000k", "-maxrate", "3000k", "-bufsize", "6000k",
                "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-f", "dash",
                "-seg_duration", "2", "-use_template", "1", "-use_timeline", "0", "manifest.mpd",
            ], in: partial)
        try FileManager.default.moveItem(at: partial, to: stream)
        return stream
    }

    /// CPU seconds (user + system) per minute of playback at rate 1, for this engine and for ffmpeg reading the same
    /// stream in real time, each a child process playing 30 s.
    static func cpu(_ url: URL, label: String, filmstrip: String) throws {
        let seconds = 30.0
        let ours = try childCPU([
            filmstrip, "play", url.absoluteString, "--autoplay", "--duration", "\(Int(seconds))",
        ])
        let reference = try childCPU([
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-i", url.absoluteString, "-t", "\(Int(seconds))",
            "-f", "null", "-",
        ])
        let scale = 60 / seconds
        print("  CPU per minute of 720p \(label) playback at rate 1 (\(Int(seconds)) s played, scaled to 60):")
        print("    Filmstrip     \(format(ours * scale, 2)) CPU s/min")
        print("    ffmpeg -re    \(format(reference * scale, 2)) CPU s/min")
        print("    ratio         \(format(reference / ours, 2))x (ffmpeg CPU / Filmstrip CPU)")
    }

    /// User + system CPU seconds a child process used.
    static func childCPU(_ arguments: [String]) throws -> Double {
        func children() -> Double {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
            return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
                + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        }
        let before = children()
        _ = try FilmstripBench.run("/usr/bin/env", arguments)
        return children() - before
    }
}
