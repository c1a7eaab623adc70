import FilmstripLoading
import FilmstripMedia

/// The player's statistics as the engine assembles them.
extension PlayerStats {
    /// The statistics as of `now`: the machine's, what the feeders decoded and read, the sound's, and a stream's or
    /// the file feeder's buffer. A live start's saving is estimated once, at the first call after the start
    /// (`startupSaving` keeps the estimate).
    init(
        _ machine: PlaybackMachine, at now: Double, frames: FrameSupply, decodersCreated: Int, audioOnly: Bool,
        sound: EngineSound, stream: StreamSession?, live: ClosedRange<Double>?, startupSaving: inout StartupSaving?
    ) {
        self = machine.statistics(at: now)
        (decodedFrames, bytesRead) = frames.counts
        self.decodersCreated = decodersCreated
        keyframesOnly = frames.keyframesOnly
        if audioOnly {
            // What the machine counts as frames are the audio's starts, not pictures.
            self.audioOnly = true
            keyframesOnly = false
            presentedFrames = 0
            droppedFrames = 0
        }
        sound.fill(&self)
        if let stream {
            add(stream, live: live)
            if startupTime != nil { startupTimeSaved = startupSaving?.estimate(throughput: bandwidthEstimate) }
        } else {
            bufferLength = frames.feeder?.bufferedSeconds ?? 0
        }
    }

    /// What a stream adds: its buffer ahead of the position, its network figures, and, live (`live` is the window),
    /// the latency behind the window's end.
    mutating func add(_ stream: StreamSession, live: ClosedRange<Double>?) {
        bufferLength = stream.buffered(from: position).seconds
        let network = stream.statistics
        bitrate = network.bitrate
        bandwidthEstimate = network.bandwidthEstimate
        segmentsLoaded = network.segmentsLoaded
        rendition = network.rendition
        isLive = live != nil
        if let live { liveLatency = max(0, live.upperBound - position) }
    }
}
