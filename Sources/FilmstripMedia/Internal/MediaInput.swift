import CFFmpeg
import FilmstripLoading
import FilmstripSync
import Foundation

/// How a ``MediaInput`` reaches the network.
struct MediaNetwork: Sendable {
    var transport: any DataLoading
    var configuration: LoadingConfiguration
}

/// One opened input with its video decoder. Not thread-safe: each input is used by one worker at a time.
///
/// Local files are read by FFmpeg's own file protocol. http(s) inputs, and every playlist or segment an HLS input
/// opens over http(s), go through ``HTTPRangeSource`` (bounded `Range` requests on Filmstrip's loader), so bytes
/// are counted and requests carry the configured headers and timeouts. A remote input may not open local files.
final class MediaInput {
    typealias CodecContext = UnsafeMutablePointer<AVCodecContext>

    let url: URL
    let isRemote: Bool
    let cancellation: CancellationFlag
    private let network: MediaNetwork
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var rootIO: CustomIO?
    private var streamIO: StreamIO?
    /// The bytes of one segment (with its initialisation data), for inputs opened from memory.
    private var memoryIO: MemoryIO?
    private var nestedIO: [UnsafeMutableRawPointer: CustomIO] = [:]
    private var closedBytes = 0
    private var refusedURL: String?
    private(set) var streamIndex: Int32
    private var stream: UnsafeMutablePointer<AVStream>
    /// Seconds per stream time-base unit.
    private(set) var timeBase: Double
    /// Stream start in time-base units (times are reported relative to it).
    private(set) var startTimestamp: Int64
    /// Duration in seconds (0 when unknown).
    private(set) var duration: Double
    /// Clockwise quarter turns the display matrix asks for (0...3).
    private(set) var quarterTurns: Int
    /// Whether the demuxer has an exact keyframe index (MP4/MOV, MKV), so a backward seek lands on the keyframe.
    private(set) var hasIndex: Bool
    /// Whether the decoder was taken over from a previous input instead of created.
    private(set) var reusedDecoder = false
    /// The audio stream decoded beside the video (when asked for and decodable).
    private var audioIndex: Int32 = -1
    private var audioDecoder: AudioTrackDecoder?
    /// Why an audio stream the input has is not decoded (no decoder for its codec).
    private(set) var audioProblem: MediaError?
    /// Audio decoded while reading video packets, not yet taken.
    private var pendingAudio: [AudioBuffer] = []
    private var audioDrained = false

