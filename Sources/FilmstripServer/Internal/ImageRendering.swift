import FilmstripImaging
import Foundation

/// Turns a video's picture into the image an image URL asks for: turned clockwise, then flipped (Mux flips after
/// its other transformations), then sized into the asked box by the fit mode.
enum ImageRendering {
    static func render(_ picture: PixelBuffer, _ parameters: ImageParameters) throws(ImagingError) -> PixelBuffer {
        var image = picture.rotated(quarterTurns: parameters.quarterTurns)
        if parameters.flipHorizontal { image = image.flippedHorizontally() }
        // Upside down: half a turn, then mirrored left to right.
        if parameters.flipVertical { image = image.rotated(quarterTurns: 2, mirrored: true) }
        let largest = ImageParameters.largestSide
        let (w, h) = (Double(image.width), Double(image.height))
        switch (parameters.width, parameters.height) {
        case (nil, nil):
            return try fitted(image, inside: largest, largest, enlarging: false)
        case (let width?, nil):
            return try fitted(image, inside: width, largest, enlarging: true, exactly: .width)
        case (nil, let height?):
            return try fitted(image, inside: largest, height, enlarging: true, exactly: .height)
        case (let width?, let height?):
            switch parameters.fitMode {
            case .stretch:
                return try image.scaled(width: width, height: height)
            case .preserve:
                return try fitted(image, inside: width, height, enlarging: true)
            case .pad:
                let inner = try fitted(image, inside: width, height, enlarging: true)
                return pasted(inner, onBlack: width, height)
            case .crop, .smartcrop:
                let scale = max(Double(width) / w, Double(height) / h)
                let sw = max(width, Int((w * scale).rounded()))
                let sh = max(height, Int((h * scale).rounded()))
                let covering = try image.scaled(width: sw, height: sh)
                let (x, y) =
                    parameters.fitMode == .crop
                    ? ((sw - width) / 2, (sh - height) / 2) : busiest(covering, width: width, height: height)
                return try covering.cropped(x: x, y: y, width: width, height: height)
            }
        }
    }

    enum Side { case width, height }

    /// The image scaled to fit inside `width` x `height`, aspect ratio kept; with `exactly`, that side is the
    /// asked one and the other follows (unless it would pass the bound, when both shrink to fit). Never enlarged
    /// unless `enlarging`.
    static func fitted(
        _ image: PixelBuffer, inside width: Int, _ height: Int, enlarging: Bool, exactly side: Side? = nil
    ) throws(ImagingError) -> PixelBuffer {
        let (w, h) = (Double(image.width), Double(image.height))
        var scale = min(Double(width) / w, Double(height) / h)
        if side == .width, h * Double(width) / w <= Double(height) { scale = Double(width) / w }
        if side == .height, w * Double(height) / h <= Double(width) { scale = Double(height) / h }
        if !enlarging { scale = min(scale, 1) }
        let sw = max(1, min(width, Int((w * scale).rounded())))
        let sh = max(1, min(height, Int((h * scale).rounded())))
        guard sw != image.width || sh != image.height else { return image }
        return try image.scaled(width: sw, height: sh)
    }

    /// `image` centred on a black `width` x `height` picture.
    static func pasted(_ image: PixelBuffer, onBlack width: Int, _ height: Int) -> PixelBuffer {
        var out = PixelBuffer(width: width, height: height, layout: image.layout)
        let c = image.layout.channels
        let x0 = (width - image.width) / 2
        let y0 = (height - image.height) / 2
        let row = image.width * c
        for y in 0..<image.height {
            let from = y * image.bytesPerRow
            let to = (y0 + y) * out.bytesPerRow + x0 * c
            out.bytes.replaceSubrange(to..<(to + row), with: image.bytes[from..<(from + row)])
        }
        return out
    }

    /// Where a `width` x `height` cut of `image` (which covers it, overflowing on one side) holds the most detail:
    /// the luma differences between neighbouring pixels summed per column (or row), and the window of the cut's
    /// size with the largest sum.
    static func busiest(_ image: PixelBuffer, width: Int, height: Int) -> (x: Int, y: Int) {
        let horizontal = image.width > width
        let count = horizontal ? image.width : image.height
        let window = horizontal ? width : height
        guard count > window else { return (0, 0) }
        var energy = [Double](repeating: 0, count: count)
        let c = image.layout.channels
        image.bytes.withUnsafeBufferPointer { p in
            func luma(_ x: Int, _ y: Int) -> Int {
                let i = (y * image.width + x) * c
                return (Int(p[i]) * 77 + Int(p[i + 1]) * 150 + Int(p[i + 2]) * 29) >> 8
            }
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let here = luma(x, y)
                    let across = x + 1 < image.width ? abs(luma(x + 1, y) - here) : 0
                    let down = y + 1 < image.height ? abs(luma(x, y + 1) - here) : 0
                    energy[horizontal ? x : y] += Double(across + down)
                }
            }
        }
        var sum = energy[0..<window].reduce(0, +)
        var best = (sum: sum, at: 0)
        for start in 1...(count - window) {
            sum += energy[start + window - 1] - energy[start - 1]
            if sum > best.sum { best = (sum, start) }
        }
        return horizontal ? (best.at, (image.height - height) / 2) : ((image.width - width) / 2, best.at)
    }
}
