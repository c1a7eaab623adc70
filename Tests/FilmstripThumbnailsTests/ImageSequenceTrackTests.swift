import Filmstrip
import FilmstripTesting
import Foundation
import Testing

/// Apple's I-frame image sequences read by the `.tracks` engine: from the I-frame playlist or from a master that lists
/// it, over HTTP with the bytes at the floor; damaged ones refused with a clear error.
@Suite("Track formats: HLS I-frame image sequences")
struct ImageSequenceTrackTests {
    /// Six images of 32x18, image k coloured as cell k and shown from 2k s for 2 s.
    static func sequence() throws -> ImageIFrameSequence {
        let images = try (0..<6).map { k in
            ImageIFrameSequence.Image(
                start: Int64(k) * 2000, duration: 2000,
                jpeg: Data(
                    try SpriteSheetFixture.encoded(
                        columns: 1, rows: 1, cellWidth: 32, cellHeight: 18, firstCell: k, format: .jpeg, quality: 95)))
        }
        return ImageIFrameSequence(images: images, width: 32, height: 18)
    }

    /// Serves the sequence (`/seq/images.mp4`, `/seq/iframes.m3u8`, and a master `/seq/master.m3u8` that lists it
    /// beside a video variant); returns it.
    @discardableResult
    static func serve(
        _ sequence: ImageIFrameSequence, on server: LoopbackServer, file: Data? = nil
    ) -> ImageIFrameSequence {
        server.serve("/seq/images.mp4", body: [UInt8](file ?? sequence.file), contentType: "video/mp4")
        server.serve(
            "/seq/iframes.m3u8", text: sequence.playlist(mediaName: "images.mp4"),
            contentType: "application/vnd.apple.mpegurl")
        server.serve(
            "/seq/master.m3u8",
            text: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360\nvideo.m3u8\n"
                + sequence.stream.line(uri: "iframes.m3u8") + "\n",
            contentType: "application/vnd.apple.mpegurl")
        return sequence
    }

