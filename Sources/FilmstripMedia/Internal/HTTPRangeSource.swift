import FilmstripLoading
import FilmstripSync
import Foundation

/// Random access to an HTTP resource through bounded `Range` requests, for FFmpeg's custom I/O.
///
/// FFmpeg reads on a worker thread that is not part of Swift's cooperative pool, so each fetch blocks that thread
/// on a semaphore while the request runs; with the default transport the request completes on URLSession's own
/// queue, so FFmpeg's I/O never waits for a free thread in the pool. Reads are served from the chunks fetched so far
/// (up to 32 MiB of them are kept), so a demuxer that seeks back (MPEG-TS has no index: FFmpeg bisects it by
/// timestamps) never fetches a byte twice: a request stops where a kept chunk begins. A read just past the last chunk
/// fetches the next with twice the read-ahead (up to 4 MiB), a jump resets it to 64 KiB. Every body byte received is
/// counted, so callers can report exactly how much of the file was transferred.
///
/// Confined to one thread at a time (the FFmpeg worker that owns the input).
final class HTTPRangeSource {
    let url: URL
    private let transport: any DataLoading
    private let configuration: LoadingConfiguration
    private let cancellation: CancellationFlag
    private(set) var size: Int64?
    private(set) var position: Int64 = 0
    private var chunk = Data()
    private var chunkOffset: Int64 = 0
    private var readAhead = HTTPRangeSource.minimumReadAhead
    /// Bytes the demuxer is about to read (a sample the index names): a read that jumps to its start fetches exactly
    /// them, not the read-ahead.
    private var expected: Range<Int64>?
    /// Until the input is open: a jump into the last ``maximumReadAhead`` bytes of the resource (an MP4 index at the
    /// end, Matroska's cues) reads to its end in one request, not in growing pieces.
    var opening = true
    /// Chunks fetched before, by offset (never overlapping), oldest dropped first past `keptLimit` bytes.
    private var kept: [Int64: Data] = [:]
    private var keptOrder: [Int64] = []
    private var keptBytes = 0
    static let keptLimit = 32 << 20
    /// Bytes received and requests made (read by other threads for statistics).
    var bytesTransferred: Int { transferred.load(ordering: .relaxed) }
    var requestCount: Int { requests.load(ordering: .relaxed) }
    private let transferred = Atomic<Int>(0)
    private let requests = Atomic<Int>(0)
    private(set) var failure: (any Error)?

    static let minimumReadAhead = 64 << 10
    static let maximumReadAhead = 4 << 20

    init(url: URL, transport: any DataLoading, configuration: LoadingConfiguration, cancellation: CancellationFlag) {
        self.url = url
        self.transport = transport
        self.configuration = configuration
        self.cancellation = cancellation
    }

