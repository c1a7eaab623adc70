import CFFmpeg
import FilmstripLoading
import FilmstripSync
import Foundation

/// Where a ``MediaInput``'s bytes come from, and how FFmpeg reaches the further resources it asks for (an HLS
/// input's playlists and segments): the input's own I/O (bounded `Range` requests for http(s), a forward-only byte
/// stream, a segment in memory, or FFmpeg's file protocol for a local file), each nested one FFmpeg opens through
/// `io_open`, the bytes they read and what failed. FFmpeg's callbacks find it through the format context's
/// `opaque`. Not thread-safe, like its input.
final class InputIO {
    let url: URL
    let isRemote: Bool
    let cancellation: CancellationFlag
    /// How further resources are reached (URL inputs only).
    private let network: MediaNetwork?
    private var rootIO: CustomIO?
    private var streamIO: StreamIO?
    /// The bytes of one segment (with its initialisation data), for inputs opened from memory.
    private var memoryIO: MemoryIO?
    private var nestedIO: [UnsafeMutableRawPointer: CustomIO] = [:]
    private var closedBytes = 0
    private var refusedURL: String?
    /// A playlist or segment that could not be opened or read since the last ``beginCall()``.
    private(set) var nestedFailure: MediaError?

    /// Checks `source` (file, http or https; a local file that exists and may be read) and prepares its I/O.
    init(_ source: MediaSource, cancellation: CancellationFlag) throws(MediaError) {
        let url = source.url
        self.url = url
        self.cancellation = cancellation
        let scheme = url.scheme?.lowercased() ?? ""
        isRemote = scheme == "http" || scheme == "https"
        guard isRemote || url.isFileURL else {
            throw MediaError(.invalidArgument, "only file, http and https inputs are supported", url: url)
        }
        switch source {
        case .url(_, let reached):
            network = reached
            if url.isFileURL {
                if let problem = LocalFile.problem(url) { throw MediaError(.inputUnavailable, problem, url: url) }
                guard FileManager.default.isReadableFile(atPath: url.path) else {
                    throw MediaError(.inputUnavailable, "the file is not readable", url: url)
                }
            } else {
                let source = HTTPRangeSource(
                    url: url, transport: reached.transport, configuration: reached.configuration,
                    cancellation: cancellation)
                rootIO = try CustomIO(source: source)
            }
        case .stream(let stream, _):
            network = nil
            streamIO = try StreamIO(stream: stream, url: url)
        case .memory(let bytes, _):
            network = nil
            memoryIO = try MemoryIO(bytes: bytes, url: url)
        }
    }

    /// Says the next read jumps to `range` and takes it all (see ``HTTPRangeSource/expect(_:)``); only an HTTP
    /// input uses it.
    func expectRead(_ range: Range<Int64>) { rootIO?.source.expect(range) }

    /// The input is open: reads near the end no longer take the rest of the resource (``HTTPRangeSource/opening``).
    func opened() { rootIO?.source.opening = false }

    /// Makes `context` read through this: its own I/O, and every further open (so failures are seen and a remote
    /// input cannot reach local files).
    func attach(to context: UnsafeMutablePointer<AVFormatContext>) {
        context.pointee.interrupt_callback.callback = mediaInterrupt
        context.pointee.interrupt_callback.opaque = Unmanaged.passUnretained(cancellation).toOpaque()
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        if let pb = rootIO?.context ?? streamIO?.context ?? memoryIO?.context {
            context.pointee.pb = pb
            context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        context.pointee.io_open = mediaIOOpen
        context.pointee.io_close2 = mediaIOClose
    }

    /// What `avformat_open_input` is given: a local file's path or the URL; nothing for custom I/O.
    var location: String { isSegment ? "" : url.isFileURL ? url.path : url.absoluteString }

    /// Whether the bytes are a player's segments: a forward-only stream, or one segment in memory.
    var isSegment: Bool { streamIO != nil || memoryIO != nil }

    /// Whether the bytes come as a forward-only stream (a live stream starts from what is at hand).
    var isForwardOnly: Bool { streamIO != nil }

    /// The error for an FFmpeg failure `code` while the input was `doing` something ("open", "read"): a
    /// cancellation, a refused local file, a playlist or segment that failed, the transport's own failure, else
    /// the media itself.
    func failure(_ code: Int32, doing stage: String) -> MediaError {
        if cancellation.isCancelled { return MediaError(.cancelled, "cancelled", url: url) }
        if let refusedURL {
            return MediaError(
                .invalidArgument, "a remote input may not open the local file '\(refusedURL)'", url: url,
                ffmpegCode: code)
        }
        if let nestedFailure { return nestedFailure }
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

    // MARK: Nested resources

    func openNested(
        _ location: String, into pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>, flags: Int32,
        options: UnsafeMutablePointer<OpaquePointer?>?, interrupt: AVIOInterruptCB
    ) -> Int32 {
        guard let network else {
            // A segment in memory or a byte stream never needs another resource (and must not reach one).
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
            var callback = interrupt
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

    func closeNested(_ pb: UnsafeMutablePointer<AVIOContext>) -> Int32 {
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

    // MARK: Accounting

    /// Bytes read: received over HTTP for remote inputs and streams, read from disk (by `context`) for local ones.
    func bytesRead(by context: UnsafeMutablePointer<AVFormatContext>?) -> Int {
        if let streamIO { return streamIO.bytesRead }
        if isRemote {
            return (rootIO?.source.bytesTransferred ?? 0) + closedBytes
                + nestedIO.values.reduce(0) { $0 + $1.source.bytesTransferred }
        }
        return Int(context?.pointee.pb?.pointee.bytes_read ?? 0)
    }

    /// HTTP requests made.
    var requestCount: Int {
        (rootIO?.source.requestCount ?? 0) + nestedIO.values.reduce(0) { $0 + $1.source.requestCount }
    }

    /// Closes every I/O (after the format context is closed).
    func close() {
        rootIO?.close()
        streamIO?.close()
        memoryIO?.close()
        for io in nestedIO.values { io.close() }
    }
}

// MARK: C callbacks

/// FFmpeg's interrupt callback for every input: `opaque` is the input's ``CancellationFlag``.
func mediaInterrupt(_ opaque: UnsafeMutableRawPointer?) -> Int32 {
    guard let opaque else { return 0 }
    return Unmanaged<CancellationFlag>.fromOpaque(opaque).takeUnretainedValue().isCancelled ? 1 : 0
}

func mediaIOOpen(
    _ context: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
    _ location: UnsafePointer<CChar>?, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let context, let pb, let location, let opaque = context.pointee.opaque else { return fs_averror(EINVAL) }
    let io = Unmanaged<InputIO>.fromOpaque(opaque).takeUnretainedValue()
    return io.openNested(
        String(cString: location), into: pb, flags: flags, options: options,
        interrupt: context.pointee.interrupt_callback)
}

func mediaIOClose(
    _ context: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<AVIOContext>?
) -> Int32 {
    guard let context, let pb, let opaque = context.pointee.opaque else { return 0 }
    let io = Unmanaged<InputIO>.fromOpaque(opaque).takeUnretainedValue()
    return io.closeNested(pb)
}
