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
            stats.bufferLength = stream.buffered(from: stats.position).seconds
            let network = stream.statistics
            stats.bitrate = network.bitrate
            stats.bandwidthEstimate = network.bandwidthEstimate
            stats.segmentsLoaded = network.segmentsLoaded
            stats.rendition = network.rendition
            stats.isLive = isLive
            if isLive, let window { stats.liveLatency = max(0, window.upperBound - stats.position) }
            if stats.startupTime != nil {
                stats.startupTimeSaved = startupSaving?.estimate(throughput: network.bandwidthEstimate)
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
