extension PixelBuffer {
    /// The image turned clockwise by `quarterTurns` × 90° (any integer; 0 returns the image unchanged).
    public func rotated(quarterTurns: Int) -> PixelBuffer {
        let turns = ((quarterTurns % 4) + 4) % 4
        guard turns != 0 else { return self }
        let c = layout.channels
        let (w, h) = turns == 2 ? (width, height) : (height, width)
        let source = bytes
        let out = [UInt8](unsafeUninitializedCapacity: w * h * c) { buffer, initialized in
            source.withUnsafeBufferPointer { s in
                for y in 0..<height {
                    for x in 0..<width {
                        let (nx, ny): (Int, Int)
                        switch turns {
                        case 1: (nx, ny) = (height - 1 - y, x)
                        case 2: (nx, ny) = (width - 1 - x, height - 1 - y)
                        default: (nx, ny) = (y, width - 1 - x)
                        }
                        let from = (y * width + x) * c
                        let to = (ny * w + nx) * c
                        for k in 0..<c { buffer[to + k] = s[from + k] }
                    }
                }
            }
            initialized = w * h * c
        }
        return PixelBuffer(width: w, height: h, layout: layout, bytes: out)
    }
}
