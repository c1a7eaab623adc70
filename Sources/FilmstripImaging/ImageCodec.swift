/// Format-independent entry points: probe, decode and encode JPEG, PNG or WebP.
public enum ImageCodec {
    /// Reads format and size from the header, without decoding pixels.
    public static func info(_ data: some ContiguousBytesLike) throws(ImagingError) -> ImageInfo {
        try data.withBytes { raw throws(ImagingError) in
            switch ImageFormat.sniff(raw) {
            case .jpeg: return try JPEGCodec.info(raw)
            case .png: return try PNGCodec.info(raw)
            case .webp: return try WebPCodec.info(raw)
            case nil: throw ImagingError(.unrecognizedFormat, "the data is not a JPEG, PNG or WebP image")
            }
        }
    }

    /// Decodes a JPEG, PNG or WebP, refusing images larger than `limits` before allocating their pixels.
    public static func decode(
        _ data: some ContiguousBytesLike, limits: ImageLimits = .default
    )
        throws(ImagingError) -> (PixelBuffer, ImageFormat)
    {
        try data.withBytes { raw throws(ImagingError) in
            switch ImageFormat.sniff(raw) {
            case .jpeg: return (try JPEGCodec.decode(raw, limits: limits), .jpeg)
            case .png: return (try PNGCodec.decode(raw, limits: limits), .png)
            case .webp: return (try WebPCodec.decode(raw, limits: limits), .webp)
            case nil: throw ImagingError(.unrecognizedFormat, "the data is not a JPEG, PNG or WebP image")
            }
        }
    }

    /// Encodes pixels in the given format; `quality` (1–100) applies to JPEG and WebP (lossy).
    public static func encode(
        _ image: PixelBuffer, as format: ImageFormat, quality: Int = 90
    ) throws(ImagingError)
        -> [UInt8]
    {
        switch format {
        case .jpeg: try JPEGCodec.encode(image, quality: quality)
        case .png: try PNGCodec.encode(image)
        case .webp: try WebPCodec.encode(image, quality: quality)
        }
    }
}

/// Contiguous bytes that can be read without copying: `[UInt8]`, `ArraySlice<UInt8>` and Foundation's `Data`.
public protocol ContiguousBytesLike {
    /// Calls `body` with the bytes.
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
}

extension Array: ContiguousBytesLike where Element == UInt8 {
    /// Calls `body` with the bytes.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

extension ArraySlice: ContiguousBytesLike where Element == UInt8 {
    /// Calls `body` with the bytes.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
