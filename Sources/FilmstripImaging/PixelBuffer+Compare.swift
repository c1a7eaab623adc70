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

/// Structural similarity of two pictures, per YCbCr plane (BT.601 full range, computed from RGB at full resolution,
/// so chroma subsampling counts against a picture), over 8x8 windows four pixels apart, as ffmpeg's `ssim` filter
/// computes it.
public struct StructuralSimilarity: Sendable, Hashable {
    /// Luma.
    public var y: Double
    /// Blue-difference chroma.
    public var cb: Double
    /// Red-difference chroma.
    public var cr: Double

    /// The planes weighted 4:1:1, as a 4:2:0 picture's sample counts weigh them (ffmpeg's "All").
    public var all: Double { (4 * y + cb + cr) / 6 }
}

extension PixelBuffer {
    /// The ``StructuralSimilarity`` of this picture against `other` (the same size, RGB or RGBA; alpha ignored);
    /// `nil` when the sizes differ or the picture is smaller than 8x8.
    public func ssim(against other: PixelBuffer) -> StructuralSimilarity? {
        guard width == other.width, height == other.height, width >= 8, height >= 8 else { return nil }
        let a = planes()
        let b = other.planes()
        return StructuralSimilarity(
            y: Self.ssim(a.0, b.0, width: width, height: height), cb: Self.ssim(a.1, b.1, width: width, height: height),
            cr: Self.ssim(a.2, b.2, width: width, height: height))
    }

    /// Y, Cb and Cr planes (BT.601, full range) as doubles.
    private func planes() -> ([Double], [Double], [Double]) {
        let n = width * height
        var y = [Double](repeating: 0, count: n)
        var cb = y
        var cr = y
        let channels = layout.channels
        for row in 0..<height {
            for x in 0..<width {
                let i = row * bytesPerRow + x * channels
                let r = Double(bytes[i])
                let g = Double(bytes[i + 1])
                let b = Double(bytes[i + 2])
                let k = row * width + x
                y[k] = 0.299 * r + 0.587 * g + 0.114 * b
                cb[k] = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b
                cr[k] = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b
            }
        }
        return (y, cb, cr)
    }

    /// The mean SSIM of 8x8 windows stepped by 4 (the last row and column of windows flush with the edges).
    private static func ssim(_ a: [Double], _ b: [Double], width: Int, height: Int) -> Double {
        let c1 = (0.01 * 255) * (0.01 * 255)
        let c2 = (0.03 * 255) * (0.03 * 255)
        func starts(_ size: Int) -> [Int] {
            var list = Array(stride(from: 0, through: size - 8, by: 4))
            if list.last != size - 8 { list.append(size - 8) }
            return list
        }
        var total = 0.0
        var windows = 0
        for top in starts(height) {
            for left in starts(width) {
                var sa = 0.0
                var sb = 0.0
                var saa = 0.0
                var sbb = 0.0
                var sab = 0.0
                for row in top..<(top + 8) {
                    for x in left..<(left + 8) {
                        let p = a[row * width + x]
                        let q = b[row * width + x]
                        sa += p
                        sb += q
                        saa += p * p
                        sbb += q * q
                        sab += p * q
                    }
                }
                let ma = sa / 64
                let mb = sb / 64
                let va = saa / 64 - ma * ma
                let vb = sbb / 64 - mb * mb
                let cov = sab / 64 - ma * mb
                total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
                windows += 1
            }
        }
        return total / Double(windows)
    }
}
