import CFFmpeg
import FilmstripFormats

extension FrameGeometry {
    /// `frame`'s planes as they are, when it is 8-bit 4:2:0 SDR in a matrix and range an I420 texture shows right and
    /// needs no turning; nil otherwise (10-bit, HDR, 4:2:2 or 4:4:4, a display matrix: convert to RGB instead).
    func planar(_ frame: OwnedFrame) -> PlanarYUVFrame? {
        let f = frame.pointer.pointee
        guard quarterTurns == 0, f.width > 0, f.height > 0 else { return nil }
        let format = AVPixelFormat(rawValue: f.format)
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P else { return nil }
        // HDR transfers need tone mapping (the RGB path does it).
        guard f.color_trc != AVCOL_TRC_SMPTE2084, f.color_trc != AVCOL_TRC_ARIB_STD_B67 else { return nil }
        let fullRange = format == AV_PIX_FMT_YUVJ420P || f.color_range == AVCOL_RANGE_JPEG
        // The same matrices as the RGB conversion (FrameConverter): BT.709 when tagged, else BT.601.
        let matrix: PlanarYUVFrame.Matrix
        switch f.colorspace {
        case AVCOL_SPC_BT709: matrix = .bt709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_UNSPECIFIED: matrix = .bt601
        default: return nil
        }
        // Full-range BT.709 has no I420 conversion in common renderers.
        if fullRange, matrix == .bt709 { return nil }
        let width = Int(f.width)
        let height = Int(f.height)
        let sizes = [(width, height), ((width + 1) / 2, (height + 1) / 2), ((width + 1) / 2, (height + 1) / 2)]
        var planes: [[UInt8]] = []
        var strides: [Int] = []
        withUnsafeBytes(of: f.data) { data in
            withUnsafeBytes(of: f.linesize) { lines in
                let pointers = data.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
                let linesizes = lines.bindMemory(to: Int32.self)
                for (plane, size) in sizes.enumerated() {
                    guard let source = pointers[plane], linesizes[plane] >= size.0 else { continue }
                    let stride = Int(linesizes[plane])
                    planes.append(Array(UnsafeBufferPointer(start: source, count: stride * (size.1 - 1) + size.0)))
                    strides.append(stride)
                }
            }
        }
        guard planes.count == 3 else { return nil }
        return PlanarYUVFrame(
            width: width, height: height, displaySize: PixelSize(width: displayWidth, height: displayHeight),
            planes: planes, strides: strides, matrix: matrix, fullRange: fullRange)
    }
}
