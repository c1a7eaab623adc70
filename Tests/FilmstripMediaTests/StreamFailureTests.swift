import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

/// Live DASH against an origin that answers 404 outside each segment's availability window.
@Suite("Live DASH")
struct LiveDASHTests {
    /// Chunk requests the origin answered with 404.
    static func notFound(_ server: LoopbackServer) -> [String] {
        server.responseStatuses.filter { $0.target.contains("chunk-") && $0.status == 404 }.map(\.target)
    }

    @Test("frames near the live edge are right and no request gets a 404", arguments: [false, true])
    func liveEdge(skewedWithUTCTiming: Bool) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        // The origin and the extractor read one clock that moves only when the test says: the window stands still
        // however long the decodes take.
        let clock = TestClock()
        let live = try SimulatedLiveDASH(
            server: server, clockSkew: skewedWithUTCTiming ? 3600 : 0, utcTiming: skewedWithUTCTiming,
            now: clock.wallClock())
        var options = FrameExtractorConfiguration()
        options.wallClock = clock.wallClock()
        let extractor = FrameExtractor(url: live.url, options: options)
        let edge = try await extractor.duration()
        // Never ahead of the origin (that would be a 404), and at most its suggested delay behind it.
        let newest = Double(live.newestSegment)
        #expect(edge <= newest + 1 && edge >= newest - 4, "edge \(edge), newest \(newest)")
        for t in [edge - 0.5, edge - 3.2, edge - 9.7] {
            let frame = try await extractor.image(at: t)
            let second = t.rounded(.down)
            #expect(abs(frame.actualTime - second) < 0.002, "t=\(t): \(frame.actualTime)")
            #expect(frameNumber(frame.image) == (Int(second) % 10) * 25, "t=\(t)")
        }
        #expect(Self.notFound(server).isEmpty, "404s: \(Self.notFound(server))")
        // Outside the window: a clear error, and still no request for a missing segment.
        let early = await mediaError { _ = try await extractor.image(at: edge - 60) }
        #expect(early?.kind == .timeOutOfRange && early?.message.contains("before the live window") == true)
        let late = await mediaError { _ = try await extractor.image(at: edge + 30) }
        #expect(late?.kind == .timeOutOfRange && late?.message.contains("not available yet") == true)
        #expect(Self.notFound(server).isEmpty)
    }

    @Test("with the server's clock an hour ahead and no UTCTiming, nothing is asked for too early")
    func skewWithoutTiming() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let live = try SimulatedLiveDASH(server: server, clockSkew: 3600)
        let error = await mediaError { _ = try await FrameExtractor(url: live.url).image(at: 10) }
        #expect(error?.kind == .timeOutOfRange)
        #expect(Self.notFound(server).isEmpty)
    }

    @Test("the MPD is refreshed per minimumUpdatePeriod and the live edge moves")
    func refresh() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let live = try SimulatedLiveDASH(server: server, now: clock.wallClock())
        var options = FrameExtractorConfiguration()
        options.wallClock = clock.wallClock()
        let extractor = FrameExtractor(url: live.url, options: options)
        let first = try await extractor.duration()
        // minimumUpdatePeriod is 2 s: not stale before, refreshed after.
        await clock.advance(by: .milliseconds(1900))
        #expect(try await extractor.duration() == first)
        #expect(server.requestCount("/dash-live/live.mpd") == 1)
        await clock.advance(by: .milliseconds(400))
        let second = try await extractor.duration()
        #expect(second >= first + 2, "\(first) -> \(second)")
        #expect(server.requestCount("/dash-live/live.mpd") == 2)
    }
}

/// Bad streams: each a clear error, never a crash or a hang.
@Suite("Stream failures")
struct StreamFailureTests {
    static func serveMPD(_ text: String, on server: LoopbackServer) -> URL {
        server.serve("/bad/manifest.mpd", text: text, contentType: "application/dash+xml")
        return server.url("/bad/manifest.mpd")
    }

