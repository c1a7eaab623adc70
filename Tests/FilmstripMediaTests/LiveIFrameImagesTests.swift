import Filmstrip
import FilmstripFormats
import FilmstripMedia
import FilmstripStreaming
import FilmstripTesting
import Foundation
import Testing

/// The live I-frame image sequence (`iframe-images` with `--live`), on the simulated live origin and the test clock:
/// one entry per tile, each picture a fragment of its sheet's media file, a tile with no picture a gap, and the
/// sequence read back (live and ended) by Filmstrip's reader.
@Suite("Live I-frame image sequences")
struct LiveIFrameImagesTests {
    /// One entry of the playlist: its time on the playlist's own timeline, whether it is a gap, its file and range.
    struct Entry {
        var start: Double
        var gap: Bool
        var uri: URL
        var range: Range<Int>?
    }

    static func entries(_ directory: URL) throws -> (playlist: HLSMediaPlaylist, entries: [Entry]) {
        let url = directory.appendingPathComponent(ImageIFrameSequence.playlistName)
        guard case .media(let media) = try HLSPlaylistParser().parse(Data(contentsOf: url), url: url) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        var time = 0.0
        var entries: [Entry] = []
        for segment in media.segments {
            let range = segment.byteRange.map { Int($0.lowerBound)..<Int($0.upperBound) }
            entries.append(Entry(start: time, gap: segment.gap, uri: segment.uri, range: range))
            time += segment.duration
        }
        return (media, entries)
    }

    /// Every entry that is not a gap names a file that is there, with its range inside it, holding one JPEG; the map
    /// is the whole initialisation file and describes `mjpg` samples.
    static func checkFiles(_ directory: URL) throws {
        let (media, entries) = try Self.entries(directory)
        #expect(media.iFramesOnly)
        let map = try #require(media.segments.first?.map)
        #expect(map.uri.lastPathComponent == LivePreviewTrackWriter.iFrameImagesInitialization)
        let initialization = try Data(contentsOf: map.uri)
        #expect(map.byteRange == 0..<Int64(initialization.count))
        #expect(ImageIFrameSequence.describesImages(initialization: initialization))
        for entry in entries where !entry.gap {
            let data = try Data(contentsOf: entry.uri)
            let range = try #require(entry.range)
            #expect(range.upperBound <= data.count, "\(entry.uri.lastPathComponent) \(range) of \(data.count)")
            #expect(throws: Never.self) { try ImageIFrameSequence.image(inFragment: data.subdata(in: range)) }
        }
    }

    /// Runs the independent checker (`Tests/Interop/iframe_images.py`, written from Apple's appendix and RFC 8216)
    /// over a live playlist; its report.
    static func independentCheck(_ playlist: URL) throws -> (passed: Bool, report: String) {
        let checker = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Interop/iframe_images.py")
        let run = try CommandRun(["python3", checker.path, playlist.path, "--live"])
        return (run.status == 0, run.output)
    }

