import FilmstripMedia
import Foundation

/// Decodes ahead on its own thread into a queue bounded by media time (the forward buffer).
///
/// The decoder is touched only by the feeder's thread; seeks are requests the thread carries out. A seek discards
/// what is queued and whatever the thread was decoding when it was asked.
final class FrameFeeder: @unchecked Sendable {
    // Every field below is guarded by `condition`; the decoder only by the feeder thread.
    enum Taken {
        case frame(PlayerFrame)
        case empty
        case ended
        case failed(any Error)
    }

    private let decoder: any FrameSource
    private let condition: ParkingCondition
    private var queue: [PlayerFrame] = []
    /// Audio decoded with the queued frames (and before them), in presentation order.
    private var audio: [AudioBuffer] = []
    /// Whether the source gives audio.
    private var audioSeen = false
    private var ended = false
    private var failure: (any Error)?
    private var seekRequest: (time: Double, token: StreamSession.ReadToken?)?
    private var generation = 0
    private var stopped = false
    /// Whether the thread has left its loop (it touches the decoder no more).
    private var finished = false
    private var capacity: Double
    /// Keyframes only, as asked and as the decoder was last told.
    private var keyframesOnly = (asked: false, applied: false)

    /// Called after each frame, end or failure the thread queues, and when the thread ends.
    private let changed: @Sendable () -> Void

    /// Starts decoding ahead, keeping up to `capacity` seconds of frames (its thread a worker of `activity`, the
    /// player's ledger on a clock other than the system's); `changed` is told of each frame, end or failure queued.
    init(
        decoder: any FrameSource, capacity: Double, keyframesOnly: Bool = false, activity: Activity? = nil,
        changed: @escaping @Sendable () -> Void = {}
    ) {
        self.decoder = decoder
        self.changed = changed
        condition = ParkingCondition(activity: activity)
        self.capacity = max(0.5, capacity)
        // Applied by the thread before its first decode.
        self.keyframesOnly = (keyframesOnly, false)
        Activity.thread(activity, name: "filmstrip.player.decode") { [self] in produce() }
    }

    /// Seconds of frames queued (first to last presentation time).
    var bufferedSeconds: Double {
        condition.withLock { seconds() }
    }

    /// Whether the end was reached and every frame taken (nothing more will come until a seek).
    var isEnded: Bool { condition.withLock { ended && queue.isEmpty } }

    /// Whether the decoder reached the end: the rest of the content is queued.
    var reachedEnd: Bool { condition.withLock { ended } }

    /// The next frame, if one is queued.
    func take() -> Taken {
        condition.withLock {
            if !queue.isEmpty {
                let frame = queue.removeFirst()
                condition.broadcast()
                return .frame(frame)
            }
            if let failure { return .failed(failure) }
            return ended ? .ended : .empty
        }
    }

    /// The queued audio that starts before `time`, in order (whole buffers; the caller trims).
    func takeAudio(before time: Double) -> [AudioBuffer] {
        withSeparateAudio {
            let count = audio.prefix { $0.time < time }.count
            guard count > 0 else { return [] }
            defer { audio.removeFirst(count) }
            return Array(audio.prefix(count))
        }
    }

    /// Decodes keyframes only from now on (trick play), dropping the other frames queued; or every frame again.
    func setKeyframesOnly(_ on: Bool) {
        condition.withLock {
            guard keyframesOnly.asked != on else { return }
            keyframesOnly.asked = on
            if on { queue.removeAll { !$0.isKeyframe } }
            condition.broadcast()
        }
    }

    /// Whether only keyframes are decoded.
    var decodesKeyframesOnly: Bool { condition.withLock { keyframesOnly.asked } }

    /// Drops the queued audio and has the source decode another of a file's audio streams.
    func selectAudioTrack(_ position: Int) {
        condition.withLock {
            audio.removeAll()
            decoder.selectAudioTrack(position)
        }
    }

    /// Drops the queued audio and restarts the source's (another audio track plays).
    func restartAudio() {
        condition.withLock {
            audio.removeAll()
            decoder.restartAudio()
        }
    }

    /// Seconds of audio queued past `time`.
    func audioQueued(after time: Double) -> Double {
        withSeparateAudio { max(0, (audio.last?.end ?? time) - time) }
    }

