import FilmstripLoading
import FilmstripMedia
import Foundation

/// The statistics the player publishes.
extension PlaybackEngine {
    mutating func publishStatistics(_ player: Player) {
        let stats = statistics()
        let callback = player.shared.withLock { shared in
            shared.stats = stats
            return shared.callbacks.onStats
        }
        callback?(stats)
    }

    /// The statistics as of now (a live start's saving is estimated once, at the first call after the start).
    mutating func statistics() -> PlayerStats {
        let now = self.now
        var stats = machine.statistics(at: now)
        (stats.decodedFrames, stats.bytesRead) = frames.counts
        stats.decodersCreated = decodersCreated
        stats.keyframesOnly = frames.keyframesOnly
        if isAudioOnly {
            // What the machine counts as frames are the audio's starts, not pictures.
            stats.audioOnly = true
            stats.keyframesOnly = false
            stats.presentedFrames = 0
            stats.droppedFrames = 0
        }
        sound.fill(&stats)
        if let stream {
            stats.add(stream, live: isLive ? window : nil)
            if stats.startupTime != nil {
                stats.startupTimeSaved = startupSaving?.estimate(throughput: stats.bandwidthEstimate)
            }
        } else {
            stats.bufferLength = feeder?.bufferedSeconds ?? 0
        }
        return stats
    }
}

extension PlayerError {
    /// A decoder's or a source's failure as the player reports it: fatal, with the media error kept.
    init(failure error: any Error) {
        // A stream's own failure is already described.
        if let stream = error as? PlayerError {
            self = stream
            return
        }
        let media = error as? MediaError
        let type: PlayerError.ErrorType =
            switch media?.kind {
            case .inputUnavailable?, .timedOut?: .sourceUnavailable
            case .decodeFailed?: .decodeFailed
            default: .sourceInvalid
            }
        self.init(type, severity: .fatal, media?.description ?? "\(error)", underlying: media)
    }
}

extension PlayerStats {
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