    /// Over HTTP, a player's reload of the live sequence reads the playlist again and nothing else: the map was
    /// fetched once, by the first read, to learn its samples are images.
    static func reloadsWithoutTheMap(_ directory: URL, served server: LoopbackServer) async throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where name.hasPrefix("iframe-images") {
            server.serve("/seq/" + name, body: Array(try Data(contentsOf: directory.appending(path: name))))
        }
        let url = server.url("seq/" + ImageIFrameSequence.playlistName)
        let client = StreamingClient(url: url)
        let first = try await client.imageTrack(
            manifest: Data(contentsOf: directory.appending(path: ImageIFrameSequence.playlistName)))
        let map = "/seq/" + LivePreviewTrackWriter.iFrameImagesInitialization
        #expect(server.requestCount(map) == 1)
        let again = try await client.imageTrack(
            manifest: Data(contentsOf: directory.appending(path: ImageIFrameSequence.playlistName)),
            previous: first.refresh)
        #expect(again.track.format == .iFrameImages && again.track.cues.count == first.track.cues.count)
        #expect(server.requestCount(map) == 1, "\(server.requests.map(\.target))")
    }

    @Test("one entry per tile, each picture its tile's frame, gaps where the source had none, sheets' files retired")
    func writesAndReads() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let stream = try LiveGenerationTests.streamWithGaps(server: server, clock: clock)
        let output = try TemporaryDirectory(prefix: "filmstrip-live-iframes")
        defer { output.remove() }
        var configuration = LiveGenerationTests.configuration(clock: clock)
        configuration.preview.formats = [.vtt, .iframeImages]
        configuration.window = 16
        let generator = LivePreviewTrackGenerator(
            source: stream.url, directory: output.url, configuration: configuration)
        // Live: stop after 8 s and read what is published, as a player reloading the playlist would.
        let before = try await LiveGenerationTests.drive(generator, clock: clock, seconds: 8, stop: true)
        #expect(before.last?.ended == false)
        try Self.checkFiles(output.url)
        let url = output.file(ImageIFrameSequence.playlistName)
        let liveCheck = try Self.independentCheck(url)
        #expect(liveCheck.passed && liveCheck.report.contains("0 problems, 4 images"), "\(liveCheck.report)")
        let (live, liveEntries) = try Self.entries(output.url)
        #expect(live.isLive && live.mediaSequence == 2, "sequence \(live.mediaSequence)")
        let reading = try await StreamingClient(url: url).imageTrack(manifest: Data(contentsOf: url))
        #expect(reading.track.format == .iFrameImages && reading.refresh != nil)
        #expect(reading.track.cues.count == liveEntries.filter { !$0.gap }.count)
        try await Self.reloadsWithoutTheMap(output.url, served: server)
        // Then to the end.
        let after = try await LiveGenerationTests.drive(generator, clock: clock, seconds: 40)
        #expect(after.last?.ended == true)
        try Self.checkFiles(output.url)
        let endCheck = try Self.independentCheck(url)
        #expect(endCheck.passed && endCheck.report.contains("0 problems, 5 images"), "\(endCheck.report)")
        // The checker is no rubber stamp: an entry moved one byte into its file fails it.
        let text = try String(contentsOf: url, encoding: .utf8)
        let moved = try #require(text.range(of: "@0\n"))
        let broken = output.file("broken.m3u8")
        try Data(text.replacingCharacters(in: moved, with: "@1\n").utf8).write(to: broken)
        #expect(try !Self.independentCheck(broken).passed)
        let (ended, entries) = try Self.entries(output.url)
        #expect(!ended.isLive)
        // The last 16 s of the track: sheets 5 to 8, [16, 32) s, two tiles each; sheet 5 a gap, which leads and is
        // left out (the first entry is the tile at 20 s, number 10), and 24 s missing.
        #expect(ended.mediaSequence == 10, "sequence \(ended.mediaSequence)")
        #expect(entries.map(\.gap) == [false, false, true, false, false, false], "\(entries.map(\.gap))")
        #expect(entries.allSatisfy { $0.start.truncatingRemainder(dividingBy: 2) == 0 })
        // Sheets that left the window (2 to 4) retire their media files with the sheets (deleted after the delay
        // players need, which this short stream does not reach); a gap sheet has none.
        let files = try FileManager.default.contentsOfDirectory(atPath: output.url.path)
        let state = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: output.file(".filmstrip-live.json")))
                as? [String: Any])
        let retired = Set(((state["retired"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
        for n in 2...4 {
            #expect(retired.contains(LivePreviewTrackWriter.iFrameImagesMedia(Int64(n))), "\(retired.sorted())")
        }
        #expect(!files.contains(LivePreviewTrackWriter.iFrameImagesMedia(5)), "a gap sheet has no media file")
        // Each picture is its tile's frame, read through the reader (its timeline starts at the first entry, 20 s).
        let thumbnails = TrackThumbnails(configuration: LiveGenerationTests.readerConfiguration())
        try await thumbnails.load(track: url)
        for (k, entry) in entries.enumerated() {
            let t = 20 + entry.start
            let found = try await thumbnails.thumbnail(at: entry.start + 0.5)
            guard !entry.gap else {
                #expect(found == nil, "t=\(t) has no picture")
                continue
            }
            let thumbnail = try #require(found, "entry \(k), t=\(t)")
            #expect(thumbnail.timeStampStart == entry.start)
            let (image, _) = try ImageCodec.decode(thumbnail.imageData)
            #expect(image.width == 160)
            let segment = 4 + Int(t)
            let psnr = try ReferenceFrames.psnr(of: image, against: stream.files[segment % 90], at: 0)
            let neighbour = try ReferenceFrames.psnr(of: image, against: stream.files[(segment + 1) % 90], at: 0)
            // The sequence's JPEGs are 4:2:0 (what every mjpg reader decodes), the sheets 4:4:4: on these saturated
            // test frames that costs about 7 dB; the next segment's frame stays 10 dB further off.
            #expect(psnr >= 20 && psnr > neighbour + 6, "t=\(t): \(psnr) dB, the next segment's \(neighbour) dB")
        }
    }
}
