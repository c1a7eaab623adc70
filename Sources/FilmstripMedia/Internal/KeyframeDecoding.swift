/// How much of the decoder's work a lone keyframe decode does.
///
/// A keyframe decoded on its own (a preview-track thumbnail, a `frame` at keyframe cost) is referenced by no later
/// frame, so nothing but its own picture depends on its in-loop deblocking. Once that picture is shrunk four times
/// or more, the filter's work is averaged away by the scaler: on the benchmark's 720p and 1080p H.264 inputs, tiles
/// of 160 px from the unfiltered keyframes stay above 40 dB PSNR against tiles from the full decode
/// (`FilmstripBench generate` prints the figure), while the decode takes less time. Only H.264 and HEVC have the
/// switch; other decoders ignore it. `AV_CODEC_FLAG2_FAST` is not used: in H.264 it only changes deblocking across
/// slices decoded by slice threads, and a lone keyframe decode runs on one thread.
package enum KeyframeDecoding: Sendable, Hashable {
    /// Every step of the decode.
    case full
    /// The in-loop deblocking filter skipped.
    case preview

    /// The reduction (display width over image width) from which a keyframe decode skips the filter.
    static let previewReduction = 4

    /// `.preview` when an image `width` wide (in display orientation) shrinks a picture of `geometry` at least
    /// ``previewReduction`` times.
    package static func forImage(width: Int, of geometry: FrameGeometry) -> KeyframeDecoding {
        width > 0 && width * previewReduction <= geometry.displayWidth ? .preview : .full
    }
}
