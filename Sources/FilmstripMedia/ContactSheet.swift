public import FilmstripImaging

/// Lays thumbnails out on one sheet, each centred in an equal cell on a dark background.
public enum ContactSheet {
    /// The sheet as pixels: `columns` cells per row (default: about square), cells as large as the largest image,
    /// `gap` pixels between and around them. `nil` images leave their cell empty.
    public static func render(_ images: [PixelBuffer?], columns: Int? = nil, gap: Int = 8) -> PixelBuffer {
        let count = max(1, images.count)
        let columns = max(1, columns ?? Int(Double(count).squareRoot().rounded(.up)))
        let rows = (count + columns - 1) / columns
        let cellWidth = max(16, images.compactMap { $0?.width }.max() ?? 16)
        let cellHeight = max(16, images.compactMap { $0?.height }.max() ?? 16)
        let width = columns * cellWidth + (columns + 1) * gap
        let height = rows * cellHeight + (rows + 1) * gap
        var sheet = PixelBuffer(width: width, height: height, layout: .rgb, fill: (24, 24, 28, 255))
        let stride = sheet.bytesPerRow
        sheet.bytes.withUnsafeMutableBufferPointer { out in
            for (i, image) in images.enumerated() {
                guard let image else { continue }
                let x0 = gap + (i % columns) * (cellWidth + gap) + (cellWidth - image.width) / 2
                let y0 = gap + (i / columns) * (cellHeight + gap) + (cellHeight - image.height) / 2
                for y in 0..<image.height {
                    for x in 0..<image.width {
                        let (r, g, b, _) = image.pixel(x: x, y: y)
                        let o = (y0 + y) * stride + (x0 + x) * 3
                        out[o] = r
                        out[o + 1] = g
                        out[o + 2] = b
                    }
                }
            }
        }
        return sheet
    }
}
