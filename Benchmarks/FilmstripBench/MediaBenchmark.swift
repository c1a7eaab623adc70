import Filmstrip
@_spi(Benchmarks) import FilmstripPreviews
import FilmstripTesting
import Foundation

/// Preview-track generation and frame extraction against the ffmpeg CLI on the same input, with the same tile
/// count, size and JPEG quality (medians of several runs).
enum MediaBenchmark {
    struct Input {
        var name: String
        var file: URL
        var description: String
    }

    static let runs = 3

    static func filmstripTool() throws -> String {
        let filmstrip = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("filmstrip").path
        guard FileManager.default.isExecutableFile(atPath: filmstrip) else {
            throw BenchError("build the filmstrip tool first: swift build -c release --product filmstrip")
        }
        return filmstrip
    }

    /// Only the `frame` over HTTP figures (`FilmstripBench http-frame`).
    static func runRemoteFrame(mediaDirectory: URL) throws {
        let work = try TemporaryDirectory(prefix: "filmstrip-bench-media")
        defer { work.remove() }
        try remoteFrame(try makeInputs(in: mediaDirectory)[0], filmstrip: try filmstripTool(), work: work)
    }

    /// Only the local `frame` figures (`FilmstripBench local-frame`).
    static func runLocalFrame(mediaDirectory: URL) async throws {
        let work = try TemporaryDirectory(prefix: "filmstrip-bench-media")
        defer { work.remove() }
        let filmstrip = try filmstripTool()
        for input in try makeInputs(in: mediaDirectory) {
            try await localFrame(input, filmstrip: filmstrip, work: work)
        }
    }

    /// One 320 px frame of a local file: `filmstrip frame` against `ffmpegthumbnailer -s 320` (what a Linux user
    /// reaches for), whole processes run in turn (median of 10 pairs); then the library call on an open input, a
    /// different keyframe each time (decode, scale, JPEG encode).
    static func localFrame(_ input: Input, filmstrip: String, work: TemporaryDirectory) async throws {
        let t = 301
        let clock = String(format: "%02d:%02d:%02d", t / 3600, t / 60 % 60, t % 60)
        let thumbnailer = FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpegthumbnailer")
        var ours: [Double] = []
        var theirs: [Double] = []
        for _ in 0..<10 {
            ours.append(
                try time(
                    [
                        filmstrip, "frame", input.file.path, "--at", "\(t)", "--max-size", "320x320", "--output",
                        work.file("local.jpg").path,
                    ], runs: 1))
            if thumbnailer {
                theirs.append(
                    try time(
                        [
                            "ffmpegthumbnailer", "-i", input.file.path, "-o", work.file("thumbnailer.jpg").path, "-s",
                            "320", "-t", clock,
                        ], runs: 1))
            }
        }
        var options = FrameExtractorConfiguration()
        options.maximumSize = PixelSize(width: 320, height: 320)
        let extractor = FrameExtractor(url: input.file, options: options)
        _ = try await extractor.image(at: 1)  // opens the input
        var calls: [Double] = []
        for k in 0..<20 {
            let start = now()
            let frame = try await extractor.image(at: Double(30 + k * 25))
            _ = try JPEGCodec.encode(frame.image, quality: 90)
            calls.append(Double(now() - start) / 1e9)
        }
        print("One 320 px frame at \(t) s of the local file, \(input.description)")
        let line = "  filmstrip frame --max-size 320x320      \(format(median(ours) * 1000, 0)) ms"
        if thumbnailer {
            print(
                line
                    + "   ffmpegthumbnailer -s 320 -t \(clock): \(format(median(theirs) * 1000, 0)) ms   (filmstrip \(format(median(theirs) / median(ours), 2))x faster; whole processes, median of 10)"
            )
        } else {
            print(line + "   (ffmpegthumbnailer not installed: make bench installs it)")
        }
        print(
            "  in process, input open: keyframe decoded, scaled to 320 px, JPEG: p50 \(format(median(calls) * 1000, 1)) ms, max \(format((calls.max() ?? 0) * 1000, 1)) ms (20 keyframes)"
        )
        if thumbnailer { try comparePictures(input, work: work) }
    }

