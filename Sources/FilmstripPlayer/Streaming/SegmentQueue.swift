import FilmstripFormats
import Foundation

/// The bytes a ``StreamSession`` fetched, handed to the decoder thread in runs: a run is what one demuxer and decoder
/// read from start to end (an initialisation section, then segments of one rendition with consecutive numbers, no
/// discontinuity and no period boundary between them).
///
/// `@unchecked Sendable`: every stored property is read and written only while `condition` is locked. The fetch task
/// appends, the decoder thread reads and blocks here; a seek or a stop wakes it.
final class SegmentQueue: @unchecked Sendable {
    /// What the decoder gets when it asks for the next run.
    enum RunStart: Sendable {
        /// A run: its id, its first segment's start, how its timestamps map onto the timeline, and its
        /// discontinuity sequence.
        case run(id: Int, start: Double, timing: SegmentReference.Timing, sequence: Int)
        case end
        case interrupted
        case failed(PlayerError)
    }

    /// Thrown to a decoder read that was interrupted (a seek or a stop is coming).
    struct Interrupted: Error {}

    private struct Chunk {
        var run: Int
        var runStart: Double
        var timing: SegmentReference.Timing
        var sequence: Int
        var data: Data
        var offset = 0
    }

    private let condition: ParkingCondition
    private var chunks: [Chunk] = []
    private var runCounter = 0
    private var runStart = 0.0
    private var runTiming = SegmentReference.Timing.segmentStart
    private var runSequence = 0
    private var finishedRun = 0
    private var complete = false
    private var interrupted = false
    private var stopped = false
    private var failure: PlayerError?
    /// Counts resets: a reader resumes only for the reset it carried a seek out for (see ``resume(epoch:)``).
    private var epoch = 0
    /// The chunks of a run read so far, kept while the decoder may read that run again from its start.
    private var kept: (run: Int, chunks: [Chunk])?

    init(activity: Activity?) {
        condition = ParkingCondition(activity: activity)
    }

    /// Queues the bytes of one segment; `newRun` starts a run with this segment (its start and how its timestamps
    /// map onto the timeline).
    func append(_ data: Data, newRun: Bool, segment: SegmentReference) {
        condition.withLock {
            if newRun || runCounter == 0 {
                runCounter += 1
                runStart = segment.start
                runTiming = segment.timing
                runSequence = segment.discontinuitySequence
            }
            chunks.append(
                Chunk(run: runCounter, runStart: runStart, timing: runTiming, sequence: runSequence, data: data))
            condition.broadcast()
        }
    }

    /// The id of the newest run appended (0 before any).
    var newestRun: Int { condition.withLock { runCounter } }

    /// Forgets what is queued: the decoder's next run is the next one appended. A seek's reset is `interrupting`:
    /// the decoder's reads fail from now until it has carried the seek out and calls ``resume()``, so it never
    /// reads the new position's bytes into the decoder of the old one.
    @discardableResult
    func reset(interrupting: Bool = false) -> Int {
        condition.withLock {
            epoch += 1
            chunks.removeAll()
            kept = nil
            finishedRun = runCounter
            complete = false
            interrupted = interrupting
            failure = nil
            condition.broadcast()
            return epoch
        }
    }

    /// The decoder has carried out a seek (its decoder is closed): its reads go on (the reader's side of an
    /// interrupting ``reset(interrupting:)``). With `epoch` (what that reset returned), only if no reset came since:
    /// a decoder carrying out a seek that a later one replaced must not read the later position's bytes (the
    /// decoder of the later seek would then start that run part-way through).
    func resume(epoch expected: Int? = nil) {
        condition.withLock {
            guard !stopped, expected == nil || expected == epoch else { return }
            interrupted = false
            condition.broadcast()
        }
    }

    /// Nothing more will be appended until a reset.
    func markComplete() {
        condition.withLock {
            complete = true
            condition.broadcast()
        }
    }

    /// The stream cannot go on.
    func fail(_ error: PlayerError) {
        condition.withLock {
            failure = error
            condition.broadcast()
        }
    }

    /// Wakes a decoder blocked on bytes; its reads fail until the next reset.
    func interrupt() {
        condition.withLock {
            interrupted = true
            condition.broadcast()
        }
    }

    /// Ends every read for good.
    func stop() {
        condition.withLock {
            stopped = true
            interrupted = true
            condition.broadcast()
        }
    }

    /// Blocks until the next run's first bytes are queued (or the end, an interruption or a failure). `waiting`
    /// waits through the end, a failure and an interruption (a reader that only ever wants the next run): it returns
    /// a run, or `.interrupted` once the queue is stopped.
    func nextRun(waiting: Bool = false) -> RunStart {
        condition.withLock {
            while true {
                if stopped || (interrupted && !waiting) { return .interrupted }
                if !interrupted {
                    while let first = chunks.first, first.run <= finishedRun { chunks.removeFirst() }
                    if let first = chunks.first {
                        return .run(
                            id: first.run, start: first.runStart, timing: first.timing, sequence: first.sequence)
                    }
                    if !waiting, let failure { return .failed(failure) }
                    if !waiting, complete { return .end }
                }
                condition.wait()
            }
        }
    }

    /// Copies the next bytes of `run`; 0 once the run is over. Blocks while the fetcher is behind.
    func read(run: Int, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try condition.withLock {
            while true {
                if interrupted || stopped { throw Interrupted() }
                if var first = chunks.first {
                    guard first.run == run else { return 0 }
                    let count = min(buffer.count, first.data.count - first.offset)
                    first.data.withUnsafeBytes { raw in
                        buffer.baseAddress!.copyMemory(from: raw.baseAddress! + first.offset, byteCount: count)
                    }
                    first.offset += count
                    if first.offset >= first.data.count {
                        if kept?.run == run {
                            first.offset = 0
                            kept?.chunks.append(first)
                        }
                        chunks.removeFirst()
                    } else {
                        chunks[0] = first
                    }
                    return count
                }
                if complete || failure != nil { return 0 }
                condition.wait()
            }
        }
    }

    /// Keeps what is read of `run` from now on, so ``rewind(run:)`` can hand it out again (a decoder probing what the
    /// content is); `nil` stops keeping.
    func keep(run: Int?) {
        condition.withLock { kept = run.map { ($0, []) } }
    }

    /// Reads `run` again from its start (what ``keep(run:)`` kept, and the chunk being read), and stops keeping.
    func rewind(run: Int) {
        condition.withLock {
            guard let kept, kept.run == run else { return }
            self.kept = nil
            if chunks.first?.run == run { chunks[0].offset = 0 }
            chunks.insert(contentsOf: kept.chunks, at: 0)
            condition.broadcast()
        }
    }

    /// The decoder is done with `run`; leftovers are dropped.
    func finish(run: Int) {
        condition.withLock { finishedRun = max(finishedRun, run) }
    }
}
