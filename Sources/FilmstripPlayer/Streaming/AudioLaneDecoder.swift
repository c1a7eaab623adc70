import FilmstripFormats
import FilmstripMedia
import FilmstripSync
import Foundation

/// Decodes the audio lane's runs on its own thread, placing buffers on the presentation timeline, and hands them to
/// the ``SegmentFrameSource`` that feeds the player. It decodes no further than a few seconds past the video decoded,
/// so the two advance together.
final class AudioLaneDecoder: @unchecked Sendable {
    // `state` guards the fields in `State`; the decoder object is touched by the lane thread only.
    private struct State {
        var pending: [AudioBuffer] = []
        /// Runs with a smaller id were queued before the last restart: their audio is dropped.
        var staleBelow = 0
        var videoTime = -Double.infinity
        var stopped = false
        var problem: MediaError?
    }

    private let session: StreamSession
    private let format: AudioFormat
    private let state = Mutex(State())
    /// Broadcast after each change of `state` that a wait of the lane thread depends on (the video's progress, a
    /// restart, the stop).
    private let progress: ParkingCondition
    /// How far past the decoded video the audio is decoded, seconds.
    static let lead = 3.0

    init(session: StreamSession, format: AudioFormat) {
        self.session = session
        self.format = format
        progress = ParkingCondition(activity: session.clock.activity)
        Activity.thread(session.clock.activity, name: "filmstrip.player.audio") { [self] in run() }
    }

    /// The audio decoded so far, handed over once.
    func take() -> [AudioBuffer] {
        state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
    }

    /// The video has been decoded up to `time`.
    func videoDecoded(upTo time: Double) {
        state.withLock { $0.videoTime = max($0.videoTime, time) }
        changed()
    }

    private func changed() {
        progress.withLock { progress.broadcast() }
        session.audioTimeline.wakeWaiters()
    }

    /// A seek or a track switch (called before the queue is reset): audio decoded so far is dropped, and so is what
    /// is being decoded from runs queued until now.
    func restart() {
        let newest = session.audioQueue.newestRun
        state.withLock { state in
            state.staleBelow = newest + 1
            state.pending.removeAll()
            state.videoTime = -.infinity
        }
        changed()
    }

    func stop() {
        state.withLock { $0.stopped = true }
        changed()
        session.audioQueue.stop()
    }

    /// Why the lane's audio could not be decoded, if it could not.
    var problem: MediaError? { state.withLock { $0.problem } }

    private func run() {
        while !state.withLock({ $0.stopped }) {
            // Waits through the queue's end, failure and interruptions for the next run: only a stop ends it.
            switch session.audioQueue.nextRun(waiting: true) {
            case .end, .failed, .interrupted:
                return
            case .run(let id, let start, let timing, let sequence):
                decodeRun(id, start: start, timing: timing, sequence: sequence)
            }
        }
    }

    private func decodeRun(_ id: Int, start: Double, timing: SegmentReference.Timing, sequence: Int) {
        let queue = session.audioQueue
        defer { queue.finish(run: id) }
        let decoder: AudioStreamDecoder
        do {
            decoder = try AudioStreamDecoder(
                label: session.url, format: format, contentKeys: session.settings.contentKeys
            ) { buffer in
                try queue.read(run: id, into: buffer)
            }
        } catch {
            if let media = error as? MediaError, media.kind != .cancelled {
                state.withLock { $0.problem = $0.problem ?? media }
                session.changed()
            }
            return
        }
        var placement = TimelinePlacement(timing: timing, start: start)
        var offset = placement.shift
        // HLS: the offset the video finds for this discontinuity sequence, waited for up to 2 s of the clock from
        // the run's start; alone, the run's own start.
        let offsetDeadline = session.clock.now() + .seconds(2)
        while true {
            guard let buffers = try? decoder.nextBuffers() else { return }
            guard let first = buffers.first else { continue }
            if offset == nil {
                offset =
                    session.audioTimeline.awaitOffset(
                        sequence: sequence, until: offsetDeadline, on: session.clock,
                        abandoned: { state.withLock { id < $0.staleBelow || $0.stopped } })
                    ?? placement.place(earliest: first.time)
            }
            let placed = buffers.map { buffer -> AudioBuffer in
                var moved = buffer
                moved.time += offset ?? 0
                return moved
            }
            // Not too far ahead of the video (a paused player stops here too), until the video moves on.
            progress.withLock {
                while state.withLock({
                    id >= $0.staleBelow && !$0.stopped && (placed.last?.end ?? 0) > $0.videoTime + Self.lead
                }) {
                    progress.wait()
                }
            }
            let current = state.withLock { state -> Bool in
                guard id >= state.staleBelow, !state.stopped else { return false }
                state.pending += placed
                return true
            }
            if !current {
                decoder.cancel()
                return
            }
            session.changed()
        }
    }
}
