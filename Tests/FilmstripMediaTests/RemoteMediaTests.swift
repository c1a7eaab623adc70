import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("Frame extraction over HTTP")
struct RemoteMediaTests {
    let server: LoopbackServer

    init() throws {
        server = try LoopbackServer()
        server.serve("/counter.mp4", body: Array(try Data(contentsOf: try MediaFixtures.counter())))
        try serve(try MediaFixtures.hls().deletingLastPathComponent(), on: server, prefix: "/hls")
    }

    var playlistPath: String { "/hls/" + ((try? MediaFixtures.hls().lastPathComponent) ?? "") }

    @Test("progressive MP4 over http: keyframe and exact frames, with the configured headers")
    func progressive() async throws {
        var options = FrameExtractorConfiguration()
        options.loading.additionalHeaders = ["X-Session": "abc"]
        let extractor = FrameExtractor(url: server.url("/counter.mp4"), options: options)
        #expect(frameNumber(try await extractor.image(at: 5.3).image) == 100)
        let exact = FrameExtractor(url: server.url("/counter.mp4"), options: .exact)
        #expect(frameNumber(try await exact.image(at: 7.5).image) == 187)
        #expect(server.requests.allSatisfy { $0.target != "/counter.mp4" || $0.headers["range"] != nil })
        #expect(server.requests.contains { $0.headers["x-session"] == "abc" })
    }

    @Test("a frame from the middle of a large file reads a small part of it")
    func bytesRead() async throws {
        let data = try Data(contentsOf: try MediaFixtures.large())
        server.serve("/large.mp4", body: Array(data))
        let extractor = FrameExtractor(url: server.url("/large.mp4"))
        let frame = try await extractor.image(at: 31)
        #expect(frame.actualTime == 30)
        #expect(frame.image.width == 640 && frame.image.height == 360)
        #expect(extractor.bytesRead == server.bytesSent("/large.mp4"))
        #expect(extractor.bytesRead < data.count / 10, "read \(extractor.bytesRead) of \(data.count) bytes")
    }

    @Test("an MPEG-TS file over http (no index: FFmpeg bisects it): the right frame, no byte fetched twice")
    func transportStreamFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("counter.ts")
        try MediaFixtures.run(["-v", "error", "-y", "-i", try MediaFixtures.counter().path, "-c", "copy", file.path])
        let data = try Data(contentsOf: file)
        server.serve("/counter.ts", body: Array(data))
        // 1 s: FFmpeg's bisection of the TS landed past the first keyframe, even from 0 (frame 50, or no frame).
        for (t, exact) in [(5.3, false), (7.5, true), (1.0, true), (1.0, false), (0.5, true)] {
            let before = server.requests.count
            let extractor = FrameExtractor(url: server.url("/counter.ts"), options: exact ? .exact : .init())
            let frame = try await extractor.image(at: t)
            #expect(frameNumber(frame.image) == (exact ? Int((t * 25).rounded(.down)) : Int(t / 2) * 50), "at \(t) s")
            var covered = IndexSet()
            var total = 0
            for request in server.requests.dropFirst(before) where request.path == "/counter.ts" {
                let parts = (request.headers["range"] ?? "").dropFirst("bytes=".count).split(separator: "-")
                guard parts.count == 2, let a = Int(parts[0]), let b = Int(parts[1]) else {
                    Issue.record("a request without a bounded range: \(request.headers)")
                    continue
                }
                let range = a..<min(b + 1, data.count)
                #expect(!covered.intersects(integersIn: range), "bytes \(range) fetched twice at \(t) s")
                covered.insert(integersIn: range)
                total += range.count
            }
            #expect(total <= data.count && extractor.bytesRead <= data.count, "\(total) of \(data.count) at \(t) s")
        }
    }

    @Test("HLS over http: playlist and segments through Filmstrip's loader")
    func hls() async throws {
        let extractor = FrameExtractor(url: server.url(playlistPath))
        #expect(frameNumber(try await extractor.image(at: 5.3).image) == 100)
        #expect(server.requests.contains { $0.target.hasSuffix(".ts") })
        #expect(extractor.bytesRead > 0)
    }
}

