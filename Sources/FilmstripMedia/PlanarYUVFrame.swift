public import FilmstripFormats

/// A picture as planar 8-bit Y′CbCr 4:2:0 (I420: a full-size luma plane, then Cb and Cr at half width and height),
/// as decoders produce it, for outputs that upload it as is (a GPU converts it while drawing).
///
/// ``displaySize`` is the size to show it at: the sample aspect ratio applied (the planes are in coded samples).
public struct PlanarYUVFrame: Sendable {
    /// How Y′CbCr maps to RGB.
    public enum Matrix: Sendable, Hashable {
        /// ITU-R BT.601 (standard definition, and what untagged video is taken as).
        case bt601
        /// ITU-R BT.709 (high definition).
        case bt709
    }

    /// The luma plane's size, in samples.
    public let width: Int
    public let height: Int
    /// The size to show the picture at (sample aspect ratio applied).
    public let displaySize: PixelSize
    /// Y, Cb and Cr, each `strides[i]` bytes per row.
    public let planes: [[UInt8]]
    public let strides: [Int]
    public let matrix: Matrix
    /// Full range (0...255) rather than video range (16...235 luma).
    public let fullRange: Bool

    /// A frame of `planes` (Y, then Cb and Cr at half size, rounded up).
    public init(
        width: Int, height: Int, displaySize: PixelSize, planes: [[UInt8]], strides: [Int], matrix: Matrix,
        fullRange: Bool
    ) {
        self.width = width
        self.height = height
        self.displaySize = displaySize
        self.planes = planes
        self.strides = strides
        self.matrix = matrix
        self.fullRange = fullRange
    }

    /// The chroma planes' size.
    public var chromaWidth: Int { (width + 1) / 2 }
    public var chromaHeight: Int { (height + 1) / 2 }

    /// The luma sample at (`x`, `y`).
    public func luma(x: Int, y: Int) -> UInt8 { planes[0][y * strides[0] + x] }
}
