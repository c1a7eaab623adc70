import FilmstripFormats
import Foundation
import Testing

/// Image headers read without decoding, and what a BIF's images say about themselves.
@Suite("Image headers")
struct ImageHeaderTests {
    /// A JPEG's start: SOI, an APP0 segment, then a baseline frame header declaring `width` x `height`.
    static func jpeg(width: Int, height: Int) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
            + [
                0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8),
                UInt8(width & 0xFF), 0x03,
            ] + [UInt8](repeating: 0, count: 9) + [0xFF, 0xD9]
    }

    static let gif: [UInt8] = Array("GIF89a".utf8) + [0x40, 0x01, 0xB4, 0x00, 0, 0, 0, 0x3B]

    @Test("formats and sizes from the headers alone")
    func headers() {
        let jpeg = ImageHeader(Self.jpeg(width: 320, height: 180))
        #expect(jpeg.format == .jpeg && jpeg.width == 320 && jpeg.height == 180)
        let gif = ImageHeader(Self.gif)
        #expect(gif.format == .gif && gif.width == 320 && gif.height == 180)
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30]
        let header = ImageHeader(png)
        #expect(header.format == .png && header.width == 30000 && header.pixelCount == 900_000_000)
        #expect(ImageHeader([1, 2, 3]).format == .unknown && ImageHeader([]).width == nil)
        // A truncated JPEG: the format, no size.
        #expect(ImageHeader([0xFF, 0xD8, 0xFF, 0xE0, 0x00]).width == nil)
    }

    @Test("a BIF whose images are a GIF or declare 30000x30000 px says so when it is read")
    func bifFindings() throws {
        let images = [Self.jpeg(width: 320, height: 180), Self.gif, Self.jpeg(width: 30000, height: 30000)]
        let bytes = PreviewTrackWriter.bif(images: images, starts: [0, 1000, 2000])
        let track = try BIFParser().parse(bytes, url: URL(string: "https://example.com/t.bif")!)
        #expect(track.cues.count == 3)
        #expect(track.findings.map(\.location) == ["image 1", "image 2"])
        #expect(track.findings[0].message.contains("a gif, not a JPEG"))
        #expect(track.findings[1].message.contains("30000x30000") && track.findings[1].severity == .error)
        let clean = PreviewTrackWriter.bif(images: [Self.jpeg(width: 320, height: 180)], starts: [0])
        #expect(try BIFParser().parse(clean, url: URL(string: "https://example.com/t.bif")!).findings.isEmpty)
    }
}
