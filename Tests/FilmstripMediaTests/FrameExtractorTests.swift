import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("Frame extraction")
struct FrameExtractorTests {
    @Test("default tolerance: the keyframe at or before the time")
    func keyframeAtOrBefore() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.counter())
        #expect(try await extractor.duration() == 10)
        for (t, key) in [(0.0, 0), (1.99, 0), (2.0, 50), (5.3, 100), (9.99, 200)] {
            let frame = try await extractor.image(at: t)
            #expect(frame.actualTime == Double(key) / 25, "t=\(t)")
            #expect(frame.isKeyframe)
            #expect(frameNumber(frame.image) == key, "t=\(t)")
            #expect(frame.image.width == 320 && frame.image.height == 240)
        }
    }

    @Test("zero tolerance: the exact frame shown at the time")
    func exact() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.counter(), options: .exact)
        for (t, n) in [(0.0, 0), (0.039, 0), (0.04, 1), (5.3, 132), (7.999, 199), (9.96, 249), (10.0, 249)] {
            let frame = try await extractor.image(at: t)
            #expect(frameNumber(frame.image) == n, "t=\(t)")
            #expect(abs(frame.actualTime - Double(n) / 25) < 1e-6, "t=\(t)")
        }
    }

    @Test(
        "exact frames asked together are the ones asked one by one, a run decoded once",
        arguments: ["counter.mp4", "counter.ts", "vfr.mp4"])
    func exactBatch(_ name: String) async throws {
        let url =
            switch name {
            case "counter.mp4": try MediaFixtures.counter()
            case "vfr.mp4": try MediaFixtures.variableFrameRate()
            default: try MediaFixtures.make("counter.ts", ["-i", try MediaFixtures.counter().path, "-c", "copy"])
            }
        // An animation's run (10 a second over 3 s, across a keyframe), times asked twice and out of order, times
        // far apart (a new seek), the very start and the end.
        let times =
            (0..<30).map { 3.5 + Double($0) / 10 } + [7.8, 0, 0.02, 3.5, 1.01, 6.7, 6.66, 7.6, 7.599]
        let batch = FrameExtractor(url: url, options: .exact)
        var shown: [Int?] = []
        for try await frame in batch.images(at: times) { shown.append(frameNumber(frame.image)) }
        let single = FrameExtractor(url: url, options: .exact)
        var expected: [Int?] = []
        for t in times { expected.append(frameNumber(try await single.image(at: t).image)) }
        #expect(shown == expected)
        #expect(!expected.contains(nil))
        // Frame threading gives the same frames.
        var threaded = FrameExtractorConfiguration.exact
        threaded.decoderThreads = 2
        var shownThreaded: [Int?] = []
        for try await frame in FrameExtractor(url: url, options: threaded).images(at: times) {
            shownThreaded.append(frameNumber(frame.image))
        }
        #expect(shownThreaded == expected)
        // One at a time each time decodes from its keyframe; together the run is decoded once.
        #expect(batch.decodedFrameCount * 3 < single.decodedFrameCount)
    }

    @Test("exact frames skip the B-frames well before the time, and are still exact at 300 times")
    func skipsUnreferencedFrames() async throws {
        // Three B-frames between references, none of them a reference: 3 frames in 4 need not be decoded.
        let url = try MediaFixtures.make(
            "counter-bf3.mp4",
            [
                "-i", try MediaFixtures.counter().path, "-c:v", "libx264", "-preset", "veryfast", "-g", "50",
                "-keyint_min", "50", "-sc_threshold", "0", "-bf", "3", "-x264-params", "b-pyramid=none",
                "-pix_fmt", "yuv420p", "-movflags", "+faststart",
            ])
        let extractor = FrameExtractor(url: url, options: .exact)
        #expect(frameNumber(try await extractor.image(at: 1.97).image) == 49)
        // 49 frames from the keyframe at 0; about a quarter of those more than 0.12 s before, and the last few.
        #expect(extractor.decodedFrameCount < 25, "\(extractor.decodedFrameCount) decoded")
        var random = SeededGenerator(seed: 48)
        for _ in 0..<300 {
            let n = Int.random(in: 0..<250, using: &random)
            let t = (Double(n) + Double.random(in: 0.05..<0.95, using: &random)) / 25
            #expect(frameNumber(try await extractor.image(at: t).image) == n, "t=\(t)")
        }
        // A second with no frames after frame 97 (a B-frame at 3.88 s): inside the gap, frame 97 is shown (the
        // B-frame skipped at first, then decoded on a second pass).
        let gap = try MediaFixtures.make(
            "counter-bf3-gap97.mp4",
            [
                "-i", url.path, "-vf", "setpts='if(gte(N,98),PTS+1/TB,PTS)'", "-fps_mode", "passthrough", "-c:v",
                "libx264", "-preset", "veryfast", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", "-bf", "3",
                "-x264-params", "b-pyramid=none", "-pix_fmt", "yuv420p", "-movflags", "+faststart",
            ])
        let gapped = FrameExtractor(url: gap, options: .exact)
        for t in [4.0, 4.3, 4.9] {
            #expect(frameNumber(try await gapped.image(at: t).image) == 97, "t=\(t)")
        }
        #expect(frameNumber(try await gapped.image(at: 4.92).image) == 98)
    }

    @Test("tolerance after: a keyframe just after the time wins when it is closer")
    func toleranceAfter() async throws {
        var options = FrameExtractorConfiguration()
        options.toleranceBefore = 0.5
        options.toleranceAfter = 0.5
        let extractor = FrameExtractor(url: try MediaFixtures.counter(), options: options)
        #expect(frameNumber(try await extractor.image(at: 3.8).image) == 100)  // keyframe at 4.0, 0.2 s after
        #expect(frameNumber(try await extractor.image(at: 4.3).image) == 100)  // keyframe 0.3 s before
        #expect(frameNumber(try await extractor.image(at: 3.0).image) == 75)  // none within 0.5 s: exact
    }

    @Test("maximumSize keeps the aspect ratio and never enlarges")
    func maximumSize() async throws {
        var options = FrameExtractorConfiguration()
        options.maximumSize = PixelSize(width: 100, height: 100)
        let small = try await FrameExtractor(url: try MediaFixtures.counter(), options: options).image(at: 1)
        #expect(small.image.width == 100 && small.image.height == 75)
        options.maximumSize = PixelSize(width: 1000, height: 1000)
        let same = try await FrameExtractor(url: try MediaFixtures.counter(), options: options).image(at: 1)
        #expect(same.image.width == 320 && same.image.height == 240)
    }

    @Test("the display matrix turns the image unless told not to")
    func rotation() async throws {
        let url = try MediaFixtures.rotated()
        let turned = try await FrameExtractor(url: url).image(at: 1).image
        #expect(turned.width == 240 && turned.height == 320)
        // Left half red, turned a quarter counter-clockwise (as the ffmpeg CLI shows it): red is now at the bottom.
        try #require(turned.width == 240 && turned.height == 320)
        #expect(turned.meanColor(x: 20, y: 200, width: 200, height: 100).0 > 180)
        #expect(turned.meanColor(x: 20, y: 20, width: 200, height: 100).2 > 180)
        #expect(try await FrameExtractor(url: url).naturalSize() == PixelSize(width: 240, height: 320))
        var options = FrameExtractorConfiguration()
        options.appliesPreferredTrackTransform = false
        let raw = try await FrameExtractor(url: url, options: options).image(at: 1).image
        #expect(raw.width == 320 && raw.height == 240)
        #expect(raw.meanColor(x: 20, y: 20, width: 100, height: 200).0 > 180)
    }

    @Test("a batch yields in request order and decodes each keyframe once")
    func batch() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.counter())
        var results: [(Double, Int?)] = []
        for try await frame in extractor.images(at: [5.3, 1.0, 5.9, 0.5, 4.0]) {
            results.append((frame.requestedTime, frameNumber(frame.image)))
        }
        #expect(results.map(\.0) == [5.3, 1.0, 5.9, 0.5, 4.0])
        #expect(results.map(\.1) == [100, 0, 100, 0, 100])
        #expect(extractor.decodedFrameCount == 2)
    }

    @Test("variable frame rate: the exact frame follows the real timestamps")
    func variableFrameRate() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.variableFrameRate(), options: .exact)
        #expect(frameNumber(try await extractor.image(at: 1.0).image) == 25)
        // After 2 s frames are 0.2 s apart: frame 50 at 2.0 s, 55 at 3.0 s, 57 at 3.4 s.
        #expect(frameNumber(try await extractor.image(at: 3.1).image) == 55)
        #expect(frameNumber(try await extractor.image(at: 3.45).image) == 57)
    }

    @Test("an index at the end of the file works the same")
    func indexAtEnd() async throws {
        let frame = try await FrameExtractor(url: try MediaFixtures.counterIndexAtEnd()).image(at: 7)
        #expect(frameNumber(frame.image) == 150)
    }

    @Test("local HLS playlists")
    func localHLS() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.hls())
        #expect(abs(try await extractor.duration() - 10) < 0.1)
        #expect(frameNumber(try await extractor.image(at: 5.3).image) == 100)
        let exact = FrameExtractor(url: try MediaFixtures.hls(), options: .exact)
        #expect(frameNumber(try await exact.image(at: 7.5).image) == 187)
    }

    /// Iterates `frames` in a task that cancels itself on the first frame; how many frames it got.
    static func framesTakenCancellingOnFirst(_ frames: AsyncThrowingStream<VideoFrame, any Error>) async throws -> Int {
        try await Task {
            var count = 0
            for try await _ in frames {
                count += 1
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return count
        }.value
    }

    @Test("a cancelled batch stops: its consumer gets no more frames, nothing is decoded after, the extractor works")
    func cancellation() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.counter(), options: .exact)
        let times = (0..<400).map { Double($0 % 200) / 20 }
        // The consumer cancels its own task on the first frame: the frames decoded ahead meanwhile never reach it.
        let count = try await Self.framesTakenCancellingOnFirst(extractor.images(at: times))
        #expect(count == 1)
        // The extractor runs one call at a time: once a call that decodes nothing has run, the cancelled batch's
        // work is over, and what it decoded is counted.
        _ = try await extractor.duration()
        let decoded = extractor.decodedFrameCount
        _ = try await extractor.duration()
        #expect(extractor.decodedFrameCount == decoded)
        // The extractor still works afterwards.
        #expect(frameNumber(try await extractor.image(at: 2).image) == 50)
    }
}
