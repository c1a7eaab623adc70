import CFFmpeg
import FilmstripLoading
import FilmstripSync
import Foundation

/// How a ``MediaInput`` opens and closes the further resources FFmpeg asks for (HLS playlists and segments), and
/// the C callbacks FFmpeg calls.
extension MediaInput {
    func openNested(
        _ location: String, into pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>, flags: Int32,
        options: UnsafeMutablePointer<OpaquePointer?>?
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
    let input = Unmanaged<MediaInput>.fromOpaque(opaque).takeUnretainedValue()
    return input.openNested(String(cString: location), into: pb, flags: flags, options: options)
}

func mediaIOClose(
    _ context: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<AVIOContext>?
) -> Int32 {
    guard let context, let pb, let opaque = context.pointee.opaque else { return 0 }
    let input = Unmanaged<MediaInput>.fromOpaque(opaque).takeUnretainedValue()
    return input.closeNested(pb)
}
