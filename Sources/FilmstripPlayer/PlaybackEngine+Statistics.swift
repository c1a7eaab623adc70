import FilmstripLoading
import FilmstripMedia
import Foundation

/// Errors as the player reports them, and the statistics it publishes.
extension PlaybackEngine {
    static func playerError(_ error: any Error) -> PlayerError {
        // A stream's own failure is already described.
        if let stream = error as? PlayerError { return stream }
        let media = error as? MediaError
        let type: PlayerError.ErrorType =
            switch media?.kind {
            case .inputUnavailable?, .timedOut?: .sourceUnavailable
            case .decodeFailed?: .decodeFailed
            default: .sourceInvalid
            }
        return PlayerError(type, severity: .fatal, media?.description ?? "\(error)", underlying: media)
    }

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
        // Every source's count: the current feeder's, the normal one set aside for trick play, and stopped ones.
        let feeders = [feeder, trick?.parked].compactMap { $0 }
        stats.decodedFrames = feeders.reduce(retired.frames) { $0 + $1.framesDecoded }
        stats.decodersCreated = decodersCreated
        stats.bytesRead = feeders.reduce(retired.bytes) { $0 + $1.bytesRead }
        stats.keyframesOnly = trick?.mode.keyframesOnly ?? feeder?.decodesKeyframesOnly ?? false
        if isAudioOnly {
            // What the machine counts as frames are the audio's starts, not pictures.
            stats.audioOnly = true
            stats.keyframesOnly = false
            stats.presentedFrames = 0
            stats.droppedFrames = 0
        }
        if let audio {
            stats.audioPlayed = audio.played
            stats.audioSilence = audio.silence
            stats.avDrift = drift.last
            stats.maxAVDrift = drift.largest
        }
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
