import CWebP

/// Writes a looping lossy animated WebP a frame at a time with libwebp's animation encoder, which keeps only what
/// changes between frames.
///
/// ```swift
/// let webp = try WebPAnimationEncoder(width: 320, height: 180)
/// for (i, frame) in frames.enumerated() { try webp.add(frame, at: i * 100) }  // milliseconds
/// let bytes = try webp.finish(at: frames.count * 100)
/// ```
public final class WebPAnimationEncoder {
    public let width: Int
    public let height: Int
    private let encoder: OpaquePointer
    private var config = WebPConfig()

    /// An animation of `width` by `height` pixels at libwebp's `quality` (0 to 100).
    public init(width: Int, height: Int, quality: Int = 75) throws(ImagingError) {
        let largest = WebPCodec.maximumDimension
        guard (1...largest).contains(width), (1...largest).contains(height) else {
            throw ImagingError(.invalidGeometry, "a WebP is 1 to \(largest) pixels a side (got \(width)x\(height))")
        }
        var options = WebPAnimEncoderOptions()
        guard filmstrip_webp_anim_options_init(&options) != 0,
            filmstrip_webp_config_init(&config, Float(min(100, max(0, quality)))) != 0
        else {
            throw ImagingError(
                .encodingFailed, "cannot configure the WebP animation encoder (library version mismatch)")
        }
        options.anim_params.loop_count = 0
        // Every frame lossy: trying lossless too for each would double the time.
        options.allow_mixed = 0
        config.method = 2
        guard let encoder = filmstrip_webp_anim_new(Int32(width), Int32(height), &options) else {
            throw ImagingError(.encodingFailed, "cannot create the WebP animation encoder")
        }
        self.width = width
        self.height = height
        self.encoder = encoder
    }

    deinit { WebPAnimEncoderDelete(encoder) }

    /// Adds a frame of the animation's size, shown from `milliseconds` until the next frame's time.
    public func add(_ frame: PixelBuffer, at milliseconds: Int) throws(ImagingError) {
        guard frame.width == width, frame.height == height else {
            throw ImagingError(
                .invalidGeometry, "a frame of \(frame.width)x\(frame.height) in a \(width)x\(height) animation")
        }
        try frame.bytes.withBytes { p throws(ImagingError) in
            // The animation encoder takes ARGB pictures.
            try WebPCodec.withPicture(
                p.baseAddress!, width: width, height: height, bytesPerRow: frame.bytesPerRow,
                alpha: frame.layout == .rgba, argb: true
            ) { picture throws(ImagingError) in
                guard WebPAnimEncoderAdd(encoder, &picture, Int32(clamping: milliseconds), &config) != 0 else {
                    throw ImagingError(.encodingFailed, "WebP animation encoding failed: \(message)")
                }
            }
        }
    }

    /// The animation's bytes, its last frame shown until `milliseconds`.
    public func finish(at milliseconds: Int) throws(ImagingError) -> [UInt8] {
        guard WebPAnimEncoderAdd(encoder, nil, Int32(clamping: milliseconds), nil) != 0 else {
            throw ImagingError(.encodingFailed, "WebP animation encoding failed: \(message)")
        }
        var data = WebPData()
        defer { WebPDataClear(&data) }
        guard WebPAnimEncoderAssemble(encoder, &data) != 0, let bytes = data.bytes else {
            throw ImagingError(.encodingFailed, "WebP animation assembly failed: \(message)")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: data.size))
    }

    private var message: String { WebPAnimEncoderGetError(encoder).map { String(cString: $0) } ?? "unknown error" }
}
