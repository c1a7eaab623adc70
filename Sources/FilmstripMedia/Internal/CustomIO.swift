import CFFmpeg
import FilmstripSync
import Foundation

/// An `AVIOContext` reading from an ``HTTPRangeSource``. The context holds an unretained pointer to this object,
/// so the owner keeps it alive until ``close()``.
final class CustomIO {
    let source: HTTPRangeSource
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    init(source: HTTPRangeSource) throws(MediaError) {
        self.source = source
        context = try allocateReadContext(
            Unmanaged.passUnretained(self).toOpaque(), read: customIORead, seek: customIOSeek, url: source.url)
    }

    /// Frees the context and its buffer.
    func close() { freeReadContext(&context) }

    deinit { close() }
}

private func customIORead(
    _ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int32
)
    -> Int32
{
    guard let opaque, let buffer else { return fs_averror(EINVAL) }
    let io = Unmanaged<CustomIO>.fromOpaque(opaque).takeUnretainedValue()
    do {
        let count = try io.source.read(into: buffer, count: Int(size))
        return count == 0 ? fs_averror_eof() : Int32(count)
    } catch let error as MediaError where error.kind == .cancelled {
        return fs_averror_exit()
    } catch {
        return fs_averror(EIO)
    }
}

private func customIOSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(fs_averror(EINVAL)) }
    let io = Unmanaged<CustomIO>.fromOpaque(opaque).takeUnretainedValue()
    let source = io.source
    if whence & fs_avseek_size() != 0 {
        return (try? source.resolveSize()).flatMap { $0 } ?? -1
    }
    switch whence & ~fs_avseek_force() {
    case SEEK_SET: source.seek(to: offset)
    case SEEK_CUR: source.seek(to: source.position + offset)
    case SEEK_END:
        guard let size = (try? source.resolveSize()).flatMap({ $0 }) else { return -1 }
        source.seek(to: size + offset)
    default: return -1
    }
    return source.position
}

/// A forward-only byte stream for ``MediaInput``: `read` fills the buffer and returns the count, 0 at the end, and
/// throws to fail the input.
package struct ByteStream: Sendable {
    var read: @Sendable (UnsafeMutableRawBufferPointer) throws -> Int
}

/// An `AVIOContext` over a ``ByteStream`` (not seekable).
final class StreamIO {
    let stream: ByteStream
    let url: URL
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    fileprivate(set) var failure: (any Error)?
    /// Bytes read so far (read by other threads for statistics).
    var bytesRead: Int { readCount.load(ordering: .relaxed) }
    fileprivate let readCount = Atomic<Int>(0)

    init(stream: ByteStream, url: URL) throws(MediaError) {
        self.stream = stream
        self.url = url
        context = try allocateReadContext(
            Unmanaged.passUnretained(self).toOpaque(), read: streamIORead, seek: nil, url: url)
    }

    /// Frees the context and its buffer.
    func close() { freeReadContext(&context) }

    deinit { close() }
}

private func streamIORead(
    _ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int32
)
    -> Int32
{
    guard let opaque, let buffer else { return fs_averror(EINVAL) }
    let io = Unmanaged<StreamIO>.fromOpaque(opaque).takeUnretainedValue()
    do {
        let count = try io.stream.read(UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)))
        io.readCount.add(count, ordering: .relaxed)
        return count == 0 ? fs_averror_eof() : Int32(count)
    } catch let error as MediaError where error.kind == .cancelled {
        return fs_averror_exit()
    } catch {
        io.failure = error
        return fs_averror(EIO)
    }
}

/// A read-only `AVIOContext` with a 64 KiB buffer, calling `read` (and `seek`, when the input can seek) with `opaque`.
private func allocateReadContext(
    _ opaque: UnsafeMutableRawPointer, read: fs_read_packet, seek: fs_seek?, url: URL
) throws(MediaError) -> UnsafeMutablePointer<AVIOContext> {
    let size: Int32 = 64 << 10
    guard let buffer = av_malloc(Int(size)) else {
        throw MediaError(.inputUnavailable, "out of memory for an I/O buffer", url: url)
    }
    guard let context = fs_avio_alloc_read_context(buffer.assumingMemoryBound(to: UInt8.self), size, opaque, read, seek)
    else {
        av_free(buffer)
        throw MediaError(.inputUnavailable, "cannot create an I/O context", url: url)
    }
    return context
}

/// Frees a context made by `allocateReadContext` and its buffer (FFmpeg may have replaced the buffer).
private func freeReadContext(_ context: inout UnsafeMutablePointer<AVIOContext>?) {
    guard context != nil else { return }
    av_freep(&context!.pointee.buffer)
    avio_context_free(&context)
}

/// A seekable `AVIOContext` over bytes in memory (one segment with its initialisation data).
final class MemoryIO {
    let bytes: Data
    private(set) var position = 0
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    init(bytes: Data, url: URL) throws(MediaError) {
        self.bytes = bytes
        context = try allocateReadContext(
            Unmanaged.passUnretained(self).toOpaque(), read: memoryIORead, seek: memoryIOSeek, url: url)
    }

    /// Frees the context and its buffer.
    func close() { freeReadContext(&context) }

    deinit { close() }

    fileprivate func read(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        let available = min(count, bytes.count - position)
        guard available > 0 else { return 0 }
        bytes.withUnsafeBytes { raw in
            buffer.update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + position, count: available)
        }
        position += available
        return available
    }

    fileprivate func seek(_ offset: Int64, whence: Int32) -> Int64 {
        if whence & fs_avseek_size() != 0 { return Int64(bytes.count) }
        let target: Int64
        switch whence & ~fs_avseek_force() {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = Int64(position) + offset
        case SEEK_END: target = Int64(bytes.count) + offset
        default: return -1
        }
        guard target >= 0, target <= Int64(bytes.count) else { return -1 }
        position = Int(target)
        return target
    }
}

private func memoryIORead(
    _ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int32
)
    -> Int32
{
    guard let opaque, let buffer else { return fs_averror(EINVAL) }
    let io = Unmanaged<MemoryIO>.fromOpaque(opaque).takeUnretainedValue()
    let count = io.read(into: buffer, count: Int(size))
    return count == 0 ? fs_averror_eof() : Int32(count)
}

private func memoryIOSeek(_ opaque: UnsafeMutableRawPointer?, _ offset: Int64, _ whence: Int32) -> Int64 {
    guard let opaque else { return Int64(fs_averror(EINVAL)) }
    return Unmanaged<MemoryIO>.fromOpaque(opaque).takeUnretainedValue().seek(offset, whence: whence)
}
