import Filmstrip
import FilmstripMedia
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

@Suite("The .frames engine")
struct FrameThumbnailsTests {
    static func frames(_ size: PixelSize = PixelSize(width: 320, height: 320)) -> FrameThumbnails {
        var configuration = FrameThumbnailsConfiguration()
        configuration.maximumSize = size
        configuration.prefetchCount = 0
        return FrameThumbnails(configuration: configuration)
    }

    /// Serves a master with I-frame playlists written by `IFramePlaylistGenerator` from the served master.
    static func serveWithIFrames(on server: LoopbackServer) async throws -> URL {
        let master = try StreamLayouts.serve(.hlsVariants, on: server)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let summary = try await IFramePlaylistGenerator.generate(from: master, to: directory.url)
        for file in summary.files {
            server.serve("/iframes/\(file.lastPathComponent)", body: Array(try Data(contentsOf: file)))
        }
        return server.url("/iframes/master.m3u8")
    }

    @Test("prefetchCount keyframes are decoded ahead in the scrub direction, and no more", arguments: [0, 1, 3])
    func prefetchCount(count: Int) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.hlsTS, on: server)
        var configuration = FrameThumbnailsConfiguration()
        configuration.prefetchCount = count
        let frames = FrameThumbnails(configuration: configuration)
        try await frames.load(url: url)
        _ = try #require(try await frames.thumbnail(at: 0.5))
        // Segments of 2 s, a keyframe each: the request reads the first, the prefetch the next `count`.
        let segments = { Set(server.requests.map(\.path).filter { $0.hasSuffix(".ts") }).count }
        _ = await eventually { segments() >= 1 + count }
        // The chain is over once it has its count: nothing more comes.
        await frames.settled()
        #expect(segments() == 1 + count, "\(server.requests.map(\.path))")
    }

    @Test("an HLS master with I-frame playlists: only the keyframe's range and its map are fetched")
    func iFramePlaylist() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try await Self.serveWithIFrames(on: server)
        let before = Set(server.requests.map { "\($0.path) \($0.headers["range"] ?? "")" })
        let frames = Self.frames()
        try await frames.load(url: url)
        #expect(frames.source == .iFramePlaylist)
        let thumbnail = try #require(try await frames.thumbnail(at: 5.1))
        #expect(thumbnail.timeStampStart == 4 && thumbnail.timeStampEnd == 6 && thumbnail.region == nil)
        #expect(frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == 100)
        let media = server.requests.filter {
            $0.path.hasSuffix(".ts") && !before.contains("\($0.path) \($0.headers["range"] ?? "")")
        }
        #expect(media.count == 2 && media.allSatisfy { $0.headers["range"] != nil }, "\(media.map(\.target))")
        // Media bytes: at most 1.5x the keyframe's range plus its map.
        guard
            case .media(let playlist) = try HLSPlaylistParser().parse(
                Data(
                    try await URLSessionDataLoader().load(
                        server.url("/iframes/index-iframes.m3u8"), configuration: .init()
                    ).data),
                url: server.url("/iframes/index-iframes.m3u8"))
        else { return }
        let entry = playlist.segments[2]
        let needed = (entry.byteRange?.count ?? 0) + (entry.map?.byteRange?.count ?? 0)
        let sent = media.reduce(0) { total, request in
            total + Int(request.headers["range"].flatMap(Self.rangeLength) ?? 0)
        }
        #expect(Double(sent) <= 1.5 * Double(needed), "\(sent) for \(needed)")
        let last = try #require(try await frames.thumbnail(at: 9.9))
        #expect(last.timeStampStart == 8 && frames.isLastKeyframe(last))
    }

    @Test("TS I-frame ranges after their resource's PAT/PMT, no EXT-X-MAP: the tables come from the resource's head")
    func iFrameRangesWithoutTables() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try await Self.serveWithIFrames(on: server)
        // The generator's keyframe ranges start at the keyframe's PES: without their maps they hold no PAT/PMT, as
        // Shaka Packager writes them. One small range per resource reads its tables.
        let playlistURL = server.url("/iframes/index-iframes.m3u8")
        let text = String(
            decoding: try await URLSessionDataLoader().load(playlistURL, configuration: .init()).data, as: UTF8.self)
        let stripped = text.split(separator: "\n").filter { !$0.hasPrefix("#EXT-X-MAP") }.joined(separator: "\n")
        #expect(stripped != text)
        server.serve("/iframes/index-iframes.m3u8", text: stripped + "\n")
        let before = server.requests.count
        let frames = Self.frames()
        try await frames.load(url: url)
        #expect(frames.source == .iFramePlaylist)
        let thumbnail = try #require(try await frames.thumbnail(at: 5.1))
        #expect(thumbnail.timeStampStart == 4 && thumbnail.timeStampEnd == 6)
        #expect(frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == 100)
        let media = server.requests.dropFirst(before).filter { $0.path.hasSuffix(".ts") }
        let heads = media.filter { ($0.headers["range"] ?? "").hasPrefix("bytes=0-") }
        #expect(media.count == 2 && heads.count == 1, "\(media.map { "\($0.target) \($0.headers["range"] ?? "")" })")
        #expect(heads.allSatisfy { (Self.rangeLength($0.headers["range"] ?? "") ?? .max) <= 16 * 188 })
    }

    static func rangeLength(_ header: String) -> Int64? {
        let parts = header.dropFirst("bytes=".count).split(separator: "-")
        guard parts.count == 2, let a = Int64(parts[0]), let b = Int64(parts[1]) else { return nil }
        return b - a + 1
    }

    @Test(
        "segments (TS and fMP4, HLS and DASH) when there is no I-frame playlist",
        arguments: [
            StreamLayout.hlsTS, .hlsFMP4, .dashTimeline, .hlsDiscontinuity,
        ])
    func segments(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let frames = Self.frames()
        try await frames.load(url: try StreamLayouts.serve(layout, on: server))
        #expect(frames.source == .segments)
        // The I-frame look and the segments share the manifest: each playlist or MPD fetched once.
        let manifests = server.requests.map(\.path).filter { $0.hasSuffix(".m3u8") || $0.hasSuffix(".mpd") }
        #expect(!manifests.isEmpty && Set(manifests).count == manifests.count, "\(manifests)")
        for t in [0.5, 5.1, 7.9] {
            let thumbnail = try #require(try await frames.thumbnail(at: t))
            let (source, time) = layout.source(at: t)
            let key = (time / 2).rounded(.down) * 2
            #expect(abs(thumbnail.timeStampStart - (t - time + key)) < 0.002, "\(layout) t=\(t)")
            #expect(
                frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == Int((key * source.frameRate).rounded()))
            // Asked again: from memory, nothing decoded.
            let decoded = frames.decodedKeyframes
            #expect(frames.getThumbnail(atTimestamp: t)?.timeStampStart == thumbnail.timeStampStart)
            #expect(frames.decodedKeyframes == decoded)
        }
    }

    /// Serves ``MediaFixtures/largeHLS()`` under `/hls`: its playlist file and URL.
    static func serveLargeHLS(on server: LoopbackServer) throws -> (file: URL, url: URL) {
        let playlist = try MediaFixtures.largeHLS()
        try StreamLayouts.serveDirectory(playlist.deletingLastPathComponent(), on: server, prefix: "/hls")
        return (playlist, server.url("/hls/" + playlist.lastPathComponent))
    }

    @Test("TS segments without an I-frame playlist: each read up to the time asked, in ranges, never twice")
    func segmentHeads() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (playlist, url) = try Self.serveLargeHLS(on: server)
        let frames = Self.frames()
        try await frames.load(url: url)
        #expect(frames.source == .segments)
        // Segment 2 holds 12 to 18 s, keyframes at 12, 14 and 16.
        let path = "/hls/segment-2.ts"
        let size = try #require(
            try FileManager.default.attributesOfItem(
                atPath: playlist.deletingLastPathComponent().appendingPathComponent("segment-2.ts").path)[.size] as? Int
        )
        let reference = try MediaFixtures.large()
        var read = 0
        for (t, key) in [(12.4, 12.0), (15.1, 14.0), (17.9, 16.0)] {
            let thumbnail = try #require(try await frames.thumbnail(at: t))
            #expect(abs(thumbnail.timeStampStart - key) < 0.01, "t=\(t): \(thumbnail.timeStampStart)")
            #expect(thumbnail.timeStampEnd > t, "the keyframe shows at least as far as t")
            let image = try ImageCodec.decode(thumbnail.imageData).0
            #expect(try ReferenceFrames.psnr(of: image, against: reference, at: key) >= 30, "t=\(t)")
            let requests = server.requests.filter { $0.path == path }
            #expect(requests.allSatisfy { $0.headers["range"] != nil }, "\(requests.map(\.target))")
            let sent = server.bytesSent(path)
            #expect(sent > read, "t=\(t) reads on from where the last read stopped")
            read = sent
            if t == 12.4 {
                // 0.4 s of a 6 s segment asked: well under half of it read.
                #expect(sent < size / 2, "\(sent) of \(size) bytes for 12.4 s")
            }
        }
        // Every byte of the segment at most once.
        #expect(read <= size, "\(read) bytes sent of a \(size)-byte segment")
    }

    @Test("segmentKeyframe .first: a time inside a TS segment shows its first keyframe, from that keyframe's bytes")
    func segmentFirstKeyframe() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let (playlist, url) = try Self.serveLargeHLS(on: server)
        var configuration = FrameThumbnailsConfiguration()
        configuration.prefetchCount = 0
        configuration.segmentKeyframe = .first
        let frames = FrameThumbnails(configuration: configuration)
        try await frames.load(url: url)
        let reference = try MediaFixtures.large()
        for (segment, t) in [(2, 15.1), (3, 22.5), (5, 30.2)] {
            let path = "/hls/segment-\(segment).ts"
            let thumbnail = try #require(try await frames.thumbnail(at: t))
            let start = Double(segment) * 6
            #expect(abs(thumbnail.timeStampStart - start) < 0.01 && abs(thumbnail.timeStampEnd - (start + 6)) < 0.01)
            #expect(
                try ReferenceFrames.psnr(
                    of: try ImageCodec.decode(thumbnail.imageData).0, against: reference, at: start) >= 30)
            let size = try #require(
                try FileManager.default.attributesOfItem(
                    atPath: playlist.deletingLastPathComponent().appendingPathComponent("segment-\(segment).ts").path)[
                        .size] as? Int)
            // The keyframe and a little after it: a fifth of a segment that holds three keyframes at most.
            #expect(server.bytesSent(path) < size / 5, "\(server.bytesSent(path)) of \(size)")
            // Asked again anywhere in the segment: from memory.
            let decoded = frames.decodedKeyframes
            #expect(try await frames.thumbnail(at: start + 5.5)?.timeStampStart == thumbnail.timeStampStart)
            #expect(frames.decodedKeyframes == decoded)
        }
    }

    @Test("a progressive MP4 with its index at the end: the index and the keyframe's bytes, under 5 % of the file")
    func fileIndex() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let file = try MediaFixtures.largeIndexAtEnd()
        let body = Array(try Data(contentsOf: file))
        server.serve("/movie.mp4", body: body)
        let frames = Self.frames()
        try await frames.load(url: server.url("/movie.mp4"))
        #expect(frames.source == .fileIndex)
        let thumbnail = try #require(try await frames.thumbnail(at: 31.3))
        #expect(thumbnail.timeStampStart == 30 && abs(thumbnail.timeStampEnd - 32) < 0.001)
        #expect(
            Double(server.bytesSent("/movie.mp4")) <= 0.05 * Double(body.count),
            "\(server.bytesSent("/movie.mp4")) of \(body.count)")
        let image = try ImageCodec.decode(thumbnail.imageData).0
        #expect(try ReferenceFrames.psnr(of: image, against: file, at: 30) >= 30)
    }

    @Test(
        "a damaged I-frame playlist (a range past its segment, or one TS packet off) is an error, never a wrong picture",
        arguments: ["past", "off"])
    func damaged(_ damage: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try await Self.serveWithIFrames(on: server)
        let path = "/iframes/index-iframes.m3u8"
        var text = String(
            decoding: try await URLSessionDataLoader().load(server.url(path), configuration: .init()).data,
            as: UTF8.self)
        var lines = text.split(separator: "\n").map(String.init)
        let index = try #require(lines.indices.filter { lines[$0].hasPrefix("#EXT-X-BYTERANGE:") }.dropFirst(2).first)
        let parts = lines[index].dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@").compactMap { Int($0) }
        lines[index] = "#EXT-X-BYTERANGE:\(parts[0])@\(damage == "past" ? 10_000_000 : parts[1] + 188)"
        text = lines.joined(separator: "\n") + "\n"
        server.serve(path, text: text)
        let frames = Self.frames()
        try await frames.load(url: url)
        do {
            let thumbnail = try await frames.thumbnail(at: 5)
            // One packet off may still hold a decodable picture only if it is the right one.
            if let thumbnail {
                #expect(frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == 100)
            }
        } catch {
            #expect(!"\(error)".isEmpty)
        }
    }

    final class Sink: ThumbnailOutput, @unchecked Sendable {
        // Guarded by `lock`.
        let lock = NSLock()
        var images: [PixelBuffer] = []
        let size = PixelSize(width: 64, height: 64)
        func render(_ image: PixelBuffer, thumbnail: Thumbnail) { lock.withLock { images.append(image) } }
    }

    @Test("scrubbing: 200 requests over a 2-hour stream; superseded ones complete as cancelled, the last is right")
    func scrub() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        // Two hours of 2 s segments cycling through the five segments of the TS layout.
        let directory = try StreamLayouts.directory(.hlsTS)
        for n in 0..<5 {
            server.serve(
                "/long/seg_00\(n).ts",
                body: Array(try Data(contentsOf: directory.appendingPathComponent("seg_00\(n).ts"))))
        }
        var playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for k in 0..<3600 {
            playlist += (k > 0 && k % 5 == 0 ? "#EXT-X-DISCONTINUITY\n" : "") + "#EXTINF:2.0,\nseg_00\(k % 5).ts\n"
        }
        server.serve("/long/index.m3u8", text: playlist + "#EXT-X-ENDLIST\n")
        var configuration = FrameThumbnailsConfiguration()
        configuration.memoryLimit = 2 << 20
        let frames = FrameThumbnails(configuration: configuration)
        try await frames.load(url: server.url("/long/index.m3u8"))
        let results = Mutex<[Int: Result<Thumbnail?, any Error>]>([:])
        let sink = Sink()
        var seed: UInt64 = 7
        var times: [Double] = []
        for i in 0..<200 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1
            let t = i == 199 ? 3605.0 : Double(seed >> 11) / Double(1 << 53) * 7200
            times.append(t)
            frames.getThumbnail(atTimestamp: t, renderOn: sink) { result in results.withLock { $0[i] = result } }
        }
        _ = await eventually { results.withLock { $0.count } >= 200 }
        let all = results.withLock { $0 }
        #expect(all.count == 200)
        guard case .success(let last?) = all[199] else {
            Issue.record("the last request failed: \(String(describing: all[199]))")
            return
        }
        // 3605 s is 5 s into a cycle that starts at 3600 s: the keyframe at 4 s of the source.
        #expect(last.timeStampStart == 3604)
        #expect(frameNumber(try ImageCodec.decode(last.imageData).0) == 100)
        var cancelled = 0
        for (i, result) in all where i != 199 {
            switch result {
            case .failure(let error as ThumbnailsError) where error.kind == .cancelled: cancelled += 1
            case .success: break
            case .failure(let error): Issue.record("request \(i) at \(times[i]): \(error)")
            }
        }
        #expect(cancelled >= 100, "\(cancelled) of 199 superseded requests were cancelled")
        #expect(frames.memoryUsage <= configuration.memoryLimit)
        #expect(sink.lock.withLock { sink.images.last?.width } == 64)
    }
}