    /// Each picture against the frame it shows, decoded in full by the ffmpeg CLI and scaled with Lanczos to the same
    /// size: PSNR over RGB, and the file sizes. The two tools pick different keyframes for 301 s (Filmstrip the one
    /// at or before it, ffmpegthumbnailer the next), so each is matched with the best of the keyframes around it.
    static func comparePictures(_ input: Input, work: TemporaryDirectory) throws {
        let ours = try ImageCodec.decode(try Data(contentsOf: work.file("local.jpg"))).0
        let theirs = try ImageCodec.decode(try Data(contentsOf: work.file("thumbnailer.jpg"))).0
        guard ours.width == theirs.width, ours.height == theirs.height else {
            print("  pictures: sizes differ (\(ours.width)x\(ours.height) against \(theirs.width)x\(theirs.height))")
            return
        }
        var references: [(time: Int, pixels: [UInt8])] = []
        for time in [300, 302, 310] {
            let file = work.file("reference-\(time).rgb")
            _ = try FilmstripBench.run(
                "/usr/bin/env",
                [
                    "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-ss", "\(time)", "-i", input.file.path,
                    "-frames:v", "1", "-vf", "scale=\(ours.width):\(ours.height):flags=lanczos", "-pix_fmt", "rgb24",
                    "-f", "rawvideo", file.path,
                ])
            references.append((time, [UInt8](try Data(contentsOf: file))))
        }
        func match(_ image: PixelBuffer) -> String {
            let best = references.compactMap { reference in
                image.psnr(againstBytes: reference.pixels, layout: .rgb, width: image.width, height: image.height)
                    .map { (reference.time, $0) }
            }.max { $0.1 < $1.1 }
            return best.map { "\(format($0.1, 1)) dB (the frame at \($0.0) s)" } ?? "n/a"
        }
        func size(_ name: String) -> String {
            let bytes = (try? Data(contentsOf: work.file(name)).count) ?? 0
            return format(Double(bytes) / 1000, 1) + " KB"
        }
        print(
            "  each picture against its frame decoded in full (ffmpeg, Lanczos to \(ours.width)x\(ours.height)): "
                + "filmstrip \(match(ours)), \(size("local.jpg")); ffmpegthumbnailer \(match(theirs)), "
                + "\(size("thumbnailer.jpg"))")
    }

    /// Only the generation figures (`FilmstripBench generate`).
    static func runGeneration(mediaDirectory: URL) async throws {
        let filmstrip = try filmstripTool()
        let work = try TemporaryDirectory(prefix: "filmstrip-bench-media")
        defer { work.remove() }
        for input in try makeInputs(in: mediaDirectory) {
            try await generation(input, filmstrip: filmstrip, work: work)
        }
    }

    static func run(mediaDirectory: URL) async throws {
        let inputs = try makeInputs(in: mediaDirectory)
        let filmstrip = try filmstripTool()
        let work = try TemporaryDirectory(prefix: "filmstrip-bench-media")
        defer { work.remove() }
        for input in inputs {
            try await generation(input, filmstrip: filmstrip, work: work)
        }
        try remoteFrame(inputs[0], filmstrip: filmstrip, work: work)
        for input in inputs { try await localFrame(input, filmstrip: filmstrip, work: work) }
        print("")
        try StreamBenchmark.run(mediaDirectory: mediaDirectory, filmstrip: filmstrip)
        try await PlaybackBenchmark.run(mediaDirectory: mediaDirectory, filmstrip: filmstrip)
        try DASHBenchmark.run(mediaDirectory: mediaDirectory, filmstrip: filmstrip, source: inputs[0].file)
    }

