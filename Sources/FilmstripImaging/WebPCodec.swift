import CWebP

/// WebP decoding and encoding with the system's libwebp. Pictures are encoded lossy (VP8, 4:2:0) at libwebp's
/// method 2: on the sheet benchmark (`FilmstripBench sheet-bytes`) it gives the bytes of the default method 4 in half
/// its time, and libwebp's "sharp" RGB to YUV conversion gave lower SSIM and more bytes, so it is off. Any WebP a
/// server sends is read, lossless and alpha included. Animated WebP is refused.
public enum WebPCodec {
    /// Reads the dimensions from a WebP header without decoding pixels.
    public static func info(_ data: UnsafeRawBufferPointer) throws(ImagingError) -> ImageInfo {
        let features = try features(data)
        return ImageInfo(format: .webp, width: Int(features.width), height: Int(features.height))
    }

    private static func features(_ data: UnsafeRawBufferPointer) throws(ImagingError) -> WebPBitstreamFeatures {
        guard let base = data.baseAddress, data.count >= 12 else {
            throw ImagingError(.corrupt, "the WebP data is empty")
        }
        var features = WebPBitstreamFeatures()
        guard filmstrip_webp_features(base.assumingMemoryBound(to: UInt8.self), data.count, &features) != 0 else {
            throw ImagingError(.corrupt, "invalid WebP header")
        }
        guard features.has_animation == 0 else {
            throw ImagingError(.corrupt, "the WebP is animated; a still image was expected")
        }
        return features
    }

    /// Decodes a WebP to RGB, or RGBA when it has an alpha channel. The header is checked against `limits` before
    /// pixel memory is allocated.
    public static func decode(
        _ data: UnsafeRawBufferPointer, limits: ImageLimits = .default
    ) throws(ImagingError) -> PixelBuffer {
        let features = try features(data)
        let info = ImageInfo(format: .webp, width: Int(features.width), height: Int(features.height))
        try limits.check(info)
        let layout: PixelBuffer.Layout = features.has_alpha != 0 ? .rgba : .rgb
        let stride = info.width * layout.channels
        let size = stride * info.height
        let input = data.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var ok = false
        let pixels = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let out =
                layout == .rgba
                ? WebPDecodeRGBAInto(input, data.count, buffer.baseAddress, size, Int32(stride))
                : WebPDecodeRGBInto(input, data.count, buffer.baseAddress, size, Int32(stride))
            ok = out != nil
            initialized = ok ? size : 0
        }
        guard ok else { throw ImagingError(.corrupt, "the WebP is damaged or truncated") }
        return PixelBuffer(width: info.width, height: info.height, layout: layout, bytes: pixels)
    }

    /// Encodes pixels as a lossy WebP; `quality` is libwebp's 0–100 scale (not JPEG's: at equal quality numbers the
    /// two differ in size and fidelity).
    public static func encode(_ buffer: PixelBuffer, quality: Int = 80) throws(ImagingError) -> [UInt8] {
        try buffer.bytes.withBytes { pixels throws(ImagingError) in
            try encode(
                pixels.baseAddress!, width: buffer.width, height: buffer.height, bytesPerRow: buffer.bytesPerRow,
                alpha: buffer.layout == .rgba, quality: quality)
        }
    }

    /// Encodes packed RGB rows (a sheet's memory) as a lossy WebP.
    public static func encodeRGB(
        _ pixels: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, quality: Int = 80
    ) throws(ImagingError) -> [UInt8] {
        try encode(pixels, width: width, height: height, bytesPerRow: bytesPerRow, alpha: false, quality: quality)
    }

    /// The largest side a WebP can have.
    public static let maximumDimension = 16383

    private static func encode(
        _ pixels: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, alpha: Bool, quality: Int
    ) throws(ImagingError) -> [UInt8] {
        guard (1...maximumDimension).contains(width), (1...maximumDimension).contains(height) else {
            throw ImagingError(
                .invalidGeometry, "a WebP is at most \(maximumDimension) pixels a side (got \(width)x\(height))")
        }
        var config = WebPConfig()
        guard filmstrip_webp_config_init(&config, Float(min(100, max(0, quality)))) != 0 else {
            throw ImagingError(.encodingFailed, "cannot configure the WebP encoder (library version mismatch)")
        }
        config.method = 2
        return try withPicture(
            pixels, width: width, height: height, bytesPerRow: bytesPerRow, alpha: alpha, argb: false
        ) { picture throws(ImagingError) in
            try encode(&picture, config: &config)
        }
    }

    /// Runs `body` with a libwebp picture of the pixels (kept as ARGB when `argb`, else converted to YUV as they
    /// are imported), freed after.
    static func withPicture<T>(
        _ pixels: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, alpha: Bool, argb: Bool,
        _ body: (inout WebPPicture) throws(ImagingError) -> T
    ) throws(ImagingError) -> T {
        var picture = WebPPicture()
        guard filmstrip_webp_picture_init(&picture) != 0 else {
            throw ImagingError(.encodingFailed, "cannot create a WebP picture (library version mismatch)")
        }
        defer { WebPPictureFree(&picture) }
        picture.width = Int32(width)
        picture.height = Int32(height)
        picture.use_argb = argb ? 1 : 0
        let rgb = pixels.assumingMemoryBound(to: UInt8.self)
        let imported =
            alpha
            ? WebPPictureImportRGBA(&picture, rgb, Int32(bytesPerRow))
            : WebPPictureImportRGB(&picture, rgb, Int32(bytesPerRow))
        guard imported != 0 else { throw ImagingError(.encodingFailed, "cannot import the pixels into libwebp") }
        return try body(&picture)
    }

    private static func encode(
        _ picture: inout WebPPicture, config: inout WebPConfig
    ) throws(ImagingError) -> [UInt8] {
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        picture.writer = WebPMemoryWrite
        let encoded = withUnsafeMutablePointer(to: &writer) { writer in
            picture.custom_ptr = UnsafeMutableRawPointer(writer)
            return WebPEncode(&config, &picture)
        }
        guard encoded != 0, let mem = writer.mem else {
            throw ImagingError(.encodingFailed, "WebP encoding failed (libwebp error \(picture.error_code.rawValue))")
        }
        return Array(UnsafeBufferPointer(start: mem, count: writer.size))
    }
}
