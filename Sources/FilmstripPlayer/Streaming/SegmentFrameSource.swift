import FilmstripMedia
import FilmstripSync
import Foundation

/// Decodes the runs a ``StreamSession`` queues, one ``StreamDecoder`` per run, and places frames on the
/// presentation timeline (run start + time in the run). Used by the ``FrameFeeder`` thread.
///
/// `@unchecked Sendable`: the decoder and the run fields are touched only by the feeder thread; `interrupt()` and
/// `cancel()` (any thread) only call into the session, which is thread-safe.
final class SegmentFrameSource: FrameSource, @unchecked Sendable {
    let session: StreamSession
    private var decoder: StreamDecoder?
    private var run = 0
    private var runSequence = 0
    private var skipBefore: Double?
    /// Where the current run's first frame goes, until it is decoded (HLS runs).
    private var alignStart: Double?
    private let decoded = Atomic<Int>(0)
    private var decodedByCurrent = 0
    /// The format to decode audio to (`nil`: video only).
    private let audioFormat: AudioFormat?
    /// Whether the current run's decoder decodes the audio muxed with the video.
    var decodesAudio: Bool { runDecodesAudio }
    private var runDecodesAudio = false
    /// Audio of decoders already closed (a run's end), until taken.
    private var audioLeft: [AudioBuffer] = []
    /// Why a run's audio could not be decoded (the first such run's).
    private let firstAudioProblem = Mutex<MediaError?>(nil)
    var audioProblem: MediaError? { firstAudioProblem.withLock { $0 } ?? lane?.problem }

    /// The separate audio's decoder, when the presentation has separate audio (the video's muxed audio is then not
    /// decoded).
    private let lane: AudioLaneDecoder?

    init(session: StreamSession, audio: AudioFormat? = nil) {
        self.session = session
        if let audio, session.audioTracks != nil {
            lane = AudioLaneDecoder(session: session, format: audio)
            audioFormat = nil
        } else {
            lane = nil
            audioFormat = audio
        }
    }

    func takeAudio() -> [AudioBuffer] {
        defer { audioLeft.removeAll() }
        return audioLeft + (decoder?.takeAudio() ?? [])
    }

    func takeSeparateAudio() -> [AudioBuffer] { lane?.take() ?? [] }

    /// Keyframes only, for this run's decoder and the next ones.
    private var keyframesOnly = false

    func setKeyframesOnly(_ on: Bool) {
        keyframesOnly = on
        decoder?.keyframesOnly = on
    }

    /// Whether a separate audio track is coming (not while its segments cannot be listed).
    var hasSeparateAudio: Bool { lane != nil && !session.audioState.withLock { $0.unavailable } }

    /// A track switch: the audio decoded so far is dropped.
    func restartAudio() { lane?.restart() }

    func seek(to time: Double) throws {
        closeDecoder()
        audioLeft.removeAll()
        lane?.restart()
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
                case .run(let id, let start, let timing, let sequence):
                    run = id
                    runSequence = sequence
                    let queue = session.queue
                    let opened = try StreamDecoder(label: session.url, audio: audioFormat) { buffer in
                        try queue.read(run: id, into: buffer)
                    }
                    runDecodesAudio = opened.hasAudio
                    opened.keyframesOnly = keyframesOnly
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
                // Renditions share the media clock: the audio lane places its runs with the same offset.
                session.audioTimeline.publish(
                    offset: decoder.timeOffset - decoder.startSeconds, sequence: runSequence)
            }
            decoded.add(1, ordering: .relaxed)
            lane?.videoDecoded(upTo: frame.time)
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
        lane?.stop()
        session.stop()
    }

    var framesDecoded: Int { decoded.load(ordering: .relaxed) }
    var bytesRead: Int { session.statistics.bytesLoaded }
}
