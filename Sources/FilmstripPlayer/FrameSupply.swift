/// Where the engine's frames come from: the feeder in use; while trick play's feeder is in use, the normal one set
/// aside; what the content's stopped feeders decoded and read; and the stopped feeders whose threads have not ended
/// yet (a stop lasts until they have).
struct FrameSupply {
    /// The feeder frames come from now.
    private(set) var feeder: FrameFeeder?
    /// Trick play's mode while its feeder is in use, with the normal feeder set aside.
    private(set) var trick: (mode: TrickPlayMode, parked: FrameFeeder)?
    /// Frames decoded and bytes read by the content's feeders already stopped.
    private var retired = (frames: 0, bytes: 0)
    private var releasing: [FrameFeeder] = []

    /// New content: its counts start from 0.
    mutating func newContent() { retired = (0, 0) }

    /// The normal feeder of a source just opened.
    mutating func open(_ feeder: FrameFeeder) { self.feeder = feeder }

    /// Stops every feeder; their threads end on their own (``released()`` says when).
    mutating func release() {
        for stopped in [feeder, trick?.parked].compactMap({ $0 }) {
            stopped.stop()
            releasing.append(stopped)
        }
        feeder = nil
        trick = nil
    }

    /// Whether every stopped feeder's thread has left its decoder (forgetting those that have).
    mutating func released() -> Bool {
        releasing.removeAll { $0.hasFinished }
        return releasing.isEmpty
    }

    /// Trick play's feeder in, the normal one set aside.
    mutating func beginTrick(_ mode: TrickPlayMode, with trickFeeder: FrameFeeder) {
        guard let normal = feeder else { return }
        trick = (mode, normal)
        feeder = trickFeeder
    }

    /// Back to the normal feeder, trick play's stopped and counted; false when trick play was not on.
    mutating func endTrick() -> Bool {
        guard let current = trick else { return false }
        if let stopped = feeder {
            retired.frames += stopped.framesDecoded
            retired.bytes += stopped.bytesRead
            stopped.stop()
            // A stop still waits for its thread to leave the decoder.
            releasing.append(stopped)
        }
        feeder = current.parked
        trick = nil
        return true
    }

    /// Frames decoded and bytes read by every feeder of the content: the one in use, the one set aside, and those
    /// stopped.
    var counts: (frames: Int, bytes: Int) {
        let feeders = [feeder, trick?.parked].compactMap { $0 }
        return (
            feeders.reduce(retired.frames) { $0 + $1.framesDecoded },
            feeders.reduce(retired.bytes) { $0 + $1.bytesRead }
        )
    }

    /// Whether the frames are keyframes only (trick play's mode, or the feeder's decoding).
    var keyframesOnly: Bool { trick?.mode.keyframesOnly ?? feeder?.decodesKeyframesOnly ?? false }

    /// What the buffers hold with `next` the time of the frame taken and not yet shown: the feeder's frames (trick
    /// play's are its buffer, the stream's fetcher suspended meanwhile), or a stream's fetched segments ahead of
    /// `position`, counted once a frame of them is decoded.
    func buffer(next: Double?, at position: Double, stream: StreamSession?) -> PlaybackMachine.Buffer {
        guard let feeder else { return PlaybackMachine.Buffer(frame: next) }
        guard let stream, trick == nil else {
            return PlaybackMachine.Buffer(
                frame: next, ended: feeder.isEnded, seconds: feeder.bufferedSeconds, complete: feeder.reachedEnd)
        }
        let fetched = stream.buffered(from: position)
        let decoded = next != nil || feeder.bufferedSeconds > 0
        return PlaybackMachine.Buffer(
            frame: next, ended: feeder.isEnded, seconds: decoded ? fetched.seconds : 0,
            complete: decoded && fetched.complete)
    }
}
