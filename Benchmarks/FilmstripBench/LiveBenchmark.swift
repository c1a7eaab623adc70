import Filmstrip
import FilmstripSync
import FilmstripTesting
import Foundation

/// Live production: how long after a segment appears at the origin its thumbnail is in the published track, and the
/// CPU a 720p channel costs per hour against the usual `ffmpeg -vf fps=1/2` recipe.
enum LiveBenchmark {
    static func run(mediaDirectory: URL) async throws {
        try await latency()
        try await cpu(mediaDirectory: mediaDirectory)
    }

    /// A live HLS stream of 1 s segments in real time (the simulated origin over loopback), followed with one
    /// thumbnail a second and a sheet per segment (`--sheet-span 1`): from the moment segment n is listed at the
    /// origin to the moment the track that shows it is written. The run starts at four phases of the origin's second
    /// (0, 0.25, 0.5 and 0.75 s after a segment appears), as a run started at any moment meets an origin.
    static func latency() async throws {
        var measured: [Double] = []
        for phase in [0.0, 0.25, 0.5, 0.75] { measured += try await latency(phase: phase, seconds: 20) }
        measured.sort()
        print("Live production: segment at the origin to its thumbnail in the published track")
        print(
            "  (simulated live HLS over loopback, 1 s segments, \(measured.count) sheets over four phases, real time)")
        print(
            "  --sheet-span 1 (one segment): median \(format(percentile(measured, 50), 2)) s, "
                + "p95 \(format(percentile(measured, 95), 2)) s, max \(format(measured.last ?? 0, 2)) s "
                + "(target p95 <= 2.0 s: one segment + 1 s)")
        // The default sheets (10 x 10 at 2 s) are published when their 200 s are complete: a segment waits for the
        // rest of its sheet, uniformly 0–200 s, plus the same processing.
        let processing = percentile(measured, 50)
        print(
            "  default sheets (10x10 at 2 s, 200 s a sheet): median about \(format(100 + processing, 0)) s, "
                + "p95 about \(format(190 + processing, 0)) s (the sheet's own span, derived, not measured)")
    }

    /// The latencies of one run started `phase` seconds after a segment appeared.
    static func latency(phase: Double, seconds: Int) async throws -> [Double] {
        let server = try LoopbackServer()
        defer { server.stop() }
        let stream = try SimulatedLiveStream(server: server, windowSize: 6, initialSegments: 10, endAfter: 10 + seconds)
        try await Task.sleep(for: .seconds(phase))
        let output = try TemporaryDirectory(prefix: "filmstrip-bench-live")
        defer { output.remove() }
        var configuration = LivePreviewConfiguration()
        configuration.preview.interval = 1
        configuration.preview.columns = 1
        configuration.preview.rows = 1
        configuration.preview.formats = [.vtt, .hls]
        configuration.sheetSpan = 1
        let latencies = Mutex<[(segment: Int, seconds: Double)]>([])
        // Media time 0 is the first segment of the first playlist read (segment 4).
        let first = 10 - 6
        try await LivePreviewTrackGenerator(source: stream.url, directory: output.url, configuration: configuration)
            .run { update in
                let published = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
                for sheet in update.published where !sheet.isGap {
                    let segment = first + Int(sheet.start / 1000)
                    latencies.withLock { $0.append((segment, published - stream.availableSince(segment))) }
                }
            }
        // Sheets of segments that were there before the run began (0–9) say nothing of the latency: left out.
        return latencies.withLock { $0 }.filter { $0.segment >= 10 }.map(\.seconds)
    }

    /// CPU seconds per channel-hour: 2 minutes of a 720p live channel (2 s segments, 2 s GOP) followed as fast as
    /// the test clock lets it, one thumbnail every 2 s at 160 px, against `ffmpeg -i LIVE -vf fps=1/2,scale=160:-2
    /// -f image2` over the same segments; both scaled to an hour.
    static func cpu(mediaDirectory: URL) async throws {
        let folder = mediaDirectory.appendingPathComponent("live-720p", isDirectory: true)
        let playlist = folder.appendingPathComponent("index.m3u8")
        let minutes = 2
        if !FileManager.default.fileExists(atPath: playlist.path) {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            _ = try FilmstripBench.run(
                "/usr/bin/env",
                [
                    "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
                    "testsrc2=s=1280x720:r=25:d=\(minutes * 60)", "-c:v", "libx264", "-preset", "veryfast", "-g", "50",
                    "-keyint_min", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-b:v", "3M", "-f", "hls",
                    "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_segment_filename",
                    folder.appendingPathComponent("segment-%d.ts").path, playlist.path,
                ])
        }
        let segments = (0..<(minutes * 30)).map { folder.appendingPathComponent("segment-\($0).ts") }
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let stream = try SimulatedLiveStream(
            server: server, windowSize: 6, initialSegments: 6, endAfter: segments.count, files: segments,
            segmentDuration: 2, now: { clock.now.offset.seconds })
        let output = try TemporaryDirectory(prefix: "filmstrip-bench-live")
        defer { output.remove() }
        var configuration = LivePreviewConfiguration()
        configuration.preview.formats = [.vtt, .hls]
        configuration.fromStart = true
        configuration.clock = clock
        configuration.wallClock = clock.wallClock()
        let before = selfCPU()
        let run = Task {
            try await LivePreviewTrackGenerator(source: stream.url, directory: output.url, configuration: configuration)
                .run { _ in }
        }
        while await clock.waitForSleepers(1) {
            await clock.advance(by: .seconds(2))
            if stream.newestSegment >= segments.count + 2 { break }
        }
        try await run.value
        let ours = selfCPU() - before
        let frames = output.url.appendingPathComponent("ffmpeg")
        try FileManager.default.createDirectory(at: frames, withIntermediateDirectories: true)
        let theirs = try StreamBenchmark.childCPU([
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-i", playlist.path, "-vf", "fps=1/2,scale=160:-2",
            "-f", "image2", frames.appendingPathComponent("%d.jpg").path,
        ])
        let scale = 60.0 / Double(minutes)
        print(
            "Live production CPU, 720p channel, one thumbnail every 2 s (\(minutes) min followed, scaled to an hour):")
        print("  Filmstrip --live           \(format(ours * scale, 1)) CPU s per channel-hour")
        print("  ffmpeg -vf fps=1/2 image2  \(format(theirs * scale, 1)) CPU s per channel-hour")
        print(
            "  ratio \(format(theirs / max(ours, 0.001), 1))x; one core sustains \(Int(3600 / max(ours * scale, 0.001))) "
                + "channels by this figure (target >= 20)")
    }

    /// User + system CPU seconds this process has used.
    static func selfCPU() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }
}
