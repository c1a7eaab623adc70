import CFFmpeg
import Foundation

/// The audio a ``MediaInput`` decodes: the stream beside its video (or, for an input opened on its audio alone, its
/// only stream), that stream's decoder, what it decoded and has not handed over yet, and why an audio stream the
/// file has is not decoded. Not thread-safe, like its input.
final class InputAudio {
    /// The stream decoded, among the input's streams; -1 for none.
    private(set) var index: Int32 = -1
    private(set) var decoder: AudioTrackDecoder?
    /// Why an audio stream the input has is not decoded (no decoder for its codec).
    private(set) var problem: MediaError?
    /// Audio decoded while reading video packets, not yet taken.
    private var pending: [AudioBuffer] = []
    /// Whether the decoder was sent the end of the stream.
    private(set) var drained = false

    /// Decodes the audio stream `index` of `context` from the next packet on, instead of the one decoded so far
    /// (audio decoded and not yet taken is dropped); `video` is the stream the input decodes besides, whose packets
    /// are not discarded. A stream without a decoder is noted in ``problem``.
    func select(
        _ index: Int32, in context: UnsafeMutablePointer<AVFormatContext>, video: Int32, output: AudioFormat,
        origin: Double, url: URL, continuity: Double
    ) {
        guard index >= 0, index < Int32(context.pointee.nb_streams) else { return }
        let stream = context.pointee.streams[Int(index)]!
        if self.index >= 0, self.index != video {
            context.pointee.streams[Int(self.index)]!.pointee.discard = AVDISCARD_ALL
        }
        pending.removeAll()
        drained = false
        do {
            decoder = try AudioTrackDecoder(
                stream: stream, output: output, origin: origin, url: url, continuity: continuity)
            self.index = index
            problem = nil
            stream.pointee.discard = AVDISCARD_DEFAULT
        } catch {
            decoder = nil
            self.index = -1
            problem = error
        }
    }

    /// Decodes stream `index` as the input's only stream; throws when it has no decoder.
    func selectOnly(
        _ index: Int32, stream: UnsafeMutablePointer<AVStream>, output: AudioFormat, origin: Double, url: URL,
        continuity: Double
    ) throws(MediaError) {
        decoder = try AudioTrackDecoder(
            stream: stream, output: output, origin: origin, url: url, continuity: continuity)
        self.index = index
    }

    /// Decodes `packet` when it is of the audio stream; returns whether it was.
    func receive(_ packet: UnsafeMutablePointer<AVPacket>) -> Bool {
        guard packet.pointee.stream_index == index, let decoder else { return false }
        pending += decoder.decode(packet)
        return true
    }

    /// The input ended: the decoder gives what it holds back (once).
    func drain() {
        guard let decoder, !drained else { return }
        drained = true
        pending += decoder.decode(nil)
    }

    /// The audio decoded so far (in presentation order), handed over once.
    func take() -> [AudioBuffer] {
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }

    /// After a seek: the decoder forgets what it had.
    func reset() {
        decoder?.flush()
        pending.removeAll()
        drained = false
    }

    /// The file's audio streams (their indices among the input's streams), in the file's order.
    static func streams(of context: UnsafeMutablePointer<AVFormatContext>) -> [Int32] {
        (0..<Int32(context.pointee.nb_streams)).filter {
            context.pointee.streams[Int($0)]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        }
    }
}