    /// The benchmark videos, made once with the ffmpeg CLI and kept in `directory`.
    static func makeInputs(in directory: URL) throws -> [Input] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let specs = [
            ("720p-10min-gop2", "1280x720", 50, "10 min 1280x720 25 fps H.264, keyframe every 2 s"),
            ("1080p-10min-gop10", "1920x1080", 250, "10 min 1920x1080 25 fps H.264, keyframe every 10 s"),
        ]
        return try specs.map { name, size, gop, description in
            let file = directory.appendingPathComponent(name + ".mp4")
            if !FileManager.default.fileExists(atPath: file.path) {
                print("making \(file.lastPathComponent) (once; kept in \(directory.path)) …")
                let partial = directory.appendingPathComponent(".partial-" + name + ".mp4")
                try MediaFixtures.run([
                    "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(size):r=25:d=600",
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-g", "\(gop)", "-keyint_min", "\(gop)",
                    "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-movflags", "+faststart", partial.path,
                ])
                try FileManager.default.moveItem(at: partial, to: file)
            }
            return Input(name: name, file: file, description: description)
        }
    }

    /// Seconds a command takes (median of `runs`).
    static func time(_ arguments: [String], runs: Int = runs) throws -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = now()
            _ = try FilmstripBench.run("/usr/bin/env", arguments)
            times.append(Double(now() - start) / 1e9)
        }
        return median(times)
    }

    static func generation(_ input: Input, filmstrip: String, work: TemporaryDirectory) async throws {
        let interval = 10.0
        let out = work.file("generate-\(input.name)").path
        // ffmpeg's mjpeg -q:v 5 is about libjpeg quality 80; both write 4:2:0.
        let ours = try time([
            filmstrip, "generate", input.file.path, "--output", out, "--interval", "10", "--width", "160",
            "--columns", "10", "--rows", "10", "--quality", "80", "--chroma", "420",
        ])
        let startup = try time([filmstrip, "--help"])
        // The same generation through the library, in this process: the figure to hold against the floor, which
        // has no process start either.
        var options = PreviewTrackConfiguration()
        options.interval = interval
        options.width = 160
        options.columns = 10
        options.rows = 10
        options.quality = 80
        options.chromaSubsampling = .s420
        var inProcess: [Double] = []
        var thumbnails = 0
        for run in 0..<runs {
            let start = now()
            let summary = try await PreviewTrackGenerator.generate(
                from: input.file, to: work.url.appendingPathComponent("api-\(input.name)-\(run)"), options: options)
            inProcess.append(Double(now() - start) / 1e9)
            thumbnails = summary.thumbnails
        }
        let api = median(inProcess)
        let starts = (0..<thumbnails).map { Double($0) * interval }
        // The floor is the keyframe decode generation does (160 px tiles: the deblocking skipped); the full decode,
        // and the picture the skip costs, beside it.
        var floors: [Double] = []
        var fullFloors: [Double] = []
        for _ in 0..<runs {
            floors.append(
                try MediaBenchmarks.decodeKeyframes(
                    url: input.file, starts: starts, interval: interval, skippingDeblocking: true
                ).1)
            fullFloors.append(
                try MediaBenchmarks.decodeKeyframes(url: input.file, starts: starts, interval: interval).1)
        }
        let quality = try MediaBenchmarks.previewQuality(
            url: input.file, starts: starts, interval: interval, width: 160)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let floor = median(floors)
        let fullFloor = median(fullFloors)
        let allCores = floor / Double(cores)
        let recipe = ["-hide_banner", "-loglevel", "error", "-y"]
        let tile = [
            "-vf", "fps=1/10,scale=160:-2,tile=10x10", "-q:v", "5", work.file("ffmpeg-\(input.name)-%d.jpg").path,
        ]
        let skip = try time(["ffmpeg"] + recipe + ["-skip_frame", "nokey", "-i", input.file.path] + tile)
        let full = try time(["ffmpeg"] + recipe + ["-i", input.file.path] + tile, runs: 1)
        print("Preview track: \(input.description)")
        print("  \(thumbnails) thumbnails of 160 px, 10x10 tiles, JPEG quality 80 (4:2:0)")
        print(
            "  filmstrip generate                 \(format(ours, 2)) s   (process start alone: \(format(startup, 3)) s)"
        )
        print("  PreviewTrackGenerator in process   \(format(api, 3)) s")
        print(
            "  keyframe-decode floor, one core    \(format(floor, 3)) s   (deblocking skipped; full decode \(format(fullFloor, 3)) s = \(format(fullFloor / floor, 2))x)"
        )
        print(
            "  tiles without deblocking           PSNR \(format(quality.minimum, 1)) dB lowest, \(format(quality.mean, 1)) dB mean against the full decode's"
        )
        print(
            "  \("all-core floor (\(cores) cores)".padding(toLength: 35, withPad: " ", startingAt: 0))\(format(allCores, 3)) s   in process = \(format(api / allCores, 2))x, command = \(format(ours / allCores, 2))x the floor"
        )
        print("  ffmpeg -skip_frame nokey … tile    \(format(skip, 2)) s   filmstrip \(format(skip / ours, 1))x faster")
        print(
            "  ffmpeg (full decode) … tile        \(format(full, 2)) s   filmstrip \(format(full / ours, 1))x faster (1 run)"
        )
        print("")
    }

    static func remoteFrame(_ input: Input, filmstrip: String, work: TemporaryDirectory) throws {
        let server = try LoopbackServer()
        let body = Array(try Data(contentsOf: input.file))
        let t = 301.0
        var ours: [Double] = []
        var oursBytes = 0
        var theirs: [Double] = []
        var theirsBytes = 0
        // Where the time goes: each request of the last run, as the server saw it arrive after the process start.
        var timeline: [String] = []
        for run in 0..<5 {
            let path = "/ours-\(run)/video.mp4"
            server.serve(path, body: body)
            let started = Date()
            let start = now()
            _ = try FilmstripBench.run(
                "/usr/bin/env",
                [
                    filmstrip, "frame", server.url(path).absoluteString, "--at", "\(t)",
                    "--output", work.file("ours.jpg").path,
                ])
            ours.append(Double(now() - start) / 1e9)
            oursBytes = server.bytesSent(path)
            timeline = server.requests.filter { $0.path == path }.map {
                "+\(format($0.time.timeIntervalSince(started) * 1000, 0)) ms \($0.headers["range"] ?? "no range")"
            }
            server.remove(path)
            let other = "/ffmpeg-\(run)/video.mp4"
            server.serve(other, body: body)
            let start2 = now()
            _ = try FilmstripBench.run(
                "/usr/bin/env",
                [
                    "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-ss", "\(t)",
                    "-i", server.url(other).absoluteString, "-frames:v", "1",
                    work.file("theirs.jpg").path,
                ])
            theirs.append(Double(now() - start2) / 1e9)
            theirsBytes = server.bytesSent(other)
            server.remove(other)
        }
        let size = Double(body.count)
        print("One frame over HTTP (loopback), \(input.description), \(format(size / 1e6, 1)) MB, at \(Int(t)) s")
        print(
            "  filmstrip frame                    \(format(median(ours) * 1000, 0)) ms   \(format(Double(oursBytes) / 1e3, 0)) KB sent by the server (\(format(Double(oursBytes) / size * 100, 2)) % of the file)"
        )
        print(
            "  ffmpeg -ss T -i URL -frames:v 1    \(format(median(theirs) * 1000, 0)) ms   \(format(Double(theirsBytes) / 1e3, 0)) KB sent by the server (\(format(Double(theirsBytes) / size * 100, 2)) % of the file)"
        )
        print("  filmstrip's requests (last run, arrival after the start): \(timeline.joined(separator: ", "))")
        try plainServerFrame(input, filmstrip: filmstrip, work: work, at: t)
        print("")
    }

    /// The same frame from Python's `http.server`, which ignores `Range` and sends the whole file: Filmstrip
    /// refuses it on the response's headers; ffmpeg reads the file up to the frame.
    static func plainServerFrame(_ input: Input, filmstrip: String, work: TemporaryDirectory, at t: Double) throws {
        let port = 18_000 + Int(getpid() % 1_000)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "python3", "-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory",
            input.file.deletingLastPathComponent().path,
        ]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate() }
        let url = "http://127.0.0.1:\(port)/\(input.file.lastPathComponent)"
        var up = false
        for _ in 0..<100 where !up {
            up = (try? Data(contentsOf: URL(string: "http://127.0.0.1:\(port)/")!)) != nil
            if !up { usleep(50_000) }
        }
        guard up else { throw BenchError("python3 -m http.server did not start") }
        func timed(_ arguments: [String]) -> (Double, Int32) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let start = now()
            guard (try? process.run()) != nil else { return (0, -1) }
            process.waitUntilExit()
            return (Double(now() - start) / 1e9, process.terminationStatus)
        }
        var ours: [Double] = []
        var theirs: [Double] = []
        var status: Int32 = 0
        for _ in 0..<3 {
            let (seconds, exit) = timed([
                filmstrip, "frame", url, "--at", "\(t)", "--output", work.file("plain.jpg").path,
            ])
            ours.append(seconds)
            status = exit
            theirs.append(
                timed([
                    "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-ss", "\(t)", "-i", url, "-frames:v", "1",
                    work.file("plain-ffmpeg.jpg").path,
                ]).0)
        }
        print(
            "  without Range (python3 -m http.server): filmstrip refuses in \(format(median(ours) * 1000, 0)) ms (exit \(status)); ffmpeg reads up to the frame: \(format(median(theirs) * 1000, 0)) ms"
        )
    }
}
