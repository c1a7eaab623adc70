import Filmstrip
import FilmstripFormats
import FilmstripMedia
import FilmstripSync
import FilmstripTesting
import Foundation
import Testing

/// `LivePreviewTrackGenerator` on the simulated live origins, on a test clock: the origin's window and the run's
/// reloads move only when the test advances the clock, so nothing depends on the machine's speed.
@Suite("Live preview tracks")
struct LiveGenerationTests {
    /// 2 s tiles, two to a sheet (a sheet every 4 s), a 12 s window, every live format.
    /// `wall`: the test's one wall clock (each `clock.wallClock()` call takes its own origin from the real clock, so
    /// two made at different moments disagree by the real time between them).
    static func configuration(
        clock: TestClock, wall: (@Sendable () -> Date)? = nil
    ) -> LivePreviewConfiguration {
        var configuration = LivePreviewConfiguration()
        configuration.preview.formats = [.vtt, .json, .hls]
        configuration.preview.columns = 2
        configuration.preview.rows = 1
        configuration.window = 12
        configuration.clock = clock
        configuration.wallClock = wall ?? clock.wallClock()
        return configuration
    }

    @Test("live HLS: sheets follow the edge, the track never names a missing sheet, the window slides, ENDLIST ends it")
    func followsHLS() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let stream = try SimulatedLiveStream(
            server: server, windowSize: 6, initialSegments: 10, endAfter: 40, now: { clock.now.offset.seconds })
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        let updates = Mutex<[LivePreviewUpdate]>([])
        var configuration = Self.configuration(clock: clock)
        configuration.preview.formats.insert(.dash)
        let generator = LivePreviewTrackGenerator(
            source: stream.url, directory: output.url, configuration: configuration)
        let run = Task { try await generator.run { update in updates.withLock { $0.append(update) } } }
        var seconds = 0
        while !run.isCancelled, seconds < 40 {
            guard await clock.waitForSleepers(1) else { break }
            try Self.checkConsistent(output.url)
            await clock.advance(by: .seconds(1))
            seconds += 1
        }
        try await run.value
        let published = updates.withLock { $0 }
        // The first read lists segments 4–9: media time 0 is segment 4; the run starts at the sheet holding the
        // edge (6 s), so at 4 s. Sheets [4,8), [8,12) … to the end at 36 s (segment 39).
        #expect(published.first?.published.first?.start == 4000)
        #expect(published.last?.ended == true)
        let numbers = published.flatMap(\.published).map(\.number)
        #expect(numbers == Array(2...9), "\(numbers)")
        #expect(published.flatMap(\.published).allSatisfy { $0.missing.isEmpty && !$0.isGap })
        // The window kept the last 12 s: sheets 7–9; older sheet files are gone once their delay passed.
        let playlist = try String(contentsOf: output.file("thumbnails.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-MEDIA-SEQUENCE:7\n") && playlist.hasSuffix("#EXT-X-ENDLIST\n"), "\(playlist)")
        #expect(!FileManager.default.fileExists(atPath: output.file("sprite-2.jpg").path))
        // Every tile shows its segment's first frame (the keyframe at the tile's start).
        let thumbnails = TrackThumbnails(configuration: Self.readerConfiguration())
        try await thumbnails.load(track: output.file("thumbnails.vtt"))
        for t in stride(from: 24.0, to: 36.0, by: 2) {
            let thumbnail = try #require(try await thumbnails.thumbnail(at: t + 0.5), "t=\(t)")
            #expect(thumbnail.timeStampStart == t)
            let (image, _) = try ImageCodec.decode(thumbnail.imageData)
            let segment = 4 + Int(t)
            let psnr = try ReferenceFrames.psnr(of: image, against: stream.files[segment % 90], at: 0)
            let neighbour = try ReferenceFrames.psnr(of: image, against: stream.files[(segment + 1) % 90], at: 0)
            #expect(psnr >= 30 && psnr > neighbour + 3, "t=\(t): \(psnr) dB, the next segment's \(neighbour) dB")
        }
        // The HLS playlist reads to the same sheets (its own timeline starts at its first sheet).
        let hls = TrackThumbnails(configuration: Self.readerConfiguration())
        try await hls.load(track: output.file("thumbnails.m3u8"))
        let first = try #require(try await hls.thumbnail(at: 0.5))
        #expect(first.sourceURL.lastPathComponent == "sprite-7.jpg" && first.region?.x == 0)
        // So does the MPD, static now, its first sheet at 0.
        let mpd = TrackThumbnails(configuration: Self.readerConfiguration())
        try await mpd.load(track: output.file("thumbnails.mpd"))
        let last = try #require(try await mpd.thumbnail(at: 10.5))
        #expect(last.sourceURL.lastPathComponent == "sprite-9.jpg" && last.region?.x == 160)
    }

    /// A live stream whose media time t is segment 4 + t, with EXT-X-GAP for 16–19 s (a whole 4 s sheet) and 24 s
    /// answering 404 for ever; it ends at 32 s.
    static func streamWithGaps(server: LoopbackServer, clock: TestClock) throws -> SimulatedLiveStream {
        try SimulatedLiveStream(
            server: server, windowSize: 6, initialSegments: 10, endAfter: 36, gaps: [20, 21, 22, 23],
            unavailable: [28], now: { clock.now.offset.seconds })
    }

    /// Runs `generator` while the test clock moves `seconds` seconds, one at a time, checking the published track
    /// at every step; returns the updates. With `stop`, the run is cancelled after that many seconds (as SIGTERM
    /// does), else it must end by itself.
    static func drive(
        _ generator: LivePreviewTrackGenerator, clock: TestClock, seconds: Int, stop: Bool = false
    ) async throws -> [LivePreviewUpdate] {
        let updates = Mutex<[LivePreviewUpdate]>([])
        let run = Task { try await generator.run { update in updates.withLock { $0.append(update) } } }
        for _ in 0..<seconds {
            guard await clock.waitForSleepers(1) else { break }
            try checkConsistent(generator.directory, window: generator.configuration.window ?? 12)
            await clock.advance(by: .seconds(1))
        }
        if stop {
            _ = await clock.waitForSleepers(1)
            run.cancel()
        }
        try await run.value
        return updates.withLock { $0 }
    }

    @Test(
        "program dates: cue times are the source's dates, the playlist carries them, tiles fall on the segments",
        arguments: [0, 250])
    func programDates(_ past: Int64) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let origin = Date(timeIntervalSince1970: 1_800_000_000 + Double(past) / 1000)
        let stream = try SimulatedLiveStream(
            server: server, windowSize: 6, initialSegments: 10, programDates: origin, endAfter: 22,
            now: { clock.now.offset.seconds })
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        let generator = LivePreviewTrackGenerator(
            source: stream.url, directory: output.url, configuration: Self.configuration(clock: clock))
        let updates = try await Self.drive(generator, clock: clock, seconds: 20)
        #expect(updates.last?.ended == true)
        // Segment N starts at origin + N s; the edge was at segment 10 (origin + 10 s), in the sheet [8, 12) counted
        // from the first segment the run saw (4), not from a whole second.
        let first = try #require(updates.first?.published.first)
        #expect(first.start == 1_800_000_008_000 + past, "\(first.start)")
        let playlist = try String(contentsOf: output.file("thumbnails.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-PROGRAM-DATE-TIME:2027-01-15T08:00:"), "\(playlist)")
        let thumbnails = TrackThumbnails(configuration: Self.readerConfiguration())
        try await thumbnails.load(track: output.file("thumbnails.json"))
        for n in [12, 16, 20] {
            let t = origin.timeIntervalSince1970 + Double(n)
            let thumbnail = try #require(try await thumbnails.thumbnail(at: t + 0.5), "segment \(n)")
            #expect(thumbnail.timeStampStart == t)
            let (image, _) = try ImageCodec.decode(thumbnail.imageData)
            let psnr = try ReferenceFrames.psnr(of: image, against: stream.files[n % 90], at: 0)
            #expect(psnr >= 30, "segment \(n): \(psnr) dB")
        }
    }

    @Test("a gap in the source is a gap in the track: no cue, an EXT-X-GAP sheet, never another picture")
    func gaps() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let stream = try Self.streamWithGaps(server: server, clock: clock)
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        var configuration = Self.configuration(clock: clock)
        configuration.window = 60
        configuration.preview.formats.insert(.dash)
        let generator = LivePreviewTrackGenerator(
            source: stream.url, directory: output.url, configuration: configuration)
        let updates = try await Self.drive(generator, clock: clock, seconds: 40)
        #expect(updates.last?.ended == true)
        let sheets = updates.flatMap(\.published)
        // Media time ends at 32 s (segment 35): sheets [4, 8) to [28, 32).
        #expect(sheets.map(\.number) == Array(2...8), "\(sheets.map(\.number))")
        #expect(sheets.first { $0.number == 5 }?.isGap == true)
        #expect(sheets.first { $0.number == 7 }?.missing == [0])
        let playlist = try String(contentsOf: output.file("thumbnails.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-GAP\n#EXTINF:4,\n"), "\(playlist)")
        let thumbnails = TrackThumbnails(configuration: Self.readerConfiguration())
        try await thumbnails.load(track: output.file("thumbnails.vtt"))
        #expect(try await thumbnails.thumbnail(at: 16.5) == nil)
        #expect(try await thumbnails.thumbnail(at: 24.5) == nil)
        for t in [14.0, 20, 26] {
            let thumbnail = try #require(try await thumbnails.thumbnail(at: t + 0.5), "t=\(t)")
            let (image, _) = try ImageCodec.decode(thumbnail.imageData)
            let psnr = try ReferenceFrames.psnr(of: image, against: stream.files[(4 + Int(t)) % 90], at: 0)
            #expect(psnr >= 30, "t=\(t): \(psnr) dB")
        }
    }

    @Test(
        "stopped and started again: no sheet twice or missing, numbers never go back, time the source dropped is a gap")
    func restart() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let stream = try SimulatedLiveStream(
            server: server, windowSize: 6, initialSegments: 10, endAfter: 60, now: { clock.now.offset.seconds })
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        var configuration = Self.configuration(clock: clock)
        configuration.window = 120
        let generator = LivePreviewTrackGenerator(
            source: stream.url, directory: output.url, configuration: configuration)
        let before = try await Self.drive(generator, clock: clock, seconds: 10, stop: true)
        #expect(before.last?.ended == false)
        // Down for 15 s: the source's 6 s window moved on past what was published.
        await clock.advance(by: .seconds(15))
        let after = try await Self.drive(generator, clock: clock, seconds: 40)
        #expect(after.last?.ended == true)
        let numbers = (before + after).flatMap(\.published).map(\.number)
        #expect(numbers == Array(numbers.first!...numbers.last!), "\(numbers)")
        let playlist = try String(contentsOf: output.file("thumbnails.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-GAP"), "\(playlist)")
        // Every tile with a cue shows its own segment.
        let thumbnails = TrackThumbnails(configuration: Self.readerConfiguration())
        try await thumbnails.load(track: output.file("thumbnails.vtt"))
        let cues = try WebVTTThumbnailParser().parse(
            try Data(contentsOf: output.file("thumbnails.vtt")), trackURL: output.file("thumbnails.vtt")
        ).cues
        #expect(cues.count >= 15, "\(cues.count) cues")
        for cue in cues.enumerated().filter({ $0.offset % 4 == 0 }).map(\.element) {
            let thumbnail = try #require(try await thumbnails.thumbnail(at: cue.start + 0.5))
            let (image, _) = try ImageCodec.decode(thumbnail.imageData)
            let psnr = try ReferenceFrames.psnr(of: image, against: stream.files[(4 + Int(cue.start)) % 90], at: 0)
            #expect(psnr >= 30, "t=\(cue.start): \(psnr) dB")
        }
        // A run on an ended track ends at once; another source or other settings are refused.
        _ = try await Self.drive(generator, clock: clock, seconds: 0)
        var other = configuration
        other.preview.width = 120
        let refused = await mediaError {
            try await LivePreviewTrackGenerator(source: stream.url, directory: output.url, configuration: other)
                .run { _ in }
        }
        #expect(refused?.kind == .invalidArgument && refused?.message.contains("other settings") == true)
    }

    /// With program dates a quarter second past the second, the restart keeps the first run's origin.
    @Test(
        "stopped, the stream ends meanwhile, started again: the rest and the end are published",
        arguments: [nil, 1_800_000_000_250] as [Int64?])
    func endsWhileStopped(_ programDates: Int64?) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let stream = try SimulatedLiveStream(
            server: server, windowSize: 30, initialSegments: 30,
            programDates: programDates.map { Date(timeIntervalSince1970: Double($0) / 1000) }, endAfter: 40,
            now: { clock.now.offset.seconds })
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        var configuration = Self.configuration(clock: clock)
        configuration.window = 60
        let generator = LivePreviewTrackGenerator(
            source: stream.url, directory: output.url, configuration: configuration)
        let before = try await Self.drive(generator, clock: clock, seconds: 4, stop: true)
        #expect(before.last?.ended == false)
        await clock.advance(by: .seconds(20))
        let after = try await Self.drive(generator, clock: clock, seconds: 10)
        #expect(after.last?.ended == true)
        let playlist = try String(contentsOf: output.file("thumbnails.m3u8"), encoding: .utf8)
        #expect(playlist.hasSuffix("#EXT-X-ENDLIST\n"), "\(playlist)")
        // Media time ends at 40 s (segment 39): every tile to there, none missing (the playlist kept them all), the
        // sheets numbered on and placed on the first run's grid (segment 0's date) after the restart.
        let sheets = (before + after).flatMap(\.published)
        let base = programDates ?? 0
        #expect(sheets.allSatisfy { $0.missing.isEmpty }, "\(sheets)")
        #expect(sheets.last.map { $0.start + Int64($0.tiles) * 2000 } == base + 40000, "\(sheets)")
        #expect(sheets.allSatisfy { ($0.start - base) % 2000 == 0 }, "\(sheets)")
        #expect(zip(sheets, sheets.dropFirst()).allSatisfy { $1.number == $0.number + 1 }, "\(sheets.map(\.number))")
    }

    @Test("settings out of range are refused before anything is fetched")
    func hostileSettings() async throws {
        let source = URL(string: "http://127.0.0.1:9/live.m3u8")!
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        var cases: [LivePreviewConfiguration] = []
        for (span, interval, window) in [(0.0004, 2.0, nil), (3.0, 2.0, nil), (2.0, 1e16, nil), (4.0, 2.0, 1e300)] {
            var configuration = LivePreviewConfiguration()
            configuration.sheetSpan = span
            configuration.preview.interval = interval
            configuration.window = window
            cases.append(configuration)
        }
        // A setting a live run would not read (it takes each tile's own keyframe) is refused, not ignored.
        var skipBlank = LivePreviewConfiguration()
        skipBlank.preview.skipBlank = true
        cases.append(skipBlank)
        for configuration in cases {
            let error = await mediaError {
                try await LivePreviewTrackGenerator(source: source, directory: output.url, configuration: configuration)
                    .run { _ in }
            }
            #expect(error?.kind == .invalidArgument, "\(String(describing: error))")
        }
    }

    @Test("live DASH: sheets on the presentation's timeline, each tile the frame of its time")
    func followsDASH() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let clock = TestClock()
        let wall = clock.wallClock()
        let live = try SimulatedLiveDASH(server: server, now: wall)
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        var configuration = Self.configuration(clock: clock, wall: wall)
        configuration.preview.formats.insert(.dash)
        let generator = LivePreviewTrackGenerator(source: live.url, directory: output.url, configuration: configuration)
        let updates = try await Self.drive(generator, clock: clock, seconds: 20, stop: true)
        let sheets = updates.flatMap(\.published)
        #expect(sheets.count >= 3 && sheets.allSatisfy { $0.missing.isEmpty }, "\(sheets)")
        let thumbnails = TrackThumbnails(configuration: Self.readerConfiguration())
        try await thumbnails.load(track: output.file("thumbnails.vtt"))
        for sheet in sheets {
            for i in 0..<sheet.tiles {
                let t = Double(sheet.start) / 1000 + Double(i * 2)
                guard let thumbnail = try await thumbnails.thumbnail(at: t + 0.5) else { continue }
                let (image, _) = try ImageCodec.decode(thumbnail.imageData)
                #expect(frameNumber(image) == (Int(t) % 10) * 25, "t=\(t)")
            }
        }
        #expect(server.requestCount("/dash-live/init.m4s") == 1)
        // The dynamic image MPD, read on the same clock, gives the same pictures at the same presentation times.
        var reading = Self.readerConfiguration()
        reading.clock = clock
        reading.wallClock = wall
        let mpd = TrackThumbnails(configuration: reading)
        try await mpd.load(track: output.file("thumbnails.mpd"))
        let newest = try #require(sheets.last)
        let t = Double(newest.start) / 1000
        let fromMPD = try #require(try await mpd.thumbnail(at: t + 0.5), "t=\(t)")
        #expect(fromMPD.sourceURL.lastPathComponent == newest.name)
        let (image, _) = try ImageCodec.decode(fromMPD.imageData)
        #expect(frameNumber(image) == (Int(t) % 10) * 25, "t=\(t)")
        let set = try String(contentsOf: output.file("thumbnails-adaptationset.xml"), encoding: .utf8)
        #expect(set.contains("presentationTimeOffset=\"0\"") && set.contains("startNumber="), "\(set)")
    }

    @Test("an input that is not live is refused, saying so")
    func notLive() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let output = try TemporaryDirectory(prefix: "filmstrip-live")
        defer { output.remove() }
        let vod = try StreamLayouts.serve(.hlsTS, on: server)
        let mpd = try StreamLayouts.serve(.dashNumber, on: server)
        for source in [try MediaFixtures.counter(), vod, mpd] {
            let error = await mediaError {
                try await LivePreviewTrackGenerator(
                    source: source, directory: output.url, configuration: LivePreviewConfiguration()
                ).run { _ in }
            }
            #expect(error?.message.contains("not a live stream") == true, "\(source): \(String(describing: error))")
        }
        var bmp = LivePreviewConfiguration()
        bmp.preview.formats = [.bif]
        let format = await mediaError {
            try await LivePreviewTrackGenerator(source: vod, directory: output.url, configuration: bmp).run { _ in }
        }
        #expect(format?.kind == .invalidArgument)
    }

    /// Every sheet a track file names exists, and no sheet file lies far behind the window.
    static func checkConsistent(_ directory: URL, window: Double = 12) throws {
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
        for name in ["thumbnails.vtt", "thumbnails.m3u8", "thumbnails.json"] where files.contains(name) {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            for sheet in Set(Self.sheetNames(in: text)) {
                #expect(files.contains(sheet), "\(name) names \(sheet), which is not there")
            }
        }
        // The MPD's $Number$ timeline names a file for every number in it (a gap sheet has a black placeholder).
        if files.contains("thumbnails.mpd") {
            let mpd = try String(contentsOf: directory.appendingPathComponent("thumbnails.mpd"), encoding: .utf8)
            if let start = Self.attribute("startNumber", in: mpd).flatMap(Int.init) {
                let count = 1 + (Self.attribute("r", in: mpd).flatMap(Int.init) ?? 0)
                for n in start..<(start + count) {
                    #expect(files.contains("sprite-\(n).jpg"), "the MPD names sprite-\(n).jpg, which is not there")
                }
            }
        }
        // 4 s sheets: those of the window, and as many again (plus one) kept for players holding an older playlist.
        let bound = 2 * Int(window / 4) + 2
        #expect(files.filter { $0.hasPrefix("sprite-") }.count <= bound, "\(files.sorted())")
    }

    static func attribute(_ name: String, in text: String) -> String? {
        guard let range = text.range(of: " \(name)=\"") else { return nil }
        return String(text[range.upperBound...].prefix { $0 != "\"" })
    }

    static func sheetNames(in text: String) -> [String] {
        text.split(whereSeparator: { "\n\",#".contains($0) }).map(String.init).filter { $0.hasPrefix("sprite-") }
    }

    static func readerConfiguration() -> ThumbnailsConfiguration {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        return configuration
    }
}
