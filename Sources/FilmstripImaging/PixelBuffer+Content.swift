/// How much a picture shows: its brightness, contrast and sharpness, measured on its luma.
public struct ImageContent: Sendable, Hashable {
    /// Mean luma, 0–255.
    public var meanLuma: Double
    /// Standard deviation of luma, 0–128.
    public var contrast: Double
    /// Variance of the luma Laplacian on the picture scaled to at most 128 px: edges and detail.
    public var sharpness: Double

    /// Creates a measurement.
    public init(meanLuma: Double, contrast: Double, sharpness: Double) {
        self.meanLuma = meanLuma
        self.contrast = contrast
        self.sharpness = sharpness
    }

    /// Almost all dark (a fade, a black leader).
    public var isBlack: Bool { meanLuma < 24 && contrast < 16 }
    /// One flat colour (a slate, a test card's background).
    public var isUniform: Bool { contrast < 8 }
    /// Soft everywhere (motion blur, a defocused opening shot).
    public var isBlurred: Bool { sharpness < 12 }
    /// Neither black, uniform nor blurred: a picture worth showing as a poster.
    public var isInformative: Bool { !isBlack && !isUniform && !isBlurred }
}

extension PixelBuffer {
    /// The picture's brightness, contrast and sharpness (see ``ImageContent``).
    public var content: ImageContent {
        // Luma on a grid of at most 128 x 128 samples (nearest neighbour): enough to judge, cheap to compute.
        let step = max(1, max(width, height) / 128)
        let w = max(1, width / step)
        let h = max(1, height / step)
        var luma = [Double](repeating: 0, count: w * h)
        let channels = layout.channels
        bytes.withUnsafeBufferPointer { pixels in
            for y in 0..<h {
                for x in 0..<w {
                    let i = (y * step) * bytesPerRow + (x * step) * channels
                    luma[y * w + x] =
                        channels >= 3
                        ? 0.299 * Double(pixels[i]) + 0.587 * Double(pixels[i + 1]) + 0.114 * Double(pixels[i + 2])
                        : Double(pixels[i])
                }
            }
        }
        let count = Double(luma.count)
        let mean = luma.reduce(0, +) / count
        let variance = luma.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / count
        var laplacian: [Double] = []
        if w >= 3, h >= 3 {
            laplacian.reserveCapacity((w - 2) * (h - 2))
            for y in 1..<(h - 1) {
                for x in 1..<(w - 1) {
                    let c = luma[y * w + x]
                    laplacian.append(
                        luma[(y - 1) * w + x] + luma[(y + 1) * w + x] + luma[y * w + x - 1] + luma[y * w + x + 1] - 4
                            * c)
                }
            }
        }
        let lapMean = laplacian.isEmpty ? 0 : laplacian.reduce(0, +) / Double(laplacian.count)
        let sharpness =
            laplacian.isEmpty
            ? 0 : laplacian.reduce(0) { $0 + ($1 - lapMean) * ($1 - lapMean) } / Double(laplacian.count)
        return ImageContent(meanLuma: mean, contrast: variance.squareRoot(), sharpness: sharpness)
    }
}