    /// Opens `url`; with `stream`, the bytes come from it instead (a forward-only stream such as HLS segments, with
    /// `url` naming it in errors); with `memory`, from those bytes (one segment and its initialisation data), and
    /// nothing else may be opened.
    ///
    /// With `reusing`, the decoder of that input (no longer in use) is taken over when the new stream's codec
    /// parameters match it (codec, size and extradata), instead of creating one.
    init(
        url: URL, network: MediaNetwork, cancellation: CancellationFlag, stream byteStream: ByteStream? = nil,
        memory: Data? = nil, reusing previous: MediaInput? = nil, audio: AudioFormat? = nil
    )
        throws(MediaError)
    {
        self.url = url
        self.network = network
        self.cancellation = cancellation
        let scheme = url.scheme?.lowercased() ?? ""
        isRemote = scheme == "http" || scheme == "https"
        guard isRemote || url.isFileURL else {
            throw MediaError(.invalidArgument, "only file, http and https inputs are supported", url: url)
        }
        MediaLogging.install()
        if byteStream == nil, memory == nil, url.isFileURL, !FileManager.default.isReadableFile(atPath: url.path) {
            throw MediaError(.inputUnavailable, "no such file", url: url)
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
        } else if isRemote {
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
        if !Self.isIndexedContainer(opened) {
            let found = avformat_find_stream_info(opened, nil)
            if found < 0 { throw openFailure(found, stage: "read stream information from") }
        }
        var decoder: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(opened, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0)
        if index == fs_averror_stream_not_found() {
            throw MediaError(.noVideoStream, "the input has no video stream", url: url)
        }
        guard index >= 0, let decoder else {
            throw MediaError(
                .unsupportedCodec, "no decoder for the video stream (\(ffmpegMessage(index)))", url: url,
                ffmpegCode: index)
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
        if opened.pointee.duration != fs_nopts_value(), opened.pointee.duration > 0 {
            duration = Double(opened.pointee.duration) / Double(fs_time_base())
        } else if stream.pointee.duration != fs_nopts_value(), stream.pointee.duration > 0 {
            duration = Double(stream.pointee.duration) * timeBase
        }
        let counterClockwise = fs_stream_display_rotation(stream)
        quarterTurns = ((Int((-counterClockwise / 90).rounded()) % 4) + 4) % 4
        hasIndex = avformat_index_get_entries_count(stream) > 0
        if let audio { openAudio(in: opened, format: audio) }
    }

    /// Finds the audio stream that goes with the video and opens a decoder for it; an audio stream without a
    /// decoder is noted in ``audioProblem`` (the video plays on).
    private func openAudio(in context: UnsafeMutablePointer<AVFormatContext>, format: AudioFormat) {
        let index = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, streamIndex, nil, 0)
        guard index >= 0, let audioStream = context.pointee.streams[Int(index)] else { return }
        do {
            audioDecoder = try AudioTrackDecoder(
                stream: audioStream, output: format, origin: mediaSeconds(startTimestamp), url: url)
            audioIndex = index
            audioStream.pointee.discard = AVDISCARD_DEFAULT
        } catch {
            audioProblem = error
        }
    }

    /// Whether an audio stream is decoded beside the video.
    var hasAudio: Bool { audioDecoder != nil }

    /// The audio decoded so far (in presentation order), handed over once.
    func takeAudio() -> [AudioBuffer] {
        defer { pendingAudio.removeAll(keepingCapacity: true) }
        return pendingAudio
    }

    /// Hands this input's decoder over when it was opened for the same codec, size and extradata as `parameters`;
    /// this input cannot decode afterwards.
    private func takeDecoder(matching parameters: UnsafeMutablePointer<AVCodecParameters>) -> CodecContext? {
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

    /// MP4/MOV carry complete stream parameters and an index in their header: probing packets would only cost
    /// bytes (and, over HTTP, requests).
    private static func isIndexedContainer(_ context: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        guard let name = context.pointee.iformat?.pointee.name else { return false }
        return String(cString: name).hasPrefix("mov,")
    }

    private func openFailure(_ code: Int32, stage: String) -> MediaError {
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
            return MediaError(.inputUnavailable, "\(failure)", url: url, ffmpegCode: code, underlying: failure)
        }
        return MediaError(
            .invalidMedia, "cannot \(stage) the input: \(ffmpegMessage(code))", url: url, ffmpegCode: code)
    }

    // MARK: Accounting

    /// Bytes read: received over HTTP for remote inputs, read from disk for local ones.
    var bytesRead: Int {
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

    /// What is wrong with a stream's declared size (coded and displayed), or `nil` when it is within the limits.
    static func sizeProblem(_ parameters: AVCodecParameters) -> String? {
        let (width, height) = (Int(parameters.width), Int(parameters.height))
        let size = "a size of \(width)x\(height)"
        guard width > 0, height > 0 else { return size }
        guard width <= maximumSide, height <= maximumSide, width * height <= maximumPixels else {
            return size + " (the limit is \(maximumSide) px a side and \(maximumPixels / 1_000_000) Mpx)"
        }
        var displayed = Double(width)
        let sar = parameters.sample_aspect_ratio
        if sar.num > 0, sar.den > 0 { displayed *= Double(sar.num) / Double(sar.den) }
        let aspect = max(displayed / Double(height), Double(height) / displayed)
        guard aspect <= maximumAspect else {
            return size + " shown \(Int(displayed.rounded()))x\(height), more than \(Int(maximumAspect)):1"
        }
        return nil
    }

    /// Display size after sample aspect ratio and rotation.
    var displaySize: (width: Int, height: Int) {
        let parameters = stream.pointee.codecpar.pointee
        var width = Double(parameters.width)
        let height = Double(parameters.height)
        let sar = parameters.sample_aspect_ratio
        if sar.num > 0, sar.den > 0 { width = width * Double(sar.num) / Double(sar.den) }
        let w = max(1, Int(width.rounded()))
        let h = max(1, Int(height))
        return quarterTurns % 2 == 1 ? (h, w) : (w, h)
    }

    // MARK: Nested I/O (HLS playlists and segments)

    fileprivate func openNested(
        _ location: String, into pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>, flags: Int32,
        options: UnsafeMutablePointer<OpaquePointer?>?
    ) -> Int32 {
        if memoryIO != nil {
            // A segment in memory never needs another resource (and must not reach one).
            refusedURL = location
            return fs_averror(EPERM)
        }
        let nested = URL(string: location)
        let scheme = nested?.scheme?.lowercased()
        guard let nested, scheme == "http" || scheme == "https" else {
            guard !isRemote else {
                refusedURL = location
                return fs_averror(EPERM)
            }
            // A local input opening a local file: FFmpeg's own file protocol.
            var callback = format?.pointee.interrupt_callback ?? AVIOInterruptCB()
            let result = avio_open2(pb, location, flags, &callback, options)
            if result < 0 {
                nestedFailure = MediaError(
                    .inputUnavailable, "cannot open '\(location)': \(ffmpegMessage(result))", url: url,
                    ffmpegCode: result)
            }
            return result
        }
        let source = HTTPRangeSource(
            url: nested, transport: network.transport, configuration: network.configuration,
            cancellation: cancellation)
        do {
            let io = try CustomIO(source: source)
            guard let context = io.context else { return fs_averror(ENOMEM) }
            nestedIO[UnsafeMutableRawPointer(context)] = io
            pb.pointee = context
            return 0
        } catch {
            return fs_averror(ENOMEM)
        }
    }

    fileprivate func closeNested(_ pb: UnsafeMutablePointer<AVIOContext>) -> Int32 {
        guard let io = nestedIO.removeValue(forKey: UnsafeMutableRawPointer(pb)) else {
            var context: UnsafeMutablePointer<AVIOContext>? = pb
            return avio_closep(&context)
        }
        closedBytes += io.source.bytesTransferred
        if let failure = io.source.failure {
            nestedFailure = MediaError(
                .inputUnavailable, "cannot read '\(io.source.url.absoluteString)': \(failure)", url: url,
                underlying: failure)
        }
        io.close()
        return 0
    }

    /// Frames decoded so far (read by other threads for statistics while this one decodes).
    var framesDecoded: Int { decodedCount.load(ordering: .relaxed) }
    private let decodedCount = Atomic<Int>(0)

    /// A playlist or segment that could not be opened or read since the last ``beginCall()``.
    private var nestedFailure: MediaError?

    /// Forgets the failures of earlier calls.
    func beginCall() {
        nestedFailure = nil
        refusedURL = nil
    }

    /// Throws when a playlist or segment failed during this call: FFmpeg's HLS demuxer skips a segment it cannot
    /// read, which would silently give a frame from another time.
    func checkNestedFailures() throws(MediaError) {
        if let refusedURL {
            throw MediaError(.invalidArgument, "a remote input may not open the local file '\(refusedURL)'", url: url)
        }
        for io in nestedIO.values {
            if let failure = io.source.failure {
                nestedFailure = MediaError(
                    .inputUnavailable, "cannot read '\(io.source.url.absoluteString)': \(failure)", url: url,
                    underlying: failure)
            }
        }
        if let nestedFailure { throw nestedFailure }
    }

    // MARK: Reading and decoding

    func seconds(_ timestamp: Int64) -> Double { Double(timestamp - startTimestamp) * timeBase }

    /// The stream's own time of a timestamp, in seconds (no start-time subtraction).
    func mediaSeconds(_ timestamp: Int64) -> Double { Double(timestamp) * timeBase }

    private func timestamp(_ seconds: Double) -> Int64 { startTimestamp + Int64((seconds / timeBase).rounded(.down)) }

    private func checkCancelled() throws(MediaError) {
        if cancellation.isCancelled { throw MediaError(.cancelled, "cancelled", url: url) }
    }

    /// Reads the next packet of the video stream into `packet`; false at the end of the input.
    private func readPacket() throws(MediaError) -> Bool {
        while true {
            try checkCancelled()
            av_packet_unref(packet)
            let result = av_read_frame(format, packet)
            if result == fs_averror_eof() {
                if let audioDecoder, !audioDrained {
                    audioDrained = true
                    pendingAudio += audioDecoder.decode(nil)
                }
                return false
            }
            if result < 0 { throw readFailure(result) }
            if packet!.pointee.stream_index == streamIndex { return true }
            if packet!.pointee.stream_index == audioIndex, let audioDecoder {
                pendingAudio += audioDecoder.decode(packet)
            }
        }
    }

    private func readFailure(_ code: Int32) -> MediaError {
        if cancellation.isCancelled { return MediaError(.cancelled, "cancelled", url: url) }
        if let nestedFailure { return nestedFailure }
        if let failure = streamIO?.failure ?? rootIO?.source.failure {
            if let loading = failure as? LoadingError, loading.kind == .timedOut {
                return MediaError(.timedOut, loading.message, url: loading.url, underlying: loading)
            }
            return MediaError(.inputUnavailable, "\(failure)", url: url, ffmpegCode: code, underlying: failure)
        }
        return MediaError(.invalidMedia, "cannot read the input: \(ffmpegMessage(code))", url: url, ffmpegCode: code)
    }

    private var packetTime: Double {
        let p = packet!.pointee
        let ts = p.pts != fs_nopts_value() ? p.pts : p.dts
        return ts == fs_nopts_value() ? -1 : seconds(ts)
    }

    private var packetIsKey: Bool { fs_packet_is_key(packet) != 0 }

    /// Seeks to the keyframe at or before `t` (by the demuxer's notion, which may compare dts) and resets the
    /// decoder.
    func seek(to t: Double) throws(MediaError) {
        try checkCancelled()
        var result = av_seek_frame(format, streamIndex, timestamp(max(0, t)), AVSEEK_FLAG_BACKWARD)
        if result < 0 {
            result = avformat_seek_file(format, streamIndex, Int64.min, timestamp(max(0, t)), Int64.max, 0)
        }
        if result < 0 { throw readFailure(result) }
        resetDecoders()
    }

    /// The key packet at or before `t`. When `t` is before the first keyframe, the first keyframe.
    func keyPacket(atOrBefore t: Double) throws(MediaError) -> OwnedPacket {
        var target = t
        var fromStart = false
        var firstKey: OwnedPacket?
        for attempt in 0..<7 {
            if fromStart {
                guard try rewind() else { break }
            } else {
                try seek(to: target)
            }
            var best: OwnedPacket?
            var passFirstKey: OwnedPacket?
            while try readPacket() {
                let time = packetTime
                if packetIsKey {
                    if time <= t + 1e-6 {
                        best = OwnedPacket(cloning: packet!, time: time)
                        if hasIndex { break }
                        continue
                    }
                    if best == nil, passFirstKey == nil { passFirstKey = OwnedPacket(cloning: packet!, time: time) }
                    break
                } else if best != nil, time > t + 1e-6 {
                    break
                }
            }
            if let best { return best }
            if let passFirstKey, target <= 0 || fromStart { firstKey = passFirstKey }
            // Nothing at or before t from here: the seek landed late (dts before pts, or FFmpeg's bisection of an
            // MPEG-TS past the keyframe), or t precedes the video. From 0, once more from byte 0 (no index only).
            if target <= 0, !fromStart {
                fromStart = true
                continue
            }
            if target <= 0 { break }
            // 2, 6, 14, 30 s back, then from 0: the byte-0 pass always has an attempt left.
            target = attempt >= 4 ? 0 : max(0, target - Double(2 << attempt))
        }
        // t precedes the video: its first keyframe.
        if let firstKey { return firstKey }
        throw MediaError(.decodeFailed, "no keyframe found at or before \(t) s", url: url)
    }

    /// The first key packet at or after `t`, else the last one before it (near the end of the video).
    func keyPacket(atOrAfter t: Double) throws(MediaError) -> OwnedPacket {
        try seek(to: t)
        var previous: OwnedPacket?
        while try readPacket() {
            guard packetIsKey else { continue }
            let time = packetTime
            if time >= t - 1e-6, let found = OwnedPacket(cloning: packet!, time: time) { return found }
            previous = OwnedPacket(cloning: packet!, time: time)
        }
        if let previous { return previous }
        return try keyPacket(atOrBefore: t)
    }

    /// The keyframe times of an indexed container (MP4, MKV), ascending, from its index alone; empty without one.
    func indexedKeyframeTimes() -> [Double] {
        let count = avformat_index_get_entries_count(stream)
        var times: [Double] = []
        times.reserveCapacity(Int(count) / 10)
        for i in 0..<count {
            let ts = fs_index_keyframe_timestamp(stream, i)
            if ts != Int64.min { times.append(seconds(ts)) }
        }
        return times.sorted()
    }

    /// Seconds of the stream's start (its first timestamp), on the stream's own clock.
    var startSeconds: Double { mediaSeconds(startTimestamp) }

    /// Every remaining packet of the video stream, in decode order (for a segment held in memory).
    func remainingVideoPackets(limit: Int = 100_000) throws(MediaError) -> [OwnedPacket] {
        var packets: [OwnedPacket] = []
        while try readPacket() {
            let p = packet!.pointee
            guard p.pts != fs_nopts_value() || p.dts != fs_nopts_value() else { continue }
            guard let copy = OwnedPacket(cloning: packet!, time: packetTime) else {
                throw MediaError(.decodeFailed, "out of memory for a packet", url: url)
            }
            packets.append(copy)
            guard packets.count <= limit else {
                throw MediaError(.invalidMedia, "a segment with more than \(limit) video packets", url: url)
            }
        }
        return packets
    }

    /// Decodes `packets` in order from a flushed decoder and hands each frame (in presentation order) to `body`
    /// until it returns false; the decoder is flushed again afterwards.
    func decodeFrames(
        _ packets: ArraySlice<OwnedPacket>, _ body: (OwnedFrame) throws(MediaError) -> Bool
    ) throws(MediaError) {
        avcodec_flush_buffers(codec)
        defer { avcodec_flush_buffers(codec) }
        var index = packets.startIndex
        while true {
            try checkCancelled()
            if index < packets.endIndex {
                let sent = avcodec_send_packet(codec, packets[index].pointer)
                index += 1
                if sent < 0, sent != fs_averror_eagain() { continue }  // a damaged packet: skip it, as players do
            } else if index == packets.endIndex {
                avcodec_send_packet(codec, nil)
                index += 1
            } else {
                // Drained.
            }
            while avcodec_receive_frame(codec, frame) >= 0 {
                decodedCount.add(1, ordering: .relaxed)
                defer { av_frame_unref(frame) }
                guard let owned = OwnedFrame(cloning: frame!, time: frameTime ?? -1) else { continue }
                if !(try body(owned)) { return }
            }
            if index > packets.endIndex { return }
        }
    }

    /// Decodes one key packet on its own: send it, drain the decoder, take the frame, reset.
    func decode(keyPacket key: OwnedPacket) throws(MediaError) -> OwnedFrame {
        try checkCancelled()
        avcodec_flush_buffers(codec)
        var result = avcodec_send_packet(codec, key.pointer)
        if result < 0 {
            throw MediaError(.decodeFailed, "the decoder refused the keyframe: \(ffmpegMessage(result))", url: url)
        }
        avcodec_send_packet(codec, nil)
        var decoded: OwnedFrame?
        while true {
            result = avcodec_receive_frame(codec, frame)
            if result < 0 { break }
            decodedCount.add(1, ordering: .relaxed)
            if decoded == nil { decoded = OwnedFrame(cloning: frame!, time: frameTime ?? key.time) }
            av_frame_unref(frame)
        }
        avcodec_flush_buffers(codec)
        guard let decoded else {
            throw MediaError(.decodeFailed, "the keyframe at \(key.time) s did not decode", url: url)
        }
        return decoded
    }

    private var frameTime: Double? {
        let f = frame!.pointee
        let ts = f.best_effort_timestamp != fs_nopts_value() ? f.best_effort_timestamp : f.pts
        return ts == fs_nopts_value() ? nil : seconds(ts)
    }

    /// Whether the decoder was sent end-of-stream (sequential decoding); cleared by ``seek(to:)``.
    private var draining = false

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
    private var awaitingKey = false

    /// The next frame in presentation order for sequential playback; `nil` at the end of the input.
    func nextFrame() throws(MediaError) -> OwnedFrame? {
        while true {
            try checkCancelled()
            if keyframesOnly {
                guard try readPacket() else { return nil }
                guard packetIsKey, let key = OwnedPacket(cloning: packet!, time: packetTime) else { continue }
                guard let decoded = try? decode(keyPacket: key) else { continue }
                return decoded
            }
            if avcodec_receive_frame(codec, frame) >= 0 {
                decodedCount.add(1, ordering: .relaxed)
                defer { av_frame_unref(frame) }
                return OwnedFrame(cloning: frame!, time: frameTime ?? -1)
            }
            if draining { return nil }
            if try readPacket() {
                if awaitingKey {
                    guard packetIsKey else { continue }
                    awaitingKey = false
                }
                let sent = avcodec_send_packet(codec, packet)
                if sent < 0, sent != fs_averror_eagain() { continue }  // a damaged packet: skip it
            } else {
                avcodec_send_packet(codec, nil)
                draining = true
            }
        }
    }

    /// The frame shown at `t`: the last frame whose presentation time is at or before `t` (the first frame when
    /// `t` precedes it). Decodes forward from the keyframe before `t`.
    func exactFrame(at t: Double) throws(MediaError) -> OwnedFrame {
        var target = t
        var fromStart = false
        // The first frame decoded from 0 (t precedes the video's first frame): the answer when nothing is earlier.
        var earliest: OwnedFrame?
        for attempt in 0..<7 {
            if fromStart {
                guard try rewind() else { break }
            } else {
                try seek(to: target)
            }
            var candidate: OwnedFrame?
            var first: OwnedFrame?
            var finished = false
            var overshot = false
            while !finished {
                let got = try readPacket()
                let sent = avcodec_send_packet(codec, got ? packet : nil)
                if sent < 0, sent != fs_averror_eagain(), got {
                    // A damaged packet: skip it, as players do.
                    continue
                }
                while avcodec_receive_frame(codec, frame) >= 0 {
                    decodedCount.add(1, ordering: .relaxed)
                    let time = frameTime ?? -1
                    defer { av_frame_unref(frame) }
                    if first == nil { first = OwnedFrame(cloning: frame!, time: time) }
                    if time <= t + 1e-6 {
                        candidate = OwnedFrame(cloning: frame!, time: time)
                    } else {
                        if candidate == nil { overshot = true }
                        finished = true
                        break
                    }
                }
                if !got { finished = true }
            }
            avcodec_flush_buffers(codec)
            if let candidate { return candidate }
            // Past t already, or (no index) nothing decodable before the end: the seek landed after the keyframe t
            // needs (an MPEG-TS has no index, and FFmpeg's bisection by timestamps can land past it). Start earlier:
            // 2, 6, 14, 30 s back, then from 0, so the byte-0 pass always has an attempt left. An indexed file whose
            // frames do not decode is an error, not an earlier picture.
            if overshot || (first == nil && !hasIndex), target > 0 {
                target = attempt >= 4 ? 0 : max(0, target - Double(2 << attempt))
                continue
            }
            if let first { earliest = first }
            // A seek to 0 that still lands past t (FFmpeg's bisection of an MPEG-TS can): once more from byte 0.
            if overshot || (first == nil && !hasIndex), !fromStart {
                fromStart = true
                continue
            }
            break
        }
        if let earliest { return earliest }
        throw MediaError(.decodeFailed, "no frame decoded near \(t) s", url: url)
    }

    /// After a seek: the decoders forget what they had.
    private func resetDecoders() {
        avcodec_flush_buffers(codec)
        draining = false
        audioDecoder?.flush()
        pendingAudio.removeAll()
        audioDrained = false
    }

    /// Moves to the first byte of the input (FFmpeg's byte seek) and resets the decoders; false when the demuxer
    /// cannot seek by bytes (MP4 cannot, and needs not: its index is exact).
    private func rewind() throws(MediaError) -> Bool {
        try checkCancelled()
        guard !hasIndex, av_seek_frame(format, -1, 0, AVSEEK_FLAG_BYTE) >= 0 else { return false }
        resetDecoders()
        return true
    }
}

// MARK: C callbacks

/// FFmpeg's interrupt callback for every input: `opaque` is the input's ``CancellationFlag``.
func mediaInterrupt(_ opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let opaque else { return 0 }
    return Unmanaged<CancellationFlag>.fromOpaque(opaque).takeUnretainedValue().isCancelled ? 1 : 0
}

private func mediaIOOpen(
    _ context: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
    _ location: UnsafePointer<CChar>?, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let context, let pb, let location, let opaque = context.pointee.opaque else { return fs_averror(EINVAL) }
    let input = Unmanaged<MediaInput>.fromOpaque(opaque).takeUnretainedValue()
    return input.openNested(String(cString: location), into: pb, flags: flags, options: options)
}

private func mediaIOClose(
    _ context: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<AVIOContext>?
) -> Int32 {
    guard let context, let pb, let opaque = context.pointee.opaque else { return 0 }
    let input = Unmanaged<MediaInput>.fromOpaque(opaque).takeUnretainedValue()
    return input.closeNested(pb)
}
