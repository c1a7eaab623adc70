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

    /// The statistics as of now, assembled by ``PlayerStats``.
    mutating func statistics() -> PlayerStats {
        PlayerStats(
            machine, at: now, frames: frames, decodersCreated: decodersCreated, audioOnly: isAudioOnly, sound: sound,
            stream: stream, live: isLive ? window : nil, startupSaving: &startupSaving)
    }
}
