package import CFFmpeg
package import FilmstripImaging

/// Converts decoded frames to RGB at a target size with swscale, honouring the frame's colour matrix and range;
/// HDR frames (PQ or HLG) are tone-mapped to SDR BT.709. One converter per worker; the swscale context is reused
/// while sizes and formats stay the same.
package final class FrameConverter {
    private var context: OpaquePointer?
    /// 16-bit RGB at the target size, for HDR frames before tone mapping.
    private var wide: [UInt16] = []

    package init() {}

    deinit { sws_freeContext(context) }

    /// Scales `frame` to `width` x `height` RGB into `destination` (rows `stride` bytes apart).
    package func convert(
        _ frame: UnsafeMutablePointer<AVFrame>, width: Int, height: Int, into destination: UnsafeMutablePointer<UInt8>,
        stride: Int
    ) throws(MediaError) {
        let f = frame.pointee
        guard f.width > 0, f.height > 0, f.format >= 0 else {
            throw MediaError(.decodeFailed, "the decoder produced an empty frame")
        }
        let toneMapper = ToneMapper(frame: f)
        // Area averaging for strong reductions (a 1080p frame to a 160 px thumbnail): sharper than bicubic there
        // and a third of its cost, which is most of a thumbnail's time after the decode.
        // At the frame's own size swscale takes its unscaled YUV-to-RGB path, whose SIMD code converts widths in
        // steps of 8 and left the last columns of a 180 or 182 px frame black; accurate rounding keeps it off that
        // path (scaled conversions are unaffected and keep their speed).
        let unscaled = Int32(width) == f.width && Int32(height) == f.height
        let flags = (Int32(width) * 3 <= f.width ? SWS_AREA : SWS_BICUBIC) | (unscaled ? SWS_ACCURATE_RND : 0)
        context = sws_getCachedContext(
            context, f.width, f.height, AVPixelFormat(rawValue: f.format), Int32(width), Int32(height),
            toneMapper == nil ? AV_PIX_FMT_RGB24 : ToneMapper.rgb48, flags, nil, nil, nil)
        guard let context else { throw MediaError(.decodeFailed, "swscale cannot convert this frame format") }
        let space: Int32 =
            switch f.colorspace {
            case AVCOL_SPC_BT709: SWS_CS_ITU709
            case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: SWS_CS_BT2020
            case AVCOL_SPC_SMPTE240M: SWS_CS_SMPTE240M
            case AVCOL_SPC_FCC: SWS_CS_FCC
            default: SWS_CS_DEFAULT
            }
        let fullRange: Int32 = f.color_range == AVCOL_RANGE_JPEG ? 1 : 0
        let coefficients = sws_getCoefficients(space)
        sws_setColorspaceDetails(
            context, coefficients, fullRange, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
        guard let toneMapper else {
            try scale(frame, context: context, into: destination, stride: stride)
            return
        }
        if wide.count < width * height * 3 { wide = [UInt16](repeating: 0, count: width * height * 3) }
        try wide.withUnsafeMutableBufferPointer { wide throws(MediaError) in
            let bytes = UnsafeMutableRawPointer(wide.baseAddress!)
            try scale(frame, context: context, into: bytes.assumingMemoryBound(to: UInt8.self), stride: width * 6)
            toneMapper.map(wide.baseAddress!, width: width, height: height, into: destination, stride: stride)
        }
    }

    private func scale(
        _ frame: UnsafeMutablePointer<AVFrame>, context: OpaquePointer, into destination: UnsafeMutablePointer<UInt8>,
        stride: Int
    ) throws(MediaError) {
        var destinations: [UnsafeMutablePointer<UInt8>?] = [destination, nil, nil, nil]
        var strides: [Int32] = [Int32(stride), 0, 0, 0]
        let height = frame.pointee.height
        let result = withUnsafePointer(to: &frame.pointee.data) { data in
            data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { planes in
                withUnsafePointer(to: &frame.pointee.linesize) { lines in
                    lines.withMemoryRebound(to: Int32.self, capacity: 8) { linesizes in
                        sws_scale(context, planes, linesizes, 0, height, &destinations, &strides)
                    }
                }
            }
        }
        guard result > 0 else { throw MediaError(.decodeFailed, "swscale failed: \(ffmpegMessage(result))") }
    }

    /// The frame as an RGB image of `width` x `height`, turned clockwise by `quarterTurns` (an ``Orientation``
    /// code: the mirror bit flips it after turning; the target size is the size before turning).
    package func image(
        _ frame: UnsafeMutablePointer<AVFrame>, width: Int, height: Int, quarterTurns: Int
    ) throws(MediaError)
        -> PixelBuffer
    {
        var failure: MediaError?
        let bytes = [UInt8](unsafeUninitializedCapacity: width * height * 3) { buffer, initialized in
            do throws(MediaError) {
                try convert(frame, width: width, height: height, into: buffer.baseAddress!, stride: width * 3)
                initialized = width * height * 3
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return Orientation.apply(
            quarterTurns, to: PixelBuffer(width: width, height: height, layout: .rgb, bytes: bytes))
    }
}
