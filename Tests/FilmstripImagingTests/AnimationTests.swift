import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

@Suite("Animated GIF and WebP")
struct AnimationTests {
    /// Frame `n`: the left half red, the right half a vertical gradient of grey, blue `40 * n` over all.
    static func frame(_ n: Int, width: Int = 96, height: Int = 64) -> PixelBuffer {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                let grey = UInt8(y * 255 / (height - 1))
                bytes[i] = x < width / 2 ? 230 : grey
                bytes[i + 1] = x < width / 2 ? 20 : grey
                bytes[i + 2] = UInt8(40 * n)
            }
        }
        return PixelBuffer(width: width, height: height, layout: .rgb, bytes: bytes)
    }

    /// The frames of a GIF as the ffmpeg CLI decodes them.
    static func ffmpegFrames(_ gif: [UInt8], width: Int, height: Int) throws -> [PixelBuffer] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("filmstrip-gif-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(gif).write(to: folder.appendingPathComponent("a.gif"))
        try MediaFixtures.run(
            ["-v", "error", "-i", "a.gif", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "a.rgb"],
            in: folder)
        let decoded = [UInt8](try Data(contentsOf: folder.appendingPathComponent("a.rgb")))
        let size = width * height * 3
        return stride(from: 0, to: decoded.count - size + 1, by: size).map {
            PixelBuffer(width: width, height: height, layout: .rgb, bytes: Array(decoded[$0..<$0 + size]))
        }
    }

    @Test("a GIF's frames, as the ffmpeg CLI decodes them, are the frames given")
    func gifDecodedByFFmpeg() throws {
        let frames = (0..<6).map { Self.frame($0) }
        var gif = try GIFEncoder(width: 96, height: 64, frameCount: frames.count)
        for frame in frames { try gif.add(frame, delay: 10) }
        let bytes = gif.finish()
        #expect(Array(bytes.prefix(6)) == Array("GIF89a".utf8) && bytes.last == 0x3B)
        let decoded = try Self.ffmpegFrames(bytes, width: 96, height: 64)
        #expect(decoded.count == frames.count)
        for (n, (picture, frame)) in zip(decoded, frames).enumerated() {
            let psnr = try #require(picture.psnr(against: frame))
            #expect(psnr >= 30, "frame \(n): PSNR \(psnr) dB")
        }
    }

    @Test("noise of 16 colours comes back exact: the code table fills and is cleared many times over")
    func gifTableClears() throws {
        var random = SeededGenerator(seed: 47)
        let colours: [[UInt8]] = (0..<16).map { (k: Int) -> [UInt8] in
            let red = UInt8(k * 16 + 4)
            let green = UInt8(252 - k * 16)
            let blue = UInt8(k % 4 * 64 + 4)
            return [red, green, blue]
        }
        let frames = (0..<2).map { _ in
            PixelBuffer(
                width: 256, height: 256, layout: .rgb,
                bytes: (0..<256 * 256).flatMap { _ in colours[Int.random(in: 0..<16, using: &random)] })
        }
        var gif = try GIFEncoder(width: 256, height: 256, frameCount: 2)
        for frame in frames { try gif.add(frame, delay: 4) }
        let decoded = try Self.ffmpegFrames(gif.finish(), width: 256, height: 256)
        #expect(decoded.count == 2)
        for (n, (picture, frame)) in zip(decoded, frames).enumerated() {
            let wrong = picture.bytes.indices.filter { picture.bytes[$0] != frame.bytes[$0] }
            #expect(wrong.isEmpty, "frame \(n): \(wrong.count) bytes differ, from byte \(wrong.first ?? -1)")
        }
    }

    @Test("GIF delays keep the total: 30 a second is 3, 3, 4 hundredths")
    func delays() {
        let delays = GIFEncoder.delays(count: 30, every: 1.0 / 30)
        #expect(delays.reduce(0, +) == 100)
        #expect(Set(delays) == [3, 4])
        #expect(GIFEncoder.delays(count: 5, every: 0.1) == [10, 10, 10, 10, 10])
    }

    @Test("a frame of another size or an empty size is refused")
    func refusals() throws {
        var gif = try GIFEncoder(width: 96, height: 64, frameCount: 1)
        #expect(throws: ImagingError.self) { try gif.add(Self.frame(0, width: 95), delay: 10) }
        #expect(throws: ImagingError.self) { try GIFEncoder(width: 0, height: 10, frameCount: 1) }
        let webp = try WebPAnimationEncoder(width: 96, height: 64)
        #expect(throws: ImagingError.self) { try webp.add(Self.frame(0, height: 63), at: 0) }
        #expect(throws: ImagingError.self) { try WebPAnimationEncoder(width: 20_000, height: 10) }
    }

    @Test("an animated WebP holds a frame per picture with its duration, and a still decoder refuses it")
    func webp() throws {
        let webp = try WebPAnimationEncoder(width: 96, height: 64)
        for n in 0..<6 { try webp.add(Self.frame(n), at: n * 100) }
        let bytes = try webp.finish(at: 600)
        #expect(ImageFormat.sniff(bytes) == .webp)
        // RIFF chunks: VP8X (animation flag), ANIM (loop 0), then an ANMF per frame with its duration.
        var offset = 12
        var durations: [Int] = []
        var flags: UInt8 = 0
        while offset + 8 <= bytes.count {
            let name = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = bytes[offset + 4..<offset + 8].reversed().reduce(0) { $0 << 8 | Int($1) }
            if name == "VP8X" { flags = bytes[offset + 8] }
            if name == "ANMF" {
                durations.append(bytes[offset + 20..<offset + 23].reversed().reduce(0) { $0 << 8 | Int($1) })
            }
            offset += 8 + size + size % 2
        }
        #expect(flags & 0x02 != 0)
        #expect(durations == [100, 100, 100, 100, 100, 100])
        #expect(throws: ImagingError.self) { try ImageCodec.decode(bytes) }
    }
}