    /// Copies up to `count` bytes at the current position; 0 at the end; throws on failure.
    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        if let size, position >= size { return 0 }
        let chunkEnd = chunkOffset + Int64(chunk.count)
        if position < chunkOffset || position >= chunkEnd {
            if let (offset, data) = keptChunk(containing: position) {
                chunk = data
                chunkOffset = offset
            } else {
                let sequential = !chunk.isEmpty && position == chunkEnd
                readAhead = sequential ? min(readAhead * 2, Self.maximumReadAhead) : Self.minimumReadAhead
                var length = Int64(max(readAhead, count))
                // A short read is fine: FFmpeg asks again for the rest of its buffer only when it needs it.
                if let expected, expected.lowerBound == position, !sequential { length = Int64(expected.count) }
                if opening, !sequential, position > 0, let size, size - position <= Int64(Self.maximumReadAhead) {
                    length = max(length, size - position)
                }
                expected = nil
                // Stop where a kept chunk begins: those bytes are here already.
                if let next = kept.keys.filter({ $0 > position }).min() { length = min(length, next - position) }
                try fetch(from: position, length: Int(length))
                if position < chunkOffset || position >= chunkOffset + Int64(chunk.count) { return 0 }
            }
        }
        let start = Int(position - chunkOffset)
        let available = min(count, chunk.count - start)
        guard available > 0 else { return 0 }
        chunk.withUnsafeBytes { raw in
            buffer.copyMemory(from: raw.baseAddress! + start, byteCount: available)
        }
        position += Int64(available)
        return available
    }

    /// The kept chunk that holds `position`.
    private func keptChunk(containing position: Int64) -> (Int64, Data)? {
        for (offset, data) in kept where offset <= position && position < offset + Int64(data.count) {
            return (offset, data)
        }
        return nil
    }

    /// Keeps the current chunk; a server that sent the whole resource replaces every kept chunk.
    private func keep() {
        guard !chunk.isEmpty else { return }
        let end = chunkOffset + Int64(chunk.count)
        for offset in kept.keys where offset < end && chunkOffset < offset + Int64(kept[offset]!.count) {
            keptBytes -= kept[offset]!.count
            kept[offset] = nil
            keptOrder.removeAll { $0 == offset }
        }
        kept[chunkOffset] = chunk
        keptOrder.append(chunkOffset)
        keptBytes += chunk.count
        while keptBytes > Self.keptLimit, keptOrder.count > 1 {
            let oldest = keptOrder.removeFirst()
            keptBytes -= kept.removeValue(forKey: oldest)?.count ?? 0
        }
    }

    /// Moves the read position.
    func seek(to offset: Int64) { position = max(0, offset) }

    /// Says that the next read jumps to `range` and takes all of it (a keyframe sample whose place the index
    /// gives): that fetch is the range, one request, instead of the read-ahead.
    func expect(_ range: Range<Int64>) { expected = range.isEmpty ? nil : range }

    /// Learns the size with a one-byte request when no read has told it yet.
    func resolveSize() throws -> Int64? {
        if size == nil { try fetch(from: 0, length: Self.minimumReadAhead) }
        return size
    }

    private func fetch(from offset: Int64, length: Int) throws {
        if cancellation.isCancelled { throw MediaError(.cancelled, "cancelled", url: url) }
        // A demuxer that seeks near Int64.max (a hostile container) reads to the end of what can be asked for.
        let (end, overflow) = offset.addingReportingOverflow(Int64(length))
        let last = overflow ? Int64.max : end
        let request = ByteRangeRequest(url: url, range: offset..<(size.map { min(last, $0) } ?? last))
        let semaphore = DispatchSemaphore(value: 0)
        let box = ResultBox()
        // The transport completes on its own threads (and retries wait on a timer): no dependence on Swift's
        // cooperative pool. A short answer near the end is fine: what came is kept where it belongs.
        let handle = transport.startLoad(request, configuration: configuration, exact: false) { attempt in
            box.attempts.store(attempt.number, ordering: .relaxed)
        } completion: { result in
            box.result = result
            semaphore.signal()
        }
        // A cancelled read (a stop, a seek's interrupt) cancels the request or the wait for a retry at once; its
        // completion then comes with the cancellation.
        var cancelled = false
        while semaphore.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            if !cancelled, cancellation.isCancelled {
                cancelled = true
                handle.cancel()
            }
        }
        requests.add(box.attempts.load(ordering: .relaxed), ordering: .relaxed)
        let response: LoadResponse
        do {
            response = try box.result!.get()
        } catch let error as LoadingError where error.kind == .httpStatus(416) {
            // Past the end: an empty chunk.
            chunk = Data()
            chunkOffset = offset
            return
        } catch {
            failure = error
            throw error
        }
        transferred.add(response.data.count, ordering: .relaxed)
        // A 206 says where its bytes are; a 200 is the whole resource (the server ignored Range).
        let (placed, total) = request.placement(of: response)
        chunkOffset = placed
        if let total { size = total }
        chunk = response.data
        keep()
    }
}

/// Carries a result (and how many attempts it took) from the transport's threads to the blocked worker thread;
/// the semaphore orders the accesses to the result.
private final class ResultBox: @unchecked Sendable {
    var result: Result<LoadResponse, any Error>?
    let attempts = Atomic<Int>(0)
}
