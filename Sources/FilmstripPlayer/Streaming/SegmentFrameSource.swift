import FilmstripMedia
import Foundation
import Synchronization

/// Decodes the runs a ``StreamSession`` queues, one ``StreamDecoder`` per run, and places frames on the
/// presentation timeline (run start + time in the run). Used by the ``FrameFeeder`` thread.
///
/// `@unchecked Sendable`: the decoder and the run fields are touched only by the feeder thread; `interrupt()` and
/// `cancel()` (any thread) only call into the session, which is thread-safe.
final class SegmentFrameSource: FrameSource, @unchecked Sendable {
    let session: StreamSession
    private var decoder: StreamDecoder?
    private var run = 0
    private var skipBefore: Double?
    /// Where the current run's first frame goes, until it is decoded (HLS runs).
    private var alignStart: Double?
    private let decoded = Atomic<Int>(0)
    private var decodedByCurrent = 0
    /// The format to decode audio to (`nil`: video only).
    private let audioFormat: AudioFormat?
    /// Whether the current run's decoder decodes audio.
    private(set) var decodesAudio = false
    /// Audio of decoders already closed (a run's end), until taken.
    private var audioLeft: [AudioBuffer] = []
    /// Why a run's audio could not be decoded (the first such run's).
    private let firstAudioProblem = Mutex<MediaError?>(nil)
    var audioProblem: MediaError? { firstAudioProblem.withLock { $0 } }

    init(session: StreamSession, audio: AudioFormat? = nil) {
        self.session = session
        audioFormat = audio
    }

    func takeAudio() -> [AudioBuffer] {
        defer { audioLeft.removeAll() }
        return audioLeft + (decoder?.takeAudio() ?? [])
    }

    func seek(to time: Double) throws {
        closeDecoder()
        audioLeft.removeAll()
        session.seek(to: time)
        skipBefore = time
    }

    func nextFrame() throws -> DecodedVideoFrame? {
        while true {
            if decoder == nil {
                switch session.queue.nextRun() {
                case .end: return nil
                case .interrupted: throw SegmentQueue.Interrupted()
                case .failed(let error): throw error
                case .run(let id, let start, let timing):
                    run = id
                    let queue = session.queue
                    let opened = try StreamDecoder(label: session.url, audio: audioFormat) { buffer in
                        try queue.read(run: id, into: buffer)
                    }
                    decodesAudio = opened.hasAudio
                    if let problem = opened.audioProblem { firstAudioProblem.withLock { $0 = $0 ?? problem } }
                    switch timing {
                    case .mediaTime(let offset):
                        // DASH: the media timestamps are the timeline, shifted by the period's offset.
                        opened.timeOffset = offset + opened.startSeconds
                        alignStart = nil
                    case .segmentStart:
                        // HLS: the run's first frame in presentation order is at the segment's start.
                        alignStart = start
                    }
                    decoder = opened
                }
            }
            guard let decoder else { continue }
            guard var frame = try decoder.nextFrame() else {
                audioLeft += decoder.takeAudio()
                session.queue.finish(run: run)
                closeDecoder()
                continue
            }
            if let start = alignStart {
                decoder.timeOffset = start - frame.time
                frame = frame.shifted(by: decoder.timeOffset)
                alignStart = nil
            }
            decoded.add(1, ordering: .relaxed)
            if let skip = skipBefore {
                if frame.time < skip - 1e-6 { continue }
                skipBefore = nil
            }
            return frame
        }
    }

    private func closeDecoder() {
        decoder?.cancel()
        decoder = nil
    }

    func interrupt() { session.interrupt() }

    func cancel() {
        session.stop()
    }

    var framesDecoded: Int { decoded.load(ordering: .relaxed) }
    var bytesRead: Int { session.statistics.bytesLoaded }
}
