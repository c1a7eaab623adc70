import FilmstripSync
public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Test media made with the `ffmpeg` CLI on first use and kept (by a hash of the recipe) under the temporary
/// directory for later runs. `make test` makes them all before the parallel run (``makeAll()``), so tests never
/// block on ffmpeg.
///
/// The "counter" videos encode their frame number in the colour of every pixel (see ``frameNumber(r:g:b:)``),
/// so a test can tell exactly which frame a decoded image is. Videos are 25 fps with a keyframe every 2 s
/// (frames 0, 50, 100, …) and B-frames, so presentation and decode order differ as in real files.
public enum MediaFixtures {
    /// The colour of frame `n` of a counter video.
    public static func color(ofFrame n: Int) -> (Int, Int, Int) {
        (20 + (n % 6) * 40, 20 + ((n / 6) % 6) * 40, 20 + ((n / 36) % 7) * 33)
    }

    /// The frame number a counter-video colour stands for (`nil` if it is not close to one).
    public static func frameNumber(r: Double, g: Double, b: Double) -> Int? {
        func level(_ value: Double, _ step: Double, _ count: Int) -> Int? {
            let k = ((value - 20) / step).rounded()
            guard k >= 0, k < Double(count), abs(value - (20 + k * step)) < step / 2.5 else { return nil }
            return Int(k)
        }
        guard let a = level(r, 40, 6), let c = level(g, 40, 6), let d = level(b, 33, 7) else { return nil }
        return a + c * 6 + d * 36
    }

    static let counterSource =
        "nullsrc=s=320x240:r=25:d=10,format=rgb24,geq=r='20+mod(N,6)*40':g='20+mod(floor(N/6),6)*40':b='20+mod(floor(N/36),7)*33'"
    static let h264 = [
        "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-keyint_min", "50",
        "-sc_threshold", "0", "-bf", "2", "-pix_fmt", "yuv420p",
    ]

    /// A 10 s 320x240 counter video, MP4 with the index at the front.
    public static func counter() throws -> URL {
        try make("counter.mp4", ["-f", "lavfi", "-i", counterSource] + h264 + ["-movflags", "+faststart"])
    }

    /// The first 2 s of the counter video (50 frames), for playback tests.
    public static func shortCounter() throws -> URL {
        try make(
            "counter-2s.mp4", ["-f", "lavfi", "-i", counterSource, "-t", "2"] + h264 + ["-movflags", "+faststart"])
    }

    /// The counter video with the index at the end (ffmpeg's default layout).
    public static func counterIndexAtEnd() throws -> URL {
        try make("counter-moov-at-end.mp4", ["-f", "lavfi", "-i", counterSource] + h264)
    }

