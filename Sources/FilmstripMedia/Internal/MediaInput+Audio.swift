import CFFmpeg
import Foundation

/// The audio of a ``MediaInput``: the stream decoded beside the video, switching to another of the file's audio
/// streams, and inputs opened on their audio alone.
extension MediaInput {
    /// The file's audio streams (their indices among the input's streams), in the file's order.
    var audioStreamIndices: [Int32] { format.map(InputAudio.streams) ?? [] }

    /// Decodes the audio stream `index` from the next packet on, instead of the one decoded so far (audio decoded
    /// and not yet taken is dropped). A stream without a decoder is noted in the audio's `problem`.
    func switchAudio(to index: Int32, format output: AudioFormat) {
        guard let format else { return }
        audio.select(
            index, in: format, video: streamIndex, output: output, origin: timeline.startSeconds, url: url,
            continuity: audioContinuity)
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
                "no decoder for the \(ContainerFacts.codecName(parameters.codec_id, tag: parameters.codec_tag)) audio "
                    + "(and no video)", url: url)
        }
        streamIndex = index
        stream = audioStream
        isAudioOnly = true
        for i in 0..<Int(context.pointee.nb_streams) where i != Int(index) {
            context.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        packet = av_packet_alloc()
        timeline = StreamTimeline(of: audioStream, in: context, movieZero: false, fromFileStart: true)
        hasIndex = ContainerFacts.hasKeyframeIndex(context, audioStream)
        try audio.selectOnly(
            index, stream: audioStream, output: output, origin: timeline.startSeconds, url: url,
            continuity: audioContinuity)
        return true
    }
}