    @Test(
        "from the I-frame playlist or the master: each entry's image at its times; one range for the init section and one per image, each once",
        arguments: ["/seq/iframes.m3u8", "/seq/master.m3u8"])
    func readOverHTTP(_ path: String) async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let sequence = Self.serve(try Self.sequence(), on: server)
        let thumbnails = TrackFormatsTests.engine()
        try await thumbnails.load(track: server.url(path))
        #expect(thumbnails.format == .iFrameImages)
        for k in 0..<6 {
            for t in [Double(2 * k), Double(2 * k) + 1.9] {
                let thumbnail = try #require(try await thumbnails.thumbnail(at: t), "t=\(t)")
                #expect(try cellShown(by: thumbnail) == k, "t=\(t)")
                #expect(thumbnail.timeStampStart == Double(2 * k) && thumbnail.timeStampEnd == Double(2 * k + 2))
                #expect(thumbnail.format == .jpeg && thumbnail.width == 32 && thumbnail.height == 18)
            }
        }
        let media = server.requests.filter { $0.path == "/seq/images.mp4" }
        let ranges = media.compactMap { $0.headers["range"] }
        // The init section is read only where the playlist alone cannot tell images from video: a master's
        // CODECS="mjpg" says so.
        let expected =
            (path.hasSuffix("master.m3u8") ? [] : ["bytes=0-\(sequence.initializationLength - 1)"])
            + sequence.fragments.map { "bytes=\($0.lowerBound)-\($0.upperBound - 1)" }
        #expect(ranges.count == media.count, "every request of the media file is a range")
        #expect(ranges.sorted() == expected.sorted(), "\(ranges)")
    }

    @Test("a video I-frame playlist (no mjpg) is not an image track: the error names the .frames engine")
    func videoIFrames() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let sequence = try Self.sequence()
        var file = sequence.file
        let entry = try #require(file.range(of: Data("mjpg".utf8)))
        file.replaceSubrange(entry, with: Data("avc1".utf8))
        Self.serve(sequence, on: server, file: file)
        let error = await thumbnailsError {
            try await TrackFormatsTests.engine().load(track: server.url("/seq/iframes.m3u8"))
        }
        #expect(error?.message.contains("--engine frames") == true, "\(String(describing: error))")
    }

    @Test("damaged entries: an mdat without a JPEG and a box that runs past its entry are errors, not crashes")
    func damagedEntries() async throws {
        let server = try LoopbackServer()
        defer { server.stop() }
        let sequence = try Self.sequence()
        var file = sequence.file
        // Image 2's JPEG loses its start marker; image 4's mdat says it is 100 bytes longer than it is.
        let second = sequence.fragments[1]
        let soi = try #require(file[second].range(of: Data([0xFF, 0xD8])))
        file[soi.lowerBound] = 0
        let fourth = sequence.fragments[3]
        let mdat = try #require(file[fourth].range(of: Data("mdat".utf8))).lowerBound - 4
        let size = file[mdat..<(mdat + 4)].reduce(0) { $0 << 8 | Int($1) } + 100
        file.replaceSubrange(mdat..<(mdat + 4), with: (0..<4).map { UInt8(truncatingIfNeeded: size >> (24 - 8 * $0)) })
        Self.serve(sequence, on: server, file: file)
        // Loaded eagerly (every image fetched at once), the track fails with the entry's fault.
        let eager = await thumbnailsError {
            try await TrackFormatsTests.engine().load(track: server.url("/seq/iframes.m3u8"))
        }
        #expect(eager?.message.contains("I-frame image fragment") == true, "\(String(describing: eager))")
        // Loaded lazily, the sound entries answer and each damaged one fails on its own.
        var configuration = ThumbnailsConfiguration()
        configuration.cacheDirectory = nil
        configuration.loadingMode = .lazy
        let thumbnails = TrackThumbnails(configuration: configuration)
        try await thumbnails.load(track: server.url("/seq/iframes.m3u8"))
        #expect(try cellShown(by: try #require(try await thumbnails.thumbnail(at: 0.5))) == 0)
        for t in [2.5, 6.5] {
            let error = await thumbnailsError { _ = try await thumbnails.thumbnail(at: t) }
            #expect(error?.message.contains("I-frame image fragment") == true, "t=\(t): \(String(describing: error))")
        }
        #expect(try cellShown(by: try #require(try await thumbnails.thumbnail(at: 8.5))) == 4)
    }

    @Test("ISO BMFF sizes are hostile: past the end, below the header, a 64-bit size, zero: errors or to the end")
    func hostileBoxSizes() throws {
        func box(_ size: UInt32, _ type: String, _ rest: [UInt8] = []) -> Data {
            Data((0..<4).map { UInt8(truncatingIfNeeded: size >> (24 - 8 * $0)) } + Array(type.utf8) + rest)
        }
        #expect(throws: ISOBoxes.ParseError.self) { try ISOBoxes(box(100, "moof")) }
        #expect(throws: ISOBoxes.ParseError.self) { try ISOBoxes(box(4, "moof")) }
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]
        #expect(throws: ISOBoxes.ParseError.self) { try ISOBoxes(box(1, "mdat", huge)) }
        #expect(throws: ISOBoxes.ParseError.self) { try ISOBoxes(box(8, "moof") + Data([0, 0, 0])) }
        let toEnd = try ISOBoxes(box(0, "mdat", [1, 2, 3]))
        #expect(toEnd.boxes.map(\.type) == ["mdat"] && toEnd.boxes[0].payload == 8..<11)
        let large = try ISOBoxes(box(1, "mdat", [0, 0, 0, 0, 0, 0, 0, 18, 7, 7]))
        #expect(large.boxes[0].payload == 16..<18)
        #expect(throws: ISOBoxes.ParseError.self) { try ImageIFrameSequence.image(inFragment: box(8, "moof")) }
        #expect(!ImageIFrameSequence.describesImages(initialization: Data("not a box".utf8)))
        #expect(ImageIFrameSequence.describesImages(initialization: try Self.sequence().file))
    }
}
