import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

/// Every output of generation, read back by Filmstrip's own readers.
@Suite("Generation in every format")
struct GenerateFormatsTests {
    static func generate(
        _ directory: TemporaryDirectory, count: Int? = nil, imageFormat: ImageFormat = .jpeg
    ) async throws -> PreviewTrackSummary {
        var options = PreviewTrackConfiguration()
        options.imageFormat = imageFormat
        options.interval = 1
        options.count = count
        options.width = 80
        options.columns = 4
        options.rows = 2
        options.formats = Set(PreviewTrackConfiguration.OutputFormat.allCases)
        return try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.counter(), to: directory.url, options: options)
    }

    static func engine() -> TrackThumbnails {
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        return TrackThumbnails(configuration: configuration)
    }

    @Test("every format gives the same thumbnail as the WebVTT track at every time")
    func sameTiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let summary = try await Self.generate(directory)
        #expect(
            Set(summary.files.map(\.lastPathComponent)) == [
                "sprite-1.jpg", "sprite-2.jpg", "thumbnails.vtt", "thumbnails.m3u8", "thumbnails.mpd", "thumbnails.bif",
                "thumbnails.json", "storyboard.json", "storyboard.jpg", "iframe-images.m3u8", "iframe-images.mp4",
            ])
        #expect(summary.files.last?.lastPathComponent == "thumbnails.vtt")  // track files last, sheets first
        #expect(summary.imageStreamInf?.hasPrefix("#EXT-X-IMAGE-STREAM-INF:BANDWIDTH=") == true)
        #expect(summary.dashAdaptationSet?.contains(#"value="4x2""#) == true)
        let vtt = Self.engine()
        try await vtt.load(track: directory.file("thumbnails.vtt"))
        #expect(
            summary.iFrameStreamInf?.hasPrefix("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=") == true
                && summary.iFrameStreamInf?.contains(#"CODECS="mjpg",RESOLUTION=80x60"#) == true,
            "\(summary.iFrameStreamInf ?? "none")")
        let names = [
            "thumbnails.m3u8", "thumbnails.mpd", "thumbnails.json", "thumbnails.bif", "storyboard.json",
            "iframe-images.m3u8",
        ]
        for name in names {
            let other = Self.engine()
            try await other.load(track: directory.file(name))
            for t in stride(from: 0.0, to: 10, by: 0.5) {
                let reference = try #require(try await vtt.thumbnail(at: t))
                let thumbnail = try #require(try await other.thumbnail(at: t), "\(name) t=\(t)")
                #expect(thumbnail.timeStampStart == reference.timeStampStart, "\(name) t=\(t)")
                #expect(thumbnail.timeStampEnd == reference.timeStampEnd, "\(name) t=\(t)")
                let expected = frameNumber(try ImageCodec.decode(reference.imageData).0)
                #expect(frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == expected, "\(name) t=\(t)")
                // The BIF, the storyboard and the image sequence encode each thumbnail again.
                if !["thumbnails.bif", "storyboard.json", "iframe-images.m3u8"].contains(name) {
                    #expect(
                        thumbnail.imageData == reference.imageData, "\(name) t=\(t): the same crop of the same sheet")
                }
            }
        }
    }

    @Test("WebP sheets: every format names and reads them with the frames of the JPEG track; the BIF stays JPEG")
    func webpSheets() async throws {
        let jpegFolder = try TemporaryDirectory()
        let webpFolder = try TemporaryDirectory()
        defer {
            jpegFolder.remove()
            webpFolder.remove()
        }
        _ = try await Self.generate(jpegFolder)
        let summary = try await Self.generate(webpFolder, imageFormat: .webp)
        #expect(
            Set(summary.files.map(\.lastPathComponent)) == [
                "sprite-1.webp", "sprite-2.webp", "thumbnails.vtt", "thumbnails.m3u8", "thumbnails.mpd",
                "thumbnails.bif", "thumbnails.json", "storyboard.json", "storyboard.webp", "iframe-images.m3u8",
                "iframe-images.mp4",
            ])
        for sheet in summary.sheetURLs { #expect(try ImageCodec.info(try Data(contentsOf: sheet)).format == .webp) }
        let mpd = try String(contentsOf: webpFolder.file("thumbnails.mpd"), encoding: .utf8)
        #expect(mpd.contains(#"mimeType="image/webp""#) && mpd.contains(#"media="sprite-$Number$.webp""#))
        #expect(summary.dashAdaptationSet?.contains(#"mimeType="image/webp""#) == true)
        #expect(summary.imageStreamInf?.contains(#"CODECS="webp""#) == true)
        let reference = Self.engine()
        try await reference.load(track: jpegFolder.file("thumbnails.vtt"))
        for name in [
            "thumbnails.vtt", "thumbnails.m3u8", "thumbnails.mpd", "thumbnails.json", "thumbnails.bif",
            "storyboard.json",
        ] {
            let engine = Self.engine()
            try await engine.load(track: webpFolder.file(name))
            for t in stride(from: 0.0, to: 10, by: 0.5) {
                let expected = try #require(try await reference.thumbnail(at: t))
                let thumbnail = try #require(try await engine.thumbnail(at: t), "\(name) t=\(t)")
                #expect(thumbnail.format == (name == "thumbnails.bif" ? .jpeg : .webp), "\(name) t=\(t)")
                let ours = try ImageCodec.decode(thumbnail.imageData).0
                let theirs = try ImageCodec.decode(expected.imageData).0
                #expect(frameNumber(ours) == frameNumber(theirs), "\(name) t=\(t)")
                if name != "thumbnails.bif" {
                    let psnr = try #require(ours.psnr(against: theirs))
                    #expect(psnr >= 30, "\(name) t=\(t): PSNR \(psnr) dB against the JPEG track's thumbnail")
                }
            }
        }
        let jpegBytes = try FileManager.default.contentsOfDirectory(atPath: jpegFolder.url.path)
            .filter { $0.hasPrefix("sprite-") }.map { try Data(contentsOf: jpegFolder.file($0)).count }.reduce(0, +)
        #expect(summary.sheetBytes.reduce(0, +) < jpegBytes, "WebP sheets are smaller at the default quality")
    }

    @Test("the BIF's structure is exact: header, index with its end marker, one 320 px JPEG per thumbnail")
    func bifStructure() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.generate(directory)
        let bytes = Array(try Data(contentsOf: directory.file("thumbnails.bif")))
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        #expect(Array(bytes.prefix(8)) == [0x89, 0x42, 0x49, 0x46, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(u32(8) == 0 && u32(12) == 10 && u32(16) == 1000)
        #expect(bytes[20..<64].allSatisfy { $0 == 0 })
        for i in 0..<10 {
            #expect(u32(64 + i * 8) == UInt32(i))
            let start = Int(u32(64 + i * 8 + 4))
            let end = Int(u32(64 + (i + 1) * 8 + 4))
            let image = Data(bytes[start..<end])
            #expect(image.prefix(2) == Data([0xFF, 0xD8]) && image.suffix(2) == Data([0xFF, 0xD9]))
            let info = try ImageCodec.info(image)
            #expect(info.width == 320 && info.height == 240)
        }
        #expect(u32(64 + 80) == 0xFFFF_FFFF && Int(u32(64 + 84)) == bytes.count)
    }

    @Test("the playlist and the MPD parse with Python's m3u8 and mpegdash packages")
    func pythonParsers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await Self.generate(directory)
        let script = """
            import sys, m3u8
            from mpegdash.parser import MPEGDASHParser
            playlist = m3u8.load(sys.argv[1])
            assert playlist.is_endlist and len(playlist.segments) == 2, playlist.dumps()
            assert [s.uri for s in playlist.segments] == ["sprite-1.jpg", "sprite-2.jpg"]
            assert abs(sum(s.duration for s in playlist.segments) - 10) < 0.001
            mpd = MPEGDASHParser.parse(open(sys.argv[2]).read())
            aset = mpd.periods[0].adaptation_sets[0]
            rep = aset.representations[0]
            # The tile layout on the Representation, where Shaka Player and dash.js read it, never on the set.
            assert aset.content_type == "image" and not aset.essential_properties
            assert rep.essential_properties[0].value == "4x2" and rep.width == 320
            assert rep.segment_templates[0].media == "sprite-$Number$.jpg"
            # Each sheet's EXTINF, then its EXT-X-TILES, then its URI (Roku's and Apple's order, which Shaka reads).
            lines = open(sys.argv[1]).read().splitlines()
            for i, line in enumerate(lines):
                if line.startswith("#EXTINF"):
                    assert lines[i + 1].startswith("#EXT-X-TILES:") and lines[i + 2].startswith("sprite-"), lines
            print("ok")
            """
        let file = directory.file("check.py")
        try Data(script.utf8).write(to: file)
        let run = try CommandRun([
            "python3", file.path, directory.file("thumbnails.m3u8").path, directory.file("thumbnails.mpd").path,
        ])
        #expect(run.status == 0 && run.output.contains("ok"), "\(run.output)")
    }

    @Test("--count spreads a fixed number of thumbnails over the video")
    func fixedCount() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let summary = try await Self.generate(directory, count: 4)
        #expect(summary.thumbnails == 4)
        let vtt = Self.engine()
        try await vtt.load(track: directory.file("thumbnails.vtt"))
        #expect(vtt.track?.cues.map(\.start) == [0, 2.5, 5, 7.5] && vtt.track?.cues.last?.end == 10)
    }
}

