import CPNG

/// PNG decoding and encoding with libpng's simplified API (which reports errors instead of longjmp-ing out).
public enum PNGCodec {
    /// Reads the dimensions from a PNG header without decoding pixels.
    public static func info(_ data: UnsafeRawBufferPointer) throws(ImagingError) -> ImageInfo {
        try withImage(data) { image throws(ImagingError) in
            ImageInfo(format: .png, width: Int(image.width), height: Int(image.height))
        }
    }

    /// Runs `body` on a `png_image` whose header has been read.
    ///
    /// libpng keeps the address of the `png_image` as its error pointer, so the struct must stay where it is from
    /// `begin_read` to `png_image_free`: it lives in this frame and is only ever passed `inout`.
    private static func withImage<R>(
        _ data: UnsafeRawBufferPointer, _ body: (inout png_image) throws(ImagingError) -> R
    ) throws(ImagingError) -> R {
        guard let base = data.baseAddress, data.count >= 8 else {
            throw ImagingError(.corrupt, "the PNG data is empty")
        }
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        defer { png_image_free(&image) }
        guard png_image_begin_read_from_memory(&image, base, data.count) != 0 else {
            throw ImagingError(.corrupt, "invalid PNG header: \(message(&image))")
        }
        return try body(&image)
    }

    /// Decodes a PNG to RGB, or RGBA when the image has transparency. The header is checked against `limits`
    /// before pixel memory is allocated.
    public static func decode(
        _ data: UnsafeRawBufferPointer, limits: ImageLimits = .default
    ) throws(ImagingError)
        -> PixelBuffer
    {
        try withImage(data) { image throws(ImagingError) in
            let info = ImageInfo(format: .png, width: Int(image.width), height: Int(image.height))
            try limits.check(info)
            let hasAlpha = image.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0
            let layout: PixelBuffer.Layout = hasAlpha ? .rgba : .rgb
            image.format = hasAlpha ? filmstrip_png_format_rgba : filmstrip_png_format_rgb
            let stride = info.width * layout.channels
            var ok: Int32 = 0
            let pixels = [UInt8](unsafeUninitializedCapacity: stride * info.height) { buffer, initialized in
                ok = png_image_finish_read(&image, nil, buffer.baseAddress, Int32(stride), nil)
                initialized = ok != 0 ? stride * info.height : 0
            }
            guard ok != 0 else { throw ImagingError(.corrupt, "the PNG is damaged: \(message(&image))") }
            return PixelBuffer(width: info.width, height: info.height, layout: layout, bytes: pixels)
        }
    }

    /// Encodes pixels as a PNG.
    public static func encode(_ buffer: PixelBuffer) throws(ImagingError) -> [UInt8] {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        image.width = UInt32(buffer.width)
        image.height = UInt32(buffer.height)
        image.format = buffer.layout == .rgba ? filmstrip_png_format_rgba : filmstrip_png_format_rgb
        var size = 0
        let result: [UInt8]? = buffer.bytes.withUnsafeBufferPointer { pixels in
            guard
                png_image_write_to_memory(&image, nil, &size, 0, pixels.baseAddress, Int32(buffer.bytesPerRow), nil)
                    != 0
            else { return nil }
            return [UInt8](unsafeUninitializedCapacity: size) { out, initialized in
                var written = size
                let ok = png_image_write_to_memory(
                    &image, out.baseAddress, &written, 0, pixels.baseAddress, Int32(buffer.bytesPerRow), nil)
                initialized = ok != 0 ? written : 0
            }
        }
        guard let result, !result.isEmpty else {
            let text = message(&image)
            png_image_free(&image)
            throw ImagingError(.encodingFailed, "PNG encoding failed: \(text)")
        }
        return result
    }

    private static func message(_ image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
