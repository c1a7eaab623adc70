import Filmstrip
import FilmstripTesting
import Foundation
import Testing

@Suite("I-frame image sequences: JPEGs in fragmented MP4 behind an I-frame playlist")
struct ImageIFrameSequenceTests {
    /// Runs a tool and returns its standard output.
    static func output(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(arguments)")
        return data
    }

    @Test("FFmpeg reads each image as an MJPEG sample at its time; each fragment alone decodes to its picture")
    func readByFFmpeg() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let colours: [(UInt8, UInt8, UInt8)] = [(220, 30, 30), (30, 200, 40), (40, 60, 220)]
        let images = try colours.enumerated().map { index, colour in
            ImageIFrameSequence.Image(
                start: Int64(index) * 2000, duration: 2000,
                jpeg: Data(
                    try ImageCodec.encode(
                        PixelBuffer(width: 64, height: 36, fill: (colour.0, colour.1, colour.2, 255)), as: .jpeg)))
        }
        let sequence = ImageIFrameSequence(images: images, width: 64, height: 36)
        let file = directory.url.appendingPathComponent("images.mp4")
        try sequence.file.write(to: file)
        let playlist = directory.url.appendingPathComponent("iframes.m3u8")
        try Data(sequence.playlist(mediaName: "images.mp4").utf8).write(to: playlist)

        // The file: one MJPEG video stream, 64x36, samples at 0, 2 and 4 s.
        let stream = String(
            decoding: try Self.output([
                "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
                "-of", "csv=p=0", file.path,
            ]), as: UTF8.self
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stream == "mjpeg,64,36")
        let times = String(
            decoding: try Self.output([
                "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags",
                "-of", "csv=p=0", file.path,
            ]), as: UTF8.self
        ).split(separator: "\n").map(String.init)
        // Every sample a keyframe ("K" first in the flags).
        #expect(times.map { $0.prefix(10) } == ["0.000000,K", "2.000000,K", "4.000000,K"], "\(times)")

        // Each fragment, with the initialisation section before it and nothing else (what a player fetches for one
        // playlist entry), decodes to its own colour.
        for (index, range) in sequence.fragments.enumerated() {
            let piece = directory.url.appendingPathComponent("piece-\(index).mp4")
            try (sequence.file.prefix(sequence.initializationLength) + sequence.file[range]).write(to: piece)
            let rgb = try Self.output([
                "ffmpeg", "-v", "error", "-i", piece.path, "-vf", "scale=1:1", "-frames:v", "1", "-f", "rawvideo",
                "-pix_fmt", "rgb24", "-",
            ])
            let expected = colours[index]
            #expect(rgb.count == 3)
            #expect(
                zip(rgb, [expected.0, expected.1, expected.2]).allSatisfy { abs(Int($0) - Int($1)) < 12 },
                "image \(index): \(Array(rgb))")
        }

        // The playlist: I-frames only, the map over the initialisation section, one range per image, 2 s each.
        guard case .media(let media) = try HLSPlaylistParser().parse(Data(contentsOf: playlist), url: playlist) else {
            Issue.record("not a media playlist")
            return
        }
        #expect(media.iFramesOnly && media.endList && media.segments.count == 3)
        #expect(media.segments.first?.map?.byteRange == 0..<Int64(sequence.initializationLength))
        #expect(
            media.segments.map(\.byteRange)
                == sequence.fragments.map { Int64($0.lowerBound)..<Int64($0.upperBound) })
        #expect(media.segments.map(\.duration) == [2, 2, 2])
    }
}