@Suite("The .frames engine from the SDK")
struct FrameEngineSDKTests {
    @Test("Filmstrip.shared.thumbnails(engine: .frames) hands out a frames engine")
    func sdk() async throws {
        let frames = Filmstrip.shared.thumbnails(engine: .frames)
        try await frames.load(url: try MediaFixtures.counter())
        #expect(frames.source == .fileIndex)
        #expect(try await frames.thumbnail(at: 3)?.timeStampStart == 2)
        let tracks = Filmstrip.shared.thumbnails(engine: .tracks)
        #expect(!tracks.isLoaded)
    }

    @Test("thumbnails(for: player, engine: .frames) previews the player's content with the player's headers")
    func forPlayer() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try await FrameThumbnailsTests.serveWithIFrames(on: server)
        let player = Filmstrip.shared.player()
        defer { player.stop() }
        await #expect(throws: MediaError.self) { try await Filmstrip.shared.thumbnails(for: player, engine: .frames) }
        var config = PlayerConfiguration(with: url)
        config.network = NetworkConfiguration(httpAdditionalHeaders: ["x-session": "s-42"])
        player.load(config: config)
        #expect(player.contentURL == url)
        let frames = try await Filmstrip.shared.thumbnails(for: player, engine: .frames)
        #expect(frames.source == .iFramePlaylist)
        let thumbnail = try #require(try await frames.thumbnail(at: 5.1))
        #expect(thumbnail.timeStampStart == 4 && thumbnail.timeStampEnd == 6)
        #expect(frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == 100)
        // Every request of the frames engine (the I-frame playlist and the keyframe's range) carried the header.
        let engineRequests = server.requests.filter { $0.target.hasPrefix("/iframes/") || $0.headers["range"] != nil }
        #expect(!engineRequests.isEmpty)
        #expect(engineRequests.allSatisfy { $0.headers["x-session"] == "s-42" }, "\(engineRequests.map(\.target))")
    }
}
