import Foundation

extension PixelBuffer {
    /// The peak signal-to-noise ratio in dB between this picture and `other` (the same size and layout), over every
    /// channel sample: 10·log10(255² / mean squared difference). Identical pictures give `.infinity`; `nil` when
    /// the sizes or layouts differ.
    public func psnr(against other: PixelBuffer) -> Double? {
        psnr(againstBytes: other.bytes, layout: other.layout, width: other.width, height: other.height)
    }

    /// ``psnr(against:)`` against tightly packed samples of `width` x `height` in `layout`.
    public func psnr(againstBytes other: [UInt8], layout: Layout, width: Int, height: Int) -> Double? {
        guard width == self.width, height == self.height, layout == self.layout, other.count == bytes.count,
            !bytes.isEmpty
        else { return nil }
        var squared: UInt64 = 0
        bytes.withUnsafeBufferPointer { ours in
            other.withUnsafeBufferPointer { theirs in
                for i in 0..<ours.count {
                    let d = Int(ours[i]) - Int(theirs[i])
                    squared &+= UInt64(d * d)
                }
            }
        }
        guard squared > 0 else { return .infinity }
        return 10 * log10(255 * 255 / (Double(squared) / Double(bytes.count)))
    }
}