    @Test("a 404 segment is an error that names its URL")
    func missingSegment() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(.dashNumber, on: server)
        server.remove("/dashNumber/chunk-0-00003.m4s")
        let error = await mediaError { _ = try await FrameExtractor(url: url).image(at: 5) }
        #expect(error?.kind == .inputUnavailable)
        #expect(error?.message.contains("404") == true)
        #expect(
            error?.url?.absoluteString.hasSuffix("/dashNumber/chunk-0-00003.m4s") == true,
            "\(String(describing: error))")
    }

    @Test(
        "a manifest, media playlist or segment index that fails once is fetched again by the next call, not kept",
        arguments: [StreamLayout.hlsVariants, .dashOnDemand])
    func failureNotKept(_ layout: StreamLayout) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = try StreamLayouts.serve(layout, on: server)
        let client = StreamingClient(url: url, configuration: LoadingConfiguration(retry: .none))
        server.fail(url.path, with: [.status(503)])
        await #expect(throws: StreamingError.self) { _ = try await client.presentation() }
        let presentation = try await client.presentation()
        #expect(server.requestCount(url.path) == 2)
        let video = try #require(presentation.periods.first?.tracks.first { $0.kind == .video }?.renditions.first)
        let listed: URL =
            switch video.segments {
            case .mediaPlaylist(let playlist): playlist
            case .segmentBase(let index): index.url
            default: url
            }
        #expect(listed != url, "\(video.segments)")
        server.fail(listed.path, with: [.status(503)])
        await #expect(throws: StreamingError.self) { _ = try await client.segmentList(of: video, in: presentation) }
        let list = try await client.segmentList(of: video, in: presentation)
        #expect(!list.references.isEmpty && server.requestCount(listed.path) == 2)
    }

    @Test("a remote manifest that points at a local file is refused", arguments: ["m3u8", "mpd"])
    func remoteToLocal(_ kind: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let local = try StreamLayouts.directory(.hlsTS).appendingPathComponent("seg_000.ts")
        let url: URL
        if kind == "m3u8" {
            server.serve(
                "/evil/index.m3u8",
                text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n\(local.absoluteString)\n#EXT-X-ENDLIST\n",
                contentType: "application/vnd.apple.mpegurl")
            url = server.url("/evil/index.m3u8")
        } else {
            url = Self.serveMPD(
                """
                <MPD type="static" mediaPresentationDuration="PT2S"><BaseURL>\(local.deletingLastPathComponent().absoluteString)</BaseURL>
                <Period><AdaptationSet mimeType="video/mp2t"><SegmentList duration="2"><SegmentURL media="seg_000.ts"/></SegmentList>
                <Representation id="v" bandwidth="1"/></AdaptationSet></Period></MPD>
                """, on: server)
        }
        let error = await mediaError { _ = try await FrameExtractor(url: url).image(at: 1) }
        #expect(error?.kind == .invalidArgument)
        #expect(error?.message.contains("local file") == true, "\(String(describing: error))")
    }

    @Test(
        "malformed, hostile and protected MPDs are clear errors",
        arguments: [
            ("<MPD type=\"static\"><Period></MPD>", "does not close"),
            (
                #"<MPD type="static" mediaPresentationDuration="PT1S"><Period><AdaptationSet><Representation id="v" bandwidth="lots"/></AdaptationSet></Period></MPD>"#,
                "Representation@bandwidth"
            ),
            ("<?xml version=\"1.0\"?><!DOCTYPE MPD [<!ENTITY a \"aaaa\">]><MPD/>", "DTD"),
            (
                #"<MPD type="static"><Period><AdaptationSet contentType="image"><ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011"/><Representation id="v" bandwidth="1"/></AdaptationSet></Period></MPD>"#,
                "unsupported: protected content"
            ),
        ])
    func badMPD(_ text: String, _ expected: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let url = Self.serveMPD(text, on: server)
        let error = await mediaError { _ = try await FrameExtractor(url: url).image(at: 0) }
        #expect(error?.kind == .invalidMedia)
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
    }

    @Test("a manifest over the size bound is refused", arguments: ["m3u8", "mpd"])
    func tooLarge(_ kind: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let path = "/big/manifest.\(kind)"
        let filler = String(repeating: kind == "mpd" ? "<!-- padding -->\n" : "# padding\n", count: 2_000)
        server.serve(path, text: (kind == "mpd" ? "<MPD type=\"static\">" : "#EXTM3U\n") + filler)
        let client = StreamingClient(url: server.url(path), limits: StreamingLimits(maximumManifestBytes: 10_000))
        do {
            _ = try await client.presentation()
            Issue.record("a manifest over the bound was accepted")
        } catch let error as StreamingError {
            #expect(error.kind == .tooLarge, "\(error)")
        }
    }
}

@Suite("Stream edge cases")
struct StreamEdgeCaseTests {
    @Test("a presentation with no segments is a clear error for frames, size and generation")
    func empty() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        server.serve(
            "/empty/index.m3u8", text: "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-ENDLIST\n",
            contentType: "application/vnd.apple.mpegurl")
        let url = server.url("/empty/index.m3u8")
        let frame = await mediaError { _ = try await FrameExtractor(url: url).image(at: 0) }
        #expect(frame?.kind == .invalidMedia && frame?.message.contains("no segments") == true)
        let size = await mediaError { _ = try await FrameExtractor(url: url).naturalSize() }
        #expect(size?.kind == .invalidMedia)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let generated = await mediaError { _ = try await PreviewTrackGenerator.generate(from: url, to: directory.url) }
        #expect(generated != nil)
    }
}
