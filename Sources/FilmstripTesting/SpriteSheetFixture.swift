public import FilmstripImaging

/// Builds sprite sheets whose cells are filled with distinct, known colours, so a test can tell which cell a crop
/// came from even after JPEG compression.
public enum SpriteSheetFixture {
    /// The colour of cell `index` (0-based, left to right, top to bottom): 125 colours 50 levels apart per channel.
    public static func color(ofCell index: Int) -> (UInt8, UInt8, UInt8) {
        let k = index % 125
        return (UInt8(30 + (k % 5) * 50), UInt8(30 + ((k / 5) % 5) * 50), UInt8(30 + (k / 25) * 50))
    }

    /// Which cell a colour belongs to, if it is within `tolerance` of a cell colour on every channel.
    public static func cell(matching color: (Double, Double, Double), tolerance: Double = 12) -> Int? {
        func level(_ value: Double) -> Int? {
            let step = ((value - 30) / 50).rounded()
            guard step >= 0, step <= 4, abs(value - (30 + step * 50)) <= tolerance else { return nil }
            return Int(step)
        }
        guard let r = level(color.0), let g = level(color.1), let b = level(color.2) else { return nil }
        return r + g * 5 + b * 25
    }

    /// The pixels of a sheet: `columns x rows` cells of `cellWidth x cellHeight`, cell `k` coloured
    /// `color(ofCell: firstCell + k)`. A non-zero `texture` adds noise of that amplitude (keeping each cell's mean
    /// colour), which makes the JPEG about as hard to compress as a real picture; 0 gives flat cells.
    public static func pixels(
        columns: Int, rows: Int, cellWidth: Int, cellHeight: Int, firstCell: Int = 0, texture: Int = 0
    ) -> PixelBuffer {
        let width = columns * cellWidth
        let height = rows * cellHeight
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        var seed: UInt32 = 0x9E37_79B9
        for y in 0..<height {
            let row = y / cellHeight
            for x in 0..<width {
                let column = x / cellWidth
                let (r, g, b) = color(ofCell: firstCell + row * columns + column)
                var delta = 0
                if texture > 0 {
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    delta = Int(seed >> 16) % (2 * texture + 1) - texture  // mean zero
                }
                let i = (y * width + x) * 3
                bytes[i] = UInt8(clamping: Int(r) + delta)
                bytes[i + 1] = UInt8(clamping: Int(g) - delta)
                bytes[i + 2] = UInt8(clamping: Int(b) + delta)
            }
        }
        return PixelBuffer(width: width, height: height, layout: .rgb, bytes: bytes)
    }

    /// An encoded sheet (see ``pixels(columns:rows:cellWidth:cellHeight:firstCell:texture:)``).
    public static func encoded(
        columns: Int, rows: Int, cellWidth: Int, cellHeight: Int, firstCell: Int = 0, format: ImageFormat = .jpeg,
        quality: Int = 90, texture: Int = 0
    ) throws -> [UInt8] {
        let sheet = pixels(
            columns: columns, rows: rows, cellWidth: cellWidth, cellHeight: cellHeight, firstCell: firstCell,
            texture: texture)
        return try ImageCodec.encode(sheet, as: format, quality: quality)
    }
}