@Suite("Frame extraction: bad input")
struct BadMediaTests {
    @Test("a file that is not a video")
    func notVideo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("notes.mp4", text: "these are not the frames you are looking for\n")
        let error = await mediaError { _ = try await FrameExtractor(url: file).image(at: 0) }
        #expect(error?.kind == .invalidMedia)
        #expect(error?.description.contains("notes.mp4") == true)
    }

    @Test("an MP4 cut short before its index")
    func truncated() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let whole = try Data(contentsOf: try MediaFixtures.counterIndexAtEnd())
        let file = try directory.write("cut.mp4", Array(whole.prefix(whole.count * 6 / 10)))
        let error = await mediaError { _ = try await FrameExtractor(url: file).image(at: 1) }
        #expect(error?.kind == .invalidMedia)
    }

    @Test("a file without a video stream")
    func audioOnly() async throws {
        let error = await mediaError { _ = try await FrameExtractor(url: try MediaFixtures.audioOnly()).image(at: 1) }
        #expect(error?.kind == .noVideoStream)
        #expect(error?.message.contains("no video stream") == true)
    }

    @Test("a missing file")
    func missingFile() async {
        let error = await mediaError {
            _ = try await FrameExtractor(url: URL(fileURLWithPath: "/nonexistent/clip.mp4")).image(at: 1)
        }
        #expect(error?.kind == .inputUnavailable)
    }

    @Test("a time past the end, and a negative time")
    func outOfRange() async throws {
        let extractor = FrameExtractor(url: try MediaFixtures.counter())
        let late = await mediaError { _ = try await extractor.image(at: 10.5) }
        #expect(late?.kind == .timeOutOfRange)
        #expect(late?.message.contains("past the end") == true)
        let negative = await mediaError { _ = try await extractor.image(at: -1) }
        #expect(negative?.kind == .timeOutOfRange)
        #expect(frameNumber(try await extractor.image(at: 9).image) == 200)
    }

    @Test("an unreachable URL and a 404")
    func unreachable() async throws {
        let server = try LoopbackServer()
        let missing = server.url("/missing.mp4")
        let notFound = await mediaError { _ = try await FrameExtractor(url: missing).image(at: 1) }
        #expect(notFound?.kind == .inputUnavailable)
        // The HTTP failure is kept as a value, and printed as the chain's cause, not pasted into the message.
        #expect(notFound?.message == "cannot read the input")
        #expect((notFound?.underlying as? LoadingError)?.kind == .httpStatus(404))
        #expect(
            notFound?.description.contains("; caused by: ") == true && notFound?.description.contains("404") == true)
        server.setReachable(false)
        let gone = await mediaError { _ = try await FrameExtractor(url: server.url("/counter.mp4")).image(at: 1) }
        #expect(gone?.kind == .inputUnavailable)
    }

    @Test("progressive reads go through the loading retry policy: a 503 is tried again, a 404 is not")
    func retried() async throws {
        let server = try LoopbackServer()
        server.serve("/counter.mp4", body: Array(try Data(contentsOf: try MediaFixtures.counter())))
        server.fail("/counter.mp4", with: [.status(503)])
        var options = FrameExtractorConfiguration()
        options.loading = LoadingConfiguration(retry: RetryPolicy(maximumAttempts: 2, baseDelay: 0.01))
        let frame = try await FrameExtractor(url: server.url("/counter.mp4"), options: options).image(at: 4)
        #expect(frameNumber(frame.image) == 100)
        server.fail("/counter.mp4", with: [.status(503)])
        options.loading.retry = .none
        let error = await mediaError {
            _ = try await FrameExtractor(url: server.url("/counter.mp4"), options: options).image(at: 4)
        }
        #expect(error?.kind == .inputUnavailable)
        #expect(error?.description.contains("503") == true, "\(String(describing: error))")
    }

    @Test("a cancelled call stops a progressive read that waits on a stalled server at once, not at its timeout")
    func cancelledRead() async throws {
        let server = try LoopbackServer()
        server.serve("/counter.mp4", body: Array(try Data(contentsOf: try MediaFixtures.counter())))
        server.fail("/counter.mp4", with: [.delay(120)])
        var options = FrameExtractorConfiguration()
        options.loading = LoadingConfiguration(requestTimeout: 100, resourceTimeout: 100, retry: .none)
        let extractor = FrameExtractor(url: server.url("/counter.mp4"), options: options)
        let call = Task { try await extractor.image(at: 4) }
        _ = await eventually { server.requestCount("/counter.mp4") >= 1 }
        call.cancel()
        let error = await mediaError { _ = try await call.value }
        #expect(error?.kind == .cancelled, "\(String(describing: error))")
    }

    @Test("a server slower than the timeout fails, it does not hang")
    func slowServer() async throws {
        let server = try LoopbackServer()
        server.serve("/counter.mp4", body: Array(try Data(contentsOf: try MediaFixtures.counter())))
        server.fail("/counter.mp4", with: [.delay(120)])
        var options = FrameExtractorConfiguration()
        options.loading = LoadingConfiguration(requestTimeout: 0.5, resourceTimeout: 2, retry: .none)
        let started = Date()
        let error = await mediaError {
            _ = try await FrameExtractor(url: server.url("/counter.mp4"), options: options).image(at: 1)
        }
        #expect(error?.kind == .timedOut)
        // Not before the request timeout; the timed-out kind says it was not the server's 120 s delay ending.
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 0.45, "failed after \(elapsed) s")
    }

    @Test("a missing HLS segment is an error naming the segment, not a frame from elsewhere")
    func missingSegment() async throws {
        let server = try LoopbackServer()
        let playlist = try MediaFixtures.hls()
        try serve(playlist.deletingLastPathComponent(), on: server, prefix: "/hls")
        server.remove("/hls/segment-2.ts")
        let extractor = FrameExtractor(url: server.url("/hls/" + playlist.lastPathComponent))
        #expect(frameNumber(try await extractor.image(at: 1).image) == 0)
        let error = await mediaError { _ = try await extractor.image(at: 5.3) }
        #expect(error?.kind == .inputUnavailable)
        #expect(error?.message.contains("segment-2.ts") == true, "\(String(describing: error))")
    }

    @Test("a missing local HLS segment too")
    func missingLocalSegment() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let playlist = try MediaFixtures.hls()
        for file in try MediaFixtures.files(in: playlist.deletingLastPathComponent())
        where file.lastPathComponent != "segment-2.ts" {
            try directory.write(file.lastPathComponent, Array(try Data(contentsOf: file)))
        }
        let error = await mediaError {
            _ = try await FrameExtractor(url: directory.file(playlist.lastPathComponent)).image(at: 5.3)
        }
        #expect(error?.kind == .inputUnavailable)
        #expect(error?.message.contains("segment-2.ts") == true, "\(String(describing: error))")
    }

    @Test("a remote playlist may not reach local files")
    func remotePlaylistLocalSegment() async throws {
        let server = try LoopbackServer()
        let segment = try MediaFixtures.hls().deletingLastPathComponent().appendingPathComponent("segment-0.ts")
        server.serve(
            "/evil.m3u8",
            text:
                "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:2.0,\n\(segment.absoluteString)\n#EXT-X-ENDLIST\n",
            contentType: "application/vnd.apple.mpegurl")
        let error = await mediaError { _ = try await FrameExtractor(url: server.url("/evil.m3u8")).image(at: 0) }
        #expect(error != nil)
        #expect(error?.kind == .invalidArgument, "\(String(describing: error))")
    }
}
