/// Builds Roku BIF archives for tests: the header, the index (with its end marker) and the images.
public enum BIFFixture {
    /// The magic number.
    public static let magic: [UInt8] = [0x89, 0x42, 0x49, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]

    /// A BIF of `images` shown from `timestamps` (in units of `multiplier` milliseconds; 0 means 1000).
    public static func make(images: [[UInt8]], timestamps: [UInt32], multiplier: UInt32 = 1000) -> [UInt8] {
        func u32(_ v: UInt32) -> [UInt8] {
            [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
        }
        var out = magic + u32(0) + u32(UInt32(images.count)) + u32(multiplier)
        out += [UInt8](repeating: 0, count: 64 - out.count)
        var offset = UInt32(64 + (images.count + 1) * 8)
        for (image, time) in zip(images, timestamps) {
            out += u32(time) + u32(offset)
            offset += UInt32(image.count)
        }
        out += u32(0xFFFF_FFFF) + u32(offset)
        for image in images { out += image }
        return out
    }
}
