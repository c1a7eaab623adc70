public import Foundation

/// A live stream made now by the `ffmpeg` CLI's own HLS or DASH muxer in live mode (`-re`: one second of media a
/// second), from the counter pattern (frame `n` shows ``MediaFixtures/color(ofFrame:)`` of `n mod 252`) with a
/// keyframe every second, served by a ``LoopbackServer`` from the folder ffmpeg writes, each file read when asked.
public final class FFmpegLiveOrigin: @unchecked Sendable {
    /// The muxer.
    public enum Muxer: String, Sendable {
        /// `-f hls`: 1 s MPEG-TS segments, `EXT-X-PROGRAM-DATE-TIME` on each, `EXT-X-ENDLIST` at the end.
        case hls
        /// `-f dash`: a dynamic MPD with a SegmentTimeline of 1 s CMAF segments, turned static at the end.
        case dash
    }

    /// The playlist or MPD.
    public let url: URL
    /// The folder ffmpeg writes.
    public let directory: TemporaryDirectory
    private let process: Process

    /// Starts `seconds` of live stream. `window`: segments listed (0 for HLS: all of them).
    public init(
        _ muxer: Muxer, server: LoopbackServer, seconds: Int, window: Int = 0, prefix: String = "/ff"
    )
        throws
    {
        directory = try TemporaryDirectory(prefix: "filmstrip-ffmpeg-live")
        let source =
            "nullsrc=s=320x240:r=25:d=\(seconds),format=rgb24,geq=r='20+mod(N,6)*40':g='20+mod(floor(N/6),6)*40'"
            + ":b='20+mod(floor(N/36),7)*33'"
        var arguments = [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-f", "lavfi", "-i", source, "-c:v", "libx264",
            "-preset", "veryfast", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
        ]
        let manifest: String
        switch muxer {
        case .hls:
            manifest = "live.m3u8"
            arguments += [
                "-f", "hls", "-hls_time", "1", "-hls_list_size", "\(window)", "-hls_flags", "program_date_time",
                "-hls_segment_filename", directory.file("live%d.ts").path, directory.file(manifest).path,
            ]
        case .dash:
            manifest = "live.mpd"
            arguments += [
                "-f", "dash", "-seg_duration", "1", "-use_template", "1", "-use_timeline", "1", "-window_size",
                "\(window)", "-streaming", "0", directory.file(manifest).path,
            ]
        }
        let folder = directory.url
        let serve: (String, String) -> Void = { name, type in
            server.serve("\(prefix)/\(name)", contentType: type) {
                (try? Data(contentsOf: folder.appendingPathComponent(name))).map(Array.init)
            }
        }
        serve(manifest, muxer == .hls ? "application/vnd.apple.mpegurl" : "application/dash+xml")
        serve("init-stream0.m4s", "video/mp4")
        for n in 0...(seconds + 4) {
            serve("live\(n).ts", "video/mp2t")
            serve(String(format: "chunk-stream0-%05d.m4s", n), "video/mp4")
        }
        url = server.url("\(prefix)/\(manifest)")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Waits until the manifest exists (ffmpeg wrote its first segment), at most `timeout` seconds.
    public func waitForManifest(timeout: Double = 30) -> Bool {
        let name = url.lastPathComponent
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: directory.file(name).path) { return true }
            usleep(50_000)
        }
        return false
    }

    /// Waits for ffmpeg to end; its exit status.
    public func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Stops ffmpeg and removes its folder.
    public func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        directory.remove()
    }
}
