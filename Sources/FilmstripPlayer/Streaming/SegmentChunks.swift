import FilmstripFormats
import FilmstripMedia
import FilmstripStreaming
import FilmstripSync
import Foundation

/// A stream's content as chunks for ``TrickPlaySource``: the I-frame track's entries (each fetched as its own byte
/// range with its map or initialisation section) or the current level's segments (fetched whole), each decoded on its
/// own on trick play's fetch lane, with the session's retries and CMCD (`ot=i` for I-frames).
///
/// `@unchecked Sendable`: `references` is set and read by the feeder thread only; the task is behind a mutex.
final class SegmentChunks: TrickChunks, @unchecked Sendable {
    private let session: StreamSession
    /// Whether the chunks are the I-frame track's (until it cannot be listed).
    private var iFrames: Bool
    private var references: [(SegmentReference, Presentation.Rendition)] = []
    private let current = Mutex<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))
    private let decoded = Atomic<Int>(0)
    private let fetched = Atomic<Int>(0)

    init(session: StreamSession, iFrames: Bool) {
        self.session = session
        self.iFrames = iFrames
    }

    func spans() throws -> [Range<Double>] {
        references = try references(iFrames: iFrames)
        return references.map { $0.0.start..<max($0.0.end, $0.0.start + 0.001) }
    }

    /// The chunks; an I-frame track that cannot be listed gives way to the normal segments, with a warning.
    private func references(iFrames: Bool) throws -> [(SegmentReference, Presentation.Rendition)] {
        let result = try blocking {
            [self] () async -> Result<[(SegmentReference, Presentation.Rendition)], PlayerError> in
            do throws(PlayerError) {
                return .success(try await listed(iFrames: iFrames))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let references):
            return references
        case .failure(let error) where iFrames && !session.isStopped:
            session.report(
                PlayerError(
                    .segmentSkipped, severity: .warning,
                    "the I-frame track cannot be listed (\(error.message)); trick play shows the segments' keyframes",
                    underlying: error))
            self.iFrames = false
            return try references(iFrames: false)
        case .failure(let error):
            throw error
        }
    }

    /// The chunks trick play decodes, with the rendition each belongs to: the I-frame track's entries (one I-frame
    /// rendition per period, at the rank of the current video level among its peers), else the current level's
    /// segments.
    private func listed(iFrames: Bool) async throws(PlayerError) -> [(SegmentReference, Presentation.Rendition)] {
        guard let opened = session.opened.withLock({ $0 }) else { return [] }
        let level = session.shared.withLock { $0.statistics.rendition }
        guard iFrames else {
            let segments = session.shared.withLock { $0.segments }
            let ladder = opened.ladder
            let row = min(level, ladder.levels.count - 1)
            return segments.map { ($0, ladder.rendition(row, for: $0)) }
        }
        var chosen: [Presentation.Rendition] = []
        for period in opened.presentation.periods {
            guard let track = period.tracks.first(where: { $0.kind == .iFrame && !$0.renditions.isEmpty }) else {
                continue
            }
            let ranked = track.renditions.sorted { $0.bandwidth < $1.bandwidth }
            chosen.append(ranked[min(level, ranked.count - 1)])
        }
        let presentation = opened.presentation
        var references: [(SegmentReference, Presentation.Rendition)] = []
        for rendition in chosen {
            let list = try await session.requests.withRetries(lane: session.lane(.trick)) { [client = session.client] in
                try await client.segmentList(of: rendition, in: presentation, reload: false)
            }
            references += list.references.map { ($0, rendition) }
        }
        return references.sorted { $0.0.start < $1.0.start }
    }

    func frames(of index: Int, keyframesOnly: Bool) throws -> [DecodedVideoFrame] {
        let (segment, rendition) = references[index]
        let result = try blocking { [session] in
            await session.requests.segmentBytes(segment, of: rendition, newRun: true, lane: session.lane(.trick))
        }
        let data: Data
        switch result {
        case .success(let bytes):
            data = bytes
        case .failure(let failure):
            if current.withLock({ $0.cancelled }) || session.isStopped { throw SegmentQueue.Interrupted() }
            // A hole in trick play: the next chunk is shown instead.
            session.report(
                PlayerError(
                    .segmentSkipped, severity: .warning,
                    "the \(iFrames ? "I-frame" : "segment") at \(formatSeconds(segment.start)) s failed and was skipped: \(failure.message)",
                    underlying: failure.underlying))
            return []
        }
        fetched.add(data.count, ordering: .relaxed)
        let reader = DataReader(data)
        let decoder = try VideoDecoder(label: segment.url, contentKeys: session.settings.contentKeys) { buffer in
            reader.read(into: buffer)
        }
        decoder.keyframesOnly = keyframesOnly
        var frames: [DecodedVideoFrame] = []
        do {
            while let frame = try decoder.nextFrame() {
                decoded.add(1, ordering: .relaxed)
                frames.append(frame)
            }
        } catch  where !frames.isEmpty {
            // A chunk that ends mid-frame still gives the frames decoded before.
        }
        frames.sort { $0.time < $1.time }
        var placement = TimelinePlacement(timing: segment.timing, start: segment.start, origin: decoder.startSeconds)
        let shift = placement.place(earliest: frames.first?.time ?? 0)
        return frames.map { $0.shifted(by: shift) }
    }

    /// Runs `operation` on a task and waits for it (the feeder thread); ``interrupt()`` cancels it.
    private func blocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) throws -> T {
        let value = waitForTask(activity: session.clock.activity, operation) { task in
            current.withLock { current in
                current.task = task
                return current.cancelled
            }
        }
        return try current.withLock { current in
            current.task = nil
            if current.cancelled { throw SegmentQueue.Interrupted() }
            return value
        }
    }

    func interrupt() {
        let task = current.withLock { current in
            current.cancelled = true
            return current.task
        }
        session.trickGeneration.add(1, ordering: .relaxed)
        session.trickWake.signal()
        task?.cancel()
    }

    func resume() { current.withLock { $0.cancelled = false } }

    func cancel() { interrupt() }

    var framesDecoded: Int { decoded.load(ordering: .relaxed) }
    var bytesRead: Int { fetched.load(ordering: .relaxed) }
}

/// Hands the bytes of one chunk to a ``VideoDecoder``.
private final class DataReader: @unchecked Sendable {
    private let data: Data
    private var offset = 0
    private let lock = NSLock()

    init(_ data: Data) {
        self.data = data
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lock.withLock {
            let count = min(buffer.count, data.count - offset)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { raw in
                buffer.baseAddress!.copyMemory(from: raw.baseAddress! + offset, byteCount: count)
            }
            offset += count
            return count
        }
    }
}
