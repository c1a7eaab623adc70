import Filmstrip
import FilmstripTesting
import Foundation

/// Audio and trick play: CPU per minute of 720p with AAC stereo played to a WAV file against
/// `ffmpeg -re -i URL -f null -`, and the bytes 8x playback fetches with and without an I-frame playlist (and at 1x
/// for scale), over a loopback server in this process.
enum PlaybackBenchmark {
    static func run(mediaDirectory: URL, filmstrip: String) async throws {
        print("Audio and trick play")
        let server = try LoopbackServer()
        let withAudio = try StreamBenchmark.make720p(in: mediaDirectory, audio: true)
        serve(withAudio, on: server, prefix: "/av")
        try cpu(server.url("/av/index.m3u8"), filmstrip: filmstrip)

        // The video-only 720p stream, and the same stream with an I-frame playlist beside it.
        let plain = try StreamBenchmark.make720p(in: mediaDirectory)
        let trick = try await withIFrames(plain, in: mediaDirectory)
        let plainPaths = serve(plain, on: server, prefix: "/plain")
        let trickPaths = serve(trick, on: server, prefix: "/trick")
        print("  Bytes fetched playing 60 s of 720p (3 Mbit/s, 2 s TS segments) to the end:")
        let whole = try await bytes(server.url("/plain/index.m3u8"), rate: 1, server: server, paths: plainPaths)
        let keyframes = try await bytes(server.url("/plain/index.m3u8"), rate: 8, server: server, paths: plainPaths)
        let iFrames = try await bytes(server.url("/trick/master.m3u8"), rate: 8, server: server, paths: trickPaths)
        for (label, count) in [
            ("1x", whole), ("8x, keyframes of the segments", keyframes), ("8x, I-frame playlist", iFrames),
        ] {
            // 60 s of content: at 8x a minute of playing covers eight of them.
            let perMinute = Double(count) * (label.hasPrefix("8x") ? 8 : 1)
            print(
                "    \(label.padding(toLength: 32, withPad: " ", startingAt: 0)) \(format(Double(count) / 1e6, 2)) MB"
                    + "  = \(format(perMinute / 1e6, 1)) MB per minute played")
        }
        print(
            "    ratio         the I-frame playlist fetches \(format(Double(keyframes) / Double(iFrames), 1))x fewer bytes"
        )
        server.stop()
        print("")
    }

    /// Serves every file of `directory` under `prefix`; returns the paths.
    @discardableResult
    static func serve(_ directory: URL, on server: LoopbackServer, prefix: String) -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return files.compactMap { file in
            guard let body = try? Data(contentsOf: file) else { return nil }
            let path = "\(prefix)/\(file.lastPathComponent)"
            server.serve(path, body: Array(body))
            return path
        }
    }

    /// A copy of `stream` with a master and an I-frame playlist written by ``IFramePlaylistGenerator``, made once.
    static func withIFrames(_ stream: URL, in directory: URL) async throws -> URL {
        let copy = directory.appendingPathComponent("hls-720p-iframes", isDirectory: true)
        if FileManager.default.fileExists(atPath: copy.appendingPathComponent("master.m3u8").path) { return copy }
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: stream, to: copy)
        let source = copy.appendingPathComponent("source.m3u8")
        try Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=3300000,RESOLUTION=1280x720\nindex.m3u8\n".utf8)
            .write(to: source)
        _ = try await IFramePlaylistGenerator.generate(from: source, to: copy)
        return copy
    }

    /// CPU seconds per minute of playback with audio to a WAV file, for this engine and for ffmpeg reading the
    /// same stream in real time (it decodes audio and video too), each a child process playing 30 s.
    static func cpu(_ url: URL, filmstrip: String) throws {
        let seconds = 30
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("filmstrip-bench-\(UUID()).wav")
        defer { try? FileManager.default.removeItem(at: wav) }
        let ours = try StreamBenchmark.childCPU([
            filmstrip, "play", url.absoluteString, "--autoplay", "--duration", "\(seconds)", "--audio-out", wav.path,
        ])
        let reference = try StreamBenchmark.childCPU([
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-i", url.absoluteString, "-t", "\(seconds)",
            "-f", "null", "-",
        ])
        let scale = 60 / Double(seconds)
        print(
            "  CPU per minute of 720p HLS + AAC stereo at rate 1, audio written to a WAV (\(seconds) s, scaled to 60):")
        print("    Filmstrip     \(format(ours * scale, 2)) CPU s/min")
        print("    ffmpeg -re    \(format(reference * scale, 2)) CPU s/min")
        print("    ratio         \(format(ours / reference, 2))x (Filmstrip CPU / ffmpeg CPU)")
    }

    /// Body bytes the server sent while a player played `url` at `rate` to the end.
    static func bytes(_ url: URL, rate: Double, server: LoopbackServer, paths: [String]) async throws -> Int {
        let before = paths.reduce(0) { $0 + server.bytesSent($1) }
        let player = Player()
        player.playbackRate = rate
        let ended = DispatchSemaphore(value: 0)
        player.onState = { _, state in if state.kind == .ended || state.kind == .error { ended.signal() } }
        player.open(config: PlayerConfiguration(with: url))
        let finished = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: ended.wait(timeout: .now() + 120)) }
        }
        guard finished == .success, player.state.kind == .ended else {
            throw BenchError("\(url) at \(rate)x did not reach the end (\(player.state))")
        }
        player.stop()
        return paths.reduce(0) { $0 + server.bytesSent($1) } - before
    }
}
