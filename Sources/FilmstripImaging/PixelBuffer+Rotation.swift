extension PixelBuffer {
    /// The image turned clockwise by `quarterTurns` × 90° (any integer; 0 returns the image unchanged), then, when
    /// `mirrored`, flipped left to right (a display matrix with a reflection, as some front cameras record).
    public func rotated(quarterTurns: Int, mirrored: Bool = false) -> PixelBuffer {
        let turns = ((quarterTurns % 4) + 4) % 4
        guard !mirrored else { return rotated(quarterTurns: turns).flippedHorizontally() }
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

extension PixelBuffer {
    /// The image mirrored left to right.
    public func flippedHorizontally() -> PixelBuffer {
        let c = layout.channels
        let source = bytes
        let out = [UInt8](unsafeUninitializedCapacity: width * height * c) { buffer, initialized in
            source.withUnsafeBufferPointer { s in
                for y in 0..<height {
                    let row = y * width
                    for x in 0..<width {
                        let from = (row + x) * c
                        let to = (row + width - 1 - x) * c
                        for k in 0..<c { buffer[to + k] = s[from + k] }
                    }
                }
            }
            initialized = width * height * c
        }
        return PixelBuffer(width: width, height: height, layout: layout, bytes: out)
    }
}