    /// Runs `body` under the lock with the source's separate audio (a stream's audio renditions) queued first.
    private func withSeparateAudio<T>(_ body: () -> T) -> T {
        let separate = decoder.takeSeparateAudio()
        return condition.withLock {
            audio += separate
            return body()
        }
    }

    /// Whether the source gives audio (known once its first frames are decoded).
    var expectsAudio: Bool { decoder.hasSeparateAudio || condition.withLock { audioSeen } }

    /// Keeps up to `seconds` of frames from now on.
    func setCapacity(_ seconds: Double) {
        condition.withLock {
            capacity = max(0.5, seconds)
            condition.broadcast()
        }
    }

    /// Drops the queue and continues from `time` (the first frame at or after it); `token` is what the stream's
    /// seek returned, when the stream was sought first.
    func seek(to time: Double, after token: StreamSession.ReadToken? = nil) {
        condition.withLock {
            queue.removeAll()
            audio.removeAll()
            ended = false
            failure = nil
            generation += 1
            // Wake a read blocked on data before the thread can see the request, so the interruption is over
            // (cleared by the source's seek) when the seek is carried out.
            decoder.interrupt()
            seekRequest = (time, token)
            condition.broadcast()
        }
    }

    /// Stops the thread and the decoder.
    func stop() {
        condition.withLock {
            stopped = true
            queue.removeAll()
            condition.broadcast()
        }
        decoder.cancel()
    }

    /// Whether the thread has stopped for good: it touches the decoder no more (a stop waits for this).
    var hasFinished: Bool { condition.withLock { finished } }

    /// Stops the thread, waits until it no longer touches the decoder, and returns the decoder.
    func stopAndWait() -> any FrameSource {
        stop()
        condition.withLock {
            while !finished { condition.wait() }
        }
        return decoder
    }

    var framesDecoded: Int { decoder.framesDecoded }
    var bytesRead: Int { decoder.bytesRead }
    var audioProblem: MediaError? { decoder.audioProblem }

    /// Whether the audio queued reaches the last queued frame (or the content has no audio). Containers that store a
    /// fragment's video before its audio (fragmented MP4) need frames decoded past the capacity until the audio
    /// that goes with them is read, up to a bound.
    private func audioCaughtUp() -> Bool {
        guard audioSeen, let last = queue.last else { return true }
        return (audio.last?.end ?? 0) >= last.time || seconds() >= capacity + Self.audioLead
    }

    /// How far beyond the capacity frames are decoded to reach the audio that goes with them.
    static let audioLead = 6.0

    private func seconds() -> Double {
        guard let first = queue.first, let last = queue.last else { return 0 }
        // One frame interval beyond the last, so a single queued frame counts as a frame's worth (frames go
        // backwards in reverse trick play).
        return abs(last.time - first.time) + 0.04
    }

    private func produce() {
        condition.lock()
        while !stopped {
            if let target = seekRequest {
                seekRequest = nil
                let generation = self.generation
                condition.unlock()
                var error: (any Error)?
                do { try decoder.seek(to: target.time, after: target.token) } catch let failure { error = failure }
                condition.lock()
                if let error, generation == self.generation { failure = error }
                continue
            }
            if keyframesOnly.asked != keyframesOnly.applied {
                let on = keyframesOnly.asked
                keyframesOnly.applied = on
                condition.unlock()
                decoder.setKeyframesOnly(on)
                condition.lock()
                continue
            }
            if ended || failure != nil || (queue.count >= 2 && seconds() >= capacity && audioCaughtUp()) {
                condition.wait()
                continue
            }
            let generation = self.generation
            condition.unlock()
            let result = Result { try decoder.next() }
            let decodedAudio = decoder.takeAudio()
            condition.lock()
            guard generation == self.generation, !stopped else { continue }
            audio += decodedAudio
            if !decodedAudio.isEmpty || decoder.decodesAudio { audioSeen = true }
            switch result {
            case .success(let frame?):
                // A frame decoded while keyframes-only was being asked for is not one to show.
                if !keyframesOnly.asked || frame.isKeyframe { queue.append(frame) }
            case .success(nil): ended = true
            case .failure(let error): failure = error
            }
            condition.broadcast()
            condition.unlock()
            changed()
            condition.lock()
        }
        finished = true
        condition.broadcast()
        condition.unlock()
        changed()
    }
}
