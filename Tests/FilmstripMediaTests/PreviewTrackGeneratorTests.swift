import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@testable import FilmstripPreviews

@Suite("Preview track generation")
struct PreviewTrackGeneratorTests {
    func options(
        _ mode: PreviewTrackConfiguration.Mode, interval: Double = 1, width: Int = 80
    ) -> PreviewTrackConfiguration {
        var options = PreviewTrackConfiguration()
        options.mode = mode
        options.interval = interval
        options.width = width
        options.columns = 4
        options.rows = 3
        return options
    }

    /// Loads the generated track with the thumbnails engine and returns the frame number each cue shows.
    func framesShown(_ summary: PreviewTrackSummary, interval: Double = 1) async throws -> [Int?] {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: summary.trackURL)
        return try (0..<summary.thumbnails).map { k in
            let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: Double(k) * interval + 0.5))
            return frameNumber(try ImageCodec.decode(thumbnail.imageData).0)
        }
    }

    @Test("keyframe mode: sheets, contiguous cues ending at the duration, the keyframe inside each cue")
    func keyframeMode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let summary = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.counter(), to: directory.url, options: options(.keyframe))
        #expect(summary.thumbnails == 10 && summary.sheets == 1)
        #expect(summary.duration == 10)
        #expect(summary.tileSize == PixelSize(width: 80, height: 60))
        #expect(summary.sheetURLs.map(\.lastPathComponent) == ["sprite-1.jpg"])
        // Keyframes every 2 s: odd seconds have none inside their cue and show the one before.
        #expect(try await framesShown(summary) == [0, 0, 50, 50, 100, 100, 150, 150, 200, 200])
        let sheet = try ImageCodec.info(try Data(contentsOf: summary.sheetURLs[0]))
        #expect(sheet.width == 320 && sheet.height == 180)  // 4 columns, 3 rows (10 cells)
        let track = try WebVTTThumbnailParser().parse(
            try Data(contentsOf: summary.trackURL), trackURL: summary.trackURL)
        #expect(track.cues.count == 10)
        for (k, cue) in track.cues.enumerated() {
            #expect(cue.startMilliseconds == Int64(k) * 1000 && cue.endMilliseconds == Int64(k + 1) * 1000)
        }
        #expect(track.cues[9].region == SpatialRegion(x: 80, y: 120, width: 80, height: 60))
        let text = try String(contentsOf: summary.trackURL, encoding: .utf8)
        #expect(text.contains("\nsprite-1.jpg#xywh=0,0,80,60\n"))
        // One rule for a cue's picture: an HLS rendition of that video (the streaming path) shows the same frames.
        let stream = try TemporaryDirectory()
        defer { stream.remove() }
        let fromStream = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.hls(), to: stream.url, options: options(.keyframe))
        #expect(try await framesShown(fromStream) == [0, 0, 50, 50, 100, 100, 150, 150, 200, 200])
    }

    @Test("the rule for a cue's picture: the looks of each mode, and a cue's bounds within the tolerance")
    func cueRule() {
        #expect(CuePicture.looks(.keyframe) == [.keyframeInside, .keyframeBefore, .exactFrame])
        #expect(CuePicture.looks(.auto) == [.keyframeInside, .exactFrame])
        #expect(CuePicture.looks(.accurate) == [.exactFrame])
        let cue = CuePicture(start: 2, end: 3)
        #expect(cue.contains(2) && cue.contains(2 - MediaTime.tolerance / 2) && cue.contains(2.999))
        #expect(!cue.contains(1.99) && !cue.contains(3) && !cue.contains(3 - MediaTime.tolerance / 2))
    }

    @Test("auto mode: the keyframe inside a cue when there is one, else the cue's own first frame")
    func autoMode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let summary = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.counter(), to: directory.url, options: options(.auto))
        // Keyframes every 2 s: even seconds show their keyframe, odd seconds (no keyframe inside) their own frame,
        // where keyframe mode repeats the one before.
        #expect(try await framesShown(summary) == [0, 25, 50, 75, 100, 125, 150, 175, 200, 225])
        #expect(summary.decodedFrames > 10, "odd cues decode forward from their keyframe")
        // The same from an HLS rendition of that video (the streaming path).
        let stream = try TemporaryDirectory()
        defer { stream.remove() }
        let fromStream = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.hls(), to: stream.url, options: options(.auto))
        #expect(try await framesShown(fromStream) == [0, 25, 50, 75, 100, 125, 150, 175, 200, 225])
    }

    @Test("accurate mode: the thumbnail at t shows the frame at t")
    func accurateMode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = options(.accurate, interval: 0.8)
        options.columns = 3
        options.rows = 2
        let summary = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.counter(), to: directory.url, options: options)
        #expect(summary.thumbnails == 13 && summary.sheets == 3)
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: summary.trackURL)
        for k in 0..<13 {
            let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: Double(k) * 0.8 + 0.01))
            #expect(frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == k * 20, "k=\(k)")
        }
        let track = try #require(thumbnails.track)
        #expect(track.cues.last?.endMilliseconds == 10_000)
        #expect(track.cues.last?.startMilliseconds == 9_600)
    }

    @Test("round trip: accurate thumbnails match an independently decoded frame (PSNR ≥ 30 dB)")
    func psnr() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let video = try MediaFixtures.pattern()
        var options = PreviewTrackConfiguration()
        options.mode = .accurate
        options.interval = 1
        options.width = 160
        let summary = try await PreviewTrackGenerator.generate(from: video, to: directory.url, options: options)
        #expect(summary.tileSize == PixelSize(width: 160, height: 120))
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: summary.trackURL)
        for t in [0, 3, 7, 9] {
            let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: Double(t)))
            let ours = try ImageCodec.decode(thumbnail.imageData).0
            let reference = directory.file("reference-\(t).rgb")
            try MediaFixtures.run([
                "-hide_banner", "-loglevel", "error", "-y", "-ss", String(t), "-i", video.path, "-frames:v", "1",
                "-vf", "scale=160:120", "-pix_fmt", "rgb24", "-f", "rawvideo", reference.path,
            ])
            let theirs = Array(try Data(contentsOf: reference))
            let psnr = try #require(ours.psnr(againstBytes: theirs, layout: .rgb, width: 160, height: 120))
            #expect(psnr >= 30, "t=\(t): PSNR \(psnr) dB")
        }
    }

    @Test("rotated videos give upright thumbnails")
    func rotated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let summary = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.rotated(), to: directory.url, options: options(.keyframe, interval: 2, width: 60))
        #expect(summary.tileSize == PixelSize(width: 60, height: 80))
        let sheet = try ImageCodec.decode(try Data(contentsOf: summary.sheetURLs[0])).0
        // Red ends up at the bottom of each tile (see MediaFixtures.rotated()).
        #expect(sheet.meanColor(x: 5, y: 50, width: 50, height: 25).0 > 180)
        #expect(sheet.meanColor(x: 5, y: 5, width: 50, height: 25).2 > 180)
    }

    @Test("an http input generates the same track")
    func remote() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = try LoopbackServer()
        server.serve("/counter.mp4", body: Array(try Data(contentsOf: try MediaFixtures.counter())))
        let summary = try await PreviewTrackGenerator.generate(
            from: server.url("/counter.mp4"), to: directory.url, options: options(.keyframe, interval: 2))
        #expect(summary.thumbnails == 5)
        #expect(summary.bytesRead > 0)
        #expect(try await framesShown(summary, interval: 2) == [0, 50, 100, 150, 200])
    }

    @Test("bad input and bad options fail with clear errors")
    func failures() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let audio = await mediaError {
            _ = try await PreviewTrackGenerator.generate(from: try MediaFixtures.audioOnly(), to: directory.url)
        }
        #expect(audio?.kind == .noVideoStream)
        var bad = PreviewTrackConfiguration()
        bad.interval = 0
        let interval = await mediaError {
            _ = try await PreviewTrackGenerator.generate(
                from: try MediaFixtures.counter(), to: directory.url, options: bad)
        }
        #expect(interval?.kind == .invalidArgument)
        let blocker = try directory.write("file", text: "x")
        let output = await mediaError {
            _ = try await PreviewTrackGenerator.generate(
                from: try MediaFixtures.counter(), to: blocker.appendingPathComponent("out"))
        }
        #expect(output?.kind == .outputFailed)
    }
}