@Suite("Several widths in one pass")
struct GenerateWidthsTests {
    @Test("extra widths are written beside the main one from the same decodes, each a complete track")
    func widths() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var options = PreviewTrackConfiguration()
        options.interval = 2
        options.width = 80
        options.additionalWidths = [160, 240]
        options.formats = [.vtt, .hls]
        let summary = try await PreviewTrackGenerator.generate(
            from: try MediaFixtures.counter(), to: directory.url, options: options)
        #expect(summary.otherWidths.map(\.tileSize.width) == [160, 240])
        #expect(summary.decodedFrames == 5)  // one decode per thumbnail, for all three widths
        for (width, folder) in [(80, directory.url), (160, directory.file("w160")), (240, directory.file("w240"))] {
            var configuration = ThumbnailsConfiguration()
            configuration.cacheDirectory = nil
            for name in ["thumbnails.vtt", "thumbnails.m3u8"] {
                let thumbnails = TrackThumbnails(configuration: configuration)
                try await thumbnails.load(track: folder.appendingPathComponent(name))
                let thumbnail = try #require(try await thumbnails.thumbnail(at: 4.5))
                #expect(thumbnail.width == width, "\(width) \(name)")
                #expect(frameNumber(try ImageCodec.decode(thumbnail.imageData).0) == 100, "\(width) \(name)")
            }
        }
    }
}
