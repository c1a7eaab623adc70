/// Decoded 8-bit pixels, rows top to bottom, tightly packed (`bytesPerRow == width * channels`).
public struct PixelBuffer: Sendable, Hashable {
    /// The channel layout.
    public enum Layout: Int, Sendable, Hashable {
        /// Red, green, blue.
        case rgb = 3
        /// Red, green, blue, alpha (straight, not premultiplied).
        case rgba = 4

        /// Bytes per pixel.
        public var channels: Int { rawValue }
    }

    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Channel layout.
    public let layout: Layout
    /// The pixels, `height * bytesPerRow` bytes.
    public var bytes: [UInt8]

    /// Bytes per row.
    public var bytesPerRow: Int { width * layout.channels }
    /// Size of the pixel memory in bytes.
    public var byteCount: Int { bytes.count }

    /// Creates a buffer from existing pixels.
    public init(width: Int, height: Int, layout: Layout, bytes: [UInt8]) {
        precondition(width > 0 && height > 0, "a pixel buffer needs a positive size")
        precondition(bytes.count == width * height * layout.channels, "pixel count does not match the size")
        self.width = width
        self.height = height
        self.layout = layout
        self.bytes = bytes
    }

    /// Creates a buffer filled with one colour.
    public init(width: Int, height: Int, layout: Layout = .rgb, fill: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 255)) {
        precondition(width > 0 && height > 0, "a pixel buffer needs a positive size")
        self.width = width
        self.height = height
        self.layout = layout
        var bytes = [UInt8](repeating: 0, count: width * height * layout.channels)
        let c = layout.channels
        let pattern = [fill.0, fill.1, fill.2, fill.3]
        for i in stride(from: 0, to: bytes.count, by: c) {
            for k in 0..<c { bytes[i + k] = pattern[k] }
        }
        self.bytes = bytes
    }

    /// The colour at a pixel, as `(r, g, b, a)`; alpha is 255 for RGB buffers.
    public func pixel(x: Int, y: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        let i = y * bytesPerRow + x * layout.channels
        return (bytes[i], bytes[i + 1], bytes[i + 2], layout == .rgba ? bytes[i + 3] : 255)
    }

    /// The mean colour of a rectangle, per channel (r, g, b).
    public func meanColor(x: Int = 0, y: Int = 0, width w: Int? = nil, height h: Int? = nil) -> (Double, Double, Double)
    {
        let w = w ?? width - x
        let h = h ?? height - y
        var sums = (0, 0, 0)
        for row in y..<(y + h) {
            var i = row * bytesPerRow + x * layout.channels
            for _ in 0..<w {
                sums.0 += Int(bytes[i])
                sums.1 += Int(bytes[i + 1])
                sums.2 += Int(bytes[i + 2])
                i += layout.channels
            }
        }
        let n = Double(max(1, w * h))
        return (Double(sums.0) / n, Double(sums.1) / n, Double(sums.2) / n)
    }
}
