import CFFmpeg
package import FilmstripLoading
import FilmstripSync
package import Foundation

/// How a ``MediaInput`` reaches the network.
package struct MediaNetwork: Sendable {
    var transport: any DataLoading
    var configuration: LoadingConfiguration

    package init(transport: any DataLoading, configuration: LoadingConfiguration) {
        self.transport = transport
        self.configuration = configuration
    }
}

/// Where a ``MediaInput``'s bytes come from. Only a URL input carries a network: a stream or a segment in memory
/// opens nothing else.
package enum MediaSource {
    /// A file or an http(s) URL; the resources it names (an HLS playlist's segments) come through `network`.
    case url(URL, network: MediaNetwork)
    /// A forward-only byte stream (a player's segments, in order), named `label` in errors.
    case stream(ByteStream, label: URL)
    /// One segment and its initialisation data in memory, named `label` in errors.
    case memory(Data, label: URL)

    /// The URL the input is known by.
    var url: URL {
        switch self {
        case .url(let url, _), .stream(_, let url), .memory(_, let url): url
        }
    }
}

/// One opened input with its video decoder. Not thread-safe: each input is used by one worker at a time.
///
/// Local files are read by FFmpeg's own file protocol. http(s) inputs, and every playlist or segment an HLS input
/// opens over http(s), go through ``HTTPRangeSource`` (bounded `Range` requests on Filmstrip's loader), so bytes
/// are counted and requests carry the configured headers and timeouts. A remote input may not open local files.
package final class MediaInput {
    typealias CodecContext = UnsafeMutablePointer<AVCodecContext>

    let url: URL
    let isRemote: Bool
    let cancellation: CancellationFlag
    /// How further resources are reached (URL inputs only).
    let network: MediaNetwork?
    var format: UnsafeMutablePointer<AVFormatContext>?
    var codec: UnsafeMutablePointer<AVCodecContext>?
    var packet: UnsafeMutablePointer<AVPacket>?
    var frame: UnsafeMutablePointer<AVFrame>?
    var rootIO: CustomIO?
    var streamIO: StreamIO?
    /// The bytes of one segment (with its initialisation data), for inputs opened from memory.
    var memoryIO: MemoryIO?
    var nestedIO: [UnsafeMutableRawPointer: CustomIO] = [:]
    var closedBytes = 0
    var refusedURL: String?
    var streamIndex: Int32
    var stream: UnsafeMutablePointer<AVStream>
    /// Seconds per stream time-base unit.
    var timeBase: Double
    /// Stream start in time-base units (times are reported relative to it).
    var startTimestamp: Int64
    /// Duration in seconds (0 when unknown).
    package var duration: Double
    /// How the display matrix shows the picture: clockwise quarter turns, plus 4 when mirrored (``Orientation``).
    package private(set) var quarterTurns: Int
    /// Whether the demuxer has an exact keyframe index (MP4/MOV, MKV), so a backward seek lands on the keyframe.
    var hasIndex: Bool
    /// Whether the decoder was taken over from a previous input instead of created.
    private(set) var reusedDecoder = false
    /// The audio stream decoded beside the video (when asked for and decodable).
    var audioIndex: Int32 = -1
    var audioDecoder: AudioTrackDecoder?
    /// Why an audio stream the input has is not decoded (no decoder for its codec).
    var audioProblem: MediaError?
    /// Audio decoded while reading video packets, not yet taken.
    var pendingAudio: [AudioBuffer] = []
    var audioDrained = false

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
        audio: AudioFormat? = nil, audioOnly allowsAudioOnly: Bool = false
    )
        throws(MediaError)
    {
        let url = source.url
        var network: MediaNetwork?
        var byteStream: ByteStream?
        var memory: Data?
        switch source {
        case .url(_, let reached): network = reached
        case .stream(let stream, _): byteStream = stream
        case .memory(let bytes, _): memory = bytes
        }
        self.url = url
        self.network = network
        self.cancellation = cancellation
        let scheme = url.scheme?.lowercased() ?? ""
        isRemote = scheme == "http" || scheme == "https"
        guard isRemote || url.isFileURL else {
            throw MediaError(.invalidArgument, "only file, http and https inputs are supported", url: url)
        }
        MediaLogging.install()
        if byteStream == nil, memory == nil, url.isFileURL {
            if let problem = LocalFile.problem(url) { throw MediaError(.inputUnavailable, problem, url: url) }
            guard FileManager.default.isReadableFile(atPath: url.path) else {
                throw MediaError(.inputUnavailable, "the file is not readable", url: url)
            }
        }
        guard var context = avformat_alloc_context() else {
            throw MediaError(.inputUnavailable, "out of memory", url: url)
        }
        context.pointee.interrupt_callback.callback = mediaInterrupt
        context.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(cancellation).toOpaque()
        // Placeholders until the stream is known; assigned for real below.
        streamIndex = -1
        stream = UnsafeMutablePointer(bitPattern: 1)!
        timeBase = 0
        startTimestamp = 0
        duration = 0
        quarterTurns = 0
        hasIndex = false
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        if let memory {
            let io = try MemoryIO(bytes: memory, url: url)
            memoryIO = io
            context.pointee.pb = io.context
            context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        } else if let byteStream {
            let io = try StreamIO(stream: byteStream, url: url)
            streamIO = io
            context.pointee.pb = io.context
            context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        } else if isRemote, let network {
            let source = HTTPRangeSource(
                url: url, transport: network.transport, configuration: network.configuration,
                cancellation: cancellation)
            let io = try CustomIO(source: source)
            rootIO = io
            context.pointee.pb = io.context
            context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        // Every further open (HLS playlists and segments) comes through here, local inputs included, so failures
        // are seen and remote inputs cannot reach local files.
        context.pointee.io_open = mediaIOOpen
        context.pointee.io_close2 = mediaIOClose
        var formatContext: UnsafeMutablePointer<AVFormatContext>? = context
        let location = byteStream != nil || memory != nil ? "" : url.isFileURL ? url.path : url.absoluteString
        // The HLS demuxer would otherwise reuse its first segment connection for the next ones without calling
        // io_open (and asserts that the connection is FFmpeg's own http protocol): every open must come to us.
        var demuxerOptions: OpaquePointer?
        av_dict_set(&demuxerOptions, "http_persistent", "0", 0)
        av_dict_set(&demuxerOptions, "http_multiple", "0", 0)
        if byteStream != nil {
            // A live stream must start from what is at hand: a second of probing, no frame-rate survey.
            av_dict_set(&demuxerOptions, "analyzeduration", "1000000", 0)
            av_dict_set(&demuxerOptions, "fpsprobesize", "0", 0)
        }
        defer { av_dict_free(&demuxerOptions) }
        let opened = avformat_open_input(&formatContext, location, nil, &demuxerOptions)
        guard opened >= 0, let opened = formatContext else {
            throw openFailure(opened, stage: "open")
        }
        context = opened
        format = opened
        if !Self.isIndexedContainer(opened) || Self.lacksVideoSize(opened) {
            let found = avformat_find_stream_info(opened, nil)
            if found < 0 { throw openFailure(found, stage: "read stream information from") }
        }
        var decoder: UnsafePointer<AVCodec>?
        let index = Self.videoStream(opened, decoder: &decoder)
        if index == fs_averror_stream_not_found() {
            if allowsAudioOnly, let audio, try openAudioOnly(opened, format: audio) { return }
            throw MediaError(.noVideoStream, Self.noVideoMessage(opened), url: url)
        }
        guard index >= 0, let decoder else {
            throw MediaError(
                .unsupportedCodec, "no decoder for the \(Self.videoCodecName(opened)) video (\(ffmpegMessage(index)))",
                url: url, ffmpegCode: index)
        }
        streamIndex = index
        stream = opened.pointee.streams[Int(index)]!
        if let problem = Self.sizeProblem(stream.pointee.codecpar.pointee) {
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
            guard let codecContext = avcodec_alloc_context3(decoder) else {
                throw MediaError(.unsupportedCodec, "cannot create a decoder", url: url)
            }
            codec = codecContext
            avcodec_parameters_to_context(codecContext, stream.pointee.codecpar)
            codecContext.pointee.thread_count = 1
            codecContext.pointee.pkt_timebase = stream.pointee.time_base
            // The decoder refuses a frame larger than this before allocating it, whatever the bitstream declares.
            codecContext.pointee.max_pixels = Int64(Self.maximumPixels)
            let openedCodec = avcodec_open2(codecContext, decoder, nil)
            guard openedCodec >= 0 else {
                throw MediaError(
                    .unsupportedCodec, "cannot open the \(String(cString: decoder.pointee.name)) decoder", url: url,
                    ffmpegCode: openedCodec)
            }
        }
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        let base = stream.pointee.time_base
        timeBase = base.den != 0 ? Double(base.num) / Double(base.den) : 1.0 / 90_000
        startTimestamp = stream.pointee.start_time == fs_nopts_value() ? 0 : stream.pointee.start_time
        if Self.isIndexedContainer(opened) {
            // MP4/MOV: the movie's timeline, whose 0 players show first (a first picture with a composition offset
            // and no edit list is at that offset), whether or not probing filled in a start time.
            startTimestamp = 0
        } else if case .url = source, let fileStart = Self.fileStart(opened, in: base), fileStart < startTimestamp {
            // Times count from the file's start (its earliest stream's first timestamp), as `ffmpeg -ss` counts
            // them: a video that starts after its audio (an MPEG-PS whose pictures begin at 1 s) starts after 0.
            startTimestamp = fileStart
        }
        if opened.pointee.duration != fs_nopts_value(), opened.pointee.duration > 0 {
            duration = Double(opened.pointee.duration) / Double(fs_time_base())
        } else if stream.pointee.duration != fs_nopts_value(), stream.pointee.duration > 0 {
            duration = Double(stream.pointee.duration) * timeBase
        }
        quarterTurns = Int(fs_stream_display_orientation(stream))
        hasIndex = Self.hasKeyframeIndex(opened, stream)
        if let audio { openAudio(in: opened, format: audio) }
    }

    /// How far an audio frame's stamp may stray and the audio still run on seamlessly: a file's whole timeline is
    /// one demuxer's (``AudioTrackDecoder/fileContinuity``); segments keep the exact default.
    var audioContinuity: Double { streamIO == nil && memoryIO == nil ? AudioTrackDecoder.fileContinuity : 0.002 }

    /// Whether the input was opened on its audio alone (no video stream; see `init`).
    var isAudioOnly = false

    /// Whether an audio stream is decoded beside the video.
    var hasAudio: Bool { audioDecoder != nil }

    /// The audio decoded so far (in presentation order), handed over once.
    func takeAudio() -> [AudioBuffer] {
        defer { pendingAudio.removeAll(keepingCapacity: true) }
        return pendingAudio
    }

    /// Hands this input's decoder over when it was opened for the same codec, size and extradata as `parameters`;
    /// this input cannot decode afterwards.
    func takeDecoder(matching parameters: UnsafeMutablePointer<AVCodecParameters>) -> CodecContext? {
        guard let codec else { return nil }
        let context = codec.pointee
        let wanted = parameters.pointee
        guard context.codec_id == wanted.codec_id, context.width == wanted.width, context.height == wanted.height,
            context.extradata_size == wanted.extradata_size
        else { return nil }
        if context.extradata_size > 0 {
            guard let a = context.extradata, let b = wanted.extradata,
                memcmp(a, b, Int(context.extradata_size)) == 0
            else { return nil }
        }
        self.codec = nil
        return codec
    }

    deinit {
        avcodec_free_context(&codec)
        avformat_close_input(&format)
        rootIO?.close()
        streamIO?.close()
        memoryIO?.close()
        for io in nestedIO.values { io.close() }
        av_packet_free(&packet)
        av_frame_free(&frame)
    }

    func openFailure(_ code: Int32, stage: String) -> MediaError {
        if cancellation.isCancelled { return MediaError(.cancelled, "cancelled", url: url) }
        if let refusedURL {
            return MediaError(
                .invalidArgument, "a remote input may not open the local file '\(refusedURL)'", url: url,
                ffmpegCode: code)
        }
        if let failure = streamIO?.failure ?? rootIO?.source.failure
            ?? nestedIO.values.compactMap(\.source.failure).first
        {
            if let loading = failure as? LoadingError, loading.kind == .timedOut {
                return MediaError(.timedOut, loading.message, url: loading.url, underlying: loading)
            }
            return MediaError(
                .inputUnavailable, "cannot read the input", url: url, ffmpegCode: code, underlying: failure)
        }
        return MediaError(
            .invalidMedia, "cannot \(stage) the input: \(ffmpegMessage(code))", url: url, ffmpegCode: code)
    }

    // MARK: Accounting

    /// Bytes read: received over HTTP for remote inputs, read from disk for local ones.
    package var bytesRead: Int {
        if let streamIO { return streamIO.bytesRead }
        if isRemote {
            return (rootIO?.source.bytesTransferred ?? 0) + closedBytes
                + nestedIO.values.reduce(0) { $0 + $1.source.bytesTransferred }
        }
        return Int(format?.pointee.pb?.pointee.bytes_read ?? 0)
    }

    /// HTTP requests made.
    var requestCount: Int {
        (rootIO?.source.requestCount ?? 0) + nestedIO.values.reduce(0) { $0 + $1.source.requestCount }
    }

    // MARK: Size limits

    /// The largest side of a video, in pixels (16K).
    static let maximumSide = 16_384
    /// The most pixels in a frame (64 Mpx; 8K UHD is 33 Mpx). The decoder is held to it too.
    static let maximumPixels = 8_192 * 8_192
    /// The most elongated picture, as the longer side over the shorter one once displayed.
    static let maximumAspect = 16.0

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

    // MARK: State the extensions share (MediaInput+NestedIO.swift, MediaInput+Reading.swift)

    /// Frames decoded so far (read by other threads for statistics while this one decodes).
    package var framesDecoded: Int { decodedCount.load(ordering: .relaxed) }
    let decodedCount = Atomic<Int>(0)

    /// A playlist or segment that could not be opened or read since the last ``beginCall()``.
    var nestedFailure: MediaError?

    /// Whether the decoder was sent end-of-stream (sequential decoding); cleared by ``seek(to:)``.
    var draining = false

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
