/// What an image's first bytes say it is: its format and, where the header tells, its size. Read from at most the
/// headers (a JPEG's markers up to its frame header), never decoded, so a decompression bomb is seen before a pixel
/// is allocated.
public struct ImageHeader: Sendable, Hashable {
    /// An image format, by its signature.
    public enum Format: String, Sendable, Hashable {
        case jpeg, png, gif, webp, bmp
        /// Anything else.
        case unknown
    }

    /// The format.
    public var format: Format
    /// The declared size, when the header was found.
    public var width: Int?
    /// The declared height, when the header was found.
    public var height: Int?

    /// Reads the header of `bytes`.
    public init(_ bytes: some Collection<UInt8>) {
        let b = Array(bytes.prefix(64 << 10))
        func u16be(_ i: Int) -> Int { i + 1 < b.count ? Int(b[i]) << 8 | Int(b[i + 1]) : 0 }
        func u16le(_ i: Int) -> Int { i + 1 < b.count ? Int(b[i + 1]) << 8 | Int(b[i]) : 0 }
        func u32be(_ i: Int) -> Int { i + 3 < b.count ? u16be(i) << 16 | u16be(i + 2) : 0 }
        func u24le(_ i: Int) -> Int { i + 2 < b.count ? Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 : 0 }
        width = nil
        height = nil
        if b.starts(with: [0xFF, 0xD8, 0xFF]) {
            format = .jpeg
            // Markers up to the frame header (SOF0–SOF15 but DHT, JPG and DAC), each with its length.
            var i = 2
            while i + 9 < b.count, b[i] == 0xFF {
                let marker = b[i + 1]
                if marker == 0xFF {
                    i += 1
                    continue
                }
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                    height = u16be(i + 5)
                    width = u16be(i + 7)
                    break
                }
                if marker == 0xD8 || (0xD0...0xD7).contains(marker) {
                    i += 2
                    continue
                }
                let length = u16be(i + 2)
                guard length >= 2 else { break }
                i += 2 + length
            }
        } else if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            format = .png
            if b.count >= 24 {
                width = u32be(16)
                height = u32be(20)
            }
        } else if b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) {
            format = .gif
            if b.count >= 10 {
                width = u16le(6)
                height = u16le(8)
            }
        } else if b.count >= 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) {
            format = .webp
            let chunk = b.count >= 16 ? String(decoding: b[12..<16], as: UTF8.self) : ""
            if chunk == "VP8 ", b.count >= 30 {
                width = u16le(26) & 0x3FFF
                height = u16le(28) & 0x3FFF
            } else if chunk == "VP8L", b.count >= 25 {
                let bits = Int(b[21]) | Int(b[22]) << 8 | Int(b[23]) << 16 | Int(b[24]) << 24
                width = (bits & 0x3FFF) + 1
                height = ((bits >> 14) & 0x3FFF) + 1
            } else if chunk == "VP8X", b.count >= 30 {
                width = u24le(24) + 1
                height = u24le(27) + 1
            }
        } else if b.starts(with: Array("BM".utf8)) {
            format = .bmp
        } else {
            format = .unknown
        }
    }

    /// Width times height, when both are known.
    public var pixelCount: Int? {
        guard let width, let height else { return nil }
        return width.multipliedReportingOverflow(by: height).overflow ? Int.max : width * height
    }
}
