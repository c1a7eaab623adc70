import CFFmpeg
public import FilmstripStreaming
public import Foundation

/// Decodes audio from a forward-only byte stream with no video: an audio rendition's segments (MPEG-TS, ADTS, or
/// fragmented MP4 with its initialisation section first) fed back to back, converted to `format`.
///
/// ```swift
/// let decoder = try AudioStreamDecoder(label: segmentURL, format: .standard) { buffer in
///     try queue.read(into: buffer)          // blocks until bytes arrive; 0 at the end of the stream
/// }
/// while let buffers = try decoder.nextBuffers() { play(buffers) }
/// ```
///
/// Buffer times are the stream's own media time in seconds (its timestamps, not shifted to start at 0), so a caller
/// can place them on the timeline the video of the same presentation uses. Blocking and not thread-safe;
/// ``cancel()`` may be called from any thread.
public final class AudioStreamDecoder {
    private let url: URL
    private let flag = CancellationFlag()
    private var io: StreamIO?
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    // Defaults, so a failed init still runs deinit (which frees what was opened).
    private var decoder: AudioTrackDecoder?
    private var streamIndex: Int32 = -1
    private var drained = false
    /// Keys for protected audio (Common Encryption in fMP4).
    private let contentKeys: ContentKeySource?

    /// Opens the stream, reading from `read` until its audio stream is known (blocks). Throws `invalidMedia` when the
    /// stream has no audio, and `unsupportedCodec` when FFmpeg cannot decode it.
    public init(
        label: URL, format output: AudioFormat, contentKeys: ContentKeySource? = nil,
        read: @escaping @Sendable (UnsafeMutableRawBufferPointer) throws -> Int
    ) throws {
        url = label
        self.contentKeys = contentKeys
        MediaLogging.install()
        let io = try StreamIO(stream: ByteStream(read: read), url: label)
        self.io = io
        guard var context = avformat_alloc_context() else {
            throw MediaError(.inputUnavailable, "out of memory", url: label)
        }
        context.pointee.interrupt_callback.callback = mediaInterrupt
        context.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(flag).toOpaque()
        context.pointee.pb = io.context
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var options: OpaquePointer?
        av_dict_set(&options, "analyzeduration", "1000000", 0)
        defer { av_dict_free(&options) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        let result = avformat_open_input(&opened, "", nil, &options)
        guard result >= 0, let opened else { throw Self.failure(io, result, label, "open") }
        context = opened
        format = opened
        let found = avformat_find_stream_info(opened, nil)
        if found < 0 { throw Self.failure(io, found, label, "read stream information from") }
        let index = av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let stream = opened.pointee.streams[Int(index)] else {
            throw MediaError(.invalidMedia, "the stream has no audio", url: label)
        }
        for i in 0..<Int(opened.pointee.nb_streams) where i != Int(index) {
            opened.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        streamIndex = index
        decoder = try AudioTrackDecoder(stream: stream, output: output, origin: 0, url: label)
        packet = av_packet_alloc()
        flag.begin(1)
    }

    deinit {
        avformat_close_input(&format)
        io?.close()
        av_packet_free(&packet)
    }

    /// Bytes read from the stream so far.
    public var bytesRead: Int { io?.bytesRead ?? 0 }

    /// Stops the current and every later read or decode (from any thread).
    public func cancel() { flag.cancelAll() }

    /// The next decoded audio (possibly several buffers, possibly none for a packet that gave nothing), or `nil` at
    /// the end of the stream.
    public func nextBuffers() throws -> [AudioBuffer]? {
        guard !drained else { return nil }
        while true {
            if flag.isCancelled { throw MediaError(.cancelled, "cancelled", url: url) }
            av_packet_unref(packet)
            let result = av_read_frame(format, packet)
            if result == fs_averror_eof() {
                drained = true
                return decoder?.decode(nil) ?? []
            }
            if result < 0 {
                if flag.isCancelled { throw MediaError(.cancelled, "cancelled", url: url) }
                if let io { throw Self.failure(io, result, url, "read") }
                throw MediaError(.invalidMedia, "cannot read the audio: \(ffmpegMessage(result))", url: url)
            }
            if packet!.pointee.stream_index == streamIndex {
                _ = try PacketDecryption.decrypt(packet!, keys: contentKeys, url: url, required: true)
            }
            guard packet!.pointee.stream_index == streamIndex else { continue }
            let buffers = decoder?.decode(packet) ?? []
            if !buffers.isEmpty { return buffers }
        }
    }

    private static func failure(_ io: StreamIO, _ code: Int32, _ url: URL, _ stage: String) -> MediaError {
        if let failure = io.failure {
            return MediaError(
                .inputUnavailable, "cannot read the input", url: url, ffmpegCode: code, underlying: failure)
        }
        return MediaError(
            .invalidMedia, "cannot \(stage) the audio: \(ffmpegMessage(code))", url: url, ffmpegCode: code)
    }
}

// Confined to the thread that reads it, like the video decoders.
@available(*, unavailable)
extension AudioStreamDecoder: Sendable {}
