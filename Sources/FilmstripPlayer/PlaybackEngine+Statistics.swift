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
