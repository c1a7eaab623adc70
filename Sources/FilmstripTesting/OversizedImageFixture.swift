import FilmstripImaging

/// Small, valid images whose headers declare a huge size: what a hostile or broken server might send to make a
/// client allocate gigabytes.
public enum OversizedImageFixture {
    /// A JPEG whose SOF header declares `width` x `height`; the scan data stays that of a 16x16 image.
    public static func jpeg(declaringWidth width: Int, height: Int) throws -> [UInt8] {
        var bytes = try ImageCodec.encode(PixelBuffer(width: 16, height: 16), as: .jpeg)
        var i = 2
        while i + 9 < bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if marker == 0xC0 || marker == 0xC2 {
                bytes[i + 5] = UInt8(height >> 8)
                bytes[i + 6] = UInt8(height & 0xFF)
                bytes[i + 7] = UInt8(width >> 8)
                bytes[i + 8] = UInt8(width & 0xFF)
                return bytes
            }
            i += 2 + length
        }
        throw ImagingError(.corrupt, "the encoder wrote no SOF marker")
    }

    /// A PNG whose IHDR declares `width` x `height`, re-signed with a valid chunk CRC.
    public static func png(declaringWidth width: UInt32, height: UInt32) throws -> [UInt8] {
        var bytes = try ImageCodec.encode(PixelBuffer(width: 4, height: 4), as: .png)
        // Signature (8), chunk length (4), "IHDR" (4), then width and height.
        for (offset, value) in [(16, width), (20, height)] {
            for k in 0..<4 { bytes[offset + k] = UInt8((value >> (24 - 8 * UInt32(k))) & 0xFF) }
        }
        let crc = crc32(bytes[12..<29])
        for k in 0..<4 { bytes[29 + k] = UInt8((crc >> (24 - 8 * UInt32(k))) & 0xFF) }
        return bytes
    }

    /// CRC-32 (IEEE 802.3), as PNG chunks use.
    public static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
}
