import Filmstrip
import FilmstripMedia
import FilmstripTesting
import Foundation
import Testing

@Suite("Playback decoder reuse")
struct VideoDecoderReuseTests {
    /// Every frame's counter number and time, decoded from `decoder`.
    private static func frames(_ decoder: VideoDecoder) throws -> [(time: Double, number: Int?)] {
        var frames: [(Double, Int?)] = []
        while let frame = try decoder.nextFrame() {
            let image = try frame.image()
            let (r, g, b) = image.meanColor(
                x: image.width / 4, y: image.height / 4, width: image.width / 2, height: image.height / 2)
            frames.append((frame.time, MediaFixtures.frameNumber(r: r, g: g, b: b)))
        }
        return frames
    }

    @Test("a decoder taken over mid-stream decodes the next video exactly as a new one; other parameters get a new one")
    func reuse() throws {
        let url = try MediaFixtures.shortCounter()
        let fresh = try Self.frames(try VideoDecoder(url: url))
        // The previous decoder stopped halfway, with frames still inside it.
        let previous = try VideoDecoder(url: url)
        for _ in 0..<10 { _ = try previous.nextFrame() }
        let reused = try VideoDecoder(url: url, reusing: previous)
        #expect(reused.reusedDecoder)
        let again = try Self.frames(reused)
        #expect(again.map(\.time) == fresh.map(\.time))
        #expect(again.map(\.number) == fresh.map(\.number))
        #expect(again.first?.number == 0)
        // A 64x48 video does not match: a decoder of its own.
        let other = try VideoDecoder(url: try MediaFixtures.tinyCounter(), reusing: reused)
        #expect(!other.reusedDecoder)
        #expect(try other.nextFrame() != nil)
    }

    @Test("a byte stream decodes through the same decoder as its file, placed by timeOffset; it cannot seek")
    func byteStream() throws {
        let segment = try MediaFixtures.hls().deletingLastPathComponent().appendingPathComponent("segment-0.ts")
        let file = try Self.frames(try VideoDecoder(url: segment))
        let source = ByteSource(try Data(contentsOf: segment))
        let stream = try VideoDecoder(label: segment) { buffer in source.read(into: buffer) }
        stream.timeOffset = 100
        let streamed = try Self.frames(stream)
        #expect(!file.isEmpty)
        #expect(streamed.map(\.number) == file.map(\.number))
        #expect(streamed.count == file.count)
        #expect(zip(streamed, file).allSatisfy { abs($0.time - 100 - $1.time) < 1e-6 })
        #expect(stream.bytesRead > 0 && stream.framesDecoded == file.count)
        let refused = #expect(throws: MediaError.self) { try stream.seek(to: 1) }
        #expect(refused?.kind == .invalidArgument)
    }
}

/// Bytes handed out in pieces, as a segment queue does.
private final class ByteSource: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data

    init(_ data: Data) { self.data = data }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lock.withLock {
            let count = min(buffer.count, data.count, 7000)
            data.prefix(count).copyBytes(to: buffer.bindMemory(to: UInt8.self), count: count)
            data.removeFirst(count)
            return count
        }
    }
}
