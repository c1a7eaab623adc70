import CFFmpeg
import Foundation

/// Decodes one audio stream and converts it with libswresample to interleaved float in the output's format. Times
/// are the stream's timestamps in seconds minus `origin` (the video stream's start, so both share one timeline).
///
/// Not thread-safe: used by the thread that reads the input's packets.
final class AudioTrackDecoder {
    let output: AudioFormat
    /// The codec's name (for messages).
    let codecName: String
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var resampler: OpaquePointer?
    /// The input format the resampler was made for (a stream may change it midway).
    private var resamplerInput: (rate: Int32, channels: Int32, format: Int32)?
    private let timeBase: Double
    private let origin: Double
    /// How far a frame's timestamp may stray from where the previous frame ended and the run still stays seamless
    /// (seconds). Segments carry exact stamps (2 ms); within one file a demuxer's stamps may wander around a codec's
    /// block switches (Vorbis in Ogg: +448 samples, then back), which a player hears as a gap and an overlap, so a
    /// file keeps its samples contiguous unless the stamps jump further (``fileContinuity``).
    private let continuity: Double
    /// The tolerance for a file's audio: a jump larger than this is a real discontinuity.
    static let fileContinuity = 0.05
    /// Where the next buffer starts when its frame has no timestamp (or one within a few samples of this).
    private var nextTime: Double?
    private var scratch: [Float] = []
    /// Frames the decoder produced.
    private(set) var framesDecoded = 0

    /// Opens a decoder for `stream`; throws `unsupportedCodec` when FFmpeg has none for it.
    init(
        stream: UnsafeMutablePointer<AVStream>, output: AudioFormat, origin: Double, url: URL,
        continuity: Double = 0.002
    ) throws(MediaError) {
        self.output = output
        self.origin = origin
        self.continuity = continuity
        let parameters = stream.pointee.codecpar!
        codecName = ContainerFacts.codecName(parameters.pointee.codec_id, tag: parameters.pointee.codec_tag)
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw MediaError(.unsupportedCodec, "no decoder for the \(codecName) audio", url: url)
        }
        guard let context = avcodec_alloc_context3(decoder) else {
            throw MediaError(.unsupportedCodec, "cannot create a decoder for the \(codecName) audio", url: url)
        }
        codec = context
        avcodec_parameters_to_context(context, parameters)
        context.pointee.thread_count = 1
        context.pointee.pkt_timebase = stream.pointee.time_base
        let opened = avcodec_open2(context, decoder, nil)
        guard opened >= 0 else {
            avcodec_free_context(&codec)
            throw MediaError(
                .unsupportedCodec, "cannot open the \(codecName) audio decoder", url: url, ffmpegCode: opened)
        }
        frame = av_frame_alloc()
        let base = stream.pointee.time_base
        timeBase = base.den != 0 ? Double(base.num) / Double(base.den) : 1.0 / 90_000
    }

    deinit {
        swr_free(&resampler)
        av_frame_free(&frame)
        avcodec_free_context(&codec)
    }

    /// Decodes `packet` (`nil`: the end, drains the decoder) into buffers in presentation order. A damaged packet
    /// gives nothing, as players skip it.
    func decode(_ packet: UnsafeMutablePointer<AVPacket>?) -> [AudioBuffer] {
        guard let codec else { return [] }
        let sent = avcodec_send_packet(codec, packet)
        if sent < 0, sent != fs_averror_eagain(), packet != nil { return [] }
        var buffers: [AudioBuffer] = []
        while avcodec_receive_frame(codec, frame) >= 0 {
            framesDecoded += 1
            if let buffer = convert() { buffers.append(buffer) }
            av_frame_unref(frame)
        }
        if packet == nil, let drained = convert(draining: true) { buffers.append(drained) }
        return buffers
    }

    /// Forgets what the decoder and the resampler hold (a seek).
    func flush() {
        if let codec { avcodec_flush_buffers(codec) }
        swr_free(&resampler)
        resamplerInput = nil
        nextTime = nil
    }

    private func convert(draining: Bool = false) -> AudioBuffer? {
        guard let frame else { return nil }
        let f = frame.pointee
        if !draining {
            let input = (f.sample_rate, f.ch_layout.nb_channels, f.format)
            if resamplerInput.map({ $0 != input }) ?? true {
                swr_free(&resampler)
                resampler = fs_swr_for_frame(frame, Int32(output.sampleRate), Int32(output.channels))
                resamplerInput = input
            }
        }
        guard let resampler, draining || f.nb_samples > 0 else { return nil }
        let delay = Double(swr_get_delay(resampler, Int64(output.sampleRate))) / Double(output.sampleRate)
        var time = nextTime ?? 0
        if !draining {
            let ts = f.best_effort_timestamp != fs_nopts_value() ? f.best_effort_timestamp : f.pts
            if ts != fs_nopts_value() {
                let stamped = Double(ts) * timeBase - origin - delay
                // Keep the run seamless when the stamps agree to within the tolerance.
                if nextTime.map({ abs($0 - stamped) > continuity }) ?? true { time = stamped }
            }
        }
        let inputRate = max(1, Int(resamplerInput?.rate ?? Int32(output.sampleRate)))
        let capacity = Int(swr_get_out_samples(resampler, draining ? 0 : f.nb_samples)) + 32
        let wanted = max(capacity, Int(f.nb_samples) * output.sampleRate / inputRate + 32)
        if scratch.count < wanted * output.channels { scratch = [Float](repeating: 0, count: wanted * output.channels) }
        let written = scratch.withUnsafeMutableBufferPointer { buffer in
            fs_swr_convert_frame(resampler, buffer.baseAddress, Int32(wanted), draining ? nil : frame)
        }
        guard written > 0 else { return nil }
        let buffer = AudioBuffer(
            format: output, time: time, samples: Array(scratch[0..<(Int(written) * output.channels)]))
        nextTime = buffer.end
        return buffer
    }
}
