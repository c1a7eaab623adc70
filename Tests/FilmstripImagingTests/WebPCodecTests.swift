import FilmstripFormats
import FilmstripImaging
import FilmstripTesting
import Foundation
import Testing

@Suite("WebP")
struct WebPCodecTests {
    @Test("lossy round trip keeps size and colours, and the header is read without decoding")
    func roundTrip() throws {
        let sheet = SpriteSheetFixture.pixels(columns: 4, rows: 3, cellWidth: 40, cellHeight: 30)
        let encoded = try ImageCodec.encode(sheet, as: .webp, quality: 90)
        #expect(ImageFormat.sniff(encoded) == .webp)
        #expect(try ImageCodec.info(encoded) == ImageInfo(format: .webp, width: 160, height: 90))
        #expect(ImageHeader(encoded).format == .webp && ImageHeader(encoded).width == 160)
        let (decoded, format) = try ImageCodec.decode(encoded)
        #expect(format == .webp)
        #expect(decoded.width == 160 && decoded.height == 90 && decoded.layout == .rgb)
        for cell in 0..<12 {
            let mean = decoded.meanColor(x: (cell % 4) * 40 + 8, y: (cell / 4) * 30 + 8, width: 24, height: 14)
            #expect(SpriteSheetFixture.cell(matching: mean) == cell)
        }
        let psnr = try #require(decoded.psnr(against: sheet))
        #expect(psnr >= 30, "PSNR \(psnr) dB")
        // Lower quality, fewer bytes.
        #expect(try ImageCodec.encode(sheet, as: .webp, quality: 30).count < encoded.count)
    }

    @Test("an RGBA image keeps its alpha channel")
    func alpha() throws {
        var rgba = PixelBuffer(width: 16, height: 8, layout: .rgba, fill: (200, 40, 10, 255))
        for x in 0..<8 { rgba.bytes[x * 4 + 3] = 0 }
        let (decoded, _) = try ImageCodec.decode(try ImageCodec.encode(rgba, as: .webp, quality: 90))
        #expect(decoded.layout == .rgba)
        #expect(decoded.bytes[3] == 0 && decoded.bytes[9 * 4 + 3] == 255)
    }

    @Test("a WebP declaring more than the pixel limit is refused before decoding")
    func huge() throws {
        var bytes = try ImageCodec.encode(PixelBuffer(width: 16, height: 16), as: .webp)
        // A simple-format (VP8) WebP: the frame header's 14-bit width and height at bytes 26 and 28.
        #expect(String(decoding: bytes[12..<16], as: UTF8.self) == "VP8 ")
        bytes[26] = 0xFF
        bytes[27] = 0x3F
        bytes[28] = 0xFF
        bytes[29] = 0x3F
        #expect(try ImageCodec.info(bytes) == ImageInfo(format: .webp, width: 16383, height: 16383))
        #expect {
            _ = try ImageCodec.decode(bytes)
        } throws: { ($0 as? ImagingError)?.kind == .tooLarge }
    }

    @Test("truncated, damaged and empty WebPs are errors, not crashes; an image too wide for WebP is refused")
    func damaged() throws {
        let encoded = try ImageCodec.encode(
            SpriteSheetFixture.pixels(columns: 4, rows: 4, cellWidth: 32, cellHeight: 32), as: .webp)
        for cut in [12, 20, 30, encoded.count / 2, encoded.count - 1] {
            #expect(throws: ImagingError.self, "cut at \(cut)") { _ = try ImageCodec.decode(Array(encoded[..<cut])) }
        }
        var random = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            var bytes = encoded
            for _ in 0..<8 { bytes[Int.random(in: 12..<bytes.count, using: &random)] ^= 0xFF }
            // Damage in the picture data may still decode (to wrong pixels); it must never crash or overrun.
            if let (image, _) = try? ImageCodec.decode(bytes) { #expect(image.bytes.count == 128 * 128 * 3) }
        }
        #expect(throws: ImagingError.self) { _ = try ImageCodec.decode(Array("RIFF\0\0\0\0WEBP".utf8)) }
        #expect {
            _ = try ImageCodec.encode(PixelBuffer(width: 16_384, height: 2), as: .webp)
        } throws: { ($0 as? ImagingError)?.kind == .invalidGeometry }
    }

    @Test("SSIM: 1 for identical pictures; blur lowers luma, a chroma-only change lowers chroma alone")
    func ssim() throws {
        let sheet = SpriteSheetFixture.pixels(columns: 4, rows: 3, cellWidth: 40, cellHeight: 30)
        let same = try #require(sheet.ssim(against: sheet))
        #expect(same.y == 1 && same.cb == 1 && same.cr == 1 && same.all == 1)
        // A horizontal box blur of each row.
        var blurred = sheet
        for y in 0..<sheet.height {
            for x in 1..<(sheet.width - 1) {
                for c in 0..<3 {
                    let i = y * sheet.bytesPerRow + x * 3 + c
                    let sum = Int(sheet.bytes[i - 3]) + Int(sheet.bytes[i]) + Int(sheet.bytes[i + 3])
                    blurred.bytes[i] = UInt8(sum / 3)
                }
            }
        }
        let blur = try #require(blurred.ssim(against: sheet))
        #expect(blur.y < 0.999 && blur.all < 1)
        // Grey stripes against the same stripes tinted: equal luma, different chroma.
        var grey = PixelBuffer(width: 16, height: 16, fill: (128, 128, 128, 255))
        var tinted = PixelBuffer(width: 16, height: 16, fill: (128, 128, 128, 255))
        for y in 0..<16 where y % 2 == 0 {
            for x in 0..<16 {
                let i = y * 48 + x * 3
                grey.bytes[i...(i + 2)] = [200, 200, 200]
                // Y = 200 with a red tint: 0.299·r + 0.587·g + 0.114·b = 200.
                tinted.bytes[i...(i + 2)] = [255, 177, 203]
            }
        }
        let tint = try #require(tinted.ssim(against: grey))
        #expect(tint.y > 0.99 && tint.cr < 0.9, "\(tint)")
        #expect(sheet.ssim(against: PixelBuffer(width: 8, height: 8)) == nil)
    }

    @Test("formats by extension and MIME type")
    func names() {
        #expect(ImageFormat(fileExtension: "WEBP") == .webp && ImageFormat(fileExtension: "jpeg") == .jpeg)
        #expect(ImageFormat(fileExtension: "gif") == nil)
        #expect(ImageFormat.webp.mimeType == "image/webp" && ImageFormat.webp.fileExtension == "webp")
        #expect(ImageFormat.jpeg.mimeType == "image/jpeg" && ImageFormat.jpeg.fileExtension == "jpg")
    }
}
