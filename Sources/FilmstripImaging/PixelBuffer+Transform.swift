public import FilmstripFormats

extension PixelBuffer {
    /// A copy of a rectangle of the image.
    public func cropped(x: Int, y: Int, width w: Int, height h: Int) throws(ImagingError) -> PixelBuffer {
        guard x >= 0, y >= 0, w > 0, h > 0, x + w <= width, y + h <= height else {
            throw ImagingError(
                .invalidGeometry, "the region \(x),\(y),\(w),\(h) does not lie inside the \(width)x\(height) image")
        }
        let c = layout.channels
        let rowBytes = w * c
        let out = [UInt8](unsafeUninitializedCapacity: rowBytes * h) { buffer, initialized in
            bytes.withUnsafeBufferPointer { source in
                for row in 0..<h {
                    let from = source.baseAddress! + (y + row) * bytesPerRow + x * c
                    (buffer.baseAddress! + row * rowBytes).initialize(from: from, count: rowBytes)
                }
            }
            initialized = rowBytes * h
        }
        return PixelBuffer(width: w, height: h, layout: layout, bytes: out)
    }

    /// The image resized to `width` x `height`.
    ///
    /// Downscaling first halves the image with a 2x2 box filter while it is at least twice the target, then
    /// finishes with bilinear interpolation; this keeps thin detail from aliasing without a full resampling kernel.
    public func scaled(width w: Int, height h: Int) throws(ImagingError) -> PixelBuffer {
        guard w > 0, h > 0 else { throw ImagingError(.invalidGeometry, "the target size \(w)x\(h) is not positive") }
        if w == width, h == height { return self }
        var current = self
        while current.width >= w * 2, current.height >= h * 2 {
            current = current.halved()
        }
        return current.bilinear(width: w, height: h)
    }

    /// The image's size.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    private func halved() -> PixelBuffer {
        let w = width / 2
        let h = height / 2
        let c = layout.channels
        let stride = bytesPerRow
        let out = [UInt8](unsafeUninitializedCapacity: w * h * c) { buffer, initialized in
            bytes.withUnsafeBufferPointer { s in
                for y in 0..<h {
                    let r0 = 2 * y * stride
                    let r1 = r0 + stride
                    var o = y * w * c
                    for x in 0..<w {
                        let i = 2 * x * c
                        for k in 0..<c {
                            let sum =
                                Int(s[r0 + i + k]) + Int(s[r0 + i + c + k]) + Int(s[r1 + i + k])
                                + Int(s[r1 + i + c + k])
                            buffer[o] = UInt8((sum + 2) >> 2)
                            o += 1
                        }
                    }
                }
            }
            initialized = w * h * c
        }
        return PixelBuffer(width: w, height: h, layout: layout, bytes: out)
    }

    private func bilinear(width w: Int, height h: Int) -> PixelBuffer {
        let c = layout.channels
        let sx = Double(width) / Double(w)
        let sy = Double(height) / Double(h)
        let stride = bytesPerRow
        let out = [UInt8](unsafeUninitializedCapacity: w * h * c) { buffer, initialized in
            bytes.withUnsafeBufferPointer { s in
                for y in 0..<h {
                    let fy = max(0, (Double(y) + 0.5) * sy - 0.5)
                    let y0 = min(Int(fy), height - 1)
                    let y1 = min(y0 + 1, height - 1)
                    let wy = fy - Double(y0)
                    var o = y * w * c
                    for x in 0..<w {
                        let fx = max(0, (Double(x) + 0.5) * sx - 0.5)
                        let x0 = min(Int(fx), width - 1)
                        let x1 = min(x0 + 1, width - 1)
                        let wx = fx - Double(x0)
                        for k in 0..<c {
                            let a = Double(s[y0 * stride + x0 * c + k])
                            let b = Double(s[y0 * stride + x1 * c + k])
                            let d = Double(s[y1 * stride + x0 * c + k])
                            let e = Double(s[y1 * stride + x1 * c + k])
                            let top = a + (b - a) * wx
                            let bottom = d + (e - d) * wx
                            buffer[o] = UInt8(min(255, max(0, (top + (bottom - top) * wy).rounded())))
                            o += 1
                        }
                    }
                }
            }
            initialized = w * h * c
        }
        return PixelBuffer(width: w, height: h, layout: layout, bytes: out)
    }
}
