import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

/// Every stream layout the ffmpeg CLI's muxers write, over the loopback server: the right frame (by its colour and
/// by PSNR against ffmpeg's own decode of the source), a generated track, and the bytes each answer costs.
@Suite("Streams written by the ffmpeg muxers")
struct StreamLayoutTests {
    /// Times to check per layout (presentation seconds).
    static func times(_ layout: StreamLayout) -> [Double] {
        switch layout {
        case .hlsDiscontinuity: [1.1, 3.9, 5.3]
        case .dashTwoPeriods: [1.1, 9.9, 11.3]
        default: [0.5, 5.1, 9.9]
        }
    }

    @Test("the exact frame at t is the source's frame at t (colour and PSNR ≥ 30 dB)", arguments: StreamLayout.allCases)
    func exactFrames(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let extractor = FrameExtractor(url: url, options: .exact)
        #expect(abs(try await extractor.duration() - layout.duration) < 0.05)
        for t in Self.times(layout) {
            let frame = try await extractor.image(at: t)
            let (source, time) = layout.source(at: t)
            let expected = Int((time * source.frameRate + 1e-6).rounded(.down))
            #expect(frameNumber(frame.image) == expected, "\(layout) t=\(t)")
            #expect(frame.image.width == source.size.width && frame.image.height == source.size.height)
            #expect(abs(frame.actualTime - (t - time + Double(expected) / source.frameRate)) < 0.002)
            // ffmpeg's -ss shows the first frame at or after its time: ask for just before the expected frame.
            let frameStart = max(0, Double(expected) / source.frameRate - 0.002)
            let psnr = try ReferenceFrames.psnr(
                of: frame.image, against: try StreamLayouts.file(source), at: frameStart)
            #expect(psnr >= 30, "\(layout) t=\(t): PSNR \(psnr) dB")
        }
    }

    @Test("the default frame is the keyframe at or before t", arguments: StreamLayout.allCases)
    func keyframes(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let extractor = FrameExtractor(url: url)
        for t in Self.times(layout) {
            let frame = try await extractor.image(at: t)
            let (source, time) = layout.source(at: t)
            let keyTime = (time / 2).rounded(.down) * 2  // a keyframe every 2 s in both sources
            #expect(frame.isKeyframe)
            #expect(abs(frame.actualTime - (t - time + keyTime)) < 0.002, "\(layout) t=\(t)")
            #expect(frameNumber(frame.image) == Int((keyTime * source.frameRate).rounded()), "\(layout) t=\(t)")
        }
    }

    @Test(
        "a frame costs at most 1.5x the manifests, the init data and the one segment", arguments: StreamLayout.allCases)
    func byteBudget(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        _ = try await FrameExtractor(url: url).image(at: 5.1)
        // What the answer needs, from the local copy of the same stream.
        let (sent, manifests) = StreamLayouts.bytesSent(by: server)
        let (segmentBytes, segment) = try await StreamLayouts.segmentBytesNeeded(layout, at: 5.1)
        let needed = segmentBytes + manifests
        #expect(Double(sent) <= 1.5 * Double(needed), "\(layout): \(sent) bytes sent for \(needed) needed")
        // No resource or range asked for twice; every request to a shared file is one Range.
        let asked = server.requests.map { "\($0.path) \($0.headers["range"] ?? "")" }
        #expect(Set(asked).count == asked.count, "\(layout): repeated requests \(asked)")
        let expectedRequests: [StreamLayout: Int] = [
            .hlsTS: 2, .hlsFMP4: 3, .hlsSingleFileTS: 2, .hlsSingleFileFMP4: 3, .hlsDiscontinuity: 2, .hlsVariants: 3,
            .hlsAES: 3, .dashTimeline: 3, .dashNumber: 3, .dashOnDemand: 4, .dashSegmentList: 3, .dashTwoPeriods: 3,
            .dashBaseURLs: 3, .dashTrickMode: 3,
        ]
        #expect(server.requests.count == expectedRequests[layout], "\(layout): \(asked)")
        if segment.byteRange != nil {
            let mediaPath = segment.url.path
            let ranges = server.requests.filter { $0.path == mediaPath }
            #expect(ranges.allSatisfy { $0.headers["range"] != nil }, "\(layout): a whole-file request")
        }
    }

    @Test("a batch fetches each segment and each init section once")
    func batchFetchesOnce() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsSingleFileFMP4, on: server)
        let extractor = FrameExtractor(url: url)
        var got: [Double] = []
        for try await frame in extractor.images(at: [5.5, 0.2, 1.9, 5.1, 9.0, 0.1]) { got.append(frame.requestedTime) }
        #expect(got == [5.5, 0.2, 1.9, 5.1, 9.0, 0.1])
        let asked = server.requests.map { "\($0.path) \($0.headers["range"] ?? "")" }
        #expect(Set(asked).count == asked.count)
        // The playlist, the init section, and segments 0, 2 and 4.
        #expect(server.requests.count == 5, "\(asked)")
    }

    @Test(
        "generate makes a track from every layout, each needed segment fetched once", arguments: StreamLayout.allCases)
    func generate(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = PreviewTrackConfiguration()
        options.interval = 1
        let summary = try await PreviewTrackGenerator.generate(from: url, to: directory.url, options: options)
        #expect(summary.thumbnails == Int(layout.duration))
        let asked = server.requests.map { "\($0.path) \($0.headers["range"] ?? "")" }
        #expect(Set(asked).count == asked.count, "\(layout): repeated requests")
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(webVTTTrack: summary.trackURL)
        // Cue [4, 5) holds a keyframe at 4 s of the presentation.
        let thumbnail = try #require(thumbnails.getThumbnail(atTimestamp: 4.2))
        let image = try ImageCodec.decode(thumbnail.imageData).0
        let (source, time) = layout.source(at: 4)
        #expect(frameNumber(image) == Int((time * source.frameRate).rounded()), "\(layout)")
    }
}
