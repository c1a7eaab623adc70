import CFFmpeg
import Foundation

/// Maps HDR pictures (PQ, SMPTE ST 2084, or HLG, ARIB STD-B67) to SDR BT.709 for thumbnails.
///
/// The frame is first scaled by swscale to 16-bit RGB at the thumbnail size, which keeps the transfer function's
/// code values; each pixel is then linearised, converted from BT.2020 to BT.709 primaries, tone-mapped on its
/// luminance (hue kept below the clip) and encoded with the BT.709 curve. HDR reference white (203 cd/m², ITU-R BT.2408) becomes
/// SDR white; brighter highlights roll off smoothly up to a 1000 cd/m² peak instead of clipping. Working at the
/// thumbnail size keeps the cost to a few microseconds per thumbnail.
struct ToneMapper: Sendable {
    enum Transfer: Sendable { case pq, hlg }

    let transfer: Transfer
    let wideGamut: Bool

    /// The mapper a frame needs, or nil for SDR frames.
    init?(frame: AVFrame) {
        switch frame.color_trc {
        case AVCOL_TRC_SMPTE2084: transfer = .pq
        case AVCOL_TRC_ARIB_STD_B67: transfer = .hlg
        default: return nil
        }
        wideGamut = frame.color_primaries == AVCOL_PRI_BT2020 || frame.color_primaries == AVCOL_PRI_UNSPECIFIED
    }

    /// Reference white in cd/m² (BT.2408), mapped to SDR 1.0.
    static let referenceWhite: Float = 203
    /// The brightest light kept apart from white, relative to reference white.
    static let peak: Float = 1000 / referenceWhite
    /// Relative luminance up to which the mapping is the identity.
    static let knee: Float = 0.9

    /// Code value (16 bits, top 12 used) to linear light: cd/m² relative to reference white for PQ, scene light
    /// in [0, 1] for HLG (its display light depends on the pixel's luminance, so the OOTF is applied per pixel).
    private static let pqTable: [Float] = (0..<4096).map { i in
        let v = Double(i) / 4095
        let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32
        let p = pow(v, 1 / m2)
        let nits = pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1) * 10000
        return Float(nits / Double(referenceWhite))
    }
    private static let hlgTable: [Float] = (0..<4096).map { i in
        let v = Double(i) / 4095
        let a = 0.17883277, b = 1 - 4 * 0.17883277, c = 0.5 - 0.17883277 * log(4 * 0.17883277)
        return Float(v <= 0.5 ? v * v / 3 : (exp((v - c) / a) + b) / 12)
    }
    /// Linear [0, 1] (4096 steps) to the BT.709 curve in 8 bits.
    private static let encodeTable: [UInt8] = (0..<4096).map { i in
        let l = Double(i) / 4095
        let v = l < 0.018 ? 4.5 * l : 1.099 * pow(l, 0.45) - 0.099
        return UInt8(max(0, min(255, (v * 255).rounded())))
    }

    /// Tone-maps `width` x `height` pixels of native-endian RGB48 into RGB24 rows `stride` bytes apart.
    func map(
        _ source: UnsafePointer<UInt16>, width: Int, height: Int, into destination: UnsafeMutablePointer<UInt8>,
        stride: Int
    ) {
        let linear = transfer == .pq ? Self.pqTable : Self.hlgTable
        let encode = Self.encodeTable
        let knee = Self.knee
        let span = (Self.peak - knee) / (1 - knee)
        linear.withUnsafeBufferPointer { linear in
            encode.withUnsafeBufferPointer { encode in
                for y in 0..<height {
                    let row = source + y * width * 3
                    let out = destination + y * stride
                    for x in 0..<width {
                        var r = linear[Int(row[3 * x] >> 4)]
                        var g = linear[Int(row[3 * x + 1] >> 4)]
                        var b = linear[Int(row[3 * x + 2] >> 4)]
                        if transfer == .hlg {
                            // The HLG system OOTF for a 1000 cd/m² display (gamma 1.2), relative to reference white.
                            let ys =
                                wideGamut ? 0.2627 * r + 0.6780 * g + 0.0593 * b : 0.2126 * r + 0.7152 * g + 0.0722 * b
                            let gain = ys > 0 ? 1000 / Self.referenceWhite * powf(ys, 0.2) : 0
                            r *= gain
                            g *= gain
                            b *= gain
                        }
                        if wideGamut {
                            (r, g, b) = (
                                1.6605 * r - 0.5876 * g - 0.0728 * b,
                                -0.1246 * r + 1.1329 * g - 0.0083 * b,
                                -0.0182 * r - 0.1006 * g + 1.1187 * b
                            )
                        }
                        // `x > 0` is false for NaN too, so nothing below can index a table out of range.
                        r = r > 0 ? r : 0
                        g = g > 0 ? g : 0
                        b = b > 0 ? b : 0
                        let luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
                        if luminance > knee {
                            // Extended Reinhard above the knee: slope 1 at the knee, the peak lands on white.
                            let t = (luminance - knee) / (1 - knee)
                            let mapped = knee + (1 - knee) * (t * (1 + t / (span * span)) / (1 + t))
                            let scale = min(mapped, 1) / luminance
                            r *= scale
                            g *= scale
                            b *= scale
                        }
                        out[3 * x] = encode[Int((r < 1 ? r : 1) * 4095)]
                        out[3 * x + 1] = encode[Int((g < 1 ? g : 1) * 4095)]
                        out[3 * x + 2] = encode[Int((b < 1 ? b : 1) * 4095)]
                    }
                }
            }
        }
    }

    /// swscale's native-endian 16-bit RGB.
    static var rgb48: AVPixelFormat {
        1.littleEndian == 1 ? AV_PIX_FMT_RGB48LE : AV_PIX_FMT_RGB48BE
    }
}