    /// A 4 s 320x240 video whose left half is red and right half blue, with a display matrix for a quarter turn
    /// counter-clockwise (`rotate=90` written by a stream-copy remux). Shown as the ffmpeg CLI shows it, it is
    /// 240x320 with red at the bottom.
    public static func rotated() throws -> URL {
        let source =
            "nullsrc=s=320x240:r=25:d=4,format=rgb24,geq=r='if(lt(X,160),230,20)':g='20':b='if(lt(X,160),20,230)'"
        let plain = try make("halves.mp4", ["-f", "lavfi", "-i", source] + h264)
        return try make("rotated.mp4", ["-i", plain.path, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
    }

    /// A counter video with a variable frame rate: 25 fps for 2 s, then 5 fps.
    public static func variableFrameRate() throws -> URL {
        try make(
            "vfr.mp4",
            [
                "-f", "lavfi", "-i", counterSource, "-vf", "setpts='if(lt(N,50),N/25,2+(N-50)/5)/TB'",
                "-fps_mode", "vfr", "-frames:v", "80",
            ] + h264)
    }

    /// 40 s of a 64x48 counter: it decodes hundreds of times faster than real time even on a loaded machine, for
    /// tests that time playback.
    public static func tinyCounter() throws -> URL {
        try make(
            "counter-tiny.mp4",
            [
                "-f", "lavfi", "-i",
                "nullsrc=s=64x48:r=25:d=40,format=rgb24,geq=r='20+mod(N,6)*40':g='20+mod(floor(N/6),6)*40'"
                    + ":b='20+mod(floor(N/36),7)*33'",
            ] + h264 + ["-movflags", "+faststart"])
    }

    /// 10 s that open the way many videos do: 2 s of black, 2 s of a flat grey, 2 s of a heavily blurred pattern,
    /// then 4 s of the sharp pattern; a keyframe every 2 s (at 0, 2, 4, 6 and 8 s).
    public static func opening() throws -> URL {
        try make(
            "opening.mp4",
            [
                "-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=2", "-f", "lavfi", "-i",
                "color=0x808080:s=320x240:r=25:d=2", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2,gblur=sigma=30",
                "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=4", "-filter_complex",
                "[0][1][2][3]concat=n=4:v=1:a=0,format=yuv420p",
            ] + h264 + ["-movflags", "+faststart"])
    }

    /// A rich 10 s 320x240 test pattern (for image-quality comparisons).
    public static func pattern() throws -> URL {
        try make(
            "pattern.mp4", ["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=10"] + h264 + ["-movflags", "+faststart"])
    }

    /// The pattern as HDR10-style video: 10-bit BT.2020 with the PQ curve (`transfer` "smpte2084") or HLG
    /// ("arib-std-b67"), SDR white placed at 203 cd/m² (BT.2408), so a right tone mapping gives back the pattern
    /// (whose YUV, like ffmpeg's default conversion from RGB, uses the BT.601 matrix).
    public static func hdrPattern(transfer: String) throws -> URL {
        let pattern = try pattern()
        return try make(
            "pattern-\(transfer).mp4",
            [
                "-i", pattern.path, "-vf",
                "zscale=tin=bt709:min=170m:pin=bt709:rin=tv:t=\(transfer):m=bt2020nc:p=bt2020:r=tv:npl=203,"
                    + "format=yuv420p10le",
                "-c:v", "libx264", "-preset", "veryfast", "-g", "50", "-colorspace", "bt2020nc",
                "-color_primaries", "bt2020", "-color_trc", transfer,
            ])
    }

    /// 1 s of 10-bit BT.2020 video tagged with `transfer`, made of 64 px wide neutral bands whose code values are
    /// `levels` (0...1 of the limited range), encoded losslessly: exact inputs for checking the tone mapping.
    public static func hdrGreys(transfer: String, levels: [Double]) throws -> URL {
        let codes = levels.map { Int((64 + $0 * 876).rounded()) }
        var luma = "\(codes.last!)"
        for (i, code) in codes.enumerated().dropLast().reversed() { luma = "if(lt(X,\((i + 1) * 64)),\(code),\(luma))" }
        return try make(
            "greys-\(transfer)-\(codes.map(String.init).joined(separator: "-")).mp4",
            [
                "-f", "lavfi", "-i", "nullsrc=s=\(64 * codes.count)x64:r=25:d=1", "-vf",
                "format=yuv420p10le,geq=lum='\(luma)':cb=512:cr=512", "-c:v", "libx264", "-qp", "0",
                "-colorspace", "bt2020nc", "-color_primaries", "bt2020", "-color_trc", transfer,
            ])
    }

    /// A 60 s 640x360 test pattern, MP4 with the index at the front (a few MB: for byte-count checks over HTTP).
    public static func large() throws -> URL {
        try make(
            "large.mp4",
            ["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=60"] + h264 + ["-b:v", "600k", "-movflags", "+faststart"])
    }

    /// The 60 s 640x360 pattern with its index at the end (ffmpeg's default layout), for reads by `Range`.
    public static func largeIndexAtEnd() throws -> URL {
        try make(
            "large-moov-at-end.mp4",
            ["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=60"] + h264 + ["-b:v", "600k"])
    }

    /// A 3 s AAC audio file without video.
    public static func audioOnly() throws -> URL {
        try make("audio.m4a", ["-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:a", "aac"])
    }

    /// The counter video as an HLS VOD rendition of 2 s MPEG-TS segments: `hls/index.m3u8`, `hls/segment-N.ts`.
    public static func hls() throws -> URL { try hlsRendition(of: try counter(), in: "hls", segmentSeconds: 2) }

    /// The 60 s 640x360 pattern (600 kbit/s, a keyframe every 2 s) as an HLS VOD media playlist of 6 s MPEG-TS
    /// segments (about 450 KB each, three keyframes in each) with no I-frame playlist: `large-hls/index.m3u8`,
    /// `large-hls/segment-N.ts`.
    public static func largeHLS() throws -> URL {
        try hlsRendition(of: try large(), in: "large-hls", segmentSeconds: 6)
    }

    /// `video` copied into an HLS VOD media playlist of MPEG-TS segments in the fixture folder `folder`.
    private static func hlsRendition(of video: URL, in folder: String, segmentSeconds: Int) throws -> URL {
        let directory = try root().appendingPathComponent(folder, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try make(
            folder + "/index.m3u8",
            [
                "-i", video.path, "-c", "copy", "-f", "hls", "-hls_time", "\(segmentSeconds)", "-hls_playlist_type",
                "vod", "-hls_segment_filename", directory.appendingPathComponent("segment-%d.ts").path,
            ])
    }

    /// Makes every fixture, streams included (in parallel, one ffmpeg per fixture).
    public static func makeAll() throws {
        let makers: [@Sendable () throws -> URL] = [
            counter, shortCounter, tinyCounter, opening, counterIndexAtEnd, rotated, variableFrameRate, pattern,
            audioOnly, hls,
            large, largeHLS, { try hdrPattern(transfer: "smpte2084") },
            { try StreamFixtures.makeLadder()[0].playlist }, { try StreamFixtures.makeLiveSegments()[0] },
            StreamFixtures.makeEncrypted, { try StreamLayouts.file(.b) },
            AudioFixtures.flashesAndBeeps, { try AudioFixtures.muxedHLS(fmp4: true) },
            { try AudioFixtures.muxedHLS(fmp4: false) }, AudioFixtures.undecodableAudio,
            { try AudioFixtures.dashTwoLanguages(onDemand: false) },
            { try AudioFixtures.dashTwoLanguages(onDemand: true) },
            { try CatalogFixtures.clips()[0] },
        ]
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: makers.count) { i in
            do { _ = try makers[i]() } catch { failures.withLock { $0.append("\(error)") } }
        }
        if let first = failures.withLock({ $0.first }) { throw FixtureError(first) }
        try StreamLayouts.makeAll()
    }

    /// The files of a fixture directory (for serving over loopback).
    public static func files(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
    }

    // MARK: Making

    private static let lock = Mutex<URL?>(nil)

    private static func root() throws -> URL {
        try lock.withLock { root in
            if let root { return root }
            // Shared across runs: each file's name carries a hash of its recipe, so a changed recipe makes a new file.
            let made = FileManager.default.temporaryDirectory
                .appendingPathComponent("filmstrip-media-fixtures", isDirectory: true)
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
            root = made
            return made
        }
    }

    /// The directory a fixture named `name` (with subdirectories) is written to, created if needed.
    static func directory(for name: String) throws -> URL {
        let directory = try root().appendingPathComponent(name).deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private static let making = Mutex<[String: Result<URL, FixtureError>]>([:])
    /// One lock per fixture, so different fixtures are made in parallel and only callers of the same one wait.
    private static let locks = Mutex<[String: NSLock]>([:])

    /// Runs ffmpeg once per recipe (others wait), writing to a temporary name and renaming into place, so a run
    /// that is interrupted never leaves a half-written fixture behind.
    public static func make(_ name: String, _ arguments: [String]) throws -> URL {
        let lock = fixtureLock(name)
        lock.lock()
        defer { lock.unlock() }
        if let done = making.withLock({ $0[name] }) { return try done.get() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a of the recipe
        for byte in (arguments.joined(separator: "\u{1}")).utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let url = URL(fileURLWithPath: name)
        let stem = url.deletingPathExtension().lastPathComponent + "-" + String(hash, radix: 16)
        let file = try directory(for: name).appendingPathComponent(stem).appendingPathExtension(url.pathExtension)
        let result: Result<URL, FixtureError>
        if FileManager.default.fileExists(atPath: file.path) {
            result = .success(file)
        } else {
            let partial = file.deletingLastPathComponent()
                .appendingPathComponent(".partial-\(UUID().uuidString)-" + file.lastPathComponent)
            do throws(FixtureError) {
                try run(["-hide_banner", "-loglevel", "error", "-y"] + arguments + [partial.path])
                if rename(partial.path, file.path) != 0 { throw FixtureError("cannot move \(partial.path) into place") }
                result = .success(file)
            } catch {
                try? FileManager.default.removeItem(at: partial)
                result = .failure(error)
            }
        }
        making.withLock { $0[name] = result }
        return try result.get()
    }

    /// The lock that serialises making the fixture `name`.
    private static func fixtureLock(_ name: String) -> NSLock {
        locks.withLock { locks in
            if let lock = locks[name] { return lock }
            let lock = NSLock()
            locks[name] = lock
            return lock
        }
    }

    /// Makes (once) a fixture that is a directory of files: `build` fills a staging directory, which is then renamed
    /// into place, so an interrupted run never leaves a half-made directory. The name carries a hash of `recipe`.
    static func makeDirectory(
        _ name: String, recipe: [(String, [String])], build: (URL) throws -> Void
    ) throws -> URL {
        let lock = fixtureLock(name)
        lock.lock()
        defer { lock.unlock() }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a of the recipe
        let text = recipe.map { $0.0 + "\u{2}" + $0.1.joined(separator: "\u{1}") }.joined(separator: "\u{3}")
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let final = try root().appendingPathComponent(name + "-" + String(hash, radix: 16), isDirectory: true)
        if FileManager.default.fileExists(atPath: final.path) { return final }
        try FileManager.default.createDirectory(
            at: final.deletingLastPathComponent(), withIntermediateDirectories: true)
        let staging = final.deletingLastPathComponent()
            .appendingPathComponent(".partial-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        do {
            try build(staging)
            if rename(staging.path, final.path) != 0 { throw FixtureError("cannot move \(staging.path) into place") }
        } catch {
            try? FileManager.default.removeItem(at: staging)
            throw error
        }
        return final
    }

    /// Runs the ffmpeg CLI (in `directory`, when given).
    public static func run(_ arguments: [String], in directory: URL? = nil) throws(FixtureError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg"] + arguments
        if let directory { process.currentDirectoryURL = directory }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw FixtureError("cannot run ffmpeg (is the ffmpeg CLI installed? `make deps` installs it): \(error)")
        }
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError(
                "ffmpeg \(arguments.joined(separator: " ")) failed: \(String(decoding: output, as: UTF8.self))")
        }
    }
}

/// A failure to make test media.
public struct FixtureError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}
