import CFFmpeg
import Foundation

/// The audio of a ``MediaInput``: the stream decoded beside the video, switching to another of the file's audio
/// streams, and inputs opened on their audio alone.
extension MediaInput {
    /// Finds the audio stream that goes with the video and opens a decoder for it; an audio stream without a
    /// decoder is noted in ``audioProblem`` (the video plays on).
    func openAudio(in context: UnsafeMutablePointer<AVFormatContext>, format: AudioFormat) {
        let index = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, streamIndex, nil, 0)
        guard index >= 0 else { return }
        switchAudio(to: index, format: format)
    }

    /// The file's audio streams (their indices among the input's streams), in the file's order.
    var audioStreamIndices: [Int32] {
        guard let format else { return [] }
        return (0..<Int32(format.pointee.nb_streams)).filter {
            format.pointee.streams[Int($0)]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        }
    }

    /// Decodes the audio stream `index` from the next packet on, instead of the one decoded so far (audio decoded
    /// and not yet taken is dropped). A stream without a decoder is noted in ``audioProblem``.
    func switchAudio(to index: Int32, format output: AudioFormat) {
        guard let format, index >= 0, index < Int32(format.pointee.nb_streams) else { return }
        let audioStream = format.pointee.streams[Int(index)]!
        if audioIndex >= 0, audioIndex != streamIndex {
            format.pointee.streams[Int(audioIndex)]!.pointee.discard = AVDISCARD_ALL
        }
        pendingAudio.removeAll()
        audioDrained = false
        do {
            audioDecoder = try AudioTrackDecoder(
                stream: audioStream, output: output, origin: mediaSeconds(startTimestamp), url: url,
                continuity: audioContinuity)
            audioIndex = index
            audioProblem = nil
            audioStream.pointee.discard = AVDISCARD_DEFAULT
        } catch {
            audioDecoder = nil
            audioIndex = -1
            audioProblem = error
        }
    }

    /// Opens the best audio stream as the input's only stream; false when there is none.
    func openAudioOnly(
        _ context: UnsafeMutablePointer<AVFormatContext>, format output: AudioFormat
    ) throws(MediaError) -> Bool {
        let index = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let audioStream = context.pointee.streams[Int(index)] else {
            // FFmpeg passes over audio it knows nothing of (no channels, no rate: MPEG-H, AC-4, DTS-UHD in FFmpeg
            // 5): name it.
            let unknown = (0..<Int(context.pointee.nb_streams)).lazy.map { context.pointee.streams[$0]! }.first {
                $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO
            }
            guard let unknown else { return false }
            let parameters = unknown.pointee.codecpar.pointee
            throw MediaError(
                .unsupportedCodec,
                "no decoder for the \(Self.codecName(parameters.codec_id, tag: parameters.codec_tag)) audio "
                    + "(and no video)", url: url)
        }
        streamIndex = index
        stream = audioStream
        isAudioOnly = true
        for i in 0..<Int(context.pointee.nb_streams) where i != Int(index) {
            context.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        packet = av_packet_alloc()
        let base = audioStream.pointee.time_base
        timeBase = base.den != 0 ? Double(base.num) / Double(base.den) : 1.0 / 90_000
        startTimestamp = audioStream.pointee.start_time == fs_nopts_value() ? 0 : audioStream.pointee.start_time
        if let fileStart = Self.fileStart(context, in: base), fileStart < startTimestamp { startTimestamp = fileStart }
        if context.pointee.duration != fs_nopts_value(), context.pointee.duration > 0 {
            duration = Double(context.pointee.duration) / Double(fs_time_base())
        } else if audioStream.pointee.duration != fs_nopts_value(), audioStream.pointee.duration > 0 {
            duration = Double(audioStream.pointee.duration) * timeBase
        }
        hasIndex = Self.hasKeyframeIndex(context, audioStream)
        audioDecoder = try AudioTrackDecoder(
            stream: audioStream, output: output, origin: mediaSeconds(startTimestamp), url: url,
            continuity: audioContinuity)
        audioIndex = index
        return true
    }
}
