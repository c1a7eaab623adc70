import FilmstripFormats
import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

@Suite("Imaging")
struct ImagingTests {
    @Test("JPEG round trip keeps size and colours within compression error")
    func jpegRoundTrip() throws {
        let sheet = SpriteSheetFixture.pixels(columns: 4, rows: 3, cellWidth: 40, cellHeight: 30)
        let encoded = try ImageCodec.encode(sheet, as: .jpeg, quality: 92)
        #expect(ImageFormat.sniff(encoded) == .jpeg)
        let (decoded, format) = try ImageCodec.decode(encoded)
        #expect(format == .jpeg)
        #expect(decoded.width == 160 && decoded.height == 90 && decoded.layout == .rgb)
        for cell in 0..<12 {
            let mean = decoded.meanColor(x: (cell % 4) * 40 + 8, y: (cell / 4) * 30 + 8, width: 24, height: 14)
            #expect(SpriteSheetFixture.cell(matching: mean) == cell)
        }
    }

    @Test("PNG round trip is exact, for RGB and RGBA")
    func pngRoundTrip() throws {
        let rgb = SpriteSheetFixture.pixels(columns: 2, rows: 2, cellWidth: 7, cellHeight: 5)
        let (decodedRGB, format) = try ImageCodec.decode(try ImageCodec.encode(rgb, as: .png))
        #expect(format == .png && decodedRGB == rgb)
        var rgba = PixelBuffer(width: 3, height: 2, layout: .rgba, fill: (10, 20, 30, 128))
        rgba.bytes[3] = 0
        let (decodedRGBA, _) = try ImageCodec.decode(try ImageCodec.encode(rgba, as: .png))
        #expect(decodedRGBA == rgba)
    }

    @Test("info reads the header without decoding")
    func info() throws {
        let jpeg = try ImageCodec.encode(PixelBuffer(width: 33, height: 17), as: .jpeg)
        #expect(try ImageCodec.info(jpeg) == ImageInfo(format: .jpeg, width: 33, height: 17))
        let png = try ImageCodec.encode(PixelBuffer(width: 5, height: 9), as: .png)
        #expect(try ImageCodec.info(Data(png)) == ImageInfo(format: .png, width: 5, height: 9))
    }

    @Test("a JPEG declaring more than the pixel limit is refused before decoding")
    func hugeJPEG() throws {
        let huge = try OversizedImageFixture.jpeg(declaringWidth: 60_000, height: 60_000)
        #expect(try ImageCodec.info(huge).pixelCount == 3_600_000_000)
        #expect {
            _ = try ImageCodec.decode(huge)
        } throws: { ($0 as? ImagingError)?.kind == .tooLarge }
        // A lower limit applies to ordinary sizes too.
        let normal = try ImageCodec.encode(PixelBuffer(width: 100, height: 100), as: .jpeg)
        #expect {
            _ = try ImageCodec.decode(normal, limits: ImageLimits(maximumPixelCount: 9_999))
        } throws: { ($0 as? ImagingError)?.kind == .tooLarge }
    }

    @Test("a PNG declaring more than the pixel limit is refused before decoding")
    func hugePNG() throws {
        let huge = try OversizedImageFixture.png(declaringWidth: 100_000, height: 100_000)
        #expect(try ImageCodec.info(huge).width == 100_000)
        #expect {
            _ = try ImageCodec.decode(huge)
        } throws: { ($0 as? ImagingError)?.kind == .tooLarge }
    }

    @Test("truncated and damaged images are errors, not crashes")
    func damaged() throws {
        let jpeg = try SpriteSheetFixture.encoded(columns: 4, rows: 4, cellWidth: 32, cellHeight: 32, texture: 8)
        #expect {
            _ = try ImageCodec.decode(Array(jpeg.prefix(jpeg.count / 2)))
        } throws: { ($0 as? ImagingError)?.kind == .corrupt }
        let png = try SpriteSheetFixture.encoded(
            columns: 4, rows: 4, cellWidth: 32, cellHeight: 32, format: .png, texture: 8)
        #expect {
            _ = try ImageCodec.decode(Array(png.prefix(png.count / 2)))
        } throws: { ($0 as? ImagingError)?.kind == .corrupt }
        var flipped = png
        flipped[40] ^= 0xFF
        #expect(throws: ImagingError.self) { _ = try ImageCodec.decode(flipped) }
        #expect {
            _ = try ImageCodec.decode(Array("not an image at all".utf8))
        } throws: { ($0 as? ImagingError)?.kind == .unrecognizedFormat }
        #expect(throws: ImagingError.self) { _ = try ImageCodec.decode([0xFF, 0xD8, 0xFF]) }
        #expect(throws: ImagingError.self) { _ = try ImageCodec.decode([UInt8]()) }
        var badHeader = try OversizedImageFixture.png(declaringWidth: 10, height: 10)
        badHeader[29] ^= 0x55  // CRC mismatch
        #expect(throws: ImagingError.self) { _ = try ImageCodec.info(badHeader) }
    }

    @Test("crop copies exactly the region and refuses one outside the image")
    func crop() throws {
        let sheet = SpriteSheetFixture.pixels(columns: 3, rows: 2, cellWidth: 10, cellHeight: 8)
        let cell = try sheet.cropped(x: 20, y: 8, width: 10, height: 8)
        #expect(cell.width == 10 && cell.height == 8)
        let (r, g, b) = SpriteSheetFixture.color(ofCell: 5)
        #expect(cell.pixel(x: 0, y: 0) == (r, g, b, 255))
        #expect(cell.pixel(x: 9, y: 7) == (r, g, b, 255))
        #expect(throws: ImagingError.self) { _ = try sheet.cropped(x: 25, y: 0, width: 10, height: 8) }
        #expect(throws: ImagingError.self) { _ = try sheet.cropped(x: -1, y: 0, width: 1, height: 1) }
        #expect(throws: ImagingError.self) { _ = try sheet.cropped(x: 0, y: 0, width: 0, height: 1) }
    }

    @Test("scale keeps flat colours and reaches the exact size; fitting keeps the aspect ratio")
    func scale() throws {
        let image = PixelBuffer(width: 1600, height: 900, fill: (200, 100, 50, 255))
        let small = try image.scaled(width: 160, height: 90)
        #expect(small.width == 160 && small.height == 90)
        #expect(small.pixel(x: 80, y: 45) == (200, 100, 50, 255))
        let up = try PixelBuffer(width: 2, height: 2, fill: (9, 9, 9, 255)).scaled(width: 7, height: 5)
        #expect(up.width == 7 && up.height == 5 && up.pixel(x: 6, y: 4) == (9, 9, 9, 255))
        #expect(image.size.fitted(within: PixelSize(width: 320, height: 320)) == PixelSize(width: 320, height: 180))
        #expect(image.size.fitted(within: PixelSize(width: 4000, height: 4000)) == PixelSize(width: 1600, height: 900))
        #expect(throws: ImagingError.self) { _ = try image.scaled(width: 0, height: 10) }
    }
}
