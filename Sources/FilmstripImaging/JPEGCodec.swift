import CTurboJPEG

/// JPEG decoding and encoding with libjpeg-turbo's TurboJPEG API.
///
/// A TurboJPEG handle is not thread-safe, so each call makes its own; the handle is cheap next to the codec work.
public enum JPEGCodec {
    /// Reads the dimensions from a JPEG header without decoding pixels.
    public static func info(_ data: UnsafeRawBufferPointer) throws(ImagingError) -> ImageInfo {
        guard let handle = tjInitDecompress() else { throw ImagingError(.corrupt, "cannot create a JPEG decoder") }
        defer { tjDestroy(handle) }
        return try header(handle, data)
    }

    private static func header(_ handle: tjhandle, _ data: UnsafeRawBufferPointer) throws(ImagingError) -> ImageInfo {
        guard let base = data.baseAddress, data.count > 2 else {
            throw ImagingError(.corrupt, "the JPEG data is empty")
        }
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        let status = tjDecompressHeader3(
            handle, base.assumingMemoryBound(to: UInt8.self), UInt(data.count), &width, &height, &subsampling,
            &colorspace)
        guard status == 0 else {
            throw ImagingError(.corrupt, "invalid JPEG header: \(message(handle))")
        }
        return ImageInfo(format: .jpeg, width: Int(width), height: Int(height))
    }

    /// Decodes a JPEG to RGB pixels. The header is checked against `limits` before pixel memory is allocated.
    public static func decode(
        _ data: UnsafeRawBufferPointer, limits: ImageLimits = .default
    ) throws(ImagingError)
        -> PixelBuffer
    {
        guard let handle = tjInitDecompress() else { throw ImagingError(.corrupt, "cannot create a JPEG decoder") }
        defer { tjDestroy(handle) }
        let info = try header(handle, data)
        try limits.check(info)
        let pitch = info.width * 3
        var failure: String?
        let pixels = [UInt8](unsafeUninitializedCapacity: pitch * info.height) { buffer, initialized in
            let status = tjDecompress2(
                handle, data.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(data.count), buffer.baseAddress,
                Int32(info.width), Int32(pitch), Int32(info.height), Int32(TJPF_RGB.rawValue), 0)
            if status != 0 { failure = message(handle) }
            // Pixels are defined even on failure (libjpeg fills what it could not decode), but we discard them.
            initialized = status == 0 ? pitch * info.height : 0
        }
        if let failure { throw ImagingError(.corrupt, "the JPEG is damaged: \(failure)") }
        return PixelBuffer(width: info.width, height: info.height, layout: .rgb, bytes: pixels)
    }

    /// Encodes pixels as a baseline JPEG.
    ///
    /// - Parameters:
    ///   - quality: 1 to 100.
    ///   - subsampling: chroma subsampling; 4:2:0 by default, the usual choice for photographic thumbnails.
    public static func encode(
        _ image: PixelBuffer, quality: Int = 90, subsampling: ChromaSubsampling = .s420
    )
        throws(ImagingError) -> [UInt8]
    {
        guard let handle = tjInitCompress() else { throw ImagingError(.encodingFailed, "cannot create a JPEG encoder") }
        defer { tjDestroy(handle) }
        let format = image.layout == .rgb ? TJPF_RGB : TJPF_RGBA
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = image.bytes.withUnsafeBufferPointer { pixels in
            tjCompress2(
                handle, pixels.baseAddress, Int32(image.width), Int32(image.bytesPerRow), Int32(image.height),
                Int32(format.rawValue), &output, &size, Int32(subsampling.rawValue),
                Int32(min(100, max(1, quality))), 0)
        }
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else {
            throw ImagingError(.encodingFailed, "JPEG encoding failed: \(message(handle))")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// Encodes RGB pixels held elsewhere (rows `bytesPerRow` apart) without copying them into a ``PixelBuffer``.
    public static func encodeRGB(
        _ pixels: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, quality: Int = 90,
        subsampling: ChromaSubsampling = .s420
    ) throws(ImagingError) -> [UInt8] {
        guard let handle = tjInitCompress() else { throw ImagingError(.encodingFailed, "cannot create a JPEG encoder") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = tjCompress2(
            handle, pixels.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(bytesPerRow), Int32(height),
            Int32(TJPF_RGB.rawValue), &output, &size, Int32(subsampling.rawValue), Int32(min(100, max(1, quality))), 0)
        defer { if let output { tjFree(output) } }
        guard status == 0, let output else {
            throw ImagingError(.encodingFailed, "JPEG encoding failed: \(message(handle))")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// Chroma subsampling for ``encode(_:quality:subsampling:)``.
    public enum ChromaSubsampling: Int32, Sendable, Hashable {
        /// Full chroma resolution.
        case s444 = 0
        /// Half horizontal chroma resolution.
        case s422 = 1
        /// Half horizontal and vertical chroma resolution.
        case s420 = 2
    }

    private static func message(_ handle: tjhandle) -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown error" }
        return String(cString: text)
    }
}
