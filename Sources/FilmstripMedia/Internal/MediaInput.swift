import CFFmpeg
import FilmstripLoading
package import FilmstripStreaming
import FilmstripSync
import Foundation

/// One opened input with its video decoder. Not thread-safe: each input is used by one worker at a time.
///
/// Local files are read by FFmpeg's own file protocol. http(s) inputs, and every playlist or segment an HLS input
/// opens over http(s), go through ``HTTPRangeSource`` (bounded `Range` requests on Filmstrip's loader), so bytes
/// are counted and requests carry the configured headers and timeouts. A remote input may not open local files.
package final class MediaInput {
    typealias CodecContext = UnsafeMutablePointer<AVCodecContext>

    let url: URL
    let cancellation: CancellationFlag
    /// Keys for samples protected with Common Encryption (the fMP4 demuxer hands them over undecrypted, with their
    /// encryption details).
    let contentKeys: ContentKeySource?
    /// Where the bytes come from, and the playlists and segments FFmpeg opens.
    let io: InputIO
    var format: UnsafeMutablePointer<AVFormatContext>?
    var codec: UnsafeMutablePointer<AVCodecContext>?
    var packet: UnsafeMutablePointer<AVPacket>?
    var frame: UnsafeMutablePointer<AVFrame>?
    var streamIndex: Int32
    var stream: UnsafeMutablePointer<AVStream>
    /// The stream's time base, its 0 and its duration.
    var timeline: StreamTimeline
    /// Duration in seconds (0 when unknown).
    package var duration: Double { timeline.duration }
    /// How the display matrix shows the picture: clockwise quarter turns, plus 4 when mirrored (``Orientation``).
    package private(set) var quarterTurns: Int
    /// Whether the demuxer has an exact keyframe index (MP4/MOV, MKV), so a backward seek lands on the keyframe.
    var hasIndex: Bool
    /// Whether the decoder was taken over from a previous input instead of created.
    private(set) var reusedDecoder = false
    /// The audio stream decoded beside the video (when asked for and decodable), or alone.
    let audio = InputAudio()

    /// Opens `source`.
    ///
    /// With `reusing`, the decoder of that input (no longer in use) is taken over when the new stream's codec
    /// parameters match it (codec, size and extradata), instead of creating one.
    ///
    /// With `audioOnly` (and `audio`), an input without video opens on its audio stream instead of failing with
    /// `noVideoStream`: ``isAudioOnly`` is then true, there is no video decoder, and the input is read with
    /// ``nextAudioOnly()``.
    package init(
        _ source: MediaSource, cancellation: CancellationFlag, reusing previous: MediaInput? = nil,
        audio: AudioFormat? = nil, audioOnly allowsAudioOnly: Bool = false, decoderThreads: Int = 1,
        contentKeys: ContentKeySource? = nil
    )
        throws(MediaError)
    {
        let io = try InputIO(source, cancellation: cancellation)
        self.io = io
        url = io.url
        self.cancellation = cancellation
        self.contentKeys = contentKeys
        MediaLogging.install()
        guard var context = avformat_alloc_context() else {
            throw MediaError(.inputUnavailable, "out of memory", url: url)
        }
        // Placeholders until the stream is known; assigned for real below.
        streamIndex = -1
        stream = UnsafeMutablePointer(bitPattern: 1)!
        timeline = .none
        quarterTurns = 0
        hasIndex = false
        io.attach(to: context)
        var formatContext: UnsafeMutablePointer<AVFormatContext>? = context
        // The HLS demuxer would otherwise reuse its first segment connection for the next ones without calling
        // io_open (and asserts that the connection is FFmpeg's own http protocol): every open must come to us.
        var demuxerOptions: OpaquePointer?
        av_dict_set(&demuxerOptions, "http_persistent", "0", 0)
        av_dict_set(&demuxerOptions, "http_multiple", "0", 0)
        if io.isForwardOnly {
            // A live stream must start from what is at hand: a second of probing, no frame-rate survey.
            av_dict_set(&demuxerOptions, "analyzeduration", "1000000", 0)
            av_dict_set(&demuxerOptions, "fpsprobesize", "0", 0)
        }
        defer { av_dict_free(&demuxerOptions) }
        let opened = avformat_open_input(&formatContext, io.location, nil, &demuxerOptions)
        guard opened >= 0, let opened = formatContext else {
            throw openFailure(opened, stage: "open")
        }
        context = opened
        format = opened
        if !ContainerFacts.isIndexedContainer(opened) || ContainerFacts.lacksVideoSize(opened) {
            let found = avformat_find_stream_info(opened, nil)
            if found < 0 { throw openFailure(found, stage: "read stream information from") }
        }
        io.opened()
        var decoder: UnsafePointer<AVCodec>?
        let index = ContainerFacts.videoStream(opened, decoder: &decoder)
        if index == fs_averror_stream_not_found() {
            if allowsAudioOnly, let audio, try openAudioOnly(opened, format: audio) { return }
            throw MediaError(.noVideoStream, ContainerFacts.noVideoMessage(opened), url: url)
        }
        guard index >= 0, let decoder else {
            throw MediaError(
                .unsupportedCodec,
                "no decoder for the \(ContainerFacts.videoCodecName(opened)) video (\(ffmpegMessage(index)))",
                url: url, ffmpegCode: index)
        }
        streamIndex = index
        stream = opened.pointee.streams[Int(index)]!
        if let problem = ContainerFacts.sizeProblem(stream.pointee.codecpar.pointee) {
            throw MediaError(.invalidMedia, "the video declares \(problem)", url: url)
        }
        for i in 0..<Int(opened.pointee.nb_streams) where i != Int(index) {
            opened.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        if let reused = previous?.takeDecoder(matching: stream.pointee.codecpar) {
            codec = reused
            reusedDecoder = true
            avcodec_flush_buffers(reused)
            reused.pointee.pkt_timebase = stream.pointee.time_base
        } else {
            codec = try VideoCodecOpening.open(decoder, for: stream, url: url, threads: decoderThreads)
        }
        // Decrypted with a key that is not the content's, pictures are noise the decoder would conceal: have it
        // fail instead, and say the key is wrong (``sendVideo(_:)``).
        if contentKeys?.canDecrypt == true { codec?.pointee.err_recognition |= AV_EF_EXPLODE }
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        if case .url = source {
            timeline = StreamTimeline(of: stream, in: opened, movieZero: true, fromFileStart: true)
        } else {
            timeline = StreamTimeline(of: stream, in: opened, movieZero: true, fromFileStart: false)
        }
        quarterTurns = Int(fs_stream_display_orientation(stream))
        hasIndex = ContainerFacts.hasKeyframeIndex(opened, stream)
        if let audio {
            let index = av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, streamIndex, nil, 0)
            if index >= 0 { switchAudio(to: index, format: audio) }
        }
    }

    /// How far an audio frame's stamp may stray and the audio still run on seamlessly: a file's whole timeline is
    /// one demuxer's (``AudioTrackDecoder/fileContinuity``); segments keep the exact default.
    var audioContinuity: Double { io.isSegment ? 0.002 : AudioTrackDecoder.fileContinuity }

    /// Whether the input was opened on its audio alone (no video stream; see `init`).
    var isAudioOnly = false

    /// Whether an audio stream is decoded beside the video.
    var hasAudio: Bool { audio.decoder != nil }

    /// Hands this input's decoder over when it was opened for the same codec, size and extradata as `parameters`;
    /// this input cannot decode afterwards.
    func takeDecoder(matching parameters: UnsafeMutablePointer<AVCodecParameters>) -> CodecContext? {
        guard let codec, VideoCodecOpening.matches(codec, parameters) else { return nil }
        self.codec = nil
        return codec
    }

    deinit {
        avcodec_free_context(&codec)
        avformat_close_input(&format)
        io.close()
        av_packet_free(&packet)
        av_frame_free(&frame)
    }

    func openFailure(_ code: Int32, stage: String) -> MediaError { io.failure(code, doing: stage) }

    /// Bytes read: received over HTTP for remote inputs, read from disk for local ones.
    package var bytesRead: Int { io.bytesRead(by: format) }

    /// HTTP requests made.
    var requestCount: Int { io.requestCount }

    /// How the video's pictures are shown: sample aspect ratio and rotation.
    package var geometry: FrameGeometry {
        let parameters = stream.pointee.codecpar.pointee
        let sar = parameters.sample_aspect_ratio
        return FrameGeometry(
            codedWidth: Int(parameters.width), codedHeight: Int(parameters.height),
            sampleAspect: (Int(sar.num), Int(sar.den)), quarterTurns: quarterTurns)
    }

    /// Display size after sample aspect ratio and rotation.
    package var displaySize: (width: Int, height: Int) { geometry.displaySize }

    // MARK: State the extensions share (MediaInput+Reading.swift)

    /// Frames decoded so far (read by other threads for statistics while this one decodes).
    package var framesDecoded: Int { decodedCount.load(ordering: .relaxed) }
    let decodedCount = Atomic<Int>(0)

    /// Whether the decoder was sent end-of-stream (sequential decoding); cleared by ``seek(to:)``.
    var draining = false
    /// Whether video packets have been decrypted (a decoding error then means the key is wrong).
    var decrypts = false

    /// Whether sequential decoding gives keyframes only (trick play): other video packets are read but never decoded,
    /// and each keyframe is decoded on its own, so it comes out at once. Turned off, decoding resumes at the next
    /// keyframe.
    var keyframesOnly = false {
        didSet {
            guard keyframesOnly != oldValue else { return }
            avcodec_flush_buffers(codec)
            awaitingKey = true
        }
    }
    var awaitingKey = false
}
