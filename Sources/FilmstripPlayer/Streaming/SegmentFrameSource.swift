import FilmstripFormats
import FilmstripMedia
import FilmstripSync
import Foundation

/// Decodes the runs a ``StreamSession`` queues, one ``VideoDecoder`` per run, and places frames on the
/// presentation timeline (run start + time in the run). Used by the ``FrameFeeder`` thread.
///
/// Audio-only content (``StreamSession/audioOnly``, or a first run with no video in it, read again as audio) is
/// decoded with one ``AudioStreamDecoder`` per run: each decode gives a ``PlayerFrame`` without a picture where its
/// audio begins, so playback advances by the sound.
///
/// `@unchecked Sendable`: the decoder and the run fields are touched only by the feeder thread; `interrupt()` and
/// `cancel()` (any thread) only call into the session, which is thread-safe.
final class SegmentFrameSource: FrameSource, @unchecked Sendable {
    let session: StreamSession
    private var decoder: VideoDecoder?
    /// Audio-only content: the current run's decoder.
    private var audioRun: AudioStreamDecoder?
    /// Where the current run's frames or buffers go on the timeline (for HLS, known at its first one).
    private var placement = TimelinePlacement(timing: .segmentStart, start: 0)
    /// Whether the content has video (`nil` until the first run is opened, unless the session knows it is audio).
    private var hasVideo: Bool?
    private var run = 0
    private var runSequence = 0
    private var skipBefore: Double?
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
        if session.audioOnly.load(ordering: .relaxed) { hasVideo = false }
    }

    func takeAudio() -> [AudioBuffer] {
        defer { audioLeft.removeAll() }
        return audioLeft + (decoder?.takeAudio() ?? [])
    }

    func takeSeparateAudio() -> [AudioBuffer] { lane?.take() ?? [] }

    /// Keyframes only, for this run's decoder and the next ones.
    private var keyframesOnly = false

    func setKeyframesOnly(_ on: Bool) {
        // Audio-only content: every frame is one (its audio is muted beyond 2x).
        keyframesOnly = on
        decoder?.keyframesOnly = on
    }

    /// Whether a separate audio track is coming (not while its segments cannot be listed).
    var hasSeparateAudio: Bool { lane != nil && !session.audioState.withLock { $0.unavailable } }

    /// A track switch: the audio decoded so far is dropped.
    func restartAudio() { lane?.restart() }

    func seek(to time: Double) throws { try seek(to: time, after: nil) }

    func seek(to time: Double, after token: StreamSession.ReadToken?) throws {
        closeDecoder()
        audioLeft.removeAll()
        // The engine has restarted the audio lane and the fetch at the target (StreamSession.seek); the old run's
        // decoder is closed, so reads may go on (unless a later seek reset the queues again: its own comes next).
        session.resumeReading(after: token)
        skipBefore = time
    }

    func next() throws -> PlayerFrame? {
        while true {
            if let audioRun {
                if let frame = try nextAudio(from: audioRun) { return frame }
                continue
            }
            if decoder == nil {
                switch session.queue.nextRun() {
                case .end: return nil
                case .interrupted: throw SegmentQueue.Interrupted()
                case .failed(let error): throw error
                case .run(let id, let start, let timing, let sequence):
                    run = id
                    runSequence = sequence
                    if hasVideo == false {
                        try openAudio(start: start, timing: timing)
                        continue
                    }
                    guard let opened = try openVideo(id) else {
                        // No video in the content: the run is read again as audio.
                        try openAudio(start: start, timing: timing)
                        continue
                    }
                    runDecodesAudio = opened.hasAudio
                    opened.keyframesOnly = keyframesOnly
                    if let problem = opened.audioProblem { firstAudioProblem.withLock { $0 = $0 ?? problem } }
                    placement = TimelinePlacement(timing: timing, start: start, origin: opened.startSeconds)
                    opened.timeOffset = placement.shift ?? 0
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
            if placement.shift == nil {
                // HLS: the run's first frame in presentation order is at the segment's start.
                decoder.timeOffset = placement.place(earliest: frame.time)
                frame = frame.shifted(by: decoder.timeOffset)
                // Renditions share the media clock: the audio lane places its runs with the same offset.
                session.audioTimeline.publish(offset: placement.mediaShift ?? 0, sequence: runSequence)
            }
            decoded.add(1, ordering: .relaxed)
            lane?.videoDecoded(upTo: frame.time)
            if let skip = skipBefore {
                if frame.time < skip - MediaTime.tolerance { continue }
                skipBefore = nil
            }
            return PlayerFrame(frame)
        }
    }

    /// Opens the run's video decoder; `nil` when the first run of content not known to be audio has no video (the
    /// run is then rewound, and the content is audio-only from now on).
    private func openVideo(_ id: Int) throws -> VideoDecoder? {
        let queue = session.queue
        let probing = hasVideo == nil
        if probing { queue.keep(run: id) }
        do {
            let opened = try VideoDecoder(
                label: session.url, audio: audioFormat, contentKeys: session.settings.contentKeys
            ) { buffer in
                try queue.read(run: id, into: buffer)
            }
            if probing {
                queue.keep(run: nil)
                hasVideo = true
            }
            return opened
        } catch let error as MediaError where probing && error.kind == .noVideoStream {
            queue.rewind(run: id)
            hasVideo = false
            session.audioOnly.store(true, ordering: .relaxed)
            return nil
        } catch {
            if probing { queue.keep(run: nil) }
            throw error
        }
    }

    /// Opens the run's audio decoder (audio-only content), decoding to the output's format, or to a standard one
    /// only to advance the timeline when no output is attached (or a separate audio track is heard instead).
    private func openAudio(start: Double, timing: SegmentReference.Timing) throws {
        let queue = session.queue
        let id = run
        let opened = try AudioStreamDecoder(
            label: session.url, format: audioFormat ?? .standard, contentKeys: session.settings.contentKeys
        ) { buffer in
            try queue.read(run: id, into: buffer)
        }
        audioRun = opened
        placement = TimelinePlacement(timing: timing, start: start)
        runDecodesAudio = audioFormat != nil
    }

    /// The next decode of an audio-only run, as a frame where its audio begins (its audio kept for the output);
    /// `nil` when it gave nothing to play (before a seek's target, or the run's end, which closes the run).
    private func nextAudio(from decoder: AudioStreamDecoder) throws -> PlayerFrame? {
        guard let buffers = try decoder.nextBuffers() else {
            session.queue.finish(run: run)
            closeDecoder()
            return nil
        }
        guard let first = buffers.first else { return nil }
        let offset = placement.place(earliest: first.time)
        var placed = buffers.map { buffer -> AudioBuffer in
            var moved = buffer
            moved.time += offset
            return moved
        }
        guard let end = placed.last?.end else { return nil }
        lane?.videoDecoded(upTo: end)
        var time = placed[0].time
        if let skip = skipBefore {
            placed.removeAll { $0.end <= skip + MediaTime.tolerance }
            guard let kept = placed.first else { return nil }
            time = max(kept.time, skip)
            skipBefore = nil
        }
        if audioFormat != nil { audioLeft += placed }
        return PlayerFrame(audioAt: time)
    }

    private func closeDecoder() {
        decoder?.cancel()
        decoder = nil
        audioRun?.cancel()
        audioRun = nil
    }

    func interrupt() { session.interrupt() }

    func cancel() {
        lane?.stop()
        session.stop()
    }

    var framesDecoded: Int { decoded.load(ordering: .relaxed) }
    var bytesRead: Int { session.statistics.bytesLoaded }
}
