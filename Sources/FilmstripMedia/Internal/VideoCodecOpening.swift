import CFFmpeg
import Foundation

/// Opening a video stream's decoder, and telling whether the decoder of an input no longer in use can take over.
enum VideoCodecOpening {
    /// A decoder for `stream` (single-threaded unless `threads` says more: frame threading), held to
    /// ``ContainerFacts/maximumPixels`` a frame.
    static func open(
        _ decoder: UnsafePointer<AVCodec>, for stream: UnsafeMutablePointer<AVStream>, url: URL, threads: Int = 1
    ) throws(MediaError) -> UnsafeMutablePointer<AVCodecContext> {
        guard let context = avcodec_alloc_context3(decoder) else {
            throw MediaError(.unsupportedCodec, "cannot create a decoder", url: url)
        }
        avcodec_parameters_to_context(context, stream.pointee.codecpar)
        context.pointee.thread_count = Int32(min(16, max(1, threads)))
        if threads > 1 { context.pointee.thread_type = FF_THREAD_FRAME }
        context.pointee.pkt_timebase = stream.pointee.time_base
        // The decoder refuses a frame larger than this before allocating it, whatever the bitstream declares.
        context.pointee.max_pixels = Int64(ContainerFacts.maximumPixels)
        let opened = avcodec_open2(context, decoder, nil)
        guard opened >= 0 else {
            var failed: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&failed)
            throw MediaError(
                .unsupportedCodec, "cannot open the \(String(cString: decoder.pointee.name)) decoder", url: url,
                ffmpegCode: opened)
        }
        return context
    }

    /// Whether `codec` was opened for the same codec, size and extradata as `parameters`.
    static func matches(
        _ codec: UnsafeMutablePointer<AVCodecContext>, _ parameters: UnsafeMutablePointer<AVCodecParameters>
    ) -> Bool {
        let context = codec.pointee
        let wanted = parameters.pointee
        guard context.codec_id == wanted.codec_id, context.width == wanted.width, context.height == wanted.height,
            context.extradata_size == wanted.extradata_size
        else { return false }
        guard context.extradata_size > 0 else { return true }
        guard let a = context.extradata, let b = wanted.extradata else { return false }
        return memcmp(a, b, Int(context.extradata_size)) == 0
    }
}
